"""Rich output pieces: tables as plain text and HTML, and bundles for IPython's display.

Every rich view has a plain-text fallback, so consoles and logs still read well.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import Any

_STYLE = (
    "<style>.al-t{border-collapse:collapse;font-size:12px;margin:4px 0}"
    ".al-t th,.al-t td{padding:2px 8px;border-bottom:1px solid #8884;text-align:left}"
    ".al-t td.n{text-align:right;font-variant-numeric:tabular-nums}"
    ".al-h{font-weight:600;margin:8px 0 2px}</style>"
)


def _is_number(cell: Any) -> bool:
    return isinstance(cell, int | float) and not isinstance(cell, bool)


def _fmt(cell: Any) -> str:
    if isinstance(cell, float):
        return f"{cell:,.2f}" if abs(cell) < 1e6 else f"{cell:,.0f}"
    if isinstance(cell, int) and not isinstance(cell, bool):
        return f"{cell:,}"
    return str(cell)


def text_table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A fixed-width table; numbers right-aligned."""
    cells = [[_fmt(c) for c in row] for row in rows]
    widths = [len(h) for h in headers]
    for row in cells:
        widths = [max(w, len(c)) for w, c in zip(widths, row, strict=True)]
    numeric = [bool(rows) and all(_is_number(r[i]) for r in rows) for i in range(len(headers))]

    def line(values: Sequence[str]) -> str:
        parts = [
            v.rjust(w) if num else v.ljust(w)
            for v, w, num in zip(values, widths, numeric, strict=True)
        ]
        return "  ".join(parts).rstrip()

    rule = "  ".join("-" * w for w in widths)
    return "\n".join([line(list(headers)), rule, *(line(r) for r in cells)])


def html_table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in headers)
    body = "".join(
        "<tr>"
        + "".join(
            f'<td class="n">{html.escape(_fmt(c))}</td>'
            if _is_number(c)
            else f"<td>{html.escape(_fmt(c))}</td>"
            for c in row
        )
        + "</tr>"
        for row in rows
    )
    return f'<table class="al-t"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


class Section:
    """A titled part of a report: a table, free text or an SVG figure."""

    def __init__(self, title: str) -> None:
        self.title = title
        self._text: list[str] = []
        self._html: list[str] = []

    def table(self, headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> Section:
        if rows:
            self._text.append(text_table(headers, rows))
            self._html.append(html_table(headers, rows))
        else:
            self.note("(none)")
        return self

    def note(self, text: str) -> Section:
        self._text.append(text)
        self._html.append(f"<div>{html.escape(text)}</div>")
        return self

    def svg(self, svg: str, alt: str) -> Section:
        """A figure: the SVG for rich frontends, `alt` for plain text."""
        self._html.append(svg)
        if alt:
            self._text.append(alt)
        return self

    def as_text(self) -> str:
        return "\n".join([self.title, *self._text])

    def as_html(self) -> str:
        return f'<div class="al-h">{html.escape(self.title)}</div>' + "".join(self._html)


class Report:
    """Sections shown together as one display_data (text/plain + text/html)."""

    def __init__(self, *sections: Section) -> None:
        self.sections = list(sections)

    def add(self, title: str) -> Section:
        section = Section(title)
        self.sections.append(section)
        return section

    def bundle(self, extra: dict[str, Any] | None = None) -> dict[str, Any]:
        data: dict[str, Any] = {
            "text/plain": "\n\n".join(s.as_text() for s in self.sections),
            "text/html": _STYLE + "".join(s.as_html() for s in self.sections),
        }
        data.update(extra or {})
        return data

    def display(self, extra: dict[str, Any] | None = None) -> None:
        from IPython.display import publish_display_data

        publish_display_data(self.bundle(extra))
