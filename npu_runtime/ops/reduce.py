"""ReduceSum, ReduceMean and ReduceMax over attribute axes (float32 accumulation)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from npu_runtime import numerics
from npu_runtime.ops.common import (
    NUMERIC,
    accumulate,
    attr_bool,
    attr_ints,
    axis,
    dtype_in,
    io_bytes,
    n_inputs,
)
from npu_runtime.ops.registry import Attrs, Spec, Work, op


def _axes(name: str, attrs: Attrs, ndim: int) -> tuple[int, ...]:
    axes = attr_ints(name, attrs, "axes", [])
    if not axes:  # an empty list reduces every dimension, as CANN's ReduceD ops do
        return tuple(range(ndim))
    return tuple(sorted({axis(name, a, ndim, "axes") for a in axes}))


def _infer(name: str):
    def infer(inputs: Sequence[Spec], attrs: Attrs) -> list[Spec]:
        n_inputs(name, inputs, 1)
        x = inputs[0]
        dtype_in(name, x, NUMERIC)
        axes = _axes(name, attrs, len(x.shape))
        keep = attr_bool(name, attrs, "keep_dims", False)
        shape = tuple(1 if i in axes else d for i, d in enumerate(x.shape) if keep or i not in axes)
        return [Spec(shape, x.dtype)]

    return infer


def _cost(inputs: Sequence[Spec], outputs: Sequence[Spec], attrs: Attrs) -> Work:
    n = inputs[0].size
    return Work("vector", inputs[0].dtype, io_bytes(inputs, outputs), vector_ops=n, flops=n)


def _reduce(name: str, fn: Callable[..., np.ndarray], inputs: list[np.ndarray], attrs: Attrs):
    x = inputs[0]
    axes = _axes(name, attrs, x.ndim)
    keep = bool(attrs.get("keep_dims", False))
    with numerics.quiet():
        return [numerics.round_to(np.asarray(fn(accumulate(x), axis=axes, keepdims=keep)), x.dtype)]


_ATTRS = {"axes": "list[int] = [] (all)", "keep_dims": "bool = false"}


@op(
    "ReduceSum",
    unit="vector",
    infer=_infer("ReduceSum"),
    cost=_cost,
    inputs=("x",),
    attrs=_ATTRS,
    aliases=("ReduceSumD",),
)
def reduce_sum(inputs: list[np.ndarray], attrs: Attrs) -> list[np.ndarray]:
    """Sum over `axes` (all when empty), accumulated in float32 for fp16/bf16."""
    return _reduce("ReduceSum", np.sum, inputs, attrs)


@op(
    "ReduceMean",
    unit="vector",
    infer=_infer("ReduceMean"),
    cost=_cost,
    inputs=("x",),
    attrs=_ATTRS,
    aliases=("ReduceMeanD",),
)
def reduce_mean(inputs: list[np.ndarray], attrs: Attrs) -> list[np.ndarray]:
    """Mean over `axes` (all when empty), accumulated in float32 for fp16/bf16."""
    return _reduce("ReduceMean", np.mean, inputs, attrs)


@op(
    "ReduceMax",
    unit="vector",
    infer=_infer("ReduceMax"),
    cost=_cost,
    inputs=("x",),
    attrs=_ATTRS,
    aliases=("ReduceMaxD",),
)
def reduce_max(inputs: list[np.ndarray], attrs: Attrs) -> list[np.ndarray]:
    """Maximum over `axes` (all when empty); NaN propagates."""
    return _reduce("ReduceMax", np.max, inputs, attrs)
