"""A cell stopping on its own exception with a bare ACL code gets that code's meaning."""

from __future__ import annotations

from typing import Any

from tests.npu_kernel.conftest import execute, of_type


def failing_malloc(tag: str) -> str:
    """A cell whose line 3 fails; `tag` keeps its text (so its cell name) unique: IPython
    names identical cells by the first one's execution count."""
    return (
        f"import acl  # {tag}\n"
        "acl.init(); acl.rt.set_device(0)\n"
        "ptr, ret = acl.rt.malloc(1 << 50, 0)  # more than the device has\n"
    )


def stderr(messages: list[dict[str, Any]]) -> str:
    return "".join(c["text"] for c in of_type(messages, "stream") if c["name"] == "stderr")


def _reset(kc: Any) -> None:
    reply, msgs = execute(kc, "%npu_reset")
    assert reply["status"] == "ok", msgs


def test_own_exception_with_the_code_is_explained_at_the_cell_line(
    kernel: tuple[Any, Any],
) -> None:
    _, kc = kernel
    _reset(kc)
    reply, msgs = execute(
        kc,
        failing_malloc("raise") + "if ret != 0:\n    raise Exception(f'malloc failed ret={ret}')\n",
    )
    assert reply["status"] == "error"
    assert reply["ename"] == "Exception" and reply["evalue"] == "malloc failed ret=207001"
    count = reply["execution_count"]
    lines = stderr(msgs).splitlines()
    assert lines[0] == (
        "ascend-lens: 207001 is ACL_ERROR_RT_MEMORY_ALLOCATION, returned by aclrtMalloc"
        f" at Cell In[{count}], line 3"
    )
    assert lines[1] == "    meaning: Device memory allocation failed."
    assert lines[2].startswith("    detail: cannot allocate 1125899906842624 bytes on device 0")
    assert any(line.startswith("    fix: Free unused buffers") for line in lines)
    # The traceback itself stays IPython's, and comes first.
    kinds = [m["header"]["msg_type"] for m in msgs if m["header"]["msg_type"] != "status"]
    assert kinds.index("error") < kinds.index("stream")


def test_exit_status_and_a_later_cell_are_explained(kernel: tuple[Any, Any]) -> None:
    _, kc = kernel
    _reset(kc)
    # A cell differing only in a comment ran first: the explanation names the later one.
    execute(kc, failing_malloc("exit, earlier"))
    first, _ = execute(kc, failing_malloc("exit"))
    assert first["status"] == "ok"
    # The script checks `ret` in the next cell and exits with it, as scripts do.
    reply, msgs = execute(kc, "import sys\nsys.exit(ret)")
    assert reply["ename"] == "SystemExit"
    assert (
        "ascend-lens: 207001 is ACL_ERROR_RT_MEMORY_ALLOCATION, returned by aclrtMalloc"
        f" at Cell In[{first['execution_count']}], line 3"
    ) in stderr(msgs).splitlines()  # after IPython's own "To exit: use 'exit'" warning
    # A code in the exception's arguments counts as well.
    reply, msgs = execute(kc, "raise RuntimeError('malloc', ret)")
    assert "ascend-lens: 207001 is ACL_ERROR_RT_MEMORY_ALLOCATION" in stderr(msgs)


def test_other_exceptions_and_numbers_get_no_explanation(kernel: tuple[Any, Any]) -> None:
    _, kc = kernel
    _reset(kc)
    execute(kc, failing_malloc("other"))
    for code in ("raise ValueError('bad input')", "raise Exception('ret=2070011')", "1 / 0"):
        reply, msgs = execute(kc, code)
        assert reply["status"] == "error"
        assert "ascend-lens:" not in stderr(msgs), code
    # After a reset the last failure is forgotten: its number means nothing any more.
    _reset(kc)
    reply, msgs = execute(kc, "raise Exception('ret=207001')")
    assert reply["status"] == "error"
    assert "ascend-lens:" not in stderr(msgs)


def test_an_acl_error_keeps_its_own_header_only(kernel: tuple[Any, Any]) -> None:
    _, kc = kernel
    _reset(kc)
    code = "from npu_runtime.core.runtime import get_runtime\nget_runtime().set_device(0)\n"
    reply, msgs = execute(kc, code)
    assert reply["ename"] == "AclError"
    assert "ascend-lens:" not in stderr(msgs)
