"""Helpers for torch_npu scripts run under `ascend-lens run` (subprocesses, as users run them).

Imported by the test modules (a uniquely named module, not conftest: other test folders
have conftest modules of their own)."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
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


#: runs argv[2:] with inherited stdio and writes the peak resident set (KiB) of that process
#: and its descendants to argv[1]: `RUSAGE_CHILDREN` of the test process itself would also
#: count every earlier child of the whole test run
_PEAK_WRAPPER = (
    "import resource, subprocess, sys\n"
    "code = subprocess.run(sys.argv[2:]).returncode\n"
    "open(sys.argv[1], 'w').write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))\n"
    "sys.exit(code)\n"
)


def run_with_peak(*args: str | Path, timeout: float = 240) -> tuple[subprocess.CompletedProcess[str], int]:
    """`run(ARGS...)` and the peak resident set in KiB of that run alone."""
    inherited = {k: v for k, v in os.environ.items() if not k.startswith(("NPU_", "ASCEND_"))}
    with tempfile.TemporaryDirectory() as tmp:
        peak_file = Path(tmp) / "peak"
        r = subprocess.run(
            [sys.executable, "-c", _PEAK_WRAPPER, str(peak_file), sys.executable, "-m", "ascend_lens", "run", *map(str, args)],
            capture_output=True,
            text=True,
            cwd=REPO,
            env=inherited,
            timeout=timeout,
        )
        return r, int(peak_file.read_text())


def last_line(text: str) -> str:
    return text.strip().splitlines()[-1]
