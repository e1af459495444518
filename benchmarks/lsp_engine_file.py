"""bench_lsp_engine's 5,015-line file through the language server's paths (perf33).

Two measurements:
- `--server`: `python -m ascend_lens server` over stdio, driven by bench_lsp_latency's client
  (`debounceMs: 0`): open -> first publishDiagnostics, then one-character edits (a space typed
  into `self.dense2(h)` of a middle block's `construct`, or with `--where helper` into the
  shared helper `scale` every block calls, then deleted) -> publishDiagnostics.
  Wall clock: on a loaded machine it measures the load.
- default: the worker's incremental analysis in this process, in CPU time, with its stages
  (`incremental.Stats.ms`, timed by `time.process_time` here) and how many chunks each edit walks.

Run: PYTHONPATH=$PWD/server:$PWD/kernel:$PWD .venv/bin/python benchmarks/lsp_engine_file.py [--server] [--edits N]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
import types
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_lsp_engine import make_source  # noqa: E402


def _edit_site(text: str, where: str = "block") -> tuple[int, int]:
    """(0-based line, column) of the edit: `block`, inside `self.dense2(h)`, after `h`, in
    the middle of the file; `helper`, inside the shared helper `scale` (`return v * k`,
    after `v`), which every block calls."""
    lines = text.split("\n")
    if where == "helper":
        i = lines.index("    return v * k")
        return i, lines[i].index("v") + 1
    i = len(lines) // 2
    while not lines[i].lstrip().startswith("y = self.dense2(h)"):
        i += 1
    return i, lines[i].index("(h)") + 2


def in_process(edits: int, where: str, char: str) -> None:
    from npu_lsp import incremental, transfer, worker
    from npu_lsp.registry import load_all

    load_all()
    incremental.time = types.SimpleNamespace(perf_counter=time.process_time)  # type: ignore[assignment]
    root = Path(tempfile.mkdtemp(prefix="lsp-engine-file-"))
    (root / "pyproject.toml").write_text('[project]\nname = "bench"\n', encoding="utf-8")
    path = str(root / "bench.py")
    uri = Path(path).as_uri()
    text = make_source(5000)
    mirror = transfer.Mirror()

    def run(version: int, t: str) -> float:
        t0 = time.process_time()
        mirror.apply(worker.analyse_for_server(worker.Job(uri, version, path, t, root=str(root)), mirror.have))
        return (time.process_time() - t0) * 1000

    first = run(1, text)
    doc = worker._document(path)
    stages = {k: round(v, 1) for k, v in doc.stats.ms.items()}
    print(f"first analysis {first:.1f} ms CPU; stages {stages}")
    line, col = _edit_site(text, where)
    lines = text.split("\n")
    orig = lines[line]
    got = []
    for k in range(edits):
        lines[line] = orig[:col] + char + orig[col:] if k % 2 == 0 else orig
        ms = run(k + 2, "\n".join(lines))
        got.append(ms)
        stages = {s: round(v, 1) for s, v in doc.stats.ms.items()}
        print(f"edit {k}: {ms:.1f} ms CPU; walked {doc.stats.walked}, reused {doc.stats.reused}; stages {stages}")
    print(f"median re-check {statistics.median(got):.1f} ms CPU")


async def through_server(edits: int, where: str, char: str) -> None:
    from bench_lsp_latency import TimedClient
    from lsprotocol import types as lsp
    from pytest_lsp import client_capabilities

    timed = TimedClient()
    client = timed.client
    await client.start_io(sys.executable, "-m", "ascend_lens", "server")
    root = Path(tempfile.mkdtemp(prefix="lsp-engine-file-"))
    (root / "pyproject.toml").write_text('[project]\nname = "bench"\n', encoding="utf-8")
    await client.initialize_session(
        lsp.InitializeParams(
            capabilities=client_capabilities("visual-studio-code"),
            root_uri=root.as_uri(),
            initialization_options={"debounceMs": 0},
        )
    )
    text = make_source(5000)
    uri = (root / "bench.py").as_uri()
    start = time.perf_counter()
    client.text_document_did_open(
        lsp.DidOpenTextDocumentParams(text_document=lsp.TextDocumentItem(uri=uri, language_id="python", version=1, text=text))
    )
    await timed.published(uri, 1)
    first = time.perf_counter() - start
    line, col = _edit_site(text, where)
    got = []
    for k in range(edits):
        end = col if k % 2 == 0 else col + 1
        change = lsp.TextDocumentContentChangePartial(
            range=lsp.Range(lsp.Position(line, col), lsp.Position(line, end)), text=char if k % 2 == 0 else ""
        )
        sent = time.perf_counter()
        client.text_document_did_change(
            lsp.DidChangeTextDocumentParams(
                text_document=lsp.VersionedTextDocumentIdentifier(uri=uri, version=k + 2), content_changes=[change]
            )
        )
        await timed.published(uri, k + 2)
        got.append(time.perf_counter() - sent)
    await client.shutdown_session()
    await client.stop()
    print(
        f"open -> first diagnostics {first * 1000:.1f} ms; edit -> publish median {statistics.median(got) * 1000:.1f} ms, "
        f"min {min(got) * 1000:.1f}, max {max(got) * 1000:.1f} ({edits} edits, wall clock)"
    )


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--server", action="store_true")
    p.add_argument("--edits", type=int, default=6)
    p.add_argument("--where", choices=("block", "helper"), default="block", help="edit inside a block or the shared helper")
    p.add_argument("--char", default=" ", help="the character typed (then deleted): a space leaves the tree as it was")
    args = p.parse_args()
    if args.server:
        asyncio.run(through_server(args.edits, args.where, args.char))
    else:
        in_process(args.edits, args.where, args.char)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
