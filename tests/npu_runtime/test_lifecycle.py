"""init/finalize, devices and contexts: the real codes for each misuse (api.md §8)."""

from __future__ import annotations

import threading
from pathlib import Path
from types import ModuleType

import pytest

from npu_runtime.core.runtime import Runtime


def test_init_twice_and_finalize_twice(acl: ModuleType) -> None:
    assert acl.finalize() == 100001  # never initialised
    assert acl.init() == 0
    assert acl.init() == 100002
    assert acl.finalize() == 0
    assert acl.finalize() == 100037
    assert acl.init() == 0  # current CANN allows init after finalize
    assert acl.finalize() == 0


def test_use_before_init(acl: ModuleType) -> None:
    assert acl.rt.set_device(0) == 100001
    assert acl.rt.create_context(0) == (0, 100001)
    assert acl.rt.malloc(16, 0) == (0, 107002)


def test_init_config_file_errors(acl: ModuleType, tmp_path: Path) -> None:
    assert acl.init(str(tmp_path / "missing.json")) == 100003
    bad = tmp_path / "acl.json"
    bad.write_text("{not json")
    assert acl.init(str(bad)) == 100006
    good = tmp_path / "ok.json"
    good.write_text("{}")
    assert acl.init(str(good)) == 0


@pytest.mark.parametrize("device", [-1, 8, 100])
def test_set_device_out_of_range(acl: ModuleType, device: int) -> None:
    acl.init()
    assert acl.rt.set_device(device) == 107001


def test_device_count_is_configurable(bare_rt: Runtime, acl: ModuleType) -> None:
    bare_rt.configure(devices=2)
    acl.init()
    assert acl.rt.get_device_count() == (2, 0)
    assert acl.rt.set_device(1) == 0
    assert acl.rt.set_device(2) == 107001


def test_reset_device_never_set_or_twice(acl: ModuleType) -> None:
    acl.init()
    assert acl.rt.reset_device(3) == 507007
    assert acl.rt.set_device(3) == 0
    assert acl.rt.reset_device(3) == 0
    assert acl.rt.reset_device(3) == 507007


def test_set_device_gives_default_context_and_stream(acl: ModuleType) -> None:
    acl.init()
    assert acl.rt.get_device() == (0, 107002)
    assert acl.rt.get_context() == (0, 107002)
    assert acl.rt.create_stream() == (0, 107002)
    acl.rt.set_device(5)
    assert acl.rt.get_device() == (5, 0)
    ctx, ret = acl.rt.get_context()
    assert ret == 0 and ctx != 0
    stream, ret = acl.rt.ctx_get_current_default_stream()
    assert ret == 0 and stream != 0
    assert acl.rt.stream_get_id(stream) == (0, 0)
    assert acl.rt.synchronize_stream(0) == 0  # NULL = default stream


def test_run_mode_soc_and_version(acl: ModuleType) -> None:
    assert acl.rt.get_run_mode() == (1, 0)  # ACL_HOST
    assert acl.get_soc_name() == "Ascend910B2"
    assert acl.get_version() == (1, 15, 0, 0)


def test_explicit_contexts(acl: ModuleType) -> None:
    acl.init()
    ctx, ret = acl.rt.create_context(1)
    assert ret == 0
    assert acl.rt.get_context() == (ctx, 0)
    assert acl.rt.get_device() == (1, 0)
    assert acl.rt.destroy_context(0) == 100000
    assert acl.rt.set_context(0) == 100000
    assert acl.rt.destroy_context(ctx) == 0
    assert acl.rt.set_context(ctx) == 100000
    assert acl.rt.get_context() == (0, 107002)


def test_context_is_per_thread(acl: ModuleType) -> None:
    acl.init()
    acl.rt.set_device(0)
    ctx, _ = acl.rt.get_context()
    seen: dict[str, object] = {}

    def worker() -> None:
        seen["before"] = acl.rt.malloc(64, 0)[1]
        seen["set"] = acl.rt.set_context(ctx)
        seen["device"] = acl.rt.get_device()
        ptr, seen["malloc"] = acl.rt.malloc(64, 0)
        seen["free"] = acl.rt.free(ptr)

    t = threading.Thread(target=worker)
    t.start()
    t.join()
    assert seen == {"before": 107002, "set": 0, "device": (0, 0), "malloc": 0, "free": 0}


def test_stream_of_another_device_is_rejected(acl: ModuleType) -> None:
    acl.init()
    acl.rt.set_device(0)
    s0, _ = acl.rt.create_stream()
    acl.rt.set_device(1)
    assert acl.rt.synchronize_stream(s0) == 107003
    assert acl.rt.synchronize_stream(0xDEAD) == 107000


def test_finalize_releases_devices(acl: ModuleType, bare_rt: Runtime) -> None:
    acl.init()
    acl.rt.set_device(0)
    acl.rt.set_device(1)
    assert acl.finalize() == 0
    assert bare_rt.devices == {}
    assert acl.rt.get_device() == (0, 107002)


def test_device_info_and_capability(acl: ModuleType) -> None:
    assert acl.rt.get_device_info(0, 101) == (24, 0)
    assert acl.rt.get_device_info(0, 201) == (48, 0)
    assert acl.rt.get_device_info(0, 301) == (64 << 30, 0)
    assert acl.rt.get_device_info(9, 101) == (0, 107001)
    assert acl.get_device_capability(0, 2) == (192 << 20, 0)


def test_recent_error_message_and_last_error(acl: ModuleType) -> None:
    acl.init()
    assert acl.get_recent_err_msg() is None
    assert acl.rt.set_device(42) == 107001
    msg = acl.get_recent_err_msg()
    assert msg is not None and "107001" in msg and "aclrtSetDevice" in msg
    # EE9999: neither a parameter nor a memory failure
    assert "Solution:" in msg and msg.startswith("EE9999: [PID: ")
    assert acl.get_recent_err_msg() is None  # read once
    assert acl.rt.peek_at_last_error(0) == 107001
    assert acl.rt.get_last_error(0) == 107001
    assert acl.rt.get_last_error(0) == 0


def test_core_api_raises_with_the_user_line(bare_rt: Runtime, user_code) -> None:
    src = (
        "from npu_runtime.errors import AclError\n"
        "rt.init()\n"
        "try:\n"
        "    rt.set_device(42)\n"
        "except AclError as e:\n"
        "    err = e\n"
    )
    err = user_code(src, rt=bare_rt)["err"]
    assert (err.code, err.name, err.api) == (
        107001,
        "ACL_ERROR_RT_INVALID_DEVICEID",
        "aclrtSetDevice",
    )
    assert err.site.file.endswith("user.py") and err.site.line == 4
    assert err.fix and err.meaning and "out of range" in str(err)


def test_threads_setting_the_same_device_share_its_default_context(acl: ModuleType) -> None:
    acl.init()
    assert acl.rt.get_device_count() == (8, 0)  # an Atlas 800T A2 by default
    acl.rt.set_device(2)
    main_ctx, _ = acl.rt.get_context()
    got: list[object] = []

    def worker() -> None:
        got.append(acl.rt.set_device(2))
        got.append(acl.rt.get_context())

    t = threading.Thread(target=worker)
    t.start()
    t.join()
    assert got == [0, (main_ctx, 0)]
    assert acl.rt.reset_device(2) == 0  # two sets, two resets
    assert acl.rt.get_device() == (2, 0)  # still open
    assert acl.rt.reset_device(2) == 0
    assert acl.rt.get_device() == (0, 107002)
