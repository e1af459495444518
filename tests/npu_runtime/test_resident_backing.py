"""Freed large device ranges stay resident (bounded, oldest discarded first) for reuse,
without changing what the program sees: placement, accounting, sanitizer findings."""

from __future__ import annotations

import contextlib
from types import ModuleType

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from npu_runtime.core.memory import MIB, DeviceMemory, OutOfMemory
from npu_runtime.core.runtime import Runtime

pytestmark = pytest.mark.filterwarnings("ignore:acl.util.numpy_to_ptr will be deprecated")

H2D, D2H = 1, 2
HBM = 1
# 4 MiB - 64 reserves 4 MiB - 32 with its padding: exactly two 2 MiB huge pages.
BLOCK = 4 * MIB - 64


@pytest.fixture
def dev(acl: ModuleType) -> ModuleType:
    assert acl.init() == 0
    assert acl.rt.set_device(0) == 0
    return acl


def _memory(rt: Runtime) -> DeviceMemory:
    return rt.devices[0].memory


def _fill(acl: ModuleType, ptr: int, value: int, n: int = BLOCK) -> None:
    host = np.full(n, value, np.uint8)
    assert acl.rt.memcpy(ptr, n, acl.util.numpy_to_ptr(host), n, H2D) == 0


def _read(acl: ModuleType, ptr: int, n: int = BLOCK) -> np.ndarray:
    host = np.empty(n, np.uint8)
    assert acl.rt.memcpy(acl.util.numpy_to_ptr(host), n, ptr, n, D2H) == 0
    return host


def test_freed_large_block_is_reused_while_resident(dev: ModuleType, bare_rt: Runtime) -> None:
    acl = dev
    mem = _memory(bare_rt)
    ptr, ret = acl.rt.malloc(BLOCK, 0)
    assert ret == 0
    _fill(acl, ptr, 7)
    assert acl.rt.free(ptr) == 0
    assert mem.resident_bytes == 4 * MIB
    again, ret = acl.rt.malloc(BLOCK, 0)
    assert (again, ret) == (ptr, 0)  # placement is the allocator's, as before
    assert mem.resident_bytes == 0  # in use again: no longer a freed range
    # Fresh device memory is uninitialised, as on hardware: here it still holds the old
    # values, which is how we know its pages were never given back.
    assert (_read(acl, again) == 7).all()
    assert acl.rt.free(again) == 0


def test_resident_bytes_are_bounded_and_oldest_go_first(dev: ModuleType, bare_rt: Runtime) -> None:
    acl = dev
    mem = _memory(bare_rt)
    mem.resident_budget = 8 * MIB
    ptrs = []
    for value in (1, 2, 3):
        ptr, ret = acl.rt.malloc(BLOCK, 0)
        assert ret == 0
        _fill(acl, ptr, value)
        ptrs.append(ptr)
    for ptr in ptrs:
        assert acl.rt.free(ptr) == 0
        assert mem.resident_bytes <= 8 * MIB
    assert mem.resident_bytes == 8 * MIB
    again = []
    for _ in ptrs:
        ptr, ret = acl.rt.malloc(BLOCK, 0)
        assert ret == 0
        again.append(ptr)
    assert again == ptrs
    # The first freed block was over budget: its pages went back to the OS (zero pages).
    assert (_read(acl, again[0]) == 0).all()
    assert (_read(acl, again[1]) == 2).all()
    assert (_read(acl, again[2]) == 3).all()
    for ptr in again:
        assert acl.rt.free(ptr) == 0


def test_a_smaller_block_keeps_the_rest_of_the_range_resident(
    dev: ModuleType, bare_rt: Runtime
) -> None:
    acl = dev
    mem = _memory(bare_rt)
    big, ret = acl.rt.malloc(4 * BLOCK, 2)  # normal pages: 64-byte placement
    assert ret == 0
    _fill(acl, big, 5, 4 * BLOCK)
    assert acl.rt.free(big) == 0
    before = mem.resident_bytes
    assert before > MIB
    small, ret = acl.rt.malloc(MIB, 2)
    assert (small, ret) == (big, 0)
    taken = next(b.consumed for b in mem.live.values() if b.addr == small)
    assert mem.resident_bytes == before - taken
    assert acl.rt.free(small) == 0


