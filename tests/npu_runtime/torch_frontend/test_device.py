"""The npu device under `ascend-lens run`: tensors, autograd, save/load, API, bad input."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from torch_support import REPO, SCRIPTS, last_line, run


def test_device_basics() -> None:
    r = run("--no-summary", SCRIPTS / "device_basics.py")
    assert r.returncode == 0, r.stderr
    lines = dict(
        line.split(" ", 1)
        for line in r.stdout.splitlines()
        if " " in line and not line.startswith(" ")
    )
    assert lines["device"] == "npu:0 True npu:1 npu:0"
    assert "device='npu:0')" in r.stdout
    assert lines["cpu"] == "[[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]] [[0.0, 2.0, 4.0], [6.0, 8.0, 10.0]]"
    assert lines["factory"] == "npu:0 torch.Size([3, 4]) [0.0, 0.0]"
    assert (
        lines["inplace"]
        == "[[2.0, 4.0, 6.0], [8.0, 10.0, 12.0]] [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]"
    )
    assert lines["view"] == "torch.Size([3, 2]) (1, 3) False [0.0, 3.0, 1.0, 4.0, 2.0, 5.0]"
    assert lines["module"] == "npu:0"
    assert lines["no_grad"] == "False torch.Size([2, 2])"
    assert lines["grad"] == "[3.0, 5.0, 7.0]"
    assert lines["save"] == "cpu npu:0 True True"
    assert lines["default_device"] == "npu:0"
    assert lines["api"] == "True 8 0 Ascend910B2"
    assert lines["set_device"] == "1 npu:1"
    assert lines["rng"] == "True True True"
    assert lines["props"] == "Ascend910B2 65455301591"


def _fails_at(case: str, line_text: str, message: str) -> None:
    r = run("--no-summary", SCRIPTS / "errors.py", case)
    assert r.returncode == 1
    assert "not reached" not in r.stdout
    assert last_line(r.stderr) == message
    tb = r.stderr.splitlines()
    # the traceback ends at the user's line: no frame from inside the emulator
    assert not any(str(REPO / "npu_runtime") + "/" in ln for ln in tb), r.stderr
    assert any(ln.strip() == line_text for ln in tb), r.stderr


def test_mixed_devices_fail_like_cuda() -> None:
    _fails_at(
        "mixed",
        "y = x + torch.ones(3)",
        "RuntimeError: Expected all tensors to be on the same device, but found at least two "
        "devices, npu:0 and cpu!",
    )
    _fails_at(
        "two_npus",
        'y = x + torch.ones(3, device="npu:1")',
        "RuntimeError: Expected all tensors to be on the same device, but found at least two "
        "devices, npu:0 and npu:1!",
    )


def test_op_not_emulated_names_the_op() -> None:
    _fails_at(
        "not_emulated",
        'q = torch.linalg.qr(torch.ones(3, 3, device="npu"))',
        "NotImplementedError: aten::linalg_qr is not emulated yet on the npu device (Ascend Lens); "
        "run this part on the CPU or open an issue with the op name",
    )


def test_cpu_tensor_into_fused_op() -> None:
    _fails_at(
        "cpu_into_fused",
        "y = torch_npu.npu_rms_norm(x, torch.ones(3))",
        "RuntimeError: npu_rms_norm: expected all tensors on the npu device, but got a tensor on cpu",
    )


def test_without_torch_one_clear_line(tmp_path: Path) -> None:
    fake = tmp_path / "site" / "torch"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text(
        "raise ModuleNotFoundError(\"No module named 'torch'\", name='torch')\n"
    )
    script = tmp_path / "uses_npu.py"
    script.write_text("import torch_npu\nprint('imported')\n")
    r = run("--no-summary", script, env={"PYTHONPATH": str(tmp_path / "site")})
    assert r.returncode == 1
    assert r.stdout == ""
    assert r.stderr.strip() == (
        "ascend-lens: torch_npu needs PyTorch, which is not installed: pip install ascend-lens[torch]"
    )


def test_memory_api_and_oom_message() -> None:
    r = run("--no-summary", SCRIPTS / "memory.py")
    lines = dict(line.split(" ", 1) for line in r.stdout.splitlines())
    assert lines["allocated"] == "4096 4096"
    assert lines["runtime_sees"] == "True"
    assert lines["after_del"] == "0 4096"
    assert lines["reuse"] == "4096 4096"
    assert lines["empty_cache"] == "0 0"
    assert lines["large"] == f"{4 * 2**20} {4 * 2**20}"
    assert lines["peak_reset"] == "0"
    assert lines["mem_get_info"] == "65455301591 True"
    assert lines["summary"] == "True"
    assert lines["fraction"] == (
        "NPU out of memory. Tried to allocate 40.00 GiB (NPU 0; 60.96 GiB total capacity; "
        "0 bytes already allocated; 0 bytes current active; 60.95 GiB free; 30.48 GiB allowed; "
        "4.00 MiB reserved in total by PyTorch)If reserved memory is >> allocated memory try "
        "setting max_split_size_mb to avoid fragmentation."
    )
    assert r.returncode == 1
    assert last_line(r.stderr) == (
        "torch.OutOfMemoryError: NPU out of memory. Tried to allocate 2.00 GiB (NPU 0; 60.96 GiB "
        "total capacity; 60.00 GiB already allocated; 60.00 GiB current active; 971.04 MiB free; "
        "60.96 GiB allowed; 60.00 GiB reserved in total by PyTorch)If reserved memory is >> allocated memory try "
        "setting max_split_size_mb to avoid fragmentation."
    )
    assert 'keep.append(torch.empty(2 * 2**30, dtype=torch.uint8, device="npu"))' in r.stderr


def test_ops_are_profiled_at_the_user_line(tmp_path: Path) -> None:
    script = tmp_path / "prof.py"
    script.write_text(
        "import torch, torch_npu\n"
        "a = torch.randn(64, 128).npu()\n"
        "b = torch.randn(128, 32, device='npu', dtype=torch.float16)\n"
        "c = a.half() @ b\n"
        "d = torch.relu(c).sum()\n"
        "print(d.item() == d.item())\n"
    )
    out = tmp_path / "prof"
    r = run("--no-summary", "--profile", out, "--profile-top", "0", script)
    assert r.returncode == 0, r.stderr
    doc = json.loads((out / "lines.json").read_text())
    by_line = {
        ln["line"]: {o["op_type"] for o in ln["top_ops"]}
        for ln in doc["lines"]
        if ln["file"] == str(script)
    }
    assert by_line[2] == {"MemcpyH2D"}
    assert "StatelessRandomNormalV2" in by_line[3]
    assert by_line[4] == {"Cast", "MatMul"}
    assert by_line[5] == {"Relu", "ReduceSum"}
    assert by_line[6] == {"MemcpyD2H"}


def test_common_ops_match_the_cpu() -> None:
    r = run("--no-summary", SCRIPTS / "ops_vs_cpu.py")
    assert r.returncode == 0, r.stderr
    diffs = {name: float(v) for name, v in (line.split() for line in r.stdout.splitlines())}
    assert set(diffs) >= {"index", "sdpa_causal", "lstm", "gru", "pinned_loader", "cross_entropy"}
    assert all(v <= 1e-5 for v in diffs.values()), diffs


def test_npu_numerics() -> None:
    r = run("--no-summary", SCRIPTS / "numerics.py")
    assert r.returncode == 0, r.stderr
    got = dict(line.split(" ", 1) for line in r.stdout.splitlines())
    assert got == {
        "matmul_torch.float16": "0.0",
        "matmul_torch.bfloat16": "0.0",
        "conv2d_fp16": "0.0",
        "fp16_overflow": "[inf, -inf]",
    }


def test_stream_and_events_time_the_work_on_the_simulated_clock(tmp_path: Path) -> None:
    script = SCRIPTS / "streams_events.py"
    out = tmp_path / "prof"
    r = run("--no-summary", "--profile", out, "--profile-top", "0", script)
    assert r.returncode == 0, r.stderr
    got = dict(line.split(" ", 1) for line in r.stdout.splitlines())
    doc = json.loads((out / "trace.json").read_text())
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    line = next(n for n, t in enumerate(script.read_text().splitlines(), 1) if "# @matmul" in t)
    (mm,) = [
        e for e in events if e.get("ph") == "X" and e["args"].get("Source") == f"{script}:{line}"
    ]
    assert mm["args"]["OP Type"] == "MatMul"
    assert mm["args"]["Stream Id"] != 0  # queued on the side stream
    # the events bracket the MatMul: its simulated duration plus the host's enqueue step
    assert abs(float(got["elapsed_ms"]) * 1000 - float(mm["dur"])) <= 2.0
    assert got["default_stream_restored"] == "True"
    assert got["query"] == "True True"


def test_seam_for_other_front_ends() -> None:
    script = SCRIPTS / "seam.py"
    r = run("--no-summary", script)
    assert r.returncode == 0, r.stderr
    line = next(n for n, t in enumerate(script.read_text().splitlines(), 1) if "B.charge(" in t)
    assert r.stdout.splitlines() == [
        "from_cpu npu:0 [0.0, 1.0, 2.0, 3.0]",
        "host_view [0.0, 2.0, 4.0, 6.0]",
        f"charge HcomAllReduce 12.5 {line} 0",  # charged at the user's line, default stream
    ]


def test_torch_compile_npu_backend_runs_the_graph_on_the_device(tmp_path: Path) -> None:
    """torch_npu's `npu` dynamo backend (eager without torchair): same values, ops still
    charged to the emulated device at the line that calls the compiled model."""
    script = tmp_path / "compiled.py"
    script.write_text(
        "import torch, torch_npu\n"
        "m = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU()).npu()\n"
        "x = torch.randn(4, 16).npu()\n"
        "eager = m(x)\n"
        "cm = torch.compile(m, backend='npu')\n"
        "out = cm(x)\n"
        "print(torch.equal(out.cpu(), eager.cpu()), out.device)\n"
    )
    out = tmp_path / "prof"
    r = run("--no-summary", "--profile", out, "--profile-top", "0", script)
    assert r.returncode == 0, r.stderr
    assert last_line(r.stdout) == "True npu:0"
    doc = json.loads((out / "lines.json").read_text())
    ops = {o["op_type"] for ln in doc["lines"] if ln["file"] == str(script) for o in ln["top_ops"]}
    assert {"MatMul", "Relu"} <= ops or {"MatMulV2", "Relu"} <= ops, ops


def test_torch_compile_npu_backend_outside_the_launcher_says_how(tmp_path: Path) -> None:
    script = tmp_path / "plain.py"
    script.write_text(
        "import torch\n"
        "cm = torch.compile(torch.nn.Linear(2, 2), backend='npu')\n"
        "cm(torch.randn(1, 2))\n"
    )
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=240)
    assert r.returncode != 0
    assert (
        "torch.compile backend 'npu' needs torch_npu: run the script under `ascend-lens run`"
        in r.stderr
    )
