"""Device memory: an allocator over one device's virtual address space, lazily backed.

Sizes follow aclrtMalloc (api.md §8, hardware.md §4): the size is rounded up to 32 bytes
and 32 bytes of padding are added (none for malloc_align32 and the 1 GB huge-page
policies); start addresses are 64-byte aligned. Huge-page allocations (api.md §7 policy
table: HUGE_ONLY, or HUGE_FIRST above 1 MB) are placed on 2 MiB boundaries and consume
whole 2 MiB pages, as the driver's huge pages do. Free blocks coalesce; fragmentation is
real, so a request larger than the largest free block fails with 207001 even when the
total free bytes would suffice.

The backing store is one anonymous MAP_NORESERVE mapping per device: untouched emulated
HBM costs nothing, and a device address translates to a real address by one addition.
Freed ranges of 2 MiB or more are handed back to the OS (so host RSS tracks emulated
usage), but not at once: the most recently freed ones stay resident up to
`RESIDENT_BUDGET` bytes, so the next large allocation placed there (the allocator's
placement is unchanged; it usually reuses the range just freed) writes into mapped pages
instead of paying a page fault per 4 KiB. As on hardware, fresh device memory is
uninitialised: it may hold what its previous owner wrote.

Tensors (the Pythonic layer) allocate through a small caching allocator, as torch_npu's
does: a dead tensor's small block goes to a per-size free list instead of back to the
address space, and the next result of that size takes it without a best-fit search. The
block counts as freed for the sanitizer (use-after-free and double free are caught, no
leak is reported) but its bytes stay taken: `reserved` memory, which get_mem_info does
not count as free, exactly as on a device where torch_npu caches. `cached_bytes` says how
much; an allocation that would fail for lack of space releases the cache first.
"""

from __future__ import annotations

import bisect
import ctypes
import mmap
import threading
from dataclasses import dataclass

import numpy as np

from npu_runtime.records import SourceSite

DEVICE_VA_BASE = 0x12C0_0000_0000  # above typical user-space heap/mmap ranges in practice
DEVICE_VA_STRIDE = 1 << 40  # one TiB of address space per device
# CANN's runtime keeps per-device tables of RT_MAX_DEV_NUM = 64 entries: no host has more.
MAX_DEVICES = 64
_MAP_NORESERVE = getattr(mmap, "MAP_NORESERVE", 0x4000)

MIB = 1 << 20
HUGE_PAGE = 2 * MIB
NORMAL_ALIGN = 64

# aclrtMemMallocPolicy (api.md §7); the low byte selects the page policy.
HUGE_FIRST, HUGE_ONLY, NORMAL_ONLY = 0, 1, 2
HUGE_FIRST_P2P, HUGE_ONLY_P2P, NORMAL_ONLY_P2P = 3, 4, 5
HUGE1G_ONLY, HUGE1G_ONLY_P2P = 6, 7
_HUGE_ONLY = (HUGE_ONLY, HUGE_ONLY_P2P, HUGE1G_ONLY, HUGE1G_ONLY_P2P)
_FREED_HISTORY = 4096  # freed blocks remembered for use-after-free / double-free reports
# Freed large ranges kept resident for reuse before their pages go back to the OS: a few
# fresh 16 MiB MatMul results' worth, small against any host that runs a 910B profile.
RESIDENT_BUDGET = 256 * MIB
# Tensor blocks up to this size are cached on free, up to CACHE_BUDGET bytes per device.
CACHE_MAX_BLOCK = MIB
CACHE_BUDGET = 64 * MIB
_PAGE = mmap.PAGESIZE
# Zero-fills at least this large discard whole pages instead of writing them.
ZERO_BY_DISCARD = 1 * MIB


def device_base(device_id: int) -> int:
    return DEVICE_VA_BASE + device_id * DEVICE_VA_STRIDE


def device_of(addr: int) -> int | None:
    """The device whose address range holds `addr`, or None for a host address."""
    off = addr - DEVICE_VA_BASE
    if off < 0 or off >= MAX_DEVICES * DEVICE_VA_STRIDE:
        return None
    return off // DEVICE_VA_STRIDE


