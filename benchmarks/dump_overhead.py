"""What a precision dump adds to each op: a small Add with and without `npu_runtime.dump()`.

Run by hand: `.venv/bin/python benchmarks/dump_overhead.py`. The baseline (no dump) is
measured in the same run, interleaved with the dumped rounds so machine noise hits all of
them; results go to benchmarks/dump_overhead.md. Target: statistics mode < 3x the plain op
(it copies and summarises every input and output); tensor mode is reported, not targeted
(it writes files).
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import results

import npu_runtime
from npu_runtime import Tensor
from npu_runtime.core.runtime import get_runtime
from npu_runtime.tensor import add

N = 1_000
ROUNDS = 5
SHAPE = (64, 256)


def ops(n: int, a: Tensor, b: Tensor) -> float:
    t0 = time.perf_counter()
    for _ in range(n):
        add(a, b)
    return time.perf_counter() - t0


def one(setup: Callable[[str], Any] | None, a: Tensor, b: Tensor) -> float:
    """Per-op µs for one round of N ops, inside `setup(tmpdir)`'s context when given."""
    if setup is None:
        return ops(N, a, b) / N * 1e6
    with tempfile.TemporaryDirectory() as tmp, setup(tmp):
        return ops(N, a, b) / N * 1e6


def main() -> int:
    rt = get_runtime()
    rt.reset()
    rng = np.random.default_rng(0)
    a = Tensor(rng.standard_normal(SHAPE), dtype="float16")
    b = Tensor(rng.standard_normal(SHAPE), dtype="float16")
    ops(200, a, b)  # warm up imports and plan caches
    variants: dict[str, Callable[[str], Any] | None] = {
        "no dump (baseline)": None,
        "profile() (for scale)": lambda d: npu_runtime.profile(None),
        "dump statistics": lambda d: npu_runtime.dump(d, "statistics"),
        "dump tensor": lambda d: npu_runtime.dump(d, "tensor"),
    }
    per_round: dict[str, list[float]] = {k: [] for k in variants}
    for _ in range(ROUNDS):
        for name, setup in variants.items():
            per_round[name].append(one(setup, a, b))
    base = per_round["no dump (baseline)"]
    ratios = {
        name: statistics.median(v / b for v, b in zip(values, base, strict=True))
        for name, values in per_round.items()
    }
    got = ratios["dump statistics"]
    return results.write(
        __file__,
        [
            "# Precision dump overhead",
            "",
            f"{results.measured_on()}: {N} float16 Adds of {SHAPE[0]}x{SHAPE[1]} through the "
            f"Tensor API per round, {ROUNDS} interleaved rounds. Per-op µs are medians; the ratio "
            "is the median of per-round ratios to the baseline of the same round. Dumped files "
            "are written to a temporary directory and the time includes writing dump.json at "
            "the end of the round.",
            "",
            *results.table(
                ["run", "µs per op", "ratio to baseline"],
                [
                    [name, f"{statistics.median(values):.1f}", f"{ratios[name]:.2f}"]
                    for name, values in per_round.items()
                ],
            ),
            "",
            f"Target: dump statistics < 3x the plain op. Result: {got:.2f}x "
            f"({'met' if got < 3 else 'NOT met'}).",
        ],
    )


if __name__ == "__main__":
    sys.exit(main())
