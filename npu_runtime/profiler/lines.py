"""The per-line profile (`ascend-lens.profile/1`, docs/profile-format.md) built from work records.

One function, `aggregate`, used unchanged by `ascend-lens run --profile`, the kernel and
the debug adapter, so every view of a run agrees.
"""

from __future__ import annotations

import os
from collections import defaultdict
from collections.abc import Iterable
from typing import Any

from npu_runtime.records import WorkRecord

SCHEMA = "ascend-lens.profile/1"
MAX_LINE_OPS = 5
MAX_TOP_OPS = 20
DEFAULT_DEVICE = "Ascend910B2"


class _Bucket:
    """Count, time and time per bound for one group of records."""

    __slots__ = ("count", "total", "by_bound")

    def __init__(self) -> None:
        self.count = 0
        self.total = 0.0
        self.by_bound: dict[str, float] = defaultdict(float)

    def add(self, rec: WorkRecord) -> None:
        self.count += 1
        self.total += rec.duration_us
        self.by_bound[rec.bound] += rec.duration_us

    def bound(self) -> str:
        # Most time wins; ties go to the alphabetically first bound so output is stable.
        return min(self.by_bound.items(), key=lambda kv: (-kv[1], kv[0]))[0]


def _us(x: float) -> float:
    return round(x, 3)


def _share(part: float, whole: float) -> float:
    return round(part / whole, 4) if whole > 0 else 0.0


def _abs(file: str) -> str:
    # Pseudo-files such as "<stdin>" or "<ipython-input-3>" have no path to resolve.
    return file if file.startswith("<") or os.path.isabs(file) else os.path.abspath(file)


def _ranked(buckets: dict[Any, _Bucket]) -> list[tuple[Any, _Bucket]]:
    return sorted(buckets.items(), key=lambda kv: (-kv[1].total, kv[0]))


def aggregate(
    records: Iterable[WorkRecord],
    device: str = DEFAULT_DEVICE,
    trace_path: str | os.PathLike[str] | None = None,
) -> dict[str, Any]:
    """Build the `ascend-lens.profile/1` document from work records.

    Lines are keyed by the record's launch site (file, line); work without a site counts
    in the totals and `top_ops` only. Times are rounded to 0.001 µs and shares to 4 places.
    """
    total = _Bucket()
    by_type: dict[str, _Bucket] = defaultdict(_Bucket)
    by_line: dict[tuple[str, int], _Bucket] = defaultdict(_Bucket)
    by_line_type: dict[tuple[str, int], dict[str, _Bucket]] = defaultdict(
        lambda: defaultdict(_Bucket)
    )
    for rec in records:
        total.add(rec)
        by_type[rec.op_type].add(rec)
        if rec.site is not None:
            key = (_abs(rec.site.file), rec.site.line)
            by_line[key].add(rec)
            by_line_type[key][rec.op_type].add(rec)

    lines = [
        {
            "file": file,
            "line": line,
            "op_count": b.count,
            "total_us": _us(b.total),
            "share": _share(b.total, total.total),
            "bound": b.bound(),
            "top_ops": [
                {"op_type": t, "count": tb.count, "total_us": _us(tb.total), "bound": tb.bound()}
                for t, tb in _ranked(by_line_type[(file, line)])[:MAX_LINE_OPS]
            ],
        }
        for (file, line), b in _ranked(by_line)
    ]
    top_ops = [
        {
            "op_type": t,
            "count": b.count,
            "total_us": _us(b.total),
            "share": _share(b.total, total.total),
            "bound": b.bound(),
        }
        for t, b in _ranked(by_type)[:MAX_TOP_OPS]
    ]
    return {
        "schema": SCHEMA,
        "device": device,
        "total_us": _us(total.total),
        "op_count": total.count,
        "trace": os.path.abspath(trace_path) if trace_path is not None else None,
        "lines": lines,
        "top_ops": top_ops,
    }
