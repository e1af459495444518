"""MS107: `match` inside compiled code."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.helpers import GraphRule


@rule(code="MS107", name="match-statement", severity="error", family="graphmode")
class MatchStatement(GraphRule):
    """## What it does
    Flags `match` statements inside compiled functions.

    ## Why is this bad?
    Structural pattern matching is not part of MindSpore's graph syntax; compilation stops
    with `Unsupported statement 'Match'` at every syntax level.

    ## Example
    ```python
    def construct(self, x, mode):
        match mode:
            case "double":
                return x * 2
            case _:
                return x
    ```

    ## Use instead
    ```python
    def construct(self, x, mode):
        if mode == "double":
            return x * 2
        return x
    ```

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 1: `class` defined inside, `async def`, `match`.
    """

    nodes = (ast.Match,)

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        yield ctx.diagnostic(
            self,
            ctx.head_span(node),
            "`match` is not supported in graph mode (Unsupported statement 'Match')",
        )
