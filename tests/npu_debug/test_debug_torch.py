"""A torch_npu program under the debug adapter: running out of HBM stops at the user's line."""

from __future__ import annotations

import pytest
from dap_client import DapClient, line_of

pytest.importorskip("torch")


def test_out_of_memory_stops_at_the_allocating_line(dap: DapClient, program) -> None:
    path = program("torch_oom.py")
    dap.start({"program": str(path)}, exception_filters=["uncaught", "aclErrors"])
    stopped = dap.stopped(timeout=120)
    assert stopped["reason"] == "exception"
    frame = dap.top_frame(stopped["threadId"])
    assert frame["source"]["path"] == str(path)
    assert frame["line"] == line_of(path, "oom")
    info = dap.ok("exceptionInfo", {"threadId": stopped["threadId"]})
    assert info["exceptionId"] == "OutOfMemoryError"
    assert info["description"].startswith(
        "NPU out of memory. Tried to allocate 20.00 GiB (NPU 0; 60.96 GiB total capacity; "
        "60.00 GiB already allocated; 60.00 GiB current active; "
    ), info["description"]
    assert info["description"].endswith(
        "60.00 GiB reserved in total by PyTorch)If reserved memory is >> allocated memory try "
        "setting max_split_size_mb to avoid fragmentation."
    )
    dap.ok("continue", {"threadId": stopped["threadId"]})
    assert dap.event("exited", timeout=60)["exitCode"] == 1


def test_profile_at_a_breakpoint_charges_torch_ops_to_their_lines(dap: DapClient, program) -> None:
    path = program("torch_ops.py")
    dap.start({"program": str(path)}, breakpoints={str(path): [line_of(path, "checkpoint")]})
    stopped = dap.stopped(timeout=120)
    assert stopped["reason"] == "breakpoint"
    profile = dap.event("ascendProfile")
    lines = {e["line"]: {o["op_type"] for o in e["top_ops"]} for e in profile["lines"]}
    assert lines[line_of(path, "matmul")] == {"MatMul", "Relu"}
    assert lines[line_of(path, "reduce")] == {"Mul", "ReduceSum"}
    assert profile["device"] == "Ascend910B2"
    dap.ok("continue", {"threadId": stopped["threadId"]})
    assert dap.event("exited", timeout=60)["exitCode"] == 0
