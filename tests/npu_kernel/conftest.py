"""Fixtures: the kernelspec installed into a temp prefix, and kernels started from it.

JUPYTER_PATH points at the temp prefix so jupyter_client finds our spec first; the
runtime dir (connection files) and IPYTHONDIR (history) are temp dirs too. Nothing touches
the user's real dirs.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

CLI = [sys.executable, "-m", "ascend_lens", "kernel"]


def run_cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *args], capture_output=True, text=True, env=env, timeout=60)


@pytest.fixture(scope="session")
def kernel_prefix(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    prefix = tmp_path_factory.mktemp("prefix")
    runtime = tmp_path_factory.mktemp("runtime")
    proc = run_cli("install", "--prefix", str(prefix))
    assert proc.returncode == 0, proc.stderr
    saved = {k: os.environ.get(k) for k in ("JUPYTER_PATH", "JUPYTER_RUNTIME_DIR", "IPYTHONDIR")}
    os.environ["JUPYTER_PATH"] = str(prefix / "share" / "jupyter")
    os.environ["JUPYTER_RUNTIME_DIR"] = str(runtime)
    os.environ["IPYTHONDIR"] = str(runtime / "ipython")  # kernels' history DB, not the user's
    yield prefix
    for key, value in saved.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value


def start_kernel(cwd: str | None = None) -> tuple[Any, Any]:
    from jupyter_client.manager import start_new_kernel

    return start_new_kernel(kernel_name="ascend-npu", startup_timeout=60, cwd=cwd)


@pytest.fixture(scope="session")
def kernel(kernel_prefix: Path) -> Iterator[tuple[Any, Any]]:
    """One kernel shared by many tests (each resets what it relies on: `%npu_reset`)."""
    km, kc = start_kernel()
    yield km, kc
    kc.stop_channels()
    km.shutdown_kernel(now=True)


@pytest.fixture()
def fresh_kernel(kernel_prefix: Path) -> Iterator[tuple[Any, Any]]:
    """A kernel of its own, for tests that interrupt, restart or shut down."""
    km, kc = start_kernel()
    yield km, kc
    kc.stop_channels()
    if km.is_alive():
        km.shutdown_kernel(now=True)


def execute(kc: Any, code: str, timeout: float = 60) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Run `code`; return the execute reply content and the iopub messages it produced."""
    messages: list[dict[str, Any]] = []
    reply = kc.execute_interactive(
        code, timeout=timeout, output_hook=messages.append, allow_stdin=False
    )
    return reply["content"], messages


def of_type(messages: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [m["content"] for m in messages if m["header"]["msg_type"] == kind]


def stdout(messages: list[dict[str, Any]]) -> str:
    return "".join(c["text"] for c in of_type(messages, "stream") if c["name"] == "stdout")


def shell_reply(kc: Any, msg_id: str, timeout: float = 60) -> dict[str, Any]:
    """The shell reply to `msg_id`, skipping stray ones (wait_for_ready may retry kernel_info)."""
    while True:
        reply: dict[str, Any] = kc.get_shell_msg(timeout=timeout)
        if reply["parent_header"].get("msg_id") == msg_id:
            return reply
