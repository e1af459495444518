"""MS191: (STRICT) `is` / `is not` between two tensors in compiled code."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.flow import Kind, analyzer
from npu_lsp.rules.graphmode.helpers import GraphRule


@rule(code="MS191", name="tensor-identity-under-strict", severity="error", family="graphmode")
class TensorIdentityUnderStrict(GraphRule):
    """## What it does
    Under the STRICT syntax level, flags `a is b` and `a is not b` in compiled code when both
    sides are tensors (`if y is x:`, `if out is not x:`), inputs or tensors the function
    computes. `x is None` and `x is not None` are not this rule's: they compile.

    ## Why is this bad?
    Under STRICT the graph keeps the identity test as a Python primitive (`is_` / `is_not`)
    applied to two tensors, which the backend cannot run: MindSpore 2.10 stops with
    `RuntimeError: Failed to find input: ... ValueNode<PrimitivePy> is_` or `Failed to get
    from actor by backend node: ... is_not`. The default LAX level compiles it.

    ## Example
    ```python
    class Net(nn.Cell):
        @ms.jit(fullgraph=True)
        def construct(self, x, y):
            if x is y:
                return x + 1
            return x
    ```

    ## Use instead
    Decide identity outside compiled code and pass a flag, or compare values
    (`ops.equal(x, y).all()`).

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 2 (rejected only under STRICT); written set `langref` (case
      `is_operator__tensor_same`) and its probes `is_*`.
    """

    nodes = (ast.Compare,)
    strict_only = True
    words = (" is ",)

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        assert isinstance(node, ast.Compare)
        if not ctx.scope or not ctx.scope.strict:
            return
        left = node.left
        for op, right in zip(node.ops, node.comparators, strict=True):
            if isinstance(op, (ast.Is, ast.IsNot)) and _tensor(left, ctx) and _tensor(right, ctx):
                word = "is" if isinstance(op, ast.Is) else "is not"
                yield ctx.diagnostic(
                    self,
                    node,
                    f"under STRICT, `{word}` between the tensors `{ctx.segment(left)}` and `{ctx.segment(right)}` cannot run in compiled code (MindSpore: Failed to find input ... PrimitivePy is_); decide it outside the graph",
                )
                return
            left = right


def _tensor(e: ast.expr, ctx: Context) -> bool:
    return not isinstance(e, ast.Constant) and analyzer(ctx).kind(e) == Kind.TENSOR
