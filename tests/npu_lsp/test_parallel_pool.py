"""`parallel.Pool.share`: every batch answered once, by whichever worker was free, with
batches sent ahead and replies larger than a default socket buffer; forked workers see
what this process built before the pool was made (nothing is sent to them)."""

from __future__ import annotations

import os
from typing import Any

import pytest

from npu_lsp import parallel

#: built before a pool is made: its workers inherit it
_STATE: dict[int, int] = {}


def _handler(command: str, payload: Any) -> Any:
    if command == "square":
        # a reply of about 300 KB per batch: more than a default socket buffer holds
        return [(i, _STATE[i], os.getpid(), b"x" * 20_000) for i in payload]
    raise ValueError(command)


@pytest.mark.skipif(not parallel.can_fork(), reason="needs fork")
@pytest.mark.parametrize("jobs", [1, 2, 3])
def test_share_answers_every_batch_once(jobs: int) -> None:
    _STATE.clear()
    _STATE.update((i, i * i) for i in range(200))
    batches: list[list[Any]] = []
    again: list[list[Any]] = []
    with parallel.Pool(jobs, _handler) as pool:
        pool.share("square", list(range(200)), 16, batches.append)
        # the pool still answers after sharing (nothing was left queued)
        pool.share("square", [7], 16, again.append)
    _STATE.clear()
    got = [item for batch in batches for item in batch]
    assert sorted((i, sq) for i, sq, _pid, _pad in got) == [(i, i * i) for i in range(200)]
    assert [len(batch) for batch in batches].count(16) == 12
    assert [[(i, sq) for i, sq, _pid, _pad in batch] for batch in again] == [[(7, 49)]]
    # a batch is answered by one worker; every worker got some (each is sent batches ahead)
    for batch in batches:
        assert len({pid for *_, pid, _pad in batch}) == 1
    pids = {pid for *_, pid, _pad in got}
    assert len(pids) == jobs and os.getpid() in pids


@pytest.mark.skipif(not parallel.can_fork(), reason="needs fork")
def test_a_worker_pipe_asks_for_a_large_buffer() -> None:
    import socket

    with parallel.Pool(2, _handler) as pool:
        conn = pool._conns[0]
        with socket.socket(fileno=os.dup(conn.fileno())) as sock:
            size = sock.getsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF)
    # Linux doubles what it is asked and caps it at net.core.wmem_max (212,992 bytes by
    # default, where the request cannot be met); a default buffer is smaller than both
    assert size >= min(2 * parallel._BUFFER, 2 * _wmem_max())


def _wmem_max() -> int:
    try:
        with open("/proc/sys/net/core/wmem_max") as fh:
            return int(fh.read())
    except OSError:
        pytest.skip("no /proc/sys/net/core/wmem_max")
    raise AssertionError  # unreachable: for mypy's return check


def test_one_job_imports_no_multiprocessing() -> None:
    """A pool of one job (edits, small projects, `check FILE`, `--jobs 1`) runs everything
    here: `multiprocessing` (with `socket`, `selectors`, `subprocess`) is not imported."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from npu_lsp import parallel\n"
        "got = []\n"
        "with parallel.Pool(1, lambda c, p: [x * 2 for x in p]) as pool:\n"
        "    pool.share('double', list(range(40)), 16, got.append)\n"
        "assert [x for b in got for x in b] == [x * 2 for x in range(40)], got\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('multiprocessing', 'socket')))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=os.environ.copy()
    )
    assert out.stdout.strip() == "[]", out.stdout + out.stderr
