"""`bindings.merge` of per-chunk visits gives exactly the tables of one visit of the tree
(the language server keeps the visit per chunk and joins the parts on every edit)."""

from __future__ import annotations

import ast
import random
from pathlib import Path

import pytest

from npu_lsp import engine
from npu_lsp.config import Config
from npu_lsp.rules.migration.bindings import Bindings, merge

FIXTURES = sorted(
    p for p in (Path(__file__).parent / "fixtures").glob("*.py") if ".fixed" not in p.name
)
TABLES = (
    "names",
    "params",
    "attrs",
    "keys",
    "choices",
    "functions",
    "returns",
    "calls",
    "method_calls",
    "methods",
    "grown",
    "init_of",
    "local_imports",
    "scope_of",
    "parents",
    "nodes",
    "asked",
)


def _context(text: str) -> engine.Context:
    tree = ast.parse(text)
    resolver = engine.ScopeResolver(tree, "train.py", "lax", None, text=text)
    return engine.Context("train.py", text, tree, Config(), resolver)


def _as_compared(value: object) -> object:
    """A table with its key order and, for lists, its value order (nodes by identity)."""
    if isinstance(value, dict):
        return [(k, _as_compared(v)) for k, v in value.items()]
    if isinstance(value, list):
        return [_as_compared(v) for v in value]
    if isinstance(value, ast.AST):
        return id(value)
    if isinstance(value, tuple):
        return tuple(_as_compared(v) for v in value)
    return value


@pytest.mark.parametrize("path", FIXTURES[:60], ids=lambda p: p.name)
def test_merged_parts_equal_one_visit(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    ctx = _context(text)
    whole = Bindings(ctx).run(ctx.tree)
    rng = random.Random(path.name)
    body = ctx.tree.body
    cuts = sorted(rng.sample(range(1, len(body)), min(len(body) - 1, 5))) if len(body) > 1 else []
    runs = [body[a:b] for a, b in zip([0, *cuts], [*cuts, len(body)], strict=True)]
    parts = [Bindings(ctx).run(ctx.tree, run) for run in runs]
    joined = merge(ctx, parts)
    for table in TABLES:
        assert _as_compared(getattr(joined, table)) == _as_compared(getattr(whole, table)), table
