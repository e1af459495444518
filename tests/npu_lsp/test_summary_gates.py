"""Text gates of the summary (issue 15, cold cost) answer as the full walks they shortcut:
the lines that can start a nested definition (`scope._definition_lines`) and the calls a
module makes into other modules (`xcalls.outgoing` with the file's text skips what names
nothing that can call out, without it every definition is walked). Guards for anyone
making these gates cheaper (issue 15's cold run); a quarter of the fixture files, in
their order, keeps the run short."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

from npu_lsp import scope
from npu_lsp.rules.graphmode.xcalls import outgoing

FIXTURES = Path(__file__).parent / "fixtures"

NESTED = '''
import mindspore as ms
from .blocks import Block, helper


class Outer(ms.nn.Cell):
    class Inner:
        def method(self):
            def local(): return 1
            return local

    @staticmethod
    async def run(x):
        class Made:  # a class in a method
            pass
        return Made


@ms.jit
def top(x):
    if x:
        def branch(y): return helper(y)
    else:
        class Other: pass
    return Block()(x)


if True:
    def conditional():
        async def inner(): pass
        return inner
try:
    class InTry:
        def m(self): return helper(self)
except ImportError:
    pass
'''


def _texts() -> list[tuple[str, str]]:
    out = [("nested.py", NESTED)]
    for path in sorted(FIXTURES.rglob("*.py"))[::4]:
        try:
            out.append((str(path), path.read_text(encoding="utf-8")))
        except (UnicodeDecodeError, ValueError):
            continue
    return out


def _parsed(text: str) -> ast.Module | None:
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError):
        return None


def _inside_functions(tree: ast.Module) -> tuple[set[int], set[int]]:
    """(lines of definitions inside a function body, lines of those outside any), by a
    full walk."""
    inside: set[int] = set()
    outside: set[int] = set()
    definitions = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, definitions):
                (inside if in_function else outside).add(child.lineno)
            visit(child, in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)))

    visit(tree, False)
    return inside, outside


def test_definition_lines_hold_every_nested_definition() -> None:
    checked = 0
    for _path, text in _texts():
        tree = _parsed(text)
        if tree is None or "\r" in text:
            continue
        inside, _outside = _inside_functions(tree)
        lines = scope._definition_lines(tree, text)
        assert inside <= set(lines), _path
        # the walks gated by those lines find what they find without them
        gated = [(n.lineno, n.col_offset) for n in scope._nested_definitions(tree, lines)]
        plain = [(n.lineno, n.col_offset) for n in scope._nested_definitions(tree, None)]
        assert gated == plain, _path
        checked += 1
    assert checked > 500


def test_the_nested_sample_has_both_kinds() -> None:
    tree = ast.parse(NESTED)
    inside, outside = _inside_functions(tree)
    assert len(inside) == 5 and len(outside) == 8
    assert inside <= set(scope._definition_lines(tree, NESTED))


@pytest.mark.parametrize("with_crlf", [False, True])
def test_outgoing_with_the_text_is_outgoing_of_every_definition(with_crlf: bool, tmp_path: Path) -> None:
    sys.path.insert(0, str(Path(__file__).parents[2] / "benchmarks"))
    from gen_zoo import generate

    modules = {}
    for p in generate(tmp_path, 60, seed=5):
        parts = p.relative_to(tmp_path).with_suffix("").parts
        modules[str(p)] = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
    zoo = [(p, Path(p).read_text(encoding="utf-8")) for p in modules]
    found = 0
    for path, text in [*zoo, *_texts()]:
        if with_crlf:
            text = text.replace("\n", "\r\n")
        tree = _parsed(text)
        if tree is None:
            continue
        info = scope.summarize(tree, path, modules.get(path, "pkg.mod"), text)
        calls = outgoing(tree, info, text)
        assert calls == outgoing(tree, info, None), path
        found += bool(calls)
    assert found > 50
