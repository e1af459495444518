"""An independent reader for the Chrome Trace Event Format, strict where viewers are.

The perfetto package's trace processor downloads a native binary at first use, which this
machine cannot fetch, so this checks what Perfetto's JSON importer and chrome://tracing
need: the event fields by phase (JSON Schema), properly nested slices per thread (Perfetto
drops the rest), and flow events that bind to a slice at both ends.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

import jsonschema

NUMBER_OR_STRING = {
    "anyOf": [{"type": "number"}, {"type": "string", "pattern": r"^-?\d+(\.\d+)?$"}]
}
ID = {"anyOf": [{"type": "integer"}, {"type": "string", "minLength": 1}]}
BASE = {"name": {"type": "string"}, "pid": {"type": "integer"}, "tid": {"type": "integer"}}

EVENT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["ph"],
    "properties": {"ph": {"enum": ["X", "B", "E", "i", "I", "s", "t", "f", "M", "C"]}},
    "allOf": [
        {
            "if": {"properties": {"ph": {"const": "X"}}},
            "then": {
                "required": ["name", "pid", "tid", "ts", "dur"],
                "properties": {
                    **BASE,
                    "ts": NUMBER_OR_STRING,
                    "dur": {"type": "number", "minimum": 0},
                    "args": {"type": "object"},
                },
            },
        },
        {
            "if": {"properties": {"ph": {"enum": ["s", "t", "f"]}}},
            "then": {
                "required": ["name", "cat", "id", "pid", "tid", "ts"],
                "properties": {**BASE, "ts": NUMBER_OR_STRING, "id": ID, "bp": {"const": "e"}},
            },
        },
        {
            "if": {"properties": {"ph": {"const": "M"}}},
            "then": {
                "required": ["name", "pid", "args"],
                "properties": {
                    **BASE,
                    "name": {
                        "enum": [
                            "process_name",
                            "process_labels",
                            "process_sort_index",
                            "thread_name",
                            "thread_sort_index",
                        ]
                    },
                    "args": {"type": "object", "minProperties": 1},
                },
            },
        },
    ],
}
TRACE_SCHEMA = {"type": "array", "items": EVENT_SCHEMA}


@dataclass
class Slice:
    name: str
    pid: int
    tid: int
    start: Decimal
    end: Decimal
    args: dict[str, Any]


@dataclass
class Flow:
    id: str
    source: Slice
    target: Slice


@dataclass
class Trace:
    process_names: dict[int, str]
    thread_names: dict[tuple[int, int], str]
    slices: list[Slice]
    flows: list[Flow]

    def track(self, pid: int, tid: int) -> list[Slice]:
        return [s for s in self.slices if (s.pid, s.tid) == (pid, tid)]


class TraceError(AssertionError):
    pass


def _enclosing(slices: list[Slice], ts: Decimal) -> Slice | None:
    # The innermost slice open at ts (flows bind to the deepest one). A slice is open on
    # [start, end): at the instant one ends and the next begins, the next one is open.
    # A zero-length slice is open at its own instant.
    hits = [s for s in slices if s.start <= ts < s.end or s.start == ts == s.end]
    return min(hits, key=lambda s: s.end - s.start) if hits else None


def load(path: str | Path) -> Trace:
    """Parse and validate a trace file; raise TraceError saying what a viewer would reject."""
    events = json.loads(Path(path).read_text("utf-8"))
    try:
        jsonschema.validate(events, TRACE_SCHEMA)
    except jsonschema.ValidationError as exc:
        raise TraceError(f"not a Chrome trace: {exc.message} at {list(exc.absolute_path)}") from exc

    procs: dict[int, str] = {}
    threads: dict[tuple[int, int], str] = {}
    slices: list[Slice] = []
    for e in events:
        if e["ph"] == "M" and e["name"] == "process_name":
            procs[e["pid"]] = e["args"]["name"]
        elif e["ph"] == "M" and e["name"] == "thread_name":
            threads[(e["pid"], e["tid"])] = e["args"]["name"]
        elif e["ph"] == "X":
            start = Decimal(str(e["ts"]))
            end = start + Decimal(str(e["dur"]))
            slices.append(Slice(e["name"], e["pid"], e["tid"], start, end, e.get("args", {})))

    by_track: dict[tuple[int, int], list[Slice]] = {}
    for s in slices:
        by_track.setdefault((s.pid, s.tid), []).append(s)
    for key, track in by_track.items():
        stack: list[Slice] = []
        for s in sorted(track, key=lambda s: (s.start, -(s.end - s.start))):
            while (
                stack
                and stack[-1].end <= s.start
                and not (stack[-1].start == stack[-1].end == s.start)
            ):
                stack.pop()
            if stack and s.end > stack[-1].end:
                raise TraceError(f"slices overlap without nesting on {key}: {stack[-1]} / {s}")
            stack.append(s)

    starts: dict[str, Slice] = {}
    flows: list[Flow] = []
    for e in events:
        if e["ph"] not in ("s", "f"):
            continue
        track = by_track.get((e["pid"], e["tid"]), [])
        bound = _enclosing(track, Decimal(str(e["ts"])))
        if bound is None:
            raise TraceError(f"flow {e['ph']} id={e['id']} binds to no slice on its thread")
        if e["ph"] == "s":
            if str(e["id"]) in starts:
                raise TraceError(f"flow id {e['id']} starts again before it ended")
            starts[str(e["id"])] = bound
        else:
            source = starts.pop(str(e["id"]), None)
            if source is None:
                raise TraceError(f"flow end id={e['id']} has no start before it")
            flows.append(Flow(str(e["id"]), source, bound))
    if starts:
        raise TraceError(f"flows never ended: {sorted(starts)}")
    return Trace(procs, threads, slices, flows)
