"""The program's own exception with a bare ACL code: its meaning reaches the debug console
and the exception widget, as `ascend-lens run` adds it on stderr."""

from __future__ import annotations

from dap_client import DapClient, line_of

HEAD = "ascend-lens: 207001 is ACL_ERROR_RT_MEMORY_ALLOCATION, returned by aclrtMalloc at "


def test_uncaught_own_exception_is_explained_in_exception_info_and_on_stderr(
    dap: DapClient, program
) -> None:
    path = program("bare_code.py")
    malloc = line_of(path, "malloc")
    # The ACL stop itself is off: the program checks `ret`, then raises.
    dap.start({"program": str(path)}, exception_filters=["uncaught"])
    stopped = dap.stopped()
    assert stopped["reason"] == "exception"
    assert dap.top_frame(stopped["threadId"])["line"] == line_of(path, "raise")
    info = dap.ok("exceptionInfo", {"threadId": stopped["threadId"]})
    assert info["exceptionId"] == "Exception"  # debugpy's own answer, with the meaning added
    description = info["description"].splitlines()
    assert description[0] == "malloc failed ret=207001"
    assert description[1] == f"{HEAD}{path}:{malloc}"
    assert description[2] == "    meaning: Device memory allocation failed."
    assert any(line.startswith("    fix: Free unused buffers") for line in description)
    assert f"{HEAD}{path}:{malloc}" in info["details"]["stackTrace"]
    dap.ok("continue", {"threadId": stopped["threadId"]})
    assert dap.event("exited")["exitCode"] == 1
    dap.event("terminated")
    stderr = dap.outputs("stderr")
    # After the traceback, as under `ascend-lens run`.
    assert stderr.index("Exception: malloc failed ret=207001") < stderr.index(HEAD)
    assert f"{HEAD}{path}:{malloc}\n    meaning: Device memory allocation failed.\n" in stderr


def test_exit_status_with_the_code_is_explained_on_stderr(dap: DapClient, program) -> None:
    path = program("bare_code.py")
    dap.start({"program": str(path), "args": ["exit"]}, exception_filters=[])
    assert dap.event("exited")["exitCode"] == 207001 % 256
    dap.event("terminated")
    stderr = dap.outputs("stderr")
    assert f"{HEAD}{path}:{line_of(path, 'malloc')}\n" in stderr


def test_unrelated_exception_keeps_debugpys_words(dap: DapClient, program) -> None:
    path = program("crash.py")
    dap.start({"program": str(path)}, exception_filters=["uncaught"])
    stopped = dap.stopped()
    info = dap.ok("exceptionInfo", {"threadId": stopped["threadId"]})
    assert info["exceptionId"] == "ZeroDivisionError"
    assert "ascend-lens:" not in info["description"]
    dap.ok("continue", {"threadId": stopped["threadId"]})
    assert dap.event("exited")["exitCode"] == 1
    dap.event("terminated")
    assert "ascend-lens:" not in dap.outputs("stderr")


def test_after_the_acl_stop_the_own_exception_is_explained_too(dap: DapClient, program) -> None:
    path = program("bare_code.py")
    dap.start({"program": str(path)}, exception_filters=["uncaught", "aclErrors"])
    first = dap.stopped()
    assert first["text"] == "ACL_ERROR_RT_MEMORY_ALLOCATION"  # the failing call itself
    assert dap.top_frame(first["threadId"])["line"] == line_of(path, "malloc")
    dap.ok("continue", {"threadId": first["threadId"]})
    second = dap.stopped()
    assert dap.top_frame(second["threadId"])["line"] == line_of(path, "raise")
    info = dap.ok("exceptionInfo", {"threadId": second["threadId"]})
    assert info["exceptionId"] == "Exception"
    assert f"\n{HEAD}{path}:{line_of(path, 'malloc')}\n" in info["description"]
    dap.ok("continue", {"threadId": second["threadId"]})
    assert dap.event("exited")["exitCode"] == 1
