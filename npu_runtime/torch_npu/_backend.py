"""The `npu` device on PyTorch's PrivateUse1 key: tensors, storage and host views.

This module is the seam other front ends build on (the HCCL backend, estimate mode):

- `host_view(t)`: a CPU tensor (same shape, strides, dtype) over the emulated device
  memory behind npu tensor `t`. Writing it writes the device memory; no copy, no record.
  In estimate mode it is a `meta` tensor (shapes only).
- `empty(shape, dtype, device_index)` / `empty_strided(...)`: a new npu tensor whose
  storage comes from the device's caching allocator (`allocator_for(i)`).
- `from_cpu(cpu_tensor, device_index)`: a new npu tensor holding a copy of the CPU data,
  charged as a host-to-device copy at the user's line.
- `charge(device_index, op_type, cost, inputs, outputs, kind="op", name=None)`: put work
  on the device's current stream at the user's line (a WorkRecord for every consumer).
- `stream_for(i)` / `ensure_device(i)`: the runtime Stream / Device behind npu:i.

Storage: `torch._C._construct_storage_from_data_pointer` makes a PrivateUse1 storage
whose data pointer is the emulated device address (like a real NPU pointer, never
dereferenced by torch); a weak-reference callback returns the block to the allocator when
the storage dies. A tensor on npu:i is a fresh shallow copy (`.data`) of a per-(device,
dtype) anchor tensor pointed at that storage with the CPU `set_` kernel (it only sets
metadata); the anchor comes from a DLPack capsule naming the extension device npu:i.
"""

from __future__ import annotations

import ctypes
import os
import threading
import weakref
from typing import Any

import numpy as np
import torch

from npu_runtime.core import hooks
from npu_runtime.core.device import Device
from npu_runtime.core.launch import Cost, place
from npu_runtime.core.memory import Block
from npu_runtime.core.runtime import get_runtime
from npu_runtime.core.stream import Stream
from npu_runtime.records import SourceSite, TensorInfo, WorkKind, WorkRecord
from npu_runtime.sites import user_site
from npu_runtime.torch_npu import native_guard
from npu_runtime.torch_npu.allocator import CachingAllocator

_rt = get_runtime()
_CPU = torch._C.DispatchKeySet(torch._C.DispatchKey.CPU)
_set_storage = torch.ops.aten.set_.source_Storage_storage_offset._handle
_make_storage = torch._C._construct_storage_from_data_pointer
_KDL_EXT_DEV = 12  # DLPack's device type that PyTorch maps to PrivateUse1


class _State(threading.local):
    def __init__(self) -> None:
        self.device = 0  # torch.npu.current_device() of this host thread


class _GuardState:
    """The current device kept by the C++ device guard (native_guard.py), per host thread:
    what the autograd engine's device threads set is what the ops on them see."""

    @property
    def device(self) -> int:
        return native_guard.get_device()

    @device.setter
    def device(self, index: int) -> None:
        native_guard.set_device(index)


state: _State | _GuardState = _State()


def use_guard_state() -> None:
    """Called once the C++ guard is registered: it keeps the current device from now on."""
    global state
    if isinstance(state, _State):
        native_guard.set_device(state.device)
        state = _GuardState()


# estimate mode: meta host views, no values (`ascend-lens run --estimate` sets the variable)
estimate = os.environ.get("ASCEND_LENS_ESTIMATE") == "1"
first_oom: tuple[SourceSite | None, str] | None = None  # the first OutOfMemoryError raised
peak_sites: dict[int, SourceSite | None] = {}  # estimate mode: the line of each device's peak
_anchors: dict[tuple[int, torch.dtype], torch.Tensor] = {}
_host_bases: dict[tuple[int, torch.dtype], tuple[torch.Tensor, int, int]] = {}
_allocators: dict[int, CachingAllocator] = {}
_devices: dict[int, Device] = {}
current_streams: dict[int, Stream] = {}  # device -> the stream torch.npu.stream() selected
_torch_device: dict[int, torch.device] = {}


