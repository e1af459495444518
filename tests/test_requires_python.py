"""The package runs on the oldest Python that pyproject.toml's `requires-python` names.

The suite runs on a newer Python, so two checks read the source instead: every module parses
with the floor's grammar (`ast.parse(feature_version=...)`, which rejects `except*` and the
like on 3.10), and every regex literal handed to `re` is free of the constructs Python 3.11
added to `re` (atomic groups `(?>...)` and possessive quantifiers `*+`, `++`, `?+`, `{m,n}+`),
which fail to compile on 3.10. The standard library's newer names (`tomllib`, `typing.Self`,
`datetime.UTC`, ...) are mypy's part: `[tool.mypy] python_version` is the floor too.
"""

from __future__ import annotations

import ast
import re
import sys
import warnings
from collections.abc import Iterator
from contextlib import nullcontext
from functools import cache
from pathlib import Path
from typing import Any

import pytest

if sys.version_info >= (3, 11):
    from re import _parser as sre_parse  # type: ignore[attr-defined]

    import tomllib
else:
    import tomli as tomllib

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        import sre_parse

REPO = Path(__file__).resolve().parents[1]
# The packages pyproject.toml installs ([tool.setuptools.packages.find]).
PACKAGES = ("ascend_lens", "npu_runtime", "server/npu_lsp", "server/npu_debug", "kernel/npu_kernel")
# The functions of `re` whose first argument (or `pattern=`) is a pattern.
RE_FUNCTIONS = {
    "compile",
    "search",
    "match",
    "fullmatch",
    "sub",
    "subn",
    "split",
    "findall",
    "finditer",
}
# Nodes of 3.11's regex parser that 3.10's has not.
NEWER_RE_NODES = {"ATOMIC_GROUP", "POSSESSIVE_REPEAT"}
# Stands for a formatted value or a name the scan cannot resolve: a plain letter, valid
# anywhere in a pattern (inside a class, a group or a lookbehind alike).
HOLE = "x"


@cache
def floor() -> tuple[int, int]:
    spec = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["requires-python"]
    m = re.fullmatch(r">=\s*3\.(\d+)", spec.strip())
    assert m, f"requires-python {spec!r}: expected the form '>=3.N'"
    return (3, int(m[1]))


@cache
def sources() -> list[Path]:
    return sorted(p for pkg in PACKAGES for p in (REPO / pkg).rglob("*.py"))


def test_the_floor_is_what_ruff_and_mypy_check() -> None:
    tool = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]
    major, minor = floor()
    assert tool["mypy"]["python_version"] == f"{major}.{minor}"
    assert tool["ruff"]["target-version"] == f"py{major}{minor}"


@cache
def trees() -> dict[Path, ast.Module | SyntaxError]:
    """Each module parsed once with the floor's grammar, or why it does not parse."""
    out: dict[Path, ast.Module | SyntaxError] = {}
    for path in sources():
        try:
            out[path] = ast.parse(path.read_text("utf-8"), str(path), feature_version=floor())
        except SyntaxError as exc:
            out[path] = exc
    return out


def test_modules_parse_with_the_floors_grammar() -> None:
    bad = [f"{p.relative_to(REPO)}: {t}" for p, t in trees().items() if isinstance(t, SyntaxError)]
    assert not bad, "\n".join(bad)


def _pattern(node: ast.expr, consts: dict[str, str]) -> str | None:
    """The pattern an expression spells, holes for what is computed; None when none of it is
    literal (a pattern kept elsewhere)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.Constant) and isinstance(node.value, bytes):
        return node.value.decode("latin-1")
    if isinstance(node, ast.JoinedStr):
        return "".join(
            v.value if isinstance(v, ast.Constant) and isinstance(v.value, str) else HOLE
            for v in node.values
        )
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _pattern(node.left, consts), _pattern(node.right, consts)
        if left is None and right is None:
            return None
        return (HOLE if left is None else left) + (HOLE if right is None else right)
    if isinstance(node, ast.Name):
        return consts.get(node.id)
    return None


def _flags(node: ast.expr | None) -> int:
    """`re.M | re.X`-style flags, as far as they are spelled with `re`'s names."""
    flags = 0
    for sub in ast.walk(node) if node is not None else ():
        if isinstance(sub, ast.Attribute) and isinstance(getattr(re, sub.attr, None), re.RegexFlag):
            flags |= getattr(re, sub.attr)
    return flags


