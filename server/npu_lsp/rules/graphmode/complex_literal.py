"""MS113: complex number literals in compiled code."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.helpers import GraphRule


@rule(code="MS113", name="complex-literal", severity="error", family="graphmode")
class ComplexLiteral(GraphRule):
    """## What it does
    Flags imaginary literals such as `3.14j` in compiled code.

    ## Why is this bad?
    The graph parser has no complex constants: it stops with
    `TypeError: Unsupported Constant type : 3.14j` at every syntax level.

    ## Example
    ```python
    def construct(self, x):
        return x * 2j
    ```

    ## Use instead
    Create complex tensors outside the graph (or with `ops.Complex(real, imag)`) and pass
    them in:
    ```python
    def construct(self, x, scale):
        return x * scale
    ```

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 1: complex literal `3.14j`.
    """

    nodes = (ast.Constant,)

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        if isinstance(node, ast.Constant) and isinstance(node.value, complex):
            yield ctx.diagnostic(
                self, node, f"complex constant {ctx.segment(node)} is not supported in graph mode"
            )
