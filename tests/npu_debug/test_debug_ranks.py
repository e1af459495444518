"""Debugging one rank of a distributed job while the adapter runs the others."""

from __future__ import annotations

from dap_client import DapClient, line_of, wait_no_processes


def test_stopping_in_one_rank_while_the_other_runs_beside_it(dap: DapClient, program) -> None:
    path = program("ranks_allreduce.py")
    line = line_of(path, "after_reduce")
    dap.start({"program": str(path), "nproc": 2, "rank": 1}, breakpoints={str(path): [line]})
    stopped = dap.stopped(timeout=120)
    frame = dap.top_frame(stopped["threadId"])
    assert (frame["source"]["path"], frame["line"]) == (str(path), line)
    # the debugged rank is rank 1, and its all_reduce met rank 0's: 1 + 2
    result = dap.ok(
        "evaluate",
        {"expression": "(dist.get_rank(), t.item())", "frameId": frame["id"], "context": "repl"},
    )
    assert result["result"] == "(1, 3.0)"
    dap.ok("continue", {"threadId": stopped["threadId"]})
    assert dap.event("exited", timeout=60)["exitCode"] == 0
    dap.event("terminated")
    assert "rank 1 total 3.0\n" in dap.outputs()
    assert "[rank0]: rank 0 total 3.0\n" in dap.outputs()
    dap.request("disconnect", {})
    assert dap.close() == 0
    assert wait_no_processes(str(path)) == []


def test_a_rank_outside_the_job_is_refused(dap: DapClient, program) -> None:
    path = program("ranks_allreduce.py")
    dap.ok("initialize", {"adapterID": "ascend", "pathFormat": "path"})
    response = dap.request("launch", {"program": str(path), "nproc": 2, "rank": 2})
    assert not response["success"]
    assert response["message"] == "launch attribute 'rank' must be in 0..1, got 2"
