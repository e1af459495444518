"""Shared fixtures for the runtime-core tests: a clean runtime and the pyACL module."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from npu_runtime.core.runtime import Runtime, get_runtime
from npu_runtime.launcher import SHIM_DIR

REPO = Path(__file__).resolve().parents[2]
REFERENCE = REPO.parent / "shared" / "reference" / "acl"


@pytest.fixture
def rt() -> Iterator[Runtime]:
    """The process runtime, reset before and after, initialised with device 0 set."""
    runtime = get_runtime()
    runtime.reset()
    runtime.configure(device="910B", devices=8)
    runtime.sanitizer.enabled = True
    runtime.init()
    runtime.set_device(0)
    yield runtime
    runtime.reset()


@pytest.fixture
def bare_rt() -> Iterator[Runtime]:
    """The process runtime, reset and not initialised."""
    runtime = get_runtime()
    runtime.reset()
    runtime.configure(device="910B", devices=8)
    runtime.sanitizer.enabled = True
    yield runtime
    runtime.reset()


@pytest.fixture
def acl(bare_rt: Runtime) -> Iterator[ModuleType]:
    """`import acl` as a pyACL script sees it (through the shim), on a fresh runtime."""
    sys.path.insert(0, SHIM_DIR)
    try:
        import acl as module

        yield module
    finally:
        sys.path.remove(SHIM_DIR)


@pytest.fixture
def reference() -> Path:
    """../shared/reference/acl (read-only reference data)."""
    return REFERENCE


@pytest.fixture
def user_code(tmp_path: Path) -> Callable[..., dict[str, Any]]:
    """Run source as if from a user file, so source sites point into it (not into tests/)."""

    def run(source: str, name: str = "user.py", **env: Any) -> dict[str, Any]:
        path = tmp_path / name
        path.write_text(source)
        namespace: dict[str, Any] = {"__name__": "__user__", **env}
        exec(compile(source, str(path), "exec"), namespace)
        return namespace

    return run
