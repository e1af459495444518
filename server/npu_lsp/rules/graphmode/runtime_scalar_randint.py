"""MS206: `ops.randint` given a bound read from a run-time tensor (`t.item()`, `int(t)`)."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.flow import analyzer
from npu_lsp.rules.graphmode.helpers import GraphRule
from npu_lsp.rules.graphmode.runtime_scalars import call_argument, runtime_scalar

_RANDINT = frozenset({"mindspore.ops.randint"})
#: (position, keyword) of the bounds `ops.randint` turns into `Tensor(bound, int32)`
_BOUNDS = ((0, "low"), (1, "high"))


@rule(code="MS206", name="runtime-scalar-randint-bound", severity="error", family="graphmode")
class RuntimeScalarRandintBound(GraphRule):
    """## What it does
    Flags `ops.randint(low, high, size)` in compiled code (at both syntax levels)
    whose `low` or `high` is computed from a number read from a run-time tensor: `t.item()`,
    `int(t)`, `float(t)` (also through arithmetic, `max(1, int(...))` and names bound once:
    `L = lengths[b].item()` then `ops.randint(0, L - w + 1, (1,))`).

    ## Why is this bad?
    `ops.randint` builds `Tensor(low, mstype.int32)` and `Tensor(high, mstype.int32)` from its
    bounds. Of a graph scalar whose value is unknown while compiling, LAX builds that tensor
    by JIT Fallback at run time, and its rank is unknown (-2; STRICT stops with the same words); the `UniformInt` primitive
    checks that its bounds are scalar tensors while compiling, and MindSpore 2.10 stops with
    `ValueError: The max value should be a scalar tensor, while the shape is: (-2)` (`For
    UniformInt, the min value ...` for `low`). A bound from a shape (`x.shape[0]`) or a
    constant compiles, and so does the same scalar in tensor arithmetic (`ops.rand((1,)) *
    L`), at both levels.

    ## Example
    ```python
    def construct(self, spec, lengths):
        L = lengths[0].item()
        t0 = ops.randint(0, L, (1,))
        return spec[:, t0]
    ```

    ## Use instead
    Draw a float and scale it with tensor operations: `t0 = (ops.rand((1,)) *
    lengths[0]).astype(ms.int32)`.

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 2 (JIT Fallback: LAX builds `Tensor(<run-time value>)` as Python).
    - Measured on MindSpore 2.10 CPU, written/heldout18a probes `fe19a_ri_*`: `.item()`,
      `int(t)`, `int(float(t))`, `t.sum().item()`, `max(1, int(t)) + 1`, `L - 2 + 1` as
      `high`, `.item()` as `low` (rejected); a constant, `x.shape[0]`, `ops.rand((1,)) * L`
      (compile); the held-out case `heldout18a/r2_feat_specaug_per_sample_mask_loop_item`.
    """

    nodes = (ast.Call,)
    calls = frozenset({"randint"})
    words = ("randint",)

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        assert isinstance(node, ast.Call)
        if ctx.function is None or not ctx.scope:
            return
        if ctx.qualname(node.func) not in _RANDINT:
            return
        for at, key in _BOUNDS:
            arg = call_argument(node, at, key)
            if arg is None:
                continue
            src = runtime_scalar(arg, ctx)
            if src is None:
                continue
            which = "max" if key == "high" else "min"
            if type(src) is ast.Name:
                src = analyzer(ctx).single_assignment(src.id, ctx.function) or src
            yield ctx.diagnostic(
                self,
                arg,
                f"`{ctx.segment(arg)}` is computed from `{ctx.segment(src)}`, a number read from a run-time tensor; `ops.randint` makes `Tensor({key})` of it, which MindSpore builds at run time with an unknown rank (MindSpore: \"The {which} value should be a scalar tensor, while the shape is: (-2)\"): draw with `ops.rand` and scale by the tensor instead",
            )
            return
