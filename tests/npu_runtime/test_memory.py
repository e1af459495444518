"""Device and host memory through acl.rt: rounding, accounting, copies and their codes."""

from __future__ import annotations

import resource
from types import ModuleType

import numpy as np
import pytest

from npu_runtime.core.memory import DEVICE_VA_BASE, reserved_size
from npu_runtime.core.runtime import Runtime

# pyACL itself warns that numpy_to_ptr is deprecated; the samples still use it.
pytestmark = pytest.mark.filterwarnings("ignore:acl.util.numpy_to_ptr will be deprecated")

H2H, H2D, D2H, D2D = 0, 1, 2, 3
HBM, DDR = 1, 0


@pytest.fixture
def dev(acl: ModuleType) -> ModuleType:
    assert acl.init() == 0
    assert acl.rt.set_device(0) == 0
    return acl


def _used(acl: ModuleType) -> int:
    free, total, ret = acl.rt.get_mem_info(HBM)
    assert ret == 0
    return total - free


@pytest.mark.parametrize(
    ("size", "policy", "reserved"),
    [
        (1, 0, 64),
        (32, 0, 64),
        (33, 0, 96),
        (100, 2, 160),
        (1 << 20, 0, (1 << 20) + 32),
        (100, 6, 128),
    ],
)
def test_malloc_rounding(size: int, policy: int, reserved: int) -> None:
    # ALIGN_UP(size, 32) + 32, no padding for the 1 GB huge-page policies (api.md §8)
    assert reserved_size(size, policy) == reserved


def test_malloc_accounting_and_alignment(dev: ModuleType) -> None:
    acl = dev
    base = _used(acl)
    ptrs = []
    for size in (1, 100, 4096, 333):
        ptr, ret = acl.rt.malloc(size, 2)  # NORMAL_ONLY
        assert ret == 0
        assert ptr % 64 == 0 and ptr >= DEVICE_VA_BASE
        ptrs.append(ptr)
    assert _used(acl) - base == 64 + 192 + 4160 + 384  # reserved sizes rounded to 64
    big, ret = acl.rt.malloc(3 << 20, 0)  # HUGE_FIRST above 1 MB -> 2 MiB pages
    assert ret == 0 and big % (2 << 20) == 0
    assert _used(acl) - base == 64 + 192 + 4160 + 384 + (4 << 20)
    for p in [*ptrs, big]:
        assert acl.rt.free(p) == 0
    assert _used(acl) == base


def test_get_mem_info_attributes(dev: ModuleType) -> None:
    acl = dev
    free, total, ret = acl.rt.get_mem_info(HBM)
    assert ret == 0 and total == 63 << 30 and free == total
    assert acl.rt.get_mem_info(DDR) == (0, 0, 0)  # 910B has no DDR pool
    assert acl.rt.get_mem_info(99) == (0, 0, 100000)


def test_310p_reports_through_ddr(bare_rt: Runtime, acl: ModuleType) -> None:
    bare_rt.configure(device="310P")
    acl.init()
    acl.rt.set_device(0)
    free, total, ret = acl.rt.get_mem_info(DDR)
    assert ret == 0 and total == (24 << 30) - (1 << 30)


def test_malloc_errors(dev: ModuleType) -> None:
    acl = dev
    assert acl.rt.malloc(0, 0) == (0, 100000)
    assert acl.rt.malloc(64 << 30, 0) == (0, 207001)
    assert "largest free block" in acl.get_recent_err_msg()
    assert acl.rt.free(0) == 100000
    assert acl.rt.free(0x1234) == 107000


def test_fragmentation_is_real(bare_rt: Runtime, dev: ModuleType) -> None:
    acl = dev
    gib = 1 << 30
    blocks = [acl.rt.malloc(gib - 64, 2)[0] for _ in range(63)]
    assert all(blocks)
    free, _, _ = acl.rt.get_mem_info(HBM)
    assert free < gib
    for p in blocks[::2]:  # free every other block: 32 GiB free, in 1 GiB holes
        assert acl.rt.free(p) == 0
    free, _, _ = acl.rt.get_mem_info(HBM)
    assert free >= 32 * gib
    assert acl.rt.malloc(2 * gib, 2) == (0, 207001)
    mem = bare_rt.devices[0].memory
    assert mem.largest_free_block() == gib
    assert mem.fragmentation() > 0.9


def test_huge_allocation_is_lazy(dev: ModuleType) -> None:
    acl = dev
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    ptr, ret = acl.rt.malloc(60 << 30, 0)
    assert ret == 0
    host = np.arange(1024, dtype=np.uint8)
    tail = ptr + (60 << 30) - 1024
    assert acl.rt.memcpy(tail, 1024, acl.util.numpy_to_ptr(host), 1024, H2D) == 0
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    assert after - before < 64 * 1024  # KiB: touching the tail costs pages, not 60 GB
    assert acl.rt.free(ptr) == 0


