"""Notebooks as one Python text: concatenate the code cells, analyse, map results back to cells.

Graph scopes can span cells (a `Cell` subclass in one cell, `set_context(GRAPH_MODE)` in
another), so the engine sees the cells joined in order, as the kernel would run them top to
bottom. IPython syntax (`%magic`, `!shell`, `%%cell` magics) is turned into comments of the
same length so that columns stay exact. No pygls here: cells come in as (uri, text) pairs.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from npu_lsp.diagnostics import Diagnostic, Edit, Span

_MAGIC_STARTS = ("%", "!")


@dataclass(frozen=True)
class Located:
    """A diagnostic placed in one document, with its fix edits (each tagged with its document).

    `edits` is empty when there is no fix or the fix could not be mapped (an edit crossing
    a cell boundary).
    """

    uri: str
    diagnostic: Diagnostic
    edits: tuple[tuple[str, Edit], ...] = ()


@dataclass(frozen=True)
class CellRange:
    uri: str
    first_line: int  # 1-based line of the cell's first line in the joined text
    line_count: int


@dataclass(frozen=True)
class JoinedNotebook:
    """The joined Python source of a notebook's code cells and where each cell landed."""

    text: str
    cells: tuple[CellRange, ...]

    def locate(self, line: int) -> tuple[CellRange, int] | None:
        """The cell holding joined `line` and the 1-based line within that cell."""
        starts = [c.first_line for c in self.cells]
        index = bisect.bisect_right(starts, line) - 1
        if index < 0:
            return None
        cell = self.cells[index]
        local = line - cell.first_line + 1
        return (cell, local) if local <= max(cell.line_count, 1) else None

    def map_span(self, span: Span) -> tuple[str, Span] | None:
        """A joined-text span as (cell uri, cell-local span); None if it crosses cells."""
        start = self.locate(span.line)
        end = self.locate(span.end_line)
        if start is None:
            return None
        cell, line = start
        if end is None or end[0] != cell:
            # Clip to the end of the start cell: the start is what users look at.
            return cell.uri, Span(line, span.column, line, span.column + 1)
        return cell.uri, Span(line, span.column, end[1], span.end_column)


def neutralise_magics(text: str) -> str:
    """Comment out IPython-only lines, keeping every line's length (and so every column)."""
    lines = text.split("\n")
    if lines and lines[0].lstrip().startswith("%%"):
        return "\n".join(("#" + line[1:]) if line else line for line in lines)
    out = []
    for line in lines:
        stripped = line.lstrip()
        if stripped.startswith(_MAGIC_STARTS):
            indent = len(line) - len(stripped)
            line = line[:indent] + "#" + stripped[1:]
        out.append(line)
    return "\n".join(out)


def join_cells(cells: Sequence[tuple[str, str]]) -> JoinedNotebook:
    """Join (uri, text) code cells, in notebook order, into one analysable text."""
    parts: list[str] = []
    ranges: list[CellRange] = []
    line = 1
    for uri, text in cells:
        body = neutralise_magics(text.replace("\r\n", "\n"))
        count = body.count("\n") + (0 if body.endswith("\n") else 1) if body else 1
        ranges.append(CellRange(uri, line, count))
        parts.append(body if body.endswith("\n") else body + "\n")
        line += count
    return JoinedNotebook("".join(parts), tuple(ranges))


