"""Map source sites back to notebook cells: "Cell In[3], line 5" instead of a temp path.

IPython compiles each cell under a generated filename (ipykernel uses
/tmp/ipykernel_<pid>/<hash>.py) and remembers which execution count it belongs to; the
kernel reads that map so users see cells, not temp files.
"""

from __future__ import annotations

import linecache
import os
from dataclasses import dataclass
from typing import Protocol


class _Compiler(Protocol):
    def format_code_name(self, name: str) -> tuple[str, str] | None: ...


@dataclass(frozen=True, slots=True)
class Place:
    """Where a site is, in the words a notebook user understands."""

    label: str  # "Cell In[3], line 5" or "model.py:12"
    source: str  # the stripped source line, "" when unknown
    cell: int | None  # execution count when the site is in a cell


class CellLocator:
    """Describes (file, line) pairs, naming notebook cells by their execution count."""

    def __init__(self, compiler: _Compiler) -> None:
        self._compiler = compiler

    def cell_of(self, filename: str) -> int | None:
        named = self._compiler.format_code_name(filename)
        if named is None:
            return None
        label = named[1]  # "In[3]"
        digits = label[label.find("[") + 1 : label.find("]")]
        return int(digits) if digits.isdigit() else None

    def place(self, filename: str, line: int) -> Place:
        source = linecache.getline(filename, line).strip()
        cell = self.cell_of(filename)
        if cell is not None:
            return Place(f"Cell In[{cell}], line {line}", source, cell)
        return Place(f"{_short(filename)}:{line}", source, None)


def _short(filename: str) -> str:
    """A path relative to the working directory when it is below it."""
    try:
        rel = os.path.relpath(filename)
    except ValueError:  # another drive on Windows
        return filename
    return filename if rel.startswith("..") else rel
