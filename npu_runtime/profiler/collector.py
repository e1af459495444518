"""Collect the runtime's work records while profiling is on.

The listener runs inside every launch, so it does as little as possible: stamp the
step (and, when asked, the full user stack) and append. Everything else happens when
the profile is written.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from npu_runtime.records import EventWait, WorkRecord
from npu_runtime.sites import user_stack

if TYPE_CHECKING:
    from npu_runtime.core.runtime import Runtime


class Collector:
    """Records work and event waits between `attach()` and `detach()`, tagged by step."""

    def __init__(self, *, stack: bool = False) -> None:
        self.records: list[WorkRecord] = []
        self.waits: list[EventWait] = []
        # Device memory in use when each record was enqueued (parallel to `records`), for
        # torch_npu's memory_record.csv.
        self.mem_used: list[int] = []
        # (len(records), device) at every aclrtSynchronizeDevice: the steps of a run that
        # marks none (a pyACL script's step is the work up to its device sync).
        self.syncs: list[tuple[int, int]] = []
        self.step_no = 0
        self.stack = stack
        self._lock = threading.Lock()
        self._attached = False
        self.on_work: Callable[[WorkRecord], None] = self._on_work_stack if stack else self._on_work
        # hooks removes listeners by identity, and each `self.on_wait` access makes a new
        # bound method: keep the one we registered.
        self._wait_listener: Callable[[EventWait], None] = self.on_wait
        self._sync_listener: Callable[[int], None] = self.on_sync

    # Listeners -------------------------------------------------------------------
    def _on_work(self, rec: WorkRecord) -> None:
        rec.step = self.step_no
        self.mem_used.append(_used(rec.device))
        self.records.append(rec)  # list.append is atomic under the GIL

    def _on_work_stack(self, rec: WorkRecord) -> None:
        rec.step = self.step_no
        if rec.stack is None:
            # Listeners run synchronously inside the launch, so the user's frames are
            # still on the stack; our own frames are skipped by user_stack.
            rec.stack = user_stack()
        self.mem_used.append(_used(rec.device))
        self.records.append(rec)

    def on_sync(self, device: int) -> None:
        self.syncs.append((len(self.records), device))

    def on_wait(self, wait: EventWait) -> None:
        if wait.step != self.step_no:
            wait = dataclasses.replace(wait, step=self.step_no)
        self.waits.append(wait)

    # Control ---------------------------------------------------------------------
    def step(self) -> int:
        """Start the next step; returns its number (steps count from 0)."""
        with self._lock:
            self.step_no += 1
            return self.step_no

    def attach(self) -> None:
        """Start listening to the runtime (idempotent)."""
        if self._attached:
            return
        from npu_runtime.core import hooks

        hooks.add_work_listener(self.on_work)
        hooks.add_wait_listener(self._wait_listener)
        hooks.add_sync_listener(self._sync_listener)
        self._attached = True

    def detach(self) -> None:
        """Stop listening (idempotent); what was collected stays."""
        if not self._attached:
            return
        from npu_runtime.core import hooks

        hooks.remove_work_listener(self.on_work)
        hooks.remove_wait_listener(self._wait_listener)
        hooks.remove_sync_listener(self._sync_listener)
        self._attached = False

    @property
    def attached(self) -> bool:
        """Whether the collector is listening to the runtime right now."""
        return self._attached


# The runtime, bound on the first record: importing it at module level would load numpy
# for every profiler import, and a function-level import costs a sys.modules look-up per op.
_runtime: Runtime | None = None


def _used(device: int) -> int:
    """Bytes allocated on `device` right now (0 once the device is gone)."""
    global _runtime
    rt = _runtime
    if rt is None:
        from npu_runtime.core.runtime import get_runtime

        rt = _runtime = get_runtime()  # always the same object (reset() clears it in place)
    dev = rt.devices.get(device)
    return dev.memory.used if dev is not None else 0
