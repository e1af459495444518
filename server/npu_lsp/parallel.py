"""Worker processes that keep state between the phases of one `check` run.

A `Pool` forks `jobs` workers once; each runs `handler(command, payload)` on what it is
sent and keeps whatever the handler keeps (the syntax trees of its files, so a file parsed
to be summarised is not parsed again to be checked). Items are spread over the workers in
a fixed way and sent in batches, so the caller can report progress as batches finish;
results come back keyed by item, so the order they arrive in never shows in the output.

Forking shares the run's inputs (file contents, settings) with the workers without copying
them through pipes. Where `fork` is not available, or with one job, everything runs in this
process through the same handler, which gives the same results by construction.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import traceback
from collections.abc import Callable, Sequence
from multiprocessing.connection import Connection, wait
from typing import Any

Handler = Callable[[str, Any], Any]


class WorkerFailed(Exception):
    """A worker raised or died; the message says which and why."""


def default_jobs() -> int:
    """All the cores this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def can_fork() -> bool:
    return "fork" in multiprocessing.get_all_start_methods()


class Pool:
    """`jobs` forked workers running `handler`, or this process when `jobs` is 1."""

    def __init__(self, jobs: int, handler: Handler) -> None:
        self.handler = handler
        self.jobs = max(1, jobs) if can_fork() else 1
        self._conns: list[Connection] = []
        self._procs: list[Any] = []
        if self.jobs > 1:
            ctx = multiprocessing.get_context("fork")
            for _ in range(self.jobs):
                parent, child = ctx.Pipe()
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

    def broadcast(self, command: str, payload: Any) -> list[Any]:
        """Run `command` with `payload` on every worker; their results in worker order."""
        if self.jobs == 1:
            return [self.handler(command, payload)]
        for conn in self._conns:
            conn.send((command, payload))
        return [self._receive(i) for i in range(len(self._conns))]

    def scatter(self, command: str, payloads: Sequence[Any]) -> list[Any]:
        """Run `command` with `payloads[w]` on worker `w`; their results in worker order."""
        if self.jobs == 1:
            return [self.handler(command, payloads[0])]
        for conn, payload in zip(self._conns, payloads, strict=True):
            conn.send((command, payload))
        return [self._receive(i) for i in range(len(self._conns))]

    def run(
        self,
        command: str,
        shards: Sequence[Sequence[Any]],
        batch: int,
        done: Callable[[list[Any]], None],
    ) -> None:
        """Run `command` over `shards[w]` on worker `w`, `batch` items per message; `done`
        gets each batch's result list as it arrives (in this process, in order)."""
        if self.jobs == 1:
            for shard in shards:
                for start in range(0, len(shard), batch):
                    done(self.handler(command, list(shard[start : start + batch])))
            return
        pending = {
            w: [list(s[i : i + batch]) for i in range(0, len(s), batch)]
            for w, s in enumerate(shards)
        }
        busy: dict[Any, int] = {}
        for w, conn in enumerate(self._conns):
            if pending.get(w):
                conn.send((command, pending[w].pop(0)))
                busy[conn] = w
        while busy:
            for ready in wait(list(busy)):
                w = busy.pop(ready)
                conn = self._conns[w]
                done(self._receive(w))
                if pending.get(w):
                    conn.send((command, pending[w].pop(0)))
                    busy[conn] = w

    def _receive(self, w: int) -> Any:
        try:
            ok, value = self._conns[w].recv()
        except (EOFError, OSError) as exc:
            code = self._procs[w].exitcode
            raise WorkerFailed(f"worker {w + 1} stopped (exit code {code}): {exc}") from None
        if not ok:
            raise WorkerFailed(f"worker {w + 1} failed: {value}")
        return value


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
            reply = (False, traceback.format_exc(limit=8))
        try:
            conn.send(reply)
        except (OSError, KeyboardInterrupt):
            return
