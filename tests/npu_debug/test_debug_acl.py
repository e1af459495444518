"""ACL failures stop the session at the user's line; exceptionInfo explains them."""

from __future__ import annotations

from dap_client import DapClient, line_of


def stop_and_info(dap: DapClient) -> tuple[dict, dict, dict]:
    stopped = dap.stopped()
    frame = dap.top_frame(stopped["threadId"])
    info = dap.ok("exceptionInfo", {"threadId": stopped["threadId"]})
    return stopped, frame, info


def test_out_of_bounds_memcpy_stops_with_the_code_at_the_line(dap: DapClient, program) -> None:
    path = program("oob_memcpy.py")
    dap.start({"program": str(path)})
    stopped, frame, info = stop_and_info(dap)
    assert stopped["reason"] == "exception"
    assert stopped["text"] == "ACL_ERROR_RT_PARAM_INVALID"
    assert stopped["description"].startswith(
        "ACL error ACL_ERROR_RT_PARAM_INVALID (107000) in aclrtMemcpy"
    )
    assert (frame["source"]["path"], frame["line"]) == (str(path), line_of(path, "oob"))
    assert info["exceptionId"] == "ACL_ERROR_RT_PARAM_INVALID"
    assert info["breakMode"] == "always"
    acl = info["acl"]
    assert (acl["code"], acl["name"], acl["api"]) == (
        107000,
        "ACL_ERROR_RT_PARAM_INVALID",
        "aclrtMemcpy",
    )
    assert acl["meaning"] and acl["fix"]
    assert f"Fix: {acl['fix']}" in info["description"]
    # Variables at the stop are the user's, in the user's frame.
    assert dap.locals(frame["id"])["code"]["value"] == "0"
    # Stepping over from the stop finishes the call, which returned the code to the program.
    dap.ok("next", {"threadId": stopped["threadId"]})
    stepped = dap.stopped()
    assert stepped["reason"] == "step"
    after = dap.top_frame(stepped["threadId"])
    assert after["line"] == line_of(path, "oob") + 1
    assert dap.locals(after["id"])["code"]["value"] == "107000"
    dap.ok("continue", {"threadId": stopped["threadId"]})
    assert dap.event("exited")["exitCode"] == 0
    # The program still got the code back, as pyACL returns it.
    assert "memcpy returned 107000\n" in dap.outputs()


def test_async_failure_stops_at_the_launch_line_and_names_the_sync_line(
    dap: DapClient, program
) -> None:
    path = program("async_fault.py")
    launch, sync = line_of(path, "launch"), line_of(path, "sync")
    dap.start({"program": str(path)})
    stopped, frame, info = stop_and_info(dap)
    assert stopped["text"] == "ACL_ERROR_RT_AICORE_EXCEPTION"
    assert (frame["source"]["path"], frame["line"]) == (str(path), launch)
    assert f"launched at async_fault.py:{launch}" in stopped["description"]
    assert f"surfaced at synchronisation on async_fault.py:{sync}" in stopped["description"]
    acl = info["acl"]
    assert acl["code"] == 507015
    assert acl["api"] == "aclrtSynchronizeStream"
    assert (acl["launch_site"]["line"], acl["site"]["line"]) == (launch, sync)
    assert f"Launched at {path}:{launch}" in info["details"]["stackTrace"]
    assert f"Surfaced at {path}:{sync}" in info["details"]["stackTrace"]
    dap.ok("continue", {"threadId": stopped["threadId"]})
    assert dap.event("exited")["exitCode"] == 0
    assert "synchronize returned 507015\n" in dap.outputs()


def test_sanitizer_finding_names_the_alloc_and_free_lines_and_stops_once(
    dap: DapClient, program
) -> None:
    path = program("use_after_free.py")
    dap.start({"program": str(path)})
    stopped, frame, info = stop_and_info(dap)
    assert frame["line"] == line_of(path, "use")
    assert stopped["description"].startswith("ACL sanitizer: use-after-free")
    acl = info["acl"]
    assert (acl["kind"], acl["check"]) == ("sanitizer", "use-after-free")
    assert acl["alloc_site"]["line"] == line_of(path, "alloc")
    assert acl["free_site"]["line"] == line_of(path, "free")
    assert f"Allocated at {path}:{line_of(path, 'alloc')}" in info["details"]["stackTrace"]
    assert f"Freed at {path}:{line_of(path, 'free')}" in info["details"]["stackTrace"]
    dap.ok("continue", {"threadId": stopped["threadId"]})
    # The call's own error (same call) is reported in the console, not as a second stop.
    dap.event("exited")
    assert not any(
        m.get("event") == "stopped"
        for m in dap.timeline[
            dap.timeline.index(dap.find(lambda m: m.get("event") == "continued")) :
        ]
    )
    assert "also: ACL error ACL_ERROR_RT_PARAM_INVALID (107000)" in dap.outputs("console")


def test_acl_errors_filter_off_runs_through(dap: DapClient, program) -> None:
    path = program("oob_memcpy.py")
    dap.start({"program": str(path)}, exception_filters=["uncaught"])
    assert dap.event("exited")["exitCode"] == 0
    assert dap.find(lambda m: m.get("event") == "stopped") is None
    assert "memcpy returned 107000\n" in dap.outputs()