# -- devices -------------------------------------------------------------------------
def ensure_device(index: int) -> Device:
    """The runtime Device behind npu:index, opening it (and the runtime) on first use."""
    dev = _devices.get(index)
    if dev is not None and _rt.devices.get(index) is dev:
        return dev
    rt = _rt
    native_guard.set_count(rt.device_count)  # the kernel may have changed it before any device
    if not 0 <= index < rt.device_count:
        raise RuntimeError(
            f"Invalid device ordinal {index}: the process sees {rt.device_count} NPU device(s)"
        )
    with rt.lock:
        if not rt.initialized:
            rt.init()
        ctx = rt.tls.context
        if index not in rt.devices:
            rt.set_device(index)
            if ctx is not None and ctx.alive:
                rt.tls.context = ctx
        dev = rt.devices[index]
        if ctx is None or not ctx.alive:
            rt.tls.context = dev.default_context
    _devices[index] = dev
    _allocators.pop(index, None)
    current_streams.pop(index, None)
    _host_bases_drop(index)
    return dev


def _host_bases_drop(index: int) -> None:
    for key in [k for k in _host_bases if k[0] == index]:
        del _host_bases[key]


def allocator_for(index: int) -> CachingAllocator:
    a = _allocators.get(index)
    if a is None or _rt.devices.get(index) is not a.device:
        dev = ensure_device(index)
        a = _allocators[index] = CachingAllocator(dev, torch_capacity(dev))
    return a


def torch_capacity(dev: Device) -> int:
    """Total capacity as torch_npu reports it: usable HBM less the runtime's own reserve."""
    import json
    from importlib import resources

    with resources.files("npu_runtime.data").joinpath("torch_npu.json").open(encoding="utf-8") as f:
        table = json.load(f)["total_capacity_bytes"]
    return min(int(table.get(dev.profile.name, dev.memory.capacity)), dev.memory.capacity)


def stream_for(index: int) -> Stream:
    s = current_streams.get(index)
    if s is not None and s.alive:
        return s
    dev = ensure_device(index)
    ctx = dev.default_context
    assert ctx is not None and ctx.default_stream is not None
    return ctx.default_stream


def torch_device(index: int) -> torch.device:
    d = _torch_device.get(index)
    if d is None:
        d = _torch_device[index] = torch.device("npu", index)
    return d


# -- tensors ----------------------------------------------------------------------------
def _anchor(index: int, dtype: torch.dtype) -> torch.Tensor:
    """A tiny tensor on npu:index of `dtype`: new tensors are detached copies of it."""
    a = _anchors.get((index, dtype))
    if a is None:
        base = _anchors.get((index, torch.uint8))
        if base is None:
            base = _dlpack_on_device(index)
            _anchors[(index, torch.uint8)] = base
        a = _anchors[(index, dtype)] = base.detach().view(dtype) if dtype != torch.uint8 else base
    return a


_pyapi = ctypes.pythonapi
_pyapi.PyCapsule_GetPointer.restype = ctypes.c_void_p
_pyapi.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]


def _dlpack_on_device(index: int) -> torch.Tensor:
    """A 16-byte PrivateUse1 tensor on npu:index, made once per device from a DLPack
    capsule that names the extension device (the only public way to pick the index)."""
    holder = np.zeros(16, np.uint8)
    cap = holder.__dlpack__()
    p = _pyapi.PyCapsule_GetPointer(cap, b"dltensor")
    ctypes.c_int32.from_address(p + 8).value = _KDL_EXT_DEV  # DLTensor.device.device_type
    ctypes.c_int32.from_address(p + 12).value = index  # DLTensor.device.device_id
    t: torch.Tensor = torch._C._from_dlpack(cap)
    return t


def _free_block(alloc: CachingAllocator, dev: Device, block: Block | None) -> None:
    try:
        if block is not None and _rt.devices.get(dev.id) is dev:
            alloc.free(block)
    except Exception:  # interpreter shutdown: modules may already be torn down
        pass


def new_storage(index: int, nbytes: int) -> torch.UntypedStorage:
    """A storage of `nbytes` on npu:index from the caching allocator (freed when it dies)."""
    global first_oom
    alloc = _allocators.get(index)
    if alloc is None or _rt.devices.get(index) is not alloc.device:
        # first use, or the runtime was reset (%npu_reset): a new device, a new allocator
        alloc = allocator_for(index)
    try:
        # No alloc site: the caching allocator, not the program, frees these blocks, so the
        # sanitizer has no use-after-free or leak of the program's to report on them.
        peak = alloc.stats.peak_allocated
        block = alloc.malloc(nbytes, None)
    except torch.OutOfMemoryError as exc:
        if first_oom is None:
            first_oom = (user_site(2), str(exc))
        raise
    if estimate and alloc.stats.peak_allocated > peak:
        # estimate mode names the line where each device's peak was reached
        peak_sites[index] = user_site(2)
    s: torch.UntypedStorage = _make_storage(block.addr, torch_device(index), nbytes)  # type: ignore[assignment]
    # A weak reference with a callback, kept in a dict: cheaper than weakref.finalize.
    ref = weakref.ref(s, _on_dead)
    impl = s._cdata
    _live[ref] = (alloc, alloc.device, block, impl)
    _by_impl[impl] = ref
    return s


