"""MS104: `nonlocal` in compiled code."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.helpers import GraphRule


@rule(code="MS104", name="nonlocal-statement", severity="error", family="graphmode")
class NonlocalStatement(GraphRule):
    """## What it does
    Flags `nonlocal` declarations inside compiled functions.

    ## Why is this bad?
    The graph compiler rejects the statement with
    `RuntimeError: Unsupported statement 'Nonlocal'.` at every syntax level.

    ## Example
    ```python
    def construct(self, x):
        total = 0
        def add(v):
            nonlocal total
            total = total + v
        add(1)
        return x + total
    ```

    ## Use instead
    Return the new value from the inner function instead of rebinding the outer name:
    ```python
    def construct(self, x):
        def add(total, v):
            return total + v
        total = add(0, 1)
        return x + total
    ```

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 1: `nonlocal`.
    """

    nodes = (ast.Nonlocal,)

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        yield ctx.diagnostic(
            self,
            node,
            "`nonlocal` is not supported in graph mode (Unsupported statement 'Nonlocal')",
        )
