"""Terminal tables of a per-line profile: the top op types and the hottest source lines.

They read the `ascend-lens.profile/1` document, not records, so anything holding that
document (the CLI, the kernel's text fallback) prints the same tables.
"""

from __future__ import annotations

import os
from typing import Any

from rich.console import Console
from rich.table import Table


def _pct(share: float) -> str:
    return f"{share * 100:.1f}%"


def _place(file: str, line: int) -> str:
    try:
        rel = os.path.relpath(file)
    except ValueError:  # another drive on Windows
        rel = file
    return f"{file if rel.startswith('..') else rel}:{line}"


def top_ops_table(doc: dict[str, Any], limit: int = 10) -> Table:
    """Op types by simulated time, with count, share and bound."""
    table = Table(title=f"Top ops ({doc['device']}, {doc['total_us']:.3f} µs simulated)")
    table.add_column("op type")
    table.add_column("count", justify="right")
    table.add_column("total µs", justify="right")
    table.add_column("avg µs", justify="right")
    table.add_column("share", justify="right")
    table.add_column("bound")
    for op in doc["top_ops"][:limit]:
        table.add_row(
            op["op_type"],
            str(op["count"]),
            f"{op['total_us']:.3f}",
            f"{op['total_us'] / op['count']:.3f}",
            _pct(op["share"]),
            op["bound"],
        )
    return table


def lines_table(doc: dict[str, Any], limit: int = 10) -> Table:
    """Source lines by the simulated time of the work they launched."""
    table = Table(title="Hot lines")
    rows = doc["lines"][:limit]
    places = [_place(ln["file"], ln["line"]) for ln in rows]
    # The place is the point of this table: never cut it (the op list may wrap instead).
    table.add_column("line", no_wrap=True, min_width=min(60, max(map(len, places), default=4)))
    table.add_column("ops", justify="right")
    table.add_column("total µs", justify="right")
    table.add_column("share", justify="right")
    table.add_column("bound")
    table.add_column("top ops")
    for ln, place in zip(rows, places, strict=True):
        tops = ", ".join(f"{t['op_type']}×{t['count']}" for t in ln["top_ops"][:3])
        table.add_row(
            place,
            str(ln["op_count"]),
            f"{ln['total_us']:.3f}",
            _pct(ln["share"]),
            ln["bound"],
            tops,
        )
    return table


def print_summary(doc: dict[str, Any], console: Console, limit: int = 10) -> None:
    """Both tables, or one line saying nothing ran on the device."""
    if doc["op_count"] == 0:
        console.print("[bold]profile:[/] no device work was recorded")
        return
    console.print(top_ops_table(doc, limit))
    if doc["lines"]:
        console.print(lines_table(doc, limit))
