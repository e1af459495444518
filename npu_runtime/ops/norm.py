"""LayerNorm and RmsNorm: statistics in float32, output rounded once."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from npu_runtime import numerics
from npu_runtime.ops.common import (
    F32,
    FLOATS,
    accumulate,
    attr_float,
    attr_int,
    axis,
    dtype_in,
    n_inputs,
    same_dtype,
    vector_work,
)
from npu_runtime.ops.errors import ACL_ERROR_OP_INPUT_NOT_MATCH, OpError
from npu_runtime.ops.registry import Attrs, Spec, op


def _ln_axes(inputs: Sequence[Spec], attrs: Attrs) -> tuple[int, int]:
    nd = len(inputs[0].shape)
    b = axis("LayerNorm", attr_int("LayerNorm", attrs, "begin_norm_axis", 0), nd, "begin_norm_axis")
    p = axis(
        "LayerNorm", attr_int("LayerNorm", attrs, "begin_params_axis", 0), nd, "begin_params_axis"
    )
    return b, p


def _ln_infer(inputs: Sequence[Spec], attrs: Attrs) -> list[Spec]:
    n_inputs("LayerNorm", inputs, 3)
    dt = same_dtype("LayerNorm", inputs)
    dtype_in("LayerNorm", inputs[0], FLOATS)
    x = inputs[0]
    b, p = _ln_axes(inputs, attrs)
    for s, what in ((inputs[1], "gamma"), (inputs[2], "beta")):
        if s.shape != x.shape[p:]:
            raise OpError(
                ACL_ERROR_OP_INPUT_NOT_MATCH,
                f"LayerNorm {what} must have shape {list(x.shape[p:])}, got {list(s.shape)}",
            )
    stat = Spec(x.shape[:b] + (1,) * (len(x.shape) - b), dt)
    return [x, stat, stat]


@op(
    "LayerNorm",
    unit="vector",
    infer=_ln_infer,
    cost=vector_work(8),
    inputs=("x", "gamma", "beta"),
    attrs={"begin_norm_axis": "int = 0", "begin_params_axis": "int = 0", "epsilon": "float = 1e-7"},
)
def layer_norm(inputs: list[np.ndarray], attrs: Attrs) -> list[np.ndarray]:
    """(x - mean) / sqrt(var + epsilon) * gamma + beta over the dims from `begin_norm_axis`;
    outputs y, mean and (biased) variance."""
    x, gamma, beta = inputs
    b, _ = _ln_axes([Spec.of(a) for a in inputs], attrs)
    eps = attr_float("LayerNorm", attrs, "epsilon", 1e-7)
    xf = accumulate(x)
    axes = tuple(range(b, x.ndim))
    mean = xf.mean(axis=axes, keepdims=True)
    var = np.square(xf - mean).mean(axis=axes, keepdims=True)
    with numerics.quiet():
        y = (xf - mean) / np.sqrt(var + F32.type(eps)) * accumulate(gamma) + accumulate(beta)
    return [numerics.round_to(y, x.dtype) for y in (y, mean, var)]


def _rms_infer(inputs: Sequence[Spec], attrs: Attrs) -> list[Spec]:
    n_inputs("RmsNorm", inputs, 2)
    same_dtype("RmsNorm", inputs)
    dtype_in("RmsNorm", inputs[0], FLOATS)
    x, g = inputs
    k = len(g.shape)
    if k == 0 or k > len(x.shape) or x.shape[-k:] != g.shape:
        raise OpError(
            ACL_ERROR_OP_INPUT_NOT_MATCH,
            f"RmsNorm gamma {list(g.shape)} must match the trailing dims of x {list(x.shape)}",
        )
    return [x, Spec(x.shape[:-k] + (1,) * k, F32)]


@op(
    "RmsNorm",
    unit="vector",
    infer=_rms_infer,
    cost=vector_work(4),
    inputs=("x", "gamma"),
    attrs={"epsilon": "float = 1e-6"},
    aliases=("RMSNorm",),
)
def rms_norm(inputs: list[np.ndarray], attrs: Attrs) -> list[np.ndarray]:
    """x / sqrt(mean(x^2) + epsilon) * gamma over gamma's dims; outputs y and rstd (float32)."""
    x, gamma = inputs
    eps = attr_float("RmsNorm", attrs, "epsilon", 1e-6)
    xf = accumulate(x)
    axes = tuple(range(x.ndim - gamma.ndim, x.ndim))
    rstd = 1.0 / np.sqrt(np.square(xf).mean(axis=axes, keepdims=True) + F32.type(eps))
    y = xf * rstd * accumulate(gamma)
    return [numerics.round_to(y, x.dtype), rstd.astype(F32)]
