"""Plain value types the engine returns: spans, edits, fixes and diagnostics.

Everything here is a frozen dataclass with no dependency on pygls or lsprotocol, so the
CLI, the language server and the tests all consume the same objects. Positions are
1-based for both lines and columns (as `ascend-lens check` prints them); end positions are
exclusive. Columns count Unicode code points, like Python's own `ast` offsets after decoding.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

Severity = Literal["error", "warning", "info", "hint"]
SEVERITIES: tuple[Severity, ...] = ("error", "warning", "info", "hint")


@dataclass(frozen=True, order=True)
class Span:
    """A source range: 1-based line and column, end exclusive."""

    line: int
    column: int
    end_line: int
    end_column: int

    def contains_line(self, line: int) -> bool:
        return self.line <= line <= self.end_line


@dataclass(frozen=True)
class Edit:
    """Replace the text covered by `span` with `new_text` (empty span = insertion)."""

    span: Span
    new_text: str


@dataclass(frozen=True)
class Fix:
    """A quick fix: edits applied together. `safe` means behaviour is certainly preserved."""

    title: str
    edits: tuple[Edit, ...]
    safe: bool = True


@dataclass(frozen=True)
class Related:
    """Another location that explains a diagnostic (e.g. the call site that reaches a helper)."""

    path: str
    span: Span
    message: str


@dataclass(frozen=True)
class Diagnostic:
    """One finding. `code` is the rule code (e.g. "MS101"), `source` the tool name."""

    code: str
    message: str
    severity: Severity
    span: Span
    fix: Fix | None = None
    related: tuple[Related, ...] = field(default=())
    source: str = "ascend-lens"

    def sort_key(self) -> tuple[int, int, str]:
        return (self.span.line, self.span.column, self.code)


_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")


def split_keepends(text: str) -> list[str]:
    """`text` split into lines with their terminators, numbered as `ast` numbers them
    (`str.splitlines` also breaks at \\f, \\x1c, \\u2028..., which would shift later lines)."""
    return _LINE.findall(text)


def apply_edits(text: str, edits: tuple[Edit, ...] | list[Edit]) -> str:
    """Return `text` with non-overlapping `edits` applied (`npu_lsp.fixing` and tests)."""
    lines = split_keepends(text)
    starts = [0]
    for ln in lines:
        starts.append(starts[-1] + len(ln))

    def offset(line: int, column: int) -> int:
        if line - 1 >= len(lines):
            return len(text)
        return starts[line - 1] + column - 1

    out = text
    for edit in sorted(edits, key=lambda e: (e.span.line, e.span.column), reverse=True):
        a = offset(edit.span.line, edit.span.column)
        b = offset(edit.span.end_line, edit.span.end_column)
        out = out[:a] + edit.new_text + out[b:]
    return out
