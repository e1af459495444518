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


def _relative(file: str, start: str | None = None) -> str:
    try:
        return os.path.relpath(file, start)
    except ValueError:  # another drive on Windows
        return file


def _places(rows: list[dict[str, Any]]) -> tuple[list[str], str | None]:
    """`file:line` for each row, short: files under the working directory relative to it,
    others absolute; then, when all of them share a folder, relative to that folder (which
    is returned, for the title)."""
    shown = []
    for ln in rows:
        rel = _relative(str(ln["file"]))
        shown.append(str(ln["file"]) if rel.startswith("..") or os.path.isabs(rel) else rel)
    base: str | None = None
    if shown and len({os.path.isabs(p) for p in shown}) == 1:
        try:
            base = os.path.commonpath([os.path.dirname(p) for p in shown])
        except ValueError:  # nothing in common (Windows drives)
            base = None
        if not base or base == os.path.dirname(base):  # "" or the root say nothing
            base = None
    if base is not None:
        shown = [_relative(p, base) for p in shown]
    return [f"{p}:{ln['line']}" for p, ln in zip(shown, rows, strict=True)], base


def _clip_left(text: str, width: int) -> str:
    """Keep the end of a path (file name and line), which says most."""
    return text if len(text) <= width else "…" + text[len(text) - width + 1 :]


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


# Hot lines: the figures are kept whole; the place is shortened from the left to what is left,
# and the op list wraps between ops. Width of the table's frame: one border plus 3 per column.
_PLACE_MIN = 16


def lines_table(doc: dict[str, Any], limit: int = 10, width: int = 120) -> Table:
    """Source lines by the simulated time of the work they launched, fitted to `width`."""
    rows = doc["lines"][:limit]
    places, base = _places(rows)
    figures = [
        ("ops", [str(ln["op_count"]) for ln in rows]),
        ("total µs", [f"{ln['total_us']:.3f}" for ln in rows]),
        ("share", [_pct(ln["share"]) for ln in rows]),
        ("bound", [str(ln["bound"]) for ln in rows]),
    ]
    fixed = sum(max([len(head), *map(len, cells)]) for head, cells in figures)
    top_ops = [[f"{t['op_type']}×{t['count']}" for t in ln["top_ops"][:3]] for ln in rows]
    tops = [", ".join(names) for names in top_ops]
    # Wide enough for each op with its comma: the list wraps between ops, never inside one.
    tops_min = max([len("top ops"), *(len(n) + 1 for names in top_ops for n in names[:-1])])
    tops_min = max([tops_min, *(len(names[-1]) for names in top_ops if names)])
    room = width - fixed - tops_min - (1 + 3 * (len(figures) + 2))
    places = [_clip_left(p, max(_PLACE_MIN, room)) for p in places]
    # The title wraps at the table's width: keep the end of the shared folder within it.
    table_width = min(
        width,
        max(map(len, places), default=4)
        + fixed
        + max([tops_min, *map(len, tops)])
        + 1
        + 3 * (len(figures) + 2),
    )
    where = f" (in {_clip_left(base, max(_PLACE_MIN, table_width - 16))})" if base else ""
    table = Table(title=f"Hot lines{where}")
    table.add_column("line", no_wrap=True, min_width=max(map(len, places), default=4))
    for head, cells in figures:
        table.add_column(
            head,
            justify="left" if head == "bound" else "right",
            no_wrap=True,
            min_width=max([len(head), *map(len, cells)]),
        )
    table.add_column("top ops", overflow="fold", min_width=tops_min)
    for i, place in enumerate(places):
        table.add_row(place, *(cells[i] for _, cells in figures), tops[i])
    return table


def print_summary(doc: dict[str, Any], console: Console, limit: int = 10) -> None:
    """Both tables, or one line saying nothing ran on the device."""
    if doc["op_count"] == 0:
        console.print("[bold]profile:[/] no device work was recorded")
        return
    console.print(top_ops_table(doc, limit))
    if doc["lines"]:
        console.print(lines_table(doc, limit, console.width))
