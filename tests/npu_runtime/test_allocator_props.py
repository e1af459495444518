"""Property tests for the device allocator: no overlap, alignment, accounting, fragmentation."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from npu_runtime.core.memory import (
    HUGE_PAGE,
    DeviceMemory,
    OutOfMemory,
    reserved_size,
    uses_huge_pages,
)

CAPACITY = 64 << 20  # a small device keeps exhaustion reachable

ops = st.lists(
    st.one_of(
        st.tuples(st.just("malloc"), st.integers(1, 8 << 20), st.sampled_from([0, 1, 2, 6])),
        st.tuples(st.just("free"), st.integers(0, 1000), st.just(0)),
    ),
    max_size=60,
)


@settings(max_examples=150, deadline=None)
@given(ops)
def test_allocator_invariants(script: list[tuple[str, int, int]]) -> None:
    mem = DeviceMemory(0, CAPACITY)
    live: list[int] = []
    for op, a, policy in script:
        if op == "malloc":
            try:
                b = mem.malloc(a, policy)
            except OutOfMemory as oom:
                # A failure only when no free block can hold the request at its alignment.
                align = HUGE_PAGE if uses_huge_pages(a, policy) else 64
                for start, size in mem.free_blocks():
                    aligned = -(-start // align) * align
                    assert aligned + oom.need > start + size
                continue
            assert b.reserved == reserved_size(a, policy) >= a
            assert b.addr % (HUGE_PAGE if b.huge else 64) == 0
            live.append(b.addr)
        elif live:
            addr = live.pop(a % len(live))
            assert mem.free(addr) is not None
            assert mem.free(addr) is None  # a second free finds nothing
        _check(mem)
    for addr in live:
        mem.free(addr)
    _check(mem)
    assert mem.used == 0 and mem.free_blocks() == [(mem.base, CAPACITY)]


def _check(mem: DeviceMemory) -> None:
    spans = sorted((b.addr, b.addr + b.consumed) for b in mem.live.values())
    spans += [(a, a + n) for a, n in mem.free_blocks()]
    spans.sort()
    # Live and free spans tile the device exactly: no overlap, no lost bytes.
    pos = mem.base
    for lo, hi in spans:
        assert lo >= pos, "overlap"
        pos = hi
    assert pos <= mem.base + CAPACITY
    assert sum(b.consumed for b in mem.live.values()) == mem.used
    free = [n for _, n in mem.free_blocks()]
    assert sum(free) == mem.free_bytes() == CAPACITY - mem.used
    assert mem.largest_free_block() == max(free, default=0)
    # Adjacent free blocks are always merged.
    blocks = mem.free_blocks()
    for (a, n), (b, _) in zip(blocks, blocks[1:], strict=False):
        assert a + n < b
    if mem.free_bytes():
        assert 0.0 <= mem.fragmentation() < 1.0


@settings(max_examples=50, deadline=None)
@given(st.lists(st.integers(1, 1 << 16), min_size=1, max_size=40))
def test_find_maps_every_byte_of_a_block_to_it(sizes: list[int]) -> None:
    mem = DeviceMemory(0, CAPACITY)
    blocks = [mem.malloc(s, 2) for s in sizes]
    for b in blocks:
        assert mem.find(b.addr) is b
        assert mem.find(b.end - 1) is b
        after = mem.find(b.end)
        assert after is None or after.addr == b.end


def test_huge_first_falls_back_to_normal_pages_huge_only_does_not() -> None:
    mem = DeviceMemory(0, 8 << 20)
    pad = mem.malloc(64, 2)  # pushes the free space off the 2 MiB boundary ...
    mem.malloc((6 << 20) - 64 - 64, 2)  # ... and leaves under 2 MiB aligned room at the end
    assert mem.largest_free_block() < HUGE_PAGE + (1 << 20)
    with pytest.raises(OutOfMemory):
        mem.malloc(3 << 19, 1)  # HUGE_ONLY 1.5 MiB needs a whole aligned 2 MiB page
    b = mem.malloc(3 << 19, 0)  # HUGE_FIRST takes normal pages instead
    assert not b.huge and b.addr % 64 == 0
    assert pad.addr == mem.base
