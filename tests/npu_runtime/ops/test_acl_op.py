"""acl.op as pyACL scripts use it: descs, buffers, attrs, execute_v2 on device memory."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

import npu_runtime.acl as acl
from npu_runtime.core import hooks
from npu_runtime.core.runtime import get_runtime
from npu_runtime.errors import AclError
from npu_runtime.numerics import set_check_numerics
from npu_runtime.records import WorkRecord

ACL_FLOAT, ACL_FLOAT16, ACL_INT32 = 0, 1, 3
ACL_FORMAT_ND = 2
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


@pytest.fixture
def records() -> Iterator[list[WorkRecord]]:
    got: list[WorkRecord] = []
    hooks.add_work_listener(got.append)
    yield got
    hooks.remove_work_listener(got.append)


def to_device(a: np.ndarray) -> tuple[int, int]:
    """Device copy of `a`: (device ptr, data buffer handle)."""
    ptr, ret = acl.rt.malloc(a.nbytes, 0)
    assert ret == 0
    data = a.tobytes()
    assert acl.rt.memcpy(ptr, a.nbytes, acl.util.bytes_to_ptr(data), a.nbytes, H2D) == 0
    return ptr, acl.create_data_buffer(ptr, a.nbytes)


def empty_device(nbytes: int) -> tuple[int, int]:
    ptr, ret = acl.rt.malloc(nbytes, 0)
    assert ret == 0
    return ptr, acl.create_data_buffer(ptr, nbytes)


def to_host(ptr: int, shape: tuple[int, ...], dtype) -> np.ndarray:
    out = bytes(int(np.prod(shape)) * np.dtype(dtype).itemsize)
    assert acl.rt.memcpy(acl.util.bytes_to_ptr(out), len(out), ptr, len(out), D2H) == 0
    return np.frombuffer(out, dtype).reshape(shape)


USER = "/user/train.py"  # tests/npu_runtime/... counts as our own package to sites.user_site


def as_user(code: str, **names: object) -> None:
    """Run `code` as if it were a line of a user's script (for launch-site checks)."""
    exec(compile(code, USER, "exec"), {"acl": acl, **names})


def desc(dtype: int, shape: list[int]) -> int:
    return acl.create_tensor_desc(dtype, shape, ACL_FORMAT_ND)


def test_execute_v2_add_like_the_sample(stream: int, records: list[WorkRecord]) -> None:
    acl.op.set_model_dir("./op_models")  # accepted and ignored
    x = np.arange(16, dtype=np.float16).reshape(2, 8)
    y = np.full((8,), 0.5, np.float16)
    _, bx = to_device(x)
    _, by = to_device(y)
    out_ptr, bo = empty_device(x.nbytes)
    ins = [desc(ACL_FLOAT16, [2, 8]), desc(ACL_FLOAT16, [8])]
    outs = [desc(ACL_FLOAT16, [2, 8])]
    attr = acl.op.create_attr()
    ret: list[int] = []
    as_user(
        "ret.append(acl.op.execute_v2('Add', ins, bufs, outs, [bo], attr, stream))",
        ret=ret,
        ins=ins,
        bufs=[bx, by],
        outs=outs,
        bo=bo,
        attr=attr,
        stream=stream,
    )
    assert ret == [0]
    assert acl.rt.synchronize_stream(stream) == 0
    np.testing.assert_array_equal(to_host(out_ptr, (2, 8), np.float16), x + y)
    (rec,) = [r for r in records if r.kind == "op"]
    assert rec.op_type == "Add" and rec.unit == "AI_VECTOR_CORE" and rec.bound == "launch"
    assert rec.inputs[0].shape == (2, 8) and rec.inputs[0].dtype == "FLOAT16"
    assert rec.site is not None and (rec.site.file, rec.site.line) == (USER, 1)
    acl.op.destroy_attr(attr)


