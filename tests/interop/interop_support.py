"""The interop suite: Huawei's own tools (msprof-analyze, msprobe) on fresh emulator output.

The tools live in their own virtualenv (scripts/interop-env; scripts/test sets
ASCEND_LENS_INTEROP_TOOLS to it). Without that variable every test here skips, saying so.
The tools exit 0 even when their analysis failed, so tests assert on the files they write.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

SCRIPTS = Path(__file__).resolve().parent / "scripts"
ENV_VAR = "ASCEND_LENS_INTEROP_TOOLS"

# Read an .xlsx with the tools' own openpyxl: {sheet: [[cell, ...], ...]} as JSON on stdout.
_READ_XLSX = """
import json, sys, openpyxl
wb = openpyxl.load_workbook(sys.argv[1], read_only=True)
print(json.dumps({ws.title: [list(r) for r in ws.iter_rows(values_only=True)]
                  for ws in wb.worksheets}, default=str))
"""


@dataclass(frozen=True)
class Tools:
    """The tools' virtualenv, and how to run its commands."""

    venv: Path

    def run(self, tool: str, *args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
        """Run `tool` (msprof-analyze, msprobe) from the venv; its output is kept for messages."""
        env = {**os.environ, "PATH": f"{self.venv / 'bin'}{os.pathsep}{os.environ['PATH']}"}
        env.pop("PYTHONPATH", None)
        return subprocess.run(
            [str(self.venv / "bin" / tool), *map(str, args)],
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )

    def workbook(self, path: Path) -> dict[str, list[list[Any]]]:
        res = subprocess.run(
            [str(self.venv / "bin" / "python"), "-c", _READ_XLSX, str(path)],
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        )
        book: dict[str, list[list[Any]]] = json.loads(res.stdout)
        return book


@pytest.fixture(scope="session")
def tools() -> Tools:
    venv = os.environ.get(ENV_VAR)
    if not venv:
        pytest.skip(
            f"{ENV_VAR} is not set: run the suite through scripts/test (it runs scripts/interop-env)"
        )
    path = Path(venv)
    for tool in ("msprof-analyze", "msprobe"):
        if not (path / "bin" / tool).is_file():
            pytest.fail(f"{ENV_VAR}={venv} has no bin/{tool}: rebuild it with scripts/interop-env")
    return Tools(path)


def ascend_lens_run(
    cwd: Path, script: str, *options: str, env: dict[str, str] | None = None
) -> str:
    """`ascend-lens run [options] tests/interop/scripts/<script>` in `cwd`; returns stdout."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("NPU_", "MODEL_"))}
    res = subprocess.run(
        [
            sys.executable,
            "-m",
            "ascend_lens",
            "run",
            "--no-summary",
            *options,
            str(SCRIPTS / script),
        ],
        cwd=cwd,
        env={**clean, "PYTHONPATH": "", **(env or {})},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert res.returncode == 0, res.stderr
    return res.stdout


def only(paths: Sequence[Path] | Any, what: str) -> Path:
    """The one path of a glob, or a failure naming what was expected."""
    found = sorted(paths)
    assert len(found) == 1, f"expected one {what}, found {[str(p) for p in found]}"
    return found[0]
