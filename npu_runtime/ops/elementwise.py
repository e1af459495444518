"""Element-wise Vector ops: broadcasting arithmetic, activations and Cast."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from npu_runtime import numerics
from npu_runtime.ops.common import (
    FLOATS,
    NUMERIC,
    accumulate,
    attr_int,
    broadcast,
    dtype_in,
    n_inputs,
    same_dtype,
    vector_work,
)
from npu_runtime.ops.errors import ACL_ERROR_UNSUPPORTED_DATA_TYPE, OpError
from npu_runtime.ops.registry import Attrs, KernelFn, Spec, op

# --- binary arithmetic with numpy broadcasting ---------------------------------------------


def _binary_infer(name: str, allowed: frozenset[np.dtype]):
    def infer(inputs: Sequence[Spec], attrs: Attrs) -> list[Spec]:
        n_inputs(name, inputs, 2)
        dt = same_dtype(name, inputs)
        dtype_in(name, inputs[0], allowed)
        return [Spec(broadcast(name, inputs[0].shape, inputs[1].shape), dt, inputs[0].format)]

    return infer


def _binary(
    fn: Callable[..., np.ndarray],
    inputs: list[np.ndarray],
    out: list[np.ndarray] | None = None,
) -> list[np.ndarray]:
    x, y = inputs
    # numpy's fp16 and ml_dtypes' bf16 ufuncs compute each element in float32 and round
    # once, which is exactly the device's rule for a single op: no widening copy needed.
    # Writing into the output buffer rounds the same way (same dtype, no cast), and numpy
    # copies first when the output overlaps an input.
    with numerics.quiet():  # inf/nan are results on the device, not warnings
        if out is not None and out[0].dtype == x.dtype == y.dtype:
            return [fn(x, y, out=out[0])]
        return [fn(x, y)]


_XY = ("x1", "x2")
_Out = list[np.ndarray] | None


def _arith(
    name: str, allowed: frozenset[np.dtype], passes: int, aliases: tuple[str, ...] = ()
) -> Callable[[KernelFn], KernelFn]:
    """Register a broadcasting binary op whose kernel writes straight into its output."""
    return op(
        name,
        unit="vector",
        infer=_binary_infer(name, allowed),
        cost=vector_work(passes),
        inputs=_XY,
        aliases=aliases,
        writes_out=True,
    )


@_arith("Add", NUMERIC, 1)
def add(inputs: list[np.ndarray], attrs: Attrs, out: _Out = None) -> list[np.ndarray]:
    """x1 + x2 with numpy broadcasting; fp16 results beyond 65504 become inf."""
    return _binary(np.add, inputs, out)


@_arith("Sub", NUMERIC, 1)
def sub(inputs: list[np.ndarray], attrs: Attrs, out: _Out = None) -> list[np.ndarray]:
    """x1 - x2 with numpy broadcasting."""
    return _binary(np.subtract, inputs, out)


@_arith("Mul", NUMERIC, 1)
def mul(inputs: list[np.ndarray], attrs: Attrs, out: _Out = None) -> list[np.ndarray]:
    """x1 * x2 with numpy broadcasting."""
    return _binary(np.multiply, inputs, out)


@_arith("Div", FLOATS, 2, aliases=("RealDiv",))
def div(inputs: list[np.ndarray], attrs: Attrs, out: _Out = None) -> list[np.ndarray]:
    """x1 / x2 (true division, floating types) with broadcasting; x/0 gives signed inf, 0/0 NaN."""
    return _binary(np.divide, inputs, out)


# --- activations ---------------------------------------------------------------------------


def _unary_infer(name: str):
    def infer(inputs: Sequence[Spec], attrs: Attrs) -> list[Spec]:
        n_inputs(name, inputs, 1)
        dtype_in(name, inputs[0], FLOATS)
        return [inputs[0]]

    return infer


def _unary(fn: Callable[[np.ndarray], np.ndarray], inputs: list[np.ndarray]) -> list[np.ndarray]:
    (x,) = inputs
    with numerics.quiet():
        return [numerics.round_to(fn(accumulate(x)), x.dtype)]


def _sigmoid(x: np.ndarray) -> np.ndarray:
    # exp(-|x|) never overflows, so large |x| saturates cleanly to 0 or 1.
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1.0 / (1.0 + e), e / (1.0 + e)).astype(x.dtype, copy=False)


_GELU_C = np.float32(np.sqrt(2.0 / np.pi))  # a float32 scalar keeps the math in float32


@op("Relu", unit="vector", infer=_unary_infer("Relu"), cost=vector_work(1), inputs=("x",))
def relu(inputs: list[np.ndarray], attrs: Attrs) -> list[np.ndarray]:
    """max(x, 0); NaN stays NaN."""
    return _unary(lambda x: np.where(x < 0, np.zeros_like(x), x), inputs)


@op("Gelu", unit="vector", infer=_unary_infer("Gelu"), cost=vector_work(8), inputs=("x",))
def gelu(inputs: list[np.ndarray], attrs: Attrs) -> list[np.ndarray]:
    """GELU, tanh approximation as CANN's Gelu: 0.5*x*(1 + tanh(sqrt(2/pi)*(x + 0.044715*x^3)))."""
    return _unary(lambda x: 0.5 * x * (1.0 + np.tanh(_GELU_C * (x + 0.044715 * x**3))), inputs)


