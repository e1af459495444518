"""Debug one rank of a distributed job while the others run: the sibling ranks.

With `"nproc": N, "rank": r` in the launch configuration, rank r is the debuggee (under
debugpy, as any program) and the adapter starts the other N-1 ranks as plain
`ascend-lens run` processes with torchrun's variables, so `init_process_group` and every
collective find their peers. Their output reaches the editor as output events prefixed
`[rank<k>]: `; they are stopped (their whole process groups) when the session ends.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import threading
from collections.abc import Callable
from typing import IO

from npu_debug.config import LaunchConfig


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def rank_env(config: LaunchConfig, rank: int, port: int) -> dict[str, str]:
    """torchrun's variables for `rank` of this single-machine job."""
    n = config.nproc or 1
    return {
        "RANK": str(rank), "WORLD_SIZE": str(n), "LOCAL_RANK": str(rank),
        "LOCAL_WORLD_SIZE": str(n), "GROUP_RANK": "0", "GROUP_WORLD_SIZE": "1",
        "ROLE_RANK": str(rank), "ROLE_WORLD_SIZE": str(n),
        "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(port), "PYTHONUNBUFFERED": "1",
    }  # fmt: skip


class SiblingRanks:
    """The ranks the user is not debugging, run beside the debuggee."""

    def __init__(self, output: Callable[[str, str], None]) -> None:
        self._output = output  # (category, text) -> an output event
        self.procs: list[subprocess.Popen[bytes]] = []

    def start(self, config: LaunchConfig, port: int) -> None:
        assert config.nproc is not None and config.program is not None
        base = {**os.environ, **{k: v for k, v in config.env.items() if v is not None}}
        for k, v in config.env.items():
            if v is None:
                base.pop(k, None)
        for rank in range(config.nproc):
            if rank == config.rank:
                continue
            cmd = [*config.python, "-m", "npu_runtime.launcher", "--no-summary"]
            if config.device is not None:
                cmd += ["--device", config.device]
            if config.devices is not None:
                cmd += ["--devices", str(config.devices)]
            proc = subprocess.Popen(
                [*cmd, config.program, *config.args],
                cwd=config.cwd or os.getcwd(),
                env={**base, **rank_env(config, rank, port)},
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,
            )
            self.procs.append(proc)
            for stream, category in ((proc.stdout, "stdout"), (proc.stderr, "stderr")):
                threading.Thread(
                    target=self._pump, args=(stream, category, rank), daemon=True
                ).start()

    def _pump(self, stream: IO[bytes] | None, category: str, rank: int) -> None:
        if stream is None:
            return
        for raw in iter(stream.readline, b""):
            line = raw.decode("utf-8", "replace")
            self._output(
                category, f"[rank{rank}]: {line if line.endswith(chr(10)) else line + chr(10)}"
            )
        stream.close()

    def stop(self) -> None:
        """Stop every sibling and its children (SIGTERM, then SIGKILL after 3 s)."""
        for sig in (signal.SIGTERM, signal.SIGKILL):
            alive = [p for p in self.procs if p.poll() is None]
            for p in alive:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(p.pid, sig)
            for p in alive:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    p.wait(timeout=3)
