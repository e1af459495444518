"""The kernel's link to the runtime: lazy, hooked in on first import, reset on restart.

Nothing here imports the runtime until user code has; `loaded()` tells the magics and
the state comm whether there is any state to show yet.
"""

from __future__ import annotations

import os
import sys
import threading
from types import ModuleType
from typing import Any

# The runtime reads these when it is first imported (npu_runtime.core.runtime), so the
# kernelspec's --device/--devices apply without importing it at kernel start.
DEVICE_ENV = "NPU_DEVICE"
DEVICES_ENV = "NPU_DEVICES"


class RuntimeSession:
    """Device options, the error listener and the failures seen in the running cell."""

    def __init__(self, device: str, devices: int) -> None:
        self.device = device
        self.devices = devices
        os.environ[DEVICE_ENV] = device
        os.environ[DEVICES_ENV] = str(devices)
        self._hooks: ModuleType | None = None
        self._lock = threading.Lock()
        self._cell_errors: list[Any] = []
        self.all_errors: list[Any] = []  # every failure since the last reset, for %npu
        self._last: Any = None  # npu_runtime.errors.explain.LastError once attached

    # Runtime access --------------------------------------------------------------------
    @staticmethod
    def loaded() -> bool:
        """True once user code has started the runtime (nothing to show before that)."""
        return "npu_runtime.core.runtime" in sys.modules

    @staticmethod
    def runtime() -> Any:
        from npu_runtime.core.runtime import get_runtime

        return get_runtime()

    def attach(self, hooks: ModuleType) -> None:
        """Called when npu_runtime.core.hooks is first imported."""
        from npu_runtime.errors.explain import LastError

        self._hooks = hooks
        hooks.add_error_listener(self._on_error)
        self._last = LastError()
        hooks.add_error_listener(self._last)

    def _on_error(self, err: Any) -> None:
        with self._lock:
            self._cell_errors.append(err)
            self.all_errors.append(err)
            del self.all_errors[:-200]  # bounded: a failing loop must not grow memory

    # Per cell --------------------------------------------------------------------------
    def begin_cell(self) -> None:
        with self._lock:
            self._cell_errors = []

    def end_cell(self) -> list[Any]:
        with self._lock:
            errors, self._cell_errors = self._cell_errors, []
        return errors

    def explain(self, exc: BaseException, place: Any = str) -> str:
        """What the last failing ACL call's code means, when `exc` names that code (else "")."""
        if self._last is None or self._last.error is None:
            return ""
        from npu_runtime.errors.explain import explain

        return explain(exc, self._last.error, place)

    # Configuration and reset -----------------------------------------------------------
    def configure(self, device: str, devices: int) -> None:
        """Switch the emulated devices (takes effect through a runtime reset)."""
        from npu_runtime.devices import get_profile

        get_profile(device)  # raises ValueError naming the known profiles
        self.device, self.devices = device, devices
        os.environ[DEVICE_ENV] = device
        os.environ[DEVICES_ENV] = str(devices)
        self.reset()
        if self.loaded():
            self.runtime().configure(device, devices)

    def reset(self) -> None:
        """Free all device state; the next runtime call starts clean."""
        with self._lock:
            self._cell_errors = []
            self.all_errors = []
        if self._last is not None:
            self._last.clear()
        if self.loaded():
            self.runtime().reset()

    def snapshot(self) -> dict[str, Any]:
        """Devices, memory and streams as JSON (see docs/kernel.md); cheap when not started."""
        from npu_runtime.state import snapshot

        return snapshot(self)
