"""Real models on the npu device under `ascend-lens run`: ResNet-18 against the CPU, a small
GPT with fused ops and AMP, and a CUDA script run unmodified through transfer_to_npu."""

from __future__ import annotations

import json
from pathlib import Path

from torch_support import SCRIPTS, run


def _ops_at(prof: Path, script: Path) -> dict[int, set[str]]:
    """Op types per line of `script`, from the Chrome trace's "Source" of every task."""
    doc = json.loads((prof / "trace.json").read_text())
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    out: dict[int, set[str]] = {}
    for e in events:
        src = e.get("args", {}).get("Source", "") if e.get("ph") == "X" else ""
        path, _, line = src.rpartition(":")
        if path == str(script):
            out.setdefault(int(line), set()).add(e["args"]["OP Type"])
    return out


def test_resnet18_step_matches_cpu(tmp_path: Path) -> None:
    out = tmp_path / "prof"
    script = SCRIPTS / "resnet18.py"
    r = run("--no-summary", "--profile", out, "--profile-top", "0", script)
    assert r.returncode == 0, r.stderr
    res = json.loads(r.stdout.strip().splitlines()[-1])
    assert res["devices"] == ["npu:0"]
    assert abs(res["loss_npu"] - res["loss_cpu"]) <= 1e-5 * abs(res["loss_cpu"])
    assert res["max_diff"] <= 1e-5
    doc = json.loads((out / "lines.json").read_text())
    all_ops = {o["op_type"] for o in doc["top_ops"]}
    assert {"Conv2D", "BatchNorm", "MaxPoolWithArgmaxV1", "MatMulV2"} <= all_ops
    # the block's convolutions are charged to the lines of its forward, in the user's file
    ops = _ops_at(out, script)
    conv_lines = [n for n, o in ops.items() if "Conv2D" in o]
    assert conv_lines and all(
        script.read_text().splitlines()[n - 1].strip().startswith(("out", "x =", "identity"))
        for n in conv_lines
    )


def test_small_gpt_trains_with_amp(tmp_path: Path) -> None:
    out = tmp_path / "prof"
    script = SCRIPTS / "gpt_amp.py"
    r = run("--no-summary", "--profile", out, "--profile-top", "0", script)
    assert r.returncode == 0, r.stderr
    res = json.loads(r.stdout.strip().splitlines()[-1])
    losses = res["losses"]
    assert res["logits_dtype"] == "torch.float16"
    assert all(b < a for a, b in zip(losses, losses[1:], strict=False)), losses
    assert losses[-1] < losses[0] - 0.5
    ops = _ops_at(out, script)
    src = script.read_text().splitlines()
    fa = [n for n, o in ops.items() if "FlashAttentionScore" in o]
    assert [src[n - 1].strip() for n in fa] == ["attn = torch_npu.npu_fusion_attention("]
    assert any("RmsNorm" in o for o in ops.values())
    assert any("SwiGlu" in o for o in ops.values())
    # the backward of the fused ops is charged to the backward() line
    back = next(n for n, line in enumerate(src, 1) if "scaler.scale(loss).backward()" in line)
    assert {"FlashAttentionScoreGrad", "RmsNormGrad", "SwiGluGrad"} <= ops[back]


def test_cuda_script_runs_unmodified_with_transfer_to_npu() -> None:
    r = run("--no-summary", SCRIPTS / "cuda_train.py")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    losses = [float(ln.rsplit(" ", 1)[1]) for ln in lines if ln.startswith("step ")]
    assert len(losses) == 5 and losses[-1] < losses[0]
    assert lines[-1] == "npu:0 True Ascend910B2 True"
