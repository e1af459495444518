"""A raw JSON-RPC client over a subprocess's stdio: sends bytes a well-behaved client never
would (bad params, non-objects, broken framing) and reads what comes back."""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import IO, Any


class RawRpc:
    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        assert proc.stdin is not None and proc.stdout is not None
        self.proc = proc
        self._in: IO[bytes] = proc.stdin
        self.messages: queue.Queue[dict[str, Any]] = queue.Queue()
        self.seen: list[dict[str, Any]] = []
        threading.Thread(target=self._read, args=(proc.stdout,), daemon=True).start()

    def _read(self, out: IO[bytes]) -> None:
        while True:
            length = 0
            while True:
                line = out.readline()
                if not line:
                    return
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
                if line in (b"\r\n", b"\n"):
                    break
            body = out.read(length)
            # strict: the server must never write NaN or Infinity
            self.messages.put(json.loads(body, parse_constant=_refuse))

    def send_body(self, body: bytes) -> None:
        self._in.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self._in.flush()

    def send(self, message: dict[str, Any]) -> None:
        self.send_body(json.dumps(message).encode())

    def wait_for(self, predicate: Any, timeout: float = 10.0) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        for seen in self.seen:
            if predicate(seen):
                return seen
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"no matching message in {timeout}s; seen {self.seen!r}"[:2000])
            try:
                message = self.messages.get(timeout=left)
            except queue.Empty:
                continue
            self.seen.append(message)
            if predicate(message):
                return message

    def response(self, rid: Any, timeout: float = 10.0) -> dict[str, Any]:
        return self.wait_for(
            lambda m: "method" not in m and m.get("id") == rid and ("result" in m or "error" in m),
            timeout,
        )


def _refuse(token: str) -> Any:
    raise ValueError(f"{token} is not JSON")


# ---- the language server over this client
def start(root: Path, preexec_fn: Any = None) -> RawRpc:
    proc = subprocess.Popen(
        [str(Path(sys.executable).with_name("ascend-lens")), "server"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        preexec_fn=preexec_fn,
    )
    rpc = RawRpc(proc)
    rpc.send(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {"processId": None, "rootUri": root.as_uri(), "capabilities": {}},
        }
    )
    rpc.response(1, 30)
    rpc.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
    return rpc


def open_doc(rpc: RawRpc, path: Path, text: str) -> None:
    doc = {"uri": path.as_uri(), "languageId": "python", "version": 1, "text": text}
    rpc.send({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": doc}})


def diagnostics(rpc: RawRpc, path: Path, timeout: float = 30) -> list[dict[str, Any]]:
    message = rpc.wait_for(
        lambda m: (
            m.get("method") == "textDocument/publishDiagnostics"
            and m["params"]["uri"] == path.as_uri()
        ),
        timeout,
    )
    return list(message["params"]["diagnostics"])


def log_line(rpc: RawRpc, text: str, timeout: float = 30) -> str:
    message = rpc.wait_for(
        lambda m: m.get("method") == "window/logMessage" and text in m["params"]["message"],
        timeout,
    )
    return str(message["params"]["message"])
