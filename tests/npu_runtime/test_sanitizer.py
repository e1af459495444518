"""Sanitizer findings, each with the line that allocated and the line that misused."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from npu_runtime.core import hooks
from npu_runtime.core.runtime import Runtime
from npu_runtime.errors import AclError

PRELUDE = """\
import numpy as np
from npu_runtime.core import transfer, sched
from npu_runtime.core.runtime import get_runtime
from npu_runtime.errors import AclError

rt = get_runtime()
host = np.zeros(256, np.uint8)
h = rt.hostmem.register_array(host)
"""


def _call(expr: str, marker: str = "") -> str:
    """Source that runs `expr` on its own line and stores its code in `ret`."""
    tag = f"  # @{marker}" if marker else ""
    return f"ret = 0\ntry: {expr}{tag}\nexcept AclError as e: ret = e.code\n"


def _lines(src: str) -> dict[str, int]:
    """Line numbers of `# @marker` comments."""
    return {
        line.split("# @")[1].strip(): i
        for i, line in enumerate(src.splitlines(), start=1)
        if "# @" in line
    }


def _one(rt: Runtime, check: str) -> AclError:
    found = [f for f in rt.sanitizer.findings if f.check == check]
    assert len(found) == 1, rt.sanitizer.findings
    return found[0]


def test_use_after_free(rt: Runtime, user_code: Callable[..., dict[str, Any]]) -> None:
    src = PRELUDE + (
        "d = transfer.malloc(rt, 64, 0)  # @alloc\n"
        "transfer.free(rt, d)  # @free\n" + _call("transfer.memcpy(rt, d, 64, h, 64, 1)", "use")
    )
    ns = user_code(src)
    at = _lines(src)
    assert ns["ret"] == 107000
    f = _one(rt, "use-after-free")
    assert f.kind == "sanitizer"
    assert (f.site.line, f.alloc_site.line, f.free_site.line) == (
        at["use"],
        at["alloc"],
        at["free"],
    )
    assert f.site.file.endswith("user.py")


def test_double_free(rt: Runtime, user_code: Callable[..., dict[str, Any]]) -> None:
    src = PRELUDE + (
        "d = transfer.malloc(rt, 64, 0)  # @alloc\n"
        "transfer.free(rt, d)  # @free\n" + _call("transfer.free(rt, d)", "again")
    )
    ns = user_code(src)
    at = _lines(src)
    assert ns["ret"] == 107000
    f = _one(rt, "double-free")
    assert (f.site.line, f.alloc_site.line, f.free_site.line) == (
        at["again"],
        at["alloc"],
        at["free"],
    )


def test_out_of_bounds_inside_padding_succeeds_but_is_reported(
    rt: Runtime, user_code: Callable[..., dict[str, Any]]
) -> None:
    src = PRELUDE + (
        "d = transfer.malloc(rt, 40, 0)  # @alloc\n"  # 96 bytes reserved
        + _call("transfer.memcpy(rt, d, 64, h, 64, 1)", "copy")
    )
    ns = user_code(src)
    at = _lines(src)
    assert ns["ret"] == 0  # the hardware would not notice
    f = _one(rt, "out-of-bounds")
    assert (f.site.line, f.alloc_site.line) == (at["copy"], at["alloc"])
    assert "24 bytes past the 40-byte allocation" in f.detail


def test_out_of_bounds_past_the_reservation_fails(
    rt: Runtime, user_code: Callable[..., dict[str, Any]]
) -> None:
    src = (
        PRELUDE
        + "d = transfer.malloc(rt, 64, 0)\n"
        + _call("transfer.memcpy(rt, d, 256, h, 256, 1)")
    )
    assert user_code(src)["ret"] == 107000
    _one(rt, "out-of-bounds")


def test_read_before_sync(rt: Runtime, user_code: Callable[..., dict[str, Any]]) -> None:
    src = PRELUDE + (
        "s = sched.create_stream(rt)\n"
        "d = transfer.malloc(rt, 64, 0)\n"
        "pinned = transfer.malloc_host(rt, 64)\n"
        "transfer.memcpy_async(rt, pinned, 64, d, 64, 2, s)  # @launch\n"
        "transfer.memcpy(rt, d, 64, pinned, 64, 1)  # @read\n"
        "sched.synchronize_stream(rt, s)\n"
        "transfer.memcpy(rt, d, 64, pinned, 64, 1)  # @after\n"
    )
    user_code(src)
    at = _lines(src)
    f = _one(rt, "read-before-sync")
    assert (f.site.line, f.launch_site.line) == (at["read"], at["launch"])


def test_leak_at_finalize(rt: Runtime, user_code: Callable[..., dict[str, Any]]) -> None:
    src = PRELUDE + "d = transfer.malloc(rt, 1000, 0)  # @alloc\nrt.finalize()  # @fin\n"
    user_code(src)
    at = _lines(src)
    f = _one(rt, "leak")
    assert (f.alloc_site.line, f.site.line) == (at["alloc"], at["fin"])
    assert "1000 bytes" in f.detail


def test_findings_reach_error_listeners_and_can_be_switched_off(rt: Runtime) -> None:
    from npu_runtime.core import transfer

    seen: list[AclError] = []
    hooks.add_error_listener(seen.append)
    try:
        d = transfer.malloc(rt, 64, 0)
        transfer.free(rt, d)
        with pytest.raises(AclError) as exc:
            transfer.free(rt, d)
        assert exc.value.code == 107000
        assert [e.kind for e in seen] == ["sanitizer", "error"]
        rt.sanitizer.enabled = False
        with pytest.raises(AclError):
            transfer.free(rt, d)
        assert [e.kind for e in seen] == ["sanitizer", "error", "error"]
    finally:
        hooks.remove_error_listener(seen.append)


def test_host_leak_at_finalize(rt: Runtime, user_code: Callable[..., dict[str, Any]]) -> None:
    src = PRELUDE + "p = transfer.malloc_host(rt, 128)  # @alloc\nrt.finalize()\n"
    user_code(src)
    f = _one(rt, "leak")
    assert f.alloc_site.line == _lines(src)["alloc"]
    assert "128 bytes of host memory" in f.detail


def test_async_copy_into_freed_host_memory(
    rt: Runtime, user_code: Callable[..., dict[str, Any]]
) -> None:
    src = PRELUDE + (
        "s = sched.create_stream(rt)\n"
        "d = transfer.malloc(rt, 64, 0)\n"
        "pinned = transfer.malloc_host(rt, 64)  # @alloc\n"
        "transfer.memcpy_async(rt, pinned, 64, d, 64, 2, s)  # @launch\n"
        "transfer.free_host(rt, pinned)\n"
        "sched.synchronize_stream(rt, s)  # @sync\n"
    )
    user_code(src)
    at = _lines(src)
    f = _one(rt, "use-after-free")
    assert (f.site.line, f.launch_site.line, f.alloc_site.line) == (
        at["sync"],
        at["launch"],
        at["alloc"],
    )
    assert "bytes were dropped" in f.detail