def test_round_trip_through_bytes_like_the_samples(dev: ModuleType) -> None:
    acl = dev
    data = np.random.default_rng(0).standard_normal(1000).astype(np.float32)
    n = data.nbytes
    ptr, _ = acl.rt.malloc(n, 0)
    src = data.tobytes()
    assert acl.rt.memcpy(ptr, n, acl.util.bytes_to_ptr(src), n, H2D) == 0
    out = bytes(n)
    assert acl.rt.memcpy(acl.util.bytes_to_ptr(out), n, ptr, n, D2H) == 0
    np.testing.assert_array_equal(np.frombuffer(out, np.float32), data)


def test_d2d_and_malloc_host_and_ptr_to_numpy(dev: ModuleType) -> None:
    acl = dev
    a, _ = acl.rt.malloc(256, 0)
    b, _ = acl.rt.malloc(256, 0)
    host, ret = acl.rt.malloc_host(256)
    assert ret == 0 and host % 64 == 0
    view = acl.util.ptr_to_numpy(host, (64,), 11)
    view[:] = np.arange(64, dtype=np.float32)
    assert acl.rt.memcpy(a, 256, host, 256, H2D) == 0
    assert acl.rt.memcpy(b, 256, a, 256, D2D) == 0
    out = np.zeros(64, np.float32)
    assert acl.rt.memcpy(acl.util.numpy_to_ptr(out), 256, b, 256, 4) == 0  # DEFAULT infers
    np.testing.assert_array_equal(out, np.arange(64, dtype=np.float32))
    assert acl.util.ptr_to_bytes(host, 8) == np.arange(2, dtype=np.float32).tobytes()
    assert acl.rt.free_host(host) == 0
    assert acl.rt.free_host(host) == 107000


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (lambda d, h: (d, 64, h, 0, H2D), 0),  # count 0: no-op
        (lambda d, h: (0, 64, h, 64, H2D), 100000),  # NULL dst
        (lambda d, h: (d, 64, 0, 64, H2D), 100000),  # NULL src
        (lambda d, h: (d, 64, h, 64, 7), 100000),  # kind outside 0..5
        (lambda d, h: (d, 0, h, 64, H2D), 107000),  # destMax 0
        (lambda d, h: (d, 32, h, 64, H2D), 107000),  # count > destMax
        (lambda d, h: (d, 64, h, 64, D2H), 0),  # kind contradicts the pointers: CANN 8 copies
        (lambda d, h: (h, 64, d, 64, H2D), 0),
        (lambda d, h: (d, 64, h + (1 << 20), 64, H2D), 107000),  # unknown host memory
        (lambda d, h: (d, 4096, h, 4096, H2D), 107000),  # past the device allocation
        (lambda d, h: (d, 64, d, 64, D2D), 0),  # dst == src: nothing copied
    ],
)
def test_memcpy_codes(dev: ModuleType, args, code: int) -> None:
    acl = dev
    d, _ = acl.rt.malloc(64, 0)
    host = np.zeros(4096, np.uint8)
    h = acl.util.numpy_to_ptr(host)
    assert acl.rt.memcpy(*args(d, h)) == code


def test_memcpy_async_codes(dev: ModuleType) -> None:
    acl = dev
    s, _ = acl.rt.create_stream()
    a = np.zeros(64, np.uint8)
    b = np.zeros(64, np.uint8)
    pa, pb = acl.util.numpy_to_ptr(a), acl.util.numpy_to_ptr(b)
    assert acl.rt.memcpy_async(pa, 64, pb, 64, H2H, s) == 207000
    d, _ = acl.rt.malloc(256, 0)
    assert acl.rt.memcpy_async(d, 32, pa, 64, H2D, s) == 107000
    assert acl.rt.memcpy_async(d + 8, 64, d + 128, 64, D2D, s) == 107008  # D2D needs 64 B alignment
    assert acl.rt.memcpy_async(d, 64, pa, 64, H2D, s) == 0


def test_memset(dev: ModuleType) -> None:
    acl = dev
    d, _ = acl.rt.malloc(128, 0)
    assert acl.rt.memset(d, 128, 0x1AB, 100) == 0  # low byte of the int32 value
    out = np.zeros(128, np.uint8)
    acl.rt.memcpy(acl.util.numpy_to_ptr(out), 128, d, 128, D2H)
    assert (out[:100] == 0xAB).all()
    assert acl.rt.memset(d, 64, 0, 100) == 107000  # count > maxCount
    assert acl.rt.memset(0, 64, 0, 10) == 100000
    assert acl.rt.memset(d, 64, 0, 0) == 0
    s, _ = acl.rt.create_stream()
    assert acl.rt.memset_async(d, 128, 7, 128, s) == 0
    host = np.ones(16, np.uint8)
    assert acl.rt.memset(acl.util.numpy_to_ptr(host), 16, 0, 16) == 0  # host address: memset host
    assert not host.any()


