"""`ascend-lens kernel bridge` driven as a subprocess over newline-delimited JSON."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

TIMEOUT = 60


class BridgeProcess:
    """A bridge subprocess; every stdout line must be a JSON object."""

    def __init__(self, env: dict[str, str]) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "ascend_lens", "kernel", "bridge"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        self.events: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self.stderr: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=self._drain, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.events.put(json.loads(line))  # a non-JSON line fails the reader loudly
        self.events.put(None)

    def _drain(self) -> None:
        assert self.proc.stderr is not None
        self.stderr.extend(self.proc.stderr)

    def send(self, message: dict[str, Any] | str) -> None:
        assert self.proc.stdin is not None
        text = message if isinstance(message, str) else json.dumps(message)
        self.proc.stdin.write(text + "\n")
        self.proc.stdin.flush()

    def next(self) -> dict[str, Any]:
        event = self.events.get(timeout=TIMEOUT)
        assert event is not None, f"bridge closed stdout; stderr: {''.join(self.stderr)}"
        return event

    def until(self, kind: str, rid: Any = None) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """Events up to the first of `kind` (with id `rid` when given)."""
        seen: list[dict[str, Any]] = []
        while True:
            event = self.next()
            if event["type"] == kind and (rid is None or event.get("id") == rid):
                return event, seen
            seen.append(event)


@pytest.fixture()
def bridge(kernel_prefix: Path) -> Iterator[BridgeProcess]:
    b = BridgeProcess(dict(os.environ))
    yield b
    if b.proc.poll() is None:
        b.proc.kill()
        b.proc.wait(timeout=30)


def outputs(events: list[dict[str, Any]], rid: Any) -> list[dict[str, Any]]:
    return [e["output"] for e in events if e["type"] == "output" and e["id"] == rid]


def test_execute_streams_outputs_then_replies_and_bad_requests(bridge: BridgeProcess) -> None:
    ready = bridge.next()
    assert ready["type"] == "ready"
    assert ready["implementation"] == "ascend-npu"
    assert ready["language_info"]["name"] == "python"

    bridge.send({"type": "execute", "id": "c1", "code": "print('hi')\n%npu\n2 + 3"})
    reply, seen = bridge.until("reply", "c1")
    assert reply["status"] == "ok" and reply["execution_count"] == 1
    outs = outputs(seen, "c1")
    assert outs[0] == {"output_type": "stream", "name": "stdout", "text": "hi\n"}
    assert outs[1]["output_type"] == "display_data"
    assert "text/html" in outs[1]["data"]
    assert outs[2]["output_type"] == "execute_result"
    assert outs[2]["data"]["text/plain"] == "5"

    bridge.send({"type": "execute", "id": "c2", "code": "raise ValueError('bad')"})
    reply, seen = bridge.until("reply", "c2")
    assert reply["status"] == "error"
    (err,) = outputs(seen, "c2")
    assert err["output_type"] == "error" and err["ename"] == "ValueError"

    bridge.send("{not json")
    event = bridge.until("error")[0]
    assert event["id"] is None and "invalid JSON" in event["message"]
    bridge.send({"type": "fly", "id": 9})
    event = bridge.until("error")[0]
    assert event == {
        "type": "error",
        "id": 9,
        "message": "unknown request type 'fly'; expected execute, interrupt, restart, state or shutdown",
    }
    bridge.send({"type": "execute", "id": 10})
    assert bridge.until("error")[0]["message"] == '"execute" needs a string "code"'

    bridge.send({"type": "shutdown", "id": "s"})
    reply, _ = bridge.until("reply", "s")
    assert reply["status"] == "ok"
    assert bridge.proc.wait(timeout=TIMEOUT) == 0


def test_interrupt_and_restart(bridge: BridgeProcess) -> None:
    bridge.until("ready")
    bridge.send({"type": "execute", "id": 1, "code": "x = 41"})
    bridge.until("reply", 1)
    bridge.send(
        {"type": "execute", "id": 2, "code": "import time\nprint('go', flush=True)\ntime.sleep(60)"}
    )
    event, _ = bridge.until("output", 2)  # the cell is running
    assert event["output"]["text"] == "go\n"
    bridge.send({"type": "interrupt", "id": 3})
    reply, seen = bridge.until("reply", 2)
    assert reply["status"] == "error"
    assert outputs(seen, 2)[-1]["ename"] == "KeyboardInterrupt"

    bridge.send({"type": "execute", "id": 4, "code": "print(x + 1)"})
    _, seen = bridge.until("reply", 4)
    assert outputs(seen, 4)[0]["text"] == "42\n"

    bridge.send({"type": "restart", "id": 5})
    ready, _ = bridge.until("ready")
    reply, _ = bridge.until("reply", 5)
    assert reply["status"] == "ok"
    bridge.send({"type": "execute", "id": 6, "code": "print('x' in dir())"})
    _, seen = bridge.until("reply", 6)
    assert outputs(seen, 6)[0]["text"] == "False\n"
    bridge.proc.stdin.close()  # closing stdin shuts the kernel down
    assert bridge.proc.wait(timeout=TIMEOUT) == 0


def test_unknown_kernel_is_an_error_event(kernel_prefix: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "ascend_lens", "kernel", "bridge", "--kernel", "nosuch"],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 1
    (line,) = proc.stdout.splitlines()
    event = json.loads(line)
    assert event["type"] == "error" and event["id"] is None
    assert event["message"].startswith("cannot start kernel 'nosuch'")


def test_state_events_and_kernel_death(bridge: BridgeProcess) -> None:
    bridge.until("ready")
    opened, _ = bridge.until("state")
    assert opened["reason"] == "open" and opened["state"]["started"] is False
    bridge.send(
        {
            "type": "execute",
            "id": "a",
            "code": "import acl\nacl.init()\nacl.rt.set_device(2)\np, _ = acl.rt.malloc(1000, 0)",
        }
    )
    reply, seen = bridge.until("reply", "a")
    (pushed,) = [e for e in seen if e["type"] == "state"]  # before the reply
    assert pushed["reason"] == "execute"
    (device,) = pushed["state"]["devices"]
    assert device["id"] == 2 and device["memory"]["allocations"] == 1
    bridge.send({"type": "state", "id": "q"})
    answer, _ = bridge.until("reply", "q")
    assert answer["status"] == "ok"
    asked, _ = bridge.until("state")
    assert asked["reason"] == "request" and asked["state"]["devices"] == pushed["state"]["devices"]

    # The kernel dies mid-cell: the cell is aborted, and a restart brings a fresh one.
    bridge.send({"type": "execute", "id": "k", "code": "import os\nos._exit(3)"})
    died, _ = bridge.until("died")
    assert died["exit_code"] == 3
    reply, _ = bridge.until("reply", "k")
    assert reply == {"type": "reply", "id": "k", "status": "aborted", "reason": "died"}
    bridge.send({"type": "restart", "id": "r"})
    bridge.until("ready")
    reopened, _ = bridge.until("state")  # the restarted kernel gets a state comm too
    assert reopened["reason"] == "open" and reopened["state"]["started"] is False
    bridge.send({"type": "execute", "id": "again", "code": "print('back')"})
    _, seen = bridge.until("reply", "again")
    assert outputs(seen, "again")[0]["text"] == "back\n"
    bridge.send({"type": "shutdown", "id": "s"})
    bridge.until("reply", "s")
