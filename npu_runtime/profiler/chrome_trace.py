"""Write the run as a Chrome trace (msprof's `msprof_<ts>.json` shape) for Perfetto and chrome://tracing.

Layout: one process per device (msprof's "Ascend Hardware" layer, labelled "NPU <id>"),
one thread per stream (`tid` = stream id), a complete ("X") slice per op, copy and memset,
and for every event wait a record slice, a wait slice and a flow arrow between them.
The file is a bare JSON array, as msprof and torch_npu write it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Sequence
from functools import lru_cache
from typing import Any

from npu_runtime.profiler.data_files import trace_constants
from npu_runtime.profiler.timefmt import ts_string
from npu_runtime.records import EventWait, SourceSite, TensorInfo, WorkRecord

Event = dict[str, Any]
STEP_TID = 1_000_000  # a track for step spans, sorted after every stream


def device_pid(device: int, process_id: int) -> int:
    """msprof's pid encoding: (process id << 10) | (layer sort index << 5) | device id."""
    c = trace_constants()
    return (
        ((process_id & 0x3FFFFF) << c["pid_shift"])
        | (c["device_layer_sort_index"] << c["sort_index_shift"])
        | (device & 0x1F)
    )


def _ts(epoch_us: int, t: float) -> str:
    # msprof writes ts as a string with 3 decimals; the op_summary start time matches it.
    return ts_string(epoch_us, t)


def _dur(start_us: float, duration_us: float) -> float:
    """Duration between the ns-rounded start and end, so back-to-back slices never overlap."""
    return (round((start_us + duration_us) * 1000) - round(start_us * 1000)) / 1000


@lru_cache(maxsize=4096)
def _tensor_args(infos: tuple[TensorInfo, ...], prefix: str) -> dict[str, str]:
    # Cached: a run launches the same few shapes over and over. Callers copy, never mutate.
    return {
        f"{prefix} Shapes": ";".join(",".join(map(str, t.shape)) for t in infos),
        f"{prefix} Data Types": ";".join(t.dtype for t in infos),
        f"{prefix} Formats": ";".join(t.format for t in infos),
    }


def _site(site: SourceSite | None) -> str:
    return f"{site.file}:{site.line}" if site is not None else ""


def _work_event(rec: WorkRecord, pid: int, epoch_us: int, conn: int) -> Event:
    c = trace_constants()
    args: dict[str, Any] = {
        "Model Id": c["model_id_none"] if rec.model_id is None else rec.model_id,
        "Task Type": c["task_type_by_op_type"].get(rec.op_type, rec.unit),
        "Physic Stream Id": rec.stream,
        "Stream Id": rec.stream,
        "Task Id": rec.task_id,
        "Batch Id": 0,
        "Subtask Id": c["subtask_id_none"],
        "connection_id": conn,
        "OP Type": rec.op_type,
        "Block Num": rec.block_dim,
        "Wait Time(us)": round(rec.wait_us, 3),
        "Bound": rec.bound,
        "Time By Unit(us)": {k: round(v, 3) for k, v in rec.time_by_unit.items()},
        "Bytes Moved": rec.bytes_moved,
        "FLOPs": rec.flops,
        "Step": rec.step,
        "Source": _site(rec.site),
    }
    if rec.inputs:
        args.update(_tensor_args(rec.inputs, "Input"))
    if rec.outputs:
        args.update(_tensor_args(rec.outputs, "Output"))
    operation = c["copy_operation_by_op_type"].get(rec.op_type)
    if operation is not None:
        args["size(B)"] = rec.bytes_moved
        gbps = rec.bytes_moved / (rec.duration_us * 1e3) if rec.duration_us > 0 else 0.0
        args["bandwidth(GB/s)"] = round(gbps, 3)
        args["operation"] = operation
    if rec.stack:
        # torch_npu's key for user call stacks; innermost frame first.
        args["Call stack"] = ";\n".join(f"{s.file}({s.line}): {s.function}" for s in rec.stack)
    return {
        "name": rec.name,
        "pid": pid,
        "tid": rec.stream,
        "ts": _ts(epoch_us, rec.start_us),
        "dur": _dur(rec.start_us, rec.duration_us),
        "ph": "X",
        "args": args,
    }


