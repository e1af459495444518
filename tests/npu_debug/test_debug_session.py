"""The adapter as a plain Python debugger: relay, launch attributes, exit codes, clean endings."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from dap_client import PROGRAMS, DapClient, line_of, wait_no_processes


def test_initialize_adds_the_acl_errors_filter_on_by_default(dap: DapClient) -> None:
    caps = dap.ok("initialize", {"adapterID": "ascend", "pathFormat": "path"})
    filters = {f["filter"]: f for f in caps["exceptionBreakpointFilters"]}
    assert filters["aclErrors"]["label"] == "ACL errors"
    assert filters["aclErrors"]["default"] is True
    # debugpy's own filters are still there: the relay adds, it does not replace.
    assert {"raised", "uncaught"} <= set(filters)
    assert caps["supportsExceptionInfoRequest"] is True
    assert caps["supportsConfigurationDoneRequest"] is True


def test_breakpoint_hits_with_the_right_variables(dap: DapClient, program) -> None:
    path = program("basic.py")
    line = line_of(path, "after_total")
    dap.start({"program": str(path)}, breakpoints={str(path): [line]})
    stopped = dap.stopped()
    assert stopped["reason"] == "breakpoint"
    frame = dap.top_frame(stopped["threadId"])
    assert (frame["source"]["path"], frame["line"]) == (str(path), line)
    variables = dap.locals(frame["id"])
    assert variables["total"]["value"] == "6"
    assert variables["numbers"]["value"] == "[1, 2, 3]"
    assert "label" not in variables  # the breakpoint line has not run yet
    result = dap.ok(
        "evaluate", {"expression": "total * 7", "frameId": frame["id"], "context": "repl"}
    )
    assert result["result"] == "42"
    dap.ok("next", {"threadId": stopped["threadId"]})
    stepped = dap.stopped()
    assert stepped["reason"] == "step"
    assert dap.top_frame(stepped["threadId"])["line"] == line + 1
    dap.ok("continue", {"threadId": stopped["threadId"]})
    assert dap.event("exited")["exitCode"] == 0
    dap.event("terminated")


def test_args_env_cwd_reach_the_program_and_stdout_stays_its_own(
    dap: DapClient, program, tmp_path: Path
) -> None:
    path = program("basic.py")
    workdir = tmp_path / "work"
    workdir.mkdir()
    dap.start(
        {
            "program": str(path),
            "args": ["--alpha", "two words"],
            "env": {"ASCEND_LENS_TEST_VAR": "from-launch"},
            "cwd": str(workdir),
        }
    )
    assert dap.event("exited")["exitCode"] == 0
    dap.event("terminated")
    # Exactly the program's output: nothing of the side channel leaks into stdout.
    assert dap.outputs() == f"total=6 ['--alpha', 'two words'] from-launch {workdir}\n"


def test_sys_exit_code_comes_through(dap: DapClient, program) -> None:
    path = program("basic.py")
    dap.start({"program": str(path), "env": {"EXIT_CODE": "3"}})
    assert dap.event("exited")["exitCode"] == 3
    dap.event("terminated")
    dap.request("disconnect", {})
    assert dap.close() == 0
    assert wait_no_processes(str(path)) == []


def test_crashing_program_ends_cleanly_with_exit_code_1(dap: DapClient, program) -> None:
    path = program("crash.py")
    dap.start({"program": str(path)}, exception_filters=[])
    assert dap.event("exited")["exitCode"] == 1
    dap.event("terminated")
    assert "ZeroDivisionError" in dap.outputs("stderr")
    assert dap.close() == 0
    assert wait_no_processes(str(path)) == []


def test_uncaught_exception_filter_still_stops_at_the_raising_line(dap: DapClient, program) -> None:
    path = program("crash.py")
    dap.start({"program": str(path)}, exception_filters=["uncaught", "aclErrors"])
    stopped = dap.stopped()
    assert stopped["reason"] == "exception"
    assert dap.top_frame(stopped["threadId"])["line"] == line_of(path, "raise")
    info = dap.ok("exceptionInfo", {"threadId": stopped["threadId"]})
    assert info["exceptionId"] == "ZeroDivisionError"  # not ours: relayed untouched
    dap.ok("continue", {"threadId": stopped["threadId"]})
    assert dap.event("exited")["exitCode"] == 1


@pytest.mark.parametrize("ending", ["terminate", "disconnect", "detach"])
def test_endless_loop_ended_by_the_editor_leaves_no_processes(
    dap: DapClient, program, ending: str
) -> None:
    path = program("endless.py")
    dap.start({"program": str(path)})
    dap.wait_for(
        lambda m: m.get("event") == "output" and "looping" in m["body"]["output"], what="looping"
    )
    assert wait_no_processes(str(path), timeout=0) != []  # it is running
    if ending == "terminate":
        dap.ok("terminate", {})
        dap.event("terminated")
    dap.ok("disconnect", {"terminateDebuggee": ending != "detach"})
    assert dap.close() == 0
    assert wait_no_processes(str(path)) == []


def test_editor_vanishing_mid_session_leaves_no_processes(dap: DapClient, program) -> None:
    path = program("endless.py")
    dap.start({"program": str(path)})
    dap.wait_for(
        lambda m: m.get("event") == "output" and "looping" in m["body"]["output"], what="looping"
    )
    assert dap.close() == 0  # stdin closed without disconnect
    assert wait_no_processes(str(path)) == []


def test_pause_in_endless_loop_shows_the_loop_line(dap: DapClient, program) -> None:
    path = program("endless.py")
    dap.start({"program": str(path)})
    dap.wait_for(
        lambda m: m.get("event") == "output" and "looping" in m["body"]["output"], what="looping"
    )
    threads = dap.ok("threads")["threads"]
    main = next(t for t in threads if t["name"] == "MainThread")
    dap.ok("pause", {"threadId": main["id"]})
    stopped = dap.stopped()
    assert stopped["reason"] == "pause"
    frame = dap.top_frame(stopped["threadId"])
    assert frame["source"]["path"] == str(path)
    # Our own threads (the bridge) are never listed as the user's.
    assert all("npu-debug" not in t["name"] for t in dap.ok("threads")["threads"])
    dap.ok("disconnect", {"terminateDebuggee": True})
    assert wait_no_processes(str(path)) == []


def test_module_launch_runs_as_main(dap: DapClient) -> None:
    dap.start({"module": "pkgmod", "args": ["x"], "cwd": str(PROGRAMS)})
    assert dap.event("exited")["exitCode"] == 0
    assert dap.outputs() == "module ran __main__ ['x'] False\n"


BAD_LAUNCHES = [
    ({}, "exactly one of 'program' or 'module'"),
    ({"program": "a.py", "module": "m"}, "exactly one of 'program' or 'module'"),
    ({"program": "/no/such/file.py"}, "program not found: /no/such/file.py"),
    ({"module": "m", "args": 5}, "'args' must be a string or a list of strings"),
    ({"module": "m", "env": {"A": 1}}, "'env' must map names to strings"),
    ({"module": "m", "devices": 0}, "'devices' must be an integer from 1 to 64"),
    ({"module": "m", "devices": 65}, "'devices' must be an integer from 1 to 64"),
    (
        {"module": "m", "inject": ["acl.rt.malocc:1:207001"]},
        "unknown API 'acl.rt.malocc' (did you mean acl.rt.malloc?)",
    ),
    ({"module": "m", "sanitizer": "yes"}, "'sanitizer' must be true or false"),
    ({"module": "m", "cwd": "/no/such/dir"}, "'cwd' is not a directory"),
    ({"module": "m", "inject": [3]}, "'inject' must be a string or a list of strings"),
    ({"module": "m", "inject": "op:Add:0:1"}, "N must be >= 1"),
    ({"module": "m", "device": "Ascend999"}, "unknown device 'Ascend999'"),
]


def test_bad_launch_configs_are_error_responses_and_the_adapter_lives_on(
    dap: DapClient, program
) -> None:
    dap.ok("initialize", {"adapterID": "ascend", "pathFormat": "path"})
    for arguments, message in BAD_LAUNCHES:
        response = dap.request("launch", arguments)
        assert response["success"] is False, arguments
        assert message in response["message"]
        assert message in response["body"]["error"]["format"]
        assert response["body"]["error"]["showUser"] is True
    # The same adapter can still launch a good configuration.
    path = program("basic.py")
    seq = dap.send({"type": "request", "command": "launch", "arguments": {"program": str(path)}})
    dap.event("initialized")
    dap.ok("configurationDone")
    assert dap.wait_for(lambda m: m.get("request_seq") == seq, what="launch")["success"]
    assert dap.event("exited")["exitCode"] == 0


def test_garbage_on_stdin_ends_the_adapter_without_a_traceback() -> None:
    client = DapClient()
    assert client.proc.stdin is not None
    client.proc.stdin.write(b"this is not DAP\r\n\r\n")
    client.proc.stdin.flush()
    assert client.close() == 0
    assert b"Traceback" not in b"".join(client.stderr_lines)


def test_run_without_debugging_still_runs_on_the_emulator(dap: DapClient, program) -> None:
    path = program("oob_memcpy.py")
    dap.ok("initialize", {"adapterID": "ascend", "pathFormat": "path"})
    # noDebug (Run Without Debugging) and an interpreter given with its own arguments.
    launch = {"program": str(path), "noDebug": True, "python": [sys.executable, "-X", "utf8"]}
    assert dap.request("launch", launch)["success"]
    profile = dap.event("ascendProfile")
    assert profile["schema"] == "ascend-lens.profile/1"
    assert dap.event("exited")["exitCode"] == 0
    assert dap.find(lambda m: m.get("event") == "stopped") is None
    assert "memcpy returned 107000\n" in dap.outputs()


def test_run_in_terminal_reverse_request_is_relayed_both_ways(dap: DapClient, program) -> None:
    path = program("basic.py")
    dap.ok(
        "initialize",
        {"adapterID": "ascend", "pathFormat": "path", "supportsRunInTerminalRequest": True},
    )
    launch = {"program": str(path), "console": "integratedTerminal", "env": {"EXIT_CODE": "4"}}
    seq = dap.send({"type": "request", "command": "launch", "arguments": launch})
    request = dap.wait_for(
        lambda m: m.get("type") == "request" and m.get("command") == "runInTerminal",
        what="runInTerminal",
    )
    # Play the editor's terminal: run the command debugpy asked for.
    args = request["arguments"]
    env = {**os.environ, **{k: v for k, v in (args.get("env") or {}).items() if v is not None}}
    terminal = subprocess.Popen(
        args["args"], cwd=args.get("cwd"), env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    try:
        dap.send(
            {
                "type": "response",
                "request_seq": request["seq"],
                "command": "runInTerminal",
                "success": True,
                "body": {"processId": terminal.pid},
            }
        )
        dap.event("initialized")
        dap.ok("configurationDone")
        assert dap.wait_for(lambda m: m.get("request_seq") == seq, what="launch")["success"]
        assert dap.event("exited")["exitCode"] == 4
        assert terminal.communicate(timeout=30)[0].decode().startswith("total=6 []")
    finally:
        if terminal.poll() is None:
            terminal.kill()
            terminal.wait()
