"""torch_npu on the emulated NPU against plain CPU torch, in the same run.

- per aten op overhead on tiny tensors (4 x 4 float32): the same op on CPU tensors is the
  baseline; target: under 25 µs added per op;
- a ResNet-18 training step (torchvision's architecture, batch 8 of 3 x 112 x 112, SGD):
  npu against CPU; target: at most 1.3x;
- estimate mode (`ascend-lens run --estimate`): wall time and peak host memory of one
  training step of the 1.3B and 7B GPT configs (target: under a minute and 2 GB each).
Process CPU time for the in-process parts, interleaved rounds (machine load hits both
alike); results go to bench_torch.md beside this file.
Run: .venv/bin/python benchmarks/bench_torch.py
"""

from __future__ import annotations

import datetime
import os
import platform
import runpy
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SCRIPTS = REPO / "tests" / "npu_runtime" / "torch_frontend" / "scripts"

from npu_runtime.launcher import SHIM_DIR  # noqa: E402

sys.path.insert(0, SHIM_DIR)
import torch  # noqa: E402
import torch_npu  # noqa: E402,F401


def per_call_us(fn: Callable[[], object], n: int) -> float:
    start = time.process_time()
    for _ in range(n):
        fn()
    return (time.process_time() - start) / n * 1e6


def op_rows(rounds: int = 7, n: int = 2000) -> list[tuple[str, float, float, float, float]]:
    a, b = torch.randn(4, 4), torch.randn(4, 4)
    an, bn = a.npu(), b.npu()
    ops: list[tuple[str, Callable[[], object], Callable[[], object]]] = [
        ("add (a + b)", lambda: a + b, lambda: an + bn),
        ("mul (a * b)", lambda: a * b, lambda: an * bn),
        ("relu", lambda: a.relu(), lambda: an.relu()),
        ("mm (a @ b)", lambda: a @ b, lambda: an @ bn),
        ("sum", lambda: a.sum(), lambda: an.sum()),
        ("add_ (in place)", lambda: a.add_(b), lambda: an.add_(bn)),
        ("t (a view)", lambda: a.t(), lambda: an.t()),
    ]
    rows = []
    for name, cpu, npu in ops:
        cpu(), npu()
        c_runs, n_runs = [], []
        for _ in range(rounds):
            c_runs.append(per_call_us(cpu, n))
            n_runs.append(per_call_us(npu, n))
        rows.append(
            (name, statistics.median(c_runs), min(c_runs), statistics.median(n_runs), min(n_runs))
        )
    return rows


def resnet_rows(steps: int = 5) -> tuple[float, float, float, float]:
    ns = runpy.run_path(str(SCRIPTS / "resnet18.py"), run_name="resnet18_bench")
    torch.manual_seed(0)
    cpu_model = ns["resnet18"]()
    npu_model = ns["resnet18"]().npu()
    x, y = torch.randn(8, 3, 112, 112), torch.randint(0, 1000, (8,))
    xn, yn = x.npu(), y.npu()

    def step(model: torch.nn.Module, xb: torch.Tensor, yb: torch.Tensor) -> Callable[[], float]:
        opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)

        def run() -> float:
            start = time.process_time()
            loss = torch.nn.functional.cross_entropy(model(xb), yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
            loss.item()
            return time.process_time() - start

        return run

    cpu_step, npu_step = step(cpu_model, x, y), step(npu_model, xn, yn)
    cpu_step(), npu_step()  # warm-up
    c: list[float] = []
    n: list[float] = []
    for _ in range(steps):
        c.append(cpu_step())
        n.append(npu_step())
    return statistics.median(c), min(c), statistics.median(n), min(n)


_MEASURE = """
import resource, subprocess, sys, time
start = time.perf_counter()
rc = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
print(time.perf_counter() - start, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, rc)
"""


def estimate_run(config: str) -> tuple[float, float, int]:
    """(wall seconds, peak RSS MiB, exit status) of `ascend-lens run --estimate` on the GPT.

    Measured from a small wrapper process, so the peak RSS is the run's own, not inherited
    from this (large) process through fork."""
    cmd = [sys.executable, "-m", "ascend_lens", "run", "--no-summary", "--estimate",
           str(SCRIPTS / "gpt_estimate.py"), config]  # fmt: skip
    res = subprocess.run(
        [sys.executable, "-c", _MEASURE, *cmd], cwd=REPO, capture_output=True, text=True
    )
    wall, rss_kib, rc = res.stdout.split()
    return float(wall), int(rss_kib) / 1024, int(rc)


def main() -> int:
    load_before = os.getloadavg()
    when = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    ops = op_rows()
    res = resnet_rows()
    est = {c: estimate_run(c) for c in ("1.3b", "7b")}
    load_after = os.getloadavg()
    machine = f"{platform.machine()} ({os.cpu_count()} cores, shared), CPython {platform.python_version()}, torch {torch.__version__}"
    out = [
        "# torch_npu on the emulated NPU vs plain CPU torch",
        "",
        f"Measured {when} on {machine} (load average {load_before[0]:.2f} at the start, "
        f"{load_after[0]:.2f} at the end), by `benchmarks/bench_torch.py`. Process CPU time, "
        "interleaved rounds; on a shared machine noise only adds time, so `added` compares best rounds.",
        "",
        "## Per aten op on tiny tensors (4 x 4 float32; target: under 25 µs added)",
        "",
        "| op | CPU torch µs, median | CPU best | npu µs, median | npu best | added µs (best) |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for name, cm, cb, nm, nb in ops:
        out.append(f"| {name} | {cm:.2f} | {cb:.2f} | {nm:.2f} | {nb:.2f} | +{nb - cb:.2f} |")
    cm, cb, nm, nb = res
    out += [
        "",
        "## ResNet-18 training step (batch 8, 3 x 112 x 112, SGD; target: at most 1.3x)",
        "",
        "| run | ms, median | ms, best |",
        "|---|---:|---:|",
        f"| CPU torch (baseline) | {cm * 1e3:.1f} | {cb * 1e3:.1f} |",
        f"| npu (emulated) | {nm * 1e3:.1f} | {nb * 1e3:.1f} |",
        f"| ratio | {nm / cm:.3f} | {nb / cb:.3f} |",
        "",
        "## Estimate mode: one GPT training step, shapes only (target: under 60 s and 2 GB each)",
        "",
        "| config | wall s | peak host RSS MiB | exit status |",
        "|---|---:|---:|---:|",
    ]
    for cfg, (wall, rss, rc) in est.items():
        out.append(f"| {cfg} | {wall:.1f} | {rss:.0f} | {rc} |")
    out.append("")
    out.append("7b exits 1 on purpose: it runs out of a 910B2's HBM in the optimizer step.")
    text = "\n".join(out) + "\n"
    (Path(__file__).with_name("bench_torch.md")).write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