def test_matmul_with_attrs_advances_the_stream_clock(
    stream: int, records: list[WorkRecord]
) -> None:
    a = np.random.default_rng(0).standard_normal((64, 32)).astype(np.float32)
    b = np.random.default_rng(1).standard_normal((64, 48)).astype(np.float32)
    _, ba = to_device(a)
    _, bb = to_device(b)
    out_ptr, bo = empty_device(32 * 48 * 4)
    attr = acl.op.create_attr()
    assert acl.op.set_attr_bool(attr, "transpose_x1", 1) == 0
    assert acl.op.set_attr_bool(attr, "transpose_x2", 0) == 0
    ins = [desc(ACL_FLOAT, [64, 32]), desc(ACL_FLOAT, [64, 48])]
    ret = acl.op.execute_v2(
        "MatMul", ins, [ba, bb], [desc(ACL_FLOAT, [32, 48])], [bo], attr, stream
    )
    assert ret == 0
    acl.rt.synchronize_stream(stream)
    np.testing.assert_allclose(
        to_host(out_ptr, (32, 48), np.float32), a.T @ b, rtol=1e-5, atol=1e-5
    )
    ops = [r for r in records if r.kind == "op"]
    assert ops[0].unit == "AI_CORE" and ops[0].flops == 2 * 32 * 48 * 64
    assert ops[0].duration_us > 0 and ops[0].end_us > ops[0].start_us


def test_bad_calls_return_the_acl_codes(stream: int) -> None:
    _, b4 = empty_device(16)
    d4 = desc(ACL_FLOAT, [4])
    d5 = desc(ACL_FLOAT, [5])
    errors: list[AclError] = []
    hooks.add_error_listener(errors.append)
    try:
        assert acl.op.execute_v2("NoSuchOp", [d4], [b4], [d4], [b4], 0, stream) == 100024
        assert acl.op.execute_v2("Add", [d4, d5], [b4, b4], [d4], [b4], 0, stream) == 100021
        assert acl.op.execute_v2("Add", [d4, d4], [b4, b4], [d5], [b4], 0, stream) == 100022
        assert acl.op.execute_v2("Cast", [d4], [b4], [d4], [b4], 0, stream) == 100023
        assert (
            acl.op.execute_v2("Relu", [desc(ACL_INT32, [4])], [b4], [d4], [b4], 0, stream) == 100026
        )
        assert acl.op.execute_v2("Relu", [d4], [b4], [d4], [], 0, stream) == 100000
        assert (
            acl.op.execute_v2("Relu", [d5], [b4], [d5], [b4], 0, stream) == 100000
        )  # buffer too small
        assert acl.op.execute_v2("Relu", [d4], [b4], [d4], [b4], 12345, stream) == 100000
        int4 = acl.create_tensor_desc(29, [4], ACL_FORMAT_ND)  # ACL_INT4: not emulated
        assert acl.op.execute_v2("Relu", [int4], [b4], [d4], [b4], 0, stream) == 100026
        dynamic = desc(ACL_FLOAT, [-1])
        assert acl.op.execute_v2("Relu", [dynamic], [b4], [d4], [b4], 0, stream) == 100000
    finally:
        hooks.remove_error_listener(errors.append)
    assert [e.code for e in errors][:2] == [100024, 100021]
    assert errors[0].api == "aclopExecuteV2" and "NoSuchOp" in str(errors[0])
    assert acl.get_recent_err_msg() is not None
    with pytest.raises(TypeError, match="argument 2 is not list"):
        acl.op.execute_v2("Add", (d4,), [b4], [d4], [b4], 0, stream)


def test_device_fault_surfaces_at_sync_with_launch_line(stream: int) -> None:
    w = np.ones((4, 2), np.float32)
    _, bw = to_device(w)
    _, bi = to_device(np.array([7], np.int32))
    _, bo = empty_device(8)
    ins = [desc(ACL_FLOAT, [4, 2]), desc(ACL_INT32, [1])]
    outs = [desc(ACL_FLOAT, [1, 2])]
    errors: list[AclError] = []
    hooks.add_error_listener(errors.append)
    try:
        as_user(
            "\n\nacl.op.execute_v2('Embedding', ins, bufs, outs, [bo], 0, stream)",
            ins=ins, bufs=[bw, bi], outs=outs, bo=bo, stream=stream,
        )  # fmt: skip
        assert acl.rt.synchronize_stream(stream) == 507015  # the fault waits for the sync
    finally:
        hooks.remove_error_listener(errors.append)
    (err,) = errors
    assert err.name == "ACL_ERROR_RT_AICORE_EXCEPTION" and "index 7" in str(err)
    assert err.launch_site is not None and (err.launch_site.file, err.launch_site.line) == (USER, 3)