def regex_literals(tree: ast.Module) -> Iterator[tuple[int, str, int]]:
    """(line, pattern, flags) of each call of `re.<function>` with a pattern written in the
    module: a literal, an f-string, a sum of them, or a module-level string constant."""
    consts = {
        t.id: s.value.value
        for s in tree.body
        if isinstance(s, (ast.Assign, ast.AnnAssign))
        and isinstance(s.value, ast.Constant)
        and isinstance(s.value.value, str)
        for t in (s.targets if isinstance(s, ast.Assign) else [s.target])
        if isinstance(t, ast.Name)
    }
    guarded = _version_guarded(tree)
    for node in ast.walk(tree):
        if not (
            isinstance(node, ast.Call)
            and id(node) not in guarded
            and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id == "re"
            and node.func.attr in RE_FUNCTIONS
        ):
            continue
        kw = {k.arg: k.value for k in node.keywords}
        arg = node.args[0] if node.args else kw.get("pattern")
        if arg is None:
            continue
        pattern = _pattern(arg, consts)
        if pattern is None:
            continue
        # flags: compile's second argument, sub/subn's fifth, split's fourth, the others' third
        pos = {"compile": 1, "sub": 4, "subn": 4, "split": 3}.get(node.func.attr, 2)
        flags = kw.get("flags") or (node.args[pos] if len(node.args) > pos else None)
        yield node.lineno, pattern, _flags(flags)


def _version_guarded(tree: ast.Module) -> set[int]:
    """ids of the nodes in the body of an `if sys.version_info >= (3, N):` with (3, N) above the
    floor: code the floor never runs (a 3.10 fallback sits beside it, in the `else` or before)."""
    out: set[int] = set()
    for st in ast.walk(tree):
        test = st.test if isinstance(st, ast.If) else None
        if (
            isinstance(test, ast.Compare)
            and ast.unparse(test.left) == "sys.version_info"
            and len(test.ops) == 1
            and isinstance(test.ops[0], ast.GtE)
            and isinstance(test.comparators[0], ast.Tuple)
        ):
            needs = tuple(ast.literal_eval(test.comparators[0]))
            if needs > floor():
                assert isinstance(st, ast.If)
                out.update(id(n) for b in st.body for n in ast.walk(b))
    return out


@cache
def regexes() -> list[tuple[str, str, int]]:
    """("path:line", pattern, flags) of every regex literal the package hands to `re`."""
    return [
        (f"{path.relative_to(REPO)}:{line}", pattern, flags)
        for path, tree in trees().items()
        if isinstance(tree, ast.Module)  # else test_modules_parse_with_the_floors_grammar fails
        for line, pattern, flags in regex_literals(tree)
    ]


def _newer_nodes(tree: Any) -> Iterator[str]:
    """Opcode names in a parsed pattern (SubPattern, nested in tuples and lists)."""
    if isinstance(tree, sre_parse.SubPattern):
        for item in tree.data:
            yield from _newer_nodes(item)
    elif isinstance(tree, (tuple, list)):
        for item in tree:
            name = getattr(item, "name", None)  # opcodes are ints with a name
            if isinstance(item, int) and name in NEWER_RE_NODES:
                yield name
            else:
                yield from _newer_nodes(item)


def test_the_scan_finds_the_package_regexes() -> None:
    # A scan that silently found nothing would pass forever.
    assert len(regexes()) >= 50


@pytest.mark.skipif(floor() >= (3, 11), reason="the floor's re has atomic groups and possessives")
def test_regex_literals_compile_on_the_floor() -> None:
    newer = []
    for where, pattern, flags in regexes():
        try:
            parsed = sre_parse.parse(pattern, flags)
        except re.error as exc:
            newer.append(f"{where}: does not compile here ({exc}): {pattern!r}")
            continue
        for name in sorted(set(_newer_nodes(parsed))):
            newer.append(f"{where}: {name} (Python 3.11's re): {pattern!r}")
    assert not newer, "\n".join(newer)


@pytest.mark.parametrize(
    ("pattern", "newer"),
    [
        (r"self\.\w++[ \t]*+=", True),
        (r"(?>ab|a)c", True),
        (r"a{2,3}+", True),
        (r"x?+", True),
        (r"self\.(?=(\w+))\1[ \t]*=", False),
        (r"C\+\+|[+]+|a+?", False),
    ],
)
def test_the_check_tells_newer_constructs(pattern: str, newer: bool) -> None:
    if sys.version_info < (3, 11):
        with pytest.raises(re.error) if newer else nullcontext():
            sre_parse.parse(pattern, 0)
        return
    assert bool(set(_newer_nodes(sre_parse.parse(pattern, 0)))) == newer
