"""Error injection and launch.submit: device-side faults surface at the next sync."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from npu_runtime.core import faults, hooks, sched
from npu_runtime.core.faults import api_key, parse
from npu_runtime.core.launch import Cost, submit
from npu_runtime.core.runtime import Runtime
from npu_runtime.errors import AclError
from npu_runtime.records import WorkRecord


def test_spec_grammar() -> None:
    r = parse("acl.rt.malloc:3:207001")
    assert (r.target, r.nth, r.code, r.is_op) == ("malloc", 3, 207001, False)
    r = parse("op:MatMul:2:507015")
    assert (r.target, r.nth, r.code, r.is_op) == ("MatMul", 2, 507015, True)
    assert api_key("aclrtMemcpyAsync") == api_key("acl.rt.memcpy_async") == "memcpyasync"
    for bad in ("malloc", "acl.rt.malloc:x:1", "acl.rt.malloc:0:207001", "op:MatMul:1"):
        with pytest.raises(ValueError, match="bad injection spec"):
            parse(bad)


def test_nth_api_call_fails_once(rt: Runtime) -> None:
    import sys

    from npu_runtime.launcher import SHIM_DIR

    sys.path.insert(0, SHIM_DIR)
    try:
        import acl
    finally:
        sys.path.remove(SHIM_DIR)
    faults.inject("acl.rt.malloc:3:207001")
    results = [acl.rt.malloc(64, 0)[1] for _ in range(5)]
    assert results == [0, 0, 207001, 0, 0]
    assert "injected" in acl.get_recent_err_msg()


def test_env_var_is_read(monkeypatch: pytest.MonkeyPatch) -> None:
    inj = faults.Injector()
    inj.load_env({"NPU_INJECT": "aclrtMalloc:1:207001, op:Add:2:507015"})
    assert [str(r) for r in inj.rules()] == ["malloc:1:207001", "op:Add:2:507015"]


def test_env_var_with_an_unknown_name_is_refused_whole(
    capsys: pytest.CaptureFixture[str],
) -> None:
    inj = faults.Injector()
    inj.load_env({"NPU_INJECT": "aclrtMalloc:1:207001,op:Conv2d:1:507015"})
    assert inj.rules() == []
    assert not inj.active
    err = capsys.readouterr().err
    assert err.startswith(
        "ascend-lens: ignoring NPU_INJECT: unknown op type 'Conv2d' (did you mean Conv2D?); "
        "known op types: "
    )
    assert err.count("\n") == 1


def test_injected_op_fault_surfaces_at_sync_with_launch_site(
    rt: Runtime, user_code: Callable[..., dict[str, Any]]
) -> None:
    faults.inject("op:MatMul:2:507015")
    src = (
        "from npu_runtime.core.launch import submit, Cost\n"
        "from npu_runtime.core import sched\n"
        "from npu_runtime.errors import AclError\n"
        "mm = dict(name='MatMul', op_type='MatMul', cost=Cost(5.0), compute=lambda: None)\n"
        "submit(0, **mm)\n"
        "submit(0, **mm)  # line 6: the failing launch\n"
        "submit(0, **mm)\n"
        "try:\n"
        "    sched.synchronize_stream(rt, 0)  # line 9\n"
        "except AclError as e:\n"
        "    err = e\n"
    )
    ns = user_code(src, rt=rt)
    err = ns["err"]
    assert (err.code, err.name) == (507015, "ACL_ERROR_RT_AICORE_EXCEPTION")
    assert (err.site.line, err.launch_site.line) == (9, 6)
    assert err.api == "aclrtSynchronizeStream"
    sched.synchronize_stream(rt, 0)  # reported once


def test_compute_acl_error_is_deferred(rt: Runtime) -> None:
    def boom() -> None:
        raise AclError(507015, "aclopExecuteV2", "index 9 out of range")

    errors: list[AclError] = []
    hooks.add_error_listener(errors.append)
    try:
        rec = submit(0, name="Gather_1", op_type="Gather", cost=Cost(2.0), compute=boom)
        assert isinstance(rec, WorkRecord)
        assert errors == []  # nothing at the launch
        with pytest.raises(AclError) as exc:
            rt.synchronize_device()
    finally:
        hooks.remove_error_listener(errors.append)
    assert exc.value.code == 507015 and "index 9" in exc.value.detail
    assert [e.code for e in errors] == [507015]


def test_submit_records_and_listeners(rt: Runtime) -> None:
    got: list[WorkRecord] = []
    hooks.add_work_listener(got.append)
    try:
        s = sched.create_stream(rt)
        cost = {
            "duration_us": 40.0,
            "bound": "cube",
            "unit": "AI_CORE",
            "block_dim": 24,
            "flops": 10,
        }
        a = submit(s, name="MatMul_1", op_type="MatMul", cost=cost, compute=lambda: None)
        b = submit(s, name="MatMul_2", op_type="MatMul", cost=Cost(10.0), compute=None)
    finally:
        hooks.remove_work_listener(got.append)
    assert got == [a, b]
    assert a.stream == b.stream != 0
    assert b.task_id > a.task_id and b.start_us >= a.end_us
    assert (a.duration_us, a.bound, a.block_dim, a.flops) == (40.0, "cube", 24, 10)


def test_submit_without_context_is_107002(bare_rt: Runtime) -> None:
    bare_rt.init()
    with pytest.raises(AclError) as exc:
        submit(0, name="Add", op_type="Add", cost=Cost(1.0))
    assert exc.value.code == 107002


def test_broken_listener_does_not_break_the_program(
    rt: Runtime, capsys: pytest.CaptureFixture[str]
) -> None:
    def bad(_: WorkRecord) -> None:
        raise RuntimeError("listener bug")

    hooks.add_work_listener(bad)
    try:
        submit(0, name="Add", op_type="Add", cost=Cost(1.0))
    finally:
        hooks.remove_work_listener(bad)
    assert "listener bug" in capsys.readouterr().err


def test_listeners_are_removed_by_equality() -> None:
    got: list[WorkRecord] = []
    hooks.add_work_listener(got.append)
    hooks.add_work_listener(got.append)
    hooks.remove_work_listener(got.append)  # a new bound-method object, equal to the first
    assert hooks.work_listeners.count(got.append) == 1
    hooks.remove_work_listener(got.append)
    assert got.append not in hooks.work_listeners


def test_pending_fault_surfaces_at_destroy_stream(rt: Runtime) -> None:
    s = sched.create_stream(rt)
    faults.inject("op:Gather:1:507015")
    submit(s, name="Gather_1", op_type="Gather", cost=Cost(3.0))
    with pytest.raises(AclError) as exc:
        sched.destroy_stream(rt, s)
    assert exc.value.code == 507015 and exc.value.api == "aclrtDestroyStream"
    with pytest.raises(AclError) as again:
        sched.synchronize_stream(rt, s)
    assert again.value.code == 107000  # the stream is gone
