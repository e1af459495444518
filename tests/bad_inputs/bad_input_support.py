"""Shared helpers of the bad-input suite: the CLI as a subprocess, and process-tree checks."""

from __future__ import annotations

import ctypes
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterable
from pathlib import Path

import psutil
import pytest

# The console script next to this interpreter: what a user runs.
ASCEND_LENS = str(Path(sys.executable).with_name("ascend-lens"))
HERE = Path(__file__).parent


def run(*args: str, timeout: float = 60, **kwargs: object) -> subprocess.CompletedProcess[str]:
    """`ascend-lens ARGS...`, its output captured as text."""
    return subprocess.run(
        [ASCEND_LENS, *args], capture_output=True, text=True, timeout=timeout, **kwargs
    )


def without_root_override() -> Callable[[], None] | None:
    """A preexec_fn under which even root is refused by file permissions.

    As root, mode 000 hides nothing; dropping CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH from
    the bounding set (kept across exec) makes permissions apply. None when not root."""
    if os.geteuid() != 0:
        return None

    def drop() -> None:
        libc = ctypes.CDLL(None, use_errno=True)
        for cap in (1, 2):  # CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH
            if libc.prctl(24, cap, 0, 0, 0) != 0:  # PR_CAPBSET_DROP
                raise OSError(ctypes.get_errno(), "PR_CAPBSET_DROP")

    probe = subprocess.run(["true"], preexec_fn=_try(drop), capture_output=True)
    if probe.returncode != 0:
        pytest.skip("running as root without CAP_SETPCAP: cannot make permissions apply")
    return drop


def _try(fn: Callable[[], None]) -> Callable[[], None]:
    def wrapped() -> None:
        try:
            fn()
        except OSError:
            os._exit(3)

    return wrapped


def tree(pid: int) -> list[psutil.Process]:
    """`pid`'s live descendants."""
    try:
        return psutil.Process(pid).children(recursive=True)
    except psutil.NoSuchProcess:
        return []


def still_running(processes: Iterable[psutil.Process], timeout: float = 10.0) -> list[str]:
    """Wait up to `timeout` for `processes` to end; descriptions of those still running."""
    deadline = time.monotonic() + timeout
    left = list(processes)
    while True:
        left = [p for p in left if _alive(p)]
        if not left or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    return [f"{p.pid} {' '.join(command_line(p))[:120]}" for p in left]


def _alive(p: psutil.Process) -> bool:
    try:
        return p.is_running() and p.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def command_line(p: psutil.Process) -> list[str]:
    """`p`'s command line; ["?"] for a process that ended (or is a zombie) meanwhile."""
    try:
        return p.cmdline()
    except psutil.Error:
        return ["?"]
