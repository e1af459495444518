"""Mechanical source edits shared by graph-mode quick fixes."""

from __future__ import annotations

import ast
import re

from npu_lsp.diagnostics import Edit, Fix, Span
from npu_lsp.engine import Context


def remove_posonly_marker(func: ast.FunctionDef, ctx: Context) -> Fix | None:
    """Delete the `/` (and its comma) from a function signature, if it is on one line."""
    last = func.args.posonlyargs[-1]
    line_no = last.end_lineno or last.lineno
    line = ctx.lines[line_no - 1]
    start = ctx.column(line_no, last.end_col_offset or 0) - 1  # ast offsets are bytes
    m = re.compile(r"\s*,\s*/\s*(,)?").match(line, start)
    if m is None:
        return None
    # keep exactly one separator between the remaining parameters
    replacement = ", " if m.group(1) else ""
    span = Span(line_no, m.start() + 1, line_no, m.end() + 1)
    if m.group(1):
        # `x, /, y` -> `x, y`
        return Fix("Remove the `/` marker", (Edit(span, replacement.rstrip() + " "),), safe=True)
    return Fix("Remove the `/` marker", (Edit(span, ""),), safe=True)
