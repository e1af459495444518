"""Cyclic garbage collection in the language server's worker, done between edits.

The worker keeps every open document's trees, chunks and diagnostics alive between edits:
hundreds of thousands of objects for a 5,000-line file. An analysis allocates tens of
thousands more, so with automatic collection every edit paid a young-generation pass over
them and every few edits a full pass over the whole heap (0.1-0.5 s for a 5,000-line
file), inside the analysis or while its result was encoded. The worker therefore turns
automatic collection off (`start`) and collects here instead:

- when a task ends, the young generations: right away if the task allocated a lot (an
  opened file: the pass is long and would hold up the next change if deferred), else on a
  timer shortly after (`DELAY`), so that a burst of keystrokes goes first;
- the whole heap only after the worker has been idle for `FULL_DELAY` and at least
  `FULL_EVERY` tasks ran since the last full pass (a pause in typing, not between two
  keystrokes).

A task that starts cancels the pending collections (it waits at most for one already under
way); tasks arriving back to back, never idle, collect the young generations after every
`MAX_WITHOUT` of them.
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
#: Seconds of idleness before a pass over the whole heap.
FULL_DELAY = 1.0
#: Tasks between two passes over the whole heap, at least.
FULL_EVERY = 20
#: Tasks ending back to back without an idle moment between them: collect after this many.
MAX_WITHOUT = 10
#: Objects allocated (and alive) since the last collection above which a task's end collects
#: at once: opening a file of a few thousand lines allocates ~100,000; an edit ~100-2,000.
INLINE_YOUNG = 50_000


class IdleCollector:
    """Collects the worker's cyclic garbage when no task runs."""

    def __init__(
        self,
        delay: float = DELAY,
        full_every: int = FULL_EVERY,
        full_delay: float = FULL_DELAY,
    ) -> None:
        self.delay = delay
        self.full_every = full_every
        self.full_delay = full_delay
        self._lock = threading.Lock()
        self._timer: threading.Timer | None = None
        self._busy = 0
        self._since = 0  # tasks ended since the last collection
        self._since_full = 0  # tasks ended since the last pass over the whole heap
        self.started = False

    def start(self) -> None:
        """From now on collect only here (the worker process's initializer calls this)."""
        gc.disable()
        self.started = True

    def task_started(self) -> None:
        with self._lock:
            self._busy += 1
            self._cancel()

    def task_done(self) -> None:
        with self._lock:
            self._busy = max(self._busy - 1, 0)
            if not self.started or self._busy:
                return
            self._since += 1
            self._since_full += 1
            young = gc.get_count()[0]
            if young < INLINE_YOUNG and self._since < MAX_WITHOUT:
                self._arm(self.delay, self._collect_young)
                return
            # a task that allocated a lot, or tasks back to back: the young generations now
            self._since = 0
        gc.collect(1)
        with self._lock:
            if not self._busy and self._since_full >= self.full_every:
                self._arm(self.full_delay, self._collect_full)

    def _arm(self, delay: float, run: Callable[[], None]) -> None:
        self._cancel()
        timer = threading.Timer(delay, run)
        timer.daemon = True
        self._timer = timer
        timer.start()

    def _cancel(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _mine(self) -> bool:
        """Is the calling timer the armed one, with no task running? (Under the lock.)"""
        return not self._busy and self._timer is threading.current_thread()

    def _collect_young(self) -> None:
        with self._lock:
            if not self._mine():
                return
            self._timer = None
            self._since = 0
        gc.collect(1)  # outside the lock: a task arriving meanwhile waits for this pass only
        with self._lock:
            if not self._busy and self._timer is None and self._since_full >= self.full_every:
                self._arm(self.full_delay, self._collect_full)

    def _collect_full(self) -> None:
        with self._lock:
            if not self._mine():
                return
            self._timer = None
            self._since = self._since_full = 0
        gc.collect()


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
