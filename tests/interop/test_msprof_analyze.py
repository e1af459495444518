"""msprof-analyze 26.2.0 (advisor, compare) on `ascend-lens run --profile DIR --profile-ascend-pt`."""

from __future__ import annotations

import csv
import re
from collections import defaultdict
from pathlib import Path

import pytest
from interop_support import Tools, ascend_lens_run, only

from npu_runtime.devices import get_profile

STEPS = 3  # tests/interop/scripts/mlp_steps.py: one step per aclrtSynchronizeDevice


def _profile(root: Path, dtype: str) -> Path:
    """Profile mlp_steps.py in `dtype`; returns its `*_ascend_pt` rank directory."""
    root.mkdir()
    ascend_lens_run(
        root, "mlp_steps.py", "--profile", "prof", "--profile-ascend-pt", "--profile-top", "0",
        env={"MODEL_DTYPE": dtype},
    )  # fmt: skip
    return only((root / "prof").glob("*_ascend_pt"), "ascend_pt directory")


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("msprof")
    return {dt: _profile(base / dt, dt) for dt in ("float16", "float32")}


def _rows(rank: Path, name: str) -> list[dict[str, str]]:
    with open(rank / "ASCEND_PROFILER_OUTPUT" / name, newline="") as f:
        return list(csv.DictReader(f))


def test_steps_come_from_device_synchronisations(runs: dict[str, Path]) -> None:
    kernels = _rows(runs["float16"], "kernel_details.csv")
    assert sorted({k["Step Id"] for k in kernels}) == [str(s) for s in range(1, STEPS + 1)]
    assert [r["Step"] for r in _rows(runs["float16"], "step_trace_time.csv")] == ["1", "2", "3"]


def test_advisor_reports_block_dim_and_vector_findings_of_the_run(
    tools: Tools, runs: dict[str, Path], tmp_path: Path
) -> None:
    rank = runs["float16"]
    res = tools.run("msprof-analyze", "advisor", "all", "-d", rank, "-o", tmp_path / "out", "-l", "en", cwd=tmp_path)  # fmt: skip
    html = only((tmp_path / "out").glob("mstt_advisor_*.html"), "advisor HTML report")
    book = tools.workbook(
        only((tmp_path / "out/log").glob("mstt_advisor_*.xlsx"), "advisor workbook")
    )
    assert {"Overall Summary", "Vector Operator Perf Analysis", "Block Dim Issues"} <= set(book), (
        res.stdout
    )

    # Block dim: exactly our kernels that leave cores idle (24 AI Cores, 48 vector cores on 910B).
    prof = get_profile("910B")
    cores = {"AI_CORE": prof.ai_core, "AI_VECTOR_CORE": prof.vector_core}
    kernels = _rows(rank, "kernel_details.csv")
    idle = {
        (k["Name"], k["Block Dim"])
        for k in kernels
        if int(k["Block Dim"]) < cores[k["Accelerator Core"]]
    }
    header, *rows = book["Block Dim Issues"]
    col = {name: i for i, name in enumerate(header)}
    assert {(r[col["op_name"]], r[col["block_dim"]]) for r in rows} == idle
    assert {name.split("_")[0] for name, _ in idle} == {"Add", "SoftmaxV2"}

    # Overall summary: computing time is our step trace's, the MatMul share our kernels'.
    summary = {r[0].strip(): r[1] for r in book["Overall Summary"][1:]}
    computing = sum(float(s["Computing"]) for s in _rows(rank, "step_trace_time.csv"))
    matmul = sum(float(k["Duration(us)"]) for k in kernels if k["Type"] == "MatMul")
    assert float(summary["Computing Time"]) == pytest.approx(computing / 1000, abs=0.0011)
    assert float(summary["-- Matmul"]) == pytest.approx(matmul / 1000, abs=0.0011)

    vector = " ".join(str(c) for r in book["Vector Operator Perf Analysis"] for c in r)
    assert re.search(r"Add_\d+ Op shape: 64,256;64,256 dtype: FLOAT16;FLOAT16", vector)
    assert re.search(r"SoftmaxV2_\d+ Op shape: 64,256 dtype: FLOAT16", vector)
    # The HTML lists a top few of equally long ops in no fixed order: every name it shows
    # must be one of ours, and both idle op types must show.
    page = html.read_text(encoding="utf-8")
    shown = set(re.findall(r"<td>((?:Add|SoftmaxV2)_\d+)</td>", page))
    assert "Block Dim Issues" in page
    assert shown and shown <= {name for name, _ in idle}
    assert {name.split("_")[0] for name in shown} == {"Add", "SoftmaxV2"}


