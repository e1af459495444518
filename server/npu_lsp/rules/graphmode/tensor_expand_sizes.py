"""MS172: `Tensor.expand` in compiled code with sizes instead of a size tensor."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.flow import Kind, analyzer
from npu_lsp.rules.graphmode.helpers import GraphRule


@rule(code="MS172", name="tensor-expand-sizes", severity="error", family="graphmode")
class TensorExpandSizes(GraphRule):
    """## What it does
    Flags `x.expand(...)` on a tensor in compiled code when the sizes are given as PyTorch
    does: as separate arguments (`x.expand(B, -1, -1)`), or as one tuple, list or shape
    (`x.expand((B, -1, -1))`, `x.expand(y.shape)`), also one computed in the graph
    (`x.expand(list(y.shape[:-1]) + [n])`, a local bound to such a list).

    ## Why is this bad?
    PyNative's `Tensor.expand(*size)` accepts PyTorch's spelling, but the graph compiler uses
    MindSpore's own `expand(input, size)`, which takes exactly one `size` and converts it with
    `TensorToTuple`: separate sizes stop the compile with `TypeError: The parameters number of
    the function is 2, but the number of provided arguments is 3`, and a tuple of sizes with
    `The method 'GetShapeVector()' doesn't implement`, at every syntax level. Code ported from
    PyTorch runs eagerly and fails only once compiled.

    ## Example
    ```python
    class ClsToken(nn.Cell):
        def construct(self, x):
            cls = self.cls.expand(x.shape[0], -1, -1)
            return ops.cat((cls, x), axis=1)
    ```

    ## Use instead
    ```python
    class ClsToken(nn.Cell):
        def construct(self, x):
            cls = ops.broadcast_to(self.cls, (x.shape[0], -1, -1))
            return ops.cat((cls, x), axis=1)
    ```
    `x.broadcast_to(shape)` and `x.expand_as(y)` compile too.

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 1 (rejected at every level); measured on MindSpore 2.10 with the written set `firstweek`
      (`tensor_contiguous_expand_repeat`) and probes: `x.expand(3, 4)` in a jit function,
      `x.unsqueeze(0).expand(b, n, -1)` in construct, `tok.expand(batch, -1, -1)` in a helper,
      a Parameter's `expand(b, 2, 4)` in a sub-cell, `x.expand((b, -1, -1))`,
      `x.expand((3, 4))`, `x.expand([3, 4])` and `x.expand(y.shape)` are rejected at both
      levels; `x.expand(size_tensor)`, `x.expand_as(y)`, `ops.broadcast_to(x, shape)` and
      `x.broadcast_to(shape)` compile; `x.expand(3, 4)` in PyNative runs.
    - Measured on MindSpore 2.10 (written set `heldout35b`, probes `fix35e_ex_*`): sizes
      computed in the graph are refused the same way at both levels: `list(y.shape[:-1]) +
      [n]`, `y.shape[:-1] + (n,)`, a local bound to such a list or tuple, `tuple(y.shape)`,
      `ops.shape(y)`, `[d for d in y.shape]`; `x.broadcast_to(list(...) + [n])` compiles.
    """

    nodes = (ast.Call,)
    calls = frozenset({"expand"})  # `<x>.expand(...)` only

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        assert isinstance(node, ast.Call)
        f = node.func
        if not (isinstance(f, ast.Attribute) and f.attr == "expand") or node.keywords or not node.args:
            return
        if any(isinstance(a, ast.Starred) for a in node.args):
            return
        recv = f.value
        if isinstance(recv, ast.Name) and recv.id == "self":
            return
        flow = analyzer(ctx)
        if len(node.args) == 1:
            size = node.args[0]
            literal = isinstance(size, (ast.Tuple, ast.List)) or (
                isinstance(size, ast.Attribute) and size.attr == "shape"
            )
            if not literal and not _computed_sizes(size):
                return  # one size tensor (or a value we cannot tell): MindSpore's own form
        if flow.kind(recv) != Kind.TENSOR:
            return
        if len(node.args) == 1 and not literal and not _shape_tuple(node.args[0], ctx) and (
            flow.type_class(node.args[0]) not in ("tuple", "list")
        ):
            return  # a value of the graph that is no sequence: a size tensor, or unknown
        yield ctx.diagnostic(
            self,
            node,
            "`Tensor.expand` in a graph takes one size tensor, not PyTorch's sizes: this fails to compile at every level; use `ops.broadcast_to(x, shape)` or `x.broadcast_to(shape)`",
        )


def _computed_sizes(size: ast.expr) -> bool:
    """Could `size` be a tuple or list built in the graph (`list(y.shape[:-1]) + [n]`,
    `y.shape[:-1] + (n,)`, a name bound to one, `tuple(y.shape)`)? A cheap syntactic gate
    before the flow analysis is asked (measured, written/heldout35b cases
    `r2_sample_expand_list_from_shape`, `r2_sample_expand_tuple_shape`,
    `r2_sample_unsqueeze_expand_matched_list`: `The method 'GetShapeVector()' doesn't
    implement` at both levels, as for a literal tuple)."""
    return isinstance(size, (ast.Name, ast.BinOp, ast.Call, ast.ListComp))


def _shape_tuple(size: ast.expr, ctx: Context) -> bool:
    """`ops.shape(y)`: the shape as a tuple (measured, written/heldout35b probe
    `fix35e_ex_ops_shape`: rejected at both levels like `y.shape`)."""
    return isinstance(size, ast.Call) and ctx.qualname(size.func) == "mindspore.ops.shape"
