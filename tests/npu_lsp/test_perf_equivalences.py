"""Cheaper forms of the engine's text tests give the answers of the forms they replace.

- `flow.SELF_STORE_ANY`, searched once per file before `_SELF_UPDATE` (flow),
  `_SELF_NUMBER` and `_HELD_STORE` (number_stores): a text matches it exactly when it
  matches one of the three, so a text without a match is never searched by them.
- MS116's dotted-name test before `_refused_pattern` is searched: every text the pattern
  matches passes it.
"""

from __future__ import annotations

import ast
import random
import re
import sys
from pathlib import Path

from npu_lsp.rules.graphmode import flow, number_stores

#: the pieces a store on `self` is made of, and some that are close to one
_TOKENS = [
    "self.", "self", ".", "a", "b", "ab", "_", "1", " ", "\t", "\n", "=", "==", "+", "-", "*",
    "/", "%", "//", "**", "(", ")", "min(", "max(", "float(", "int(", "x", "é", "my", ",",
]


def _store_like(rnd: random.Random) -> str:
    """`self.<name>[.<name>] <op>= <value>` with each part varied (or left out)."""
    parts = [
        rnd.choice(["", "x", " ", "my"]),
        "self.",
        rnd.choice(["a", "ab", "a1", "_", ""]),
        rnd.choice(["", ".b", ".", ".bc", "a"]),
        rnd.choice(["", " ", "\t", "  "]),
        rnd.choice(["", "+", "-", "*", "/", "%", "//", "**", "=", "!"]),
        rnd.choice(["=", "==", "", " ="]),
        rnd.choice(["", " ", "\t"]),
        rnd.choice(["self.a", "self.ab", "self.a ", "self.", "1", "(", ".5", "-x", "min(", "int(", "x", "=", "\n", ""]),
        rnd.choice(["", " +", "+", " ", "*", "\n"]),
    ]
    return "".join(parts) + "".join(rnd.choice(_TOKENS) for _ in range(rnd.randint(0, 4)))


def _texts(n: int, seed: int) -> list[str]:
    rnd = random.Random(seed)
    out = []
    for _ in range(n):
        if rnd.random() < 0.6:
            out.append(_store_like(rnd))
        else:
            out.append("".join(rnd.choice(_TOKENS) for _ in range(rnd.randint(1, 14))))
    return out


def test_self_store_any_is_the_union_of_the_three_searches() -> None:
    three: list[re.Pattern[str]] = [flow._SELF_UPDATE, number_stores._SELF_NUMBER, number_stores._HELD_STORE]
    positives = 0
    for text in _texts(40_000, 7):
        want = any(p.search(text) for p in three)
        positives += want
        assert (flow.SELF_STORE_ANY.search(text) is not None) == want, repr(text)
    assert positives > 2_000  # the generator reaches every kind of match


def test_self_store_any_possessive_form_is_the_lookahead_form() -> None:
    """On Python 3.11+ `SELF_STORE_ANY` is written with possessive repeats; it finds a match
    exactly where the 3.10 form (atomic names by lookahead and back-reference) does."""
    positives = 0
    for text in _texts(40_000, 11):
        want = flow._SELF_STORE_ANY_3_10.search(text) is not None
        positives += want
        assert (flow.SELF_STORE_ANY.search(text) is not None) == want, repr(text)
    assert positives > 2_000


def test_self_store_any_on_spelled_stores() -> None:
    for text in ("self.n += 1", "self.n = self.n + 1", "self.r = 0.5", "self.r = min(a, b)",
                 "self.cfg.ratio = 0.5", "self.cfg.ratio *= 2", "self.n: int = 1"):
        want = any(p.search(text) for p in (flow._SELF_UPDATE, number_stores._SELF_NUMBER, number_stores._HELD_STORE))
        assert (flow.SELF_STORE_ANY.search(text) is not None) == want, text


def test_refused_attribute_gate_is_necessary() -> None:
    """MS116's `_attribute_reads` searches `_refused_pattern` only when a refused name is a
    word of the text spelled after a dot: every text the pattern matches passes that test."""
    from npu_lsp.astutil import WordCounts
    from npu_lsp.rules.graphmode import jit_forbidden_api as jf

    names = sorted(jf._refused_names())
    pattern = jf._refused_pattern()
    rnd = random.Random(11)
    pieces = [*names[:12], "name", "x", "_", "1", ".", " ", "(", "\n", "=", "self", "é"]
    matched = 0
    for _ in range(20_000):
        text = "".join(rnd.choice(pieces) for _ in range(rnd.randint(1, 8)))
        if not text.isascii():
            continue
        words = WordCounts(text)
        gate = any("." + n in text for n in names if n in words)
        if pattern.search(text) is not None:
            matched += 1
            assert gate, repr(text)
    assert matched > 500


def _written_programs() -> list[Path]:
    root = Path(__file__).parent / "fixtures" / "written"
    return sorted(root.glob("*/cases/*.py")) + sorted(root.glob("*/probes/*.py"))