def _wait_events(w: EventWait, pid: int, epoch_us: int, flow_id: int) -> list[Event]:
    c = trace_constants()
    wait: Event = {
        "name": "EVENT_WAIT",
        "pid": pid,
        "tid": w.stream,
        "ts": _ts(epoch_us, w.wait_start_us),
        "dur": _dur(w.wait_start_us, max(0.0, w.wait_end_us - w.wait_start_us)),
        "ph": "X",
        "args": {
            "Task Type": c["event_wait_task_type"],
            "Stream Id": w.stream,
            "Event": w.event,
            "Source": _site(w.site),
        },
    }
    if w.record_stream < 0:
        return [wait]  # waiting on a never-recorded event: nothing to point back to
    record: Event = {
        "name": "EVENT_RECORD",
        "pid": pid,
        "tid": w.record_stream,
        "ts": _ts(epoch_us, w.record_us),
        "dur": 0.0,
        "ph": "X",
        "args": {
            "Task Type": c["event_record_task_type"],
            "Stream Id": w.record_stream,
            "Event": w.event,
            "Source": _site(w.record_site),
        },
    }
    flow = {"name": "EventWait", "cat": "EventWait", "id": f"event-wait-{flow_id}", "pid": pid}
    start = {**flow, "ph": "s", "tid": w.record_stream, "ts": record["ts"]}
    # The arrow lands where the waiting stream goes on (the end of the wait), so it never
    # points back in time; viewers bind it to the wait or to the work that follows it.
    end = {**flow, "ph": "f", "bp": "e", "tid": w.stream, "ts": _ts(epoch_us, w.wait_end_us)}
    return [record, wait, start, end]


def _metadata(pid: int, device: int, streams: Iterable[int], steps: bool) -> list[Event]:
    c = trace_constants()
    meta: list[Event] = [
        {
            "name": "process_name",
            "pid": pid,
            "tid": 0,
            "ph": "M",
            "args": {"name": c["device_layer"]},
        },
        {
            "name": "process_labels",
            "pid": pid,
            "tid": 0,
            "ph": "M",
            "args": {"labels": f"NPU {device}"},
        },
        {
            "name": "process_sort_index",
            "pid": pid,
            "tid": 0,
            "ph": "M",
            "args": {"sort_index": c["device_layer_sort_index"]},
        },
    ]
    tracks = [(s, f"Stream {s}") for s in sorted(streams)]
    if steps:
        tracks.append((STEP_TID, "Steps"))
    for tid, name in tracks:
        meta.append(
            {"name": "thread_name", "pid": pid, "tid": tid, "ph": "M", "args": {"name": name}}
        )
        meta.append(
            {
                "name": "thread_sort_index",
                "pid": pid,
                "tid": tid,
                "ph": "M",
                "args": {"sort_index": tid},
            }
        )
    return meta


def _step_events(recs: Sequence[WorkRecord], pid: int, epoch_us: int) -> list[Event]:
    spans: dict[int, tuple[float, float]] = {}
    for r in recs:
        lo, hi = spans.get(r.step, (r.start_us, r.end_us))
        spans[r.step] = (min(lo, r.start_us), max(hi, r.end_us))
    return [
        {
            "name": f"Step {step}",
            "pid": pid,
            "tid": STEP_TID,
            "ts": _ts(epoch_us, lo),
            "dur": _dur(lo, hi - lo),
            "ph": "X",
            "args": {"Step": step},
        }
        for step, (lo, hi) in sorted(spans.items())
    ]


def events(
    records: Sequence[WorkRecord],
    waits: Sequence[EventWait] = (),
    *,
    epoch_us: int = 0,
    process_id: int | None = None,
) -> list[Event]:
    """The trace as a list of Chrome trace events (metadata first, then by time)."""
    process_id = os.getpid() if process_id is None else process_id
    by_device: dict[int, list[WorkRecord]] = {}
    for r in records:
        by_device.setdefault(r.device, []).append(r)
    waits_by_device: dict[int, list[EventWait]] = {}
    for w in waits:
        waits_by_device.setdefault(w.device, []).append(w)

    out: list[Event] = []
    body: list[Event] = []
    flow_id = 0
    for device in sorted(by_device.keys() | waits_by_device.keys()):
        pid = device_pid(device, process_id)
        recs = by_device.get(device, [])
        dev_waits = waits_by_device.get(device, [])
        streams = {r.stream for r in recs} | {w.stream for w in dev_waits}
        streams |= {w.record_stream for w in dev_waits if w.record_stream >= 0}
        multi_step = len({r.step for r in recs}) > 1
        out += _metadata(pid, device, streams, multi_step)
        body += [_work_event(r, pid, epoch_us, i) for i, r in enumerate(recs)]
        for w in dev_waits:
            flow_id += 1
            body += _wait_events(w, pid, epoch_us, flow_id)
        if multi_step:
            body += _step_events(recs, pid, epoch_us)
    # Fixed-decimal, non-negative ts strings sort by (length, text) exactly, with no float
    # rounding; the sort is stable, so a flow start stays before its end at equal ts.
    body.sort(key=lambda e: (len(e["ts"]), e["ts"]))
    return out + body


def write(
    records: Sequence[WorkRecord],
    path: str | os.PathLike[str],
    waits: Sequence[EventWait] = (),
    *,
    epoch_us: int = 0,
    process_id: int | None = None,
) -> None:
    """Write the Chrome trace JSON array to `path`."""
    evs = events(records, waits, epoch_us=epoch_us, process_id=process_id)
    with open(path, "w", encoding="utf-8") as f:
        # One event per line: diffable and still a single JSON array.
        f.write("[\n")
        f.write(",\n".join(json.dumps(e, separators=(",", ":")) for e in evs))
        f.write("\n]\n")
