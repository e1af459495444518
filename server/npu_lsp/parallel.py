"""Worker processes forked from this one to share a phase of a `check` run.

A `Pool` of `jobs` workers is this process (worker 0) and `jobs - 1` processes forked when
it is made: they inherit everything this process built before (the syntax trees of the
files, the summaries, the project-wide resolution), so none of it is pickled or sent, and
each runs `handler(command, payload)` on what it is given. `share` hands out batches of
items to whichever worker is free (this process runs its own batches between answering
the others), so the caller can report progress as batches finish; results come back
keyed by item, so the order they arrive in never shows in the output. Where `fork` is not
available, or with one job, everything runs in this process through the same handler,
which gives the same results by construction (worker 0 always runs that way).
"""

from __future__ import annotations

import contextlib
import os
from collections import deque
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

# `multiprocessing` is imported when a pool forks workers (with its `socket`, `selectors`
# and `subprocess`, about 10 ms of a run's start): `check` imports this module for
# `default_jobs` and `WorkerFailed` even when the cache answers and no pool is made, and
# a pool of one job (an edit, a small project, `check FILE`, `--jobs 1`) forks nothing.
if TYPE_CHECKING:
    from multiprocessing.connection import Connection

Handler = Callable[[str, Any], Any]

#: batches sent ahead to each forked worker (see `Pool.run`)
_AHEAD = 2
#: socket buffer of each end of a worker's pipe: a batch's reply (the summaries of 16
#: files are about 250 KB) is written at once instead of the worker waiting, blocked,
#: until this process reads it (Linux caps it at `net.core.wmem_max`/`rmem_max`)
_BUFFER = 4 * 1024 * 1024


class WorkerFailed(Exception):
    """A worker raised or died; the message says which and why."""


def default_jobs() -> int:
    """All the cores this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def can_fork() -> bool:
    import multiprocessing

    return "fork" in multiprocessing.get_all_start_methods()


class Pool:
    """`jobs` workers running `handler`: this process (worker 0) and `jobs - 1` forked ones."""

    def __init__(self, jobs: int, handler: Handler) -> None:
        self.handler = handler
        # (one job forks nothing: `multiprocessing` is not even imported)
        self.jobs = max(1, jobs) if jobs > 1 and can_fork() else 1
        #: the forked workers 1.. (index w - 1 for worker w)
        self._conns: list[Connection] = []
        self._procs: list[Any] = []
        if self.jobs > 1:
            import multiprocessing

            ctx = multiprocessing.get_context("fork")
            for _ in range(self.jobs - 1):
                parent, child = ctx.Pipe()
                _widen(parent)
                _widen(child)
                proc = ctx.Process(target=_serve, args=(child, handler), daemon=True)
                proc.start()
                child.close()
                self._conns.append(parent)
                self._procs.append(proc)

    def __enter__(self) -> Pool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        for conn in self._conns:
            with contextlib.suppress(OSError):
                conn.send(None)
            conn.close()
        for proc in self._procs:
            proc.join(timeout=5)
            if proc.is_alive():
                proc.kill()
                proc.join()
        self._conns, self._procs = [], []

    def share(
        self,
        command: str,
        items: Sequence[Any],
        batch: int,
        done: Callable[[list[Any]], None],
    ) -> None:
        """Run `command` over `items`, `batch` items per message, each batch on whichever
        worker is free first (this process included); `done` gets each batch's result
        list as it arrives (in this process)."""
        batches = deque(list(items[i : i + batch]) for i in range(0, len(items), batch))
        if self.jobs == 1:
            while batches:
                done(self.handler(command, batches.popleft()))
            return
        from multiprocessing.connection import wait

        # Each forked worker has up to `_AHEAD` batches queued: its next batch is waiting
        # when it finishes one, instead of waiting for this process to finish a batch of
        # its own and answer.
        queued = [0] * self.jobs
        by_conn: dict[Any, int] = {conn: w for w, conn in enumerate(self._conns, 1)}

        def send_next(w: int) -> None:
            while batches and queued[w] < _AHEAD:
                self._conns[w - 1].send((command, batches.popleft()))
                queued[w] += 1

        def collect(timeout: float | None) -> None:
            busy = [conn for conn, w in by_conn.items() if queued[w]]
            for ready in wait(busy, timeout):
                w = by_conn[ready]
                queued[w] -= 1
                done(self._receive(w))
                send_next(w)

        for w in range(1, self.jobs):
            send_next(w)
        while batches:  # worker 0's batches here, answering the others in between
            done(self.handler(command, batches.popleft()))
            collect(0)
        while any(queued):
            collect(None)

    def _receive(self, w: int) -> Any:
        """The reply of forked worker `w` (1..)."""
        try:
            ok, value = self._conns[w - 1].recv()
        except (EOFError, OSError) as exc:
            code = self._procs[w - 1].exitcode
            raise WorkerFailed(f"worker {w + 1} stopped (exit code {code}): {exc}") from None
        if not ok:
            raise WorkerFailed(f"worker {w + 1} failed: {value}")
        return value


def _widen(conn: Connection) -> None:
    """Ask for `_BUFFER` bytes of socket buffer on `conn` (best effort: the system may
    give less, or the connection may not be a socket)."""
    import socket

    fd = os.dup(conn.fileno())
    try:
        sock = socket.socket(fileno=fd)
    except OSError:
        os.close(fd)
        return
    with sock, contextlib.suppress(OSError):
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, _BUFFER)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, _BUFFER)


def _serve(conn: Connection, handler: Handler) -> None:
    """A worker's loop: run each (command, payload) and send back (ok, result)."""
    while True:
        try:
            message = conn.recv()
        except (EOFError, OSError, KeyboardInterrupt):
            return
        if message is None:
            return
        command, payload = message
        try:
            reply = (True, handler(command, payload))
        except KeyboardInterrupt:
            return
        except BaseException:
            import traceback

            reply = (False, traceback.format_exc(limit=8))
        try:
            conn.send(reply)
        except (OSError, KeyboardInterrupt):
            return
