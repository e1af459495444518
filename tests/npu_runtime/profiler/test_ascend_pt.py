"""The torch_npu-style `*_ascend_pt/` export: the joins and files msprof-analyze relies on."""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from npu_runtime.devices import get_profile
from npu_runtime.profiler.writer import ProfileData, write_profile
from npu_runtime.records import EventWait, TensorInfo

from .factory import Clock
from .trace_check import load

EPOCH = 1717055395633100


def _export(tmp_path: Path) -> Path:
    c = Clock()
    fp = (TensorInfo((64, 128), "FLOAT"), TensorInfo((128, 256), "FLOAT"))
    recs = []
    for step in range(2):
        mm_split = {"cube": 75.6, "memory": 32.4, "scalar": 10.8}
        add_split = {"vector": 10.8, "memory": 7.2}
        mm = c.op(
            "MatMulV2",
            120.0,
            site=("/w/t.py", 7),
            inputs=fp,
            block_dim=8,
            unit="AI_CORE",
            bound="cube",
            time_by_unit=mm_split,
        )
        add = c.op("Add", 20.0, gap=5.0, site=("/w/t.py", 8), block_dim=8, time_by_unit=add_split)
        mm.step = add.step = step
        recs += [mm, add]
    data = ProfileData(recs, epoch_us=EPOCH, process_id=4242, device_profile=get_profile("910B2"))
    write_profile(data, tmp_path, ("ascend_pt",))
    (root,) = tmp_path.glob("*_ascend_pt")
    return root


def _csv(path: Path) -> list[dict[str, str]]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def test_layout(tmp_path: Path) -> None:
    root = _export(tmp_path)
    assert root.name.endswith("_ascend_pt") and root.name.split("_")[-3].isdigit()
    assert len(root.name.split("_")[-3]) == 17
    names = {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()}
    assert {
        "profiler_info_0.json",
        "profiler_metadata.json",
        "ASCEND_PROFILER_OUTPUT/trace_view.json",
        "ASCEND_PROFILER_OUTPUT/kernel_details.csv",
        "ASCEND_PROFILER_OUTPUT/op_statistic.csv",
        "ASCEND_PROFILER_OUTPUT/step_trace_time.csv",
    } <= names
    (info,) = [n for n in names if n.endswith("info.json.0")]
    assert info.startswith("PROF_000001_") and "/device_0/" in info
    dev = json.loads((root / info).read_text())["DeviceInfo"][0]
    assert (dev["ai_core_num"], dev["aiv_num"], dev["aic_frequency"]) == (24, 48, "1800")


def test_kernels_join_the_trace_on_exact_start_times(tmp_path: Path) -> None:
    root = _export(tmp_path)
    out = root / "ASCEND_PROFILER_OUTPUT"
    kernels = _csv(out / "kernel_details.csv")
    assert [(k["Step Id"], k["Type"], k["Accelerator Core"], k["Block Dim"]) for k in kernels] == [
        ("1", "MatMulV2", "AI_CORE", "8"),
        ("1", "Add", "AI_VECTOR_CORE", "8"),
        ("2", "MatMulV2", "AI_CORE", "8"),
        ("2", "Add", "AI_VECTOR_CORE", "8"),
    ]
    assert kernels[0]["Input Shapes"] == '"64,128;128,256"'
    trace = load(out / "trace_view.json")
    assert set(trace.process_names.values()) >= {
        "Ascend Hardware",
        "Python",
        "Overlap Analysis",
        "HCCL",
    }
    device = [
        s for s in trace.slices if trace.process_names[s.pid] == "Ascend Hardware" and s.tid < 1000
    ]
    starts = [k["Start Time(us)"].rstrip("\t") for k in kernels]
    assert [str(s.start) for s in sorted(device, key=lambda s: s.start)] == starts
    # Every kernel has a torch_to_npu flow from a host op starting at the same time.
    assert len(trace.flows) == 4
    for f in trace.flows:
        assert trace.process_names[f.source.pid] == "Python"
        assert f.source.start == f.target.start and f.target.name in {k["Name"] for k in kernels}
    steps = sorted(s.name for s in trace.slices if s.name.startswith("ProfilerStep#"))
    assert steps == ["ProfilerStep#1", "ProfilerStep#2"]


def test_overlap_step_and_statistic_numbers(tmp_path: Path) -> None:
    root = _export(tmp_path)
    out = root / "ASCEND_PROFILER_OUTPUT"
    trace = load(out / "trace_view.json")
    overlap = [s for s in trace.slices if trace.process_names[s.pid] == "Overlap Analysis"]
    computing = sum(s.end - s.start for s in overlap if s.name == "Computing")
    free = sum(s.end - s.start for s in overlap if s.name == "Free")
    assert (computing, free) == (280, 10)  # 2 x (120 + 20) busy, two 5 µs gaps inside steps
    steps = _csv(out / "step_trace_time.csv")
    assert [(s["Step"], s["Computing"], s["Free"]) for s in steps] == [
        ("1", "140.0", "5.0"),
        ("2", "140.0", "5.0"),
    ]
    stats = _csv(out / "op_statistic.csv")
    assert [(s["OP Type"], s["Count"], s["Total Time(us)"], s["Ratio(%)"]) for s in stats] == [
        ("MatMulV2", "2", "240.0", "85.714"),
        ("Add", "2", "40.0", "14.286"),
    ]


def _msprof_analyze() -> str | None:
    tools = os.environ.get("ASCEND_LENS_INTEROP_TOOLS")  # set by scripts/test (interop venv)
    in_tools = str(Path(tools) / "bin" / "msprof-analyze") if tools else None
    return os.environ.get("MSPROF_ANALYZE") or in_tools or shutil.which("msprof-analyze")


@pytest.mark.skipif(
    _msprof_analyze() is None,
    reason="msprof-analyze is not available: run through scripts/test (it sets "
    "ASCEND_LENS_INTEROP_TOOLS), or set MSPROF_ANALYZE to its executable",
)
def test_msprof_analyze_advisor_reads_it(tmp_path: Path) -> None:
    root = _export(tmp_path)
    exe = _msprof_analyze()
    assert exe is not None
    res = subprocess.run(
        [exe, "advisor", "all", "-d", str(root), "-o", str(tmp_path / "adv"), "-l", "en"],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=tmp_path,
    )
    assert res.returncode == 0, res.stderr
    assert "The Model E2E Time is 0.29ms" in res.stdout
    assert "24 ai core or 48 ai vector core" in res.stdout  # read from info.json.0


def test_event_wait_flows_do_not_collide_with_launch_flows(tmp_path: Path) -> None:
    c = Clock()
    recs = [c.op("Add", 10.0, stream=1), c.op("Add", 5.0, stream=0, gap=10.0)]
    wait = EventWait(0, 0, 7, 1, 10.0, 0.0, 10.0)
    data = ProfileData(recs, [wait], epoch_us=EPOCH, process_id=4242)
    write_profile(data, tmp_path, ("ascend_pt",))
    (out,) = tmp_path.glob("*_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json")
    trace = load(out)
    assert sorted(f.source.name for f in trace.flows) == [
        "EVENT_RECORD",
        "ascend_lens::Add",
        "ascend_lens::Add",
    ]
    # Viewers pair flow events by id: ids must be unique across both kinds of flow.
    starts = [e["id"] for e in json.loads(out.read_text()) if e["ph"] == "s"]
    assert len(starts) == len(set(starts)) == 3
