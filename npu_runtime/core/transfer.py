"""Device and host memory calls: malloc/free, memcpy/memset (sync and async), mem info.

Checks and codes follow api.md §8; the sanitizer (sanitizer.py) adds what hardware does
not report. Copies move real bytes with ctypes.memmove between validated ranges: device
addresses translate into the device's backing mapping, host addresses must lie inside a
live buffer the emulator knows (numpy_to_ptr, bytes_to_ptr, malloc_host).
"""

from __future__ import annotations

import ctypes
import os

import numpy as np

from npu_runtime.core import hooks
from npu_runtime.core.device import Device
from npu_runtime.core.hostmem import host_array
from npu_runtime.core.launch import Cost, place
from npu_runtime.core.memory import HUGE_PAGE, Block, OutOfMemory, device_of
from npu_runtime.core.runtime import Runtime
from npu_runtime.core.stream import HostWrite, Stream
from npu_runtime.errors import codes
from npu_runtime.records import SourceSite
from npu_runtime.sites import user_site

# aclrtMemcpyKind (api.md §7)
H2H, H2D, D2H, D2D, DEFAULT, HOST_TO_BUF_TO_DEVICE = 0, 1, 2, 3, 4, 5
KIND_NAMES = {
    H2H: "MEMCPY_HOST_TO_HOST",
    H2D: "MEMCPY_HOST_TO_DEVICE",
    D2H: "MEMCPY_DEVICE_TO_HOST",
    D2D: "MEMCPY_DEVICE_TO_DEVICE",
}
_OP_TYPES = {H2H: "MemcpyH2H", H2D: "MemcpyH2D", D2H: "MemcpyD2H", D2D: "MemcpyD2D"}
# aclrtMemAttr (api.md §7): DDR attributes vs HBM attributes
_DDR_ATTRS = {0, 2, 3, 6, 7}
_MAX_ATTR = 17
PAGE_NORMAL = 4096


# -- allocation ---------------------------------------------------------------------
def malloc(
    rt: Runtime, size: int, policy: int, api: str = "aclrtMalloc", align32: bool = False
) -> int:
    rt.check_injection(api)
    if size == 0:
        raise rt.fail(codes.ACL_ERROR_INVALID_PARAM, api, "size must be > 0")
    dev = rt.current_device(api)
    site = user_site(2) if rt.sanitizer.enabled else None
    try:
        block = dev.memory.malloc(size, policy, site, align32_only=align32)
    except OutOfMemory as oom:
        raise rt.fail(
            codes.ACL_ERROR_RT_MEMORY_ALLOCATION,
            api,
            f"cannot allocate {size} bytes on device {dev.id}: {oom.free} bytes free, "
            f"largest free block {oom.largest} bytes",
        ) from None
    return block.addr


def free(rt: Runtime, ptr: int, api: str = "aclrtFree") -> None:
    rt.check_injection(api)
    if ptr == 0:
        raise rt.fail(codes.ACL_ERROR_INVALID_PARAM, api, "devPtr is NULL (0)")
    dev_id = device_of(ptr)
    dev = rt.devices.get(dev_id) if dev_id is not None else None
    site = user_site(2) if rt.sanitizer.enabled else None
    if dev is not None and dev.memory.free(ptr, site) is not None:
        return
    # Not a live block start: say what it was (double free, interior pointer, host memory).
    if dev is not None and rt.sanitizer.enabled:
        old = dev.memory.find_freed(ptr)
        live = dev.memory.find(ptr)
        if old is not None and old.addr == ptr:
            rt.sanitizer.report(
                "double-free",
                api,
                f"0x{ptr:x} ({old.size} bytes) was already freed",
                site=site,
                alloc_site=old.site,
                free_site=old.free_site,
            )
        elif live is not None:
            rt.sanitizer.report(
                "out-of-bounds",
                api,
                f"0x{ptr:x} points {ptr - live.addr} bytes into the allocation at 0x{live.addr:x}, not at its start",
                site=site,
                alloc_site=live.site,
            )
    where = "host memory" if dev_id is None else f"not a live allocation on device {dev_id}"
    raise rt.fail(codes.ACL_ERROR_RT_PARAM_INVALID, api, f"0x{ptr:x} is {where}")


