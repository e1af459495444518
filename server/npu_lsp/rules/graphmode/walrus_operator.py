"""MS110: assignment expressions (`:=`) in compiled code."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.helpers import GraphRule


@rule(code="MS110", name="walrus-operator", severity="error", family="graphmode")
class WalrusOperator(GraphRule):
    """## What it does
    Flags assignment expressions (`(y := f(x))`) in compiled code.

    ## Why is this bad?
    MindSpore stops with `RuntimeError: Unsupported expression 'NamedExpr'.` at every
    syntax level.

    ## Example
    ```python
    def construct(self, x):
        if (y := x * 2) is not None:
            return y
        return x
    ```

    ## Use instead
    ```python
    def construct(self, x):
        y = x * 2
        if y is not None:
            return y
        return x
    ```

    ## Fix safety
    No automatic fix: the assignment has to move to its own statement, which depends on
    where the expression sits.

    ## References
    - RULES.md, section 1: walrus `:=`.
    """

    nodes = (ast.NamedExpr,)

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        yield ctx.diagnostic(
            self, node, "`:=` is not supported in graph mode (Unsupported expression 'NamedExpr')"
        )
