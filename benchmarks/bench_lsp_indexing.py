"""Diagnostics of an opened file while the workspace index is built around a big module.

The workspace holds one generated module just under the default max-file-size (1,896,000
bytes) and the server (`ascend-lens server` over stdio, a raw JSON-RPC client) indexes it in
its indexer process. While the index is being built, small files are opened one after another
and the time from didOpen to their publishDiagnostics is measured. The baseline, measured in
the same run and the same process, is indexing the big module (`WorkspaceIndex.update`:
parse and summary): what an opened file's diagnostics waited when the engine worker did the
indexing itself (a time slice cannot interrupt one parse).

Results go to bench_lsp_indexing.md beside this file.
Run: .venv/bin/python benchmarks/bench_lsp_indexing.py [--rounds 3]
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests" / "bad_inputs"))
from bad_input_rpc import RawRpc, diagnostics, open_doc, start  # noqa: E402

from npu_lsp.engine import WorkspaceIndex  # noqa: E402

BIG = "x = 1\n" * 316_000
SMALL = "import torch\nx = torch.ones(2).cuda()\n"


def ready(rpc: RawRpc) -> bool:
    return any(
        m.get("method") == "window/logMessage" and "index ready" in m["params"]["message"]
        for m in rpc.seen
    )


def one_round(root: Path) -> tuple[float, list[float], float, float]:
    """(baseline s, latencies during indexing s, first diagnostics s, index ready s)."""
    big = root / "generated_tables.py"
    big.write_text(BIG)
    started = time.perf_counter()
    WorkspaceIndex(root).update(str(big), BIG)
    baseline = time.perf_counter() - started
    began = time.monotonic()
    rpc = start(root)
    try:
        open_doc(rpc, root / "first.py", SMALL)
        diagnostics(rpc, root / "first.py", 120)
        first = time.monotonic() - began
        latencies = []
        while not ready(rpc):
            path = root / f"open{len(latencies)}.py"
            t = time.monotonic()
            open_doc(rpc, path, SMALL)
            diagnostics(rpc, path, 120)
            latencies.append(time.monotonic() - t)
            time.sleep(0.1)
        done = time.monotonic() - began
    finally:
        rpc.proc.kill()
        rpc.proc.wait()
    return baseline, latencies, first, done


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    rows = []
    for _ in range(args.rounds):
        with tempfile.TemporaryDirectory() as tmp:
            rows.append(one_round(Path(tmp)))
    ms = 1000.0
    lines = [
        "# Opened-file diagnostics while a 1.9 MB module is indexed",
        "",
        f"- date: {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M UTC}",
        f"- machine: {platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}, load average {os.getloadavg()[0]:.2f} at the end",
        "- baseline (same run): indexing the module in-process (parse + summary), what an "
        "opened file waited when the worker indexed",
        "",
        "| round | baseline | opened-file latency median / max (n) | first diagnostics "
        "(server start) | index ready |",
        "|---|---|---|---|---|",
    ]
    for i, (base, lat, first, done) in enumerate(rows, 1):
        lines.append(
            f"| {i} | {base * ms:.0f} ms | {statistics.median(lat) * ms:.1f} / "
            f"{max(lat) * ms:.1f} ms ({len(lat)}) | {first * ms:.0f} ms | {done * ms:.0f} ms |"
        )
    text = "\n".join(lines) + "\n"
    (HERE / "bench_lsp_indexing.md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
