"""The Tensor caching allocator: dead tensors' small blocks are reused for new results,
reported as reserved (not free, not leaked), and freed memory stays checked."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import npu_runtime.acl as acl
from npu_runtime.core.memory import HUGE_FIRST, DeviceMemory, OutOfMemory
from npu_runtime.core.runtime import Runtime, get_runtime
from npu_runtime.tensor import Tensor

pytestmark = pytest.mark.filterwarnings("ignore:acl.util.numpy_to_ptr will be deprecated")
HBM, H2D = 1, 1


@pytest.fixture
def rt() -> Iterator[Runtime]:
    runtime = get_runtime()
    runtime.reset()
    runtime.sanitizer.enabled = True
    yield runtime
    runtime.reset()


def _pair() -> tuple[Tensor, Tensor]:
    x = np.arange(16, dtype=np.float16)
    return Tensor(x), Tensor(x)


def test_a_dead_result_block_is_reused_by_the_next_result(rt: Runtime) -> None:
    a, b = _pair()
    mem = rt.devices[0].memory
    r = a + b
    addr, consumed = r.addr, mem.live[r.addr].consumed
    del r
    assert mem.cached_bytes == consumed
    assert addr not in mem.live  # freed as far as the program and the sanitizer know
    r2 = a * b
    assert r2.addr == addr
    assert mem.cached_bytes == 0
    np.testing.assert_array_equal(r2.numpy(), np.arange(16, dtype=np.float16) ** 2)


def test_cached_blocks_are_reserved_not_free_and_release_gives_them_back(rt: Runtime) -> None:
    a, b = _pair()
    mem = rt.devices[0].memory
    free0, _, _ = acl.rt.get_mem_info(HBM)
    allocated0 = mem.allocated_bytes
    results = [a + b for _ in range(4)]
    held = mem.allocated_bytes - allocated0
    assert held > 0
    del results
    # torch_npu's rule: cached memory is reserved by the process, so the device does not
    # report it free; what the program holds is back where it was.
    assert mem.allocated_bytes == allocated0
    assert mem.cached_bytes == held
    assert acl.rt.get_mem_info(HBM)[0] == free0 - held
    assert mem.release_cache() == held
    assert mem.cached_bytes == 0
    assert acl.rt.get_mem_info(HBM)[0] == free0


def test_the_cache_is_bounded(rt: Runtime) -> None:
    a, b = _pair()
    mem = rt.devices[0].memory
    results = [a + b for _ in range(4)]
    one = mem.live[results[0].addr].consumed
    mem.cache_budget = 2 * one
    del results
    assert mem.cached_bytes == 2 * one  # the other two went back to the address space


def test_cached_blocks_are_no_leak_at_finalize(rt: Runtime) -> None:
    a, b = _pair()
    for _ in range(3):
        a + b  # noqa: B018 (the result dies at once: its block goes to the cache)
    assert rt.devices[0].memory.cached_bytes > 0
    kept = a - b
    rt.finalize()
    leaks = [f for f in rt.sanitizer.findings if f.check == "leak"]
    # only the tensors still alive leak: a, b and kept; never a cached block
    assert len(leaks) == 3
    assert {f"0x{t.addr:x}" for t in (a, b, kept)} == {f.detail.split()[3] for f in leaks}


def test_use_after_free_of_a_cached_block_is_caught(rt: Runtime) -> None:
    a, b = _pair()
    r = a + b
    addr = r.addr
    del r
    assert rt.devices[0].memory.cached_bytes > 0
    host = np.zeros(32, np.uint8)
    assert acl.rt.memcpy(addr, 32, acl.util.numpy_to_ptr(host), 32, H2D) == 107000
    assert [f.check for f in rt.sanitizer.findings] == ["use-after-free"]


def test_a_failing_allocation_first_releases_the_cache() -> None:
    mem = DeviceMemory(5, 4096)
    blocks = [mem.malloc_cached(1000) for _ in range(3)]
    for blk in blocks:
        mem.free_cached(blk.addr)
    assert mem.cached_bytes == 3 * 1088 and mem.allocated_bytes == 0
    big = mem.malloc(3500, HUGE_FIRST)  # fits only once the cache is given back
    assert big.addr == mem.base
    assert mem.cached_bytes == 0


def test_double_free_of_a_cached_block_is_refused() -> None:
    mem = DeviceMemory(5, 1 << 20)
    blk = mem.malloc_cached(100)
    assert mem.free_cached(blk.addr) is blk
    assert mem.free_cached(blk.addr) is None
    assert mem.free(blk.addr) is None
    assert mem.find_freed(blk.addr) is blk


def test_allocated_and_reserved_figures_as_torch_npu_reports_them(rt: Runtime) -> None:
    import npu_runtime as npu

    assert (npu.memory_allocated(), npu.memory_reserved(), npu.empty_cache()) == (0, 0, 0)
    a, b = _pair()
    inputs = npu.memory_allocated()
    assert inputs > 0 and npu.memory_reserved() == inputs
    r = a + b
    with_result = npu.memory_allocated()
    assert with_result > inputs
    del r
    assert npu.memory_allocated() == inputs
    assert npu.memory_reserved() == with_result  # the result's block is kept for reuse
    assert npu.memory_reserved(0) == with_result and npu.memory_reserved(3) == 0
    assert npu.empty_cache() == with_result - inputs
    assert npu.memory_reserved() == inputs
    big = npu.Tensor(np.ones(1 << 20, np.float32))
    del big
    assert rt.devices[0].memory.resident_bytes > 0  # 4 MiB: freed for real, pages kept
    assert npu.empty_cache() == 0
    assert rt.devices[0].memory.resident_bytes == 0


def test_align32_blocks_are_not_cached() -> None:
    mem = DeviceMemory(5, 1 << 20)
    blk = mem.malloc(100, HUGE_FIRST, align32_only=True)
    assert mem.free_cached(blk.addr) is blk
    assert mem.cached_bytes == 0 and mem.used == 0


cache_ops = st.lists(
    st.tuples(
        st.sampled_from(["malloc", "malloc_cached", "free", "free_cached"]),
        st.integers(1, 300_000),
    ),
    max_size=60,
)


@settings(max_examples=100, deadline=None)
@given(cache_ops)
def test_cached_blocks_are_accounted_and_never_overlap(script: list[tuple[str, int]]) -> None:
    mem = DeviceMemory(5, 4 << 20)
    mem.cache_budget = 1 << 20
    for kind, n in script:
        try:
            if kind == "malloc":
                mem.malloc(n, HUGE_FIRST)
            elif kind == "malloc_cached":
                mem.malloc_cached(n % 5000 + 1)  # few sizes, so blocks get reused
            elif mem.live:
                addr = list(mem.live)[n % len(mem.live)]
                (mem.free if kind == "free" else mem.free_cached)(addr)
        except OutOfMemory:
            assert mem.cached_bytes == 0  # a failing allocation gave the cache back first
        cached = [b for blocks in mem._cache.values() for b in blocks]
        assert mem.cached_bytes == sum(b.consumed for b in cached) <= mem.cache_budget
        assert mem.used == sum(b.consumed for b in mem.live.values()) + mem.cached_bytes
        assert mem.allocated_bytes == mem.used - mem.cached_bytes
        spans = sorted(
            [(b.addr, b.addr + b.consumed) for b in (*mem.live.values(), *cached)]
            + [(a, a + s) for a, s in mem.free_blocks()]
        )
        assert spans[0][0] == mem.base and spans[-1][1] == mem.base + mem.capacity
        assert all(x[1] <= y[0] for x, y in zip(spans, spans[1:], strict=False))
