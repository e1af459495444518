"""didChange -> publishDiagnostics latency of `ascend-lens server`, through a real LSP client.

The server runs as a subprocess over stdio (`python -m ascend_lens server`), driven by
pytest-lsp's pygls-based client exactly as the end-to-end tests drive it, with
`debounceMs: 0` so the number is the analysis round trip rather than the debounce delay.
For each file kind and size the client opens the file, then makes one-line edits inside a
function body in the middle of the file (a range change, as an editor sends a keystroke)
and times the arrival of the publishDiagnostics carrying that version. Two kinds of file:
torch training code dense with migration findings (a stress case for conversion and
transport: every device string's fix carries an edit per device string of the file), and
MindSpore model code as model zoos write it (Cells built of Cells in graph mode, a finding
every few blocks). The baseline, measured alternately in the same run and the same
(benchmark) process, is `ast.parse` of the same text: the least any Python linter must do
per keystroke. A second measurement sends hover requests while the largest file is being
analysed, to show that analysis does not block other requests. A third splits the server's
work for one edit into stages (the worker's incremental analysis and its parts, pickling
across the process boundary, conversion to LSP objects, JSON).

Results go to bench_lsp_latency.md beside this file: the new run replaces the block between
the `latest run` markers, and the block it replaces moves to the top of the history below
(hand-written notes there are kept).
Run: .venv/bin/python benchmarks/bench_lsp_latency.py [--rounds 7]
"""

from __future__ import annotations

import argparse
import ast
import asyncio
import datetime
import os
import platform
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lsprotocol import types as lsp
from pygls.protocol import default_converter
from pytest_lsp import LanguageClient, client_capabilities
from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, register_lsp_features

HERE = Path(__file__).resolve().parent
SIZES = (200, 2_000, 5_000, 20_000)
TARGET_LINES = 5_000  # the target: under 50 ms, and under one ast.parse
LATEST = "<!-- latest run: written by bench_lsp_latency.py -->"
LATEST_END = "<!-- end of latest run -->"
HISTORY = "## History and notes"


