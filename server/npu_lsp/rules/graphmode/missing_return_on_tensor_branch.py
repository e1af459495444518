"""MS133: (STRICT) a tensor-dependent `if` where one path returns a value and the other None."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode import abstract as av
from npu_lsp.rules.graphmode.abstract_eval import values
from npu_lsp.rules.graphmode.branch_type_mismatch import false_path, result_unused, side_value
from npu_lsp.rules.graphmode.flow import analyzer
from npu_lsp.rules.graphmode.helpers import GraphRule, returns_in


@rule(code="MS133", name="missing-return-on-tensor-branch", severity="error", family="graphmode")
class MissingReturnOnTensorBranch(GraphRule):
    """## What it does
    Under the STRICT syntax level, flags an `if` whose condition depends on a tensor's value
    when one path returns a value (a tensor, a number, a tuple...) and the other path returns
    None, explicitly or by falling through to the implicit `return None`.

    ## Why is this bad?
    STRICT joins both paths' results: `TypeError: Cannot join the return values of different
    branches ... AbstractTensor cannot join with AbstractNone.` The default LAX level
    accepts the code (the caller then gets `None` on one path, as in Python).

    ## Example
    ```python
    @ms.jit(fullgraph=True)
    def f(x):
        if x.sum() > 0:
            return x * 2
    ```

    ## Use instead
    ```python
    @ms.jit(fullgraph=True)
    def f(x):
        if x.sum() > 0:
            return x * 2
        return x
    ```

    ## Fix safety
    No automatic fix: the value for the other path is a design decision.

    ## References
    - RULES.md, section 2 (STRICT only): a tensor-dependent `if` where one path returns a
      value and the other falls through to `None`.
    """

    nodes = (ast.If,)
    strict_only = True

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        assert isinstance(node, ast.If)
        if not ctx.scope or not ctx.scope.strict or node.orelse:
            return
        body = returns_in(node.body)
        if not body or result_unused(ctx):
            return
        vals = values(ctx)
        x = side_value(body, vals)
        if not x.known or isinstance(x, av.NoneValue):
            return
        cont = false_path(node, ctx)
        if cont is None:
            return
        rets, falls_off = cont
        # the false path gives None: it falls off the end (implicit `return None`) or says so
        if not (falls_off and not rets) and not any(
            r.value is None or isinstance(vals.of(r.value), av.NoneValue) for r in rets
        ):
            return
        error = av.join(x, av.NONE, av.Site.RETURN).error
        if error is None or not analyzer(ctx).kind(node.test).dynamic:
            return
        what = "a Tensor" if isinstance(x, av.Tensor) else f"a {x.describe()}"
        yield ctx.diagnostic(
            self,
            ctx.head_span(node),
            f"under STRICT, this tensor-dependent `if` returns {what} on one path and None on the other",
        )
