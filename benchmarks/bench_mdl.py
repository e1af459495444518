"""What acl.mdl.execute adds to a model run: against a bare onnxruntime InferenceSession.run.

Run by hand: `.venv/bin/python benchmarks/bench_mdl.py`. The ResNet-style test model
(tests/npu_runtime/model/resnet_onnx.py) is compiled with `ascend-lens atc` and executed
through pyACL exactly as acl_net.py does (datasets of device buffers, synchronous execute);
the baseline runs the original ONNX with a bare InferenceSession in the same process.
Variants run in interleaved rounds so drift on the shared machine hits all of them; the
verdict compares best rounds (noise only adds). Wall time: onnxruntime's worker threads
make process CPU time count their spinning. Results: benchmarks/bench_mdl.results.md.

Target: acl.mdl.execute <= 1.2 x the bare run + 50 µs per node.
"""

from __future__ import annotations

import os
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import onnxruntime as ort

import npu_runtime.acl as acl
from npu_runtime.model import compiler, om

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "npu_runtime" / "model"))
import resnet_onnx  # noqa: E402

OUT = Path(__file__).with_name("bench_mdl.results.md")
ROUNDS = 9
CASES = [  # (input size, batch, calls per round)
    (32, 1, 300),
    (112, 4, 30),
]
MODES = ("must_keep_origin_dtype", "force_fp16")


def best_us(fn: Callable[[], object], n: int) -> float:
    t0 = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - t0) / n * 1e6


def mdl_runner(path: Path, x: np.ndarray) -> Callable[[], object]:
    model_id, ret = acl.mdl.load_from_file(str(path))
    assert ret == 0, ret
    desc = acl.mdl.create_desc()
    assert acl.mdl.get_desc(desc, model_id) == 0
    ins, outs = acl.mdl.create_dataset(), acl.mdl.create_dataset()
    size = acl.mdl.get_input_size_by_index(desc, 0)
    ptr, _ = acl.rt.malloc(size, 0)
    data = x.tobytes()
    assert acl.rt.memcpy(ptr, size, acl.util.bytes_to_ptr(data), len(data), 1) == 0
    acl.mdl.add_dataset_buffer(ins, acl.create_data_buffer(ptr, size))
    osize = acl.mdl.get_output_size_by_index(desc, 0)
    optr, _ = acl.rt.malloc(osize, 0)
    acl.mdl.add_dataset_buffer(outs, acl.create_data_buffer(optr, osize))
    execute = acl.mdl.execute

    def run() -> object:
        ret = execute(model_id, ins, outs)
        assert ret == 0
        return ret

    return run


def main() -> None:
    load0 = os.getloadavg()[0]
    assert acl.init() == 0 and acl.rt.set_device(0) == 0
    rows: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        for size, batch, calls in CASES:
            onnx_path = resnet_onnx.build(Path(tmp) / f"net{size}.onnx", batch=batch, size=size)
            x = np.random.default_rng(0).standard_normal((batch, 3, size, size)).astype(np.float32)
            bare = ort.InferenceSession(str(onnx_path), providers=["CPUExecutionProvider"])
            variants: dict[str, Callable[[], object]] = {
                "bare InferenceSession.run (baseline)": lambda s=bare, x=x: s.run(
                    None, {"input": x}
                )
            }
            nodes = 0
            for mode in MODES:
                out = Path(tmp) / f"net{size}_{mode}"
                path = Path(
                    compiler.write(
                        compiler.Options(
                            model=str(onnx_path),
                            output=str(out),
                            soc_version="Ascend910B2",
                            precision_mode=mode,
                        )
                    )
                )
                nodes = len(om.loads(path.read_bytes()).header["nodes"])
                variants[f"acl.mdl.execute, {mode}"] = mdl_runner(path, x)
            times: dict[str, list[float]] = {k: [] for k in variants}
            for fn in variants.values():
                best_us(fn, max(calls // 10, 1))  # warm up
            for _ in range(ROUNDS):
                for name, fn in variants.items():
                    times[name].append(best_us(fn, calls))
            base = min(times["bare InferenceSession.run (baseline)"])
            target = 1.2 * base + 50 * nodes
            rows.append(
                f"\n## {batch} x 3 x {size} x {size}, {nodes} nodes ({calls} calls x {ROUNDS} rounds)\n\n"
                f"Target: {target:.0f} µs (1.2 x {base:.0f} µs + 50 µs x {nodes} nodes)\n\n"
                "| run | µs per run, median | µs per run, best round | ratio (best) | within target |\n"
                "|---|---:|---:|---:|---|\n"
            )
            for name, ts in times.items():
                b = min(ts)
                ok = "" if "baseline" in name else ("yes" if b <= target else "NO")
                rows.append(
                    f"| {name} | {statistics.median(ts):.1f} | {b:.1f} | {b / base:.3f} | {ok} |\n"
                )
    load1 = os.getloadavg()[0]
    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    text = (
        "# acl.mdl.execute overhead\n\n"
        f"Measured {stamp} on {platform.machine()} ({os.cpu_count()} cores, shared), CPython "
        f"{platform.python_version()}, numpy {np.__version__}, onnxruntime {ort.__version__} "
        f"(load average {load0:.2f} at the start, {load1:.2f} at the end), by "
        "`benchmarks/bench_mdl.py`. Wall time; interleaved rounds; the verdict uses best "
        "rounds. acl.mdl.execute includes reading the inputs from and writing the outputs to "
        "emulated device memory and one work record per node; force_fp16 also runs the "
        "fp16 rounding (a Cast pair where a float16 value is stored). The emulator's "
        "session does not let its worker threads spin after a run (they would compete with "
        "the script for the CPU); the bare baseline keeps onnxruntime's default, so on a "
        "loaded machine either can come out ahead on the large case.\n" + "".join(rows)
    )
    OUT.write_text(text)
    sys.stdout.write(text)
    acl.rt.reset_device(0)
    acl.finalize()


if __name__ == "__main__":
    main()
