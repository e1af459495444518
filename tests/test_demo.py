"""`./scripts/demo`, as a new user runs it: the three things the project is for, in order."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

# The demo runs the project's own .venv (it sets it up first); only test it from there, so a
# test run from another interpreter never starts an install.
pytestmark = pytest.mark.skipif(
    Path(sys.prefix).resolve() != (REPO / ".venv").resolve(),
    reason="scripts/demo uses the checkout's .venv; run pytest from it",
)


def test_demo_shows_runtime_error_and_sanitizer_then_checker_then_profile() -> None:
    env = {**os.environ, "COLUMNS": "120"}
    proc = subprocess.run(
        [str(REPO / "scripts" / "demo")], capture_output=True, text=True, env=env, timeout=300
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = proc.stdout
    steps = [out.index(f"== {n}/3 ") for n in (1, 2, 3)]
    assert steps == sorted(steps)
    run_part, check_part, profile_part = (
        out[steps[0] : steps[1]],
        out[steps[1] : steps[2]],
        out[steps[2] :],
    )
    example = REPO / "examples" / "pyacl_batch_bugs.py"
    assert f"aclrtMemcpy called at {example}:42" in run_part
    assert "ascend-lens sanitizer: read-before-sync" in run_part
    assert "examples/graph_mode_mistakes.py:28:9: MS101" in check_part
    assert "examples/cuda_training.py:38:31: NPU201" in check_part
    assert "Found 23 problems." in check_part
    assert "Top ops (Ascend910B2" in profile_part and "Hot lines (in examples)" in profile_part
    assert "│ pyacl_quickstart.py:69 │" in profile_part
