"""MS114: a compiled function returning a function or lambda."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.flow import analyzer
from npu_lsp.rules.graphmode.helpers import GraphRule


@rule(code="MS114", name="function-in-output", severity="error", family="graphmode")
class FunctionInOutput(GraphRule):
    """## What it does
    Flags `return` statements of `construct` or a `@jit` function whose value is a function
    or lambda, or a tuple/list containing one.

    ## Why is this bad?
    A graph's outputs must be tensors, scalars or containers of them. MindSpore stops with
    `RuntimeError: Function in output is not supported.` at every syntax level. Helpers
    *called* from `construct` may return functions; only the graph's own outputs matter.

    ## Example
    ```python
    def construct(self, x):
        return x, lambda v: v
    ```

    ## Use instead
    Return data only, and apply the function in the caller:
    ```python
    def construct(self, x):
        return x
    ```

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 1: returning a function or lambda, also inside a tuple.
    """

    nodes = (ast.Return,)

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        scope = ctx.scope
        if (
            scope is None
            or scope.kind not in ("construct", "jit")
            or ctx.function is not scope.function
        ):
            return
        value = getattr(node, "value", None)
        if value is None:
            return
        items = value.elts if isinstance(value, (ast.Tuple, ast.List)) else [value]
        a = analyzer(ctx)
        for item in items:
            if (
                isinstance(item, ast.Lambda)
                or a.type_class(item) == "function"
                or self._module_function(item, ctx)
            ):
                yield ctx.diagnostic(
                    self,
                    node,
                    "a graph cannot return a function (Function in output is not supported)",
                )
                return

    @staticmethod
    def _module_function(item: ast.expr, ctx: Context) -> bool:
        """A name that refers to a function defined at module level (not shadowed locally)."""
        if not isinstance(item, ast.Name):
            return False
        if item.id in analyzer(ctx).flow(ctx.function).kinds:
            return False
        return item.id in ctx.scopes.info.functions
