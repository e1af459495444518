"""MS196: a boolean-mask setitem whose value has a run-time length (`d[m] = x[m]`)."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.dynamic_shape import boolean_mask, dynamic_shape, reaching_assignment
from npu_lsp.rules.graphmode.flow import Kind, analyzer
from npu_lsp.rules.graphmode.helpers import GraphRule
from npu_lsp.rules.graphmode.ranks import shape_kinds

_MAX_DEPTH = 6
#: arithmetic broadcasts its operands: one of run-time length makes the result one
_ARITH = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow)
#: ms_shapes.json kinds whose result keeps the rows of the input (`same`) or of any tensor
#: argument (`broadcast`)
_ROW_KEEPING = frozenset({"same", "broadcast"})


@rule(code="MS196", name="mask-setitem-runtime-length-value", severity="error", family="graphmode")
class MaskSetitemRuntimeLengthValue(GraphRule):
    """## What it does
    Flags a tensor element assignment through a boolean mask whose value is itself a tensor
    of run-time length, the PyTorch idiom `distance[mask] = dist[mask]` (also `+=` and the
    other augmented forms, or a value made by `masked_select`, `nonzero`, `unique`), in
    compiled code.

    ## Why is this bad?
    MindSpore's graph setitem with a boolean mask does not scatter the value into the
    selected places: it pads the value's shape with trailing 1s to the target's rank,
    broadcasts it to the whole target's shape and selects with the mask. A value holding the
    k selected elements has shape (k, 1, ...), which broadcasts only when k is 1 or the
    target's first dimension, so the verdict depends on the data: MindSpore 2.10 fails at
    every syntax level, in a loop or not, on 1-D and N-D targets, for an empty mask too:
    `ValueError: For 'BroadcastTo', in order to broadcast, each dimension pair must be equal
    or input dimension is 1 ... x_shape: {64, 1}, target shape: {2, 32}`; with k = 1 or k =
    the first dimension it runs, and writes the wrong values (the rule flags the statement
    whatever the data: on typical random data a partial mask of such a size is rare). A
    scalar value (`d[m] = 0.0`) and a value of the target's own shape compile. The value keeps that length through element-wise arithmetic
    (`(x[m] - mean) / std`), shape-keeping methods and functions (`ops.relu(x[m])`) and
    sub-cells (`self.experts[i](x[m])`); a reduction (`x[m].mean()`) is one element.

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
    - The value keeps the run-time length through arithmetic, shape-keeping methods and
      `mindspore.ops` functions, and sub-cells: written sets `heldout24a`
      (`moe_boolean_mask_dispatch_setitem`, `out[mask] = self.experts[i](x[mask])`) and
      `heldout24b` (`prep_zscore_foreground_mask_mean`, `(img[mask] - mean) / std`), probes
      `miss24_ms_*`: `self.dense(x[m])`, `ops.relu(x[m])`, `-x[m]`, `x[m].exp() * 0.5`
      refused at both levels; `x[m].mean()` and a full-shape `self.dense(x) * 2.0` compile.
      MindSpore 2.10 (`_tensor_setitem_by_bool_tensor_with_tensor`) pads the value's shape
      with trailing 1s and broadcasts it to the target's, so a value of shape (8,) into a
      (12, 8) target through a (12,) mask fails too (probe `miss24_ms_rowvec_2d`, not
      flagged: static shapes are not followed here).
    - The data decides (written set `heldout33a`, probes `fix33e_ms_*`): `a[m] = b[m]` runs
      when the mask selects one element or, on a 1-D target, all of them; it fails when it
      selects none, some, or (on a (2, 4, 4) target) all 32; `a[m] = b * 2` or `a[m] =
      b[:, 0, 0]` (a value of the target's shape or first dimension) and `a[m] = b.max()`
      run. The cases `point_ball_query_mask_sort` (the mask selects 2 = the batch size) and
      `r2_mask_setitem_tensor_values_in_loop_1d` (masks of 10 and 1 of 10 elements; the last
      pass's store is dead) run by that coincidence: over 500 seeds of the same programs, the
      ball query runs for 28% (0% with radius 0.1 or 0.2) and the farthest-point loop for 4%
      (0% with 64 points), so they stay flagged (known misses).
    - A mask made by a call is a mask too (written set `heldout35c`, case
      `spline_tails_boolean_mask_index_assign`, `outputs[~inside] = x[~inside]` with `inside =
      ops.logical_and(x >= -b, x <= b)`; probes `fix35f_mk_*`): `ops.logical_and`,
      `ops.logical_or`, `ops.logical_not`, `ops.gt`, `ops.isnan` and the method
      `.logical_and`, refused at both levels; a constant through the same mask and a
      full-shape value compile.
    """

    nodes = (ast.Assign, ast.AugAssign)

    def wants_assign(self, target: type[ast.AST] | None, value: type[ast.AST]) -> bool:
        # `d[m] = x[m]`, `d[m] = ops.masked_select(...)`, `d[m] = v`, `d[m] = (x[m] - a) / b`,
        # `d[m] = -x[m]`: a run-time length comes from a subscript, a call, a name or
        # arithmetic on one
        return target is ast.Subscript and value in (ast.Subscript, ast.Call, ast.Name, ast.BinOp, ast.UnaryOp)

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
        if not _runtime_rows(node.value, ctx, 0):
            return
        if not ctx.scope.strict and _lax_python_object(node.value, ctx):
            return
        yield ctx.diagnostic(
            self,
            node,
            f"`{ctx.segment(node.value)}` has a run-time length (the number of selected elements), but MindSpore's masked setitem pads the value's shape with trailing 1s and broadcasts it to the shape of `{ctx.segment(target.value)}`: it runs only when the mask selects exactly one element or exactly `{ctx.segment(target.value)}.shape[0]` of them (and then writes the wrong values), otherwise it fails ('For BroadcastTo ... target shape'), an empty mask too: use `ops.where({ctx.segment(target.slice)}, <full-shape value>, {ctx.segment(target.value)})`",
        )


def _runtime_rows(e: ast.expr, ctx: Context, depth: int) -> bool:
    """Does the value `e` keep a run-time length: a dynamic-shape tensor (`x[m]`), or what
    element-wise arithmetic (`(x[m] - mean) / std`, `-x[m]`), a shape-keeping method or
    `mindspore.ops` function (ms_shapes.json `same` / `broadcast`: `ops.relu(x[m])`,
    `x[m].exp()`) or a sub-cell (`self.experts[i](x[m])`, a layer maps rows to rows) makes of
    one? Measured (heldout24a `moe_boolean_mask_dispatch_setitem`, heldout24b
    `prep_zscore_foreground_mask_mean`, probes `miss24_ms_*`). A reduction (`x[m].mean()`)
    is a single element and compiles."""
    if depth > _MAX_DEPTH:
        return False
    if dynamic_shape(e, ctx):
        return True
    if isinstance(e, ast.BinOp):
        return isinstance(e.op, _ARITH) and (
            _runtime_rows(e.left, ctx, depth + 1) or _runtime_rows(e.right, ctx, depth + 1)
        )
    if isinstance(e, ast.UnaryOp):
        return isinstance(e.op, (ast.USub, ast.UAdd)) and _runtime_rows(e.operand, ctx, depth + 1)
    if isinstance(e, ast.Name):
        func = ctx.function
        bound = analyzer(ctx).single_assignment(e.id, func) if func is not None else None
        if not isinstance(bound, ast.expr):
            bound = reaching_assignment(e, ctx)
        return bound is not None and _runtime_rows(bound, ctx, depth + 1)
    if isinstance(e, ast.Call):
        return any(_runtime_rows(x, ctx, depth + 1) for x in _row_inputs(e, ctx))
    return False


def _row_inputs(call: ast.Call, ctx: Context) -> list[ast.expr]:
    """The arguments whose rows `call`'s result keeps (none when it may reduce or reshape)."""
    methods, functions = shape_kinds()
    f = call.func
    q = ctx.qualname(f)
    if q is not None and q.startswith("mindspore.ops."):
        spec = functions.get(q.rsplit(".", 1)[-1])
        kind = spec.get("kind") if spec is not None else None
        if kind == "same":
            return call.args[:1]
        return list(call.args) if kind == "broadcast" else []
    if isinstance(f, ast.Attribute) and q is None:
        spec = methods.get(f.attr)
        kind = spec.get("kind") if spec is not None else None
        if kind in _ROW_KEEPING and analyzer(ctx).kind(f.value) == Kind.TENSOR:
            return [f.value, *call.args] if kind == "broadcast" else [f.value]
    if _sub_cell(f, ctx):
        return call.args[:1]
    return []


def _sub_cell(f: ast.expr, ctx: Context) -> bool:
    """`self.layer` or `self.layers[i]` where `__init__` binds a Cell that is not a loss (a
    loss reduces to one element)."""
    if isinstance(f, ast.Subscript):
        f = f.value
    if not (isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == "self"):
        return False
    cls = analyzer(ctx).owner_class(ctx.function)
    if cls is None:
        return False
    made = ctx.scopes.attribute_class(f"{ctx.scopes.info.module}.{cls.name}", f.attr)
    return made is not None and not made.endswith("Loss") and ctx.scopes.is_cell_class(made)


def _lax_python_object(e: ast.expr, ctx: Context) -> bool:
    """Does the value combine the rows with `min(...)` / `max(...)` of a run-time scalar
    (`x[m] / max(x.std().item(), 1e-5)`)? LAX runs that `max` as Python (JIT fallback), the
    value becomes a Python object and the store runs as Python too: measured, written/heldout18a
    probes `fe19b_si_max_mask_return` (compiles at LAX) and `fe19b_si_item_mask_dense` (`/
    (x.std().item() + 1e-5)`, a graph scalar: refused)."""
    a = analyzer(ctx)
    for n in ast.walk(e):
        if (
            isinstance(n, ast.Call)
            and isinstance(n.func, ast.Name)
            and n.func.id in ("min", "max")
            and any(a.kind(x).dynamic for x in n.args)
        ):
            return True
    return False
