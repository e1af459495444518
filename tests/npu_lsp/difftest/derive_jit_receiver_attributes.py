#!/usr/bin/env python3
"""Derive the attributes of the Python types MS213 knows a host value's type of, and write them
to server/npu_lsp/rules/graphmode/ms_jit_receiver_attributes.json.

MindSpore 2.10's `@ms.jit` wrapper (`mindspore/graph/api.py`, `_jit_ast.staging_specialize`)
takes a call's first argument for the owner of a method when it is no Tensor and
`hasattr(args[0], func.__name__)`; MS213 asks the same question of the argument's type.
The table holds `dir(T)` without dunders for dict, list, tuple, set, str, int, float, bool and
numpy.ndarray (nn.Cell's are in ms_cell_attributes.json).
Run with the MindSpore interpreter (never in CI):
`~/.cache/ms210/bin/python tests/npu_lsp/difftest/derive_jit_receiver_attributes.py [--write]`
(without `--write` it prints how the derived table differs from the stored one).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import mindspore
import numpy as np

OUT = Path(__file__).resolve().parents[3] / "server/npu_lsp/rules/graphmode/ms_jit_receiver_attributes.json"

ABOUT = (
    "Public attributes (dir(T) without dunders) of the host types whose value, given as the first "
    "argument of an @ms.jit function named like one of them, MindSpore 2.10 takes for the method's "
    "owner (MS213). Derived by tests/npu_lsp/difftest/derive_jit_receiver_attributes.py."
)

TYPES: dict[str, type] = {
    "dict": dict,
    "list": list,
    "tuple": tuple,
    "set": set,
    "str": str,
    "int": int,
    "float": float,
    "bool": bool,
    "ndarray": np.ndarray,
}


def attributes() -> dict[str, list[str]]:
    return {k: sorted(n for n in dir(t) if not (n.startswith("__") and n.endswith("__"))) for k, t in TYPES.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--write", action="store_true", help="write the table instead of diffing it")
    args = parser.parse_args()
    derived = attributes()
    if args.write:
        data = {
            "_about": ABOUT,
            "mindspore": mindspore.__version__,
            "python": f"{sys.version_info[0]}.{sys.version_info[1]}",
            "numpy": np.__version__,
            "types": derived,
        }
        OUT.write_text(json.dumps(data, indent=1) + "\n")
        print(sum(map(len, derived.values())), "attributes ->", OUT)
        return
    stored = json.loads(OUT.read_text())["types"]
    for k, names in derived.items():
        print(k, "derived, not stored:", sorted(set(names) - set(stored.get(k, []))))
        print(k, "stored, not derived:", sorted(set(stored.get(k, [])) - set(names)))


if __name__ == "__main__":
    main()
