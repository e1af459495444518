#!/usr/bin/env python3
"""Derive the attributes every MindSpore 2.10 `nn.Cell` has before a subclass's own
`__init__` code runs, and write them to server/npu_lsp/rules/graphmode/ms_cell_attributes.json.

What a subclass has after `super().__init__()` is what `nn.Cell.__init__` set plus the
class's methods and properties: `dir(nn.Cell())` without the dunders (which every object
has). MS182 reads the table: `self.<name>` read in `construct` that neither `__init__` nor
this list sets is an attribute the cell may lack ("object has no attribute").
Run with the MindSpore interpreter (never in CI):
`~/.cache/ms210/bin/python tests/npu_lsp/difftest/derive_cell_attributes.py [--write]`
(without `--write` it prints how the derived table differs from the stored one).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import mindspore
from mindspore import nn

OUT = Path(__file__).resolve().parents[3] / "server/npu_lsp/rules/graphmode/ms_cell_attributes.json"

ABOUT = (
    "Attributes a MindSpore 2.10 nn.Cell has before its __init__ runs user code: "
    "dir(nn.Cell()) without dunders (MS182: such an attribute exists on every cell). "
    "Derived by tests/npu_lsp/difftest/derive_cell_attributes.py."
)


def cell_attributes() -> list[str]:
    """The non-dunder names of a freshly built `nn.Cell` (instance state and class members)."""
    cell = nn.Cell()
    return sorted(n for n in dir(cell) if not (n.startswith("__") and n.endswith("__")))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--write", action="store_true", help="write the table instead of diffing it")
    args = parser.parse_args()
    derived = cell_attributes()
    if args.write:
        data = {"_about": ABOUT, "mindspore": mindspore.__version__, "attributes": derived}
        OUT.write_text(json.dumps(data, indent=1) + "\n")
        print(len(derived), "attributes ->", OUT)
        return
    stored = set(json.loads(OUT.read_text())["attributes"])
    print("derived, not stored:", sorted(set(derived) - stored))
    print("stored, not derived:", sorted(stored - set(derived)))


if __name__ == "__main__":
    main()
