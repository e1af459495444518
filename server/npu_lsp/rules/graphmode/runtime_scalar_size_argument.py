"""MS208: a segment count or padding read from a run-time tensor (`int(t.max()) + 1`)."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.flow import analyzer
from npu_lsp.rules.graphmode.helpers import GraphRule
from npu_lsp.rules.graphmode.runtime_scalar_randint import _argument, _runtime_scalar

#: the MindSpore functions, by last name, whose argument (position, keyword) must be known
#: while compiling or be a tensor: the segment count of the unsorted segment reductions
#: (their kernels take it as a tensor input) and the padding widths of `ops.pad` (PadV3)
_SIZED: dict[str, tuple[int, str]] = {
    "unsorted_segment_sum": (2, "num_segments"),
    "unsorted_segment_max": (2, "num_segments"),
    "unsorted_segment_min": (2, "num_segments"),
    "unsorted_segment_prod": (2, "num_segments"),
    "pad": (1, "padding"),
}
#: the `mindspore.numpy` array makers, by last name, whose shape (position, keyword) STRICT
#: needs known while compiling: given a number read from a run-time tensor they compile
#: under LAX, and under STRICT the backend stops with "output index [0] large than the
#: output size [0] of node!" (measured, written/lax probes `fix30c_on_*`; `ops.ones` of the
#: same size compiles at both levels)
_STRICT_SIZED: dict[str, tuple[int, str]] = {
    "ones": (0, "shape"),
    "zeros": (0, "shape"),
    "full": (0, "shape"),
}


@rule(code="MS208", name="runtime-scalar-size-argument", severity="error", family="graphmode")
class RuntimeScalarSizeArgument(GraphRule):
    """## What it does
    Flags, in compiled code (at both syntax levels), the segment count of
    `ops.unsorted_segment_sum` / `_max` / `_min` / `_prod` and the padding of `ops.pad`
    computed from a number read from a run-time tensor: `int(t)`, `t.item()`, `float(t)`,
    also through arithmetic and names bound once (`num_graphs = int(batch.max()) + 1`,
    `pad = int(n * factor) // 2` with `factor` a tensor input). Under STRICT, also the shape
    of `mindspore.numpy.ones` / `zeros` / `full` computed from such a number.

    ## Why is this bad?
    The rule: a primitive's size argument may be a constant or a tensor, not a graph scalar
    whose value is only known at run time. MindSpore 2.10 stops compiling: the segment
    reductions with `Invalid kernel object type, a tensor type is required but the actual
    is scalar, input node: ... ScalarAdd ... UnsortedSegmentSum` (or `num_segments value
    must be greater than 0, but got: -1`), `ops.pad` with `For primitive[PadV3], there are
    unknown values in the paddings value`.

    ## Example
    ```python
    def construct(self, h, batch):
        num_graphs = int(batch.max()) + 1
        return ops.unsorted_segment_sum(h, batch, num_graphs)
    ```

    ## Use instead
    Pass the count as a tensor (`batch.max() + 1`), or as a constant known while compiling
    (the number of graphs of the batch, given to the Cell):
    ```python
    def construct(self, h, batch):
        return ops.unsorted_segment_sum(h, batch, batch.max() + 1)
    ```

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 1 (rejected at every level; the `mindspore.numpy` makers under
      STRICT only).
    - Measured on MindSpore 2.10 CPU (written/lax probes `fix30c_on_*`; difftest seeds
      9500042, 9900066, 9900108, 9940165, 9970143): `ms.numpy.ones((n, 3))`,
      `ms.numpy.zeros((n, 3))`, `ms.numpy.full((n, 3), 1.0)` and `ms.numpy.ones(n)` with `n =
      int(x.sum() * 0 + 2)` or `int(x.max() >= x.min()) + 1`, summed, averaged or returned,
      in `construct` or an `@ms.jit` function, fail under STRICT only ("output index [0]
      large than the output size [0] of node!"); `n = int(x.shape[0])` and `ops.ones((n,
      3), ...)` compile at both levels.
    - Measured on MindSpore 2.10 CPU, LAX and STRICT, written set `heldout20a`
      (`gnn_graph_readout_batch_vector_unique`, `r2_fno_super_resolution_interp_scale_float`)
      and its probes `rtarg_*`: `int(batch.max()) + 1`, `int(batch.max())`,
      `batch.max().item() + 1`, the keyword `num_segments=`, `unsorted_segment_max`, and
      `int(...)` of a tensor as `ops.pad`'s width are rejected; `batch.max() + 1` (a tensor),
      `h.shape[0]`, `h.shape[-1] // 2` compile, and so does `int(np.max(batch.asnumpy()))`
      under LAX (host data).
    """

    nodes = (ast.Call,)
    calls = frozenset(_SIZED) | frozenset(_STRICT_SIZED)
    words = ("unsorted_segment_", "pad(", "ones(", "zeros(", "full(")

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        assert isinstance(node, ast.Call)
        if ctx.function is None or not ctx.scope:
            return
        q = ctx.qualname(node.func) or ""
        last = q.rsplit(".", 1)[-1]
        if q.split(".")[0] != "mindspore":
            return
        if q == f"mindspore.numpy.{last}" and last in _STRICT_SIZED:
            if not ctx.scope.strict:
                return
            at, key = _STRICT_SIZED[last]
        elif ".ops." in f"{q}." and last in _SIZED:
            at, key = _SIZED[last]
        else:
            return
        arg = _argument(node, at, key)
        if arg is None:
            return
        src = _runtime_scalar(arg, ctx)
        if src is None:
            return
        if type(src) is ast.Name:
            src = analyzer(ctx).single_assignment(src.id, ctx.function) or src
        if last in _STRICT_SIZED and q.startswith("mindspore.numpy."):
            yield ctx.diagnostic(
                self,
                arg,
                f"`{ctx.segment(arg)}` is computed from `{ctx.segment(src)}`, a number read from a run-time tensor; under STRICT "
                f"`mindspore.numpy.{last}` needs its shape known while compiling (MindSpore: output index [0] large than the "
                f"output size [0] of node): use `ops.{last}`, or a size known while compiling (`x.shape[0]`)",
            )
            return
        yield ctx.diagnostic(
            self,
            arg,
            f"`{ctx.segment(arg)}` is computed from `{ctx.segment(src)}`, a number read from a run-time tensor; `{last}` needs its `{key}` known while compiling or as a tensor, and MindSpore stops compiling: keep it a tensor, or pass a constant",
        )
