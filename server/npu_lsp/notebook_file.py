"""`check` on a .ipynb file: its code cells joined and checked as the language server does.

The editor sends notebooks cell by cell (notebook.py joins them); on disk a notebook is
nbformat JSON. Here its code cells are read from that JSON and go through the same join,
engine and split, so a finding lands in the same cell, line and column in both. Results
name the cell as `nb.ipynb:cell N` (N counts every cell from 1, as the editor shows them).
"""

from __future__ import annotations

import json
from pathlib import Path

from npu_lsp import engine
from npu_lsp.config import Config
from npu_lsp.diagnostics import Diagnostic, Span
from npu_lsp.files import NotCheckable, read_checkable
from npu_lsp.notebook import join_cells, split_diagnostics

UNREADABLE = "AL002"


def code_cells(text: str) -> list[tuple[str, str]]:
    """(cell number, source) of each code cell of nbformat JSON; ValueError when it is not one."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"not a notebook (invalid JSON: {exc.msg} at line {exc.lineno})") from None
    cells = data.get("cells") if isinstance(data, dict) else None
    if not isinstance(cells, list):
        raise ValueError('not a notebook (no "cells" list)')
    out: list[tuple[str, str]] = []
    for number, cell in enumerate(cells, start=1):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        source = cell.get("source", "")
        if isinstance(source, list):
            source = "".join(part for part in source if isinstance(part, str))
        if not isinstance(source, str):
            raise ValueError(f"not a notebook (cell {number} has no text source)")
        out.append((str(number), source))
    return out


def check_notebook_file(
    path: str | Path, config: Config, workspace: engine.WorkspaceIndex | None = None
) -> list[tuple[str, Diagnostic]]:
    """(where, diagnostic) for each finding in the notebook at `path`, `where` naming the cell."""
    name = str(path)
    try:
        text = read_checkable(path, config.max_file_size).decode("utf-8-sig")
        cells = code_cells(text)
    except NotCheckable as exc:
        return [(name, _unreadable(f"file not checked: {exc.reason}"))]
    except OSError as exc:
        return [(name, _unreadable(f"cannot read file: {exc.strerror or exc}"))]
    except (UnicodeDecodeError, ValueError) as exc:
        return [(name, _unreadable(f"{exc}; not checked"))]
    if not cells:
        return []
    joined = join_cells(cells)
    raw = engine.check_python(joined.text, name, config, workspace)
    found = engine.postprocess(raw, joined.text, name, config)
    out: list[tuple[str, Diagnostic]] = []
    for cell, located in split_diagnostics(joined, found, name).items():
        out.extend((f"{name}:cell {cell}", item.diagnostic) for item in located)
    return out


def _unreadable(message: str) -> Diagnostic:
    return Diagnostic(UNREADABLE, message, "error", Span(1, 1, 1, 2))