def malloc_host(rt: Runtime, size: int) -> int:
    api = "aclrtMallocHost"
    rt.check_injection(api)
    if size == 0:
        raise rt.fail(codes.ACL_ERROR_INVALID_PARAM, api, "size must be > 0")
    physical = _physical_memory()
    if physical and size > physical:
        raise rt.fail(
            codes.ACL_ERROR_RT_MEMORY_ALLOCATION,
            api,
            f"cannot allocate {size} bytes of pinned host memory: the host has {physical}",
        )
    try:
        return rt.hostmem.malloc_host(size, user_site(2))
    except (MemoryError, ValueError):
        raise rt.fail(
            codes.ACL_ERROR_RT_MEMORY_ALLOCATION,
            api,
            f"cannot allocate {size} bytes of pinned host memory",
        ) from None


def _physical_memory() -> int:
    """Bytes of RAM on this host (0 when the OS does not say): pinned memory cannot exceed it."""
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return 0


def free_host(rt: Runtime, ptr: int) -> None:
    api = "aclrtFreeHost"
    rt.check_injection(api)
    if ptr == 0:
        raise rt.fail(codes.ACL_ERROR_INVALID_PARAM, api, "hostPtr is NULL (0)")
    if rt.hostmem.free_host(ptr) is None:
        old = rt.hostmem.freed_pinned.get(ptr)
        if old is not None and rt.sanitizer.enabled:
            rt.sanitizer.report(
                "double-free",
                api,
                f"host block 0x{ptr:x} was already freed",
                site=user_site(2),
                alloc_site=old.site,
            )
        raise rt.fail(
            codes.ACL_ERROR_RT_PARAM_INVALID, api, f"0x{ptr:x} is not a block from malloc_host"
        )


def get_mem_info(rt: Runtime, attr: int) -> tuple[int, int]:
    """(free, total) for an aclrtMemAttr (api.md §7: DDR reads 0 on 910; HBM maps to DDR on 310P)."""
    api = "aclrtGetMemInfo"
    rt.check_injection(api)
    dev = rt.current_device(api)
    if not 0 <= attr <= _MAX_ATTR:
        raise rt.fail(codes.ACL_ERROR_INVALID_PARAM, api, f"attr {attr} is not an aclrtMemAttr")
    mem = dev.memory
    if attr in _DDR_ATTRS and not dev.profile.hbm_in_ddr:
        return 0, 0
    return mem.free_bytes(), mem.capacity


def pointer_attributes(rt: Runtime, ptr: int) -> dict[str, object]:
    api = "aclrtPointerGetAttributes"
    if ptr == 0:
        raise rt.fail(codes.ACL_ERROR_INVALID_PARAM, api, "ptr is NULL (0)")
    dev_id = device_of(ptr)
    if dev_id is None:
        return {"location": {"id": 0, "type": 0}, "page_size": PAGE_NORMAL, "rsv": 0}
    dev = rt.devices.get(dev_id)
    block = dev.memory.find(ptr) if dev is not None else None
    if block is None:
        raise rt.fail(codes.ACL_ERROR_RT_PARAM_INVALID, api, f"0x{ptr:x} is not a live allocation")
    return {
        "location": {"id": dev_id, "type": 1},
        "page_size": HUGE_PAGE if block.huge else PAGE_NORMAL,
        "rsv": 0,
    }


