"""Tie a child process's life to its parent's: when the parent dies, however, so does the child.

A pool worker blocks on a queue whose pipe it holds both ends of, so it never sees its
server go; after `kill -9` of the server it would run on with parent 1 (holding whatever
memory the file it was analysing took), and keep the multiprocessing resource tracker alive.
On Linux the kernel delivers SIGKILL at the parent's death (PR_SET_PDEATHSIG); everywhere, a
daemon thread also polls the parent id, for systems without it.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
import threading
import time
from collections.abc import Callable

PR_SET_PDEATHSIG = 1
POLL_S = 0.5


def tie_to_parent(parent_pid: int | None = None) -> None:
    """Die when the parent process does; `parent_pid` is the parent we must outlive none of
    (default: the current one). Exits at once if that parent is already gone."""
    parent = os.getppid() if parent_pid is None else parent_pid
    if os.getppid() == parent:
        if sys.platform.startswith("linux"):
            _death_signal(signal.SIGKILL)
        if os.getppid() != parent:  # the parent died before the signal was armed
            os._exit(1)
        watch = _parent_is
    elif _exists(parent):  # started through an intermediary (forkserver): watch the pid
        watch = _exists
    else:
        os._exit(1)
    threading.Thread(target=_watch, args=(watch, parent), name="lifeline", daemon=True).start()


def _death_signal(sig: int) -> bool:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(PR_SET_PDEATHSIG, int(sig), 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


def _parent_is(pid: int) -> bool:
    return os.getppid() == pid


def _exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _watch(alive: Callable[[int], bool], parent: int) -> None:
    while alive(parent):
        time.sleep(POLL_S)
    os._exit(1)
