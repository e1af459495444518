"""The Pythonic Tensor: device memory, ops from the registry, errors as AclError."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

import npu_runtime as npu
import npu_runtime.acl as acl
from npu_runtime import numerics
from npu_runtime import tensor as T
from npu_runtime.core import hooks
from npu_runtime.core.runtime import get_runtime
from npu_runtime.errors import AclError
from npu_runtime.records import WorkRecord

USER = "/user/notebook_cell.py"  # tests/npu_runtime/... counts as our own package to user_site


def as_user(code: str, **names: object) -> dict[str, object]:
    ns: dict[str, object] = {"npu": npu, "T": T, **names}
    exec(compile(code, USER, "exec"), ns)
    return ns


@pytest.fixture(autouse=True)
def clean() -> Iterator[None]:
    get_runtime().reset()
    yield
    get_runtime().reset()


@pytest.fixture
def records() -> Iterator[list[WorkRecord]]:
    got: list[WorkRecord] = []
    hooks.add_work_listener(got.append)
    yield got
    hooks.remove_work_listener(got.append)


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "int32", "int8", "bool"])
def test_round_trip_and_description(dtype: str) -> None:
    a = np.arange(12).reshape(3, 4).astype(numerics.by_name(dtype).np)
    t = npu.Tensor(a)
    assert (t.shape, t.dtype, t.device, t.ndim, t.size) == ((3, 4), a.dtype, "npu:0", 2, 12)
    np.testing.assert_array_equal(t.numpy(), a)
    assert repr(t) == f"Tensor(shape=[3, 4], dtype={dtype}, device='npu:0')"


def test_python_floats_become_float32_and_dtype_rounds() -> None:
    assert npu.Tensor([1.0, 2.0]).dtype == np.float32
    t = npu.Tensor([70000.0, 1.0], dtype="float16")
    assert np.isposinf(t.numpy()[0])


def test_operators_match_numpy(records: list[WorkRecord]) -> None:
    rng = np.random.default_rng(0)
    a = rng.standard_normal((4, 8)).astype(np.float32)
    b = rng.standard_normal((8,)).astype(np.float32)
    ta, tb = npu.Tensor(a), npu.Tensor(b)
    np.testing.assert_allclose((ta + tb).numpy(), a + b, rtol=1e-6)
    np.testing.assert_allclose((ta - 1).numpy(), a - 1, rtol=1e-6)
    np.testing.assert_allclose((2 * ta / tb).numpy(), 2 * a / b, rtol=1e-5)
    np.testing.assert_allclose((-ta).numpy(), -a)
    np.testing.assert_allclose((ta @ ta.T).numpy(), a @ a.T, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(ta.sum(axis=1).numpy(), a.sum(axis=1), rtol=1e-5)
    np.testing.assert_allclose(ta.max().numpy(), a.max())
    np.testing.assert_allclose(ta.reshape(2, -1).numpy(), a.reshape(2, -1))
    ops = [r.op_type for r in records if r.kind == "op"]
    assert ops[:2] == ["Add", "Sub"] and "MatMul" in ops and "Transpose" in ops


def test_named_ops() -> None:
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 3, 8, 8)).astype(np.float32)
    w = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
    y = T.conv2d(npu.Tensor(x), npu.Tensor(w), padding=1)
    assert y.shape == (2, 4, 8, 8)
    p = T.max_pool(y, 2)
    assert p.shape == (2, 4, 4, 4)
    s = T.softmax(npu.Tensor(x), axis=-1).numpy()
    np.testing.assert_allclose(s.sum(axis=-1), 1, rtol=1e-5)
    parts = T.split(npu.Tensor(x), 2, axis=-1)
    assert [q.shape for q in parts] == [(2, 3, 8, 4)] * 2
    np.testing.assert_array_equal(T.concat(parts, axis=-1).numpy(), x)
    emb = T.embedding(npu.Tensor(w.reshape(4, -1)), npu.Tensor(np.array([3, 0], np.int32)))
    np.testing.assert_array_equal(emb.numpy(), w.reshape(4, -1)[[3, 0]])
    h = T.cast(npu.Tensor(x), "bfloat16")
    assert h.dtype == numerics.BFLOAT16


def test_fusion_attention_returns_torch_npu_triple() -> None:
    rng = np.random.default_rng(2)
    q = npu.Tensor(rng.standard_normal((1, 16, 4 * 8)), dtype="float16")
    kv = npu.Tensor(rng.standard_normal((1, 16, 2 * 8)), dtype="float16")
    out, smax, ssum = T.npu_fusion_attention(q, kv, kv, 4, "BSH", scale=0.35, sparse_mode=3)
    assert out.shape == (1, 16, 32) and out.dtype == np.float16
    assert smax.shape == ssum.shape == (1, 4, 16, 8)
    # causal: the first query sees only the first key, so its output is that value row
    first = out.numpy()[0, 0].reshape(4, 8)
    v0 = kv.numpy()[0, 0].reshape(2, 8)
    np.testing.assert_allclose(first, np.repeat(v0, 2, axis=0), rtol=1e-3)


def test_bad_input_raises_acl_error_and_tells_listeners() -> None:
    errors: list[AclError] = []
    hooks.add_error_listener(errors.append)
    try:
        with pytest.raises(AclError) as info:
            as_user("npu.Tensor([[1.0, 2.0]]) @ npu.Tensor([[1.0, 2.0]])")
    finally:
        hooks.remove_error_listener(errors.append)
    e = info.value
    assert e.code == 100021 and e.name == "ACL_ERROR_OP_INPUT_NOT_MATCH" and e.api == "MatMul"
    assert e.site is not None and e.site.file == USER
    assert errors == [e]


def test_device_fault_raises_at_numpy_with_launch_line() -> None:
    w = npu.Tensor(np.ones((4, 2), np.float32))
    idx = npu.Tensor(np.array([9], np.int32))
    ns = as_user("x = 1\nout = T.embedding(w, idx)\n", w=w, idx=idx)
    with pytest.raises(AclError) as info:
        ns["out"].numpy()  # type: ignore[attr-defined]
    e = info.value
    assert e.code == 507015 and "index 9" in str(e)
    assert e.launch_site is not None and (e.launch_site.file, e.launch_site.line) == (USER, 2)


def test_check_numerics_names_the_first_op_that_overflowed() -> None:
    x = npu.Tensor(np.full(4, 300.0, np.float16))
    previous = npu.set_check_numerics(True)
    try:
        ns = as_user("y = x * x\nz = T.relu(y)\n", x=x)
        with pytest.raises(AclError) as info:
            ns["z"].numpy()  # type: ignore[attr-defined]
    finally:
        npu.set_check_numerics(previous)
    e = info.value
    assert e.code == 207016 and "Mul produced Inf" in str(e)
    assert e.launch_site is not None and e.launch_site.line == 1


def test_streams_advance_by_op_durations(records: list[WorkRecord]) -> None:
    a = npu.Tensor(np.ones((2048, 2048), np.float16))
    acl.rt.synchronize_stream(0)
    start, _ = acl.rt.create_event()
    end, _ = acl.rt.create_event()
    assert acl.rt.record_event(start, 0) == 0
    _ = a @ a
    assert acl.rt.record_event(end, 0) == 0
    assert acl.rt.synchronize_event(end) == 0
    ms, ret = acl.rt.event_elapsed_time(start, end)
    (mm,) = [r for r in records if r.op_type == "MatMul"]
    assert ret == 0 and mm.bound == "cube"
    assert ms * 1000 == pytest.approx(mm.duration_us, rel=0.05)


def test_memory_is_returned_when_tensors_die() -> None:
    t = npu.Tensor(np.zeros(1 << 20, np.float32))
    dev = get_runtime().devices[0]
    used = dev.memory.used
    del t
    assert dev.memory.used < used
