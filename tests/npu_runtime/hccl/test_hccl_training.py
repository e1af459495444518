"""Distributed training under `ascend-lens run --nproc N`: results equal single-process ones."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import torch
from hccl_support import ascend_lens, clean_env, script_copy

GLOBAL_BATCH, STEPS = 32, 2


def _reference() -> dict[str, object]:
    """The same MLP trained in one process on the whole batch (CPU, float32)."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.Tanh(), torch.nn.Linear(32, 4))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    gen = torch.Generator().manual_seed(1)
    grads = []
    for _ in range(STEPS):
        x = torch.randn(GLOBAL_BATCH, 16, generator=gen)
        y = torch.randn(GLOBAL_BATCH, 4, generator=gen)
        opt.zero_grad()
        torch.nn.functional.mse_loss(model(x), y).backward()
        grads.append({n: p.grad.clone() for n, p in model.named_parameters()})
        opt.step()
    return {"grads": grads, "params": {n: p.detach() for n, p in model.named_parameters()}}


@pytest.fixture(scope="module")
def ddp_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, object]:
    tmp = tmp_path_factory.mktemp("ddp")
    script = script_copy("ddp_train.py", tmp)
    out = tmp / "out"
    out.mkdir()
    run = ascend_lens(
        "--nproc", "8", "--profile", tmp / "prof", "--profile-ascend-pt", "--profile-top", "0",
        script, out, cwd=tmp,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr[-4000:]
    return tmp, run


def test_ddp_on_8_ranks_equals_single_process_training_on_the_combined_batch(
    ddp_run: tuple[Path, object],
) -> None:
    tmp, _ = ddp_run
    ref = _reference()
    for rank in range(8):
        got = torch.load(tmp / "out" / f"rank{rank}.pt")
        for step in range(STEPS):
            for name, g in ref["grads"][step].items():  # type: ignore[index]
                torch.testing.assert_close(got["grads"][step][name], g, rtol=1e-5, atol=1e-6)
        for name, p in ref["params"].items():  # type: ignore[attr-defined]
            torch.testing.assert_close(got["params"][name], p, rtol=1e-5, atol=1e-6)


def test_each_rank_profiles_its_gradient_all_reduces_on_the_communication_stream(
    ddp_run: tuple[Path, object],
) -> None:
    tmp, run = ddp_run
    for rank in range(8):
        doc = json.loads((tmp / "prof" / f"rank{rank}" / "lines.json").read_text())
        ops = {o["op_type"]: o for o in doc["top_ops"]}
        # DDP's bucket all-reduce (2 steps) plus its start-up broadcast
        assert ops["HcomAllReduce"]["count"] == STEPS and ops["HcomAllReduce"]["bound"] == "link"
        assert ops["HcomBroadcast"]["count"] >= 1
        # DDP's all-reduces run on autograd's thread: they are charged to the backward() line
        backward = _line_of(tmp / "ddp_train.py", "loss.backward()")
        (line,) = [ln for ln in doc["lines"] if ln["line"] == backward]
        (ar,) = [o for o in line["top_ops"] if o["op_type"] == "HcomAllReduce"]
        assert ar["count"] == STEPS
        trace = json.loads((tmp / "prof" / f"rank{rank}" / "trace.json").read_text())
        events = trace["traceEvents"] if isinstance(trace, dict) else trace
        comm = [
            e
            for e in events
            if e.get("ph") == "X" and str(e.get("name", "")).startswith("hcom_allReduce")
        ]
        compute = [
            e for e in events if e.get("ph") == "X" and e.get("args", {}).get("OP Type") == "MatMul"
        ]
        assert comm and compute
        assert {e["tid"] for e in comm}.isdisjoint({e["tid"] for e in compute})
        pts = [
            p
            for p in (tmp / "prof").glob("*_ascend_pt")
            if (p / f"profiler_info_{rank}.json").is_file()
        ]
        assert len(pts) == 1


def test_tensor_parallel_mlp_sums_partial_outputs_with_all_reduce(tmp_path: Path) -> None:
    script = script_copy("tp_mlp.py", tmp_path)
    run = ascend_lens(
        "--nproc", "4", "--profile", tmp_path / "prof", "--profile-top", "0", script, cwd=tmp_path
    )
    assert run.returncode == 0, run.stderr[-3000:]
    for rank in range(4):
        (line,) = run.lines(rank)
        m = re.fullmatch(rf"rank {rank} device npu:{rank} max error (\S+)", line)
        assert m and float(m.group(1)) < 1e-3, line
        doc = json.loads((tmp_path / "prof" / f"rank{rank}" / "lines.json").read_text())
        (ar,) = [
            ln for ln in doc["lines"] if any(o["op_type"] == "HcomAllReduce" for o in ln["top_ops"])
        ]
        assert (ar["file"], ar["line"], ar["bound"]) == (
            str(script),
            _line_of(script, "dist.all_reduce(partial)"),
            "link",
        )


def _line_of(script: Path, text: str) -> int:
    return next(i for i, ln in enumerate(script.read_text().splitlines(), 1) if text in ln)


def test_fsdp_step_equals_single_process_step(tmp_path: Path) -> None:
    script = script_copy("fsdp_cpu.py", tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    run = ascend_lens("--nproc", "4", script, out, cwd=tmp_path)
    assert run.returncode == 0, run.stderr[-3000:]
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.Tanh(), torch.nn.Linear(32, 4))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    gen = torch.Generator().manual_seed(1)
    x, y = torch.randn(32, 16, generator=gen), torch.randn(32, 4, generator=gen)
    torch.nn.functional.mse_loss(model(x), y).backward()
    opt.step()
    for rank in range(4):
        got = torch.load(out / f"rank{rank}.pt")
        for name, p in model.named_parameters():
            torch.testing.assert_close(got[name], p.detach(), rtol=1e-5, atol=1e-6)


def test_two_machines_on_one_host_run_one_job_over_roce(tmp_path: Path) -> None:
    """Two launches, as torchrun's multi-node: each is a 'machine' of 2 ranks."""
    import socket
    import subprocess
    import sys

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    script = script_copy("allreduce_layout.py", tmp_path)
    procs = []
    for node in range(2):
        cmd = [sys.executable, "-m", "ascend_lens", "run", "--no-summary", "--nproc", "2",
               "--nnodes", "2", "--node-rank", str(node), "--master-port", str(port), str(script)]  # fmt: skip
        env = clean_env(NPU_SERVER_ID=f"10.0.0.{node + 1}")
        procs.append(subprocess.Popen(cmd, cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, text=True))  # fmt: skip
    outs = [p.communicate(timeout=240) for p in procs]
    for p, (_, err) in zip(procs, outs, strict=True):
        assert p.returncode == 0, err[-3000:]
    text = outs[0][0] + outs[1][0]
    for rank in range(4):
        m = re.search(rf"\[rank{rank}\]: rank {rank} sum ok algorithm (\S+) links (\S+)", text)
        assert m, text
        # inside each machine the HCCS mesh, between the machines RoCE (H-D_R for 2 servers)
        assert m.group(1) == "mesh+H-D_R"
        links = dict(kv.split("=") for kv in m.group(2).split(","))
        assert set(links) == {"HCCS", "RDMA"} and int(links["RDMA"]) > 0


@pytest.mark.parametrize(("script", "kind"), [("fsdp_npu.py", "fsdp"), ("fsdp1_npu.py", "fsdp1")])
def test_fsdp_on_npu_devices_equals_single_process_training(
    tmp_path: Path, script: str, kind: str
) -> None:
    """FSDP2 (fully_shard) and FSDP1 on npu:LOCAL_RANK: parameter storage freed and
    re-allocated each step, gradients reduce-scattered on FSDP's own streams."""
    path = script_copy(script, tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    run = ascend_lens("--nproc", "2", path, out, cwd=tmp_path)
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.lines(0) == [f"rank 0 {kind} trained {STEPS} steps"]
    assert run.lines(1) == [f"rank 1 {kind} trained {STEPS} steps"]
    ref = _reference()
    for rank in range(2):
        got = torch.load(out / f"rank{rank}.pt")
        assert set(got) == set(ref["params"])  # type: ignore[arg-type]
        for name, p in ref["params"].items():  # type: ignore[attr-defined]
            torch.testing.assert_close(got[name], p, rtol=1e-5, atol=1e-6)


def test_mp_spawn_launch_runs_ddp_on_each_ranks_device(tmp_path: Path, no_leftovers: None) -> None:
    """`torch.multiprocessing.spawn` instead of torchrun: the spawned ranks find the emulator's
    torch_npu, run on npu:RANK and average gradients over hccl."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    script = script_copy("spawn_ddp.py", tmp_path)
    r = ascend_lens(script, str(port), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert sorted(r.stdout.splitlines()) == [
        "rank 0: [3.0, 3.0, 3.0] on npu:0",
        "rank 1: [3.0, 3.0, 3.0] on npu:1",
    ]
