from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from dap_client import PROGRAMS, DapClient


@pytest.fixture
def dap() -> Iterator[DapClient]:
    client = DapClient()
    try:
        yield client
    finally:
        client.close()


@pytest.fixture
def program(tmp_path: Path) -> Callable[[str], Path]:
    """Copy a program from programs/ to a unique path, so orphan checks can find its processes.

    (Outside the repository, too: the runtime treats files under tests/npu_*/ as its own.)
    """

    def make(name: str) -> Path:
        target = tmp_path / name
        target.write_text((PROGRAMS / name).read_text())
        return target

    return make
