"""Put the `acl` shim on sys.path and run callbacks when runtime modules first load.

The kernel must start as fast as plain ipykernel, so it imports no runtime module at
start. It still needs to hook the runtime (error listeners, the AclError traceback
handler) the moment user code imports it, in whichever cell that happens; a meta-path
finder that wraps the real loader gives exactly that moment.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any

Callback = Callable[[ModuleType], None]


def ensure_shim_on_path() -> str:
    """Append the shim directory to sys.path once, so `import acl` works in every cell."""
    from npu_runtime._shim import SHIM_DIR  # loads no runtime module

    if SHIM_DIR not in sys.path:
        sys.path.append(SHIM_DIR)
    return SHIM_DIR


class _Loader(importlib.abc.Loader):
    """Delegates to the real loader, then runs the callbacks for the loaded module."""

    def __init__(self, real: importlib.abc.Loader, callbacks: Sequence[Callback]) -> None:
        self._real = real
        self._callbacks: Sequence[Callback] = callbacks

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return self._real.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        self._real.exec_module(module)
        callbacks, self._callbacks = self._callbacks, ()  # once: a reload must not re-hook
        for callback in callbacks:
            callback(module)

    def __getattr__(self, name: str) -> Any:
        # get_source, get_resource_reader, is_package...: the real loader answers.
        return getattr(self._real, name)


class ImportWatcher(importlib.abc.MetaPathFinder):
    """Calls `callback(module)` right after a watched module is first imported."""

    def __init__(self) -> None:
        self._watched: dict[str, list[Callback]] = {}

    def watch(self, name: str, callback: Callback) -> None:
        module = sys.modules.get(name)
        if module is not None:  # already loaded (e.g. imported by a startup file)
            callback(module)
            return
        self._watched.setdefault(name, []).append(callback)
        if self not in sys.meta_path:
            sys.meta_path.insert(0, self)

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None,
        target: ModuleType | None = None,
    ) -> importlib.machinery.ModuleSpec | None:
        callbacks = self._watched.pop(fullname, None)
        if callbacks is None:
            return None
        if not self._watched:
            sys.meta_path.remove(self)
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(fullname, path, target)
            if spec is not None:
                if spec.loader is not None:
                    spec.loader = _Loader(spec.loader, callbacks)
                return spec
        return None

    def close(self) -> None:
        self._watched.clear()
        if self in sys.meta_path:
            sys.meta_path.remove(self)
