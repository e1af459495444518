"""Softmax and LogSoftmax along chosen axes (float32 inside, one rounding)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from npu_runtime import numerics
from npu_runtime.ops.common import (
    FLOATS,
    accumulate,
    attr_ints,
    axis,
    dtype_in,
    n_inputs,
    vector_work,
)
from npu_runtime.ops.registry import Attrs, Spec, op


def _axes(name: str, attrs: Attrs, ndim: int) -> tuple[int, ...]:
    return tuple(
        sorted({axis(name, a, ndim, "axes") for a in attr_ints(name, attrs, "axes", [-1])})
    )


def _infer(name: str):
    def infer(inputs: Sequence[Spec], attrs: Attrs) -> list[Spec]:
        n_inputs(name, inputs, 1)
        dtype_in(name, inputs[0], FLOATS)
        _axes(name, attrs, len(inputs[0].shape))
        return [inputs[0]]

    return infer


def _shifted(x: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    x = accumulate(x)
    m = np.max(x, axis=axes, keepdims=True)
    # A row of all -inf would give -inf - -inf = NaN, as it does on the device.
    return x - m


_ATTRS = {"axes": "list[int] = [-1]"}


@op(
    "SoftmaxV2",
    unit="vector",
    infer=_infer("SoftmaxV2"),
    cost=vector_work(5),
    inputs=("x",),
    attrs=_ATTRS,
    aliases=("Softmax",),
)
def softmax(inputs: list[np.ndarray], attrs: Attrs) -> list[np.ndarray]:
    """exp(x - max) / sum(exp(x - max)) over `axes`, stable for large inputs."""
    x = inputs[0]
    axes = _axes("SoftmaxV2", attrs, x.ndim)
    with numerics.quiet():
        e = np.exp(_shifted(x, axes))
        return [numerics.round_to(e / e.sum(axis=axes, keepdims=True), x.dtype)]


@op(
    "LogSoftmaxV2",
    unit="vector",
    infer=_infer("LogSoftmaxV2"),
    cost=vector_work(6),
    inputs=("logits",),
    attrs=_ATTRS,
    aliases=("LogSoftmax",),
)
def log_softmax(inputs: list[np.ndarray], attrs: Attrs) -> list[np.ndarray]:
    """x - max - log(sum(exp(x - max))) over `axes`."""
    x = inputs[0]
    axes = _axes("LogSoftmaxV2", attrs, x.ndim)
    with numerics.quiet():
        s = _shifted(x, axes)
        return [numerics.round_to(s - np.log(np.exp(s).sum(axis=axes, keepdims=True)), x.dtype)]
