"""Helpers for the hccl tests: run scripts under `ascend-lens run --nproc N` as a user would,
and look for processes left behind. (A module, not conftest, so tests import it by name.)"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

SCRIPTS = Path(__file__).resolve().parent / "scripts"


@dataclass(frozen=True)
class Run:
    returncode: int
    stdout: str
    stderr: str

    def lines(self, rank: int, stream: str = "stdout") -> list[str]:
        prefix = f"[rank{rank}]: "
        text = self.stdout if stream == "stdout" else self.stderr
        return [ln[len(prefix) :] for ln in text.splitlines() if ln.startswith(prefix)]


def clean_env(**extra: str) -> dict[str, str]:
    drop = ("NPU_", "HCCL_", "RANK", "WORLD_SIZE", "LOCAL_", "MASTER_", "GROUP_", "ROLE_")
    env = {k: v for k, v in os.environ.items() if not k.startswith(drop)}
    env.pop("RANK_TABLE_FILE", None)
    return {**env, "PYTHONPATH": "", **extra}


def ascend_lens(
    *args: str | Path, cwd: Path, env: dict[str, str] | None = None, timeout: float = 240
) -> Run:
    res = subprocess.run(
        [sys.executable, "-m", "ascend_lens", "run", "--no-summary", *map(str, args)],
        cwd=cwd,
        env=env or clean_env(),
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    return Run(res.returncode, res.stdout, res.stderr)


def script_copy(name: str, tmp_path: Path) -> Path:
    """The script under a path unique to this test, so leftover processes can be found."""
    dst = tmp_path / name
    shutil.copy(SCRIPTS / name, dst)
    return dst


def processes_running(marker: str) -> list[str]:
    """Command lines of live processes mentioning `marker` (a test's own script path)."""
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if marker in cmd:
            found.append(f"{pid}: {cmd}")
    return found


@pytest.fixture
def no_leftovers(tmp_path: Path):  # type: ignore[no-untyped-def]
    yield
    assert processes_running(str(tmp_path)) == []
