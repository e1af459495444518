"""Byte offsets from `ast` to the character columns our spans use.

Span columns (engine, CLI text and JSON) are 1-based and count Unicode code points; end
columns are exclusive. `ast` records `col_offset` / `end_col_offset` as 0-based UTF-8 *byte*
offsets, so on a line with non-ASCII text before a node the two differ (a Chinese comment,
an emoji in a string). The language server converts code points to UTF-16 units for the
client (`convert.py`); nothing else converts again.

Conversion costs nothing for an all-ASCII file (one `str.isascii` per file) and decodes
only the lines that need it, once each.
"""

from __future__ import annotations

import re

# Python (and LSP) lines end at \r\n, \r or \n only; str.splitlines also splits at \f,
# \x1c, \u2028..., which would shift every later line number.
_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def split_lines(text: str) -> list[str]:
    """`text` split into lines the way `ast` numbers them (no line terminators)."""
    if "\r" not in text:
        return text.split("\n")
    return _LINE_BREAK.split(text)


class LineColumns:
    """Converts (line, UTF-8 byte offset) positions of one text to 1-based code-point columns."""

    __slots__ = ("_ascii", "_lines", "_text", "_utf8")

    def __init__(self, text: str, lines: list[str] | None = None) -> None:
        self._ascii = text.isascii()
        # an ASCII text needs no conversion: keep no reference to it (the workspace index
        # holds one of these per file)
        self._text = "" if self._ascii else text
        self._lines = None if self._ascii else lines
        self._utf8: dict[int, bytes | None] = {}

    @classmethod
    def restricted(cls, text: str, lines: list[int]) -> LineColumns:
        """A converter for `lines` of `text` only (others count as ASCII) that keeps no
        reference to the text: small enough to store in a summary."""
        out = cls("")
        out._ascii = False
        out._lines = []
        all_lines = split_lines(text)
        for line in lines:
            t = all_lines[line - 1] if 0 < line <= len(all_lines) else ""
            out._utf8[line] = None if t.isascii() else t.encode("utf-8")
        return out

    def column(self, line: int, byte_offset: int) -> int:
        """The 1-based code-point column of 0-based byte offset `byte_offset` on 1-based `line`."""
        if self._ascii:
            return byte_offset + 1
        encoded = self._utf8.get(line, b"")
        if encoded == b"":
            if self._lines is None:
                self._lines = split_lines(self._text)
            text = self._lines[line - 1] if 0 < line <= len(self._lines) else ""
            encoded = self._utf8[line] = None if text.isascii() else text.encode("utf-8")
        if encoded is None:
            return byte_offset + 1
        return len(encoded[:byte_offset].decode("utf-8", errors="ignore")) + 1
