"""Host memory the emulator may touch: real process addresses, checked before every access.

pyACL hands out real addresses (numpy_to_ptr, bytes_to_ptr, malloc_host) and samples copy
device data straight into them, so we do the same and validate each range against the
live buffers we know about before any ctypes.memmove. numpy arrays are held by weak
reference; bytes cannot be, so they are held strongly and dropped by a sweep once the
user's last reference is gone (sweeps run every 256 registrations or 256 MiB held).
"""

from __future__ import annotations

import bisect
import ctypes
import sys
import threading
import weakref
from dataclasses import dataclass

import numpy as np

from npu_runtime.records import SourceSite

_SWEEP_EVERY = 256  # registrations between sweeps for buffers the user has dropped
_SWEEP_BYTES = 256 << 20  # strongly held bytes between sweeps
_RELEASED_HISTORY = 256  # collected arrays remembered to explain a dangling pointer


@dataclass(slots=True)
class HostBuffer:
    start: int
    size: int
    kind: str  # "numpy", "bytes", "malloc_host", "view"
    owner: object  # the object owning the memory (a weakref.ref for numpy arrays)
    site: SourceSite | None = None
    writable: bool = True  # False for read-only arrays (a memmap opened "r", a view of bytes)

    @property
    def end(self) -> int:
        return self.start + self.size

    def alive(self) -> bool:
        """False once the user dropped the memory (its address may be reused)."""
        if self.kind == "numpy":
            return self.owner() is not None  # type: ignore[operator]
        if self.kind == "bytes":
            # our reference + getrefcount's argument: nobody else holds it
            return sys.getrefcount(self.owner) > 2
        return True


