"""Repeated launches on the same buffers reuse their kernel arrays, and still fault the
moment a buffer stops being the live allocation it was."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

import npu_runtime.acl as acl
from npu_runtime.core.runtime import get_runtime
from npu_runtime.tensor import Tensor

ACL_FLOAT, ACL_FORMAT_ND = 0, 2
H2D, D2H = 1, 2
READ_FAULT, WRITE_FAULT = 507042, 507043  # ACL_ERROR_RT_AICORE_TRAP_{READ,WRITE}_OVERFLOW


@pytest.fixture
def stream() -> Iterator[int]:
    get_runtime().reset()
    assert acl.init() == 0
    assert acl.rt.set_device(0) == 0
    s, ret = acl.rt.create_stream()
    assert ret == 0
    yield s
    get_runtime().reset()


def _upload(a: np.ndarray) -> int:
    ptr, ret = acl.rt.malloc(a.nbytes, 0)
    assert ret == 0
    data = a.tobytes()
    assert acl.rt.memcpy(ptr, a.nbytes, acl.util.bytes_to_ptr(data), a.nbytes, H2D) == 0
    return ptr


def _download(ptr: int, n: int) -> np.ndarray:
    out = bytes(4 * n)
    assert acl.rt.memcpy(acl.util.bytes_to_ptr(out), len(out), ptr, len(out), D2H) == 0
    return np.frombuffer(out, np.float32)


def _add(ptrs: list[int], stream: int) -> int:
    d = acl.create_tensor_desc(ACL_FLOAT, [4], ACL_FORMAT_ND)
    bufs = [acl.create_data_buffer(p, 16) for p in ptrs]
    return acl.op.execute_v2("Add", [d, d], bufs[:2], [d], bufs[2:], 0, stream)


@pytest.mark.parametrize(("which", "code"), [(1, READ_FAULT), (2, WRITE_FAULT)])
def test_a_buffer_freed_after_repeated_launches_faults(stream: int, which: int, code: int) -> None:
    ptrs = [_upload(np.ones(4, np.float32)) for _ in range(3)]
    for _ in range(3):
        assert _add(ptrs, stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    assert acl.rt.free(ptrs[which]) == 0
    assert _add(ptrs, stream) == 0
    assert acl.rt.synchronize_stream(stream) == code


def test_a_new_allocation_at_the_same_address_is_read_afresh(stream: int) -> None:
    ptrs = [_upload(np.full(4, v, np.float32)) for v in (1, 2, 0)]
    assert _add(ptrs, stream) == 0
    assert acl.rt.free(ptrs[1]) == 0
    again = _upload(np.full(4, 10, np.float32))
    assert again == ptrs[1]
    assert _add(ptrs, stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    np.testing.assert_array_equal(_download(ptrs[2], 4), np.full(4, 11, np.float32))


def test_launches_after_a_device_reset_use_the_new_memory() -> None:
    get_runtime().reset()
    a = Tensor(np.ones(4, np.float32))
    for _ in range(2):
        a + a  # noqa: B018
    assert acl.rt.reset_device(0) == 0
    assert acl.rt.set_device(0) == 0
    b = Tensor(np.full(4, 3, np.float32))
    assert b.addr == a.addr  # same addresses as the cached launches, on new memory
    np.testing.assert_array_equal((b + b).numpy(), np.full(4, 6, np.float32))
    get_runtime().reset()
