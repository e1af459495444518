"""Add/Sub/Mul/Div write straight into device memory with the device's numerics: one
rounding to the tensor type, fp16 overflow to inf, integer wrap-around, broadcasting, and
an output buffer that is also an input (in place)."""

from __future__ import annotations

from collections.abc import Iterator

import ml_dtypes
import numpy as np
import pytest

import npu_runtime.acl as acl
from npu_runtime.core.runtime import get_runtime
from npu_runtime.tensor import Tensor

ACL_FLOAT16, ACL_FORMAT_ND = 1, 2
H2D, D2H = 1, 2
OPS = {"Add": np.add, "Sub": np.subtract, "Mul": np.multiply, "Div": np.divide}


@pytest.fixture(autouse=True)
def clean() -> Iterator[None]:
    get_runtime().reset()
    yield
    get_runtime().reset()


def _call(op_type: str, a: Tensor, b: Tensor) -> Tensor:
    return {"Add": a + b, "Sub": a - b, "Mul": a * b, "Div": a / b}[op_type]


@pytest.mark.parametrize("op_type", list(OPS))
@pytest.mark.parametrize("dtype", [np.float16, np.float32, ml_dtypes.bfloat16])
def test_float_results_round_once_to_the_tensor_type(op_type: str, dtype: type) -> None:
    rng = np.random.default_rng(1)
    x = rng.standard_normal((3, 5)).astype(dtype)
    y = (rng.standard_normal(5) + 3).astype(dtype)  # broadcast along rows
    got = _call(op_type, Tensor(x), Tensor(y)).numpy()
    # reference: exact in float64, rounded once to the tensor type
    want = OPS[op_type](x.astype(np.float64), y.astype(np.float64)).astype(dtype)
    assert got.dtype == np.dtype(dtype) and got.shape == (3, 5)
    np.testing.assert_array_equal(
        got.view(np.uint16 if got.itemsize == 2 else np.uint32),
        want.view(np.uint16 if want.itemsize == 2 else np.uint32),
    )


def test_fp16_overflow_becomes_inf_without_warnings() -> None:
    big = Tensor(np.array([60000.0, -60000.0, 1.0], np.float16))
    with np.errstate(all="raise"):  # a numpy warning would be an exception here
        s = (big + big).numpy()
        d = (big / Tensor(np.zeros(3, np.float16))).numpy()
    assert s[0] == np.inf and s[1] == -np.inf and s[2] == 2.0
    assert d[0] == np.inf and d[1] == -np.inf and d[2] == np.inf


def test_int8_wraps_around_as_on_the_device() -> None:
    a = Tensor(np.array([120, -120, 5], np.int8))
    b = Tensor(np.array([10, -10, 3], np.int8))
    np.testing.assert_array_equal((a + b).numpy(), np.array([-126, 126, 8], np.int8))
    np.testing.assert_array_equal((a * b).numpy(), np.array([-80, -80, 15], np.int8))


def test_execute_v2_in_place_with_broadcast_input() -> None:
    assert acl.init() == 0
    assert acl.rt.set_device(0) == 0
    x = np.arange(12, dtype=np.float16).reshape(3, 4)
    row = np.array([1, 2, 3, 4], np.float16)
    bufs, ptrs = [], []
    for a in (x, row):
        ptr, ret = acl.rt.malloc(a.nbytes, 0)
        assert ret == 0
        data = a.tobytes()
        assert acl.rt.memcpy(ptr, a.nbytes, acl.util.bytes_to_ptr(data), a.nbytes, H2D) == 0
        ptrs.append(ptr)
        bufs.append(acl.create_data_buffer(ptr, a.nbytes))
    dx = acl.create_tensor_desc(ACL_FLOAT16, [3, 4], ACL_FORMAT_ND)
    dr = acl.create_tensor_desc(ACL_FLOAT16, [4], ACL_FORMAT_ND)
    # x = x * row, the output buffer being the first input
    ret = acl.op.execute_v2("Mul", [dx, dr], bufs, [dx], bufs[:1], acl.op.create_attr(), 0)
    assert ret == 0
    assert acl.rt.synchronize_stream(0) == 0
    out = bytes(x.nbytes)
    assert acl.rt.memcpy(acl.util.bytes_to_ptr(out), x.nbytes, ptrs[0], x.nbytes, D2H) == 0
    np.testing.assert_array_equal(np.frombuffer(out, np.float16).reshape(3, 4), x * row)
