"""MS125: positional-only parameters in `construct`."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.helpers import GraphRule


@rule(
    code="MS125",
    name="positional-only-construct",
    severity="error",
    family="graphmode",
    fix="always",
)
class PositionalOnlyConstruct(GraphRule):
    """## What it does
    Flags `construct` methods declared with positional-only parameters (`/`).

    ## Why is this bad?
    Cell calls its `construct` with the inputs it was given and miscounts positional-only
    parameters: MindSpore stops with `TypeError: For 'Cell', the function construct requires
    1 positional argument ...` when the network is first called.

    ## Example
    ```python
    def construct(self, x, /, y):
        return x + y
    ```

    ## Use instead
    ```python
    def construct(self, x, y):
        return x + y
    ```

    ## Fix safety
    The fix removes the `/` marker. It is safe: callers that passed these arguments
    positionally keep working.

    ## References
    - RULES.md, section 1: positional-only parameters in `construct(self, x, /, y)`.
    """

    nodes = (ast.FunctionDef,)

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        assert isinstance(node, ast.FunctionDef)
        if node.name != "construct" or not node.args.posonlyargs:
            return
        scope = ctx.scope
        if scope is None or scope.kind != "construct" or scope.function is not node:
            return
        from npu_lsp.rules.graphmode.fixes import remove_posonly_marker

        yield ctx.diagnostic(
            self,
            ctx.head_span(node),
            "`construct` must not declare positional-only parameters",
            fix=remove_posonly_marker(node, ctx),
        )
