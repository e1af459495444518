"""MS111: `for ... else` / `while ... else` in compiled code."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.diagnostics import Diagnostic, Span
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.helpers import GraphRule


@rule(code="MS111", name="loop-else", severity="error", family="graphmode")
class LoopElse(GraphRule):
    """## What it does
    Flags an `else` clause on a `for` or `while` loop in compiled code. The diagnostic sits
    on the first statement of the `else` body, where MindSpore reports it.

    ## Why is this bad?
    MindSpore stops with `RuntimeError: The 'for...else...' statement is not supported now.`
    at every syntax level.

    ## Example
    ```python
    def construct(self, x):
        for i in range(3):
            if i == 5:
                break
        else:
            x = x + 1
        return x
    ```

    ## Use instead
    Track the early exit with a flag:
    ```python
    def construct(self, x):
        found = False
        for i in range(3):
            if i == 5:
                found = True
                break
        if not found:
            x = x + 1
        return x
    ```

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 1: `for … else`, `while … else`; section 5 for the error location.
    """

    nodes = (ast.For, ast.While, ast.AsyncFor)

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        # a list or `()`, not a generator: every loop of compiled code comes here
        orelse = getattr(node, "orelse", None)
        if not orelse:
            return ()
        kind = "while" if isinstance(node, ast.While) else "for"
        first = orelse[0]
        span = ctx.span(first)
        if span.end_line != span.line:
            span = ctx.head_span(first)
        return [
            ctx.diagnostic(
                self,
                Span(span.line, span.column, span.end_line, span.end_column),
                f"`{kind} ... else` is not supported in graph mode",
            )
        ]
