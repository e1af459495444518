"""The op launch hot path's shortcuts behave exactly like the general path they skip.

Each shortcut (generated pyACL argument checks, cached kernel views, interned specs,
positional records, direct result allocation) has a general path it must agree with:
these tests drive both through the real interfaces and compare codes, values and sites.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

import npu_runtime.acl as acl
from npu_runtime.acl._args import _slow, parse
from npu_runtime.core import faults, hooks
from npu_runtime.core.runtime import Runtime, get_runtime
from npu_runtime.errors import AclError
from npu_runtime.ops.errors import (
    ACL_ERROR_OP_OUTPUT_NOT_MATCH,
    ACL_ERROR_RT_AICORE_TRAP_READ_OVERFLOW,
)
from npu_runtime.records import WorkRecord
from npu_runtime.tensor import Tensor

ACL_FLOAT16, ACL_FORMAT_ND, H2D, D2H = 1, 2, 1, 2
TRAP_READ = ACL_ERROR_RT_AICORE_TRAP_READ_OVERFLOW


def _outcome(fn: Callable[[], Any]) -> Any:
    try:
        return ("ok", fn())
    except Exception as exc:  # the exact type and message are what we compare
        return (type(exc).__name__, str(exc))


class _Str(str):
    pass


ARGS = [
    ("Add", [1], [2], [3], [4], 0, 0),
    ("Add", [1], [2], [3], [4], 2**64 - 1, 7),
    ("Add", [1], [2], [3], [4], -1, 0),  # 'k' masks a negative
    ("Add", [1], [2], [3], [4], 2**64, 0),  # ... and an overflow
    ("Add", [1], [2], [3], [4], True, 0),  # bool is an int subclass
    ("Add", [1], [2], [3], [4], 1.0, 0),
    (_Str("Add"), [1], [2], [3], [4], 0, 0),
    (b"Add", [1], [2], [3], [4], 0, 0),
    ("Add", [1], [2], [3], [4], 0),
    ("Add", [1], [2], [3], [4], 0, 0, 0),
]


@pytest.mark.parametrize("args", ARGS, ids=range(len(ARGS)))
def test_generated_checks_agree_with_the_general_parser(args: tuple[Any, ...]) -> None:
    fast = _outcome(lambda: parse("sOOOOkk", args))
    slow = _outcome(lambda: _slow("sOOOOkk", "", args))
    assert fast == slow
    if fast[0] == "ok":
        assert all(type(a) is type(b) for a, b in zip(fast[1], slow[1], strict=True))


def test_all_object_format_counts_arguments() -> None:
    assert parse("OO", ([1], None)) == ([1], None)
    with pytest.raises(TypeError, match=r"exactly 2 arguments \(1 given\)"):
        parse("OO", ([1],))


# -- pyACL execute_v2 ------------------------------------------------------------------------
@pytest.fixture
def dev(rt: Runtime) -> Iterator[Runtime]:
    yield rt


def _buffer(a: np.ndarray | None, nbytes: int) -> tuple[int, int]:
    ptr, ret = acl.rt.malloc(nbytes, 0)
    assert ret == 0
    if a is not None:
        data = a.tobytes()
        assert acl.rt.memcpy(ptr, nbytes, acl.util.bytes_to_ptr(data), nbytes, H2D) == 0
    return ptr, acl.create_data_buffer(ptr, nbytes)


def _read(ptr: int, n: int) -> np.ndarray:
    out = bytes(n * 2)
    assert acl.rt.memcpy(acl.util.bytes_to_ptr(out), len(out), ptr, len(out), D2H) == 0
    return np.frombuffer(out, np.float16)


def test_cached_views_still_check_liveness(dev: Runtime) -> None:
    x = np.arange(16, dtype=np.float16)
    px, bx = _buffer(x, 32)
    po, bo = _buffer(None, 32)
    d = acl.create_tensor_desc(ACL_FLOAT16, [16], ACL_FORMAT_ND)
    for _ in range(2):  # the second launch uses the views the first one made
        assert acl.op.execute_v2("Add", [d, d], [bx, bx], [d], [bo], 0, 0) == 0
        assert acl.rt.synchronize_stream(0) == 0
        np.testing.assert_array_equal(_read(po, 16), x + x)
    assert acl.rt.free(px) == 0
    # The op is queued (host checks pass); the freed input is a device fault at the sync.
    assert acl.op.execute_v2("Add", [d, d], [bx, bx], [d], [bo], 0, 0) == 0
    assert acl.rt.synchronize_stream(0) == TRAP_READ


def test_buffer_inside_a_block_takes_the_checked_path(dev: Runtime) -> None:
    x = np.arange(32, dtype=np.float16)
    px, _ = _buffer(x, 64)
    inner = acl.create_data_buffer(px + 32, 32)  # the second half of the block
    po, bo = _buffer(None, 32)
    d = acl.create_tensor_desc(ACL_FLOAT16, [16], ACL_FORMAT_ND)
    assert acl.op.execute_v2("Add", [d, d], [inner, inner], [d], [bo], 0, 0) == 0
    assert acl.rt.synchronize_stream(0) == 0
    np.testing.assert_array_equal(_read(po, 16), x[16:] + x[16:])
    # Running past the block's end (its padded size): a fault, found by the checked path.
    end = px + dev.devices[0].memory.live[px].reserved
    big = acl.create_data_buffer(end - 16, 32)
    assert acl.op.execute_v2("Add", [d, d], [big, big], [d], [bo], 0, 0) == 0
    assert acl.rt.synchronize_stream(0) == TRAP_READ


def test_equal_descs_from_other_handles_match_the_plan(dev: Runtime) -> None:
    x = np.ones(8, np.float16)
    _, bx = _buffer(x, 16)
    po, bo = _buffer(None, 16)
    d_in = acl.create_tensor_desc(ACL_FLOAT16, [8], ACL_FORMAT_ND)
    d_out = acl.create_tensor_desc(ACL_FLOAT16, [8], ACL_FORMAT_ND)  # equal, not the same
    assert acl.op.execute_v2("Add", [d_in, d_in], [bx, bx], [d_out], [bo], 0, 0) == 0
    wrong = acl.create_tensor_desc(ACL_FLOAT16, [4, 2], ACL_FORMAT_ND)
    ret = acl.op.execute_v2("Add", [d_in, d_in], [bx, bx], [wrong], [bo], 0, 0)
    assert ret == ACL_ERROR_OP_OUTPUT_NOT_MATCH
    assert acl.rt.synchronize_stream(0) == 0
    np.testing.assert_array_equal(_read(po, 8), x + x)


def test_records_are_separate_objects_with_every_field(dev: Runtime) -> None:
    got: list[WorkRecord] = []
    hooks.add_work_listener(got.append)
    try:
        a = Tensor(np.ones((2, 3), np.float16))
        _ = a + a
        _ = a + a
    finally:
        hooks.remove_work_listener(got.append)
    first, second = (r for r in got if r.kind == "op")
    assert (first.op_type, first.kind, first.device, first.stream) == ("Add", "op", 0, 0)
    assert first.name.startswith("Add_") and first.name != second.name
    assert second.task_id == first.task_id + 1
    assert second.start_us >= first.start_us + first.duration_us
    assert [(i.shape, i.dtype) for i in first.inputs] == [((2, 3), "FLOAT16")] * 2
    assert first.time_by_unit == second.time_by_unit
    first.time_by_unit["vector"] = -1.0  # a record is the listener's to annotate
    assert second.time_by_unit["vector"] != -1.0
    assert first.site is not None and first.site.file == __file__


# -- Tensor results ----------------------------------------------------------------------------
def test_result_alloc_site_is_the_op_line(
    dev: Runtime, user_code: Callable[..., dict[str, Any]]
) -> None:
    src = (
        "import numpy as np\n"
        "from npu_runtime.tensor import Tensor\n"
        "a = Tensor(np.ones(4, np.float16))\n"
        "c = a + a  # line 4\n"
        "rt.finalize()\n"
    )
    user_code(src, rt=dev)
    leaks = [f for f in dev.sanitizer.findings if f.check == "leak"]
    assert {f.alloc_site.line for f in leaks} == {3, 4}  # a's line and the result's line


def test_injected_malloc_failure_reaches_op_results(dev: Runtime) -> None:
    a = Tensor(np.ones(4, np.float16))
    faults.inject("acl.rt.malloc:1:207001")
    with pytest.raises(AclError) as info:
        _ = a + a
    assert info.value.code == 207001


def test_out_of_memory_result_is_the_acl_error(dev: Runtime) -> None:
    mem = dev.devices[0].memory
    a = Tensor(np.ones(4, np.float16))
    hog = mem.malloc(mem.capacity - mem.used - 4096, 0)  # leave less than a result needs
    try:
        with pytest.raises(AclError) as info:
            _ = Tensor.empty((1 << 20,), np.float16) + Tensor.empty((1 << 20,), np.float16)
        assert info.value.code == 207001
        _ = a + a  # a tiny result still fits
    finally:
        mem.free(hog.addr)


def test_fresh_runtime_after_reset_computes_from_its_own_memory() -> None:
    rt = get_runtime()
    for value in (1.0, 2.0):  # the second round reuses addresses on a new device memory
        rt.reset()
        rt.init()
        rt.set_device(0)
        a = Tensor(np.full(8, value, np.float16))
        np.testing.assert_array_equal((a + a).numpy(), np.full(8, 2 * value, np.float16))
    rt.reset()
