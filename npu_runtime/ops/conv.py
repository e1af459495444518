"""Conv2D (NCHW) on the Cube, as an implicit GEMM: float32 accumulation, one rounding."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from npu_runtime import numerics
from npu_runtime.ops.common import (
    BF16,
    F16,
    F32,
    attr_int,
    attr_ints,
    attr_str,
    dtype_in,
    io_bytes,
    n_inputs,
    rank_in,
    same_dtype,
)
from npu_runtime.ops.errors import (
    ACL_ERROR_FORMAT_NOT_MATCH,
    ACL_ERROR_OP_ATTR_NOT_MATCH,
    ACL_ERROR_OP_INPUT_NOT_MATCH,
    OpError,
)
from npu_runtime.ops.registry import Attrs, Matmul, Spec, Work, op


def spatial(op_name: str, attrs: Attrs, name: str, default: list[int] | None) -> tuple[int, int]:
    """(h, w) from an NCHW 4-list [1, 1, h, w] or a 2-list [h, w]."""
    v = (
        attr_ints(op_name, attrs, name, default)
        if default is not None
        else attr_ints(op_name, attrs, name)
    )
    if len(v) == 4:
        v = v[2:]
    if len(v) != 2 or min(v) < 1:
        raise OpError(
            ACL_ERROR_OP_ATTR_NOT_MATCH, f"{op_name} {name} must be [1, 1, h, w] with h, w >= 1"
        )
    return v[0], v[1]


class _Geometry:
    """Conv2D attributes resolved against the input shapes."""

    def __init__(self, x: Spec, w: Spec, attrs: Attrs) -> None:
        fmt = attr_str("Conv2D", attrs, "data_format", "NCHW")
        if fmt != "NCHW" or x.format not in ("NCHW", "ND"):
            raise OpError(ACL_ERROR_FORMAT_NOT_MATCH, "Conv2D supports NCHW only")
        self.sh, self.sw = spatial("Conv2D", attrs, "strides", None)
        self.dh, self.dw = spatial("Conv2D", attrs, "dilations", [1, 1, 1, 1])
        pads = attr_ints("Conv2D", attrs, "pads", [0, 0, 0, 0])
        if len(pads) != 4 or min(pads) < 0:
            raise OpError(
                ACL_ERROR_OP_ATTR_NOT_MATCH, "Conv2D pads must be [top, bottom, left, right]"
            )
        self.pads = pads
        self.groups = attr_int("Conv2D", attrs, "groups", 1)
        n, c, h, wd = x.shape
        co, ci, self.kh, self.kw = w.shape
        if self.groups < 1 or c % self.groups or co % self.groups or ci * self.groups != c:
            raise OpError(
                ACL_ERROR_OP_INPUT_NOT_MATCH,
                f"Conv2D filter {list(w.shape)} does not fit input channels {c} with groups={self.groups}",
            )
        eh = self.dh * (self.kh - 1) + 1
        ew = self.dw * (self.kw - 1) + 1
        self.ho = (h + pads[0] + pads[1] - eh) // self.sh + 1
        self.wo = (wd + pads[2] + pads[3] - ew) // self.sw + 1
        if self.ho < 1 or self.wo < 1:
            raise OpError(
                ACL_ERROR_OP_INPUT_NOT_MATCH,
                f"Conv2D filter {self.kh}x{self.kw} is larger than the padded input {h}x{wd}",
            )
        self.n, self.c, self.co, self.ci = n, c, co, ci


def _infer(inputs: Sequence[Spec], attrs: Attrs) -> list[Spec]:
    n_inputs("Conv2D", inputs, 2, 3)
    x, w = inputs[0], inputs[1]
    rank_in("Conv2D", x, (4,), "x")
    rank_in("Conv2D", w, (4,), "filter")
    dt = same_dtype("Conv2D", inputs[:2])
    dtype_in("Conv2D", x, {F16, BF16, F32})
    g = _Geometry(x, w, attrs)
    if len(inputs) == 3 and inputs[2].shape != (g.co,):
        raise OpError(ACL_ERROR_OP_INPUT_NOT_MATCH, f"Conv2D bias must be [{g.co}]")
    return [Spec((g.n, g.co, g.ho, g.wo), dt, "NCHW")]


def _cost(inputs: Sequence[Spec], outputs: Sequence[Spec], attrs: Attrs) -> Work:
    g = _Geometry(inputs[0], inputs[1], attrs)
    # Implicit GEMM per group: M = N*Ho*Wo, N = Cout/groups, K = Cin/groups*kh*kw.
    mm = Matmul(g.groups, g.n * g.ho * g.wo, g.co // g.groups, g.ci * g.kh * g.kw)
    return Work(
        "cube",
        inputs[0].dtype,
        io_bytes(inputs, outputs),
        matmuls=(mm,),
        flops=2 * mm.batch * mm.m * mm.n * mm.k,
    )


@op(
    "Conv2D",
    unit="cube",
    infer=_infer,
    cost=_cost,
    inputs=("x [N,C,H,W]", "filter [Cout,Cin/groups,kh,kw]", "bias [Cout] (optional)"),
    attrs={
        "strides": "list[int] [1,1,sh,sw], required",
        "pads": "list[int] [top,bottom,left,right] = [0,0,0,0]",
        "dilations": "list[int] = [1,1,1,1]",
        "groups": "int = 1",
        "data_format": 'str = "NCHW"',
    },
)
def conv2d(inputs: list[np.ndarray], attrs: Attrs) -> list[np.ndarray]:
    """2-D convolution (cross-correlation) in NCHW with strides, pads, dilations and groups;
    fp16/bf16 accumulate in float32 and round once."""
    x, w = inputs[0], inputs[1]
    g = _Geometry(Spec.of(x), Spec.of(w), attrs)
    t, b, left, r = g.pads
    xp = np.pad(x.astype(F32), ((0, 0), (0, 0), (t, b), (left, r)))
    eh, ew = g.dh * (g.kh - 1) + 1, g.dw * (g.kw - 1) + 1
    # a window over every axis (1 over N and C): numpy < 2.3's stubs type `axis` as one int
    win = sliding_window_view(xp, (1, 1, eh, ew))[:, :, :: g.sh, :: g.sw, 0, 0, :: g.dh, :: g.dw]
    win = win[:, :, : g.ho, : g.wo]
    wf = w.astype(F32)
    cog = g.co // g.groups
    out = np.empty((g.n, g.co, g.ho, g.wo), F32)
    for i in range(g.groups):
        xs = win[:, i * g.ci : (i + 1) * g.ci]
        ws = wf[i * cog : (i + 1) * cog]
        out[:, i * cog : (i + 1) * cog] = np.einsum("nchwij,ocij->nohw", xs, ws, optimize=True)
    if len(inputs) == 3:
        out += inputs[2].astype(F32)[None, :, None, None]
    return [numerics.round_to(out, x.dtype)]
