"""`npu_runtime.step()`: mark the end of a training step for every active profile and dump.

A script run under `ascend-lens run --profile DIR --dump DIR` has no handle on the sessions
the launcher started, yet its steps should split both the same way; this is how it says so.

    for batch in loader:
        train_step(batch)
        npu_runtime.step()
"""

from __future__ import annotations

import threading
from collections.abc import Callable

_lock = threading.Lock()
# Each active session's own step method; replaced, never mutated, so step() needs no lock.
_sessions: tuple[Callable[[], int], ...] = ()


def attach(step: Callable[[], int]) -> None:
    """Make `step` part of every `npu_runtime.step()` until `detach(step)`."""
    global _sessions
    with _lock:
        _sessions = (*_sessions, step)


def detach(step: Callable[[], int]) -> None:
    global _sessions
    with _lock:
        for i, s in enumerate(_sessions):
            if s == step:  # equality: bound methods are new objects on each access
                _sessions = _sessions[:i] + _sessions[i + 1 :]
                return


def step() -> int:
    """End the current step of every active profile and dump; returns how many were marked."""
    sessions = _sessions
    for s in sessions:
        s()
    return len(sessions)
