"""`ascend-lens server` command-line handling (the protocol itself is in the other modules)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SERVER = [sys.executable, "-m", "ascend_lens", "server"]


def test_unopenable_log_file_is_a_clear_error(tmp_path: Path) -> None:
    result = subprocess.run(
        [*SERVER, "--log-file", str(tmp_path / "missing" / "x.log")],
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert result.returncode == 2
    assert result.stderr.startswith("ascend-lens server: cannot open log file:")
    assert "Traceback" not in result.stderr and result.stdout == ""


def test_closed_stdin_ends_the_server_quietly_with_only_protocol_on_stdout() -> None:
    result = subprocess.run(
        SERVER, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL
    )
    assert result.returncode == 0
    assert result.stdout == ""
    assert "Traceback" not in result.stderr