def test_accounting_ignores_resident_ranges(dev: ModuleType, bare_rt: Runtime) -> None:
    acl = dev
    mem = _memory(bare_rt)
    free0, total, _ = acl.rt.get_mem_info(HBM)
    largest0 = mem.largest_free_block()
    ptr, _ = acl.rt.malloc(16 * MIB, 0)
    _fill(acl, ptr, 1)
    assert acl.rt.free(ptr) == 0
    assert mem.resident_bytes == 18 * MIB  # 16 MiB + padding takes nine huge pages
    assert acl.rt.get_mem_info(HBM) == (free0, total, 0)
    assert mem.largest_free_block() == largest0
    assert mem.fragmentation() == 0.0


def test_release_resident_gives_the_pages_back(dev: ModuleType, bare_rt: Runtime) -> None:
    acl = dev
    mem = _memory(bare_rt)
    ptr, _ = acl.rt.malloc(BLOCK, 0)
    _fill(acl, ptr, 9)
    assert acl.rt.free(ptr) == 0
    assert mem.release_resident() == 4 * MIB
    assert mem.resident_bytes == 0
    again, _ = acl.rt.malloc(BLOCK, 0)
    assert again == ptr
    assert (_read(acl, again) == 0).all()
    assert acl.rt.free(again) == 0


def test_use_after_free_of_a_resident_range_is_still_caught(
    dev: ModuleType, bare_rt: Runtime
) -> None:
    acl = dev
    ptr, _ = acl.rt.malloc(BLOCK, 0)
    _fill(acl, ptr, 1)
    assert acl.rt.free(ptr) == 0
    assert _memory(bare_rt).resident_bytes == 4 * MIB
    host = np.zeros(64, np.uint8)
    assert acl.rt.memcpy(ptr, 64, acl.util.numpy_to_ptr(host), 64, H2D) == 107000
    found = [f.check for f in bare_rt.sanitizer.findings]
    assert found == ["use-after-free"]


def test_resident_ranges_are_no_leak_at_finalize(dev: ModuleType, bare_rt: Runtime) -> None:
    acl = dev
    for _ in range(3):
        ptr, _ = acl.rt.malloc(16 * MIB, 0)
        _fill(acl, ptr, 1)
        assert acl.rt.free(ptr) == 0
    assert _memory(bare_rt).resident_bytes > 0
    assert acl.rt.reset_device(0) == 0
    assert acl.finalize() == 0
    assert bare_rt.sanitizer.findings == []
    assert 0 not in bare_rt.devices  # the device's memory, resident ranges and all, is gone


def test_one_block_over_several_resident_ranges_keeps_only_the_remainder() -> None:
    mem = DeviceMemory(5, 64 * MIB)
    blocks = [mem.malloc(4 * MIB - 64, 2) for _ in range(3)]  # normal pages, 4 MiB each
    mem.view(blocks[0].addr, 1)[0] = 1  # map the backing
    for b in blocks:
        mem.free(b.addr)
    assert mem.resident_bytes == 12 * MIB
    big = mem.malloc(10 * MIB - 64, 2)  # covers the first two ranges and half the third
    assert big.addr == mem.base
    assert mem.resident_bytes == 2 * MIB
    assert mem._resident == {10 * MIB: 2 * MIB}


ops = st.lists(
    st.one_of(
        st.tuples(st.just("malloc"), st.integers(1, 6 * MIB), st.sampled_from([0, 2])),
        st.tuples(st.just("free"), st.integers(0, 1000), st.just(0)),
    ),
    max_size=40,
)


@settings(max_examples=100, deadline=None)
@given(ops, st.sampled_from([0, 4 * MIB, 16 * MIB]))
def test_resident_ranges_are_always_free_and_within_budget(
    script: list[tuple[str, int, int]], budget: int
) -> None:
    mem = DeviceMemory(5, 48 * MIB)
    mem.resident_budget = budget
    mem.view(mem.malloc(64, 2).addr, 1)[0] = 1  # map the backing, so frees are remembered
    for kind, n, policy in script:
        if kind == "malloc":
            with contextlib.suppress(OutOfMemory):
                mem.malloc(n, policy)
        elif mem.live:
            mem.free(list(mem.live)[n % len(mem.live)])
        assert mem.resident_bytes <= budget
        assert mem.resident_bytes == sum(mem._resident.values())
        assert sorted(mem._resident) == mem._resident_starts
        free = mem.free_blocks()
        for off, size in mem._resident.items():
            start = mem.base + off
            # every resident range lies inside one free block: never under a live one
            assert any(f <= start and start + size <= f + fs for f, fs in free)