def split_diagnostics(
    notebook: JoinedNotebook, diagnostics: Sequence[Diagnostic], path: str
) -> dict[str, list[Located]]:
    """Diagnostics of the joined text, regrouped per cell uri with cell-local spans.

    `path` is the notebook's file path: related locations in it are mapped to cells too.
    """
    out: dict[str, list[Located]] = {c.uri: [] for c in notebook.cells}
    # by id of a fix's edit tuple (shared by a fix group's diagnostics): its mapped edits
    mapped_edits: dict[int, tuple[tuple[Edit, ...], tuple[tuple[str, Edit], ...]]] = {}
    for diag in diagnostics:
        placed = notebook.map_span(diag.span)
        if placed is None:
            continue
        uri, span = placed
        related = []
        for rel in diag.related:
            mapped = notebook.map_span(rel.span) if rel.path == path else None
            # A related location in another cell is carried by uri in the path field.
            related.append(replace(rel, path=mapped[0], span=mapped[1]) if mapped else rel)
        edits: tuple[tuple[str, Edit], ...] = ()
        if diag.fix is not None:
            hit = mapped_edits.get(id(diag.fix.edits))
            if hit is None:
                hit = mapped_edits[id(diag.fix.edits)] = (
                    diag.fix.edits,  # kept alive: its id stays unique
                    _cell_edits(notebook, diag.fix.edits),
                )
            edits = hit[1]
        local = replace(diag, span=span, related=tuple(related))
        out[uri].append(Located(uri, local, edits))
    return out


def _cell_edits(notebook: JoinedNotebook, edits: tuple[Edit, ...]) -> tuple[tuple[str, Edit], ...]:
    """`edits` placed in their cells; empty when one cannot be (it crosses a cell boundary)."""
    out: list[tuple[str, Edit]] = []
    for edit in edits:
        target = notebook.map_span(edit.span)
        if target is None or not _same_cell(notebook, edit.span):
            return ()
        out.append((target[0], Edit(target[1], edit.new_text)))
    return tuple(out)


def _same_cell(notebook: JoinedNotebook, span: Span) -> bool:
    start, end = notebook.locate(span.line), notebook.locate(span.end_line)
    return start is not None and end is not None and start[0] == end[0]


def locate_document(
    uri: str, diagnostics: Sequence[Diagnostic], memo: dict[str, Any] | None = None
) -> list[Located]:
    """Diagnostics of a plain document, with fix edits all in that document. With `memo`
    (kept per document between runs): a diagnostic that is the same object as last run's
    (the incremental analysis reuses those of unchanged code) gets the same `Located`."""
    # A group fix carries an edit per member of the group (every device string of the file),
    # and the members share one tuple of those edits (`groups.fix_group`): tag each tuple
    # once and share the tagged tuple too, so a file with hundreds of device strings builds
    # (and pickles, and unpickles) hundreds of pairs, not their square.
    fits = memo is not None and memo.get("uri") == uri
    last_tagged: dict[int, Any] = memo.get("tagged", {}) if memo is not None and fits else {}
    last: dict[int, tuple[Diagnostic, Located]] = (
        memo.get("located", {}) if memo is not None and fits else {}
    )
    # id of an edit tuple -> (the tuple, kept alive so the id stays unique; it tagged)
    tagged: dict[int, tuple[tuple[Edit, ...], tuple[tuple[str, Edit], ...]]] = {}
    made: dict[int, tuple[Diagnostic, Located]] = {}
    out: list[Located] = []
    for d in diagnostics:
        hit = last.get(id(d))
        if hit is not None and hit[0] is d:
            item = hit[1]
        elif d.fix is None:
            item = Located(uri, d, ())
        else:
            edits = d.fix.edits
            pair = tagged.get(id(edits))
            if pair is None:
                pair = last_tagged.get(id(edits))
                if pair is None or pair[0] is not edits:
                    pair = (edits, tuple((uri, e) for e in edits))
                tagged[id(edits)] = pair
            item = Located(uri, d, pair[1])
        if memo is not None:
            made[id(d)] = (d, item)
            if item.edits and d.fix is not None:
                tagged.setdefault(id(d.fix.edits), (d.fix.edits, item.edits))
        out.append(item)
    if memo is not None:
        memo["uri"], memo["located"], memo["tagged"] = uri, made, tagged
    return out


__all__ = [
    "CellRange",
    "JoinedNotebook",
    "Located",
    "join_cells",
    "locate_document",
    "neutralise_magics",
    "split_diagnostics",
]
