"""`ascend-lens run --nproc N script.py`: one process per rank on this machine, like torchrun.

Each rank is `ascend-lens run script.py` in its own process (its own emulated device, its
own profile) with torchrun's variables set: RANK, WORLD_SIZE, LOCAL_RANK,
LOCAL_WORLD_SIZE, GROUP_RANK, GROUP_WORLD_SIZE, MASTER_ADDR and MASTER_PORT.
`--nnodes M --node-rank K` makes this launch one of M "machines" of a bigger job (ranks
K*N .. K*N+N-1), as torchrun's multi-node launch does.

Every line a rank prints comes out prefixed with `[rank<r>]: ` on the same stream. When a
rank fails, the others get a few seconds to report what they saw (a rank that skipped a
collective is named by the ranks waiting for it), then the launcher stops them: no
process outlives the launch. The exit status is the first failing rank's.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import IO

# Seconds the other ranks get to report after one failed, and to stop after SIGTERM.
GRACE_S = 5.0
KILL_AFTER_S = 3.0
DIST_OPTIONS = ("--nproc", "--nnodes", "--node-rank", "--master-addr", "--master-port")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("distributed (one process per rank, like torchrun)")
    group.add_argument("--nproc", type=int, metavar="N", help="start N ranks on this machine")
    group.add_argument(
        "--nnodes", type=int, default=1, metavar="M", help="machines in the job (default 1)"
    )
    group.add_argument(
        "--node-rank", type=int, default=0, metavar="K", help="this machine's index (default 0)"
    )
    group.add_argument(
        "--master-addr",
        default="127.0.0.1",
        metavar="ADDR",
        help="rank 0's host (default 127.0.0.1)",
    )
    group.add_argument(
        "--master-port",
        type=int,
        metavar="PORT",
        help="rendezvous port (default: a free port; required with --nnodes > 1)",
    )


def check_args(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    if args.nproc is None:
        for flag in ("nnodes", "node_rank"):
            if getattr(args, flag) != (1 if flag == "nnodes" else 0):
                parser.error(f"--{flag.replace('_', '-')} needs --nproc N")
        return
    if args.nproc < 1:
        parser.error("--nproc must be 1 or more")
    if args.nnodes < 1:
        parser.error("--nnodes must be 1 or more")
    if not 0 <= args.node_rank < args.nnodes:
        parser.error(f"--node-rank must be in 0..{args.nnodes - 1}")
    if args.nnodes > 1 and args.master_port is None:
        parser.error(
            "--master-port is required with --nnodes > 1 (every machine must use the same one)"
        )
    if args.master_port is not None and not 0 < args.master_port < 65536:
        parser.error("--master-port must be a TCP port (1-65535)")


def child_argv(parser: argparse.ArgumentParser, argv: Sequence[str], script: str) -> list[str]:
    """`argv` without the distributed options (everything after the script is kept as is)."""
    out: list[str] = []
    takes_value = {
        s: a.nargs != 0
        for a in parser._actions
        for s in a.option_strings  # noqa: SLF001
    }
    i = 0
    while i < len(argv):
        tok = argv[i]
        if tok == script or not tok.startswith("-"):
            out.extend(argv[i:])
            break
        name = tok.split("=", 1)[0]
        consumes = takes_value.get(name, False) and "=" not in tok
        if name not in DIST_OPTIONS:
            out.append(tok)
            if consumes and i + 1 < len(argv):
                out.append(argv[i + 1])
        i += 2 if consumes else 1
    return out


def _die_with_parent() -> None:
    """In the new rank, before exec: the kernel kills it if the launcher dies (even SIGKILL)."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):  # not Linux: the supervisor's own clean-up remains
        pass


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class _Rank:
    rank: int
    proc: subprocess.Popen[bytes]
    pumps: list[threading.Thread]


def _pump(src: IO[bytes], dst: IO[str], prefix: str, lock: threading.Lock) -> None:
    for raw in iter(src.readline, b""):
        line = raw.decode("utf-8", "replace")
        with lock:
            dst.write(prefix + (line if line.endswith("\n") else line + "\n"))
            dst.flush()
    src.close()


