"""The pyACL / AscendCL API table (data/acl_api.json): name -> call shape and CUDA equivalent."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from importlib import resources


@dataclass(frozen=True)
class ApiEntry:
    """One pyACL function: its Python call shape, return convention, C name and CUDA twin."""

    python: str  # "acl.rt.malloc"
    signature: str  # "acl.rt.malloc(size, policy)"
    returns: str  # "(dev_ptr, ret)"
    c: str | None  # "aclrtMalloc"
    cuda: str | None  # "cudaMalloc"
    note: str


@cache
def entries() -> tuple[ApiEntry, ...]:
    """Every row of the table, in file order."""
    path = resources.files("npu_lsp.data").joinpath("acl_api.json")
    rows = json.loads(path.read_text(encoding="utf-8"))["apis"]
    return tuple(ApiEntry(**row) for row in rows)


@cache
def _index() -> dict[str, ApiEntry]:
    index: dict[str, ApiEntry] = {}
    for entry in entries():
        for key in (entry.python, entry.c, entry.cuda):
            # The first row wins for a shared CUDA name; Python and C names are unique.
            if key and key not in index:
                index[key] = entry
    return index


def find(name: str) -> ApiEntry | None:
    """The entry for a pyACL dotted name, an AscendCL C name or a CUDA runtime name."""
    return _index().get(name)