# -- range checks -----------------------------------------------------------------------
def _device_range(
    rt: Runtime, addr: int, n: int, api: str, role: str, site: SourceSite | None
) -> tuple[Device, int]:
    """Validate a device range; returns (device, real address)."""
    dev_id = device_of(addr)
    dev = rt.devices.get(dev_id) if dev_id is not None else None
    block: Block | None = dev.memory.find(addr) if dev is not None else None
    if dev is None or block is None:
        old = dev.memory.find_freed(addr) if dev is not None else None
        if old is not None and rt.sanitizer.enabled:
            rt.sanitizer.report(
                "use-after-free",
                api,
                f"{role} 0x{addr:x} is inside a freed allocation of {old.size} bytes",
                site=site or user_site(),
                alloc_site=old.site,
                free_site=old.free_site,
            )
        raise rt.fail(
            codes.ACL_ERROR_RT_PARAM_INVALID,
            api,
            f"{role} 0x{addr:x} is not in a live device allocation",
        )
    if addr + n > block.addr + block.size and rt.sanitizer.enabled:
        rt.sanitizer.report(
            "out-of-bounds",
            api,
            f"{role} range 0x{addr:x}+{n} runs {addr + n - block.addr - block.size} bytes past the "
            f"{block.size}-byte allocation at 0x{block.addr:x}",
            site=site or user_site(),
            alloc_site=block.site,
        )
    if addr + n > block.addr + block.reserved:
        raise rt.fail(
            codes.ACL_ERROR_RT_PARAM_INVALID,
            api,
            f"{role} range 0x{addr:x}+{n} runs past the allocation at 0x{block.addr:x} ({block.size} bytes)",
        )
    return dev, dev.memory.host_address(addr)


def _host_range(
    rt: Runtime,
    addr: int,
    n: int,
    api: str,
    role: str,
    site: SourceSite | None,
    write: bool = False,
) -> None:
    """Refuse a host range the emulator may not touch, before a single byte moves."""
    buf = rt.hostmem.lookup(addr, n)
    if buf is not None and write and not buf.writable:
        raise rt.fail(
            codes.ACL_ERROR_RT_PARAM_INVALID,
            api,
            f"{role} 0x{addr:x} is read-only host memory (a read-only numpy array or memmap): "
            "copy into a writable array",
        )
    if buf is not None:
        if buf.kind == "bytes" and rt.sanitizer.enabled and not buf.alive():
            rt.sanitizer.report(
                "use-after-free",
                api,
                f"{role} 0x{addr:x} points into a bytes object Python has already released "
                "(keep the object from bytes_to_ptr alive while its pointer is used)",
                site=site or user_site(),
                alloc_site=buf.site,
            )
        return
    old = rt.hostmem.freed_pinned.get(addr)
    gone = rt.hostmem.find_released(addr) if old is None else None
    if rt.sanitizer.enabled and (old is not None or gone is not None):
        what = (
            "a freed malloc_host block" if old is not None else "a numpy array Python has collected"
        )
        rt.sanitizer.report(
            "use-after-free",
            api,
            f"{role} 0x{addr:x} is {what}",
            site=site or user_site(),
            alloc_site=(old or gone).site,  # type: ignore[union-attr]
        )
    buf = rt.hostmem.find(addr)
    if buf is not None:
        detail = (
            f"{role} range 0x{addr:x}+{n} runs {addr + n - buf.end} bytes past the "
            f"{buf.size}-byte host buffer at 0x{buf.start:x}"
        )
        if rt.sanitizer.enabled:
            rt.sanitizer.report(
                "out-of-bounds", api, detail, site=site or user_site(), alloc_site=buf.site
            )
    elif gone is not None:
        detail = f"{role} 0x{addr:x} belonged to a numpy array that no longer exists"
    else:
        detail = (
            f"{role} 0x{addr:x} is not a host buffer the emulator knows: pass pointers from "
            "acl.util.numpy_to_ptr / bytes_to_ptr or acl.rt.malloc_host"
        )
    raise rt.fail(codes.ACL_ERROR_RT_PARAM_INVALID, api, detail)


def _check_pending_read(rt: Runtime, src: int, n: int, api: str, site: SourceSite | None) -> None:
    if rt.hostmem.pending:
        pending, launch = rt.hostmem.pending_overlap(src, n)
        if pending and rt.sanitizer.enabled:
            rt.sanitizer.report(
                "read-before-sync",
                api,
                f"host 0x{src:x}+{n} is the destination of an async copy not yet synchronised",
                site=site or user_site(),
                launch_site=launch,
            )


