"""`acl.util`: real host addresses for numpy arrays and bytes, and host threads (api.md §3)."""

from __future__ import annotations

import ctypes
import threading
import warnings
from typing import Any

import numpy as np

from npu_runtime.acl._args import parse
from npu_runtime.core.memory import device_of
from npu_runtime.core.runtime import get_runtime
from npu_runtime.sites import user_site

_rt = get_runtime()

# NPY type numbers pyACL accepts (api.md §3)
_NPY_TYPES: dict[int, np.dtype[Any]] = {
    0: np.dtype(np.bool_), 1: np.dtype(np.int8), 2: np.dtype(np.uint8), 3: np.dtype(np.int16),
    4: np.dtype(np.uint16), 5: np.dtype(np.int32), 6: np.dtype(np.uint32), 7: np.dtype(np.int64),
    8: np.dtype(np.uint64), 9: np.dtype(np.int64), 10: np.dtype(np.uint64), 11: np.dtype(np.float32),
    12: np.dtype(np.float64), 23: np.dtype(np.float16),
}  # fmt: skip

_threads: dict[int, threading.Thread] = {}


def numpy_to_ptr(*args: Any) -> int:
    (arr,) = parse("O", args)
    if not isinstance(arr, np.ndarray):
        raise ValueError("needs an ndarray as argument")
    warnings.warn(
        "acl.util.numpy_to_ptr will be deprecated. Please use acl.util.bytes_to_ptr instead.",
        DeprecationWarning,
        stacklevel=2,
    )
    if not arr.flags.c_contiguous:
        # The address is the first element's; copies read it as if the array were dense.
        warnings.warn(
            "acl.util.numpy_to_ptr: the array is not contiguous; "
            "use acl.util.numpy_contiguous_to_ptr",
            UserWarning,
            stacklevel=2,
        )
    return _rt.hostmem.register_array(arr, user_site(2))


def numpy_contiguous_to_ptr(*args: Any) -> tuple[int, np.ndarray]:
    (arr,) = parse("O", args)
    if not isinstance(arr, np.ndarray):
        raise ValueError("needs an ndarray as argument")
    contiguous = np.ascontiguousarray(arr)
    return _rt.hostmem.register_array(contiguous, user_site(2)), contiguous


def bytes_to_ptr(*args: Any) -> int:
    (data,) = parse("O", args)
    if not isinstance(data, bytes | bytearray):
        raise ValueError("needs an byte as argument")
    return _rt.hostmem.register_bytes(data, user_site(2))


def _checked_host(ptr: int, size: int, api: str) -> None:
    if device_of(ptr) is not None:
        raise ValueError(
            f"{api}: 0x{ptr:x} is device memory; copy it to the host with acl.rt.memcpy first"
        )
    if size and not _rt.hostmem.contains(ptr, size):
        raise ValueError(
            f"{api}: 0x{ptr:x}+{size} is not inside a live host buffer "
            "(numpy_to_ptr, bytes_to_ptr or malloc_host)"
        )
    pending, launch = (
        _rt.hostmem.pending_overlap(ptr, size) if _rt.hostmem.pending else (False, None)
    )
    if pending and _rt.sanitizer.enabled:
        _rt.sanitizer.report(
            "read-before-sync",
            api,
            f"host 0x{ptr:x}+{size} is the destination of an async copy not yet synchronised",
            site=user_site(3),
            launch_site=launch,
        )


def ptr_to_numpy(*args: Any) -> np.ndarray:
    ptr, shape, npy_type = parse("kOi", args)
    if not isinstance(shape, tuple) or not all(isinstance(d, int) for d in shape):
        raise TypeError("shape must be a tuple of ints")
    if any(d < 0 for d in shape):
        raise ValueError(f"shape {shape} has a negative dimension")
    dtype = _NPY_TYPES.get(npy_type)
    if dtype is None:
        raise ValueError(f"unsupported npy type {npy_type}")
    count = int(np.prod(shape, dtype=np.int64)) if shape else 1
    size = count * dtype.itemsize
    _checked_host(ptr, size, "acl.util.ptr_to_numpy")
    raw = (ctypes.c_uint8 * size).from_address(ptr)
    out = np.frombuffer(memoryview(raw), dtype=dtype, count=count).reshape(shape)
    buf = _rt.hostmem.lookup(ptr, size) if size else None
    if buf is not None and not buf.writable:
        out.flags.writeable = False  # a write through it would hit read-only pages
    return out


def ptr_to_bytes(*args: Any) -> bytes:
    ptr, size = parse("kk", args)
    _checked_host(ptr, size, "acl.util.ptr_to_bytes")
    return ctypes.string_at(ptr, size)


def start_thread(*args: Any) -> tuple[int, int]:
    fn, fn_args = parse("OO", args)
    if not callable(fn):
        raise TypeError("parameter must be callable")
    # pyACL calls fn(args) with the list as one argument (samples unpack it themselves).
    t = threading.Thread(target=fn, args=(fn_args,), daemon=True)
    t.start()
    assert t.ident is not None
    _threads[t.ident] = t
    return t.ident, 0


def stop_thread(*args: Any) -> int:
    (tid,) = parse("K", args)
    t = _threads.pop(tid, None)
    if t is not None and t is not threading.current_thread():
        t.join(timeout=5.0)
    return 0