def test_stop_on_acl_error_false_runs_through(dap: DapClient, program) -> None:
    path = program("oob_memcpy.py")
    dap.start({"program": str(path), "stopOnAclError": False}, exception_filters=["aclErrors"])
    assert dap.event("exited")["exitCode"] == 0
    assert dap.find(lambda m: m.get("event") == "stopped") is None


def test_injected_api_and_op_failures_fire_and_stop(dap: DapClient, program) -> None:
    path = program("ops.py")
    dap.start({"program": str(path), "inject": ["aclrtMalloc:2:207001", "op:Add:2:507015"]})
    stopped, frame, info = stop_and_info(dap)
    assert frame["line"] == line_of(path, "malloc")
    assert (info["acl"]["code"], info["acl"]["api"]) == (207001, "aclrtMalloc")
    # The second loop iteration: the first malloc succeeded.
    assert dap.locals(frame["id"])["codes"]["value"] == "[0]"
    dap.ok("continue", {"threadId": stopped["threadId"]})
    stopped, frame, info = stop_and_info(dap)
    assert frame["line"] == line_of(path, "add")
    assert info["acl"]["code"] == 507015
    assert info["acl"]["site"]["line"] == line_of(path, "sync")
    dap.ok("continue", {"threadId": stopped["threadId"]})
    assert dap.event("exited")["exitCode"] == 5
    assert "codes [0, 207001, 507015]\n" in dap.outputs()


def test_devices_and_sanitizer_attributes_reach_the_runtime(dap: DapClient, program) -> None:
    path = program("use_after_free.py")
    dap.start({"program": str(path), "sanitizer": False, "devices": 2})
    stopped, _, info = stop_and_info(dap)
    # Without the sanitizer only the runtime's own error is left.
    assert info["acl"]["kind"] == "error"
    dap.ok("continue", {"threadId": stopped["threadId"]})
    dap.event("exited")
    path = program("ops.py")
    other = DapClient()
    try:
        other.start({"program": str(path), "devices": 2})
        other.event("exited")
        assert "devices 2\n" in other.outputs()
    finally:
        other.close()


def test_async_failure_launched_in_a_returned_function_stops_at_the_sync_line(
    dap: DapClient, program
) -> None:
    path = program("async_fault_helper.py")
    launch, sync = line_of(path, "launch"), line_of(path, "sync")
    dap.start({"program": str(path)})
    stopped, frame, info = stop_and_info(dap)
    # The launching frame is gone: stop where it surfaced, and still name the launch line.
    assert (frame["name"], frame["line"]) == ("<module>", sync)
    assert f"launched at async_fault_helper.py:{launch}" in stopped["description"]
    assert info["acl"]["launch_site"]["function"] == "enqueue_step"
    dap.ok("continue", {"threadId": stopped["threadId"]})
    assert dap.event("exited")["exitCode"] == 0


def test_unticking_the_filter_while_stopped_stops_no_more(dap: DapClient, program) -> None:
    path = program("ops.py")
    dap.start({"program": str(path), "inject": ["aclrtMalloc:1:207001", "aclrtMalloc:2:207001"]})
    stopped = dap.stopped()
    assert dap.top_frame(stopped["threadId"])["line"] == line_of(path, "malloc")
    dap.ok("setExceptionBreakpoints", {"filters": []})
    dap.ok("continue", {"threadId": stopped["threadId"]})
    assert dap.event("exited")["exitCode"] == 5
    assert sum(1 for m in dap.timeline if m.get("event") == "stopped") == 1
    assert "codes [207001, 207001]\n" in dap.outputs()


def test_acl_error_in_a_worker_thread_stops_that_thread(dap: DapClient, program) -> None:
    path = program("thread_oob.py")
    dap.start({"program": str(path)})
    stopped, frame, info = stop_and_info(dap)
    threads = {t["id"]: t["name"] for t in dap.ok("threads")["threads"]}
    assert threads[stopped["threadId"]] == "copier"
    assert (frame["name"], frame["line"]) == ("worker", line_of(path, "oob"))
    assert info["acl"]["code"] == 107000
    dap.ok("continue", {"threadId": stopped["threadId"]})
    assert dap.event("exited")["exitCode"] == 0
    assert "worker got [107000]\n" in dap.outputs()


def test_tensor_api_fault_stops_at_the_op_then_raises_where_it_surfaced(
    dap: DapClient, program
) -> None:
    path = program("tensor_fault.py")
    dap.start(
        {"program": str(path), "inject": "op:MatMul:1:507015"},
        exception_filters=["uncaught", "aclErrors"],
    )
    stopped, frame, info = stop_and_info(dap)
    assert frame["line"] == line_of(path, "launch")
    assert info["acl"]["site"]["line"] == line_of(path, "sync")
    dap.ok("continue", {"threadId": stopped["threadId"]})
    # The Pythonic layer raises: debugpy's own "uncaught" stop follows, with its own words.
    uncaught = dap.stopped()
    assert uncaught["reason"] == "exception"
    assert dap.top_frame(uncaught["threadId"])["line"] == line_of(path, "sync")
    plain = dap.ok("exceptionInfo", {"threadId": uncaught["threadId"]})
    assert "acl" not in plain
    assert plain["exceptionId"].endswith("AclError")
    dap.ok("continue", {"threadId": uncaught["threadId"]})
    assert dap.event("exited")["exitCode"] == 1
    assert "never reached" not in dap.outputs()