def make_source(lines: int) -> str:
    """Torch training code dense with migration findings (4 in every 9 lines): a stress case
    for conversion and transport as well as for the rules."""
    head = "import torch\nimport torch.distributed as dist\n\n"
    block = (
        "def step_{i}(model, batch):\n"
        "    batch = batch.to('cuda')\n"
        "    with torch.cuda.amp.autocast():\n"
        "        loss = model(batch).sum()\n"
        "    loss.backward()\n"
        "    if torch.cuda.is_available():\n"
        "        torch.cuda.synchronize()\n"
        "    return loss.item() + {i}\n"
        "\n"
    )
    per_block = block.count("\n")
    body = "".join(block.format(i=i) for i in range(max(1, (lines - 3) // per_block)))
    return head + body


def make_mindspore_source(lines: int) -> str:
    """MindSpore model code as model zoos write it: Cells built of Cells in graph mode,
    `construct` calling module helpers that read module constants, a finding (`del`, which
    graph mode rejects) in every fourth block."""
    head = (
        "import numpy as np\n"
        "import mindspore as ms\n"
        "from mindspore import nn, ops, Tensor\n\n"
        "ms.set_context(mode=ms.GRAPH_MODE)\n\n"
        "HIDDEN = 64\n"
        "SCALE = 0.5\n\n\n"
    )
    block = (
        "def scale_{i}(x, factor):\n"
        "    return x * factor + SCALE\n"
        "\n\n"
        "class Block{i}(nn.Cell):\n"
        '    """Block {i}: dense, norm, activation."""\n'
        "\n"
        "    def __init__(self, channels=HIDDEN):\n"
        "        super().__init__()\n"
        "        self.dense = nn.Dense(channels, channels)\n"
        "        self.norm = nn.LayerNorm((channels,))\n"
        "        self.act = nn.ReLU()\n"
        "        self.factor = {i}\n"
        "\n"
        "    def construct(self, x):\n"
        "        y = self.dense(x)\n"
        "        y = self.norm(y)\n"
        "        y = scale_{i}(y, self.factor)\n"
        "{finding}"
        "        return self.act(y) + x\n"
        "\n\n"
    )
    findings = ("        tmp = y\n        del tmp\n", "", "", "")
    per_block = block.count("\n") + 1
    n = max(1, (lines - head.count("\n")) // per_block)
    return head + "".join(block.format(i=i, finding=findings[i % 4]) for i in range(n))


KINDS = {"torch, dense findings": make_source, "MindSpore model": make_mindspore_source}


def edit_line(text: str) -> int:
    """0-based line edited by the benchmark: a statement inside a function body in the
    middle of the file (`return loss.item() + i` in torch code, `y = self.norm(y)` in
    MindSpore code)."""
    lines = text.split("\n")
    i = len(lines) // 2
    while i < len(lines) and not lines[i].lstrip().startswith(("return loss", "y = self.norm")):
        i += 1
    return i


def one_line_edit(text: str, line: int, r: int) -> tuple[str, lsp.Range, str]:
    """`text` with the end of `line` changed (a keystroke's worth: a number typed), and the
    LSP range change that makes that edit."""
    lines = text.split("\n")
    old = lines[line]
    stem = old.split("  #")[0]
    new = f"{stem}  # {r}"
    lines[line] = new
    rng = lsp.Range(lsp.Position(line, 0), lsp.Position(line, len(old)))
    return "\n".join(lines), rng, new


@dataclass
class Row:
    kind: str
    lines: int
    latency: float  # median seconds, didChange sent -> publishDiagnostics received
    worst: float
    parse: float  # median seconds of ast.parse on the same texts


class TimedClient:
    """A pytest-lsp client that timestamps each publishDiagnostics by (uri, version)."""

    def __init__(self) -> None:
        self.arrivals: dict[tuple[str, int | None], float] = {}
        self.arrived = asyncio.Event()
        client = LanguageClient(converter_factory=default_converter)
        features = dict(DEFAULT_CLIENT_FEATURES)

        # pygls tags handler functions with attributes, so hand it a plain function.
        def on_publish(_client: LanguageClient, params: lsp.PublishDiagnosticsParams) -> None:
            self.arrivals[(params.uri, params.version)] = time.perf_counter()
            self.arrived.set()

        features[lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS] = on_publish

        def on_register(_client: LanguageClient, params: lsp.RegistrationParams) -> None:
            pass  # accept the file-watcher registration, as VS Code does

        features[lsp.CLIENT_REGISTER_CAPABILITY] = on_register
        register_lsp_features(client, features)
        self.client = client

    async def published(self, uri: str, version: int, timeout: float = 300) -> float:
        async def wait() -> float:
            while (uri, version) not in self.arrivals:
                self.arrived.clear()
                await self.arrived.wait()
            return self.arrivals[(uri, version)]

        return await asyncio.wait_for(wait(), timeout)


def parse_time(text: str) -> float:
    start = time.perf_counter()
    ast.parse(text)
    return time.perf_counter() - start


async def measure(rounds: int) -> tuple[list[Row], dict[str, float]]:
    timed = TimedClient()
    client = timed.client
    await client.start_io(sys.executable, "-m", "ascend_lens", "server")
    root = Path(tempfile.mkdtemp(prefix="bench-lsp-"))
    (root / "pyproject.toml").write_text('[project]\nname = "bench"\n', encoding="utf-8")
    await client.initialize_session(
        lsp.InitializeParams(
            capabilities=client_capabilities("visual-studio-code"),
            root_uri=root.as_uri(),
            initialization_options={"debounceMs": 0},
        )
    )
    rows: list[Row] = []
    for kind, make in KINDS.items():
        for size in SIZES:
            text = make(size)
            name = "torch" if make is make_source else "ms"
            uri = (root / f"{name}_{size}.py").as_uri()
            client.text_document_did_open(
                lsp.DidOpenTextDocumentParams(
                    text_document=lsp.TextDocumentItem(
                        uri=uri, language_id="python", version=1, text=text
                    )
                )
            )
            await timed.published(uri, 1)
            line = edit_line(text)
            latencies: list[float] = []
            parses: list[float] = []
            for r in range(rounds):
                version = r + 2
                text, rng, new = one_line_edit(text, line, r)
                parses.append(parse_time(text))
                sent = time.perf_counter()
                client.text_document_did_change(
                    lsp.DidChangeTextDocumentParams(
                        text_document=lsp.VersionedTextDocumentIdentifier(uri=uri, version=version),
                        content_changes=[lsp.TextDocumentContentChangePartial(range=rng, text=new)],
                    )
                )
                latencies.append(await timed.published(uri, version) - sent)
            rows.append(
                Row(
                    kind=kind,
                    lines=text.count("\n"),
                    latency=statistics.median(latencies),
                    worst=max(latencies),
                    parse=statistics.median(parses),
                )
            )
            client.text_document_did_close(
                lsp.DidCloseTextDocumentParams(text_document=lsp.TextDocumentIdentifier(uri=uri))
            )
    # Hover round trips while the largest file is being re-analysed.
    big = (root / f"torch_{SIZES[-1]}.py").as_uri()
    small = (root / "small.py").as_uri()
    client.text_document_did_open(
        lsp.DidOpenTextDocumentParams(
            text_document=lsp.TextDocumentItem(
                uri=small, language_id="python", version=1, text="import acl\nacl.rt.malloc(8, 0)\n"
            )
        )
    )
    big_text = make_source(SIZES[-1]) + "y = 1\n"
    client.text_document_did_open(
        lsp.DidOpenTextDocumentParams(
            text_document=lsp.TextDocumentItem(
                uri=big, language_id="python", version=999, text=make_source(SIZES[-1])
            )
        )
    )
    await timed.published(big, 999)
    client.text_document_did_change(
        lsp.DidChangeTextDocumentParams(
            text_document=lsp.VersionedTextDocumentIdentifier(uri=big, version=1000),
            content_changes=[lsp.TextDocumentContentChangeWholeDocument(text=big_text)],
        )
    )
    hovers: list[float] = []
    while (big, 1000) not in timed.arrivals and len(hovers) < 50:
        start = time.perf_counter()
        await client.text_document_hover_async(
            lsp.HoverParams(
                text_document=lsp.TextDocumentIdentifier(uri=small), position=lsp.Position(1, 8)
            )
        )
        hovers.append(time.perf_counter() - start)
    await timed.published(big, 1000)
    await client.shutdown_session()
    await client.stop()
    hover_stats = {
        "count": float(len(hovers)),
        "median": statistics.median(hovers),
        "max": max(hovers),
    }
    return rows, hover_stats


def stages(make: Any, size: int, rounds: int) -> dict[str, float]:
    """Median ms of each server-side stage for one edit, measured in this process: the
    worker's analysis (incremental: its parse, summary, graph-scope resolution, rules run
    once per file, walk of the chunks that changed, post-processing; and encoding what
    changed of the result for the server, transfer.py), pickling that across the process
    boundary and back, the server's decoding of it and conversion to LSP objects (only new
    diagnostics are converted, publish_cache.py) and JSON serialisation of the
    notification's params (only new diagnostics are encoded); and `ast.parse` of the same
    text."""
    import json
    import pickle

    from pygls.workspace.position_codec import PositionCodec

    from npu_lsp import convert, worker
    from npu_lsp.registry import load_all

    load_all()
    root = Path(tempfile.mkdtemp(prefix="bench-lsp-stages-"))
    path = str(root / "train.py")
    uri = Path(path).as_uri()
    text = make(size)
    # the server's side of the transfer (transfer.py) and its per-document caches
    # (publish_cache.py), when the server being measured has them
    transfer = _optional("npu_lsp.transfer")
    publish_cache = _optional("npu_lsp.publish_cache")
    sends_deltas = transfer is not None and hasattr(worker, "analyse_for_server")
    mirror = transfer.Mirror() if sends_deltas else None
    cache = publish_cache.DocumentCache() if sends_deltas and publish_cache else None

    def run(job: Any) -> Any:
        if mirror is None:
            return worker.analyse(job)
        return worker.analyse_for_server(job, mirror.have)

    def receive(result: Any, lines: list[str]) -> list[lsp.Diagnostic]:
        if mirror is not None and cache is not None:
            located = mirror.apply(result)[uri]
            return cache.convert(uri, located, lines, codec, True)
        return [convert.to_diagnostic(i.diagnostic, lines, codec, uri=uri) for i in result[uri]]

    def encode(diags: list[lsp.Diagnostic], version: int) -> None:
        if cache is not None:
            cache.params_json(uri, diags, version, conv.unstructure)
            return
        params = lsp.PublishDiagnosticsParams(uri=uri, diagnostics=diags, version=version)
        json.dumps(conv.unstructure(params))

    codec = PositionCodec(lsp.PositionEncodingKind.Utf16)
    conv = default_converter()
    first = pickle.loads(pickle.dumps(run(worker.Job(uri, 1, path, text, root=str(root)))))
    encode(receive(first, text.splitlines(keepends=True)), 1)  # index, warm caches
    # the incremental analysis' own timings (absent when measuring an older server)
    document = getattr(worker, "_document", None)
    doc = document(path) if document is not None else None
    keys = ("parse", "analyse", "pickle", "convert", "json")
    parts = ("parse", "summary", "resolve", "module", "walk", "post")
    times: dict[str, list[float]] = {k: [] for k in keys + tuple(f"w.{p}" for p in parts)}
    line = edit_line(text)
    for r in range(rounds):
        text, _, _ = one_line_edit(text, line, r)
        times["parse"].append(parse_time(text) * 1000)
        t0 = time.perf_counter()
        result = run(worker.Job(uri, r + 2, path, text, root=str(root)))
        t1 = time.perf_counter()
        result = pickle.loads(pickle.dumps(result))
        t2 = time.perf_counter()
        diags = receive(result, text.splitlines(keepends=True))
        t3 = time.perf_counter()
        encode(diags, r + 2)
        t4 = time.perf_counter()
        for key, dt in zip(keys[1:], (t1 - t0, t2 - t1, t3 - t2, t4 - t3), strict=True):
            times[key].append(dt * 1000)
        for p in parts:
            times[f"w.{p}"].append(doc.stats.ms.get(p, 0.0) if doc is not None else 0.0)
    return {k: statistics.median(v) for k, v in times.items()}


def _optional(module: str) -> Any:
    """`module` if the server being measured has it (older servers do not), else None."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError:
        return None


def report(
    rows: list[Row],
    hovers: dict[str, float],
    rounds: int,
    parts: dict[tuple[str, int], dict[str, float]],
    load: str,
    load_after: str,
) -> str:
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    cores = os.cpu_count()
    lines = [
        LATEST,
        f"### Run {now}",
        "",
        f"On {platform.node()} ({platform.machine()}, {cores} cores shared, "
        f"Python {platform.python_version()}). Load average before the run: {load}; after: "
        f"{load_after}.",
        f"Command: `.venv/bin/python benchmarks/bench_lsp_latency.py --rounds {rounds}`",
        "",
        "didChange (a one-line edit inside a function body in the middle of the file, sent as a",
        "range change) -> publishDiagnostics through a real LSP client over stdio, `debounceMs: 0`;",
        "baseline: `ast.parse` of the same text, measured alternately in the same run.",
        f"Target (issue 15): under 50 ms at {TARGET_LINES:,} lines, and under one `ast.parse`.",
        "",
        "| file | ast.parse (median) | didChange -> publish (median) | worst | latency / parse |",
        "|---|---|---|---|---|",
    ]
    for row in rows:
        lines.append(
            f"| {row.kind}, {row.lines:,} lines | {row.parse * 1000:.1f} ms | "
            f"{row.latency * 1000:.1f} ms | {row.worst * 1000:.1f} ms | "
            f"**{row.latency / row.parse:.2f}x** |"
        )
    lines += [
        "",
        f"Hover while the {SIZES[-1]:,}-line torch file is re-analysed: {int(hovers['count'])} "
        f"requests, median {hovers['median'] * 1000:.1f} ms, worst {hovers['max'] * 1000:.1f} ms "
        "(the engine runs in a worker process, so the event loop keeps answering).",
        "",
        "Where the time goes (server-side stages for one edit, median ms, measured in the",
        "benchmark process; the rest of the latency is the process hop, stdio framing and the",
        "client decoding the notification). Worker: the incremental analysis and the encoding of",
        "what changed of its result (transfer.py); its parts",
        "(parse of the changed chunks, the file's summary, graph-scope resolution, rules run once",
        "per file, the walk of the chunks that changed, noqa and sorting):",
        "",
        "| file | ast.parse | worker | parse | summary | resolve | module rules | walk | post "
        "| pickle round trip | to LSP objects | JSON |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for (kind, size), p in parts.items():
        lines.append(
            f"| {kind}, {size:,} lines | {p['parse']:.1f} | {p['analyse']:.1f} | "
            + " | ".join(
                f"{p['w.' + k]:.1f}"
                for k in ("parse", "summary", "resolve", "module", "walk", "post")
            )
            + f" | {p['pickle']:.1f} | {p['convert']:.1f} | {p['json']:.1f} |"
        )
    lines += ["", LATEST_END]
    return "\n".join(lines)


def merge(previous: str, latest: str) -> str:
    """The results file with `latest` as the latest run; the run it replaces goes to the top
    of the history, and everything else (hand-written notes) is kept."""
    title = "# bench_lsp_latency"
    body = previous.strip()
    if body.startswith(title):
        body = body[len(title) :].strip()
    old_latest = ""
    if LATEST in body and LATEST_END in body:
        head, rest = body.split(LATEST, 1)
        old_latest, tail = rest.split(LATEST_END, 1)
        body = (head + tail).strip()
    elif body and HISTORY not in body:
        old_latest, body = body, ""  # a file written before the markers: all of it is history
    if body.startswith(HISTORY):
        body = body[len(HISTORY) :].strip()
    history = "\n\n".join(part.strip() for part in (old_latest, body) if part.strip())
    return f"{title}\n\n{latest}\n\n{HISTORY}\n\n{history}\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    rows, hovers = asyncio.run(measure(args.rounds))
    parts = {
        (kind, size): stages(make, size, args.rounds)
        for kind, make in KINDS.items()
        for size in SIZES[:3]
    }
    load_after = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    latest = report(rows, hovers, args.rounds, parts, load, load_after)
    out = HERE / "bench_lsp_latency.md"
    previous = out.read_text(encoding="utf-8") if out.exists() else ""
    out.write_text(merge(previous, latest), encoding="utf-8")
    sys.stdout.write(latest + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
