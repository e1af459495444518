"""Every aten op on `npu`: one PrivateUse1 fallback that computes, charges and records it.

For each op the fallback swaps npu tensors for their host views (`_backend.host_view`),
runs the op's CPU kernel on them (so in-place ops and `out=` write the emulated device
memory directly), turns the results back into npu tensors (a view of device memory stays
a view of the same storage; a fresh result gets its own block from the caching allocator),
and charges the op to the device's current stream as the Ascend op type that
npu_runtime/data/aten_ops.json names, priced by the roofline cost model. Ops the table
does not list raise "aten::xyz is not emulated yet" at the user's line.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import torch

from npu_runtime.core.runtime import get_runtime
from npu_runtime.core.transfer import _copy_cost
from npu_runtime.torch_npu import _backend as B
from npu_runtime.torch_npu.costing import cost_for
from npu_runtime.torch_npu.dtype_rules import DtypeRule, rule_for
from npu_runtime.torch_npu.optable import OpEntry, lookup

aten = torch.ops.aten
Tensor = torch.Tensor
_rt = get_runtime()
_CPU_DEVICE = torch.device("cpu")
# ops that take CPU index tensors next to npu ones, as CUDA's do
_CPU_OK = {"index", "index_put", "_index_put_impl", "_copy_from", "_copy_from_and_resize", "copy"}


class _Plan:
    __slots__ = (
        "name", "entry", "special", "fn", "has_generator", "cpu_ok", "cube", "functional", "dtypes",
    )  # fmt: skip

    def __init__(self, op: torch._ops.OpOverload) -> None:
        self.name = op._schema.name.split("::", 1)[1]
        self.entry: OpEntry | None = lookup(self.name)
        self.special = _SPECIAL.get(self.name)
        self.fn: Callable[..., Any] = _REPLACE.get(self.name, op)
        # dtypes the real NPU refuses for this op on this SoC (npu_runtime/data/npu_dtypes.json)
        self.dtypes: DtypeRule | None = rule_for(self.name, _rt.profile.soc_name)
        self.has_generator = any(a.name == "generator" for a in op._schema.arguments)
        self.cpu_ok = self.name.rstrip("_") in _CPU_OK
        # Cube ops (matmul, convolution) get the Cube's numerics in fp16/bf16: products
        # accumulated in float32, rounded once. In-place forms keep the CPU kernel's.
        self.cube = (
            self.entry is not None
            and self.entry.kind in ("matmul", "conv")
            and not self.name.endswith("_")
        )
        # the functional overload an `out=` form computes into its out tensor
        self.functional: Callable[..., Any] | None = None
        if self.cube and op._overloadname == "out":
            self.functional = getattr(aten, self.name).default


_plans: dict[Any, _Plan] = {}


def fallback(op: torch._ops.OpOverload, *args: Any, **kwargs: Any) -> Any:
    """The PrivateUse1 kernel of every aten op without a kernel of its own.

    Errors reach the user without our frames: the traceback ends at the user's line."""
    try:
        return _dispatch(op, args, kwargs)
    except Exception as exc:
        if _FULL_TRACEBACK:
            raise
        raise exc.with_traceback(None) from None


_FULL_TRACEBACK = bool(os.environ.get("ASCEND_LENS_DEBUG"))


