"""MS196: a boolean-mask setitem whose value has a run-time length (`d[m] = x[m]`)."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.dynamic_shape import boolean_mask, dynamic_shape
from npu_lsp.rules.graphmode.flow import Kind, analyzer
from npu_lsp.rules.graphmode.helpers import GraphRule


@rule(code="MS196", name="mask-setitem-runtime-length-value", severity="error", family="graphmode")
class MaskSetitemRuntimeLengthValue(GraphRule):
    """## What it does
    Flags a tensor element assignment through a boolean mask whose value is itself a tensor
    of run-time length, the PyTorch idiom `distance[mask] = dist[mask]` (also `+=` and the
    other augmented forms, or a value made by `masked_select`, `nonzero`, `unique`), in
    compiled code.

    ## Why is this bad?
    MindSpore's graph setitem with a boolean mask does not scatter the value into the
    selected places: it broadcasts the value to the whole target's shape and selects with the
    mask. A value holding only the selected elements cannot be broadcast, and MindSpore 2.10
    fails at every syntax level, in a loop or not, on 1-D and 2-D targets: `ValueError: For
    'BroadcastTo', in order to broadcast, each dimension pair must be equal or input dimension
    is 1 ... x_shape: {64, 1}, target shape: {2, 32}`. A scalar value (`d[m] = 0.0`)
    compiles.

    ## Example
    ```python
    def construct(self, xyz, centroid, distance):
        dist = ((xyz - centroid) ** 2).sum(-1)
        mask = dist < distance
        distance[mask] = dist[mask]
        return distance
    ```

    ## Use instead
    Select element-wise with the full-shape value:
    ```python
    def construct(self, xyz, centroid, distance):
        dist = ((xyz - centroid) ** 2).sum(-1)
        return ops.where(dist < distance, dist, distance)
    ```

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 3 (dynamic shapes).
    - Measured on MindSpore 2.10 with the written set `heldout14b`
      (`pc_farthest_point_sampling_loop`) and its probes `hb_mset_*`: `d[m] = x[m]` on 1-D and
      2-D targets, in a loop or not, on an input or a local tensor, `d[m] += x[m]` and
      `d[m] = ops.masked_select(x, m)`, rejected at both levels;
      `d[m] = 0.0` and `ops.where(m, x, d)` compile.
    """

    nodes = (ast.Assign, ast.AugAssign)

    def wants_assign(self, target: type[ast.AST] | None, value: type[ast.AST]) -> bool:
        # `d[m] = x[m]`, `d[m] = ops.masked_select(...)`, `d[m] = v`: a run-time length
        # comes from a subscript, a call or a name
        return target is ast.Subscript and value in (ast.Subscript, ast.Call, ast.Name)

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        assert isinstance(node, (ast.Assign, ast.AugAssign))
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        if not ctx.scope or len(targets) != 1:
            return
        target = targets[0]
        if not isinstance(target, ast.Subscript) or isinstance(target.slice, (ast.Slice, ast.Tuple)):
            return
        if not boolean_mask(target.slice, ctx) or analyzer(ctx).kind(target.value) != Kind.TENSOR:
            return
        if not dynamic_shape(node.value, ctx):
            return
        yield ctx.diagnostic(
            self,
            node,
            f"`{ctx.segment(node.value)}` has a run-time length, but MindSpore's masked setitem broadcasts the value to the shape of `{ctx.segment(target.value)}` and fails to compile ('For BroadcastTo ... target shape'): use `ops.where({ctx.segment(target.slice)}, <full-shape value>, {ctx.segment(target.value)})`",
        )
