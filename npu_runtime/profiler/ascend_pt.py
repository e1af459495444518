"""The torch_npu / MindSpore profiler layout (`<host>_<pid>_<ts>_ascend_pt/`) for msprof-analyze.

Written as msprof-analyze 26.2.0 reads it (../shared/reference/interop/msprof-analyze.md §3),
one directory per device (the device is the rank):

    <host>_<pid>_<YYYYmmddHHMMSSmmm>_ascend_pt/
    ├── profiler_info_<device>.json, profiler_metadata.json
    ├── ASCEND_PROFILER_OUTPUT/
    │   ├── trace_view.json      device tasks + host launch ops + torch_to_npu flows + overlap
    │   ├── kernel_details.csv   op_summary rows under torch_npu's names
    │   ├── op_statistic.csv, step_trace_time.csv, operator_memory.csv, memory_record.csv
    └── PROF_000001_<ts>_<tag>/device_<id>/info.json.<id>

The emulator has no separate host clock, so each launch appears as a zero-length host op at
the start of its device task, joined to it by a `torch_to_npu` flow; every profiler step is
a `ProfilerStep#<n>` host op spanning its device work. A run that marks no steps gets one
per aclrtSynchronizeDevice (`with_steps`).
"""

from __future__ import annotations

import bisect
import csv
import dataclasses
import json
import math
import os
import random
import socket
import string
import time
from collections import defaultdict
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from npu_runtime.hccl import world
from npu_runtime.hccl.env import table as hccl_table
from npu_runtime.profiler import chrome_trace, op_summary
from npu_runtime.profiler.communication import (
    comm_records,
    communication,
    communication_matrix,
    parallel_group_info,
)
from npu_runtime.profiler.data_files import ascend_pt_tables, op_summary_columns
from npu_runtime.profiler.timefmt import ts_string
from npu_runtime.profiler.writer import ProfileData, exporter
from npu_runtime.records import WorkRecord

Event = dict[str, Any]
OUTPUT = "ASCEND_PROFILER_OUTPUT"


def _merged(spans: Iterable[tuple[float, float]]) -> list[tuple[float, float]]:
    """Union of [start, end) intervals, sorted."""
    out: list[tuple[float, float]] = []
    for lo, hi in sorted(spans):
        if out and lo <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], hi))
        else:
            out.append((lo, hi))
    return out


def _steps(records: Sequence[WorkRecord]) -> dict[int, tuple[float, float]]:
    """Step id (1-based, as torch_npu counts) -> its device span."""
    spans: dict[int, tuple[float, float]] = {}
    for r in records:
        lo, hi = spans.get(r.step + 1, (r.start_us, r.end_us))
        spans[r.step + 1] = (min(lo, r.start_us), max(hi, r.end_us))
    return dict(sorted(spans.items()))


def _spans_by_step(records: Sequence[WorkRecord]) -> dict[int, list[tuple[float, float]]]:
    """Step id (1-based) -> the (start, end) of each of its kernels, in one pass.

    Only ops count as computing, as in torch_npu's overlap analysis: copies and memsets
    are SDMA work, which msprof-analyze reports under free time.
    """
    out: dict[int, list[tuple[float, float]]] = defaultdict(list)
    for r in records:
        if r.kind == "op":
            out[r.step + 1].append((r.start_us, r.end_us))
    return out


def _num(x: float) -> str:
    return repr(round(x, 3))


def _meta(pid: int, name: str, tid: int = 0, kind: str = "process_name") -> Event:
    return {"name": kind, "pid": pid, "tid": tid, "ph": "M", "args": {"name": name}}


def _dims(rec: WorkRecord) -> tuple[str, str]:
    dims = "[" + ", ".join("[" + ", ".join(map(str, t.shape)) + "]" for t in rec.inputs) + "]"
    types = "[" + ", ".join(t.dtype.lower() for t in rec.inputs) + "]"
    return dims, types


