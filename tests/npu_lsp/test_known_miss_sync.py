"""known_miss_sync.py, run as its users run it: the same report with one or two worker processes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "tests" / "npu_lsp" / "difftest" / "known_miss_sync.py"


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(str(ROOT / p) for p in ("server", "kernel", "."))}
    return subprocess.run(
        [sys.executable, str(SCRIPT), "--only", "zoo14", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300
    )


def test_jobs_give_the_same_report_in_the_same_order() -> None:
    one, two = _run(), _run("--jobs", "2")
    assert one.returncode == 0, one.stderr
    assert two.returncode == 0, two.stderr
    assert one.stdout == two.stdout
    last = one.stdout.splitlines()[-1]
    assert last.endswith("stores; 0 entries left to look at") and int(last.split()[0]) > 0
