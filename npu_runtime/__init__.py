"""Ascend Lens's emulated Ascend runtime: AscendCL semantics, real ACL error codes, NPU numerics."""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    # The `dump` package shares the function's name; tell type checkers which one
    # `npu_runtime.dump(...)` means (at run time the package is callable too).
    from npu_runtime.dump.session import dump as dump

# Public names loaded on first use, so `import npu_runtime` stays cheap (name -> module).
_LAZY: dict[str, str] = {
    "profile": "npu_runtime.profiler.session",
    "Profiler": "npu_runtime.profiler.session",
    "Tensor": "npu_runtime.tensor",
    "memory_allocated": "npu_runtime.tensor",
    "memory_reserved": "npu_runtime.tensor",
    "empty_cache": "npu_runtime.tensor",
    "set_check_numerics": "npu_runtime.numerics",
    "set_numerics": "npu_runtime.numerics",
    "step": "npu_runtime.steps",
    "dump": "npu_runtime.dump",  # the package itself is callable: dump(out_dir, level)
    "Dumper": "npu_runtime.dump.session",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'npu_runtime' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