def trace_events(data: ProfileData) -> list[Event]:
    """trace_view.json: msprof's device timeline plus the host, overlap and HCCL layers."""
    t = ascend_pt_tables()
    epoch = data.epoch_us
    recs = [r for r in data.records if r.kind != "comm"]
    comms = comm_records(data.records)
    host = data.process_id
    overlap, hccl = host + 1, host + 2
    events = chrome_trace.events(recs, data.waits, epoch_us=epoch, process_id=host)
    events += [
        _meta(host, t["host_layer"]),
        _meta(host, f"Thread {host}", host, "thread_name"),
        _meta(overlap, t["overlap_layer"]),
        _meta(hccl, t["comm_layer"]),
    ]
    for name, tid in t["overlap_tids"].items():
        events.append(_meta(overlap, name, tid, "thread_name"))
    events += _hccl_events(comms, hccl, epoch)

    by_step = _spans_by_step(recs)
    comm_by_step = _comm_spans_by_step(comms)
    tids = t["overlap_tids"]
    for step, (lo, hi) in _steps(data.records).items():
        events.append(_x(f"ProfilerStep#{step}", host, host, epoch, lo, hi - lo, cat="cpu_op"))
        busy = _merged(by_step[step])
        comm = _merged(comm_by_step[step])
        for b_lo, b_hi in busy:
            events.append(_x("Computing", overlap, tids["Computing"], epoch, b_lo, b_hi - b_lo))
        for c_lo, c_hi in comm:
            events.append(
                _x("Communication", overlap, tids["Communication"], epoch, c_lo, c_hi - c_lo)
            )
        for c_lo, c_hi in _minus(comm, busy):
            events.append(
                _x("Communication(Not Overlapped)", overlap, tids["Communication(Not Overlapped)"],
                   epoch, c_lo, c_hi - c_lo)
            )  # fmt: skip
        either = _merged([*busy, *comm])
        for (_, a_hi), (b_lo, _) in zip(either, either[1:], strict=False):
            events.append(_x("Free", overlap, tids["Free"], epoch, a_hi, b_lo - a_hi))

    pids: dict[int, int] = {}
    for i, rec in enumerate(recs):
        dims, types = _dims(rec)
        args: dict[str, Any] = {"Sequence number": i, "Fwd thread id": 0}
        if rec.inputs:
            args |= {"Input Dims": dims, "Input type": types}
        if rec.site is not None:
            args["Call stack"] = f"{rec.site.file}({rec.site.line}): {rec.site.function}"
        events.append(
            _x(
                f"ascend_lens::{rec.op_type}",
                host,
                host,
                epoch,
                rec.start_us,
                0.0,
                cat="cpu_op",
                args=args,
            )
        )
        flow = {"name": "torch_to_npu", "cat": "async_npu", "id": str(i), "bp": "e"}
        ts = ts_string(epoch, rec.start_us)
        device_pid = pids.get(rec.device) or pids.setdefault(
            rec.device, chrome_trace.device_pid(rec.device, host)
        )
        events.append({**flow, "ph": "s", "pid": host, "tid": host, "ts": ts})
        events.append({**flow, "ph": "f", "pid": device_pid, "tid": rec.stream, "ts": ts})
    return events


def _hccl_events(comms: Sequence[WorkRecord], pid: int, epoch: int) -> list[Event]:
    """The HCCL layer: one "Group <id> Communication" thread of ops per communicator, and
    its "Plane 0" thread of tasks (the notify wait, then the transfer)."""
    events: list[Event] = []
    groups: dict[str, int] = {}
    for r in comms:
        assert r.comm is not None
        if r.comm.group not in groups:
            tid = 2 * len(groups) + 1
            groups[r.comm.group] = tid
            events.append(_meta(pid, f"Group {r.comm.group} Communication", tid, "thread_name"))
            events.append({"name": "thread_sort_index", "pid": pid, "tid": tid, "ph": "M",
                           "args": {"sort_index": tid}})  # fmt: skip
            events.append(_meta(pid, "Plane 0", tid + 1, "thread_name"))
            events.append({"name": "thread_sort_index", "pid": pid, "tid": tid + 1, "ph": "M",
                           "args": {"sort_index": tid + 1}})  # fmt: skip
        tid = groups[r.comm.group]
        begin = r.start_us - r.wait_us
        args = {"connection_id": r.task_id, "model id": 4294967295, "data_type": _dtype(r),
                "alg_type": r.comm.algorithm, "count": _count(r)}  # fmt: skip
        events.append(_x(r.name, pid, tid, epoch, begin, r.wait_us + r.duration_us, args=args))
        if r.wait_us > 0:
            events.append(_x("Notify_Wait", pid, tid + 1, epoch, begin, r.wait_us,
                             args={"notify id": r.task_id, "task type": "Notify_Wait"}))  # fmt: skip
        transit = [(tr, b, us) for tr, b, us in r.comm.transit if b > 0]
        size = int(sum(b for _, b, _ in transit))
        link = transit[0][0] if transit else "LOCAL"
        events.append(
            _x("Memcpy", pid, tid + 1, epoch, r.start_us, r.duration_us,
               args={"task type": "Memcpy", "size(Byte)": size, "link type": link,
                     "transport type": "RDMA" if link == "RDMA" else "SDMA"})
        )  # fmt: skip
    return events


