"""Kill each server (`kill -9`, idle and busy) and end debug sessions that debugpy alone would
leave hanging: no process of ours may be left behind."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from bad_input_rpc import diagnostics, open_doc, start
from bad_input_support import ASCEND_LENS, command_line, run, still_running, tree

sys.path.insert(0, str(Path(__file__).parents[1] / "npu_debug"))
from dap_client import DapClient  # noqa: E402

CUDA = "import torch\nx = torch.ones(2).cuda()\n"


# ---------------------------------------------------------------- the language server
@pytest.mark.parametrize("busy", [False, True], ids=["idle", "busy"])
def test_kill_9_of_the_language_server_takes_its_worker_along(tmp_path: Path, busy: bool) -> None:
    (tmp_path / "a.py").write_text(CUDA)
    rpc = start(tmp_path)
    open_doc(rpc, tmp_path / "a.py", CUDA)
    diagnostics(rpc, tmp_path / "a.py")
    children = tree(rpc.proc.pid)
    names = " ".join(" ".join(command_line(p)) for p in children)
    assert "spawn_main" in names and "resource_tracker" in names  # worker and tracker
    if busy:  # a file that keeps the worker analysing for seconds
        body = "import torch\n" + "".join(
            f"def f{i}(x):\n    return x + {i}\n\n" for i in range(30_000)
        )
        open_doc(rpc, tmp_path / "big.py", body)
        time.sleep(1.0)
    rpc.proc.send_signal(signal.SIGKILL)
    rpc.proc.wait()
    assert still_running(children, timeout=10) == []


# ---------------------------------------------------------------- the debug adapter
HOLDER = """\
import subprocess, sys, time
# A child in a session of its own that keeps our stdout open: debugpy waits for its EOF.
subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"], start_new_session=True)
print("started", flush=True)
while True:
    time.sleep(0.05)
