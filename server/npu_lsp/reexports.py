"""One public spelling for each MindSpore name code reaches through an internal module.

`P.ReduceSum` (`from mindspore.ops import operations as P`), `mstype.float32` (`import
mindspore.common.dtype as mstype`), `context.set_context` and `from mindspore.common.tensor
import Tensor` name the objects `ops.ReduceSum`, `ms.float32`, `ms.set_context` and
`ms.Tensor` are. Resolving names to the public spelling here lets every rule key on that one
spelling. The table (data/ms_reexports.json) is derived from MindSpore 2.10 by
tests/npu_lsp/difftest/derive_reexports.py: only names that are the very same object.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources


@cache
def _table() -> dict[str, dict[str, str]]:
    """internal module -> {name -> public module}."""
    text = resources.files("npu_lsp.data").joinpath("ms_reexports.json").read_text(encoding="utf-8")
    table: dict[str, dict[str, str]] = {}
    for source, targets in json.loads(text)["modules"].items():
        names = table[source] = {}
        for target, listed in targets.items():
            names.update(dict.fromkeys(listed, target))
    return table


def reexported(module: str) -> dict[str, str]:
    """The names an internal module re-exports, each with its public module."""
    return _table().get(module, {})


def public_name(dotted: str) -> str:
    """`dotted` with its longest internal-module prefix naming a re-exported object replaced by
    the public module: "mindspore.ops.operations.ReduceSum" -> "mindspore.ops.ReduceSum",
    "mindspore.common.tensor.Tensor.from_numpy" -> "mindspore.Tensor.from_numpy"."""
    if not dotted.startswith("mindspore.") or dotted.count(".") < 2:
        return dotted  # `mindspore.X` is public already
    table = _table()
    parts = dotted.split(".")
    for cut in range(len(parts) - 1, 1, -1):
        names = table.get(".".join(parts[:cut]))
        if names is not None:
            target = names.get(parts[cut])
            if target is None:
                return dotted
            return ".".join([target, *parts[cut:]])
    return dotted