def _dtype(r: WorkRecord) -> str:
    return r.inputs[0].dtype if r.inputs else "INT8"


def _count(r: WorkRecord) -> int:
    return sum(math.prod(t.shape) for t in r.inputs)


def _comm_spans_by_step(comms: Sequence[WorkRecord]) -> dict[int, list[tuple[float, float]]]:
    out: dict[int, list[tuple[float, float]]] = defaultdict(list)
    for r in comms:
        out[r.step + 1].append((r.start_us - r.wait_us, r.end_us))
    return out


def _minus(
    spans: list[tuple[float, float]], cut: list[tuple[float, float]]
) -> list[tuple[float, float]]:
    """`spans` minus the (merged, sorted) intervals `cut`."""
    out: list[tuple[float, float]] = []
    for lo, hi in spans:
        cur = lo
        for c_lo, c_hi in cut:
            if c_hi <= cur or c_lo >= hi:
                continue
            if c_lo > cur:
                out.append((cur, c_lo))
            cur = max(cur, c_hi)
        if cur < hi:
            out.append((cur, hi))
    return out


def _x(
    name: str,
    pid: int,
    tid: int,
    epoch: int,
    start: float,
    dur: float,
    *,
    cat: str | None = None,
    args: dict[str, Any] | None = None,
) -> Event:
    e: Event = {"ph": "X", "name": name, "pid": pid, "tid": tid, "ts": ts_string(epoch, start)}
    e["dur"] = (round((start + dur) * 1000) - round(start * 1000)) / 1000
    if cat:
        e["cat"] = cat
    if args:
        e["args"] = args
    return e


def kernel_rows(data: ProfileData) -> tuple[list[str], list[list[str]]]:
    """kernel_details.csv: op_summary's rows under torch_npu's names, with the step id."""
    t = ascend_pt_tables()
    src_cols = op_summary_columns(data.pmu)
    index = {c: i for i, c in enumerate(src_cols)}
    rename: dict[str, str] = t["kernel_details_from"]
    header = [c for c in t["kernel_details_columns"] if c == "Step Id" or rename.get(c, c) in index]
    ops = op_summary.ordered_ops(data.records)
    body = op_summary.rows(ops, epoch_us=data.epoch_us, pmu=data.pmu, freq_mhz=data.freq_mhz)
    out = []
    for rec, row in zip(ops, body, strict=True):
        out.append(
            [str(rec.step + 1) if c == "Step Id" else row[index[rename.get(c, c)]] for c in header]
        )
    return header, out


def op_statistic_rows(records: Sequence[WorkRecord]) -> list[list[str]]:
    """op_statistic.csv rows: per (op type, core type), largest total first."""
    groups: dict[tuple[str, str], list[float]] = defaultdict(list)
    for r in records:
        if r.kind == "op":
            groups[(r.op_type, r.unit)].append(r.duration_us)
    total = sum(sum(v) for v in groups.values())
    rows = []
    for (op_type, unit), durs in sorted(groups.items(), key=lambda kv: (-sum(kv[1]), kv[0])):
        s = sum(durs)
        rows.append(
            [op_type, unit, str(len(durs)), _num(s), _num(min(durs)), _num(s / len(durs)),
             _num(max(durs)), _num(s / total * 100 if total else 0.0)]
        )  # fmt: skip
    return rows


def step_rows(records: Sequence[WorkRecord]) -> list[list[str]]:
    """step_trace_time.csv rows: computing = busy device time, communication = collective
    time (with the part no computation hides), free = the rest of the step; receives count
    as bubble, as msprof-analyze counts hcom_receive."""
    rows = []
    by_step = _spans_by_step(records)
    comms = comm_records(records)
    comm_by_step = _comm_spans_by_step(comms)
    recv_by_step = _comm_spans_by_step([r for r in comms if r.op_type == "HcomReceive"])
    for step, (lo, hi) in _steps(records).items():
        busy_spans = _merged(by_step[step])
        comm_spans = _merged(comm_by_step[step])
        busy = _length(busy_spans)
        comm = _length(comm_spans)
        exposed = _length(_minus(comm_spans, busy_spans))
        bubble = _length(_minus(_merged(recv_by_step[step]), busy_spans))
        free = (hi - lo) - busy - exposed
        rows.append(
            [str(step), _num(busy), _num(exposed), _num(comm - exposed), _num(comm), _num(free),
             "0", _num(bubble), _num(exposed - bubble), "0.0"]
        )  # fmt: skip
    return rows