"""


@pytest.mark.parametrize("ending", ["terminate", "disconnect", "kill -9"])
def test_debug_sessions_end_with_their_whole_process_tree(tmp_path: Path, ending: str) -> None:
    program = tmp_path / "holder.py"
    program.write_text(HOLDER)
    dap = DapClient(command=[ASCEND_LENS, "debug-adapter"])
    try:
        dap.start({"program": str(program)})
        dap.wait_for(
            lambda m: m.get("event") == "output" and "started" in m["body"]["output"],
            what="the program's output",
        )
        children = tree(dap.proc.pid)
        assert len(children) >= 4  # reaper, debugpy adapter, launcher, program, its child
        if ending == "kill -9":
            dap.proc.kill()
        else:
            started = time.monotonic()
            response = dap.request(ending, {}, timeout=10)
            assert response["success"], response
            assert time.monotonic() - started < 6  # 3 s for debugpy, then our own answer
            dap.event("terminated", timeout=5)
            if ending == "terminate":
                assert dap.request("disconnect", {}, timeout=10)["success"]
            assert dap.close() == 0
        dap.proc.wait(timeout=10)
        assert still_running(children, timeout=10) == []
    finally:
        if dap.proc.poll() is None:
            dap.proc.kill()


def test_malformed_dap_messages_are_answered_and_the_adapter_lives_on(tmp_path: Path) -> None:
    dap = DapClient(command=[ASCEND_LENS, "debug-adapter"])
    try:
        dap.ok("initialize", {"adapterID": "ascend", "pathFormat": "path"})
        for arguments in (None, [], "x", {"program": 5}, {"program": str(tmp_path), "args": {}}):
            response = dap.request("launch", arguments)  # type: ignore[arg-type]
            assert response["success"] is False and response["message"], response
        response = dap.request("setExceptionBreakpoints", {"filters": "npuAclErrors"})
        assert "success" in response
        children = tree(dap.proc.pid)
        assert dap.request("disconnect", {})["success"]
        assert dap.close() == 0
        assert b"Traceback" not in b"".join(dap.stderr_lines)
        assert still_running(children) == []
    finally:
        if dap.proc.poll() is None:
            dap.proc.kill()


# ---------------------------------------------------------------- the kernel bridge
@pytest.fixture(scope="module")
def jupyter_env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    prefix = tmp_path_factory.mktemp("prefix")
    runtime = tmp_path_factory.mktemp("runtime")
    assert run("kernel", "install", "--prefix", str(prefix)).returncode == 0
    return {
        **os.environ,
        "JUPYTER_PATH": str(prefix / "share" / "jupyter"),
        "JUPYTER_RUNTIME_DIR": str(runtime),
        "IPYTHONDIR": str(runtime / "ipython"),
    }


def bridge(env: dict[str, str]) -> tuple[subprocess.Popen[str], list[dict[str, object]]]:
    proc = subprocess.Popen(
        [ASCEND_LENS, "kernel", "bridge"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env,
    )
    return proc, []


def read_until(
    proc: subprocess.Popen[str], kind: str, seen: list[dict[str, object]]
) -> dict[str, object]:
    assert proc.stdout is not None
    for line in proc.stdout:
        event = json.loads(line, parse_constant=_refuse)  # strict JSON, every line
        seen.append(event)
        if event["type"] == kind:
            return event
    raise AssertionError(f"bridge closed stdout before {kind}; saw {seen}")


def _refuse(token: str) -> object:
    raise ValueError(f"{token} is not JSON")


def test_kernel_bridge_refuses_ids_it_could_not_echo_and_dies_with_its_kernel(
    jupyter_env: dict[str, str],
) -> None:
    proc, seen = bridge(jupyter_env)
    assert proc.stdin is not None
    try:
        read_until(proc, "ready", seen)
        for line, message in (
            ('{"type": "state", "id": NaN}', "invalid JSON: NaN is not JSON"),
            ('{"type": "state", "id": -Infinity}', "invalid JSON: -Infinity is not JSON"),
            ('{"type": "state", "id": 1e999}', "invalid JSON: 1e999 is out of range"),
            ('{"type": "state", "id": {"a": 1}}', '"id" must be a string, a number or null'),
            ('{"type": "state", "id": true}', '"id" must be a string, a number or null'),
        ):
            proc.stdin.write(line + "\n")
            proc.stdin.flush()
            event = read_until(proc, "error", seen)
            assert event["id"] is None and str(event["message"]).startswith(message), event
        proc.stdin.write('{"type": "execute", "id": 2.5, "code": "1 + 1"}\n')
        proc.stdin.flush()
        assert read_until(proc, "reply", seen)["id"] == 2.5
        children = tree(proc.pid)
        assert children  # the kernel
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        assert still_running(children, timeout=15) == []
    finally:
        if proc.poll() is None:
            proc.kill()


@pytest.mark.parametrize(
    "raw",
    [
        b"Content-Length: 1000000000000\r\n\r\n{}",
        b"Content-Length: -5\r\n\r\n",
        b'Content-Length: 47\r\n\r\n{"seq": NaN, "type": "request", "command": "x"}',
        b"Content-Length: 5\r\n\r\n[1,2]",
    ],
    ids=["huge length", "negative length", "NaN", "not an object"],
)
def test_dap_framing_the_adapter_cannot_read_ends_it_cleanly(raw: bytes) -> None:
    dap = DapClient(command=[ASCEND_LENS, "debug-adapter"])
    try:
        dap.ok("initialize", {"adapterID": "ascend", "pathFormat": "path"})
        children = tree(dap.proc.pid)
        assert dap.proc.stdin is not None
        dap.proc.stdin.write(raw)
        dap.proc.stdin.flush()
        assert dap.proc.wait(timeout=15) == 0
        assert b"Traceback" not in b"".join(dap.stderr_lines)
        assert still_running(children) == []
    finally:
        if dap.proc.poll() is None:
            dap.proc.kill()
