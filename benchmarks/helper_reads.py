"""Who reads a helper's definition while the language server walks *other* chunks (perf35).

An edit that changes a helper's tree makes the incremental path (`npu_lsp.incremental`) walk
every chunk reading the helper's name again: any of their rules may have read the helper.
This measures what they read, on bench_lsp_engine's file (the helper `scale` every block
calls) or any file (`--file`, `--helper`): the helper's definition is wrapped in recording
lists (its `body`, `decorator_list` and parameter lists: every way into its tree but its
scalar fields) and the run's `ctx.lines` in a recording list, then every chunk is walked once
more with the same trees. A read is counted per walked chunk and per reader (the rules'
functions on the stack); `summary`/`resolve`/`module` are the file-level stages, redone on
every edit anyway.

What the numbers say (session 35): one chunk's walk reads the helper and the rest reuse what
it found (file-wide indexes in `ctx.cache`), so "which chunks read the helper" cannot be
told from reads: see bench_lsp_engine.md, perf35.

Run: PYTHONPATH=$PWD/server:$PWD/kernel:$PWD .venv/bin/python benchmarks/helper_reads.py [--lines N]
"""

from __future__ import annotations

import argparse
import ast
import bisect
import collections
import sys
import tempfile
import traceback
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_lsp_engine import make_source  # noqa: E402

#: (stage, chunk index walked or -1) -> (channel, reader) -> reads
READS: dict[tuple[str, int], collections.Counter[tuple[str, str]]] = collections.defaultdict(collections.Counter)
NOW: dict[str, Any] = {"stage": "summary", "chunk": -1, "starts": [], "home": -1, "span": (0, 0)}


def _reader() -> str:
    """The project functions on the stack (innermost last, at most four), the probe's own and
    the incremental driver's left out."""
    frames = traceback.extract_stack(limit=14)[:-3]
    names = [f"{Path(f.filename).stem}.{f.name}" for f in frames if "npu_lsp" in f.filename and "incremental" not in f.filename]
    return " < ".join(reversed(names[-4:])) or "(walker)"


def _note(channel: str) -> None:
    if NOW["stage"] == "walk" and NOW["chunk"] == NOW["home"]:
        return  # the helper's own chunk reading itself
    READS[(NOW["stage"], NOW["chunk"])][(channel, _reader())] += 1


class RecordingList(list[Any]):
    """A list field of the helper's definition: every read is noted."""

    __slots__ = ("field",)
    field: str

    def __iter__(self) -> Any:
        _note(f"ast:{self.field}")
        return super().__iter__()

    def __len__(self) -> int:
        _note(f"ast:{self.field}")
        return super().__len__()

    def __getitem__(self, i: Any) -> Any:
        _note(f"ast:{self.field}")
        return super().__getitem__(i)

    def __reversed__(self) -> Any:
        _note(f"ast:{self.field}")
        return super().__reversed__()


class RecordingLines(list[str]):
    """`ctx.lines`: a read of one of the helper's lines (or all of them) is noted."""

    def __getitem__(self, i: Any) -> Any:
        lo, hi = NOW["span"]
        if isinstance(i, slice):
            a, b = i.start or 0, len(self) if i.stop is None else i.stop
            if a < hi and b > lo:
                _note("text:lines")
        elif lo <= i < hi:
            _note("text:lines")
        return super().__getitem__(i)

    def __iter__(self) -> Any:
        _note("text:lines (all)")
        return super().__iter__()


def _record(fn: ast.FunctionDef) -> None:
    fields: list[tuple[ast.AST, str]] = [(fn, "body"), (fn, "decorator_list")]
    fields += [(fn.args, f) for f in ("posonlyargs", "args", "kwonlyargs", "defaults", "kw_defaults")]
    for obj, name in fields:
        wrapped = RecordingList(getattr(obj, name))
        wrapped.field = name
        setattr(obj, name, wrapped)


