"""MS216: a tensor store through a boolean mask and an integer index, under STRICT."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.dynamic_shape import boolean_mask, dynamic_shape
from npu_lsp.rules.graphmode.flow import Kind, analyzer
from npu_lsp.rules.graphmode.helpers import GraphRule


@rule(code="MS216", name="mask-int-setitem-strict", severity="error", family="graphmode")
class MaskIntSetitemStrict(GraphRule):
    """## What it does
    Under the STRICT syntax level, flags a store into a tensor whose index is a tuple of
    boolean mask tensors and integers only, at least one of each: `pos[below, 1] = 0.0`
    with `below = pos[:, 1] < 0` (also `+=`, the integer first, `pos[1, below] = 0.0`, and
    more axes, `x[m, 1, 0] = 0.0`). Also a store whose index is a tuple of two or more
    index tensors, one of run-time length at least: insightface's CosFace margin,
    `logits[index, labels[index]] = target - m` with `index = ops.nonzero(labels !=
    -1).view(-1)` (or `ops.masked_select(...)`).

    ## Why is this bad?
    MindSpore 2.10 compiles such a store under STRICT as a scatter over the mask's
    nonzero positions and gets the ranks of the value and the indices wrong: `ValueError:
    For TensorScatterUpdate, updates_shape = indices_shape[:-1] + x_shape[indices_shape[-1]:],
    but got ...` (`For primitive[ScatterNdUpdate], the len(updates.shape)' must be equal to
    ...` in a loop; `For 'BroadcastTo' ...` with a tensor value). LAX compiles the same
    store, and STRICT compiles an index that also holds a slice or `...` (`pos[below, 1:2]
    = 0.0`, `x[m, 1, :] = 0.0`), a mask alone over the rows (`pos[below] = 0.0`), a
    full-shape mask (`pos[pos < 0] = 0.0`) and `ops.where`. With index tensors of
    run-time length STRICT fails the same way (`For 'BroadcastTo' ...` for a tensor value,
    `TensorScatterUpdate` for a number, whatever rows the data keeps); index tensors of a
    static length, or one index tensor alone (`logits[index] = ...`), compile.

    ## Example
    ```python
    def construct(self, pos):
        below = pos[:, 1] < 0
        pos[below, 1] = 0.0
        return pos
    ```

    ## Use instead
    Select the column with `ops.where` and store it with a plain index:
    ```python
    def construct(self, pos):
        below = pos[:, 1] < 0
        pos[:, 1] = ops.where(below, ops.zeros_like(pos[:, 1]), pos[:, 1])
        return pos
    ```

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 2 (STRICT only).
    - Measured on MindSpore 2.10 with the written set `heldout25b`
      (`phys_bounce_inplace_velocity_flip`) and its probes `fix26a_mask_*`: a mask with an
      integer (either order, 2-D and 3-D targets, in a loop or not, a number or a tensor
      value, `+=`) is refused under STRICT and compiles under LAX; the same with a slice or
      `...` added (`x[m, 1, :]`, `x[m, :, 1]`), a mask alone and a full-shape mask compile
      at both levels, and so does reading `pos[below, 1]`.
    - Index tensors of run-time length: written set `heldout27a` (`margin_cosface_index_setitem`)
      and its probes `fix28a_margin_*` (`nonzero` and `masked_select` indices, a tensor or a
      number value, every row kept: refused under STRICT, compiled under LAX; static
      indices, one index tensor, a 1-D target and the gather alone compile).
    """

    nodes = (ast.Subscript,)
    strict_only = True

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        assert isinstance(node, ast.Subscript)
        # not a generator itself: most subscripts stop at these tests
        if type(node.ctx) is not ast.Store or type(node.slice) is not ast.Tuple:
            return ()
        if not ctx.scope or not ctx.scope.strict:
            return ()
        # an index that also holds a slice, `...` or `None` takes another path that
        # compiles (probes `fix26a_mask_slice_*`, `..._int_slice_3d`, `..._ellipsis_clean`)
        elts = node.slice.elts
        if any(type(x) is ast.Slice for x in elts):
            return ()
        numbers = [x for x in elts if _int_index(x, ctx)]
        if not numbers:
            return _run_time_length_indices(self, node, elts, ctx)
        if len(numbers) == len(elts):
            return ()
        masks = [x for x in elts if not any(x is n for n in numbers)]
        if not all(boolean_mask(x, ctx) for x in masks) or analyzer(ctx).kind(node.value) != Kind.TENSOR:
            return ()
        mask, number = masks[0], numbers[0]
        return (
            ctx.diagnostic(
                self,
                node,
                f"`{ctx.segment(node)}` stores through the boolean mask `{ctx.segment(mask)}` and the integer `{ctx.segment(number)}`: under STRICT MindSpore 2.10 builds a scatter of the wrong rank (TensorScatterUpdate / ScatterNdUpdate shape error); store the column with `ops.where` (`t[:, j] = ops.where(mask, value, t[:, j])`) or use a slice (`t[mask, j:j + 1]`)",
            ),
        )


def _int_index(e: ast.expr, ctx: Context) -> bool:
    """An integer constant (`1`, `-1`) or a name bound once to one."""
    if isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.USub):
        e = e.operand
    if isinstance(e, ast.Name) and ctx.function is not None:
        bound = analyzer(ctx).single_assignment(e.id, ctx.function)
        if bound is None:
            return False
        e = bound
    return isinstance(e, ast.Constant) and type(e.value) is int


def _run_time_length_indices(rule: GraphRule, node: ast.Subscript, elts: list[ast.expr], ctx: Context) -> tuple[Diagnostic, ...]:
    """`logits[index, labels[index]] = v` with `index = ops.nonzero(m).view(-1)`: a tuple of
    two or more index tensors, one of run-time length at least. Measured (written/heldout27a
    case `margin_cosface_index_setitem`, probes `fix28a_margin_*`): under STRICT "For
    'BroadcastTo', in order to broadcast ..." (a tensor value, also when every row is kept,
    and with `masked_select` indices) or "For TensorScatterUpdate, updates_shape = ..." (a
    number value); LAX compiles it, and so does STRICT with index tensors of a static length,
    one index tensor alone (`logits[index] = ...`) or the gather without the store."""
    if len(elts) < 2 or not any(dynamic_shape(x, ctx) for x in elts):
        return ()
    a = analyzer(ctx)
    if not all(a.kind(x) == Kind.TENSOR for x in elts) or a.kind(node.value) != Kind.TENSOR:
        return ()
    return (
        ctx.diagnostic(
            rule,
            node,
            f"`{ctx.segment(node)}` stores through index tensors of run-time length: under STRICT MindSpore 2.10 builds a scatter whose shapes do not match (BroadcastTo / TensorScatterUpdate shape error); build the full-shape value with `ops.tensor_scatter_elements` or `ops.where`, or index with one tensor",
        ),
    )