def _copy_cost(dev: Device, kind: int, n: int) -> Cost:
    p = dev.profile
    bw = p.effective_bandwidth_Bps / 2 if kind == D2D else p.memcpy_h2d_Bps
    dur = p.memcpy_overhead_us + n / bw * 1e6
    return Cost(
        duration_us=dur, bound="memory", unit="MEMCPY", bytes_moved=n, time_by_unit={"memory": dur}
    )


# -- memcpy -----------------------------------------------------------------------------
def _plan_copy(
    rt: Runtime, dst: int, dest_max: int, src: int, count: int, kind: int, api: str
) -> tuple[int, int, int, Device | None, SourceSite | None] | None:
    """Shared checks of memcpy and memcpy_async. None means: nothing to do (success)."""
    rt.check_injection(api)
    if dst == 0 or src == 0:
        raise rt.fail(
            codes.ACL_ERROR_INVALID_PARAM, api, f"{'dst' if dst == 0 else 'src'} is NULL (0)"
        )
    if count == 0:
        return None  # both layers short-circuit (api.md §8)
    if not 0 <= kind <= HOST_TO_BUF_TO_DEVICE:
        raise rt.fail(
            codes.ACL_ERROR_INVALID_PARAM,
            api,
            f"kind {kind} is not a supported aclrtMemcpyKind (0..5)",
        )
    if dest_max == 0:
        raise rt.fail(codes.ACL_ERROR_RT_PARAM_INVALID, api, "destMax is 0")
    if count > dest_max:
        raise rt.fail(
            codes.ACL_ERROR_RT_PARAM_INVALID,
            api,
            f"count {count} is outside (0, destMax={dest_max}]",
        )
    dst_dev, src_dev = device_of(dst) is not None, device_of(src) is not None
    actual = (H2H, H2D, D2H, D2D)[dst_dev + 2 * src_dev]
    want = H2D if kind == HOST_TO_BUF_TO_DEVICE else kind
    if want != DEFAULT and want != actual and rt.sanitizer.enabled:
        # CANN 8 treats kind as advisory and copies by where the pointers live (api.md §8);
        # older CANN rejects the call, so the mismatch is still worth a finding.
        rt.sanitizer.report(
            "kind-mismatch",
            api,
            f"kind {KIND_NAMES[want]} does not match the pointers: dst is "
            f"{'device' if dst_dev else 'host'}, src is {'device' if src_dev else 'host'} memory; "
            f"copied as {KIND_NAMES[actual]}",
            site=user_site(),
        )
    ctx_dev = (
        rt.current_device(api)
        if (dst_dev or src_dev)
        else (rt.tls.context.device if rt.tls.context else None)
    )
    if dst == src:
        return None  # the runtime warns and copies nothing (api.md §8)
    site = None  # found lazily: only a finding or a record needs it
    dev = ctx_dev
    if src_dev:
        dev, real_src = _device_range(rt, src, count, api, "src", site)
    else:
        _host_range(rt, src, count, api, "src", site)
        _check_pending_read(rt, src, count, api, site)
        real_src = src
    if dst_dev:
        dev, real_dst = _device_range(rt, dst, count, api, "dst", site)
    else:
        _host_range(rt, dst, count, api, "dst", site, write=True)
        real_dst = dst
    return real_dst, real_src, actual, dev, site


def memcpy(rt: Runtime, dst: int, dest_max: int, src: int, count: int, kind: int) -> None:
    api = "aclrtMemcpy"
    plan = _plan_copy(rt, dst, dest_max, src, count, kind, api)
    if plan is None:
        return
    real_dst, real_src, actual, dev, _ = plan
    ctypes.memmove(real_dst, real_src, count)
    if dev is not None:
        # Synchronous: the host waits for the copy; it is not ordered with any stream.
        p = dev.profile
        bw = p.effective_bandwidth_Bps / 2 if actual == D2D else p.memcpy_h2d_Bps
        duration = p.memcpy_overhead_us + count / bw * 1e6
        with dev.lock:
            start = dev.host_us
            dev.host_us = start + duration
        if hooks.work_listeners:
            _emit_sync(dev, actual, _copy_cost(dev, actual, count), start, user_site(2))


