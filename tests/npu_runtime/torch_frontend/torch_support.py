"""Helpers for torch_npu scripts run under `ascend-lens run` (subprocesses, as users run them).

Imported by the test modules (a uniquely named module, not conftest: other test folders
have conftest modules of their own)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")

SCRIPTS = Path(__file__).parent / "scripts"
REPO = Path(__file__).resolve().parents[3]


def run(
    *args: str | Path, env: dict[str, str] | None = None, timeout: float = 240
) -> subprocess.CompletedProcess[str]:
    """`ascend-lens run ARGS...` with only the NPU_* variables the test sets."""
    inherited = {k: v for k, v in os.environ.items() if not k.startswith(("NPU_", "ASCEND_"))}
    return subprocess.run(
        [sys.executable, "-m", "ascend_lens", "run", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=REPO,
        env={**inherited, **(env or {})},
        timeout=timeout,
    )


def last_line(text: str) -> str:
    return text.strip().splitlines()[-1]
