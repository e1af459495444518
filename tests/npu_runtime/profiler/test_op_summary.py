"""op_summary_<ts>.csv: msprof's header byte for byte, and msprof's cell conventions."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from npu_runtime.profiler import op_summary
from npu_runtime.profiler.data_files import op_summary_columns
from npu_runtime.records import TensorInfo

from .factory import Clock

REFERENCE = Path(__file__).parents[3] / ".." / "shared" / "reference" / "acl" / "profiling.md"


def reference_header() -> str:
    """The header line quoted under 'Exact header expected by the UT' in profiling.md §2."""
    text = REFERENCE.read_text("utf-8")
    after = text.split("Exact header expected by the UT", 1)[1]
    block = after.split("```", 2)[1]
    return block.strip("\n")


@pytest.fixture
def written(tmp_path: Path) -> tuple[Path, list]:
    c = Clock()
    recs = [
        c.op(
            "MatMul", 151.0, gap=0.758, time_by_unit={"cube": 120.0, "memory": 20.0, "scalar": 11.0}
        ),
        c.op("MemcpyH2D", 40.0, kind="memcpy", unit="MEMCPY", inputs=(), outputs=()),
        c.op("Add", 15.0, gap=20.0, time_by_unit={"vector": 5.0, "memory": 10.0}, block_dim=40),
        c.op("Cast", 3.0, unit="AI_CPU", bound="aicpu", inputs=(), outputs=()),
    ]
    path = tmp_path / "op_summary_20260101000000.csv"
    op_summary.write(recs, path, epoch_us=1717575960208020)
    return path, recs


def test_header_is_msprof_byte_for_byte(written: tuple[Path, list]) -> None:
    path, _ = written
    first = path.read_bytes().split(b"\n", 1)[0]
    assert first == reference_header().encode("ascii")


def test_header_without_pmu_ends_at_context_id() -> None:
    cols = op_summary_columns(pmu=False)
    assert cols[-1] == "Context ID"
    assert cols == op_summary_columns(pmu=True)[: len(cols)]


def test_rows_follow_msprof_conventions(written: tuple[Path, list]) -> None:
    path, recs = written
    with open(path, newline="") as f:
        table = list(csv.DictReader(f))
    # Only kernels: the copy is not an op_summary row.
    assert [r["OP Type"] for r in table] == ["MatMul", "Add", "Cast"]
    mm, add, cast = table
    assert mm["Task Start Time(us)"] == "1717575960208020.758\t"
    assert mm["Task Duration(us)"] == "151.000"
    assert mm["Task Wait Time(us)"] == "0"
    # Add starts 20 µs after the copy ended, i.e. 60 µs after MatMul ended (device-wide gap).
    assert add["Task Wait Time(us)"] == "60.000000"
    assert add["Block Num"] == "40"
    assert mm["Model ID"] == "4294967295"
    assert mm["Input Shapes"] == '"64,128;128,256"'
    assert mm["Input Data Types"] == "FLOAT16;FLOAT16"
    assert mm["Output Shapes"] == '"64,256"'
    assert mm["Task Type"] == "AI_CORE" and add["Task Type"] == "AI_VECTOR_CORE"
    assert cast["Input Shapes"] == ""


def test_pmu_columns_come_from_the_cost_split(written: tuple[Path, list]) -> None:
    path, _ = written
    with open(path, newline="") as f:
        mm, add, cast = list(csv.DictReader(f))
    assert mm["aicore_time(us)"] == "151.000"
    assert mm["aic_total_cycles"] == str(151 * 1800)
    assert mm["aic_mac_time(us)"] == "120.000"
    assert mm["aic_mac_ratio"] == f"{120 / 151:.3f}"
    assert mm["aic_mte2_time(us)"] == "20.000"
    assert mm["aic_mte1_time(us)"] == "N/A"  # not modelled, so not invented
    assert mm["cube_utilization(%)"] == f"{120 / 151 * 100:.3f}"
    assert add["aicore_time(us)"] == "0.000"
    assert add["aiv_time(us)"] == "15.000"
    assert add["aiv_vec_time(us)"] == "5.000"
    assert add["aiv_mte2_time(us)"] == "10.000"
    assert cast["aicore_time(us)"] == "N/A"


def test_every_row_has_every_column(written: tuple[Path, list]) -> None:
    path, _ = written
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    assert {len(r) for r in rows} == {len(op_summary_columns())}


def test_wait_restarts_per_device() -> None:
    c = Clock()
    recs = [c.op("Add", 5.0, device=0), c.op("Add", 5.0, device=1, gap=7.0)]
    rows = op_summary.rows(recs, pmu=False)
    assert [r[0] for r in rows] == ["0", "1"]
    assert [r[10] for r in rows] == ["0", "0"]


def test_formats_and_dtypes_keep_msprof_spelling() -> None:
    c = Clock()
    rec = c.op("Conv2D", 1.0, inputs=(TensorInfo((1, 3, 8, 8), "BF16", "NCHW"),))
    row = dict(zip(op_summary_columns(False), op_summary.rows([rec], pmu=False)[0], strict=True))
    assert (row["Input Shapes"], row["Input Data Types"], row["Input Formats"]) == (
        '"1,3,8,8"',
        "BF16",
        "NCHW",
    )
