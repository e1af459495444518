#!/usr/bin/env python3
"""Derive where MindSpore's public names are defined under other module paths, and write the
table to server/npu_lsp/data/ms_reexports.json.

Real code names one object many ways: `from mindspore.ops import operations as P` then
`P.ReduceSum`, `from mindspore.ops import functional as F`, `import mindspore.common.dtype as
mstype`, `from mindspore.common.tensor import Tensor`, `from mindspore import context` then
`context.set_context`. The checker resolves every such name to the one public spelling
(`mindspore.ops.ReduceSum`, `mindspore.float32`, `mindspore.Tensor`, `mindspore.set_context`)
so rules keyed on the public names read them all. A name is mapped only when it is the very
same object (`is`) as the public one in MindSpore 2.10: names under `mindspore.ops.*` go to
`mindspore.ops` (else `mindspore`), under `mindspore.nn.*` to `mindspore.nn` (else
`mindspore`), the rest to `mindspore`. Public namespaces themselves (`mindspore.ops`,
`mindspore.nn`, `mindspore.train`, `mindspore.mint`) are never rewritten into one another.
Run with the MindSpore interpreter (never in CI):
`~/.cache/ms210/bin/python tests/npu_lsp/difftest/derive_reexports.py [--write]`
(without `--write` it prints how the derived table differs from the stored one).
"""

from __future__ import annotations
import __future__

import argparse
import importlib
import json
import pkgutil
import types
import warnings
from pathlib import Path

import mindspore

OUT = Path(__file__).resolve().parents[3] / "server/npu_lsp/data/ms_reexports.json"

ABOUT = (
    "MindSpore 2.10 names defined under an internal module path that are the very same object as "
    "a public name: {internal module: {public module: [names]}}. The checker reads "
    "`<internal module>.<name>` as `<public module>.<name>`. Derived by "
    "tests/npu_lsp/difftest/derive_reexports.py."
)
#: the internal packages user code imports from (their submodules are walked too)
SOURCES = (
    "mindspore.common",
    "mindspore.context",
    "mindspore.ops.operations",
    "mindspore.ops.functional",
    "mindspore.ops.composite",
    "mindspore.ops.function",
    "mindspore.ops.primitive",
    "mindspore.ops.auto_generate",
    "mindspore.nn.cell",
    "mindspore.nn.layer",
    "mindspore.nn.loss",
    "mindspore.nn.optim",
    "mindspore.nn.wrap",
)


def _targets(source: str) -> tuple[str, ...]:
    if source.startswith("mindspore.ops."):
        return ("mindspore.ops", "mindspore")
    if source.startswith("mindspore.nn."):
        return ("mindspore.nn", "mindspore")
    return ("mindspore",)


def _modules() -> dict[str, types.ModuleType]:
    found: dict[str, types.ModuleType] = {}
    for name in SOURCES:
        module = importlib.import_module(name)
        found[name] = module
        for info in pkgutil.walk_packages(getattr(module, "__path__", []), name + "."):
            if "._" in info.name:
                continue
            try:
                found[info.name] = importlib.import_module(info.name)
            except Exception:  # noqa: BLE001 - a submodule that does not import is not a spelling
                continue
    return found


def reexports() -> dict[str, dict[str, list[str]]]:
    table: dict[str, dict[str, list[str]]] = {}
    for source, module in sorted(_modules().items()):
        for name in getattr(module, "__all__", None) or dir(module):
            if not isinstance(name, str):
                continue  # some of MindSpore's `__all__` lists hold classes
            obj = getattr(module, name, None)
            if name.startswith("_") or obj is None or isinstance(obj, (types.ModuleType, __future__._Feature)):
                continue
            for target in _targets(source):
                if getattr(importlib.import_module(target), name, None) is obj:
                    table.setdefault(source, {}).setdefault(target, []).append(name)
                    break
    return {s: {t: sorted(set(ns)) for t, ns in ts.items()} for s, ts in table.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--write", action="store_true", help="write the table instead of diffing it")
    args = parser.parse_args()
    warnings.filterwarnings("ignore")
    derived = reexports()
    if args.write:
        data = {"_about": ABOUT, "mindspore": mindspore.__version__, "modules": derived}
        OUT.write_text(json.dumps(data, indent=0, sort_keys=True) + "\n")
        print(sum(len(ns) for ts in derived.values() for ns in ts.values()), "names ->", OUT)
        return
    stored = json.loads(OUT.read_text())["modules"]
    flat = lambda t: {f"{s}.{n}" for s, ts in t.items() for ns in ts.values() for n in ns}  # noqa: E731
    print("derived, not stored:", sorted(flat(derived) - flat(stored)))
    print("stored, not derived:", sorted(flat(stored) - flat(derived)))


if __name__ == "__main__":
    main()
