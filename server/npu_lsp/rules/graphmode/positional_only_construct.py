"""MS125: positional-only parameters in compiled functions (`construct`, `@jit`, helpers)."""

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
    Flags compiled functions declared with positional-only parameters (`/`): `construct`,
    `@jit` functions and the helpers they call.

    ## Why is this bad?
    The graph parser ignores positional-only parameters. Cell calls its `construct` with the
    inputs it was given and miscounts them: MindSpore stops with `TypeError: For 'Cell', the
    function construct requires 1 positional argument ...` when the network is first called.
    A `@jit` function fails with `TypeError: Function:f takes 1 positional arguments, but 2
    were given`, and a helper with `NameError: The name 'v' is not defined` at the call.

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
    words = ("/",)  # a positional-only marker is written as one

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        # a list or `()`, not a generator: every compiled function comes here
        assert isinstance(node, ast.FunctionDef)
        if not node.args.posonlyargs or ctx.scope is None:
            return ()
        from npu_lsp.rules.graphmode.fixes import remove_posonly_marker

        what = "`construct`" if node.name == "construct" else "a compiled function"
        return [
            ctx.diagnostic(
                self,
                ctx.head_span(node),
                f"{what} must not declare positional-only parameters (graph mode ignores them)",
                fix=remove_posonly_marker(node, ctx),
            )
        ]
