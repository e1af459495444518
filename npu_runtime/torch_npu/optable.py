"""aten op -> (Ascend op type, cost kind) from npu_runtime/data/aten_ops.json, the one table."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from importlib import resources


@dataclass(frozen=True, slots=True)
class OpEntry:
    op_type: str  # what a real torch_npu profile shows ("MatMul", "Add", ...)
    kind: str  # elementwise, reduce, move, matmul, conv, attention, view
    per_element: float  # vector ops per output element (elementwise/reduce)


@cache
def table() -> dict[str, OpEntry]:
    path = resources.files("npu_runtime.data").joinpath("aten_ops.json")
    with path.open(encoding="utf-8") as f:
        raw = json.load(f)["ops"]
    return {name: OpEntry(v[0], v[1], float(v[2])) for name, v in raw.items()}


def lookup(packet: str) -> OpEntry | None:
    """The entry for an overload packet name ("add_", "mm", "_foreach_add_")."""
    t = table()
    e = t.get(packet)
    if e is None and packet.endswith("_"):
        e = t.get(packet[:-1])
    return e