# storage -> (allocator, device, its block or None after a resize to 0, StorageImpl address)
_live: dict[
    weakref.ref[torch.UntypedStorage], tuple[CachingAllocator, Device, Block | None, int]
] = {}
_by_impl: dict[int, weakref.ref[torch.UntypedStorage]] = {}  # StorageImpl address -> _live key


def _on_dead(ref: weakref.ref[torch.UntypedStorage]) -> None:
    """A storage died (its last tensor went): its block goes back to the allocator."""
    entry = _live.pop(ref, None)
    if entry is not None:
        alloc, dev, block, impl = entry
        if _by_impl.get(impl) is ref:
            del _by_impl[impl]
        _free_block(alloc, dev, block)


def resize_storage(impl: int, index: int, nbytes: int) -> int:
    """`untyped_storage().resize_(nbytes)` on npu:index (called by the C++ hooks with the
    StorageImpl's address): a new block from the caching allocator holding the first
    min(old, new) bytes (charged as a device-to-device copy), the old block freed. Returns
    the new device address, 0 for size 0 (no block, as torch_npu and CUDA do)."""
    from npu_runtime.core.transfer import D2D, _copy_cost

    ref = _by_impl.get(impl)
    entry = _live.get(ref) if ref is not None else None
    if entry is None or ref is None or ref() is None:
        raise RuntimeError(
            f"npu:{index} storage resize: this storage was not allocated by the npu device"
        )
    alloc, dev, old, _ = entry
    if _rt.devices.get(dev.id) is not dev:
        raise RuntimeError(f"npu:{index} storage resize: the device was reset since")
    new: Block | None = None
    if nbytes:
        global first_oom
        try:
            new = alloc.malloc(nbytes, None)
        except torch.OutOfMemoryError as exc:
            if first_oom is None:
                first_oom = (user_site(2), str(exc))
            raise
    old_bytes = ref().nbytes() if old is not None else 0  # type: ignore[union-attr]
    keep = min(old_bytes, nbytes)
    if old is not None and new is not None and keep:
        if not estimate:
            raw, base, _ = _host_bases.get((index, torch.uint8)) or _host_base(index, torch.uint8)
            raw[new.addr - base : new.addr - base + keep].copy_(
                raw[old.addr - base : old.addr - base + keep]
            )
        charge(index, "MemcpyD2D", _copy_cost(dev, D2D, keep), kind="memcpy",
               name="MEMCPY_DEVICE_TO_DEVICE")  # fmt: skip
    _live[ref] = (alloc, dev, new, impl)
    if old is not None:
        _free_block(alloc, dev, old)
    return new.addr if new is not None else 0


def empty_strided(
    size: Any, stride: Any, dtype: torch.dtype, index: int, offset: int = 0
) -> torch.Tensor:
    n = 1
    extent = 1
    for d, st in zip(size, stride, strict=True):
        n *= d
        extent += (d - 1) * st if d else 0
    nbytes = (extent + offset) * _itemsize(dtype) if n else 0
    storage = new_storage(index, nbytes)
    return with_storage(storage, size, stride, dtype, index, offset)


def with_storage(
    storage: torch.UntypedStorage,
    size: Any,
    stride: Any,
    dtype: torch.dtype,
    index: int,
    offset: int = 0,
) -> torch.Tensor:
    # `.data`, not `.detach()`: a fresh TensorImpl with its own version counter (detach
    # would share the anchor's, and every in-place op would bump every npu tensor's).
    t = _anchor(index, dtype).data
    _set_storage.redispatch_boxed(_CPU, t, storage, offset, list(size), list(stride))
    return t


_strides: dict[tuple[int, ...], list[int]] = {}


def contiguous_strides(size: Any) -> list[int]:
    key = tuple(size)
    hit = _strides.get(key)
    if hit is not None:
        return hit
    if len(_strides) > 4096:
        _strides.clear()
    out = _strides[key] = _contiguous(key)
    return out


def _contiguous(size: tuple[int, ...]) -> list[int]:
    out = [1] * len(size)
    acc = 1
    for i in range(len(size) - 1, -1, -1):
        out[i] = acc
        acc *= max(int(size[i]), 1)
    return out


def empty(size: Any, dtype: torch.dtype, index: int) -> torch.Tensor:
    return empty_strided(size, contiguous_strides(size), dtype, index)