@op("Silu", unit="vector", infer=_unary_infer("Silu"), cost=vector_work(5), inputs=("x",))
def silu(inputs: list[np.ndarray], attrs: Attrs) -> list[np.ndarray]:
    """x * sigmoid(x) (Swish with beta 1)."""
    return _unary(lambda x: x * _sigmoid(x), inputs)


@op("Sigmoid", unit="vector", infer=_unary_infer("Sigmoid"), cost=vector_work(4), inputs=("x",))
def sigmoid(inputs: list[np.ndarray], attrs: Attrs) -> list[np.ndarray]:
    """1 / (1 + exp(-x)), computed without overflow for large |x|."""
    return _unary(_sigmoid, inputs)


@op("Tanh", unit="vector", infer=_unary_infer("Tanh"), cost=vector_work(4), inputs=("x",))
def tanh(inputs: list[np.ndarray], attrs: Attrs) -> list[np.ndarray]:
    """Hyperbolic tangent."""
    return _unary(np.tanh, inputs)


# --- Cast ----------------------------------------------------------------------------------


def _cast_infer(inputs: Sequence[Spec], attrs: Attrs) -> list[Spec]:
    n_inputs("Cast", inputs, 1)
    code = attr_int("Cast", attrs, "dst_type")
    dst = numerics.by_acl(code)
    if dst is None:
        raise OpError(
            ACL_ERROR_UNSUPPORTED_DATA_TYPE, f"Cast to aclDataType {code} is not supported"
        )
    if numerics.by_numpy(inputs[0].dtype) is None:
        raise OpError(
            ACL_ERROR_UNSUPPORTED_DATA_TYPE, f"Cast from {inputs[0].dtype} is not supported"
        )
    return [Spec(inputs[0].shape, dst.np, inputs[0].format)]


@op(
    "Cast",
    unit="vector",
    infer=_cast_infer,
    cost=vector_work(1),
    inputs=("x",),
    attrs={"dst_type": "int (aclDataType), required"},
)
def cast(inputs: list[np.ndarray], attrs: Attrs) -> list[np.ndarray]:
    """Convert to `dst_type`, rounding to nearest even; fp16 overflow gives inf; float to int
    truncates toward zero and saturates, NaN becoming 0."""
    dst = numerics.by_acl(int(attrs["dst_type"]))
    assert dst is not None  # infer has checked it
    return [numerics.round_to(inputs[0], dst.np)]