def _length(spans: Iterable[tuple[float, float]]) -> float:
    return sum(b - a for a, b in spans)


def _profiler_info(data: ProfileData, rank: int) -> dict[str, Any]:
    end_ns = (data.epoch_us + int(max((r.end_us for r in data.records), default=0.0))) * 1000
    return {
        "config": {
            "common_config": {
                "activities": ["ProfilerActivity.CPU", "ProfilerActivity.NPU"],
                "record_shapes": True,
                "profile_memory": False,
                "with_stack": any(r.stack for r in data.records),
                "with_flops": False,
                "with_modules": False,
            },
            "experimental_config": {
                "_profiler_level": "Level1",
                "_aic_metrics": "PipeUtilization" if data.pmu else "ACL_AICORE_NONE",
                "_l2_cache": False,
                "_op_attr": False,
                "_data_simplification": True,
                "_export_type": ["text"],
                "_msprof_tx": False,
                "_record_op_args": False,
            },
        },
        "end_info": {"collectionTimeEnd": str(end_ns), "MonotonicTimeEnd": "0"},
        "rank_id": rank,
    }


def _device_info(data: ProfileData, device: int, rank: int) -> dict[str, Any]:
    p = data.device_profile
    info: dict[str, Any] = {"id": device, "aic_frequency": str(int(data.freq_mhz))}
    if p is not None:
        info |= {"ai_core_num": p.ai_core, "aiv_num": p.vector_core, "ai_cpu_core_num": p.ai_cpu}
    info["aiv_frequency"] = info["aic_frequency"]
    return {
        "devices": str(device),
        "rank_id": rank,
        "hostname": socket.gethostname(),
        "DeviceInfo": [info],
    }


def _write_csv(path: Path, header: Sequence[str], rows: Iterable[Sequence[str]]) -> Path:
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(header)
        w.writerows(rows)
    return path


def _write_json(path: Path, doc: Any) -> Path:
    path.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    return path


def with_steps(data: ProfileData) -> list[WorkRecord]:
    """The records with the steps torch_npu would show.

    A run that marked steps keeps them. One that marked none (a pyACL script) gets one
    step per aclrtSynchronizeDevice on the record's device: the work before a device's
    first sync is step 0, and so on; everything is step 0 when it never synchronised.
    """
    if data.steps_marked or not data.syncs:
        return list(data.records)
    marks: dict[int, list[int]] = defaultdict(list)
    for index, device in data.syncs:
        marks[device].append(index)
    out = []
    for i, r in enumerate(data.records):
        step = bisect.bisect_right(marks.get(r.device, []), i)
        out.append(r if r.step == step else dataclasses.replace(r, step=step))
    return out


def _mb(nbytes: int) -> str:
    # Six decimals (bytes, nearly): a small run's first allocations must not read as 0 MB.
    return repr(round(nbytes / 2**20, 6))


def memory_record_rows(data: ProfileData, device: int) -> list[list[str]]:
    """memory_record.csv: device memory in use at each launch where it changed."""
    rows: list[list[str]] = []
    last = -1
    comp = ascend_pt_tables()["memory_component"]
    for r, used in zip(data.records, data.mem_used, strict=False):
        if used != last:
            ts = ts_string(data.epoch_us, r.start_us)
            rows.append([comp, ts, _mb(used), _mb(used), _mb(used), str(r.stream), f"NPU:{device}"])
            last = used
    return rows


def _itemsize() -> dict[str, int]:
    from npu_runtime.numerics import DTYPES

    return {d.msprof: d.itemsize for d in DTYPES}


def operator_memory_rows(data: ProfileData, device: int) -> list[list[str]]:
    """operator_memory.csv: each op's output tensors, allocated when its host op starts.

    The emulator does not track when a result is freed, so the release columns stay empty
    (as torch_npu leaves them for memory still held when profiling stops).
    """
    size = _itemsize()
    rows = []
    used = list(data.mem_used) or [0] * len(data.records)
    for r, in_use in zip(data.records, used, strict=False):
        nbytes = sum(math.prod(t.shape) * size.get(t.dtype, 4) for t in r.outputs)
        if r.kind != "op" or not nbytes:
            continue
        ts = ts_string(data.epoch_us, r.start_us)
        mb = _mb(in_use)
        rows.append(
            [f"ascend_lens::{r.op_type}", _num(nbytes / 1024), ts, "", "", "", "", mb, mb, mb,
             "", "", "", str(r.stream), f"NPU:{device}"]
        )  # fmt: skip
    return rows


