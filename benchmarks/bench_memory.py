"""Per-call cost of the emulator's malloc/free and memcpy against plain numpy, same run.

    .venv/bin/python -W ignore benchmarks/bench_memory.py [--repeat N]

Baselines: `np.empty(size)` for malloc/free, `np.copyto` of the same bytes for memcpy.
Writes the table to benchmarks/bench_memory.results.md with the machine and date.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "npu_runtime" / "_shim"))
import acl  # noqa: E402  (the emulator's pyACL module, through the shim)
import results  # noqa: E402

H2D, D2H = 1, 2
OUT = Path(__file__).with_suffix(".results.md").with_name("bench_memory.results.md")


def per_call(fn: Callable[[], object], calls: int) -> float:
    """Seconds per call over one timed loop."""
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - t0) / calls


def interleaved(
    emu: Callable[[], object], base: Callable[[], object], calls: int, rounds: int
) -> tuple[float, float, float]:
    """Median emulator and baseline s/call, and the median of per-round ratios.

    Rounds alternate emulator and baseline so that load from other jobs on a shared
    machine hits both alike; the per-round ratio is what the results file records.
    """
    e_times, b_times, ratios = [], [], []
    for _ in range(rounds):
        e = per_call(emu, calls)
        b = per_call(base, calls)
        e_times.append(e)
        b_times.append(b)
        ratios.append(e / b)
    return statistics.median(e_times), statistics.median(b_times), statistics.median(ratios)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=7, help="interleaved rounds (default 7)")
    args = ap.parse_args()
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    acl.init()
    acl.rt.set_device(0)
    rows: list[tuple[str, float, str, float, float]] = []

    def pair(
        name: str, emu: Callable[[], object], base: Callable[[], object], base_name: str, calls: int
    ) -> None:
        e, b, ratio = interleaved(emu, base, calls, args.repeat)
        rows.append((name, e, base_name, b, ratio))

    def malloc_free() -> None:
        p, _ = acl.rt.malloc(1024, 0)
        acl.rt.free(p)

    pair(
        "malloc+free 1 KiB", malloc_free, lambda: np.empty(1024, np.uint8), "np.empty 1 KiB", 20000
    )

    for label, size, calls in (("1 KiB", 1024, 20000), ("64 MiB", 64 << 20, 20)):
        host = np.ones(size, np.uint8)
        back = np.empty(size, np.uint8)
        hp, bp = acl.util.numpy_to_ptr(host), acl.util.numpy_to_ptr(back)
        dev, ret = acl.rt.malloc(size, 0)
        assert ret == 0
        scratch = np.empty(size, np.uint8)
        pair(
            f"memcpy H2D {label}",
            partial(acl.rt.memcpy, dev, size, hp, size, H2D),
            partial(np.copyto, scratch, host),
            f"np.copyto {label}",
            calls,
        )
        pair(
            f"memcpy D2H {label}",
            partial(acl.rt.memcpy, bp, size, dev, size, D2H),
            partial(np.copyto, back, scratch),
            f"np.copyto {label}",
            calls,
        )
        acl.rt.free(dev)

    results.write(
        __file__,
        [
            "# bench_memory results",
            "",
            f"- date: {results.now()}",
            f"- machine: {results.machine()}",
            f"- python {platform.python_version()}, numpy {np.__version__}; {args.repeat} interleaved "
            "rounds, medians; ratio = median of per-round emulator/baseline",
            f"- load average at start: {load}",
            "",
            *results.table(
                ["call", "emulator µs/call", "baseline", "baseline µs/call", "ratio"],
                [
                    [name, f"{e * 1e6:.2f}", base_name, f"{b * 1e6:.2f}", f"{ratio:.2f}x"]
                    for name, e, base_name, b, ratio in rows
                ],
                text=(0, 2),
            ),
        ],
        name=OUT.name,
    )
    acl.rt.reset_device(0)
    acl.finalize()
    return 0


if __name__ == "__main__":
    sys.exit(main())
