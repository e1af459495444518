"""Real-program-shaped inference under `ascend-lens run`: an acl_net.py-style classifier and
an acllite-style model class, checked against onnxruntime on the same input."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import resnet_onnx

# the onnx extra's runtime: skipped where it is not installed (no wheel for the interpreter)
ort = pytest.importorskip("onnxruntime")

REPO = Path(__file__).resolve().parents[3]
SCRIPTS = Path(__file__).parent / "scripts"
# Largest absolute difference from float32 onnxruntime on softmax probabilities
TOLERANCE = {"force_fp16": 3e-3, "allow_mix_precision": 3e-3, "must_keep_origin_dtype": 1e-5}


def cli(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NPU_", "ASCEND_RT_"))}
    return subprocess.run(
        [sys.executable, "-m", "ascend_lens", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**env, "PYTHONPATH": str(REPO)},
        timeout=180,
    )


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("mdl")
    resnet_onnx.build(d / "net.onnx")
    resnet_onnx.build(d / "dyn.onnx", batch="N")
    rng = np.random.default_rng(7)
    for b in (1, 3, 4, 8):
        np.save(d / f"img{b}.npy", rng.standard_normal((b, 3, 32, 32)).astype(np.float32))
    return d


def reference(onnx_path: Path, image: Path) -> np.ndarray:
    s = ort.InferenceSession(str(onnx_path), providers=["CPUExecutionProvider"])
    return s.run(None, {"input": np.load(image)})[0]


def compile_static(work: Path, mode: str) -> Path:
    r = cli(
        "atc",
        "--framework=5",
        "--model=net.onnx",
        f"--output=net_{mode}",
        "--soc_version=Ascend910B2",
        f"--precision_mode={mode}",
        cwd=work,
    )
    assert r.returncode == 0, r.stderr
    return work / f"net_{mode}.om"


@pytest.mark.parametrize("mode", sorted(TOLERANCE))
def test_acl_net_matches_onnxruntime(work: Path, mode: str) -> None:
    model = compile_static(work, mode)
    out = work / f"out_{mode}.npy"
    r = cli("run", "--no-summary", SCRIPTS / "acl_net.py", model, "img1.npy", out, cwd=work)
    assert r.returncode == 0, r.stderr
    assert r.stderr == ""  # no sanitizer findings, no leaks
    got, want = np.load(out), reference(work / "net.onnx", work / "img1.npy")
    assert got.shape == want.shape == (1, 10)
    diff = float(np.abs(got - want).max())
    assert diff <= TOLERANCE[mode]
    if mode == "force_fp16":
        assert diff > 0  # fp16 rounding is really applied, not a float32 pass-through
    assert r.stdout == f"top1 [{int(np.argmax(want))}]\n"


def test_acllite_style_class_loads_from_memory(work: Path) -> None:
    model = compile_static(work, "force_fp16")
    out = work / "lite.npy"
    r = cli("run", "--no-summary", SCRIPTS / "acllite_style.py", model, "img1.npy", out, cwd=work)
    assert r.returncode == 0, r.stderr
    assert r.stderr == ""
    np.testing.assert_allclose(
        np.load(out), reference(work / "net.onnx", work / "img1.npy"), atol=3e-3
    )
    from npu_runtime.model import om

    h = om.loads(model.read_bytes()).header
    assert r.stdout == f"sizes {h['work_bytes']} {h['weight_bytes']}\n"


@pytest.fixture(scope="module")
def dynamic_om(work: Path) -> Path:
    r = cli(
        "atc",
        "--framework=5",
        "--model=dyn.onnx",
        "--output=dyn",
        "--soc_version=Ascend910B2",
        "--input_shape=input:-1,3,32,32",
        "--dynamic_batch_size=1,4,8",
        cwd=work,
    )
    assert r.returncode == 0, r.stderr
    return work / "dyn.om"


@pytest.mark.parametrize("batch", [1, 4, 8])
def test_dynamic_batch_each_gear(work: Path, dynamic_om: Path, batch: int) -> None:
    out = work / f"dyn{batch}.npy"
    image = work / f"img{batch}.npy"
    r = cli("run", "--no-summary", SCRIPTS / "acl_net.py", dynamic_om, image, out, batch, cwd=work)
    assert r.returncode == 0, r.stderr
    got = np.load(out)
    assert got.shape == (batch, 10)
    np.testing.assert_allclose(got, reference(work / "dyn.onnx", image), atol=3e-3)


def test_uncompiled_batch_gives_the_real_code_and_its_meaning(work: Path, dynamic_om: Path) -> None:
    r = cli(
        "run", "--no-summary", SCRIPTS / "acl_net.py", dynamic_om, "img3.npy", "x.npy", 3, cwd=work
    )
    assert r.returncode == 1
    assert "Exception: acl.mdl.set_dynamic_batch_size failed ret=145013" in r.stderr
    tail = r.stderr.split("ret=145013\n", 1)[1].splitlines()
    setter_line = next(
        i
        for i, text in enumerate((SCRIPTS / "acl_net.py").read_text().splitlines(), 1)
        if "ret = acl.mdl.set_dynamic_batch_size(" in text
    )
    assert tail[0] == (
        "ascend-lens: 145013 is ACL_ERROR_GE_DYNAMIC_BATCH_SIZE_INVALID, returned by "
        f"aclmdlSetDynamicBatchSize at {SCRIPTS / 'acl_net.py'}:{setter_line}"
    )
    assert tail[1] == "    meaning: The dynamic batch size is invalid."
    assert "batch gears [[1], [4], [8]]" in tail[2]
    assert tail[-1] == "    fix: Use one of the batch sizes given to atc --dynamic_batch_size."


def test_injected_layer_fault_is_explained_with_the_layer(work: Path) -> None:
    model = compile_static(work, "force_fp16")
    r = cli(
        "run",
        "--no-summary",
        "--inject",
        "op:Conv2D:3:507015",
        SCRIPTS / "acl_net.py",
        model,
        "img1.npy",
        "f.npy",
        cwd=work,
    )
    assert r.returncode == 1
    assert "Exception: acl.mdl.execute failed ret=507015" in r.stderr
    assert "ascend-lens: 507015 is ACL_ERROR_RT_AICORE_EXCEPTION, returned by aclmdlExecute" in (
        r.stderr
    )
    assert "    detail: injected device fault in block0.conv2 (Conv2D)" in r.stderr


def test_profiled_run_records_every_node_at_the_execute_line(work: Path) -> None:
    model = compile_static(work, "force_fp16")
    prof = work / "prof"
    r = cli(
        "run",
        "--no-summary",
        "--profile",
        prof,
        SCRIPTS / "acl_net.py",
        model,
        "img1.npy",
        "p.npy",
        cwd=work,
    )
    assert r.returncode == 0, r.stderr
    (summary,) = prof.glob("op_summary_*.csv")
    rows = list(csv.DictReader(summary.open()))
    ops = [row["OP Type"] for row in rows if row["OP Type"] not in ("MemcpyH2D", "MemcpyD2H")]
    assert ops == [
        "Conv2D", "Relu", "MaxPool",
        "Conv2D", "Relu", "Conv2D", "Add", "Relu",
        "Conv2D", "Relu", "Conv2D", "Add", "Relu",
        "ReduceMeanD", "MatMulV2", "SoftmaxV2",
    ]  # fmt: skip
    conv = next(row for row in rows if row["OP Type"] == "Conv2D")
    assert conv["Op Name"] == "stem"
    # a layer's task carries its model's id (copies are not part of a model)
    assert {row["Model ID"] for row in rows if row["OP Type"] in ops} == {"1"}
    assert {row["Model ID"] for row in rows if row["OP Type"] == "MemcpyH2D"} <= {"4294967295"}
    assert conv["Input Data Types"].startswith("FLOAT16")
    lines = json.loads((prof / "lines.json").read_text())
    execute_line = next(
        i
        for i, text in enumerate((SCRIPTS / "acl_net.py").read_text().splitlines(), 1)
        if "acl.mdl.execute(" in text
    )
    (entry,) = [e for e in lines["lines"] if e["line"] == execute_line]
    assert entry["file"] == str(SCRIPTS / "acl_net.py")
    assert entry["op_count"] == 16  # every node of the model, at the execute call


def test_torch_exported_model_with_dynamic_batch(work: Path) -> None:
    torch = pytest.importorskip("torch")
    import warnings

    from torch import nn

    class Net(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.conv = nn.Conv2d(3, 8, 3, padding=1)
            self.bn = nn.BatchNorm2d(8)
            self.fc = nn.Linear(8, 5)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            x = torch.relu(self.bn(self.conv(x)))
            x = nn.functional.adaptive_avg_pool2d(x, 1).flatten(1)
            return torch.softmax(self.fc(x), 1)

    torch.manual_seed(0)
    net = Net().eval()
    x = torch.randn(2, 3, 16, 16)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            net, (x,), str(work / "torch.onnx"), input_names=["input"], output_names=["prob"],
            dynamic_axes={"input": {0: "batch"}, "prob": {0: "batch"}}, dynamo=False,
            opset_version=17,
        )  # fmt: skip
    r = cli(
        "atc", "--framework=5", "--model=torch.onnx", "--output=torch", "--soc_version=Ascend910B2",
        "--input_shape=input:-1,3,16,16", "--dynamic_batch_size=1,2",
        "--precision_mode=must_keep_origin_dtype", cwd=work,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    np.save(work / "torch_in.npy", x.numpy())
    r = cli(
        "run", "--no-summary", SCRIPTS / "acl_net.py", "torch.om", "torch_in.npy", "torch_out.npy",
        2, cwd=work,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    with torch.no_grad():
        want = net(x).numpy()
    np.testing.assert_allclose(np.load(work / "torch_out.npy"), want, atol=1e-5)
