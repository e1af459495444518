"""msprobe-compatible precision dumps of every op's inputs and outputs (docs/interop.md).

`npu_runtime.dump(out_dir, level)` is the entry point. Because this package has the same
name, `npu_runtime.dump` is this module once anything imported it; the module is made
callable so that `npu_runtime.dump(...)` works whichever import happened first.
"""

from __future__ import annotations

import os
import sys
import types

from npu_runtime.dump.session import LEVELS, Dumper, dump

__all__ = ["LEVELS", "Dumper", "dump"]


class _CallableModule(types.ModuleType):
    def __call__(self, out_dir: str | os.PathLike[str], level: str = "statistics") -> Dumper:
        return dump(out_dir, level)


sys.modules[__name__].__class__ = _CallableModule