def _dispatch(op: torch._ops.OpOverload, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    plan = _plans.get(op)
    if plan is None:
        plan = _plans[op] = _Plan(op)
    if plan.special is not None:
        return plan.special(op, args, kwargs)
    if plan.entry is None:
        raise NotImplementedError(
            f"aten::{plan.name} is not emulated yet on the npu device (Ascend Lens); "
            "run this part on the CPU or open an issue with the op name"
        )
    return _generic(plan, args, kwargs)


class _Call:
    """The npu tensors of one call and their host views, found while converting args."""

    __slots__ = ("index", "npu", "views", "cpu_arg")

    def __init__(self) -> None:
        self.index: int | None = None
        self.npu: list[Tensor] = []
        self.views: list[Tensor] = []
        self.cpu_arg: Tensor | None = None

    def conv(self, a: Any) -> Any:
        if isinstance(a, Tensor):
            # get_device() is -1 on the CPU (and meta), the index on npu: cheaper than .device
            i = a.get_device()
            if i >= 0:
                if self.index is None:
                    self.index = i
                elif i != self.index:
                    raise RuntimeError(
                        "Expected all tensors to be on the same device, but found at least "
                        f"two devices, npu:{self.index} and npu:{i}!"
                    )
                h = B.host_view(a)
                self.npu.append(a)
                self.views.append(h)
                return h
            if a.dim() > 0 and self.cpu_arg is None:
                self.cpu_arg = a
            return a
        if isinstance(a, (list, tuple)):
            return type(a)(self.conv(x) for x in a)
        if isinstance(a, torch.device) and a.type == "npu":
            if self.index is None:
                self.index = a.index if a.index is not None else B.state.device
            return _CPU_DEVICE
        return a


def _generic(plan: _Plan, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    call = _Call()
    conv = call.conv
    hargs = [conv(a) for a in args]
    hkw = {k: conv(v) for k, v in kwargs.items()} if kwargs else kwargs
    index = call.index
    if index is None:
        index = B.state.device
    if call.cpu_arg is not None and call.npu and not plan.cpu_ok:
        raise RuntimeError(
            "Expected all tensors to be on the same device, but found at least two devices, "
            f"npu:{index} and cpu!"
        )
    if plan.dtypes is not None:
        plan.dtypes.check(call.views, args, index)
    npu_gen = None
    if plan.has_generator and not B.estimate:
        g = hkw.get("generator")
        if g is None:
            from npu_runtime.torch_npu.random import generator

            hkw["generator"] = generator(index)
        elif g.device.type == "npu":  # torch.Generator(device="npu"): draw through a CPU one
            from npu_runtime.torch_npu.random import borrow

            npu_gen, hkw["generator"] = g, borrow(g)
    if plan.cube and not B.estimate and any(v.dtype in _LOW for v in call.views):
        res = _cube(plan, hargs, hkw)
    else:
        res = plan.fn(*hargs, **hkw)
    if npu_gen is not None:
        npu_gen.set_state(hkw["generator"].get_state())
    outs: list[Tensor] = []
    result = _wrap(res, call, index, outs)
    entry = plan.entry
    assert entry is not None
    if entry.kind != "view":
        ins = call.views
        c = cost_for(plan.name, entry, ins, outs, _rt.profile)
        if B.listening():
            B.charge(index, entry.op_type, c, tuple(map(B.info, ins)), tuple(map(B.info, outs)))
        else:
            B.charge(index, entry.op_type, c)
    return result


_LOW = (torch.float16, torch.bfloat16)


def _up(v: Any) -> Any:
    if isinstance(v, Tensor):
        return v.float() if v.dtype in _LOW else v
    if isinstance(v, (list, tuple)):
        return type(v)(_up(x) for x in v)
    return v


def _down(v: Any, dtype: torch.dtype) -> Any:
    if isinstance(v, Tensor):
        return v.to(dtype) if v.dtype == torch.float32 else v
    if isinstance(v, (list, tuple)):
        return type(v)(_down(x, dtype) for x in v)
    return v


def _cube(plan: _Plan, hargs: list[Any], hkw: dict[str, Any]) -> Any:
    """A Cube op in fp16/bf16 as the Cube computes it: float32 products and accumulation,
    one rounding of the result to the input type."""
    low = next(v.dtype for v in hargs if isinstance(v, Tensor) and v.dtype in _LOW)
    out = hkw.pop("out", None) if plan.functional is not None else None
    fn = plan.functional if out is not None else plan.fn
    assert fn is not None
    res = _down(fn(*map(_up, hargs), **{k: _up(v) for k, v in hkw.items()}), low)
    if out is not None:
        out.copy_(res)
        return out
    return res


def _wrap(r: Any, call: _Call, index: int, outs: list[Tensor]) -> Any:
    if isinstance(r, Tensor):
        for h, a in zip(call.views, call.npu, strict=True):
            if r is h:
                outs.append(h)
                if h.shape != a.shape:  # an empty `out=` tensor the CPU kernel resized
                    a.resize_(h.shape)
                    if not B.estimate:
                        B.host_view(a).copy_(h)
                return a
        view = _as_view(r, call, index)
        if view is not None:
            return view
        outs.append(r)
        return _fresh(r, index)
    if isinstance(r, (list, tuple)):
        return type(r)(_wrap(x, call, index, outs) for x in r)
    return r


def _as_view(r: Tensor, call: _Call, index: int) -> Tensor | None:
    """The npu tensor that shares storage with `r` when `r` is a view of an input."""
    if B.estimate:
        sid = r.untyped_storage()._cdata
        for h, a in zip(call.views, call.npu, strict=True):
            if h.untyped_storage()._cdata == sid:
                off = int(a.storage_offset() + r.storage_offset() - h.storage_offset())
                return B.with_storage(
                    a.untyped_storage(), r.size(), r.stride(), r.dtype, index, off
                )
        return None
    mem = B._devices[index].memory
    base = B._host_bases[(index, torch.uint8)][0]
    host0 = base.data_ptr()
    p = r.data_ptr()
    if not host0 <= p < host0 + mem.capacity:
        return None
    daddr = p - host0 + mem.base
    for a in call.npu:
        s = a.untyped_storage()
        start = s.data_ptr()
        if start <= daddr <= start + s.nbytes():
            off = (daddr - start) // r.element_size()
            return B.with_storage(s, r.size(), r.stride(), r.dtype, index, off)
    return None


def _fresh(r: Tensor, index: int) -> Tensor:
    """A new npu tensor holding CPU result `r` (same strides when they are dense)."""
    stride: Any
    if r.is_contiguous() or (r.dim() == 4 and r.is_contiguous(memory_format=torch.channels_last)):
        stride = r.stride()
    else:
        stride = B.contiguous_strides(r.shape)
    out = B.empty_strided(r.shape, stride, r.dtype, index)
    if not B.estimate and r.numel():
        B.host_view(out).copy_(r)
    return out


# -- ops with their own handling ----------------------------------------------------------
def _index_of(device: Any) -> int:
    if device is None:
        return B.state.device
    d = device if isinstance(device, torch.device) else torch.device(device)
    return d.index if d.index is not None else B.state.device


def _empty(op: Any, args: tuple[Any, ...], kw: dict[str, Any]) -> Tensor:
    size = [int(s) for s in args[0]]
    dtype = kw.get("dtype") or torch.get_default_dtype()
    index = _index_of(kw.get("device"))
    fmt = kw.get("memory_format")
    if fmt == torch.channels_last and len(size) == 4:
        n, c, h, w = size
        stride = [h * w * c, 1, w * c, c]
    else:
        stride = B.contiguous_strides(size)
    return B.empty_strided(size, stride, dtype, index)


def _empty_strided(op: Any, args: tuple[Any, ...], kw: dict[str, Any]) -> Tensor:
    dtype = kw.get("dtype") or torch.get_default_dtype()
    return B.empty_strided(
        [int(s) for s in args[0]], [int(s) for s in args[1]], dtype, _index_of(kw.get("device"))
    )


_COPY_ENTRY = OpEntry("TensorMove", "move", 0.0)


def _copy(src: Tensor, dst: Tensor) -> Tensor:
    sd, dd = src.device.type, dst.device.type
    if sd == "npu" and dd == "npu":
        i = dst.device.index or 0
        hsrc, hdst = B.host_view(src), B.host_view(dst)
        if not B.estimate:
            hdst.copy_(hsrc)
        c = cost_for("copy", _COPY_ENTRY, [hsrc], [hdst], _rt.profile)
        B.charge(i, "TensorMove" if src.dtype == dst.dtype else "Cast", c,
                 (B.info(src),), (B.info(dst),))  # fmt: skip
        return dst
    if dd == "npu":  # host to device
        i = dst.device.index or 0
        if not B.estimate:
            B.host_view(dst).copy_(src)
        n = dst.numel() * dst.element_size()
        dev = B.ensure_device(i)
        B.charge(i, "MemcpyH2D", _copy_cost(dev, 1, n), (B.info(src),), (B.info(dst),),
                 kind="memcpy", name="MEMCPY_HOST_TO_DEVICE")  # fmt: skip
        return dst
    # device to host: the host waits for the stream first, as a blocking copy does
    i = src.device.index or 0
    if B.estimate:
        raise RuntimeError(_estimate_message("copying an npu tensor to the CPU"))
    B.synchronize(i, "aclrtMemcpy")
    dst.copy_(B.host_view(src))
    n = src.numel() * src.element_size()
    dev = B.ensure_device(i)
    B.charge(i, "MemcpyD2H", _copy_cost(dev, 2, n), (B.info(src),), (B.info(dst),),
             kind="memcpy", name="MEMCPY_DEVICE_TO_HOST")  # fmt: skip
    return dst


def _estimate_message(what: str) -> str:
    from npu_runtime.sites import user_site

    site = user_site(3)
    where = f" at {site}" if site is not None else ""
    return (
        f"estimate mode: {what}{where} needs tensor values, and `ascend-lens run --estimate` "
        "tracks only shapes and dtypes; run without --estimate to compute values"
    )


def _copy_from(op: Any, args: tuple[Any, ...], kw: dict[str, Any]) -> Tensor:
    return _copy(args[0], args[1])


def _copy_(op: Any, args: tuple[Any, ...], kw: dict[str, Any]) -> Tensor:
    return _copy(args[1], args[0])


def _copy_from_and_resize(op: Any, args: tuple[Any, ...], kw: dict[str, Any]) -> Tensor:
    src, dst = args[0], args[1]
    if dst.shape != src.shape:
        dst.resize_(src.shape)
    return _copy(src, dst)


def _local_scalar_dense(op: Any, args: tuple[Any, ...], kw: dict[str, Any]) -> Any:
    t = args[0]
    if B.estimate:
        raise RuntimeError(_estimate_message("reading a value back (.item(), print, a branch)"))
    i = t.device.index or 0
    B.synchronize(i, "aclrtMemcpy")
    value = B.host_view(t).item()
    dev = B.ensure_device(i)
    B.charge(i, "MemcpyD2H", _copy_cost(dev, 2, t.element_size()), (B.info(t),), (),
             kind="memcpy", name="MEMCPY_DEVICE_TO_HOST")  # fmt: skip
    return value


def _resize_(op: Any, args: tuple[Any, ...], kw: dict[str, Any]) -> Tensor:
    t = args[0]
    size = [int(s) for s in args[1]]
    i = t.device.index or 0
    stride = B.contiguous_strides(size)
    n = 1
    for d in size:
        n *= d
    need = (n + t.storage_offset()) * t.element_size()
    s = t.untyped_storage()
    if need > s.nbytes():
        new = B.new_storage(i, need)
        if s.nbytes() and not B.estimate:
            old = B.with_storage(s, [s.nbytes()], [1], torch.uint8, i)
            B.host_view(B.with_storage(new, [s.nbytes()], [1], torch.uint8, i)).copy_(
                B.host_view(old)
            )
        s = new
    B._set_storage.redispatch_boxed(B._CPU, t, s, t.storage_offset(), size, stride)
    return t


def _set(op: Any, args: tuple[Any, ...], kw: dict[str, Any]) -> Tensor:
    if len(args) == 1 and not kw:  # set_(): an empty storage on the tensor's device
        t = args[0]
        s = B.new_storage(t.device.index or 0, 0)
        B._set_storage.redispatch_boxed(B._CPU, t, s, 0, [0], [1])
        return t
    result: Tensor = op._handle.redispatch_boxed(B._CPU, *args, **kw)
    return result


def _as_strided(op: Any, args: tuple[Any, ...], kw: dict[str, Any]) -> Tensor:
    """A view with explicit geometry: the offset counts in the npu storage's elements, so
    it is applied to the storage directly (a host view's offset would count from the
    device's first byte)."""
    t = args[0]
    size = args[1] if len(args) > 1 else kw["size"]
    stride = args[2] if len(args) > 2 else kw["stride"]
    off = args[3] if len(args) > 3 else kw.get("storage_offset")
    if off is None:
        off = t.storage_offset()
    return B.with_storage(t.untyped_storage(), size, stride, t.dtype, t.device.index or 0, int(off))


def _convolution(*a: Any) -> Any:
    return aten.convolution.default(*a)


def _convolution_backward(
    grad: Tensor, x: Tensor, w: Tensor, stride: Any, padding: Any, dilation: Any,
    transposed: bool, output_padding: Any, groups: int, mask: Any,
) -> Any:  # fmt: skip
    bias_sizes = [w.shape[1] * groups if transposed else w.shape[0]]
    return aten.convolution_backward.default(
        grad, x, w, bias_sizes, stride, padding, dilation, transposed, output_padding, groups, mask
    )


def _record_stream(op: Any, args: tuple[Any, ...], kw: dict[str, Any]) -> None:
    """`tensor.record_stream(s)` (FSDP, DDP's comm hooks): keeps the block from reuse until
    `s`'s queued work is done. The emulator computes every op when it is issued, so no later
    op can see a reused block's new values: nothing to hold back."""
    t, s = args[0], args[1] if len(args) > 1 else kw["s"]
    if s.device.type != t.device.type:
        raise RuntimeError(f"record_stream: the stream is on {s.device}, the tensor on {t.device}")


_SPECIAL: dict[str, Callable[[Any, tuple[Any, ...], dict[str, Any]], Any]] = {
    "record_stream": _record_stream,
    "empty": _empty,
    "as_strided": _as_strided,
    "empty_strided": _empty_strided,
    "_copy_from": _copy_from,
    "copy_": _copy_,
    "_copy_from_and_resize": _copy_from_and_resize,
    "_local_scalar_dense": _local_scalar_dense,
    "resize_": _resize_,
    "set_": _set,
}


def _lstm_cell(
    input_gates: Tensor, hidden_gates: Tensor, cx: Tensor,
    input_bias: Tensor | None = None, hidden_bias: Tensor | None = None,
) -> tuple[Tensor, Tensor, Tensor]:  # fmt: skip
    """The fused LSTM cell that PyTorch calls for devices other than the CPU: gates i, f, g,
    o; the workspace keeps the activated gates for the backward."""
    gates = input_gates + hidden_gates
    if input_bias is not None:
        gates = gates + input_bias
    if hidden_bias is not None:
        gates = gates + hidden_bias
    i, f, g, o = gates.chunk(4, 1)
    i, f, g, o = i.sigmoid(), f.sigmoid(), g.tanh(), o.sigmoid()
    cy = f * cx + i * g
    hy = o * cy.tanh()
    return hy, cy, torch.cat((i, f, g, o), 1)


def _lstm_cell_backward(
    grad_hy: Tensor | None, grad_cy: Tensor | None, cx: Tensor, cy: Tensor, workspace: Tensor,
    has_bias: bool,
) -> tuple[Tensor, Tensor, Tensor | None]:  # fmt: skip
    i, f, g, o = workspace.chunk(4, 1)
    tcy = cy.tanh()
    ghy = grad_hy if grad_hy is not None else torch.zeros_like(cy)
    gcy = (grad_cy if grad_cy is not None else torch.zeros_like(cy)) + ghy * o * (1 - tcy * tcy)
    gates = torch.cat(
        (
            gcy * g * i * (1 - i),
            gcy * cx * f * (1 - f),
            gcy * i * (1 - g * g),
            ghy * tcy * o * (1 - o),
        ),
        1,
    )
    return gates, gcy * f, gates.sum(0) if has_bias else None


def _gru_cell(
    input_gates: Tensor, hidden_gates: Tensor, hx: Tensor,
    input_bias: Tensor | None = None, hidden_bias: Tensor | None = None,
) -> tuple[Tensor, Tensor]:  # fmt: skip
    """The fused GRU cell PyTorch calls for devices other than the CPU; the workspace keeps
    r, z, n, hx and the hidden n-gate for the backward."""
    if input_bias is not None:
        input_gates = input_gates + input_bias
    if hidden_bias is not None:
        hidden_gates = hidden_gates + hidden_bias
    ir, iz, i_n = input_gates.chunk(3, 1)
    hr, hz, hn = hidden_gates.chunk(3, 1)
    r = (ir + hr).sigmoid()
    z = (iz + hz).sigmoid()
    n = (i_n + r * hn).tanh()
    hy = n + z * (hx - n)
    return hy, torch.cat((r, z, n, hx, hn), 1)


def _gru_cell_backward(
    grad_hy: Tensor, workspace: Tensor, has_bias: bool
) -> tuple[Tensor, Tensor, Tensor, Tensor | None, Tensor | None]:
    r, z, n, hx, hn = workspace.chunk(5, 1)
    gz = grad_hy * (hx - n) * z * (1 - z)
    gn = grad_hy * (1 - z) * (1 - n * n)
    gr = gn * hn * r * (1 - r)
    g_input = torch.cat((gr, gz, gn), 1)
    g_hidden = torch.cat((gr, gz, gn * r), 1)
    if has_bias:
        return g_input, g_hidden, grad_hy * z, g_input.sum(0), g_hidden.sum(0)
    return g_input, g_hidden, grad_hy * z, None, None


# ops with a default kernel of their own that must be overridden for npu
EXPLICIT = ("convolution_overrideable", "convolution_backward_overrideable")
_REPLACE: dict[str, Callable[..., Any]] = {
    "convolution_overrideable": _convolution,
    "convolution_backward_overrideable": _convolution_backward,
    "_thnn_fused_lstm_cell": _lstm_cell,
    "_thnn_fused_lstm_cell_backward_impl": _lstm_cell_backward,
    "_thnn_fused_gru_cell": _gru_cell,
    "_thnn_fused_gru_cell_backward": _gru_cell_backward,
}
