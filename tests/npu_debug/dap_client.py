"""A small DAP client over stdio for driving `ascend-lens debug-adapter` in tests.

Every message received is kept in `timeline`, so tests can state ordered expectations.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

Message = dict[str, Any]
REPO = Path(__file__).resolve().parents[2]
PROGRAMS = Path(__file__).parent / "programs"
TIMEOUT = 30.0


class DapError(AssertionError):
    pass


class DapClient:
    def __init__(self, *extra_args: str, command: list[str] | None = None) -> None:
        """Start `ascend-lens debug-adapter` (or another DAP adapter's `command`) on stdio."""
        self.proc = subprocess.Popen(
            command or [sys.executable, "-m", "ascend_lens", "debug-adapter", *extra_args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=REPO,
        )
        self._seq = 0
        self.timeline: list[Message] = []
        self._inbox: queue.Queue[Message | None] = queue.Queue()
        self._cursor = 0
        self._lock = threading.Condition()
        threading.Thread(target=self._read, daemon=True).start()
        self.stderr_lines: list[bytes] = []
        threading.Thread(target=self._drain_stderr, daemon=True).start()

    # ---- wire ----
    def _read(self) -> None:
        out = self.proc.stdout
        assert out is not None
        while True:
            length = None
            while True:
                line = out.readline()
                if not line:
                    with self._lock:
                        self.timeline.append({"type": "eof"})
                        self._lock.notify_all()
                    return
                line = line.strip()
                if not line:
                    break
                key, _, value = line.partition(b":")
                if key.lower() == b"content-length":
                    length = int(value)
            assert length is not None, "message without Content-Length"
            body = out.read(length)
            message = json.loads(body)
            with self._lock:
                self.timeline.append(message)
                self._lock.notify_all()

    def _drain_stderr(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.stderr_lines.append(line)

    def send(self, message: Message) -> int:
        self._seq += 1
        message = {**message, "seq": self._seq}
        body = json.dumps(message).encode()
        assert self.proc.stdin is not None
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()
        return self._seq

    # ---- waiting ----
    def wait_for(
        self, predicate: Callable[[Message], bool], timeout: float = TIMEOUT, what: str = ""
    ) -> Message:
        """The first message after the last one matched that satisfies `predicate`."""
        deadline = _now() + timeout
        with self._lock:
            while True:
                while self._cursor < len(self.timeline):
                    message = self.timeline[self._cursor]
                    self._cursor += 1
                    if predicate(message):
                        return message
                    if message.get("type") == "eof":
                        raise DapError(
                            f"adapter closed its output while waiting for {what}; {self._tail()}"
                        )
                remaining = deadline - _now()
                if remaining <= 0:
                    raise DapError(f"timed out waiting for {what}; {self._tail()}")
                self._lock.wait(remaining)

    def find(self, predicate: Callable[[Message], bool]) -> Message | None:
        """Any message received so far (regardless of the cursor)."""
        with self._lock:
            return next((m for m in self.timeline if predicate(m)), None)

    def _tail(self) -> str:
        last = [m.get("command") or m.get("event") or m.get("type") for m in self.timeline[-12:]]
        err = b"".join(self.stderr_lines[-20:]).decode(errors="replace")
        return f"last messages: {last}; stderr: {err}"

    def request(
        self, command: str, arguments: Message | None = None, timeout: float = TIMEOUT
    ) -> Message:
        """Send a request and return its response without moving the event cursor."""
        seq = self.send({"type": "request", "command": command, "arguments": arguments or {}})
        deadline = _now() + timeout
        with self._lock:
            while True:
                for message in self.timeline:
                    if message.get("type") == "response" and message.get("request_seq") == seq:
                        return message
                    if message.get("type") == "eof":
                        raise DapError(f"adapter closed before answering {command}; {self._tail()}")
                remaining = deadline - _now()
                if remaining <= 0:
                    raise DapError(f"no response to {command}; {self._tail()}")
                self._lock.wait(remaining)

    def ok(self, command: str, arguments: Message | None = None) -> Message:
        response = self.request(command, arguments)
        if not response.get("success"):
            raise DapError(f"{command} failed: {response.get('message')}")
        return response.get("body") or {}

    def event(self, name: str, timeout: float = TIMEOUT, **body: Any) -> Message:
        def match(m: Message) -> bool:
            if m.get("type") != "event" or m.get("event") != name:
                return False
            got = m.get("body") or {}
            return all(got.get(k) == v for k, v in body.items())

        return self.wait_for(match, timeout, what=f"event {name} {body or ''}").get("body") or {}

    # ---- session helpers ----
    def start(
        self,
        launch: Message,
        breakpoints: dict[str, list[int]] | None = None,
        exception_filters: list[str] | None = None,
    ) -> Message:
        """initialize, launch, setBreakpoints, configurationDone. Returns initialize's body."""
        caps = self.ok(
            "initialize",
            {
                "adapterID": "ascend",
                "clientID": "pytest",
                "linesStartAt1": True,
                "columnsStartAt1": True,
                "pathFormat": "path",
                "supportsRunInTerminalRequest": False,
            },
        )
        seq = self.send({"type": "request", "command": "launch", "arguments": launch})
        self.event("initialized")
        for path, lines in (breakpoints or {}).items():
            self.ok(
                "setBreakpoints",
                {"source": {"path": path}, "breakpoints": [{"line": n} for n in lines]},
            )
        if exception_filters is not None:
            self.ok("setExceptionBreakpoints", {"filters": exception_filters})
        self.ok("configurationDone")
        response = self.wait_for(
            lambda m: m.get("type") == "response" and m.get("request_seq") == seq,
            what="launch response",
        )
        if not response.get("success"):
            raise DapError(f"launch failed: {response.get('message')}")
        return caps

    def stopped(self, timeout: float = TIMEOUT) -> Message:
        return self.event("stopped", timeout)

    def top_frame(self, thread_id: int) -> Message:
        frames = self.ok("stackTrace", {"threadId": thread_id})["stackFrames"]
        return frames[0]

    def locals(self, frame_id: int) -> dict[str, Message]:
        scopes = self.ok("scopes", {"frameId": frame_id})["scopes"]
        ref = next(
            s
            for s in scopes
            if s["name"].lower().startswith("local") or s["name"].lower().startswith("global")
        )["variablesReference"]
        return {
            v["name"]: v for v in self.ok("variables", {"variablesReference": ref})["variables"]
        }

    def outputs(self, category: str = "stdout") -> str:
        """Everything the program wrote to `category` so far, joined."""
        with self._lock:
            return "".join(
                m["body"]["output"]
                for m in self.timeline
                if m.get("event") == "output" and m["body"].get("category") == category
            )

    def close(self) -> int:
        """End the adapter and return its exit status (killing it if it does not go)."""
        try:
            if self.proc.stdin is not None:
                self.proc.stdin.close()
        except OSError:
            pass
        try:
            return self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise DapError("adapter did not exit after its input closed") from None


def _now() -> float:
    import time

    return time.monotonic()


def processes_mentioning(marker: str) -> list[int]:
    """PIDs of live processes whose command line contains `marker` (orphan checks)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                cmdline = f.read().replace(b"\0", b" ").decode(errors="replace")
            with open(f"/proc/{entry}/stat") as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if marker in cmdline and state != "Z":
            found.append(int(entry))
    return found


def line_of(path: Path, marker: str) -> int:
    """The 1-based line carrying `# @marker` in a debuggee script."""
    for number, text in enumerate(path.read_text().splitlines(), start=1):
        if f"# @{marker}" in text:
            return number
    raise LookupError(f"no marker @{marker} in {path}")


def wait_no_processes(marker: str, timeout: float = 10.0) -> list[int]:
    """Wait until no live process mentions `marker`; returns those still alive."""
    import time

    deadline = time.monotonic() + timeout
    while (left := processes_mentioning(marker)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return left
