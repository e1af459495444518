"""How long writing a profile takes, against running the work it describes.

Run by hand: `.venv/bin/python benchmarks/profiler_export.py`. Launches N tiny ops under
`profile(None)` (the baseline: what the run itself cost), then times each exporter on those
records in the same process. Results go to benchmarks/profiler_export.md.
"""

from __future__ import annotations

import sys
import tempfile
import time

import results

from npu_runtime.core import launch
from npu_runtime.core.runtime import get_runtime
from npu_runtime.profiler import profile
from npu_runtime.profiler.writer import write_profile
from npu_runtime.records import TensorInfo

N = 50_000
COST = launch.Cost(3.0, "cube", "AI_CORE", 8, {"cube": 2.0, "memory": 1.0}, 1 << 16, 1 << 20)
IN = (TensorInfo((64, 128), "FLOAT16"), TensorInfo((128, 256), "FLOAT16"))
OUT = (TensorInfo((64, 256), "FLOAT16"),)


def main() -> int:
    rt = get_runtime()
    rt.reset()
    rt.init()
    rt.set_device(0)
    with profile(None) as prof:
        t0 = time.perf_counter()
        for i in range(N):
            launch.submit(
                i % 2 and 0, name="MatMul", op_type="MatMul", cost=COST, inputs=IN, outputs=OUT
            )
            if i % 1000 == 999:
                prof.step()
        run_s = time.perf_counter() - t0
    data = prof.data()
    rows = [("launching the ops (baseline)", run_s)]
    for name in ("lines", "op_summary", "trace", "ascend_pt"):
        with tempfile.TemporaryDirectory() as d:
            t0 = time.perf_counter()
            write_profile(data, d, (name,))
            rows.append((f"exporter `{name}`", time.perf_counter() - t0))
    return results.write(
        __file__,
        [
            "# Profile export time",
            "",
            f"{results.measured_on()}: {N} MatMul launches in 50 steps, then each exporter on "
            "those records.",
            "",
            *results.table(
                ["step", "seconds", "µs per record", "ratio to launching"],
                [
                    [name, f"{secs:.2f}", f"{secs / N * 1e6:.1f}", f"{secs / run_s:.2f}"]
                    for name, secs in rows
                ],
            ),
        ],
    )


if __name__ == "__main__":
    sys.exit(main())