class HostMemory:
    """Registry of live host buffers, keyed by start address."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._starts: list[int] = []
        self._bufs: dict[int, HostBuffer] = {}
        self._since_sweep = 0
        self._held_since_sweep = 0
        self.released: dict[int, HostBuffer] = {}
        # malloc_host blocks by address; freed ones are remembered for diagnosis
        self._pinned: dict[int, HostBuffer] = {}
        self.freed_pinned: dict[int, HostBuffer] = {}
        # destinations of async device-to-host copies not yet synchronised: dst -> (size, site)
        self.pending: dict[int, tuple[int, SourceSite | None]] = {}

    def mark_pending(self, dst: int, size: int, site: SourceSite | None) -> None:
        self.pending[dst] = (size, site)

    def pending_done(self, dst: int) -> None:
        self.pending.pop(dst, None)

    def pending_overlap(self, ptr: int, size: int) -> tuple[bool, SourceSite | None]:
        """(True, launch site) when an unsynchronised async copy writes into [ptr, ptr+size)."""
        for dst, (n, site) in list(self.pending.items()):
            if dst < ptr + size and ptr < dst + n:
                return True, site
        return False, None

    def _add(self, buf: HostBuffer) -> int:
        with self._lock:
            old = self._bufs.get(buf.start)
            if old is None:
                bisect.insort(self._starts, buf.start)
            # Same start: keep the larger live one (an array and a view of it).
            if old is None or buf.size >= old.size or not old.alive():
                self._bufs[buf.start] = buf
            self._since_sweep += 1
            if buf.kind == "bytes":
                self._held_since_sweep += buf.size
            if self._since_sweep >= _SWEEP_EVERY or self._held_since_sweep >= _SWEEP_BYTES:
                self._sweep_locked()
        return buf.start

    def _sweep_locked(self) -> None:
        self._since_sweep = self._held_since_sweep = 0
        for s in [s for s, b in self._bufs.items() if not b.alive()]:
            self._drop_locked(s)

    def _drop_locked(self, start: int) -> None:
        del self._bufs[start]
        del self._starts[bisect.bisect_left(self._starts, start)]

    def register_array(self, arr: np.ndarray, site: SourceSite | None = None) -> int:
        """The data address of `arr` (its first element's, as pyACL returns), now valid for
        copies while `arr` lives.

        What is registered is the memory the array really spans, never `nbytes` from its
        first element: a reversed view starts at its highest address, a broadcast view
        spans one row. Views inside their base buffer register the whole base, so pointer
        arithmetic within it stays valid. Copies that run past the span are refused."""
        start = int(arr.__array_interface__["data"][0])
        if arr.size == 0:
            return start
        lo, hi = array_extent(arr)
        base = arr
        while isinstance(base.base, np.ndarray):
            base = base.base
        b_lo, b_hi = array_extent(base) if base.size else (lo, lo)
        if b_lo <= lo and hi <= b_hi:
            owner, lo, hi, writable = base, b_lo, b_hi, bool(base.flags.writeable)
        else:
            owner, writable = arr, bool(arr.flags.writeable)
        self._add(HostBuffer(lo, hi - lo, "numpy", weakref.ref(owner), site, writable))
        return start

    def register_bytes(self, data: bytes | bytearray, site: SourceSite | None = None) -> int:
        """The address of the internal buffer of `data` (pyACL's bytes_to_ptr)."""
        if isinstance(data, bytearray):
            start = ctypes.addressof(ctypes.c_char.from_buffer(data)) if data else 0
        else:
            start = ctypes.cast(ctypes.c_char_p(data), ctypes.c_void_p).value or 0
        if data:
            self._add(HostBuffer(start, len(data), "bytes", data, site))
        return start

    def register_view(self, start: int, size: int, owner: object) -> None:
        """Register memory we expose ourselves (e.g. device backing handed to ptr_to_numpy)."""
        self._add(HostBuffer(start, size, "view", owner))

    def malloc_host(self, size: int, site: SourceSite | None = None) -> int:
        """A 64-byte aligned host block (pyACL's malloc_host), zero-filled."""
        raw = np.zeros(size + 64, dtype=np.uint8)
        addr = int(raw.__array_interface__["data"][0])
        pad = (-addr) % 64
        start = addr + pad
        buf = HostBuffer(start, size, "malloc_host", raw, site)
        self._add(buf)
        with self._lock:
            self._pinned[start] = buf
            self.freed_pinned.pop(start, None)
        return start

    def free_host(self, ptr: int) -> HostBuffer | None:
        """Release a malloc_host block; None when `ptr` is not a live one."""
        with self._lock:
            buf = self._pinned.pop(ptr, None)
            if buf is None:
                return None
            if self._bufs.get(ptr) is buf:
                self._drop_locked(ptr)
            self.freed_pinned[ptr] = buf
        return buf

    def is_pinned(self, ptr: int) -> bool:
        buf = self.find(ptr)
        return buf is not None and buf.kind == "malloc_host"

    def live_pinned(self) -> list[HostBuffer]:
        with self._lock:
            return list(self._pinned.values())

    def find(self, ptr: int) -> HostBuffer | None:
        """The live buffer containing `ptr`, if any."""
        with self._lock:
            return self._find_locked(ptr)

    def _find_locked(self, ptr: int) -> HostBuffer | None:
        i = bisect.bisect_right(self._starts, ptr) - 1
        # Overlapping registrations are rare; look back a few entries for a container.
        for j in range(i, max(i - 4, -1), -1):
            b = self._bufs[self._starts[j]]
            if 0 <= ptr - b.start < b.size:
                if b.kind != "numpy" or b.alive():
                    # A released bytes object is still held by us, so its memory is safe
                    # to touch; the caller may report the dangling use (see `lookup`).
                    return b
                # A collected array's memory may belong to someone else now.
                self._drop_locked(b.start)
                self.released[b.start] = b
                if len(self.released) > _RELEASED_HISTORY:
                    self.released.pop(next(iter(self.released)))
                return None
        return None

    def find_released(self, ptr: int) -> HostBuffer | None:
        """A collected numpy buffer that contained `ptr` (for diagnosis only)."""
        with self._lock:
            for b in reversed(self.released.values()):
                if b.start <= ptr < b.end:
                    return b
        return None

    def contains(self, ptr: int, size: int) -> bool:
        """True when [ptr, ptr+size) lies inside one known buffer."""
        return self.lookup(ptr, size) is not None

    def lookup(self, ptr: int, size: int) -> HostBuffer | None:
        """The known buffer holding all of [ptr, ptr+size), or None."""
        with self._lock:
            b = self._find_locked(ptr)
            return b if b is not None and ptr + size <= b.start + b.size else None

    def clear(self) -> None:
        with self._lock:
            self._starts.clear()
            self._bufs.clear()
            self._pinned.clear()
            self.freed_pinned.clear()
            self.pending.clear()
            self.released.clear()
            self._since_sweep = self._held_since_sweep = 0


def array_extent(arr: np.ndarray) -> tuple[int, int]:
    """[low, high) of the bytes a non-empty array's elements occupy, whatever its strides."""
    lo = hi = int(arr.__array_interface__["data"][0])
    for n, stride in zip(arr.shape, arr.strides, strict=True):
        reach = (n - 1) * stride
        if reach < 0:
            lo += reach
        else:
            hi += reach
    return lo, hi + arr.itemsize


def host_array(ptr: int, size: int) -> np.ndarray:
    """A uint8 view of validated host memory [ptr, ptr+size)."""
    return np.ctypeslib.as_array((ctypes.c_uint8 * size).from_address(ptr))
