"""The `ascend-lens` dispatcher, run as a subprocess as users run it."""

import subprocess
import sys

import pytest

EXE = [sys.executable, "-m", "npu_runtime.cli"]


def test_help_lists_every_subcommand() -> None:
    out = subprocess.run([*EXE, "--help"], capture_output=True, text=True, check=True).stdout
    for name in ("check", "run", "server", "debug-adapter", "kernel"):
        assert f"  {name}" in out


@pytest.mark.parametrize("argv", [[], ["no-such-command"]])
def test_usage_errors_exit_2(argv: list[str]) -> None:
    proc = subprocess.run([*EXE, *argv], capture_output=True, text=True)
    assert proc.returncode == 2
    assert "usage: ascend-lens" in proc.stdout + proc.stderr
