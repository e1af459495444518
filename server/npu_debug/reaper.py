"""The process that owns a debug session's process tree, so that nothing outlives the session.

`python -m npu_debug.reaper CONTROL_FD -- COMMAND...` runs COMMAND (debugpy's adapter, which
starts its launcher, which starts the debuggee) as its child and becomes the subreaper of
everything below it (Linux: PR_SET_CHILD_SUBREAPER), so a process the debuggee started in a
session of its own, or one whose parent died, is still found below it. When the adapter
closes the control pipe (at the end of a session, when debugpy does not answer, or because the
adapter was killed: the kernel closes a dead process's pipes) or COMMAND exits, every
process below the reaper is killed and reaped, then the reaper exits.

Without this, a debuggee child that keeps stdout open leaves debugpy waiting for EOF, and
killing our adapter leaves debugpy's adapter and launcher running.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import subprocess
import sys
import threading
import time

PR_SET_CHILD_SUBREAPER = 36


def become_subreaper() -> bool:
    """Adopt orphaned descendants (Linux); False where the system has no such thing."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


def descendants(root: int) -> list[int]:
    """Every process below `root`, from the kernel's process table (Linux /proc)."""
    children: dict[int, list[int]] = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return []
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        # "pid (comm) state ppid ...": comm may hold spaces or parentheses
        fields = stat[stat.rfind(b")") + 2 :].split()
        if len(fields) > 1:
            children.setdefault(int(fields[1]), []).append(int(entry))
    out: list[int] = []
    todo = [root]
    while todo:
        for pid in children.get(todo.pop(), []):
            out.append(pid)
            todo.append(pid)
    return out


def kill_below(root: int, child: subprocess.Popen[bytes]) -> None:
    """SIGKILL everything below `root` until nothing is left, reaping as we go."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(child.pid, signal.SIGKILL)  # without /proc, the child's group at least
    for _ in range(50):
        pids = descendants(root)
        if not pids:
            break
        for pid in pids:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        _reap_all()
        time.sleep(0.02)
    child.poll()


def _reap_all() -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def main(argv: list[str]) -> int:
    if len(argv) < 3 or argv[1] != "--":
        sys.stderr.write("usage: python -m npu_debug.reaper CONTROL_FD -- COMMAND...\n")
        return 2
    control = int(argv[0])
    become_subreaper()
    # The child gets our stdin/stdout (the adapter's pipes); we let go of them, so the
    # adapter sees EOF as soon as the child is gone.
    child = subprocess.Popen(argv[2:], start_new_session=True)
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    os.dup2(devnull, 1)
    os.close(devnull)
    done = threading.Event()

    def watch_control() -> None:
        with contextlib.suppress(OSError):
            while os.read(control, 4096):
                pass
        done.set()

    threading.Thread(target=watch_control, daemon=True).start()
    signal.signal(signal.SIGTERM, lambda *_: done.set())
    # Ctrl-C or a hang-up aimed at the adapter's group is not ours to act on: the control
    # pipe alone decides when the tree goes.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if hasattr(signal, "SIGHUP"):
        signal.signal(signal.SIGHUP, signal.SIG_IGN)
    while not done.is_set() and child.poll() is None:
        done.wait(0.1)
        _reap_all()  # orphans adopted from the debuggee's tree
    kill_below(os.getpid(), child)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