def _for_device(data: ProfileData, records: list[WorkRecord], device: int) -> ProfileData:
    keep = [i for i, r in enumerate(records) if r.device == device]
    mem = [data.mem_used[i] for i in keep] if len(data.mem_used) == len(records) else []
    return dataclasses.replace(
        data,
        records=[records[i] for i in keep],
        waits=[w for w in data.waits if w.device == device],
        mem_used=mem,
        syncs=(),
        steps_marked=True,
    )


@exporter("ascend_pt")
def export(data: ProfileData, out_dir: Path) -> list[Path]:
    """Write one `*_ascend_pt/` directory per device under `out_dir`; returns the files.

    Each device is a rank (`profiler_info_<device>.json`), as msprof-analyze's cluster
    analysis expects one directory per rank.
    """
    records = with_steps(data)
    devices = sorted({r.device for r in records}) or [0]
    files: list[Path] = []
    job = world.current()
    rank = job.rank if job is not None else world.env_rank()
    if rank is not None:
        # One rank of a distributed job: its rank names the directory, whatever device it used.
        # The ranks' directories sit side by side in the job's profile directory (not in each
        # rank's own rank<r>/ folder), where the advisor looks for a cluster's ranks.
        local = dataclasses.replace(data, records=records, syncs=(), steps_marked=True)
        target = out_dir.parent if out_dir.name == f"rank{rank}" else out_dir
        return _export_rank(local, target, devices[0], 1, rank)
    for device in devices:
        files += _export_rank(_for_device(data, records, device), out_dir, device, len(devices))
    return files


def _export_rank(
    data: ProfileData, out_dir: Path, device: int, n_devices: int, rank: int | None = None
) -> list[Path]:
    t = ascend_pt_tables()
    rank = device if rank is None else rank
    ms = time.strftime("%Y%m%d%H%M%S", time.localtime(data.started)) + (
        f"{int(data.started * 1000) % 1000:03d}"
    )
    # One process writes every device here; the pid field keeps the rank dirs apart.
    pid = str(data.process_id) if n_devices == 1 else f"{data.process_id}-{device}"
    root = out_dir / f"{socket.gethostname()}_{pid}_{ms}_ascend_pt"
    output = root / OUTPUT
    output.mkdir(parents=True, exist_ok=True)
    files = [
        _write_json(root / f"profiler_info_{rank}.json", _profiler_info(data, rank)),
        _write_json(root / "profiler_metadata.json", _metadata(data)),
    ]
    trace = output / "trace_view.json"
    with open(trace, "w", encoding="utf-8") as f:
        f.write(
            "[\n"
            + ",\n".join(json.dumps(e, separators=(",", ":")) for e in trace_events(data))
            + "\n]\n"
        )
    files.append(trace)
    header, rows = kernel_rows(data)
    files.append(_write_csv(output / "kernel_details.csv", header, rows))
    files.append(
        _write_csv(
            output / "op_statistic.csv", t["op_statistic_columns"], op_statistic_rows(data.records)
        )
    )
    files.append(
        _write_csv(
            output / "step_trace_time.csv", t["step_trace_time_columns"], step_rows(data.records)
        )
    )
    files.append(
        _write_csv(
            output / "operator_memory.csv",
            t["operator_memory_columns"],
            operator_memory_rows(data, device),
        )
    )
    files.append(
        _write_csv(
            output / "memory_record.csv",
            t["memory_record_columns"],
            memory_record_rows(data, device),
        )
    )
    if rank != device or comm_records(data.records):
        names = {spec["op_type"]: spec["matrix"] for spec in hccl_table()["ops"].values()}
        files.append(
            _write_json(output / "communication.json", communication(data.records, data.epoch_us))
        )
        files.append(
            _write_json(
                output / "communication_matrix.json", communication_matrix(data.records, names)
            )
        )
    tag = "".join(random.choices(string.ascii_uppercase, k=16))
    dev_dir = root / f"PROF_000001_{ms}_{tag}" / f"device_{device}"
    dev_dir.mkdir(parents=True, exist_ok=True)
    files.append(_write_json(dev_dir / f"info.json.{device}", _device_info(data, device, rank)))
    return files


def _metadata(data: ProfileData) -> dict[str, Any]:
    t = ascend_pt_tables()
    doc: dict[str, Any] = {
        "ENV_VARIABLES": {k: os.environ[k] for k in t["advisor_env_variables"] if k in os.environ}
    }
    groups = parallel_group_info(data.records)
    if groups:
        doc["parallel_group_info"] = groups
    return doc
