"""Cube matrix products: MatMul and BatchMatMul (float32 accumulation, one rounding)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from npu_runtime import numerics
from npu_runtime.ops.common import (
    BF16,
    F16,
    F32,
    attr_bool,
    broadcast,
    dtype_in,
    io_bytes,
    n_inputs,
    rank_in,
    same_dtype,
)
from npu_runtime.ops.errors import ACL_ERROR_OP_INPUT_NOT_MATCH, OpError
from npu_runtime.ops.registry import Attrs, Matmul, Spec, Work, op

I8 = np.dtype(np.int8)
I32 = np.dtype(np.int32)
_CUBE_IN = frozenset({F16, BF16, F32, I8})


def out_dtype(dt: np.dtype) -> np.dtype:
    """int8 products are written as int32; float types keep their type."""
    return I32 if dt == I8 else dt


def _check_bias(name: str, inputs: Sequence[Spec], n: int, dt: np.dtype) -> None:
    if len(inputs) == 3:
        bias = inputs[2]
        if bias.shape != (n,) or bias.dtype not in (dt, out_dtype(dt), F32):
            raise OpError(
                ACL_ERROR_OP_INPUT_NOT_MATCH,
                f"{name} bias must be [{n}] of the output dtype, got {list(bias.shape)}",
            )


def _dims(name: str, a: Spec, b: Spec, ta: bool, tb: bool) -> tuple[int, int, int]:
    m, k = (a.shape[-1], a.shape[-2]) if ta else (a.shape[-2], a.shape[-1])
    k2, n = (b.shape[-1], b.shape[-2]) if tb else (b.shape[-2], b.shape[-1])
    if k != k2:
        raise OpError(
            ACL_ERROR_OP_INPUT_NOT_MATCH,
            f"{name} inner dimensions differ: x1 {list(a.shape)} (K={k}) and x2 "
            f"{list(b.shape)} (K={k2})" + (" after transposition" if ta or tb else ""),
        )
    return m, n, k


def _matmul_infer(inputs: Sequence[Spec], attrs: Attrs) -> list[Spec]:
    n_inputs("MatMul", inputs, 2, 3)
    a, b = inputs[0], inputs[1]
    rank_in("MatMul", a, (2,), "x1")
    rank_in("MatMul", b, (2,), "x2")
    dt = same_dtype("MatMul", inputs[:2])
    dtype_in("MatMul", a, _CUBE_IN)
    ta = attr_bool("MatMul", attrs, "transpose_x1", False)
    tb = attr_bool("MatMul", attrs, "transpose_x2", False)
    m, n, _ = _dims("MatMul", a, b, ta, tb)
    _check_bias("MatMul", inputs, n, dt)
    return [Spec((m, n), out_dtype(dt))]


def _bmm_infer(inputs: Sequence[Spec], attrs: Attrs) -> list[Spec]:
    n_inputs("BatchMatMul", inputs, 2, 3)
    a, b = inputs[0], inputs[1]
    for s, what in ((a, "x1"), (b, "x2")):
        if len(s.shape) < 2:
            raise OpError(
                ACL_ERROR_OP_INPUT_NOT_MATCH,
                f"BatchMatMul {what} needs rank >= 2, got {list(s.shape)}",
            )
    dt = same_dtype("BatchMatMul", inputs[:2])
    dtype_in("BatchMatMul", a, _CUBE_IN)
    ta = attr_bool("BatchMatMul", attrs, "adj_x1", False)
    tb = attr_bool("BatchMatMul", attrs, "adj_x2", False)
    m, n, _ = _dims("BatchMatMul", a, b, ta, tb)
    batch = broadcast("BatchMatMul", a.shape[:-2], b.shape[:-2])
    _check_bias("BatchMatMul", inputs, n, dt)
    return [Spec((*batch, m, n), out_dtype(dt))]


def _product(
    inputs: list[np.ndarray], ta: bool, tb: bool, out: list[np.ndarray] | None
) -> list[np.ndarray]:
    a, b = inputs[0], inputs[1]
    acc = numerics.accumulator(a.dtype)  # int32 for int8, float32 for fp16/bf16/fp32
    a = a.astype(acc, copy=False)
    b = b.astype(acc, copy=False)
    if ta:
        a = np.swapaxes(a, -1, -2)
    if tb:
        b = np.swapaxes(b, -1, -2)
    dst = out[0] if out else None
    if dst is not None and dst.dtype == acc and len(inputs) == 2:
        # The accumulator type is the output type: write straight into device memory.
        np.matmul(a, b, out=dst)
        return [dst]
    result = np.matmul(a, b)
    if len(inputs) == 3:
        result = result + inputs[2].astype(acc, copy=False)
    with numerics.quiet():
        return [numerics.round_to(result, out_dtype(inputs[0].dtype))]


def _matmul_cost(inputs: Sequence[Spec], outputs: Sequence[Spec], attrs: Attrs) -> Work:
    a, out = inputs[0], outputs[0]
    ta = bool(attrs.get("transpose_x1", attrs.get("adj_x1", False)))
    k = a.shape[-2] if ta else a.shape[-1]
    m, n = out.shape[-2], out.shape[-1]
    batch = out.size // max(m * n, 1) if m * n else 0
    return Work(
        "cube",
        a.dtype,
        io_bytes(inputs, outputs),
        matmuls=(Matmul(batch, m, n, k),),
        flops=2 * batch * m * n * k,
    )


@op(
    "MatMul",
    unit="cube",
    infer=_matmul_infer,
    cost=_matmul_cost,
    inputs=("x1", "x2", "bias (optional)"),
    attrs={"transpose_x1": "bool = false", "transpose_x2": "bool = false"},
    aliases=("MatMulV2",),
    writes_out=True,
)
def matmul(
    inputs: list[np.ndarray], attrs: Attrs, out: list[np.ndarray] | None = None
) -> list[np.ndarray]:
    """2-D matrix product x1 @ x2 (+ bias) on the Cube: fp16/bf16 inputs accumulate in
    float32 and round once; int8 accumulates and writes int32."""
    ta, tb = bool(attrs.get("transpose_x1", False)), bool(attrs.get("transpose_x2", False))
    return _product(inputs, ta, tb, out)


@op(
    "BatchMatMul",
    unit="cube",
    infer=_bmm_infer,
    cost=_matmul_cost,
    inputs=("x1", "x2", "bias (optional)"),
    attrs={"adj_x1": "bool = false", "adj_x2": "bool = false"},
    aliases=("BatchMatMulV2",),
    writes_out=True,
)
def batch_matmul(
    inputs: list[np.ndarray], attrs: Attrs, out: list[np.ndarray] | None = None
) -> list[np.ndarray]:
    """Batched matrix product over the last two dims, batch dims broadcast as numpy does;
    same numerics as MatMul."""
    ta, tb = bool(attrs.get("adj_x1", False)), bool(attrs.get("adj_x2", False))
    return _product(inputs, ta, tb, out)
