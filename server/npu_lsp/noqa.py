"""Inline suppression: `# noqa` (every code on the line) and `# noqa: MS101, NPU2` (listed codes).

A diagnostic is suppressed by a noqa comment on the line where it starts. Codes may be
full codes or prefixes, separated by commas or spaces; matching is case-insensitive.
"""

from __future__ import annotations

import re

from npu_lsp.columns import split_lines
from npu_lsp.diagnostics import Diagnostic

_NOQA = re.compile(
    r"#\s*noqa(?P<sep>\s*:\s*(?P<codes>[A-Za-z]+[0-9]*(?:[\s,]+[A-Za-z]+[0-9]*)*))?",
    re.IGNORECASE,
)
ALL = "*"


def parse_noqa(text: str) -> dict[int, frozenset[str]]:
    """Map 1-based line -> suppressed codes (`{"*"}` for a bare `# noqa`)."""
    if "noqa" not in text and "NOQA" not in text.upper():
        return {}
    out: dict[int, frozenset[str]] = {}
    for lineno, line in enumerate(split_lines(text), start=1):  # numbered as `ast` does
        if "#" not in line:
            continue
        m = _NOQA.search(line)
        if m is None:
            continue
        codes = m.group("codes")
        if codes:
            out[lineno] = frozenset(c.upper() for c in re.split(r"[\s,]+", codes) if c)
        else:
            out[lineno] = frozenset({ALL})
    return out


def is_suppressed(diag: Diagnostic, noqa: dict[int, frozenset[str]]) -> bool:
    codes = noqa.get(diag.span.line)
    if not codes:
        return False
    return ALL in codes or any(diag.code.upper().startswith(c) for c in codes)


def filter_suppressed(diags: list[Diagnostic], text: str) -> list[Diagnostic]:
    """Drop diagnostics suppressed by noqa comments in `text`."""
    if not diags:
        return diags  # nothing to suppress: the comments need not be read
    noqa = parse_noqa(text)
    if not noqa:
        return diags
    return [d for d in diags if not is_suppressed(d, noqa)]