@dataclass(slots=True)
class Block:
    """One live (or freed) device allocation."""

    addr: int
    size: int  # bytes the user asked for
    reserved: int  # bytes aclrtMalloc reserves (rounding + padding)
    consumed: int  # bytes taken from the address space (placement granularity)
    huge: bool
    policy: int
    site: SourceSite | None = None
    free_site: SourceSite | None = None
    # "torch" for tensor storage of the torch_npu front end: its caching allocator owns the
    # block, so a block still live at exit or device reset is not a leak of the program's.
    owner: str = ""

    @property
    def end(self) -> int:
        return self.addr + self.reserved


def reserved_size(size: int, policy: int, align32_only: bool = False) -> int:
    """Bytes aclrtMalloc reserves for `size` (api.md §8 'aclrtMalloc size rounding')."""
    rounded = (size + 31) // 32 * 32
    if align32_only or (policy & 0xFF) in (HUGE1G_ONLY, HUGE1G_ONLY_P2P):
        return rounded
    return rounded + 32


def uses_huge_pages(size: int, policy: int) -> bool:
    p = policy & 0xFF
    if p in (HUGE_ONLY, HUGE_ONLY_P2P, HUGE1G_ONLY, HUGE1G_ONLY_P2P):
        return True
    if p in (NORMAL_ONLY, NORMAL_ONLY_P2P):
        return False
    # HUGE_FIRST and unknown policies: huge pages above 1 MB (api.md §7).
    return size > MIB


class OutOfMemory(Exception):
    """No free block fits; carries the figures for the message."""

    def __init__(self, need: int, free: int, largest: int) -> None:
        super().__init__(need, free, largest)
        self.need, self.free, self.largest = need, free, largest


