"""msprof-analyze advisor on a profiled offline-model inference run (acl.mdl.execute):
the model's own layers are what it names."""

from __future__ import annotations

import csv
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from interop_support import Tools, only

REPO = Path(__file__).resolve().parents[2]
MODEL_TESTS = REPO / "tests" / "npu_runtime" / "model"


def _cli(cwd: Path, *args: str | Path) -> None:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("NPU_", "MODEL_"))}
    res = subprocess.run(
        [sys.executable, "-m", "ascend_lens", *map(str, args)],
        cwd=cwd,
        env={**clean, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert res.returncode == 0, res.stdout + res.stderr


@pytest.fixture(scope="module")
def rank(tmp_path_factory: pytest.TempPathFactory) -> Path:
    sys.path.insert(0, str(MODEL_TESTS))
    try:
        import resnet_onnx
    finally:
        sys.path.remove(str(MODEL_TESTS))
    d = tmp_path_factory.mktemp("mdl_advisor")
    resnet_onnx.build(d / "net.onnx", batch=8, size=112)
    np.save(
        d / "img.npy", np.random.default_rng(0).standard_normal((8, 3, 112, 112)).astype(np.float32)
    )
    _cli(d, "atc", "--framework=5", "--model=net.onnx", "--output=net", "--soc_version=Ascend910B2")
    _cli(d, "run", "--no-summary", "--profile", "prof", "--profile-ascend-pt", "--profile-top", "0",
         MODEL_TESTS / "scripts" / "acl_net.py", "net.om", "img.npy", "out.npy")  # fmt: skip
    return only((d / "prof").glob("*_ascend_pt"), "ascend_pt directory")


def _kernels(rank: Path) -> list[dict[str, str]]:
    with open(rank / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv", newline="") as f:
        return list(csv.DictReader(f))


def test_advisor_names_the_models_layers(tools: Tools, rank: Path, tmp_path: Path) -> None:
    res = tools.run("msprof-analyze", "advisor", "all", "-d", rank, "-o", tmp_path / "out", "-l", "en", cwd=tmp_path)  # fmt: skip
    book = tools.workbook(only((tmp_path / "out/log").glob("mstt_advisor_*.xlsx"), "workbook"))
    assert {"Overall Summary", "Vector Operator Perf Analysis", "Block Dim Issues"} <= set(book), (
        res.stdout
    )
    kernels = [k for k in _kernels(rank) if k["Type"] not in ("MemcpyH2D", "MemcpyD2H")]
    layers = {k["Name"] for k in kernels}
    assert "stem" in layers and "block1.conv2" in layers  # the ONNX node names

    # The vector layers it flags are our model's, the longest one among them.
    text = str(book["Vector Operator Perf Analysis"][1][1])
    flagged = {line.split(" Op shape")[0] for line in text.splitlines() if " Op shape" in line}
    assert flagged and flagged <= layers
    vector = [k for k in kernels if k["Accelerator Core"] == "AI_VECTOR_CORE"]
    longest = max(vector, key=lambda k: float(k["Duration(us)"]))
    assert longest["Name"] in flagged

    # Its Conv share is exactly our Conv2D layers' time.
    summary = {r[0].strip(): r[1] for r in book["Overall Summary"][1:]}
    conv = sum(float(k["Duration(us)"]) for k in kernels if k["Type"] == "Conv2D")
    assert float(summary["-- Conv"]) == pytest.approx(conv / 1000, abs=0.0011)

    # Block dim: the layers too small to fill the cores are the classifier head.
    header, *rows = book["Block Dim Issues"]
    assert {r[header.index("op_name")] for r in rows} == {"fc", "softmax"}
