"""MS261: `np.random.choice(..., p=[...])` in compiled code with probabilities the graph rounds to float32."""

from __future__ import annotations

import ast
import math
import struct
from collections.abc import Callable, Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.helpers import GraphRule
from npu_lsp.rules.graphmode.values import UNKNOWN, instances

#: numpy's tolerance for `p` of float64 (`sqrt(finfo(float64).eps)`): `choice` refuses a `p`
#: whose sum is further than this from 1 ("probabilities do not sum to 1")
_ATOL = math.sqrt(2.220446049250313e-16)


def _f32(v: float) -> float:
    """`v` rounded to the nearest float32 (as MindSpore holds a Python float in the graph)."""
    return float(struct.unpack("f", struct.pack("f", v))[0])


_OPS: dict[type[ast.operator], Callable[[float, float], float]] = {
    ast.Add: lambda a, b: a + b,
    ast.Sub: lambda a, b: a - b,
    ast.Mult: lambda a, b: a * b,
}


@rule(code="MS261", name="numpy-choice-float32-probabilities", severity="error", family="graphmode")
class NumpyChoiceFloat32Probabilities(GraphRule):
    """## What it does
    Flags `np.random.choice(n, size, p=[self.lam, 1 - self.lam])` in compiled code when the
    probabilities are computed from numbers the network stores on `self` and, with the
    graph's float32 arithmetic, no longer sum to 1 within numpy's tolerance
    (`self.lam = 0.1`: 0.1 and 1 - 0.1 in float32 sum to 0.99999998).

    ## Why is this bad?
    The graph computes `1 - self.lam` as a float32 scalar, while JIT Fallback hands numpy
    `self.lam` itself as the Python float; `np.random.choice` checks that `p` sums to 1
    within `sqrt(eps)` of float64 (about 1.5e-8): `ValueError: probabilities do not sum
    to 1`, at LAX and STRICT, although the same code runs in PyNative. Whether it fails
    depends on the value: measured with `[self.lam, 1 - self.lam]`, 0.1, 0.15, 0.35, 0.4
    and 0.9 fail while 0.05, 0.2, 0.25, 0.5 and (`[1 - self.lam, self.lam]`) 0.3 compile,
    as `lam + f32(1 - f32(lam))` predicts; literals written in the list (`p=[0.1, 0.9]`,
    `[self.lam, 0.9]`) stay Python floats and compile.

    ## Example
    ```python
    def construct(self, x):
        mask = np.random.choice(2, x.shape, p=[self.lam, 1 - self.lam])
        return x * ms.Tensor(mask, ms.float32)
    ```

    ## Use instead
    Draw on the device: `mask = (ops.rand(x.shape) >= self.lam).astype(ms.float32)`, or
    normalise the probabilities in `__init__` as a tuple of Python floats and draw outside
    the network.

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 2 (JIT Fallback runs numpy calls with the graph's values).
    - Measured on MindSpore 2.10: written/heldout37c case
      `saint_cutmix_numpy_random_mask_in_construct` and probes `fix37g_npp_*`.
    """

    nodes = (ast.Call,)
    calls = frozenset({"choice"})
    words = ("choice",)

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        assert isinstance(node, ast.Call)
        if ctx.function is None or ctx.qualname(node.func) != "numpy.random.choice":
            return
        p = next((k.value for k in node.keywords if k.arg == "p"), node.args[3] if len(node.args) > 3 else None)
        if not isinstance(p, (ast.List, ast.Tuple)) or len(p.elts) < 2:
            return
        items = p.elts
        values = [_value(e, ctx) for e in items]
        if any(v is None for v in values) or not any(
            v is not None and v[1] and type(e) is not ast.Attribute for v, e in zip(values, items, strict=True)
        ):
            return  # not known, or nothing computed by the graph: numpy sees the Python floats
        total = math.fsum(v[0] for v in values if v is not None)
        if abs(total - 1.0) <= _ATOL:
            return
        yield ctx.diagnostic(
            self,
            p,
            f"the graph computes `{ctx.segment(p)}` in float32, summing to {total!r}, not 1 within numpy's tolerance: `np.random.choice` fails while compiling (MindSpore: probabilities do not sum to 1); draw on the device (`ops.rand(shape) >= p`) or pass probabilities that sum to 1 in float32",
        )


def _value(e: ast.expr, ctx: Context, depth: int = 0) -> tuple[float, bool] | None:
    """The number `e` gives numpy and whether the graph computed it (then in float32). A
    literal, and `self.<attr>` holding a number `__init__` gives every instance, reach
    numpy as the Python floats they are; arithmetic on such an attribute is the graph's,
    in float32 (measured, probes `fix37g_npp_*`: with `p=[self.lam, 1 - self.lam]` every
    verdict of twelve values matches `lam + f32(1 - f32(lam))` against numpy's tolerance,
    and `p=[self.lam, 0.9]` compiles)."""
    if depth > 4:
        return None
    if isinstance(e, ast.Constant):
        v = e.value
        return (float(v), False) if isinstance(v, (int, float)) and not isinstance(v, bool) else None
    if isinstance(e, ast.Attribute) and isinstance(e.value, ast.Name) and e.value.id == "self":
        got = instances(ctx).evaluate(e, ctx.function)
        if got is UNKNOWN or type(got) not in (int, float):
            return None
        return float(got), True
    if isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.USub):
        inner = _value(e.operand, ctx, depth + 1)
        return (-inner[0], inner[1]) if inner is not None else None
    if isinstance(e, ast.BinOp) and type(e.op) in _OPS:
        left, right = _value(e.left, ctx, depth + 1), _value(e.right, ctx, depth + 1)
        if left is None or right is None:
            return None
        fn = _OPS[type(e.op)]
        if left[1] or right[1]:
            return _f32(fn(_f32(left[0]), _f32(right[0]))), True  # a graph scalar op
        return fn(left[0], right[0]), False
    return None