def test_pointer_attributes(dev: ModuleType) -> None:
    acl = dev
    small, _ = acl.rt.malloc(64, 2)
    big, _ = acl.rt.malloc(4 << 20, 1)
    attrs, ret = acl.rt.pointer_get_attributes(small)
    assert ret == 0 and attrs["location"] == {"id": 0, "type": 1} and attrs["page_size"] == 4096
    assert acl.rt.pointer_get_attributes(big)[0]["page_size"] == 2 << 20
    host = np.zeros(4)
    assert acl.rt.pointer_get_attributes(acl.util.numpy_to_ptr(host))[0]["location"]["type"] == 0


def test_device_addresses_are_disjoint_per_device(dev: ModuleType) -> None:
    acl = dev
    p0, _ = acl.rt.malloc(64, 0)
    acl.rt.set_device(1)
    p1, _ = acl.rt.malloc(64, 0)
    assert p1 - p0 == 1 << 40
    # A peer copy between devices moves the bytes.
    src = np.arange(64, dtype=np.uint8)
    acl.rt.memcpy(p1, 64, acl.util.numpy_to_ptr(src), 64, H2D)
    assert acl.rt.memcpy(p0, 64, p1, 64, D2D) == 0
    out = np.zeros(64, np.uint8)
    acl.rt.memcpy(acl.util.numpy_to_ptr(out), 64, p0, 64, D2H)
    np.testing.assert_array_equal(out, src)


def test_host_buffers_are_forgotten_when_the_user_drops_them(bare_rt: Runtime) -> None:
    hm = bare_rt.hostmem
    arr = np.zeros(1 << 20, np.uint8)
    data = bytes(1 << 20)
    pa, pb = hm.register_array(arr), hm.register_bytes(data)
    assert hm.contains(pa, 1 << 20) and hm.contains(pb, 1 << 20)
    view = arr[10:20]
    del arr
    assert hm.contains(pa, 1 << 20)  # the view keeps the base alive
    del view, data
    assert not hm.contains(pa, 1)  # a collected array's memory is never touched again
    held = hm.lookup(pb, 1)  # released bytes stay readable until the next sweep ...
    assert held is not None and not held.alive()  # ... and uses of them are reported
    keep = [np.zeros(1) for _ in range(256)]
    for a in keep:
        hm.register_array(a)
    assert not hm.contains(pb, 1)


def test_registering_many_temporaries_does_not_hold_their_memory(bare_rt: Runtime) -> None:
    import weakref

    hm = bare_rt.hostmem
    refs = []
    for _ in range(50):
        a = np.ones(1 << 20, np.uint8)
        hm.register_array(a)
        refs.append(weakref.ref(a))
    del a
    assert sum(r() is not None for r in refs) == 0


def test_malloc_variants(dev: ModuleType) -> None:
    acl = dev
    base = _used(acl)
    p, ret = acl.rt.malloc_align32(100, 2)  # no 32-byte padding: ALIGN_UP(100, 32) = 128
    assert ret == 0 and _used(acl) - base == 128
    q, ret = acl.media.dvpp_malloc(64)
    assert ret == 0 and acl.media.dvpp_free(q) == 0
    r, ret = acl.rt.malloc_with_cfg(64, 0, {})
    assert ret == 0 and acl.rt.free(r) == 0
    assert acl.rt.free(p) == 0


def test_memcpy2d(dev: ModuleType) -> None:
    acl = dev
    host = np.arange(4 * 16, dtype=np.uint8).reshape(4, 16)
    d, _ = acl.rt.malloc(4 * 8, 0)
    # copy the left 8 columns of each 16-byte row into a packed 4x8 device matrix
    assert acl.rt.memcpy2d(d, 8, acl.util.numpy_to_ptr(host), 16, 8, 4, H2D) == 0
    out = np.zeros((4, 8), np.uint8)
    assert acl.rt.memcpy(acl.util.numpy_to_ptr(out), 32, d, 32, D2H) == 0
    np.testing.assert_array_equal(out, host[:, :8])
    assert (
        acl.rt.memcpy2d(d, 8, acl.util.numpy_to_ptr(host), 16, 9, 4, H2D) == 100000
    )  # width > dpitch


def test_kind_mismatch_copies_by_location_and_is_reported(
    bare_rt: Runtime, dev: ModuleType
) -> None:
    acl = dev
    d, _ = acl.rt.malloc(64, 0)
    src = np.arange(64, dtype=np.uint8)
    assert acl.rt.memcpy(d, 64, acl.util.numpy_to_ptr(src), 64, D2H) == 0  # really H2D
    out = np.zeros(64, np.uint8)
    assert acl.rt.memcpy(acl.util.numpy_to_ptr(out), 64, d, 64, H2D) == 0  # really D2H
    np.testing.assert_array_equal(out, src)
    found = [f for f in bare_rt.sanitizer.findings if f.check == "kind-mismatch"]
    assert len(found) == 2
    assert "copied as MEMCPY_HOST_TO_DEVICE" in found[0].detail
    s, _ = acl.rt.create_stream()
    a, b = np.zeros(8, np.uint8), np.zeros(8, np.uint8)
    pa, pb = acl.util.numpy_to_ptr(a), acl.util.numpy_to_ptr(b)
    assert acl.rt.memcpy_async(pa, 8, pb, 8, H2D, s) == 207000  # host to host, whatever the kind
