"""Cheaper forms of per-file work in `check` (issue 15, cold cost) give the answers of the
plain forms they replace: the statement skeleton (`astutil.statement_parents`) and the
"does the text build a built-in optimizer" gate of the optimizer rules."""

from __future__ import annotations

import ast
import re
from pathlib import Path
from types import SimpleNamespace

import pytest

from npu_lsp.astutil import TextWords, statement_parents
from npu_lsp.rules.graphmode.parameter_receivers import builds_optimizer

FIXTURES = Path(__file__).parent / "fixtures"

NESTED = '''
import mindspore as ms

async def f(x):
    async with x:
        async for y in x:
            pass
    try:
        pass
    except ValueError as e:
        if e:
            while x:
                break
            else:
                pass
    else:
        pass
    finally:
        def g():
            class C:
                def m(self):
                    return 1
            return C
    match x:
        case [a, *_] if a:
            with ms.no_grad():
                x = 1
        case _:
            pass
    for i in range(3):
        pass
    else:
        lambda: (yield)
'''


def _reference(tree: ast.AST) -> dict[int, ast.AST]:
    """Every statement, `except` handler and `case` -> its parent, from a full walk."""
    out: dict[int, ast.AST] = {}
    for node in ast.walk(tree):
        for name in ("body", "orelse", "finalbody", "handlers", "cases"):
            block = getattr(node, name, None)
            if type(block) is list:
                for child in block:
                    out[id(child)] = node
    return out


def _trees() -> list[ast.Module]:
    trees = [ast.parse(NESTED)]
    for path in sorted(FIXTURES.rglob("*.py"))[:400]:
        try:
            trees.append(ast.parse(path.read_bytes()))
        except (SyntaxError, ValueError):
            continue
    return trees


def test_statement_parents_is_the_full_walks_map() -> None:
    trees = _trees()
    assert len(trees) > 100
    for tree in trees:
        assert statement_parents(tree) == _reference(tree)
    # handlers, cases and statements of nested definitions are all there
    found = statement_parents(trees[0])
    kinds = {type(n).__name__ for n in ast.walk(trees[0]) if id(n) in found}
    assert {"ExceptHandler", "match_case", "ClassDef", "Return", "AsyncWith"} <= kinds


OPTIMIZERS = frozenset({"SGD", "Adam", "AdamWeightDecay", "Momentum"})


@pytest.mark.parametrize(
    "text",
    [
        "opt = nn.SGD(params)",
        "opt = nn.Adam (params)",
        "opt = Adam\n(params)",
        "opt = AdamWeightDecay(params)",
        "opt = MyAdam(params)",  # a longer name: no
        "opt = Adam_(params)",
        "x = SGD",
        "# SGD is not called here\nsgd(x)",
        "opt = ops.Momentum(x)",
        "",
        "Adam(",
        "éAdam(x)",  # a name character before it
    ],
)
def test_the_optimizer_gate_answers_as_the_pattern(text: str) -> None:
    pattern = re.compile(r"\b(?:" + "|".join(sorted(OPTIMIZERS)) + r")\s*\(")
    # the gate asks `Context.mentions`, which answers from the text's words (TextWords)
    ctx = SimpleNamespace(cache={}, text=text, mentions=TextWords(text).__contains__)
    assert builds_optimizer(ctx, OPTIMIZERS) is (pattern.search(text) is not None)  # type: ignore[arg-type]
    assert builds_optimizer(ctx, set(OPTIMIZERS)) is (pattern.search(text) is not None)  # type: ignore[arg-type]
