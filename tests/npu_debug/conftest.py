from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from dap_client import DapClient, processes_mentioning

PROGRAMS = Path(__file__).parent / "programs"


def line_of(path: Path, marker: str) -> int:
    """The 1-based line carrying `# @marker` in a debuggee script."""
    for number, text in enumerate(path.read_text().splitlines(), start=1):
        if f"# @{marker}" in text:
            return number
    raise LookupError(f"no marker @{marker} in {path}")


def wait_no_processes(marker: str, timeout: float = 10.0) -> list[int]:
    deadline = time.monotonic() + timeout
    while (left := processes_mentioning(marker)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return left


@pytest.fixture
def dap() -> Iterator[DapClient]:
    client = DapClient()
    try:
        yield client
    finally:
        client.close()


@pytest.fixture
def program(tmp_path: Path):
    """Copy a program from programs/ to a unique path, so orphan checks can find its processes."""

    def make(name: str) -> Path:
        target = tmp_path / name
        target.write_text((PROGRAMS / name).read_text())
        return target

    return make