def _emit_sync(dev: Device, kind: int, c: Cost, start: float, site: SourceSite | None) -> None:
    from npu_runtime.records import WorkRecord

    hooks.emit_work(
        WorkRecord(
            kind="memcpy",
            name=KIND_NAMES[kind],
            op_type=_OP_TYPES[kind],
            device=dev.id,
            stream=0,
            task_id=dev.next_task_id(),
            start_us=start,
            duration_us=c.duration_us,
            bound="memory",
            unit="MEMCPY",
            bytes_moved=c.bytes_moved,
            time_by_unit=dict(c.time_by_unit),
            site=site,
        )
    )


def memcpy_async(
    rt: Runtime, dst: int, dest_max: int, src: int, count: int, kind: int, stream: int
) -> None:
    api = "aclrtMemcpyAsync"
    if kind == H2H and dst and src and count:
        raise rt.fail(
            codes.ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
            api,
            "asynchronous host-to-host copy is not supported",
        )
    s = rt.resolve_stream(stream, api)
    plan = _plan_copy(rt, dst, dest_max, src, count, kind, api)
    if plan is None:
        return
    real_dst, real_src, actual, dev, _ = plan
    if actual == H2H:
        raise rt.fail(
            codes.ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
            api,
            "both pointers are host memory: asynchronous host-to-host copy is not supported",
        )
    site = user_site(2)
    if actual == D2D and (dst % 64 or src % 64):
        raise rt.fail(
            codes.ACL_ERROR_RT_ADDR_UNALIGNED,
            api,
            "device-to-device async copies need 64-byte aligned addresses",
        )
    assert dev is not None
    c = _copy_cost(s.device, actual, count)
    deferred = actual == D2H and rt.hostmem.is_pinned(dst)
    if deferred:
        data = ctypes.string_at(real_src, count)  # device contents in enqueue order
    else:
        ctypes.memmove(real_dst, real_src, count)
    rec = place(s, "memcpy", KIND_NAMES[actual], _OP_TYPES[actual], c, (), (), site)
    if deferred:
        # Pinned host memory: the bytes land when the stream gets there (seen after a sync).
        with s.device.lock:
            s.pending.append(HostWrite(rec.end_us, dst, data, site))
        rt.hostmem.mark_pending(dst, count, site)
    elif actual in (H2D, D2H):
        # Pageable host memory: the call returns once the copy is done (api.md §9).
        s.device.advance_host(rec.end_us)