def _patch() -> None:
    from npu_lsp import engine, incremental

    walk, run, lap = incremental._TaggingWalker.walk, incremental._TaggingWalker.run, incremental.IncrementalDocument._lap

    def walking(self: Any, root: ast.AST, scope: Any, func: Any) -> None:
        line = getattr(root, "lineno", 1) - 1
        NOW["stage"], NOW["chunk"] = "walk", max(bisect.bisect_right(NOW["starts"], line) - 1, 0)
        walk(self, root, scope, func)

    def running(self: Any, r: Any, node: ast.AST) -> None:
        if NOW["stage"] != "walk":
            NOW["stage"] = "module"
        run(self, r, node)

    def lapped(self: Any, stage: str, since: float) -> float:
        NOW["stage"] = {"summary": "resolve", "resolve": "module"}.get(stage, NOW["stage"])
        if NOW["stage"] != "walk":
            NOW["chunk"] = -1
        return lap(self, stage, since)

    incremental._TaggingWalker.walk = walking  # type: ignore[method-assign]
    incremental._TaggingWalker.run = running  # type: ignore[method-assign]
    incremental.IncrementalDocument._lap = lapped  # type: ignore[method-assign]
    lines = engine.Context.lines

    def recording_lines(self: Any) -> list[str]:
        got = lines.fget(self)  # type: ignore[attr-defined]
        if NOW["stage"] != "off" and type(got) is not RecordingLines:
            self._lines = got = RecordingLines(got)
        return got

    engine.Context.lines = property(recording_lines)  # type: ignore[assignment, method-assign]


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--file", type=Path, help="a Python file (default: bench_lsp_engine's, --lines long)")
    p.add_argument("--helper", default="scale", help="the top-level function whose readers are measured")
    p.add_argument("--lines", type=int, default=5000)
    p.add_argument("--own", action="store_true", help="count the helper's own chunk's walk too")
    args = p.parse_args()
    from npu_lsp import engine, incremental
    from npu_lsp.config import Config
    from npu_lsp.registry import load_all

    load_all()
    _patch()
    text = args.file.read_text(encoding="utf-8") if args.file else make_source(args.lines)
    root = Path(tempfile.mkdtemp(prefix="helper-reads-"))
    path, config = str(root / "model.py"), Config()
    index = engine.WorkspaceIndex(str(root))
    doc = incremental.IncrementalDocument(path)
    NOW["stage"] = "off"
    cold = doc.check(text, config, index)
    assert doc._state is not None
    chunks = doc._state.chunks
    NOW["starts"] = [c.start for c in chunks]
    helper = [
        (i, st) for i, c in enumerate(chunks) for st in c.stmts if isinstance(st, ast.FunctionDef) and st.name == args.helper
    ]
    if not helper:
        print(f"no top-level function {args.helper!r}")
        return 1
    home, fn = helper[0]
    _record(fn)
    NOW["span"] = (chunks[home].start, chunks[home].start + chunks[home].nlines)
    NOW["home"] = -2 if args.own else home
    readers = [i for i, c in enumerate(chunks) if args.helper in c.reads and i != home]
    doc._global = None  # every chunk walked again, the same trees
    NOW["stage"], NOW["chunk"] = "summary", -1
    again = doc.check(text, config, index)
    assert again == cold, "the recording lists changed the result"
    print(f"{len(chunks)} chunks, {len(readers)} read the name {args.helper!r}; walked again: {doc.stats.walked}")
    walked = sorted({i for stage, i in READS if stage == "walk"})
    print(f"chunks whose walk read the helper's definition: {len(walked)} ({walked[:8]}{' ...' if len(walked) > 8 else ''})")
    # one row per reader: the channels it read through, the chunks whose walk it read in
    rows: dict[tuple[str, str], tuple[set[str], set[int]]] = {}
    for (stage, i), counts in READS.items():
        for channel, reader in counts:
            kinds, where = rows.setdefault((stage, reader), (set(), set()))
            kinds.add(channel.split(":")[0] + (" (all lines)" if "all" in channel else ""))
            if i >= 0:
                where.add(i)
    print("| stage | reader (innermost first) | read | chunks walked (reading the name?) |")
    print("|---|---|---|---|")
    order = {"summary": 0, "resolve": 1, "module": 2, "walk": 3}
    for (stage, reader), (kinds, where) in sorted(rows.items(), key=lambda kv: (order[kv[0][0]], sorted(kv[1][1]), kv[0][1])):
        at = ", ".join(f"{i} ({'yes' if i in readers else 'no'})" for i in sorted(where)) or "-"
        print(f"| {stage} | `{reader}` | {', '.join(sorted(kinds))} | {at} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
