"""Work for an aten op from its tensors' shapes, priced by npu_runtime.cost (the roofline)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import torch

from npu_runtime import numerics
from npu_runtime.core.launch import Cost
from npu_runtime.cost import estimate
from npu_runtime.devices import DeviceProfile
from npu_runtime.ops.registry import Matmul, Work
from npu_runtime.torch_npu.optable import OpEntry

_NP: dict[torch.dtype, np.dtype] = {}


def np_dtype(dt: torch.dtype) -> np.dtype:
    d = _NP.get(dt)
    if d is None:
        name = str(dt).removeprefix("torch.")
        try:
            d = numerics.by_name(name).np
        except Exception:
            try:
                d = np.dtype(name)
            except TypeError:
                d = np.dtype(np.float32)
        _NP[dt] = d
    return d


def _numel(t: torch.Tensor) -> int:
    return math.prod(t.shape)


def _bytes(ts: Sequence[torch.Tensor]) -> int:
    return sum(_numel(t) * t.element_size() for t in ts)


def _matmuls(
    name: str, ins: Sequence[torch.Tensor], outs: Sequence[torch.Tensor]
) -> tuple[Matmul, ...]:
    mats = [t for t in ins if t.dim() >= 1]
    if not outs or len(mats) < 2:
        return ()
    out = outs[0]
    a = mats[-2]
    if name in ("dot", "vdot"):
        return (Matmul(1, 1, 1, a.shape[0]),)
    k = a.shape[-1]
    if out.dim() == 0:
        return (Matmul(1, 1, 1, k),)
    n = out.shape[-1] if out.dim() >= 2 else 1
    m = out.shape[-2] if out.dim() >= 2 else out.shape[0]
    batch = math.prod(out.shape[:-2]) if out.dim() > 2 else 1
    return (Matmul(batch, m, n, k),)


def _conv(
    ins: Sequence[torch.Tensor], outs: Sequence[torch.Tensor], backward: bool
) -> tuple[Matmul, ...]:
    # forward: input (N, C, H, W), weight (O, C/g, kh, kw), output (N, O, Ho, Wo)
    if backward:  # grad_output, input, weight
        go, _x, w = ins[0], ins[1], ins[2]
        out = go
    else:
        _x, w, out = ins[0], ins[1], outs[0]
    if w.dim() < 3 or out.dim() < 3:
        return ()
    k = math.prod(w.shape[1:])
    m = out.shape[0] * math.prod(out.shape[2:])
    n = w.shape[0]
    fwd = Matmul(1, m, n, k)
    return (fwd, fwd) if backward else (fwd,)  # input and weight gradients


def _attention(ins: Sequence[torch.Tensor], backward: bool) -> tuple[Matmul, ...]:
    q, kt = ins[0], ins[1]
    if q.dim() < 3:
        return ()
    b = math.prod(q.shape[:-2])
    s, d = q.shape[-2], q.shape[-1]
    skv = kt.shape[-2]
    mms = (Matmul(b, s, skv, d), Matmul(b, s, d, skv))
    return mms * 2 if backward else mms


def work_for(
    name: str, entry: OpEntry, ins: Sequence[torch.Tensor], outs: Sequence[torch.Tensor]
) -> Work:
    main = outs[0] if outs else (ins[0] if ins else None)
    dtype = np_dtype(ins[0].dtype if ins else main.dtype if main is not None else torch.float32)
    moved = _bytes(ins) + _bytes(outs)
    kind = entry.kind
    if kind in ("matmul", "conv", "attention"):
        if kind == "matmul":
            mms = _matmuls(name, ins, outs)
        elif kind == "conv":
            mms = _conv(ins, outs, name.endswith("backward_overrideable"))
        else:
            mms = _attention(ins, name.endswith("backward"))
        flops = sum(2 * mm.batch * mm.m * mm.n * mm.k for mm in mms)
        vec = sum(_numel(t) for t in outs) * (4 if kind == "attention" else 1)
        return Work("cube", dtype, moved, mms, vec, flops)
    if kind == "reduce":
        elems = max(sum(_numel(t) for t in ins), 1)
        return Work("vector", dtype, moved, (), int(elems * entry.per_element), int(elems))
    if kind == "move":
        return Work("vector", dtype, moved, (), 0, 0)
    elems = sum(_numel(t) for t in outs) or (max(_numel(t) for t in ins) if ins else 0)
    ops = int(elems * entry.per_element)
    return Work("vector", dtype, moved, (), ops, ops)


_cache: dict[tuple[object, ...], Cost] = {}


def cost_for(
    name: str,
    entry: OpEntry,
    ins: Sequence[torch.Tensor],
    outs: Sequence[torch.Tensor],
    profile: DeviceProfile,
) -> Cost:
    key = (
        name,
        profile.name,
        *[(t.shape, t.dtype) for t in ins],
        None,
        *[(t.shape, t.dtype) for t in outs],
    )
    c = _cache.get(key)
    if c is None:
        e = estimate(work_for(name, entry, ins, outs), profile)
        c = Cost(
            e.duration_us,
            e.bound,
            e.unit,
            e.block_dim,
            dict(e.time_by_unit),
            e.bytes_moved,
            e.flops,
        )
        if len(_cache) > 65536:
            _cache.clear()
        _cache[key] = c
    return c
