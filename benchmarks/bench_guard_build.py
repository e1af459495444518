"""The npu device's C++ guard: what the first `import torch_npu` pays to compile it, and
what every later one pays to load it from the cache.

Run by hand: `.venv/bin/python benchmarks/bench_guard_build.py`. Each case is the wall time
of `ascend-lens run --no-summary` on a two-line script (`import torch_npu`, one backward on
npu:0) in a fresh process: `cold` with an empty cache (compiles), `cached` with the cache the
cold run filled, and the baseline `python guard` where the compiler is missing (CXX points
nowhere: the build fails at once and PyTorch's Python guard remains). Median of REPS runs
(cold: each run with its own empty cache). Results: benchmarks/bench_guard_build.md.
"""

from __future__ import annotations

import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

REPS = 3
OUT = Path(__file__).with_name("bench_guard_build.md")
SCRIPT = (
    "import torch, torch_npu\n"
    "x = torch.ones(4, device='npu:0', requires_grad=True)\n"
    "(x * 2).sum().backward()\n"
)


def _run(script: Path, cache: Path, cxx: str | None = None) -> float:
    env = {**os.environ, "XDG_CACHE_HOME": str(cache)}
    if cxx is not None:
        env["CXX"] = cxx
    t = time.perf_counter()
    r = subprocess.run(
        [sys.executable, "-m", "ascend_lens", "run", "--no-summary", str(script)],
        env=env,
        capture_output=True,
        text=True,
    )
    elapsed = time.perf_counter() - t
    if r.returncode != 0:
        raise SystemExit(r.stderr)
    return elapsed


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        script = root / "s.py"
        script.write_text(SCRIPT)
        cold, cached, python = [], [], []
        shared = root / "shared"
        for i in range(REPS):
            cold.append(_run(script, root / f"cold{i}"))
            if i == 0:
                _run(script, shared)
            cached.append(_run(script, shared))
            python.append(_run(script, root / f"none{i}", cxx=str(root / "no-such-c++")))
    load = os.getloadavg()[0]
    rows = [
        ("cold (compiles the guard)", cold),
        ("cached (loads the built library)", cached),
        ("baseline: no compiler, Python guard", python),
    ]
    lines = [
        "# npu device guard: build and load time",
        "",
        f"{datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC, {platform.machine()} "
        f"{os.cpu_count()} cores, load average {load:.1f}, {platform.python_version()}, "
        f"median of {REPS} (`ascend-lens run` of import torch_npu + one backward, whole process)",
        "",
        "| case | wall time (s) |",
        "|---|---|",
        *[f"| {name} | {statistics.median(v):.2f} |" for name, v in rows],
        "",
        f"Compile cost = cold - cached = {statistics.median(cold) - statistics.median(cached):.2f} s; "
        f"load cost = cached - baseline = {statistics.median(cached) - statistics.median(python):.2f} s.",
        "",
    ]
    OUT.write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