def launch(args: argparse.Namespace, argv: list[str]) -> int:
    """Start the ranks of this machine, relay their output, and return the job's status."""
    n, nnodes, node = args.nproc, args.nnodes, args.node_rank
    port = args.master_port or _free_port()
    world = n * nnodes
    lock = threading.Lock()
    ranks: list[_Rank] = []
    base = {k: v for k, v in os.environ.items()}
    for local in range(n):
        rank = node * n + local
        env = {
            **base,
            "RANK": str(rank), "WORLD_SIZE": str(world), "LOCAL_RANK": str(local),
            "LOCAL_WORLD_SIZE": str(n), "GROUP_RANK": str(node), "GROUP_WORLD_SIZE": str(nnodes),
            "ROLE_RANK": str(rank), "ROLE_WORLD_SIZE": str(world),
            "MASTER_ADDR": args.master_addr, "MASTER_PORT": str(port), "PYTHONUNBUFFERED": "1",
        }  # fmt: skip
        env.setdefault("OMP_NUM_THREADS", "1")  # as torchrun: N ranks share the cores
        proc = subprocess.Popen(
            [sys.executable, "-m", "npu_runtime.launcher", *argv],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,  # its own process group: stopping a rank stops its children
            preexec_fn=_die_with_parent,
        )
        pumps = [
            threading.Thread(target=_pump, args=(proc.stdout, sys.stdout, f"[rank{rank}]: ", lock), daemon=True),
            threading.Thread(target=_pump, args=(proc.stderr, sys.stderr, f"[rank{rank}]: ", lock), daemon=True),
        ]  # fmt: skip
        for t in pumps:
            t.start()
        ranks.append(_Rank(rank, proc, pumps))
    return _supervise(ranks, lock)


def _signal_all(ranks: list[_Rank], sig: int) -> None:
    for r in ranks:
        if r.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(r.proc.pid, sig)


def _supervise(ranks: list[_Rank], lock: threading.Lock) -> int:
    interrupted: list[int] = []

    def on_signal(signum: int, _frame: object) -> None:
        interrupted.append(signum)

    old = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    first: _Rank | None = None
    deadline: float | None = None
    stopped: list[int] = []
    try:
        while any(r.proc.poll() is None for r in ranks):
            if interrupted and deadline is None:
                deadline = time.monotonic()  # stop everyone now
            if first is None:
                first = next((r for r in ranks if r.proc.poll() not in (None, 0)), None)
                if first is not None:
                    deadline = time.monotonic() + GRACE_S
            if deadline is not None and time.monotonic() >= deadline:
                stopped = [r.rank for r in ranks if r.proc.poll() is None]
                _signal_all(ranks, signal.SIGTERM)
                end = time.monotonic() + KILL_AFTER_S
                while any(r.proc.poll() is None for r in ranks) and time.monotonic() < end:
                    time.sleep(0.05)
                _signal_all(ranks, signal.SIGKILL)
                for r in ranks:
                    r.proc.wait()
                break
            time.sleep(0.05)
    finally:
        for s, h in old.items():
            signal.signal(s, h)
        _signal_all(ranks, signal.SIGKILL)  # never leave a rank behind, whatever happened
    for r in ranks:
        r.proc.wait()
        for t in r.pumps:
            t.join(timeout=5)
    if interrupted:
        with lock:
            sys.stderr.write("ascend-lens: interrupted; all ranks stopped\n")
        return 130
    if first is None:
        first = next((r for r in ranks if r.proc.returncode != 0), None)
    if first is None:
        return 0
    code = first.proc.returncode
    how = f"exit code {code}" if code >= 0 else f"signal {signal.Signals(-code).name}"
    rest = f"; stopped rank(s) {', '.join(map(str, stopped))}" if stopped else ""
    with lock:
        sys.stderr.write(f"ascend-lens: rank {first.rank} failed ({how}){rest}\n")
    return code if code > 0 else 1
