"""Loaders for the profiler's data tables (npu_runtime/profiler/data/), one function each."""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any


def _load(name: str) -> dict[str, Any]:
    text = resources.files("npu_runtime.profiler").joinpath("data").joinpath(name).read_text("utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


@cache
def op_summary_columns(pmu: bool = True) -> tuple[str, ...]:
    """The msprof op_summary header; without PMU data it ends at `Context ID`, as msprof's does."""
    table = _load("op_summary.json")
    cols: list[str] = table["columns"]
    if pmu:
        return tuple(cols)
    return tuple(cols[: cols.index(table["no_pmu_last"]) + 1])


@cache
def trace_constants() -> dict[str, Any]:
    """Constants of the msprof Chrome-trace timeline (layer names, pid encoding, task types)."""
    return _load("msprof_trace.json")


@cache
def ascend_pt_tables() -> dict[str, Any]:
    """Headers and names of the torch_npu-style `*_ascend_pt/` export."""
    return _load("ascend_pt.json")