def test_compare_matches_the_ops_of_a_float16_and_a_float32_run(
    tools: Tools, runs: dict[str, Path], tmp_path: Path
) -> None:
    base, target = runs["float16"], runs["float32"]
    res = tools.run(
        "msprof-analyze", "compare", "-d", target, "-bp", base, "-o", tmp_path, cwd=tmp_path
    )
    book = tools.workbook(
        only(tmp_path.glob("performance_comparison_result_*.xlsx"), "compare workbook")
    )
    assert {"OverallMetrics", "OperatorCompare", "KernelCompare"} <= set(book), res.stdout

    # KernelCompare: one row per (op type, input shapes), both sides called once per step,
    # and the duration ratio is ours (float32 costs more on the Cube than float16).
    def totals(rank: Path) -> dict[tuple[str, str], float]:
        out: dict[tuple[str, str], float] = defaultdict(float)
        for k in _rows(rank, "kernel_details.csv"):
            out[(k["Type"], k["Input Shapes"])] += float(k["Duration(us)"])
        return out

    ours_a, ours_b = totals(base), totals(target)
    header = next(r for r in book["KernelCompare"] if r and r[0] == "Order Id")
    rows = [r for r in book["KernelCompare"] if r and isinstance(r[0], int)]
    calls = [i for i, h in enumerate(header) if h == "Calls"]
    got = {(r[1], r[2]): r for r in rows}
    assert set(got) == set(ours_a) == set(ours_b)
    for key, row in got.items():
        assert (row[calls[0]], row[calls[1]]) == (STEPS, STEPS), key
        assert row[header.index("Diff Total Ratio")] == pytest.approx(
            ours_b[key] / ours_a[key], rel=2e-3
        )
    big = ("MatMul", '"2048,2048;2048,2048"')
    assert got[big][header.index("Diff Total Ratio")] > 1.5

    # OperatorCompare pairs our host ops (ascend_lens::<OpType>) with their kernels on both sides.
    ops = book["OperatorCompare"]
    head = next(r for r in ops if r and r[0] == "Order Id")
    names = [i for i, h in enumerate(head) if h == "Operator Name"]
    matched = {(r[names[0]], r[names[1]]) for r in ops if r and isinstance(r[0], int)}
    for op in ("MatMul", "Add", "SoftmaxV2"):
        assert (f"ascend_lens::{op}", f"ascend_lens::{op}") in matched


def test_cluster_analysis_sees_one_rank_per_device(tools: Tools, tmp_path: Path) -> None:
    ascend_lens_run(tmp_path, "two_devices.py", "--profile", "prof", "--profile-ascend-pt", "--profile-top", "0")  # fmt: skip
    ranks = sorted((tmp_path / "prof").glob("*_ascend_pt"))
    assert len(ranks) == 2
    res = tools.run("msprof-analyze", "cluster", "-d", tmp_path / "prof", "-m", "all", "-o", tmp_path / "out", cwd=tmp_path)  # fmt: skip
    path = tmp_path / "out/cluster_analysis_output/cluster_step_trace_time.csv"
    assert path.is_file(), res.stdout
    with open(path, newline="") as f:
        got = {
            (r["Step"], r["Index"]): r["Computing"]
            for r in csv.DictReader(f)
            if r["Type"] == "rank"
        }
    ours = {
        (s["Step"], str(rank)): s["Computing"]
        for rank, root in enumerate(ranks)
        for s in _rows(root, "step_trace_time.csv")
    }
    assert set(got) == {(step, rank) for step in ("1", "2") for rank in ("0", "1")}
    assert {k: float(v) for k, v in got.items()} == {k: float(v) for k, v in ours.items()}


def test_compare_by_kernel_type_reads_op_statistic(
    tools: Tools, runs: dict[str, Path], tmp_path: Path
) -> None:
    base, target = runs["float16"], runs["float32"]
    res = tools.run("msprof-analyze", "compare", "-d", target, "-bp", base, "-o", tmp_path,
                    "--use_kernel_type", "--enable_kernel_compare", cwd=tmp_path)  # fmt: skip
    book = tools.workbook(only(tmp_path.glob("performance_comparison_result_*.xlsx"), "workbook"))
    assert "KernelTypeCompare" in book, res.stdout
    rows = [r for r in book["KernelTypeCompare"] if r and isinstance(r[0], int)]
    got = {(r[1], r[2]): (r[3], r[7], r[8], r[12]) for r in rows}

    def ours(rank: Path) -> dict[tuple[str, str], tuple[float, int]]:
        return {
            (s["OP Type"], s["Core Type"]): (float(s["Total Time(us)"]), int(s["Count"]))
            for s in _rows(rank, "op_statistic.csv")
        }

    a, b = ours(base), ours(target)
    assert set(got) == set(a) == set(b)
    for key, (total_a, calls_a, total_b, calls_b) in got.items():
        assert (total_a, calls_a) == pytest.approx(a[key], abs=1e-3)
        assert (total_b, calls_b) == pytest.approx(b[key], abs=1e-3)
