"""torch_npu's caching allocator over the runtime's device memory.

Tensor storage is taken from the device's `DeviceMemory` (the same accounting that
`%npu_mem`, the Devices view, the sanitizer and `acl.rt.get_mem_info` see). Requests are
rounded as torch_npu's allocator rounds them (512 bytes for small blocks, 2 MiB above
1 MiB); a dead tensor's block goes to a per-size free list (reserved, not allocated) and
the next request of that size takes it. Reserved blocks count as taken on the device; an
allocation that does not fit releases them and retries before raising
`torch.OutOfMemoryError` with torch_npu's message, as the real allocator does.

Simplification (documented in docs/torch_npu.md): blocks are not split out of larger
cached segments, so `memory_reserved` counts exactly the cached blocks plus live ones.
"""

from __future__ import annotations

from dataclasses import dataclass

from npu_runtime.core.device import Device
from npu_runtime.core.memory import Block, OutOfMemory
from npu_runtime.records import SourceSite

MIN_BLOCK = 512
SMALL_SIZE = 1 << 20
ROUND_LARGE = 2 << 20
_EB = 1 << 60


def round_size(nbytes: int) -> int:
    """The bytes torch_npu's allocator reserves for a request of `nbytes`."""
    if nbytes <= SMALL_SIZE:
        return max(MIN_BLOCK, -(-nbytes // MIN_BLOCK) * MIN_BLOCK)
    return -(-nbytes // ROUND_LARGE) * ROUND_LARGE


def format_size(n: int) -> str:
    """Sizes as torch's allocator prints them ("20.00 MiB", "5.03 GiB", "512 bytes")."""
    if n < 1024:
        return f"{n} bytes"
    if n < 1 << 20:
        return f"{n / 1024:.2f} KiB"
    if n < 1 << 30:
        return f"{n / (1 << 20):.2f} MiB"
    return f"{n / (1 << 30):.2f} GiB"


@dataclass
class Stats:
    allocated: int = 0
    peak_allocated: int = 0
    peak_reserved: int = 0
    alloc_count: int = 0
    free_count: int = 0
    num_alloc_retries: int = 0
    num_ooms: int = 0


class CachingAllocator:
    """One device's torch allocator: `malloc` and `free` of rounded, cached blocks."""

    def __init__(self, device: Device, capacity_bytes: int) -> None:
        self.device = device
        self.memory = device.memory
        self.capacity = capacity_bytes  # what torch_npu reports as total capacity
        self.stats = Stats()
        self.fraction: float | None = None
        self._cached = 0

    @property
    def reserved(self) -> int:
        return self.stats.allocated + self.cached_bytes

    @property
    def cached_bytes(self) -> int:
        """Bytes of this allocator's blocks waiting in the free lists (rounded sizes)."""
        if self.memory.cached_bytes == 0:  # the device released its cache (all or nothing)
            self._cached = 0
        return self._cached

    def malloc(self, nbytes: int, site: SourceSite | None) -> Block:
        import torch

        if nbytes >= _EB:
            raise torch.OutOfMemoryError(
                "NPU out of memory. Tried to allocate more than 1EB memory."
            )
        size = round_size(nbytes)
        limit = self._limit()
        if limit is not None and self.stats.allocated + size > limit:
            self.stats.num_ooms += 1
            raise torch.OutOfMemoryError(self._message(nbytes))
        mem = self.memory
        if mem.used + size > self.capacity and not mem._cache.get(size):
            mem.release_cache()  # what the real allocator does before giving up
            if mem.used + size > self.capacity:
                self.stats.num_alloc_retries += 1
                self.stats.num_ooms += 1
                raise torch.OutOfMemoryError(self._message(nbytes))
        reuse = bool(mem._cache.get(size))
        try:
            block = mem.malloc_cached(size, site)
        except OutOfMemory:
            self.stats.num_alloc_retries += 1
            self.stats.num_ooms += 1
            raise torch.OutOfMemoryError(self._message(nbytes)) from None
        block.owner = "torch"
        if reuse:
            self._cached = max(self.cached_bytes - size, 0)
        s = self.stats
        s.allocated += size
        s.alloc_count += 1
        if s.allocated > s.peak_allocated:
            s.peak_allocated = s.allocated
        r = s.allocated + self.cached_bytes
        if r > s.peak_reserved:
            s.peak_reserved = r
        return block

    def free(self, block: Block) -> None:
        """Back to the free lists (reserved); the bytes stay taken on the device."""
        self.stats.allocated -= block.size
        self.stats.free_count += 1
        kept = self.memory.free_cached(block.addr, keep=True)
        if kept is not None and self.memory._cache.get(block.size):
            self._cached = self.cached_bytes + block.size

    def empty_cache(self) -> int:
        self.memory.release_resident()
        self._cached = 0
        return self.memory.release_cache()

    def reset_peak(self) -> None:
        self.stats.peak_allocated = self.stats.allocated
        self.stats.peak_reserved = self.reserved

    def _limit(self) -> int | None:
        return None if self.fraction is None else int(self.fraction * self.capacity)

    def _message(self, nbytes: int) -> str:
        mem = self.memory
        allocated = self.stats.allocated
        free = max(self.capacity - mem.used, 0)
        limit = self._limit()
        allowed = f"{format_size(limit)} allowed; " if limit is not None else ""
        return (
            f"NPU out of memory. Tried to allocate {format_size(nbytes)} "
            f"(NPU {self.device.id}; {format_size(self.capacity)} total capacity; "
            f"{format_size(allocated)} already allocated; {format_size(allocated)} current active; "
            f"{format_size(free)} free; {allowed}{format_size(self.reserved)} reserved in total by PyTorch)"
            "If reserved memory is >> allocated memory try setting max_split_size_mb to avoid "
            "fragmentation."
        )
