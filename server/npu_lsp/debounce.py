"""Per-key debouncing for asyncio: a burst of calls for one document runs the job once.

`Debouncer.schedule(key, job)` cancels the pending (not yet started) run for `key` and starts
a new wait; only the last call of a burst runs. A run already executing is not interrupted,
but its result is the caller's to drop when stale (the server compares document versions).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

log = logging.getLogger(__name__)


class Debouncer:
    """Run the latest job per key after `delay` seconds of quiet."""

    def __init__(self, delay: float) -> None:
        self.delay = delay
        self._pending: dict[str, asyncio.Task[None]] = {}

    def schedule(
        self, key: str, job: Callable[[], Awaitable[None]], delay: float | None = None
    ) -> asyncio.Task[None]:
        """(Re)start the wait for `key` (`delay` overrides the default once); the previous
        pending run for it is cancelled."""
        previous = self._pending.get(key)
        if previous is not None and not previous.done():
            previous.cancel()
        wait = self.delay if delay is None else delay
        task = asyncio.get_running_loop().create_task(self._run(key, job, wait))
        self._pending[key] = task
        return task

    def cancel(self, key: str) -> None:
        """Drop the pending run for `key` (document closed)."""
        task = self._pending.pop(key, None)
        if task is not None and not task.done():
            task.cancel()

    async def _run(self, key: str, job: Callable[[], Awaitable[None]], delay: float) -> None:
        try:
            if delay > 0:
                await asyncio.sleep(delay)
            await job()
        except asyncio.CancelledError:
            raise
        except Exception:  # a failing job must not take the server down with it
            log.exception("debounced job for %s failed", key)
        finally:
            if self._pending.get(key) is asyncio.current_task():
                del self._pending[key]