# -- memcpy2d ---------------------------------------------------------------------------
def memcpy2d(
    rt: Runtime,
    dst: int,
    dpitch: int,
    src: int,
    spitch: int,
    width: int,
    height: int,
    kind: int,
    stream: int | None = None,
) -> None:
    """aclrtMemcpy2d(Async): `height` rows of `width` bytes, row starts `dpitch`/`spitch` apart.

    CANN's checks come first (NULL pointers, zero width or height, width above a pitch, kind
    other than H2D/D2H: 100000). Then both whole 2-D spans are validated like any copy range,
    so a huge height (a negative one wraps to 2**64-1 as size_t) is refused before any byte
    moves, and the rows move in one strided numpy copy: no loop over a count the caller chose.
    """
    api = "aclrtMemcpy2d" if stream is None else "aclrtMemcpy2dAsync"
    rt.check_injection(api)
    for name, value in (("dst", dst), ("src", src)):
        if value == 0:
            raise rt.fail(codes.ACL_ERROR_INVALID_PARAM, api, f"{name} is NULL (0)")
    for name, value in (("height", height), ("width", width)):
        if value == 0:
            raise rt.fail(codes.ACL_ERROR_INVALID_PARAM, api, f"{name} must be > 0")
    if width > spitch or width > dpitch:
        raise rt.fail(
            codes.ACL_ERROR_INVALID_PARAM,
            api,
            f"width {width} must not be larger than spitch {spitch} and dpitch {dpitch}",
        )
    if kind not in (H2D, D2H):
        raise rt.fail(
            codes.ACL_ERROR_INVALID_PARAM,
            api,
            f"kind {kind} is not supported: 2-D copies are MEMCPY_HOST_TO_DEVICE (1) "
            "or MEMCPY_DEVICE_TO_HOST (2)",
        )
    s: Stream | None = rt.resolve_stream(stream, api) if stream is not None else None
    dst_span = (height - 1) * dpitch + width
    src_span = (height - 1) * spitch + width
    site = user_site(2)
    dev: Device | None = None
    if device_of(src) is not None:
        dev, real_src = _device_range(rt, src, src_span, api, "src", site)
    else:
        _host_range(rt, src, src_span, api, "src", site)
        _check_pending_read(rt, src, src_span, api, site)
        real_src = src
    if device_of(dst) is not None:
        dev, real_dst = _device_range(rt, dst, dst_span, api, "dst", site)
    else:
        _host_range(rt, dst, dst_span, api, "dst", site, write=True)
        real_dst = dst
    if dev is None:
        raise rt.fail(codes.ACL_ERROR_RT_PARAM_INVALID, api, "dst and src are both host memory")
    if dst == src:
        return
    rows_out = np.lib.stride_tricks.as_strided(
        host_array(real_dst, dst_span), (height, width), (dpitch, 1)
    )
    rows_in = np.lib.stride_tricks.as_strided(
        host_array(real_src, src_span), (height, width), (spitch, 1)
    )
    np.copyto(rows_out, rows_in)
    actual = D2H if device_of(src) is not None else H2D
    c = _copy_cost(dev, actual, width * height)
    if s is None:
        with dev.lock:
            start = dev.host_us
            dev.host_us = start + c.duration_us
        if hooks.work_listeners:
            _emit_sync(dev, actual, c, start, site)
        return
    rec = place(s, "memcpy", KIND_NAMES[actual], _OP_TYPES[actual], c, (), (), site)
    s.device.advance_host(rec.end_us)  # copied at once, so the call waits as for pageable memory


# -- memset -----------------------------------------------------------------------------
def memset(
    rt: Runtime, ptr: int, max_count: int, value: int, count: int, stream: int | None = None
) -> None:
    api = "aclrtMemset" if stream is None else "aclrtMemsetAsync"
    rt.check_injection(api)
    if ptr == 0:
        raise rt.fail(codes.ACL_ERROR_INVALID_PARAM, api, "devPtr is NULL (0)")
    if count == 0:
        return
    s: Stream | None = rt.resolve_stream(stream, api) if stream is not None else None
    dev = rt.current_device(api)
    if count > max_count:
        raise rt.fail(
            codes.ACL_ERROR_RT_PARAM_INVALID,
            api,
            f"count {count} is larger than maxCount {max_count}",
        )
    site = user_site(2)
    if device_of(ptr) is not None:
        dev, _ = _device_range(rt, ptr, count, api, "devPtr", site)
        dev.memory.fill(ptr, value & 0xFF, count)
    else:
        _host_range(rt, ptr, count, api, "devPtr", site, write=True)
        ctypes.memset(ptr, value & 0xFF, count)
    p = dev.profile
    dur = p.launch_overhead_us + count / p.effective_bandwidth_Bps * 1e6
    c = Cost(
        duration_us=dur,
        bound="memory",
        unit="MEMSET",
        bytes_moved=count,
        time_by_unit={"memory": dur},
    )
    target = (
        s if s is not None else dev.default_context.default_stream if dev.default_context else None
    )
    if target is not None:
        rec = place(target, "memset", "MEMSET", "Memset", c, (), (), site)
        if s is None:
            dev.advance_host(rec.end_us)
