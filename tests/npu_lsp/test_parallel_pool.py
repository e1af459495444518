"""`parallel.Pool.run`: every batch of every shard answered once, by the worker it was
given to, whatever the order replies arrive in; with batches sent ahead and replies
larger than a default socket buffer."""

from __future__ import annotations

import os
from typing import Any

import pytest

from npu_lsp import parallel


def _handler(command: str, payload: Any) -> Any:
    if command == "square":
        # a reply of about 300 KB per batch: more than a default socket buffer holds
        return [(i, i * i, os.getpid(), b"x" * 20_000) for i in payload]
    if command == "pid":
        return os.getpid()
    raise ValueError(command)


@pytest.mark.skipif(not parallel.can_fork(), reason="needs fork")
@pytest.mark.parametrize("jobs", [1, 2, 3])
def test_run_answers_every_batch_once_from_its_worker(jobs: int) -> None:
    shards = [list(range(w, 200, jobs)) for w in range(jobs)]
    batches: list[list[Any]] = []
    with parallel.Pool(jobs, _handler) as pool:
        pids = pool.scatter("pid", [None] * jobs)
        pool.run("square", shards, 16, batches.append)
        # the pool still answers after a run (nothing left queued)
        assert pool.scatter("pid", [None] * jobs) == pids
    got = [item for batch in batches for item in batch]
    assert sorted((i, sq) for i, sq, _pid, _pad in got) == [(i, i * i) for i in range(200)]
    assert all(len(batch) <= 16 for batch in batches)
    for w, shard in enumerate(shards):
        assert {pid for i, _sq, pid, _pad in got if i in shard} == {pids[w]}
    # each worker's batches arrive in the order it was given them
    for w in range(jobs):
        mine = [i for i, _sq, pid, _pad in got if pid == pids[w]]
        assert mine == shards[w]


@pytest.mark.skipif(not parallel.can_fork(), reason="needs fork")
def test_a_worker_pipe_asks_for_a_large_buffer() -> None:
    import socket

    with parallel.Pool(2, _handler) as pool:
        conn = pool._conns[0]
        with socket.socket(fileno=os.dup(conn.fileno())) as sock:
            size = sock.getsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF)
    # Linux doubles what it is asked and caps it at net.core.wmem_max (212,992 bytes by
    # default, where the request cannot be met); a default buffer is smaller than both
    cap = _wmem_max()
    assert size >= min(2 * parallel._BUFFER, 2 * cap)


def _wmem_max() -> int:
    try:
        with open("/proc/sys/net/core/wmem_max") as fh:
            return int(fh.read())
    except OSError:
        pytest.skip("no /proc/sys/net/core/wmem_max")
