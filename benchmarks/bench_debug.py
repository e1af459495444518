"""Wall time of a 10,000-op pyACL script under the debug adapter, plain debugpy and `ascend-lens run`.

All three run the same script in the same process tree shape, alternately (so machine load
hits each alike), and the medians are compared with `ascend-lens run` as the baseline:
- run: `ascend-lens run SCRIPT` (no debugger at all);
- debugpy: debugpy's own adapter (`python -m debugpy.adapter`) launching the script with
  the emulator's shim on PYTHONPATH, driven over DAP like an editor would;
- adapter: `ascend-lens debug-adapter` (relay + runtime bridge + per-line profile at exit);
- adapter, profile off: the same with `"profile": false`.
Each DAP session is timed from `initialize` to `terminated`, with no breakpoints set.
Results go to bench_debug.md beside this file. Run: .venv/bin/python benchmarks/bench_debug.py
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "npu_debug"))

import results  # noqa: E402
from dap_client import DapClient  # noqa: E402

from npu_runtime.launcher import SHIM_DIR  # noqa: E402

OPS = 10_000
SCRIPT = f"""
import numpy as np
import acl

ACL_FLOAT16, ACL_FORMAT_ND, H2D = 1, 2, 1
acl.init()
acl.rt.set_device(0)
stream, _ = acl.rt.create_stream()
x = np.ones((16, 16), np.float16)
data = x.tobytes()
ptrs = []
for _ in range(3):
    ptr, _ = acl.rt.malloc(x.nbytes, 0)
    acl.rt.memcpy(ptr, x.nbytes, acl.util.bytes_to_ptr(data), x.nbytes, H2D)
    ptrs.append(ptr)
bufs = [acl.create_data_buffer(p, x.nbytes) for p in ptrs]
descs = [acl.create_tensor_desc(ACL_FLOAT16, [16, 16], ACL_FORMAT_ND) for _ in range(3)]
attr = acl.op.create_attr()
for _ in range({OPS}):
    acl.op.execute_v2("Add", descs[:2], bufs[:2], descs[2:], bufs[2:], attr, stream)
assert acl.rt.synchronize_stream(stream) == 0
for ptr in ptrs:
    acl.rt.free(ptr)
print("done")
"""


def run_plain(script: Path) -> float:
    t0 = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "ascend_lens", "run", str(script)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    elapsed = time.perf_counter() - t0
    if done.returncode != 0:
        raise SystemExit(f"ascend-lens run failed ({done.returncode}):\n{done.stderr.decode()}")
    return elapsed


def run_dap(command: list[str] | None, launch: dict) -> float:
    t0 = time.perf_counter()
    client = DapClient(command=command)
    try:
        client.start(launch)
        exited = client.event("exited", timeout=600)
        if exited["exitCode"] != 0:
            err = "".join(
                m["body"]["output"]
                for m in client.timeline
                if m.get("event") == "output" and m["body"].get("category") == "stderr"
            )
            raise SystemExit(f"the script failed under {command or 'the adapter'}:\n{err}")
        client.event("terminated", timeout=60)
    finally:
        client.close()
    return time.perf_counter() - t0


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "ten_thousand_ops.py"
        script.write_text(SCRIPT)
        env = {"PYTHONPATH": os.pathsep.join([SHIM_DIR, str(REPO)])}
        configs: dict[str, Callable[[], float]] = {
            "ascend-lens run": lambda: run_plain(script),
            "plain debugpy": lambda: run_dap(
                [sys.executable, "-m", "debugpy.adapter"],
                {"program": str(script), "env": env, "console": "internalConsole"},
            ),
            "debug adapter": lambda: run_dap(
                None, {"program": str(script), "profile": str(Path(tmp) / "prof")}
            ),
            "debug adapter, profile off": lambda: run_dap(
                None, {"program": str(script), "profile": False}
            ),
        }
        names = list(configs)
        for name in names:  # warm caches once
            configs[name]()
        times: dict[str, list[float]] = {n: [] for n in names}
        for i in range(args.rounds):
            for name in names[i % len(names) :] + names[: i % len(names)]:
                times[name].append(configs[name]())
    base = statistics.median(times["ascend-lens run"])
    debugpy = statistics.median(times["plain debugpy"])
    ours = statistics.median(times["debug adapter"])
    off = statistics.median(times["debug adapter, profile off"])
    return results.write(
        __file__,
        [
            "# Debug adapter benchmark (benchmarks/bench_debug.py)",
            "",
            f"- date: {results.now()}",
            f"- machine: {results.machine()} (shared with other jobs while measured)",
            f"- script: {OPS:,} pyACL `execute_v2('Add')` calls on 16x16 float16, one sync; "
            f"{args.rounds} rounds, medians, rotating order",
            "- baseline: `ascend-lens run` in the same run; DAP sessions timed initialize -> terminated",
            "",
            *results.table(
                ["configuration", "wall time (s)", "vs ascend-lens run"],
                [
                    [
                        name,
                        f"{statistics.median(times[name]):.2f}",
                        f"{statistics.median(times[name]) / base:.2f}x",
                    ]
                    for name in names
                ],
            ),
            "",
            f"The adapter costs {ours / debugpy:.2f}x plain debugpy on the same script; "
            f"{off / debugpy:.2f}x with the profile off. The difference "
            f"({ours - off:+.2f} s) is the profiler: collecting {OPS:,} work records and writing "
            "op_summary, trace.json and lines.json at exit (the exit write runs untraced).",
        ],
    )


if __name__ == "__main__":
    sys.exit(main())
