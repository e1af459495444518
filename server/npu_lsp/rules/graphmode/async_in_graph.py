"""MS106: `async def` / `await` inside compiled code."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.helpers import GraphRule


@rule(code="MS106", name="async-in-graph", severity="error", family="graphmode")
class AsyncInGraph(GraphRule):
    """## What it does
    Flags `async def`, `await`, `async for` and `async with` inside compiled functions.

    ## Why is this bad?
    Graphs have no coroutines: MindSpore stops with
    `Unsupported statement 'AsyncFunctionDef'` at every syntax level.

    ## Example
    ```python
    def construct(self, x):
        async def helper(v):
            return v
        return x
    ```

    ## Use instead
    Use ordinary functions inside compiled code; keep asynchronous work in the Python
    code that calls the network.

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 1: `class` defined inside, `async def`, `match`.
    """

    nodes = (ast.AsyncFunctionDef, ast.Await, ast.AsyncFor, ast.AsyncWith)

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        what = type(node).__name__
        yield ctx.diagnostic(
            self,
            ctx.head_span(node),
            f"asynchronous code is not supported in graph mode (Unsupported '{what}')",
        )
