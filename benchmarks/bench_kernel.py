"""Kernel start-to-ready and first-execute time: ascend-npu vs plain ipykernel, same run.

Both kernelspecs are written into a temp prefix with the same interpreter, and started
alternately (so machine load hits both alike) through jupyter_client's KernelManager.
Target: ascend-npu at most 1.3x plain ipykernel. Results go to bench_kernel.md beside
this file. Run: .venv/bin/python benchmarks/bench_kernel.py [--rounds N]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import results

from npu_kernel.kernelspec import DeviceOptions, write_kernel_spec

TARGET = 1.3
FIRST_CELL = "x = 1 + 1"


def _plain_spec(root: Path) -> None:
    path = root / "plain-python"
    path.mkdir(parents=True)
    argv = [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    spec = {"argv": argv, "display_name": "plain", "language": "python"}
    (path / "kernel.json").write_text(json.dumps(spec))


def measure(name: str) -> tuple[float, float]:
    """(seconds to kernel_info reply, seconds for the first execute round trip)."""
    from jupyter_client.manager import KernelManager

    km = KernelManager(kernel_name=name)
    t0 = time.perf_counter()
    km.start_kernel()
    kc = km.client()
    kc.start_channels()
    try:
        kc.wait_for_ready(timeout=120)
        ready = time.perf_counter() - t0
        t1 = time.perf_counter()
        reply = kc.execute(FIRST_CELL, reply=True, timeout=120)
        first = time.perf_counter() - t1
        assert reply["content"]["status"] == "ok"
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
    return ready, first


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        kernels = Path(tmp) / "share" / "jupyter" / "kernels"
        write_kernel_spec(kernels / "ascend-npu", DeviceOptions())
        _plain_spec(kernels)
        os.environ["JUPYTER_PATH"] = str(Path(tmp) / "share" / "jupyter")
        os.environ["JUPYTER_RUNTIME_DIR"] = str(Path(tmp) / "runtime")
        os.environ["IPYTHONDIR"] = str(Path(tmp) / "ipython")  # a fresh, private history DB
        times: dict[str, list[tuple[float, float]]] = {"plain-python": [], "ascend-npu": []}
        measure("plain-python")  # warm the OS file cache for both
        measure("ascend-npu")
        for i in range(args.rounds):
            order = ["plain-python", "ascend-npu"] if i % 2 == 0 else ["ascend-npu", "plain-python"]
            for name in order:
                times[name].append(measure(name))

    def med(name: str, k: int) -> float:
        return statistics.median(t[k] for t in times[name])

    def spread(name: str, k: int) -> str:
        q1, _, q3 = statistics.quantiles([t[k] for t in times[name]], n=4)
        return f"{q1:.3f}–{q3:.3f}"

    rows = []
    spreads = []
    for k, label in ((0, "start to ready"), (1, "first execute")):
        base, ours = med("plain-python", k), med("ascend-npu", k)
        rows.append((label, base, ours, ours / base))
        spreads.append([label, spread("plain-python", k), spread("ascend-npu", k)])
    total_base = med("plain-python", 0) + med("plain-python", 1)
    total_ours = med("ascend-npu", 0) + med("ascend-npu", 1)
    rows.append(("ready + first execute", total_base, total_ours, total_ours / total_base))

    verdict = "meets" if all(r <= TARGET for *_, r in rows) else "MISSES"
    return results.write(
        __file__,
        [
            "# Kernel start benchmark (benchmarks/bench_kernel.py)",
            "",
            f"- date: {results.now()}",
            f"- machine: {results.machine()} (shared with other jobs while measured)",
            f"- rounds: {args.rounds}, medians, alternating order; baseline: plain ipykernel, same interpreter",
            f"- target: ascend-npu / plain <= {TARGET}",
            "",
            *results.table(
                ["measure", "plain ipykernel (s)", "ascend-npu (s)", "ratio"],
                [[label, f"{b:.3f}", f"{o:.3f}", f"{r:.2f}x"] for label, b, o, r in rows],
            ),
            "",
            "Interquartile ranges (s), to judge the noise of a shared machine:",
            "",
            *results.table(["measure", "plain ipykernel", "ascend-npu"], spreads),
            "",
            f"Result: {verdict} the {TARGET}x target.",
        ],
    )


if __name__ == "__main__":
    sys.exit(main())
