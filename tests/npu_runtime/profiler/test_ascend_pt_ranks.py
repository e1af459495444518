"""The ascend_pt export per device: rank directories, steps from device syncs, memory CSVs."""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from npu_runtime import Tensor
from npu_runtime.core.runtime import get_runtime
from npu_runtime.devices import get_profile
from npu_runtime.profiler.ascend_pt import with_steps
from npu_runtime.profiler.session import Profiler
from npu_runtime.profiler.writer import ProfileData, write_profile

from .factory import Clock

EPOCH = 1717055395633100


def _csv(path: Path) -> list[dict[str, str]]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def _two_devices() -> ProfileData:
    c = Clock()
    recs = [
        c.op("MemcpyH2D", 4.0, kind="memcpy", unit="MEMCPY", outputs=()),
        c.op("MatMul", 10.0),
        c.op("Add", 3.0, gap=2.0),
        c.op("MatMul", 12.0, device=1),
    ]
    return ProfileData(
        recs,
        epoch_us=EPOCH,
        process_id=77,
        device_profile=get_profile("910B2"),
        mem_used=[1 << 20, 1 << 20, 3 << 20, 1 << 19],
        syncs=[(2, 0)],  # device 0 synchronised after MatMul; device 1 never
        steps_marked=False,
    )


def test_one_rank_directory_per_device(tmp_path: Path) -> None:
    write_profile(_two_devices(), tmp_path, ("ascend_pt",))
    roots = sorted(tmp_path.glob("*_ascend_pt"))
    assert [r.name.split("_")[-4] for r in roots] == ["77-0", "77-1"]
    for device, root in enumerate(roots):
        assert (root / f"profiler_info_{device}.json").is_file()
        assert json.loads((root / f"profiler_info_{device}.json").read_text())["rank_id"] == device
        (info,) = root.glob(f"PROF_*/device_{device}/info.json.{device}")
        assert json.loads(info.read_text())["rank_id"] == device
    kernels = [
        [k["Type"] for k in _csv(r / "ASCEND_PROFILER_OUTPUT/kernel_details.csv")] for r in roots
    ]
    assert kernels == [["MatMul", "Add"], ["MatMul"]]


def test_a_run_without_marked_steps_gets_one_step_per_device_sync(tmp_path: Path) -> None:
    data = _two_devices()
    assert [r.step for r in with_steps(data)] == [0, 0, 1, 0]
    write_profile(data, tmp_path, ("ascend_pt",))
    dev0 = sorted(tmp_path.glob("*_ascend_pt"))[0] / "ASCEND_PROFILER_OUTPUT"
    assert [k["Step Id"] for k in _csv(dev0 / "kernel_details.csv")] == ["1", "2"]
    steps = _csv(dev0 / "step_trace_time.csv")
    # Computing counts kernels only: step 1's copy is free time, not computing.
    assert [(s["Step"], s["Computing"], s["Free"]) for s in steps] == [
        ("1", "10.0", "4.0"),
        ("2", "3.0", "0.0"),
    ]
    marked = ProfileData(data.records, syncs=data.syncs, steps_marked=True)
    assert [r.step for r in with_steps(marked)] == [0, 0, 0, 0]


def test_memory_csvs_follow_the_records(tmp_path: Path) -> None:
    write_profile(_two_devices(), tmp_path, ("ascend_pt",))
    out = sorted(tmp_path.glob("*_ascend_pt"))[0] / "ASCEND_PROFILER_OUTPUT"
    record = _csv(out / "memory_record.csv")
    # One row per change of the allocated total: 1 MiB, then 3 MiB.
    assert [(r["Component"], r["Total Allocated(MB)"], r["Device Type"]) for r in record] == [
        ("APP", "1.0", "NPU:0"),
        ("APP", "3.0", "NPU:0"),
    ]
    memory = _csv(out / "operator_memory.csv")
    kernels = _csv(out / "kernel_details.csv")
    # 64x256 float16 outputs = 32 KB each, allocated when the op's host op starts (its kernel ts).
    assert [(m["Name"], m["Size(KB)"], m["Release Time(us)"]) for m in memory] == [
        ("ascend_lens::MatMul", "32.0", ""),
        ("ascend_lens::Add", "32.0", ""),
    ]
    assert [m["Allocation Time(us)"] for m in memory] == [
        k["Start Time(us)"].rstrip("\t") for k in kernels
    ]


@pytest.fixture
def clean_runtime() -> Iterator[None]:
    get_runtime().reset()
    yield
    get_runtime().reset()


@pytest.mark.usefixtures("clean_runtime")
def test_device_syncs_of_a_real_run_become_steps(tmp_path: Path) -> None:
    rt = get_runtime()
    with Profiler(tmp_path, exporters=("ascend_pt",)):
        a = Tensor(np.ones((8, 8), np.float16))
        for _ in range(2):
            _ = a @ a
            rt.synchronize_device()
        _ = a + a  # after the last sync: a third step
    (root,) = tmp_path.glob("*_ascend_pt")
    kernels = _csv(root / "ASCEND_PROFILER_OUTPUT/kernel_details.csv")
    assert [(k["Type"], k["Step Id"]) for k in kernels] == [
        ("MatMul", "1"),
        ("MatMul", "2"),
        ("Add", "3"),
    ]
    mem = _csv(root / "ASCEND_PROFILER_OUTPUT/memory_record.csv")
    assert mem and all(float(r["Total Allocated(MB)"]) > 0 for r in mem)
