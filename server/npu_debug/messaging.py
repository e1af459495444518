"""The DAP wire format: `Content-Length`-framed JSON over a pair of byte streams."""

from __future__ import annotations

import contextlib
import json
import threading
from typing import IO, Any

Message = dict[str, Any]


class StreamClosed(Exception):
    """The other end closed the stream (clean EOF or a broken pipe)."""


class ProtocolError(Exception):
    """The peer sent bytes that are not a DAP message."""


class JsonStream:
    """Reads and writes DAP messages; writes are serialised so threads may share one stream."""

    def __init__(self, reader: IO[bytes], writer: IO[bytes], name: str) -> None:
        self.name = name
        self._reader = reader
        self._writer = writer
        self._write_lock = threading.Lock()

    def read(self) -> Message:
        """Block for the next message; raise StreamClosed at EOF."""
        length: int | None = None
        while True:
            line = self._reader.readline()
            if not line:
                raise StreamClosed(self.name)
            line = line.strip()
            if not line:
                break
            key, _, value = line.partition(b":")
            if key.strip().lower() == b"content-length":
                try:
                    length = int(value.strip())
                except ValueError as exc:
                    raise ProtocolError(f"{self.name}: bad Content-Length {value!r}") from exc
        if length is None:
            raise ProtocolError(f"{self.name}: message without Content-Length")
        body = b""
        while len(body) < length:
            chunk = self._reader.read(length - len(body))
            if not chunk:
                raise StreamClosed(self.name)
            body += chunk
        try:
            message = json.loads(body)
        except ValueError as exc:
            raise ProtocolError(f"{self.name}: body is not JSON: {exc}") from exc
        if not isinstance(message, dict) or "type" not in message:
            raise ProtocolError(f"{self.name}: not a DAP message: {body[:200]!r}")
        return message

    def write(self, message: Message) -> None:
        body = json.dumps(message, separators=(",", ":")).encode("utf-8")
        data = b"Content-Length: %d\r\n\r\n" % len(body) + body
        with self._write_lock:
            try:
                self._writer.write(data)
                self._writer.flush()
            except (BrokenPipeError, OSError, ValueError) as exc:
                raise StreamClosed(self.name) from exc

    def close(self) -> None:
        for f in (self._reader, self._writer):
            with contextlib.suppress(OSError):
                f.close()
