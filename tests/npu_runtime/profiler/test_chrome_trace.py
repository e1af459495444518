"""The Chrome trace: loads as a valid trace, streams as tracks, ops on their source lines."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from npu_runtime.profiler import chrome_trace, op_summary
from npu_runtime.records import EventWait, SourceSite

from .factory import Clock
from .trace_check import TraceError, load

EPOCH = 1717575960208020
PID = 10086


def _write(tmp_path: Path, recs: list, waits: list | None = None) -> Path:
    path = tmp_path / "trace.json"
    chrome_trace.write(recs, path, waits or [], epoch_us=EPOCH, process_id=PID)
    return path


def test_pid_encoding_matches_msprof() -> None:
    # profiling.md §4: 10328512 = (10086 << 10) | (14 << 5) | 0
    assert chrome_trace.device_pid(0, 10086) == 10328512
    assert chrome_trace.device_pid(3, 10086) == 10328512 | 3


def test_streams_are_tracks_and_ops_carry_their_lines(tmp_path: Path) -> None:
    c = Clock()
    recs = [
        c.op("MatMul", 10.0, site=("/w/train.py", 42)),
        c.op("Add", 2.5, site=("/w/train.py", 43), stream=1),
        c.op(
            "MemcpyD2H",
            4.0,
            site=("/w/train.py", 50),
            kind="memcpy",
            unit="MEMCPY",
            bytes_moved=4096,
            inputs=(),
            outputs=(),
        ),
    ]
    trace = load(_write(tmp_path, recs))
    pid = chrome_trace.device_pid(0, PID)
    assert trace.process_names == {pid: "Ascend Hardware"}
    assert trace.thread_names == {(pid, 0): "Stream 0", (pid, 1): "Stream 1"}
    by_name = {s.name: s for s in trace.slices}
    assert by_name["MatMul_1"].tid == 0 and by_name["Add_2"].tid == 1
    assert {n: s.args["Source"] for n, s in by_name.items()} == {
        "MatMul_1": "/w/train.py:42",
        "Add_2": "/w/train.py:43",
        "MemcpyD2H_3": "/w/train.py:50",
    }
    copy = by_name["MemcpyD2H_3"].args
    assert (copy["Task Type"], copy["operation"], copy["size(B)"]) == (
        "PCIE_DMA_SQE",
        "device to host",
        4096,
    )
    assert copy["bandwidth(GB/s)"] == round(4096 / 4e3, 3)
    mm = by_name["MatMul_1"].args
    assert (mm["Task Type"], mm["Stream Id"], mm["Task Id"], mm["Input Shapes"]) == (
        "AI_CORE",
        0,
        1,
        "64,128;128,256",
    )


def test_ts_matches_op_summary_start_exactly(tmp_path: Path) -> None:
    # msprof-analyze joins the CSV and the trace on exact start-time equality.
    c = Clock()
    recs = [c.op("MatMul", 1.2345, gap=0.0006), c.op("Add", 3.0, gap=1.001)]
    events = json.loads(_write(tmp_path, recs).read_text())
    ts = [e["ts"] for e in events if e["ph"] == "X"]
    starts = [r[8].rstrip("\t") for r in op_summary.rows(recs, epoch_us=EPOCH)]
    assert ts == starts == ["1717575960208020.001", "1717575960208022.236"]


def test_event_wait_is_a_flow_from_record_to_wait(tmp_path: Path) -> None:
    c = Clock()
    producer = c.op("MatMul", 50.0, stream=1, site=("/w/a.py", 3))
    consumer = c.op("Add", 5.0, stream=0, gap=50.0, site=("/w/a.py", 6))
    wait = EventWait(
        device=0,
        stream=0,
        event=0x7001,
        record_stream=1,
        record_us=50.0,
        wait_start_us=0.0,
        wait_end_us=50.0,
        record_site=SourceSite("/w/a.py", 4),
        site=SourceSite("/w/a.py", 5),
    )
    trace = load(_write(tmp_path, [producer, consumer], [wait]))
    assert len(trace.flows) == 1
    flow = trace.flows[0]
    assert (flow.source.name, flow.source.tid, flow.source.args["Source"]) == (
        "EVENT_RECORD",
        1,
        "/w/a.py:4",
    )
    # The arrow ends where stream 0 goes on: at the end of its wait, where Add starts.
    assert flow.target.tid == 0 and flow.target.name in ("EVENT_WAIT", "Add_2")
    wait_slice = next(s for s in trace.slices if s.name == "EVENT_WAIT")
    assert (wait_slice.args["Source"], wait_slice.end - wait_slice.start) == ("/w/a.py:5", 50)
    assert flow.source.start <= wait_slice.end


def test_wait_on_unrecorded_event_has_no_flow(tmp_path: Path) -> None:
    wait = EventWait(0, 0, 1, -1, 0.0, 2.0, 2.0)
    trace = load(_write(tmp_path, [], [wait]))
    assert trace.flows == [] and [s.name for s in trace.slices] == ["EVENT_WAIT"]


def test_steps_get_their_own_track(tmp_path: Path) -> None:
    c = Clock()
    recs = [c.op("Add", 2.0), c.op("Add", 3.0)]
    recs[1].step = 1
    trace = load(_write(tmp_path, recs))
    steps = [s for s in trace.slices if s.tid == chrome_trace.STEP_TID]
    assert [(s.name, s.end - s.start) for s in steps] == [("Step 0", 2), ("Step 1", 3)]


def test_full_stack_goes_into_call_stack(tmp_path: Path) -> None:
    c = Clock()
    rec = c.op(
        "Add", 1.0, stack=(SourceSite("/w/m.py", 9, "layer"), SourceSite("/w/t.py", 2, "<module>"))
    )
    trace = load(_write(tmp_path, [rec]))
    assert trace.slices[0].args["Call stack"] == "/w/m.py(9): layer;\n/w/t.py(2): <module>"


def test_checker_rejects_what_viewers_reject(tmp_path: Path) -> None:
    # The checker must be able to fail: overlapping slices on one stream, a dangling flow.
    bad = tmp_path / "bad.json"
    x = {"ph": "X", "pid": 1, "tid": 1, "name": "a", "ts": "0.000", "dur": 5.0}
    bad.write_text(json.dumps([x, {**x, "name": "b", "ts": "3.000"}]))
    with pytest.raises(TraceError, match="overlap"):
        load(bad)
    bad.write_text(
        json.dumps(
            [x, {"ph": "s", "id": "1", "cat": "c", "name": "f", "pid": 1, "tid": 1, "ts": 1}]
        )
    )
    with pytest.raises(TraceError, match="never ended"):
        load(bad)
    bad.write_text(json.dumps({"traceEvents": [x]}))  # msprof-analyze needs a bare array
    with pytest.raises(TraceError):
        load(bad)


def test_back_to_back_work_tiles_exactly_at_ns_resolution(tmp_path: Path) -> None:
    # Durations with more than ns precision must not make neighbours overlap by a
    # rounding error (viewers drop slices that overlap without nesting).
    c = Clock()
    recs = [c.op("Memset", 5.796202666666667) for _ in range(4)]
    trace = load(_write(tmp_path, recs))
    slices = sorted(trace.slices, key=lambda s: s.start)
    assert all(a.end == b.start for a, b in zip(slices, slices[1:], strict=False))
