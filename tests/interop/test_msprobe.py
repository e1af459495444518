"""msprobe 26.2.0 `compare` on `ascend-lens run --dump`: NPU numerics against a reference run."""

from __future__ import annotations

import csv
import subprocess
from pathlib import Path

import pytest
from interop_support import SCRIPTS, Tools, ascend_lens_run, only

FIRST_BAD = "Torch.mul.0.forward.output.0"  # tests/interop/scripts/overflow.py's planted overflow


def _dump(root: Path, name: str, *options: str) -> Path:
    ascend_lens_run(root, "overflow.py", "--dump", name, *options)
    return root / name / "step0"


def _compare(tools: Tools, target: Path, golden: Path, out: Path) -> list[dict[str, str]]:
    res = tools.run("msprobe", "compare", "-tp", target, "-gp", golden, "-o", out, cwd=out.parent)
    path = only(
        out.glob("compare_result_rank0_*.csv"), f"msprobe result\n{res.stdout}\n{res.stderr}"
    )
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def _first_failure(rows: list[dict[str, str]]) -> str:
    return next(r["NPU Name"] for r in rows if r["Result"] != "pass")


def test_statistics_compare_names_the_overflowing_op_first(tools: Tools, tmp_path: Path) -> None:
    npu = _dump(tmp_path, "npu")
    ref = _dump(tmp_path, "ref", "--numerics", "float32")
    rows = _compare(tools, npu, ref, tmp_path / "out")
    assert _first_failure(rows) == FIRST_BAD
    names = [r["NPU Name"] for r in rows]
    assert names == [r["Bench Name"] for r in rows]  # every API matched its counterpart
    assert (
        names[0] == "Torch.matmul.0.forward.input.0"
        and "Functional.softmax.0.forward.output.0" in names
    )
    bad = rows[names.index(FIRST_BAD)]
    assert (bad["NPU Dtype"], bad["Bench Dtype"]) == ("torch.float16", "torch.float16")
    assert bad["NPU max"].strip() == "inf" and float(bad["Bench max"]) > 65504
    assert "nan/inf" in bad["Err_message"]


def test_tensor_compare_against_float64_reads_the_pt_files(tools: Tools, tmp_path: Path) -> None:
    npu = _dump(tmp_path, "npu", "--dump-level", "tensor")
    ref = _dump(tmp_path, "ref", "--dump-level", "tensor", "--numerics", "float64")
    rows = _compare(tools, npu, ref, tmp_path / "out")
    assert _first_failure(rows) == FIRST_BAD
    by_name = {r["NPU Name"]: r for r in rows}
    mm = by_name["Torch.matmul.0.forward.output.0"]
    # Real tensors were loaded: a cosine and an absolute error, small but not zero (float16 rounding).
    assert float(mm["Cosine"]) == pytest.approx(1.0, abs=1e-5)
    assert 0 < float(mm["MaxAbsErr"]) < 1e-2
    assert float(by_name["Torch.matmul.0.forward.input.0"]["MaxAbsErr"]) == 0.0  # same inputs


def test_a_real_msprobe_dump_compares_against_the_emulator_reference(
    tools: Tools, tmp_path: Path
) -> None:
    # msprobe's own PrecisionDebugger on CPU torch stands in for the NPU cluster.
    res = subprocess.run(
        [str(tools.venv / "bin/python"), str(SCRIPTS / "torch_overflow.py"), str(tmp_path / "real")],
        cwd=tmp_path, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    real = only((tmp_path / "real").glob("step0/*/dump.json"), f"msprobe dump\n{res.stderr}")
    ref = _dump(tmp_path, "ref", "--numerics", "float32") / "rank0" / "dump.json"
    # A non-distributed PyTorch dump sits in proc<pid>/, ours in rank<device>/: msprobe
    # pairs step directories only by rank, so compare the two dump.json files.
    out = tmp_path / "out"
    run = tools.run("msprobe", "compare", "-tp", real, "-gp", ref, "-o", out, cwd=tmp_path)
    path = only(out.glob("compare_result_*.csv"), f"msprobe result\n{run.stdout}\n{run.stderr}")
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    assert _first_failure(rows) == FIRST_BAD
    tensors = [r for r in rows if r["NPU Dtype"] == "torch.float16"]
    assert all(r["NPU Name"] == r["Bench Name"] for r in tensors)  # every tensor paired by name
    assert {r["NPU Name"].rsplit(".", 3)[0] for r in tensors} == {
        "Torch.matmul.0", "Functional.gelu.0", "Torch.add.0", "Torch.mul.0", "Functional.softmax.0",
    }  # fmt: skip
