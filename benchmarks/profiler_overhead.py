"""What profiling adds to each launch: a tiny op with and without the profiler listening.

Run by hand: `.venv/bin/python benchmarks/profiler_overhead.py`. The baseline (no
listener) is measured in the same run, interleaved with the profiled rounds so machine
noise hits both; results go to benchmarks/profiler_overhead.md. Target: < 15 µs added
per tiny op (default), stack capture reported separately.
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

import results

from npu_runtime.core import launch
from npu_runtime.core.runtime import get_runtime
from npu_runtime.profiler import profile

N = 20_000
ROUNDS = 7
COST = launch.Cost(1.0, "vector", "AI_VECTOR_CORE")


def tiny_ops(n: int) -> float:
    """Seconds for n launches of a no-compute op on the default stream (per-op µs later)."""
    submit = launch.submit
    t0 = time.perf_counter()
    for _ in range(n):
        submit(0, name="Add", op_type="Add", cost=COST)
    return time.perf_counter() - t0


def one(setup: Callable[[], Any] | None) -> float:
    """Per-op µs for one round of N launches, inside `setup()`'s context when given."""
    if setup is None:
        return tiny_ops(N) / N * 1e6
    with setup():
        return tiny_ops(N) / N * 1e6


def main() -> int:
    rt = get_runtime()
    rt.reset()
    rt.init()
    rt.set_device(0)
    tiny_ops(2_000)  # warm up imports and caches
    variants: dict[str, Callable[[], Any] | None] = {
        "no profiler (baseline)": None,
        "profile()": lambda: profile(None),
        "profile(stack=True)": lambda: profile(None, stack=True),
    }
    # Interleaved rounds: each round measures every variant back to back, so drift on this
    # shared machine hits all of them; the added cost is the median of per-round deltas.
    per_round: dict[str, list[float]] = {k: [] for k in variants}
    for _ in range(ROUNDS):
        for name, setup in variants.items():
            per_round[name].append(one(setup))
    base = per_round["no profiler (baseline)"]
    rows = []
    added: dict[str, float] = {}
    for name, values in per_round.items():
        added[name] = statistics.median(v - b for v, b in zip(values, base, strict=True))
        ratio = statistics.median(v / b for v, b in zip(values, base, strict=True))
        rows.append(
            [name, f"{statistics.median(values):.2f}", f"{added[name]:+.2f}", f"{ratio:.2f}"]
        )
    got = added["profile()"]
    return results.write(
        __file__,
        [
            "# Profiler listener overhead",
            "",
            f"{results.measured_on()}: {N} launches of a no-compute op per round, {ROUNDS} "
            "interleaved rounds. Per-op µs are medians; added µs is the median of per-round "
            "differences against the baseline of the same round.",
            "",
            *results.table(["run", "µs per op", "added µs per op", "ratio to baseline"], rows),
            "",
            f"Target: < 15 µs added per tiny op by profile(). Result: {got:+.2f} µs "
            f"({'met' if got < 15 else 'NOT met'}).",
        ],
    )


if __name__ == "__main__":
    sys.exit(main())
