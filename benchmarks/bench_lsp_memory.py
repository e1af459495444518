"""Resident memory of `ascend-lens server` under a stream of edits: bounded, or growing?

The server runs as a subprocess over stdio, driven by raw JSON-RPC: one document opened,
then batches of 500 whole-document `didChange` notifications, each batch closed by a hover
request whose answer shows the server has handled everything before it. The server's RSS
is read after each batch. The baseline, measured in the same run, is the same server with
pygls's own handler bookkeeping (our protocol's `_execute_handler` override switched back),
which kept the future of every notification forever.

Results go to bench_lsp_memory.md beside this file.
Run: .venv/bin/python benchmarks/bench_lsp_memory.py [--batches 8]
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import subprocess
import sys
import tempfile
from pathlib import Path

import psutil

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests" / "bad_inputs"))
from bad_input_rpc import RawRpc  # noqa: E402

BATCH = 500
SERVER = "from npu_lsp.server import main; main([])"
STOCK = (
    "from pygls.protocol import LanguageServerProtocol\n"
    "from npu_lsp import protocol\n"
    "protocol.AnsweringProtocol._execute_handler = LanguageServerProtocol._execute_handler\n"
    + SERVER
)
TEXT = "import torch\nx = torch.ones(2).cuda()\n"


def measure(code: str, root: Path, batches: int) -> list[float]:
    """RSS in MB after opening, then after each batch of edits."""
    proc = subprocess.Popen(
        [sys.executable, "-c", code],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    rpc = RawRpc(proc)
    try:
        rpc.send(
            {
                "jsonrpc": "2.0",
                "id": 0,
                "method": "initialize",
                "params": {"processId": None, "rootUri": root.as_uri(), "capabilities": {}},
            }
        )
        rpc.response(0, 60)
        rpc.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
        uri = (root / "a.py").as_uri()
        doc = {"uri": uri, "languageId": "python", "version": 0, "text": TEXT}
        rpc.send(
            {"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": doc}}
        )
        server = psutil.Process(proc.pid)
        sizes = []
        version = 0
        for batch in range(batches + 1):
            for _ in range(BATCH if batch else 0):
                version += 1
                rpc.send(
                    {
                        "jsonrpc": "2.0",
                        "method": "textDocument/didChange",
                        "params": {
                            "textDocument": {"uri": uri, "version": version},
                            "contentChanges": [{"text": f"{TEXT}y = {version}\n"}],
                        },
                    }
                )
            rpc.send(
                {
                    "jsonrpc": "2.0",
                    "id": f"b{batch}",
                    "method": "textDocument/hover",
                    "params": {
                        "textDocument": {"uri": uri},
                        "position": {"line": 1, "character": 0},
                    },
                }
            )
            rpc.response(f"b{batch}", 120)
            rpc.seen.clear()
            sizes.append(server.memory_info().rss / 1e6)
        return sizes
    finally:
        proc.kill()
        proc.wait()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--batches", type=int, default=8)
    args = parser.parse_args()
    load = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "a.py").write_text(TEXT)
        ours = measure(SERVER, root, args.batches)
        stock = measure(STOCK, root, args.batches)
    edits = BATCH * args.batches

    def growth(sizes: list[float]) -> float:
        # From the first batch on: the open and the first analyses are warm-up.
        return (sizes[-1] - sizes[1]) / (len(sizes) - 2) if len(sizes) > 2 else 0.0

    rows = "\n".join(
        f"| {BATCH * i:,} | {o:.2f} | {s:.2f} |"
        for i, (o, s) in enumerate(zip(ours, stock, strict=True))
    )
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    report = f"""# bench_lsp_memory

Run {stamp} on {platform.node()} ({platform.machine()}, {os.cpu_count()} cores shared, Python {platform.python_version()}). Load average before the run: {load[0]:.1f}, {load[1]:.1f}, {load[2]:.1f}.
Command: `.venv/bin/python benchmarks/bench_lsp_memory.py --batches {args.batches}`

Server RSS (MB) after each batch of {BATCH} whole-document `didChange` notifications
({edits:,} in all), each batch closed by a hover round trip. Baseline, same run: the same
server with pygls's own `_execute_handler`, which keeps the future of every notification.

| edits | ascend-lens server | baseline (pygls bookkeeping) |
|---|---|---|
{rows}

Growth per {BATCH} edits after the first batch: **{growth(ours):.3f} MB** (baseline {growth(stock):.3f} MB).
"""
    (HERE / "bench_lsp_memory.md").write_text(report)
    print(report)


if __name__ == "__main__":
    main()
