#!/usr/bin/env python3
"""Derive the str methods no other receiver compiled code commonly holds has, and write them
to server/npu_lsp/rules/graphmode/ms_str_only_methods.json.

A call `<e>.<name>(...)` in compiled code where `<e>` is of unknown type and `<name>` is a
public method of `str` that neither `mindspore.Tensor` (MindSpore 2.10: `hasattr(ms.Tensor,
name)` is False) nor list, tuple or dict has can only be a str method call, so MS144 judges it
with the str row of ms_calls.json (what MindSpore's parser does with each str method at LAX
and STRICT, probed by probe_calls.py: under STRICT only `format`, `lower` and `upper` compile).
numpy's ndarray is left out too: an array is a constant compiled code may hold, and
`arr.partition(k)` is not a str call. Run with the MindSpore interpreter (never in CI):
`~/.cache/ms210/bin/python tests/npu_lsp/difftest/derive_str_only_methods.py [--write]`
(without `--write` it prints how the derived table differs from the stored one).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import mindspore
import numpy

OUT = Path(__file__).resolve().parents[3] / "server/npu_lsp/rules/graphmode/ms_str_only_methods.json"

ABOUT = (
    "str methods that neither mindspore.Tensor (MindSpore 2.10: hasattr(ms.Tensor, name) is False "
    "for each) nor list, tuple, dict or numpy.ndarray have: a call of one in compiled code is a str "
    "method call, whatever its receiver's type is known to be (unsupported_python_call, STRICT). "
    "Derived by tests/npu_lsp/difftest/derive_str_only_methods.py."
)
#: the other receivers compiled code holds whose methods a str method name may also be
OTHER_RECEIVERS: tuple[type, ...] = (mindspore.Tensor, list, tuple, dict, numpy.ndarray)


def str_only_methods() -> list[str]:
    """Public str methods none of OTHER_RECEIVERS has."""
    return sorted(
        name
        for name in dir(str)
        if not name.startswith("_") and not any(hasattr(t, name) for t in OTHER_RECEIVERS)
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--write", action="store_true", help="write the table instead of diffing it")
    args = parser.parse_args()
    derived = str_only_methods()
    if args.write:
        data = {"_about": ABOUT, "mindspore": mindspore.__version__, "methods": derived}
        OUT.write_text(json.dumps(data, indent=1) + "\n")
        print(len(derived), "methods ->", OUT)
        return
    stored = set(json.loads(OUT.read_text())["methods"])
    print("derived, not stored:", sorted(set(derived) - stored))
    print("stored, not derived:", sorted(stored - set(derived)))


if __name__ == "__main__":
    main()
