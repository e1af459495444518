"""Rule families. Importing this package registers every rule in `npu_lsp.registry.RULES`.

A family is a subpackage whose `__init__` imports its rule modules (one rule per module).
Add a family by appending its module name to `FAMILY_MODULES`.
"""

from __future__ import annotations

import importlib

FAMILY_MODULES: tuple[str, ...] = (
    "npu_lsp.rules.internal",
    "npu_lsp.rules.graphmode",
    "npu_lsp.rules.migration",
    "npu_lsp.rules.hccl",
)

for _name in FAMILY_MODULES:
    try:
        importlib.import_module(_name)
    except ModuleNotFoundError as _exc:  # a family still being written is simply absent
        if _exc.name != _name:
            raise
