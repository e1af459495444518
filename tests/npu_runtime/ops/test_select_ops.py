"""ArgMaxV2, Slice/SliceD, Permute and Transpose with constant inputs, as the Ascend samples
issue them (constant descs from acl.set_tensor_const, a (0, 0) buffer for the constant);
create_handle / execute_with_handle and update_params on them."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

import npu_runtime.acl as acl
from npu_runtime.core.runtime import get_runtime

ACL_FLOAT, ACL_FLOAT16, ACL_INT32, ACL_INT64 = 0, 1, 3, 9
ND = 2
H2D, D2H = 1, 2


@pytest.fixture
def stream() -> Iterator[int]:
    get_runtime().reset()
    assert acl.init() == 0
    assert acl.rt.set_device(0) == 0
    s, ret = acl.rt.create_stream()
    assert ret == 0
    yield s
    get_runtime().reset()


def device(a: np.ndarray) -> tuple[int, int]:
    ptr, ret = acl.rt.malloc(max(a.nbytes, 1), 0)
    assert ret == 0
    data = a.tobytes()
    if data:
        assert acl.rt.memcpy(ptr, a.nbytes, acl.util.bytes_to_ptr(data), a.nbytes, H2D) == 0
    return ptr, acl.create_data_buffer(ptr, a.nbytes)


def host(ptr: int, shape: tuple[int, ...], dtype: type) -> np.ndarray:
    out = bytes(int(np.prod(shape)) * np.dtype(dtype).itemsize)
    assert acl.rt.memcpy(acl.util.bytes_to_ptr(out), len(out), ptr, len(out), D2H) == 0
    return np.frombuffer(out, dtype).reshape(shape)


def const_desc(values: np.ndarray, acl_type: int) -> tuple[int, bytes]:
    d = acl.create_tensor_desc(acl_type, list(values.shape), ND)
    data = values.tobytes()
    assert acl.set_tensor_const(d, acl.util.bytes_to_ptr(data), len(data)) == 0
    return d, data


def test_argmax_v2_as_the_classification_sample_runs_it(stream: int) -> None:
    scores = np.random.default_rng(0).standard_normal(1000).astype(np.float16)
    x_ptr, x_buf = device(scores)
    x_desc = acl.create_tensor_desc(ACL_FLOAT16, [1000], ND)
    dim_desc, _keep = const_desc(np.zeros(1, np.int32), ACL_INT32)
    out_desc = acl.create_tensor_desc(ACL_INT32, [1], ND)
    out_ptr, out_buf = device(np.zeros(1, np.int32))
    attr = acl.op.create_attr()
    ret = acl.op.execute_v2(
        "ArgMaxV2", [x_desc, dim_desc], [x_buf, acl.create_data_buffer(0, 0)],
        [out_desc], [out_buf], attr, stream,
    )  # fmt: skip
    assert ret == 0
    assert acl.rt.synchronize_stream(stream) == 0
    assert host(out_ptr, (1,), np.int32)[0] == int(np.argmax(scores))


def test_argmax_without_a_constant_dimension_says_so(stream: int) -> None:
    x_ptr, x_buf = device(np.ones((2, 3), np.float32))
    x_desc = acl.create_tensor_desc(ACL_FLOAT, [2, 3], ND)
    dim_desc = acl.create_tensor_desc(ACL_INT32, [1], ND)
    out_ptr, out_buf = device(np.zeros(2, np.int32))
    ret = acl.op.execute_v2(
        "ArgMaxV2", [x_desc, dim_desc], [x_buf, acl.create_data_buffer(0, 0)],
        [acl.create_tensor_desc(ACL_INT32, [2], ND)], [out_buf], 0, stream,
    )  # fmt: skip
    assert ret == 100000
    assert "must be a constant (acl.set_tensor_const)" in acl.get_recent_err_msg()


def test_slice_with_constant_inputs_and_slice_d_with_attributes(stream: int) -> None:
    x = np.arange(2 * 5 * 6, dtype=np.float32).reshape(2, 5, 6)
    x_ptr, x_buf = device(x)
    x_desc = acl.create_tensor_desc(ACL_FLOAT, [2, 5, 6], ND)
    off_desc, _k1 = const_desc(np.array([0, 1, 2], np.int64), ACL_INT64)
    size_desc, _k2 = const_desc(np.array([-1, 3, 2], np.int64), ACL_INT64)
    want = x[:, 1:4, 2:4]
    out_desc = acl.create_tensor_desc(ACL_FLOAT, list(want.shape), ND)
    out_ptr, out_buf = device(np.zeros_like(want))
    null = acl.create_data_buffer(0, 0)
    ret = acl.op.execute_v2(
        "Slice",
        [x_desc, off_desc, size_desc],
        [x_buf, null, null],
        [out_desc],
        [out_buf],
        0,
        stream,
    )
    assert ret == 0
    np.testing.assert_array_equal(host(out_ptr, want.shape, np.float32), want)
    attr = acl.op.create_attr()
    acl.op.set_attr_list_int(attr, "offsets", [1, 0, 0])
    acl.op.set_attr_list_int(attr, "size", [1, 2, 6])
    d_desc = acl.create_tensor_desc(ACL_FLOAT, [1, 2, 6], ND)
    d_ptr, d_buf = device(np.zeros((1, 2, 6), np.float32))
    assert acl.op.execute_v2("SliceD", [x_desc], [x_buf], [d_desc], [d_buf], attr, stream) == 0
    np.testing.assert_array_equal(host(d_ptr, (1, 2, 6), np.float32), x[1:2, 0:2])
    bad = acl.op.create_attr()
    acl.op.set_attr_list_int(bad, "offsets", [0, 4, 0])
    acl.op.set_attr_list_int(bad, "size", [1, 2, 6])
    assert acl.op.execute_v2("SliceD", [x_desc], [x_buf], [d_desc], [d_buf], bad, stream) == 100023


def test_transpose_perm_input_permute_and_handles(stream: int) -> None:
    x = np.arange(24, dtype=np.float16).reshape(2, 3, 4)
    x_ptr, x_buf = device(x)
    x_desc = acl.create_tensor_desc(ACL_FLOAT16, [2, 3, 4], ND)
    perm_desc, _k = const_desc(np.array([2, 0, 1], np.int32), ACL_INT32)
    out_desc = acl.create_tensor_desc(ACL_FLOAT16, [4, 2, 3], ND)
    out_ptr, out_buf = device(np.zeros((4, 2, 3), np.float16))
    null = acl.create_data_buffer(0, 0)
    handle, ret = acl.op.create_handle("Transpose", [x_desc, perm_desc], [out_desc], 0)
    assert ret == 0
    assert acl.op.execute_with_handle(handle, [x_buf, null], [out_buf], stream) == 0
    np.testing.assert_array_equal(host(out_ptr, (4, 2, 3), np.float16), x.transpose(2, 0, 1))
    acl.op.destroy_handle(handle)
    attr = acl.op.create_attr()
    acl.op.set_attr_list_int(attr, "order", [1, 2, 0])
    p_desc = acl.create_tensor_desc(ACL_FLOAT16, [3, 4, 2], ND)
    p_ptr, p_buf = device(np.zeros((3, 4, 2), np.float16))
    assert acl.op.update_params("Permute", [x_desc], [p_desc], attr) == 0
    assert acl.op.update_params("Permute", [x_desc], [out_desc], attr) == 100022  # wrong out
    handle, ret = acl.op.create_handle("Permute", [x_desc], [p_desc], attr)
    assert ret == 0
    assert acl.op.execute_with_handle(handle, [x_buf], [p_buf], stream) == 0
    np.testing.assert_array_equal(host(p_ptr, (3, 4, 2), np.float16), x.transpose(1, 2, 0))
    assert acl.op.update_params("NoSuchOp", [x_desc], [p_desc], 0) == 100024
