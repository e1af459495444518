"""The `ascendProfile` event: the per-line profile at every stop and at exit."""

from __future__ import annotations

import json
import os
from pathlib import Path

from dap_client import DapClient, line_of


def by_line(profile: dict) -> dict[int, dict]:
    return {entry["line"]: entry for entry in profile["lines"]}


def test_profile_at_a_breakpoint_lists_the_launching_lines_with_counts(
    dap: DapClient, program, tmp_path: Path
) -> None:
    path = program("ops.py")
    dap.start({"program": str(path)}, breakpoints={str(path): [line_of(path, "checkpoint")]})
    stopped = dap.stopped()
    assert stopped["reason"] == "breakpoint"
    profile = dap.event("ascendProfile")
    assert profile["schema"] == "ascend-lens.profile/1"
    assert profile["device"] == "Ascend910B2"
    assert profile["op_count"] == 5
    lines = by_line(profile)
    add, matmul = lines[line_of(path, "add")], lines[line_of(path, "matmul")]
    assert {e["file"] for e in profile["lines"]} == {str(path)}
    assert (add["op_count"], add["bound"]) == (3, "vector")
    assert (matmul["op_count"], matmul["bound"]) == (2, "cube")
    assert matmul["top_ops"][0] == {
        "op_type": "MatMul",
        "count": 2,
        "total_us": 80.0,
        "bound": "cube",
    }
    assert add["total_us"] == 6.0
    assert abs(matmul["share"] - 80.0 / 86.0) < 1e-3
    # Sorted by time, largest first; the trace named is a Chrome trace written for this stop.
    assert [e["line"] for e in profile["lines"]] == [line_of(path, "matmul"), line_of(path, "add")]
    trace = json.loads(Path(profile["trace"]).read_text())
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    assert (
        sum(1 for e in events if e.get("ph") == "X" and e.get("name", "").startswith("MatMul")) == 2
    )
    # The Devices view's state comes with it: two live 1 KiB allocations on device 0.
    state = dap.event("ascendState")
    assert (state["schema"], state["started"], state["initialized"]) == (
        "ascend-lens.state/1",
        True,
        True,
    )
    (device,) = state["devices"]
    assert device["id"] == 0
    assert device["memory"]["allocations"] == 2
    dap.ok("continue", {"threadId": stopped["threadId"]})
    dap.event("exited")


def test_profile_at_exit_comes_before_exited_and_points_at_the_written_directory(
    dap: DapClient, program, tmp_path: Path
) -> None:
    path = program("ops.py")
    out = tmp_path / "prof"
    dap.start({"program": str(path), "profile": str(out), "device": "Ascend910B4"})
    final = dap.event("ascendProfile")
    exited = dap.wait_for(lambda m: m.get("event") == "exited", what="exited")
    assert exited["body"]["exitCode"] == 0
    assert final["device"] == "Ascend910B4"
    assert final["op_count"] == 5
    assert Path(final["trace"]).parent == out
    assert os.path.isfile(final["trace"])
    # The same document the runtime's profiler writes to DIR/lines.json.
    assert json.loads((out / "lines.json").read_text())["lines"] == final["lines"]


def test_profile_false_sends_no_profile_events(dap: DapClient, program) -> None:
    path = program("ops.py")
    dap.start(
        {"program": str(path), "profile": False},
        breakpoints={str(path): [line_of(path, "checkpoint")]},
    )
    stopped = dap.stopped()
    dap.ok("continue", {"threadId": stopped["threadId"]})
    dap.event("exited")
    dap.event("terminated")
    assert dap.find(lambda m: m.get("event") == "ascendProfile") is None


def test_a_stop_before_any_work_sends_an_empty_profile(dap: DapClient, program) -> None:
    path = program("ops.py")
    dap.start({"program": str(path)}, breakpoints={str(path): [line_of(path, "malloc")]})
    stopped = dap.stopped()
    profile = dap.event("ascendProfile")
    assert (profile["op_count"], profile["lines"], profile["trace"]) == (0, [], None)
    dap.ok("disconnect", {"terminateDebuggee": True})
    assert stopped["reason"] == "breakpoint"