class DeviceMemory:
    """Allocator and lazily backed storage for one device."""

    def __init__(self, device_id: int, capacity: int) -> None:
        self.device_id = device_id
        self.base = device_base(device_id)
        self.capacity = capacity
        self._lock = threading.Lock()
        # free blocks as offsets, three views kept in step: start -> size, sorted starts
        # (for merging neighbours) and sorted (size, start) (for best fit in O(log n))
        self._free: dict[int, int] = {0: capacity}
        self._free_starts: list[int] = [0]
        self._by_size: list[tuple[int, int]] = [(capacity, 0)]
        self._live_starts: list[int] = []
        self.live: dict[int, Block] = {}
        self.freed: dict[int, Block] = {}
        self.used = 0
        self.peak = 0
        self._map: mmap.mmap | None = None
        self._host_base = 0
        # Freed ranges whose pages are still resident: offset -> length, oldest first (the
        # dict's order is the eviction order); sorted offsets find the ones a new block takes.
        self.resident_budget = RESIDENT_BUDGET
        self._resident: dict[int, int] = {}
        self._resident_starts: list[int] = []
        self.resident_bytes = 0
        # The caching allocator's free lists (Tensor blocks): requested size -> blocks.
        self._cache: dict[int, list[Block]] = {}
        self.cached_bytes = 0
        self.cache_budget = CACHE_BUDGET

    # -- backing ------------------------------------------------------------------
    def _backing(self) -> mmap.mmap:
        if self._map is None:
            with self._lock:
                if self._map is None:
                    flags = mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | _MAP_NORESERVE
                    try:
                        m = mmap.mmap(-1, self.capacity, flags=flags)
                    except OSError as exc:
                        raise MemoryError(
                            f"cannot reserve {self.capacity >> 30} GiB of address space to back "
                            f"device {self.device_id} ({exc.strerror}); with vm.overcommit_memory=2 "
                            "use a smaller --device profile or fewer devices"
                        ) from None
                    self._host_base = ctypes.addressof(ctypes.c_char.from_buffer(m))
                    self._map = m
        return self._map

    def host_address(self, addr: int) -> int:
        """The real process address backing device address `addr` (caller checked bounds)."""
        if self._map is None:
            self._backing()
        return self._host_base + (addr - self.base)

    def view(self, addr: int, nbytes: int) -> np.ndarray:
        """A writable uint8 view of [addr, addr+nbytes); ValueError outside live memory."""
        self.check_range(addr, nbytes)
        return np.frombuffer(self._backing(), np.uint8, count=nbytes, offset=addr - self.base)

    def fill(self, addr: int, value: int, nbytes: int) -> None:
        """Set [addr, addr+nbytes) to byte `value` (caller checked bounds).

        Zeros over whole pages are given back to the OS instead of written: a private
        anonymous page reads as zero once discarded, so zero-filling untouched memory keeps
        it unbacked (a 40 GB memset of zeros costs no host RAM) and frees what was backed."""
        real = self.host_address(addr)
        if value or nbytes < ZERO_BY_DISCARD:
            ctypes.memset(real, value, nbytes)
            return
        off = addr - self.base
        lo = (off + _PAGE - 1) // _PAGE * _PAGE
        hi = (off + nbytes) // _PAGE * _PAGE
        ctypes.memset(real, 0, lo - off)
        assert self._map is not None  # host_address mapped it
        self._map.madvise(mmap.MADV_DONTNEED, lo, hi - lo)
        ctypes.memset(self._host_base + hi, 0, off + nbytes - hi)

    # -- lookup -------------------------------------------------------------------
    def find(self, addr: int) -> Block | None:
        """The live block whose reserved range contains `addr`."""
        with self._lock:  # another thread may be inserting or removing blocks
            i = bisect.bisect_right(self._live_starts, addr) - 1
            if i < 0:
                return None
            b = self.live[self._live_starts[i]]
        return b if addr < b.addr + b.reserved else None

    def find_freed(self, addr: int) -> Block | None:
        """A remembered freed block containing `addr` (for diagnosis only)."""
        with self._lock:
            b = self.freed.get(addr)
            if b is not None:
                return b
            for b in reversed(self.freed.values()):
                if b.addr <= addr < b.end:
                    return b
        return None

    def check_range(self, addr: int, nbytes: int) -> Block:
        b = self.find(addr)
        if b is None or addr + nbytes > b.end:
            raise ValueError(f"device range 0x{addr:x}+{nbytes} is not inside a live allocation")
        return b

    # -- allocate / free ------------------------------------------------------------
    def malloc(
        self, size: int, policy: int, site: SourceSite | None = None, align32_only: bool = False
    ) -> Block:
        with self._lock:
            return self._malloc_locked(size, policy, site, align32_only)

    def _malloc_locked(
        self, size: int, policy: int, site: SourceSite | None, align32_only: bool
    ) -> Block:
        reserved = reserved_size(size, policy, align32_only)
        huge = uses_huge_pages(size, policy)
        align = HUGE_PAGE if huge else NORMAL_ALIGN
        consumed = (reserved + align - 1) // align * align
        off = self._take(consumed, align)
        if off is None and huge and (policy & 0xFF) not in _HUGE_ONLY:
            # HUGE_FIRST falls back to normal pages when no huge page run is free (§7).
            huge, align = False, NORMAL_ALIGN
            consumed = (reserved + align - 1) // align * align
            off = self._take(consumed, align)
        if off is None and self.cached_bytes:
            # Before failing, give up the cache's reserve (torch_npu does the same) and retry.
            self._release_cache_locked()
            return self._malloc_locked(size, policy, site, align32_only)
        if off is None:
            raise OutOfMemory(consumed, self.capacity - self.used, self._largest_locked())
        if self._resident:
            self._unresident(off, consumed)
        addr = self.base + off
        block = Block(addr, size, reserved, consumed, huge, policy, site)
        self.live[addr] = block
        bisect.insort(self._live_starts, addr)
        self.freed.pop(addr, None)
        self.used += consumed
        self.peak = max(self.peak, self.used)
        return block

    # -- the caching allocator (Tensor blocks) ------------------------------------------
    def malloc_cached(self, size: int, site: SourceSite | None = None) -> Block:
        """A default-policy block of `size` bytes, from the cache when one is free."""
        with self._lock:
            blocks = self._cache.get(size)
            if not blocks:
                return self._malloc_locked(size, HUGE_FIRST, site, False)
            block = blocks.pop()
            self.cached_bytes -= block.consumed
            addr = block.addr
            block.site, block.free_site = site, None
            self.live[addr] = block
            bisect.insort(self._live_starts, addr)
            self.freed.pop(addr, None)
        return block

    def free_cached(
        self, addr: int, site: SourceSite | None = None, keep: bool = False
    ) -> Block | None:
        """`free`, keeping a small default-policy block reserved for `malloc_cached`.

        `keep` caches the block whatever its size (torch's caching allocator keeps every
        block until empty_cache or an allocation that would otherwise fail)."""
        with self._lock:
            block = self.live.get(addr)
            if block is not None and (
                block.policy != HUGE_FIRST
                or not keep
                and (
                    block.consumed > CACHE_MAX_BLOCK
                    or block.reserved != block.size + (-block.size) % 32 + 32  # not align32
                    or self.cached_bytes + block.consumed > self.cache_budget
                )
            ):
                block = None
            if block is not None:
                del self.live[addr]
                del self._live_starts[bisect.bisect_left(self._live_starts, addr)]
                block.free_site = site
                self._remember_freed(block)
                self._cache.setdefault(block.size, []).append(block)
                self.cached_bytes += block.consumed
        return block if block is not None else self.free(addr, site)

    def _release_cache_locked(self) -> None:
        for blocks in self._cache.values():
            for block in blocks:
                self.used -= block.consumed
                self._release(block.addr - self.base, block.consumed)
        self._cache.clear()
        self.cached_bytes = 0

    def release_cache(self) -> int:
        """Return every cached block to the free address space; returns the bytes released."""
        with self._lock:
            total = self.cached_bytes
            self._release_cache_locked()
        return total

    @property
    def allocated_bytes(self) -> int:
        """Bytes of live blocks (what the program holds), without the cache's reserve."""
        return self.used - self.cached_bytes

    def _take(self, need: int, align: int) -> int | None:
        """Best fit: the smallest free block that holds `need` at `align` (lowest address on ties)."""
        by_size = self._by_size
        for k in range(bisect.bisect_left(by_size, (need, -1)), len(by_size)):
            size, start = by_size[k]
            aligned = (start + align - 1) // align * align
            if aligned + need <= start + size:
                break
        else:
            return None
        tail = start + size - (aligned + need)
        if aligned == start and tail:
            # The usual case: carve from the front; the block keeps its place among starts.
            self._move_free(start, size, start + need, tail)
            return aligned
        self._remove_free(start)
        if aligned > start:  # keep the alignment gap free
            self._add_free(start, aligned - start)
        if tail:
            self._add_free(aligned + need, tail)
        return aligned

    def _move_free(self, old: int, old_size: int, new: int, new_size: int) -> None:
        """Replace free block `old` by `new`, which lies between the same neighbours."""
        del self._free[old]
        self._free[new] = new_size
        self._free_starts[bisect.bisect_left(self._free_starts, old)] = new
        del self._by_size[bisect.bisect_left(self._by_size, (old_size, old))]
        bisect.insort(self._by_size, (new_size, new))

    def _add_free(self, start: int, size: int) -> None:
        self._free[start] = size
        bisect.insort(self._free_starts, start)
        bisect.insort(self._by_size, (size, start))

    def _remove_free(self, start: int) -> int:
        size = self._free.pop(start)
        del self._free_starts[bisect.bisect_left(self._free_starts, start)]
        del self._by_size[bisect.bisect_left(self._by_size, (size, start))]
        return size

    def free(self, addr: int, site: SourceSite | None = None) -> Block | None:
        """Release the block starting at `addr`; None if no live block starts there."""
        with self._lock:
            block = self.live.pop(addr, None)
            if block is None:
                return None
            del self._live_starts[bisect.bisect_left(self._live_starts, addr)]
            self.used -= block.consumed
            block.free_site = site
            self._remember_freed(block)
            self._release(addr - self.base, block.consumed)
            if block.consumed >= HUGE_PAGE and self._map is not None:
                self._keep_resident(addr - self.base, block.consumed)
        return block

    def _remember_freed(self, block: Block) -> None:
        self.freed[block.addr] = block
        if len(self.freed) > _FREED_HISTORY:
            self.freed.pop(next(iter(self.freed)))

    # -- resident freed ranges --------------------------------------------------------------
    def _keep_resident(self, off: int, size: int) -> None:
        """Remember freed [off, off+size) as resident; discard the oldest beyond the budget.

        Called under the lock: a range is discarded only while it is still free."""
        self._resident[off] = size
        bisect.insort(self._resident_starts, off)
        self.resident_bytes += size
        while self.resident_bytes > self.resident_budget:
            old = next(iter(self._resident))
            self._discard(old, self._pop_resident(old))

    def _pop_resident(self, off: int) -> int:
        size = self._resident.pop(off)
        del self._resident_starts[bisect.bisect_left(self._resident_starts, off)]
        self.resident_bytes -= size
        return size

    def _discard(self, off: int, size: int) -> None:
        """Give the whole pages inside free range [off, off+size) back to the OS."""
        lo = (off + _PAGE - 1) // _PAGE * _PAGE
        hi = (off + size) // _PAGE * _PAGE
        if hi > lo and self._map is not None:
            self._map.madvise(mmap.MADV_DONTNEED, lo, hi - lo)

    def _unresident(self, off: int, size: int) -> None:
        """A new block takes [off, off+size): drop it from the resident ranges it overlaps,
        keeping their free remainders (as the newest entries: they border a block in use)."""
        starts = self._resident_starts
        end = off + size
        i = max(bisect.bisect_right(starts, off) - 1, 0)
        while i < len(starts) and starts[i] < end:
            s = starts[i]
            e = s + self._resident[s]
            if e <= off:
                i += 1
                continue
            self._pop_resident(s)
            for lo, hi in ((s, off), (end, e)):
                if hi - lo >= _PAGE:  # smaller pieces hold no whole page to discard later
                    self._resident[lo] = hi - lo
                    bisect.insort(starts, lo)
                    self.resident_bytes += hi - lo
            i = bisect.bisect_right(starts, s)  # the remainders lie outside [off, end)

    def release_resident(self) -> int:
        """Give every resident freed range back to the OS now; returns the bytes released."""
        with self._lock:
            total = self.resident_bytes
            for off in list(self._resident):
                self._discard(off, self._pop_resident(off))
        return total

    def _release(self, off: int, size: int) -> None:
        """Return [off, off+size) to the free list, merging with its neighbours."""
        starts = self._free_starts
        i = bisect.bisect_left(starts, off)
        nxt = off + size
        merge_next = i < len(starts) and starts[i] == nxt
        prev = starts[i - 1] if i > 0 else -1
        merge_prev = prev >= 0 and prev + self._free[prev] == off
        if merge_next and not merge_prev:
            # The usual case: the freed block grows its right neighbour to the left.
            nsize = self._free[nxt]
            self._move_free(nxt, nsize, off, size + nsize)
            return
        if merge_next:
            size += self._remove_free(nxt)
        if merge_prev:
            psize = self._free[prev]
            self._move_free(prev, psize, prev, psize + size)
            return
        self._add_free(off, size)

    # -- figures --------------------------------------------------------------------
    def _largest_locked(self) -> int:
        return self._by_size[-1][0] if self._by_size else 0

    def free_bytes(self) -> int:
        return self.capacity - self.used

    def largest_free_block(self) -> int:
        with self._lock:
            return self._largest_locked()

    def free_blocks(self) -> list[tuple[int, int]]:
        """(device address, size) of every free block, ascending."""
        with self._lock:
            return [(self.base + s, self._free[s]) for s in self._free_starts]

    def fragmentation(self) -> float:
        """1 - largest free block / free bytes: 0 when the free space is one block."""
        free = self.free_bytes()
        return 0.0 if free == 0 else 1.0 - self.largest_free_block() / free