def test_held_package_attrs_from_scope_index_as_from_every_statement() -> None:
    """MS145's `_held_package_attrs` reads only the `__init__` statements scope's pass set
    aside (`scope.InitAssigns`): on every written program with a class, the attributes are
    those the loop over every statement of every `__init__` finds."""
    from npu_lsp.config import Config
    from npu_lsp.engine import Context
    from npu_lsp.rules.graphmode import fallback_calls as fc
    from npu_lsp.scope import ScopeResolver

    indexed = differ = held = 0
    for path in _written_programs():
        text = path.read_text(encoding="utf-8")
        if "__init__" not in text:
            continue
        try:
            tree = ast.parse(text)
        except SyntaxError:
            continue
        ctx = Context(str(path), text, tree, Config(), ScopeResolver(tree, str(path), None, None, text=text))
        outside = fc._outside_names(ctx)
        for cls, init in fc._init_bodies(ctx):
            index = fc._init_index(ctx, cls, init, outside)
            if index is None:
                continue
            indexed += 1
            every: set[str] = set()
            fc._held_from_statements(ctx, cls, init.body, outside, every)
            some: set[str] = set()
            fc._held_from_statements(ctx, cls, index.either, outside, some)
            fc._held_from_statements(ctx, cls, index.outside_calls, outside, some)
            differ += some != every
            held += bool(every)
            assert some == every, (path, cls.name)
    # (12,748 bodies indexed, 108 holding such an attribute, at the commit adding this)
    assert indexed > 1_000 and held > 10 and differ == 0


def _self_stores_walk(func: ast.AST) -> dict[str, list[ast.stmt]]:
    """`attribute_stores.self_stores` as it was before it shared its walk (perf34)."""
    from npu_lsp.astutil import STATEMENT_BLOCKS

    found: dict[str, list[ast.stmt]] = {}
    stack: list[ast.AST] = list(getattr(func, "body", ()))
    while stack:
        node = stack.pop()
        blocks = STATEMENT_BLOCKS.get(type(node))
        if blocks is not None:
            for block in blocks:
                stack.extend(getattr(node, block))
            continue
        if type(node) is ast.Assign:
            targets = list(node.targets)
        elif type(node) is ast.AugAssign:
            targets = [node.target]
        else:
            continue
        for target in targets:
            if type(target) is ast.Tuple or type(target) is ast.List:
                targets.extend(e.value if type(e) is ast.Starred else e for e in target.elts)
            elif type(target) is ast.Attribute and type(target.value) is ast.Name and target.value.id == "self":
                found.setdefault(target.attr, []).append(node)  # type: ignore[arg-type]
    return found


def _object_stores_walk(func: ast.AST) -> dict[tuple[str, str], list[ast.Assign]]:
    """`input_object_attribute_store._object_stores` as it was before (perf34)."""
    found: dict[tuple[str, str], list[ast.Assign]] = {}
    stack: list[ast.AST] = list(getattr(func, "body", ()))
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        if type(node) is ast.Assign:
            for t in node.targets:
                if type(t) is ast.Attribute and type(t.value) is ast.Name and t.value.id != "self":
                    found.setdefault((t.value.id, t.attr), []).append(node)
            continue
        if isinstance(node, ast.stmt):
            stack.extend(n for n in ast.iter_child_nodes(node) if isinstance(n, ast.stmt))
    return found


_STORES_EXTRA = '''
class Data:
    pass


def f(self, data, xs):
    data.x = 1
    self.a, (self.b, *self.c) = xs
    self.a += 1
    data.y += 1
    data.z, self.d = xs
    try:
        data.w = 2
        self.e = 3
    except ValueError:
        data.w = 4
        self.e = 5
    else:
        data.u = 1
    finally:
        data.t = 1
    match xs:
        case [a]:
            data.s = a
            self.f = a
    for i in xs:
        data.x = i; data.x = i + 1
    with open(xs) as fh:
        data.r = fh
    while data:
        self.g = data.q = 1
    try:
        data.v = 0
    except TypeError:  # `except*` on 3.11+ (below)
        data.v = 1
        self.v = 1

    def inner():
        data.inner = 1
        self.inner = 1
    data.x = data.x
'''


def test_one_store_walk_is_self_stores_and_object_stores() -> None:
    """`attribute_stores._index_stores` (one walk for both) gives, for every function of
    every written program (and a file with every kind of block), the lists the two walks it
    replaces gave: the same statements in the same order."""
    from npu_lsp.rules.graphmode import attribute_stores

    functions = 0
    stores = 0
    extra = [_STORES_EXTRA]
    if sys.version_info >= (3, 11):
        extra.append(_STORES_EXTRA.replace("except TypeError:", "except* TypeError:"))
    for text in extra:
        ast.parse(text)
    for text in [*(p.read_text(encoding="utf-8") for p in _written_programs()), *extra]:
        try:
            tree = ast.parse(text)
        except SyntaxError:
            continue
        for func in ast.walk(tree):
            if type(func) not in (ast.FunctionDef, ast.AsyncFunctionDef):
                continue
            functions += 1
            own, objects = attribute_stores._index_stores(func, None)
            assert own == _self_stores_walk(func)
            assert objects == _object_stores_walk(func)
            stores += sum(map(len, own.values())) + sum(map(len, objects.values()))
    assert functions > 20_000 and stores > 10_000
