"""MaxPool and AvgPool over NCHW windows (TF-style "SAME"/"VALID" padding)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from npu_runtime import numerics
from npu_runtime.ops.common import FLOATS, accumulate, attr_str, dtype_in, n_inputs, rank_in
from npu_runtime.ops.conv import spatial
from npu_runtime.ops.errors import (
    ACL_ERROR_FORMAT_NOT_MATCH,
    ACL_ERROR_OP_ATTR_NOT_MATCH,
    ACL_ERROR_OP_INPUT_NOT_MATCH,
    OpError,
)
from npu_runtime.ops.registry import Attrs, Spec, Work, op


def _geometry(name: str, x: Spec, attrs: Attrs) -> tuple[int, int, int, int, int, int, str]:
    """(kh, kw, sh, sw, ho, wo, padding) for an NCHW input."""
    if attr_str(name, attrs, "data_format", "NCHW") != "NCHW":
        raise OpError(ACL_ERROR_FORMAT_NOT_MATCH, f"{name} supports NCHW only")
    kh, kw = spatial(name, attrs, "ksize", None)
    sh, sw = spatial(name, attrs, "strides", None)
    padding = attr_str(name, attrs, "padding", "VALID")
    h, w = x.shape[2], x.shape[3]
    if padding == "VALID":
        ho, wo = (h - kh) // sh + 1, (w - kw) // sw + 1
    elif padding == "SAME":
        ho, wo = -(-h // sh), -(-w // sw)
    else:
        raise OpError(
            ACL_ERROR_OP_ATTR_NOT_MATCH, f"{name} padding must be SAME or VALID, got {padding!r}"
        )
    if ho < 1 or wo < 1:
        raise OpError(
            ACL_ERROR_OP_INPUT_NOT_MATCH, f"{name} window {kh}x{kw} exceeds input {h}x{w}"
        )
    return kh, kw, sh, sw, ho, wo, padding


def _infer(name: str):
    def infer(inputs: Sequence[Spec], attrs: Attrs) -> list[Spec]:
        n_inputs(name, inputs, 1)
        rank_in(name, inputs[0], (4,), "x")
        dtype_in(name, inputs[0], FLOATS)
        *_, ho, wo, _ = _geometry(name, inputs[0], attrs)
        n, c = inputs[0].shape[:2]
        return [Spec((n, c, ho, wo), inputs[0].dtype, "NCHW")]

    return infer


def _cost(inputs: Sequence[Spec], outputs: Sequence[Spec], attrs: Attrs) -> Work:
    kh, kw = spatial("pool", attrs, "ksize", None)
    ops = outputs[0].size * kh * kw
    nbytes = inputs[0].nbytes + outputs[0].nbytes
    return Work("vector", inputs[0].dtype, nbytes, vector_ops=ops, flops=ops)


def _windows(x: np.ndarray, attrs: Attrs, name: str, fill: float):
    """Padded sliding windows [N, C, Ho, Wo, kh, kw] and the same view of a validity mask."""
    kh, kw, sh, sw, ho, wo, padding = _geometry(name, Spec.of(x), attrs)
    h, w = x.shape[2], x.shape[3]
    if padding == "SAME":
        ph = max((ho - 1) * sh + kh - h, 0)
        pw = max((wo - 1) * sw + kw - w, 0)
        pad = ((0, 0), (0, 0), (ph // 2, ph - ph // 2), (pw // 2, pw - pw // 2))
    else:
        pad = ((0, 0), (0, 0), (0, 0), (0, 0))
    xp = np.pad(accumulate(x), pad, constant_values=fill)
    valid = np.pad(np.ones((h, w), np.float32), pad[2:])
    # a window over every axis (1 over N and C): numpy < 2.3's stubs type `axis` as one int
    win = sliding_window_view(xp, (1, 1, kh, kw))[:, :, ::sh, ::sw, 0, 0][:, :, :ho, :wo]
    vwin = sliding_window_view(valid, (kh, kw))[::sh, ::sw][:ho, :wo]
    return win, vwin


_POOL_ATTRS = {
    "ksize": "list[int] [1,1,kh,kw], required",
    "strides": "list[int] [1,1,sh,sw], required",
    "padding": 'str "SAME" | "VALID" = "VALID"',
    "data_format": 'str = "NCHW"',
}


@op("MaxPool", unit="vector", infer=_infer("MaxPool"), cost=_cost, inputs=("x",), attrs=_POOL_ATTRS)
def max_pool(inputs: list[np.ndarray], attrs: Attrs) -> list[np.ndarray]:
    """Maximum over each kh x kw window; SAME padding never wins (padded with -inf)."""
    win, _ = _windows(inputs[0], attrs, "MaxPool", -np.inf)
    return [numerics.round_to(win.max(axis=(-2, -1)), inputs[0].dtype)]


@op("AvgPool", unit="vector", infer=_infer("AvgPool"), cost=_cost, inputs=("x",), attrs=_POOL_ATTRS)
def avg_pool(inputs: list[np.ndarray], attrs: Attrs) -> list[np.ndarray]:
    """Mean over each kh x kw window; with SAME padding the padded cells are not counted."""
    win, vwin = _windows(inputs[0], attrs, "AvgPool", 0.0)
    return [numerics.round_to(win.sum(axis=(-2, -1)) / vwin.sum(axis=(-2, -1)), inputs[0].dtype)]
