"""Cyclic garbage collection in the language server's worker, done between edits.

The worker keeps every open document's trees, chunks and diagnostics alive between edits:
hundreds of thousands of objects for a 5,000-line file. An analysis allocates tens of
thousands more, so with automatic collection every edit paid a young-generation pass over
them (15-30 ms on a busy machine) and every few edits a full pass over the whole heap
(0.3-0.5 s), inside the analysis or while its result was encoded. The worker therefore
turns automatic collection off (`start`) and collects here instead, on a timer armed when
a task ends: the young generations shortly after each task, the whole heap after every
`full_every` of them. A task that starts first cancels the pending collection (it waits
at most for one collection already under way); tasks arriving back to back, never idle,
collect the young generations after every `MAX_WITHOUT` of them (the whole heap waits for
an idle moment).
"""

from __future__ import annotations

import functools
import gc
import threading
from collections.abc import Callable
from typing import Any, TypeVar, cast

F = TypeVar("F", bound=Callable[..., Any])

#: Seconds after a task before its garbage is collected (an editor sends the next change
#: of a burst of keystrokes within this, and that change's analysis goes first).
DELAY = 0.05
#: Every this many collections, the whole heap (the others: the young generations only).
FULL_EVERY = 20
#: Tasks ending back to back without an idle moment between them: collect after this many.
MAX_WITHOUT = 10


class IdleCollector:
    """Collects the worker's cyclic garbage when no task runs."""

    def __init__(self, delay: float = DELAY, full_every: int = FULL_EVERY) -> None:
        self.delay = delay
        self.full_every = full_every
        self._lock = threading.Lock()
        self._timer: threading.Timer | None = None
        self._busy = 0
        self._count = 0
        self._since = 0  # tasks ended since the last collection
        self.started = False

    def start(self) -> None:
        """From now on collect only here (the worker process's initializer calls this)."""
        gc.disable()
        self.started = True

    def task_started(self) -> None:
        with self._lock:
            self._busy += 1
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None

    def task_done(self) -> None:
        with self._lock:
            self._busy = max(self._busy - 1, 0)
            if not self.started or self._busy:
                return
            self._since += 1
            if self._since < MAX_WITHOUT:
                timer = threading.Timer(self.delay, self._collect)
                timer.daemon = True
                self._timer = timer
                timer.start()
                return
            # tasks back to back, never idle: the young generations now (the whole heap
            # waits for an idle moment: a pass over it is what must not hold an edit up)
            self._timer = None
            self._since = 0
        gc.collect(1)

    def _collect(self) -> None:
        with self._lock:
            if self._busy or self._timer is None or threading.current_thread() is not self._timer:
                return
            self._timer = None
            full = self._next()
        _run(full)  # outside the lock: a task arriving meanwhile waits for this pass only

    def _next(self) -> bool:
        """Count a collection; is it a full one?"""
        self._since = 0
        self._count += 1
        return self._count % self.full_every == 0


def _run(full: bool) -> None:
    gc.collect() if full else gc.collect(1)


#: The worker process's collector.
COLLECTOR = IdleCollector()


def task(fn: F) -> F:
    """A worker task: no collection runs while it does, and one follows when it ends."""

    @functools.wraps(fn)
    def run(*args: Any, **kw: Any) -> Any:
        COLLECTOR.task_started()
        try:
            return fn(*args, **kw)
        finally:
            COLLECTOR.task_done()

    return cast(F, run)


__all__ = ["COLLECTOR", "IdleCollector", "task"]
