"""The side channel between the adapter and the runtime bridge inside the debuggee.

Newline-delimited JSON over a loopback TCP socket the adapter listens on. The debuggee's
stdout stays the program's own. The first line the debuggee sends is `{"hello": TOKEN}`; a
connection with the wrong token is dropped, so another local process cannot pose as it.

Messages: events `{"event": name, "body": {...}}`, requests `{"request": name, "seq": n,
"body": {...}}` and their replies `{"reply": n, "body": {...}}`, in both directions.
"""

from __future__ import annotations

import contextlib
import json
import secrets
import socket
import threading
from collections.abc import Callable
from typing import Any

Message = dict[str, Any]
# Replies to requests that the other side never answers (it is suspended or gone).
DEFAULT_TIMEOUT = 5.0
HELLO_TIMEOUT = 5.0


class LineSocket:
    """One connected socket carrying JSON lines; writes are serialised between threads."""

    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock
        self._file = sock.makefile("rb")
        self._lock = threading.Lock()
        self._seq = 0
        self._replies: dict[int, tuple[threading.Event, list[Message]]] = {}

    def send(self, message: Message) -> bool:
        data = (json.dumps(message, separators=(",", ":"), default=str) + "\n").encode()
        with self._lock:
            try:
                self._sock.sendall(data)
            except OSError:
                return False
        return True

    def read(self) -> Message | None:
        """The next message, or None at EOF. Replies are routed to their waiting requester."""
        while True:
            try:
                line = self._file.readline()
            except (OSError, ValueError):
                return None
            if not line:
                self._fail_waiters()
                return None
            try:
                message = json.loads(line)
            except ValueError:
                continue
            if not isinstance(message, dict):
                continue
            if "reply" in message:
                waiter = self._replies.pop(message["reply"], None)
                if waiter is not None:
                    waiter[1].append(message)
                    waiter[0].set()
                continue
            return message

    def request(
        self, name: str, body: Message | None = None, timeout: float = DEFAULT_TIMEOUT
    ) -> Message | None:
        """Send a request and wait for its reply body; None on timeout or a closed channel.

        The reply is delivered by whichever thread is running `read()` on this socket.
        """
        with self._lock:
            self._seq += 1
            seq = self._seq
        done = threading.Event()
        slot: list[Message] = []
        self._replies[seq] = (done, slot)
        if not self.send({"request": name, "seq": seq, "body": body or {}}):
            self._replies.pop(seq, None)
            return None
        if not done.wait(timeout) or not slot:
            self._replies.pop(seq, None)
            return None
        body_ = slot[0].get("body")
        return body_ if isinstance(body_, dict) else {}

    def reply(self, seq: int, body: Message) -> None:
        self.send({"reply": seq, "body": body})

    def _fail_waiters(self) -> None:
        for done, _ in list(self._replies.values()):
            done.set()
        self._replies.clear()

    def close(self) -> None:
        self._fail_waiters()
        # Shut the socket down first: that wakes a thread blocked reading it, which still
        # holds the buffered reader's lock that closing the file needs.
        for closer in (
            lambda: self._sock.shutdown(socket.SHUT_RDWR),
            self._sock.close,
            self._file.close,
        ):
            with contextlib.suppress(OSError):
                closer()


class ChannelListener:
    """Adapter side: listen on loopback, accept the debuggee, dispatch its messages."""

    def __init__(self, on_message: Callable[[LineSocket, Message], None]) -> None:
        self.token = secrets.token_hex(16)
        self._on_message = on_message
        self._server = socket.create_server(("127.0.0.1", 0))
        self._server.settimeout(0.5)
        self.address: tuple[str, int] = self._server.getsockname()[:2]
        self.connection: LineSocket | None = None
        self.connected = threading.Event()
        self.closed = threading.Event()  # the debuggee's end hung up (or never came)
        self._stop = False
        self._thread = threading.Thread(target=self._run, name="npu-debug-channel", daemon=True)
        self._thread.start()

    @property
    def endpoint(self) -> str:
        return f"{self.address[0]}:{self.address[1]}:{self.token}"

    def _run(self) -> None:
        try:
            while not self._stop:
                try:
                    sock, _ = self._server.accept()
                except TimeoutError:
                    continue
                except OSError:
                    return
                # A peer that connects and says nothing must not block the real debuggee.
                sock.settimeout(HELLO_TIMEOUT)
                conn = LineSocket(sock)
                hello = conn.read()
                if not hello or hello.get("hello") != self.token:
                    conn.close()
                    continue
                sock.settimeout(None)
                self.connection = conn
                self.connected.set()
                self._serve(conn)
                return
        finally:
            self.closed.set()

    def _serve(self, conn: LineSocket) -> None:
        while (message := conn.read()) is not None:
            try:
                self._on_message(conn, message)
            except Exception:  # a bad message must not kill the channel
                import logging

                logging.getLogger(__name__).exception("side-channel message failed: %r", message)

    def request(
        self, name: str, body: Message | None = None, timeout: float = DEFAULT_TIMEOUT
    ) -> Message | None:
        conn = self.connection
        return None if conn is None else conn.request(name, body, timeout)

    def send(self, message: Message) -> bool:
        conn = self.connection
        return False if conn is None else conn.send(message)

    def close(self) -> None:
        self._stop = True
        with contextlib.suppress(OSError):
            self._server.close()
        if self.connection is not None:
            self.connection.close()


def connect(endpoint: str) -> LineSocket:
    """Debuggee side: connect to `host:port:token` and introduce ourselves."""
    host, port, token = endpoint.rsplit(":", 2)
    sock = socket.create_connection((host, int(port)), timeout=10)
    sock.settimeout(None)
    conn = LineSocket(sock)
    conn.send({"hello": token})
    return conn