_itemsizes: dict[torch.dtype, int] = {}


def _itemsize(dtype: torch.dtype) -> int:
    n = _itemsizes.get(dtype)
    if n is None:
        n = _itemsizes[dtype] = torch.empty((), dtype=dtype, device="cpu").element_size()
    return n


def host_view(t: torch.Tensor) -> torch.Tensor:
    """A CPU tensor over the device memory of npu tensor `t` (meta in estimate mode)."""
    if estimate:
        return torch.empty_strided(t.size(), t.stride(), dtype=t.dtype, device="meta")
    key = (t.get_device(), t.dtype)
    entry = _host_bases.get(key)
    if entry is None:
        entry = _host_base(*key)
    base, mem_base, itemsize = entry
    size = t.size()
    if 0 in size:  # no device memory behind it; a CPU kernel may resize it (out=)
        return torch.empty_strided(size, t.stride(), dtype=t.dtype, device="cpu")
    return base.as_strided(size, t.stride(), (t.data_ptr() - mem_base) // itemsize)


def _host_base(index: int, dtype: torch.dtype) -> tuple[torch.Tensor, int, int]:
    """(CPU tensor of `dtype` over all of npu:index's memory, device base address, itemsize)."""
    dev = ensure_device(index)
    mem = dev.memory
    raw = _host_bases.get((index, torch.uint8))
    if raw is None:
        t = torch.frombuffer(mem._backing(), dtype=torch.uint8, count=mem.capacity)
        raw = _host_bases[(index, torch.uint8)] = (t, mem.base, 1)
    base = raw[0] if dtype == torch.uint8 else raw[0].view(dtype)
    entry = _host_bases[(index, dtype)] = (base, mem.base, _itemsize(dtype))
    return entry


# -- records -----------------------------------------------------------------------------
_MSPROF = {
    torch.float16: "FLOAT16", torch.float32: "FLOAT", torch.bfloat16: "BF16",
    torch.float64: "DOUBLE", torch.int8: "INT8", torch.uint8: "UINT8", torch.int16: "INT16",
    torch.int32: "INT32", torch.int64: "INT64", torch.bool: "BOOL",
    torch.complex64: "COMPLEX64", torch.complex128: "COMPLEX128",
}  # fmt: skip


def from_cpu(cpu: torch.Tensor, index: int) -> torch.Tensor:
    """A new npu:index tensor holding a copy of `cpu`, charged as a host-to-device copy."""
    from npu_runtime.core.transfer import _copy_cost

    out = empty(cpu.shape, cpu.dtype, index)
    if not estimate and cpu.numel():
        host_view(out).copy_(cpu)
    n = cpu.numel() * cpu.element_size()
    charge(index, "MemcpyH2D", _copy_cost(ensure_device(index), 1, n), (info(cpu),), (info(out),),
           kind="memcpy", name="MEMCPY_HOST_TO_DEVICE")  # fmt: skip
    return out


def msprof_dtype(dtype: torch.dtype) -> str:
    return _MSPROF.get(dtype, str(dtype).removeprefix("torch.").upper())


def info(t: torch.Tensor) -> TensorInfo:
    return TensorInfo(tuple(t.shape), msprof_dtype(t.dtype))


_op_counts: dict[str, int] = {}
last_site: SourceSite | None = None


def charge(
    index: int,
    op_type: str,
    cost: Cost,
    inputs: tuple[TensorInfo, ...] = (),
    outputs: tuple[TensorInfo, ...] = (),
    kind: WorkKind = "op",
    name: str | None = None,
) -> WorkRecord:
    """Put finished work on npu:index's current stream, at the user's line."""
    if name is None:
        n = _op_counts.get(op_type, 0) + 1
        _op_counts[op_type] = n
        name = f"{op_type}_{n}"
    global last_site
    site = user_site(2)
    if site is None:  # autograd's device thread runs backward ops: charge the backward() line
        site = last_site
    else:
        last_site = site
    return place(stream_for(index), kind, name, op_type, cost, inputs, outputs, site)


def synchronize(index: int, api: str = "aclrtSynchronizeStream") -> None:
    """Wait for npu:index's current stream (device faults surface here)."""
    s = stream_for(index)
    dev = s.device
    dev.advance_host(s.ready_us)
    dev.settle([s], _rt.hostmem, user_site(2), api)


def listening() -> bool:
    """True when something consumes records (cheap check before building TensorInfos)."""
    return bool(hooks.work_listeners)