def test_check_numerics_reports_first_nonfinite_op(stream: int) -> None:
    big = np.full((4,), 60000, np.float16)
    _, bb = to_device(big)
    _, bo = empty_device(8)
    _, bo2 = empty_device(8)
    d = desc(ACL_FLOAT16, [4])
    errors: list[AclError] = []
    hooks.add_error_listener(errors.append)
    previous = set_check_numerics(True)
    try:
        as_user(
            "acl.op.execute_v2('Add', [d, d], [bb, bb], [d], [bo], 0, stream)",
            d=d,
            bb=bb,
            bo=bo,
            stream=stream,
        )
        # consuming the inf again is not a new finding
        assert acl.op.execute_v2("Relu", [d], [bo], [d], [bo2], 0, stream) == 0
        assert acl.rt.synchronize_stream(stream) == 207016
    finally:
        set_check_numerics(previous)
        hooks.remove_error_listener(errors.append)
    (err,) = [e for e in errors if e.code == 207016]
    assert "Add produced Inf" in str(err)
    assert err.launch_site is not None and (err.launch_site.file, err.launch_site.line) == (USER, 1)


def test_handles_cast_and_infer_shape(stream: int) -> None:
    x = np.array([1.5, -2.5, 70000], np.float32)
    _, bx = to_device(x)
    out_ptr, bo = empty_device(6)
    src, dst = desc(ACL_FLOAT, [3]), desc(ACL_FLOAT16, [3])
    assert acl.op.cast(src, bx, dst, bo, 0, stream) == 0
    acl.rt.synchronize_stream(stream)
    got = to_host(out_ptr, (3,), np.float16)
    assert got[0] == 1.5 and got[1] == -2.5 and np.isposinf(got[2])

    h, ret = acl.op.create_handle("Relu", [src], [src], 0)
    assert ret == 0 and h != 0
    out2, bo2 = empty_device(12)
    assert acl.op.execute_with_handle(h, [bx], [bo2], stream) == 0
    acl.rt.synchronize_stream(stream)
    np.testing.assert_array_equal(to_host(out2, (3,), np.float32), [1.5, 0, 70000])
    acl.op.destroy_handle(h)

    a, b, out = desc(ACL_FLOAT, [2, 3]), desc(ACL_FLOAT, [3, 5]), desc(ACL_FLOAT, [0])
    assert acl.op.infer_shape("MatMul", [a, b], [], 1, [out], 0) == 0
    assert acl.get_tensor_desc_num_dims(out) == 2
    assert acl.get_tensor_desc_dim_v2(out, 1) == (5, 0)


def test_attr_setters(stream: int) -> None:
    attr = acl.op.create_attr()
    assert acl.op.set_attr_int(attr, "axis", -1) == 0
    assert acl.op.set_attr_list_int(attr, "perm", [1, 0]) == 0
    assert acl.op.set_attr_float(attr, "epsilon", 1e-5) == 0
    assert acl.op.set_attr_string(attr, "padding", "SAME") == 0
    assert acl.op.set_attr_data_type(attr, "dst_type", 1) == (attr, 0)
    assert acl.op.set_attr_int(0xDEAD, "axis", 1) == 100000
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    _, bx = to_device(x)
    out_ptr, bo = empty_device(24)
    assert (
        acl.op.execute_v2(
            "Transpose",
            [desc(ACL_FLOAT, [2, 3])],
            [bx],
            [desc(ACL_FLOAT, [3, 2])],
            [bo],
            attr,
            stream,
        )
        == 0
    )
    acl.rt.synchronize_stream(stream)
    np.testing.assert_array_equal(to_host(out_ptr, (3, 2), np.float32), x.T)


def test_freed_output_buffer_is_a_device_write_fault(stream: int) -> None:
    x = np.ones(4, np.float32)
    _, bx = to_device(x)
    out_ptr, bo = empty_device(16)
    assert acl.rt.free(out_ptr) == 0
    d = desc(ACL_FLOAT, [4])
    assert acl.op.execute_v2("Relu", [d], [bx], [d], [bo], 0, stream) == 0
    assert acl.rt.synchronize_stream(stream) == 507043  # ACL_ERROR_RT_AICORE_TRAP_WRITE_OVERFLOW
