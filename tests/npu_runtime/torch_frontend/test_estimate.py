"""`ascend-lens run --estimate`: GPT-1.3B fits a 910B2 and its peak is worked out by hand;
GPT-7B runs out of memory at the line a real 910B2 would; values cannot be read back."""

from __future__ import annotations

import json

from torch_support import SCRIPTS, run, run_with_peak

SCRIPT = SCRIPTS / "gpt_estimate.py"
GIB = 1 << 30


def _block(nbytes: int) -> int:
    """torch_npu's caching allocator: 512-byte blocks up to 1 MiB, 2 MiB pages above."""
    if nbytes <= 1 << 20:
        return max(512, -(-nbytes // 512) * 512)
    return -(-nbytes // (2 << 20)) * (2 << 20)


def _line_of(text: str) -> int:
    return next(i for i, line in enumerate(SCRIPT.read_text().splitlines(), 1) if line == text)


def test_gpt_1_3b_peak_matches_the_hand_count() -> None:
    r, peak_kib = run_with_peak("--no-summary", "--estimate", SCRIPT, "1.3b")
    assert r.returncode == 0, r.stderr
    # the whole run stays far below the 2 GB of host memory the model would never fit in
    assert peak_kib < 2 * 1024 * 1024
    res = json.loads(r.stdout)
    n = sum(res["numels"])
    assert 1.3e9 < n < 1.4e9
    params = sum(_block(k * 4) for k in res["numels"])  # fp32 master weights
    # after the step and zero_grad(set_to_none): weights, exp_avg and exp_avg_sq, plus what the
    # script still holds (bf16 logits [2048, 50304], the int64 token ids and the loss)
    held = _block(2048 * 50304 * 2) + _block(2048 * 8) + _block(4)
    assert res["after_step"] == 3 * params + held
    # peak in AdamW's foreach step: weights + grads + two moments + the sqrt(exp_avg_sq) temporary
    assert res["peak"] == 5 * params + held
    report = r.stderr.splitlines()
    assert report[0] == "ascend-lens estimate (Ascend910B2, shapes only):"
    assert report[1].startswith(f"  npu:0: peak allocated {res['peak'] / GIB:.2f} GiB, ")
    assert report[1].endswith(" ms") and "of 60.96 GiB; simulated device time" in report[1]
    # the peak is the sqrt(exp_avg_sq) temporary of the optimizer step
    assert report[2] == f"  npu:0: peak reached at {SCRIPT}:{_line_of('opt.step()')}"
    assert len(report) == 3


def test_gpt_7b_runs_out_of_memory_in_the_optimizer_step() -> None:
    r, peak_kib = run_with_peak("--no-summary", "--estimate", SCRIPT, "7b")
    assert r.returncode == 1
    assert peak_kib < 2 * 1024 * 1024
    err = r.stderr.splitlines()
    oom = next(line for line in err if line.startswith("torch.OutOfMemoryError: "))
    assert oom.startswith("torch.OutOfMemoryError: NPU out of memory. Tried to allocate ")
    assert "(NPU 0; 60.96 GiB total capacity; " in oom
    # 6.9B fp32 weights and grads take 51 GiB; Adam's first moments cannot all follow
    step = _line_of("opt.step()")
    assert f'File "{SCRIPT}", line {step}, in <module>' in r.stderr
    assert err[-1].startswith(
        f"  out of memory at {SCRIPT}:{step}: NPU out of memory. Tried to allocate "
    )


def test_reading_a_value_back_names_the_line() -> None:
    script = SCRIPTS / "estimate_reads_value.py"
    r = run("--no-summary", "--estimate", script)
    assert r.returncode == 1
    assert "positive" not in r.stdout
    assert f'File "{script}", line 8, in <module>' in r.stderr
    assert any(
        line
        == (
            f"RuntimeError: estimate mode: reading a value back (.item(), print, a branch) at {script}:8 "
            "needs tensor values, and `ascend-lens run --estimate` tracks only shapes and dtypes; "
            "run without --estimate to compute values"
        )
        for line in r.stderr.splitlines()
    ), r.stderr
