"""The DAP wire format: `Content-Length`-framed JSON over a pair of byte streams."""

from __future__ import annotations

import contextlib
import json
import threading
from typing import IO, Any

Message = dict[str, Any]


#: A DAP message larger than this is refused (a bad Content-Length must not allocate gigabytes).
MAX_MESSAGE_BYTES = 256 << 20
_CHUNK = 1 << 20


def _not_json(token: str) -> Any:
    raise ValueError(f"{token} is not JSON")


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
        if not 0 <= length <= MAX_MESSAGE_BYTES:
            raise ProtocolError(f"{self.name}: Content-Length {length} is out of range")
        chunks: list[bytes] = []
        left = length
        while left:
            # A raw stream's read(n) allocates n bytes up front: never more than a chunk.
            chunk = self._reader.read(min(left, _CHUNK))
            if not chunk:
                raise StreamClosed(self.name)
            chunks.append(chunk)
            left -= len(chunk)
        body = b"".join(chunks)
        try:
            message = json.loads(body, parse_constant=_not_json)
        except ValueError as exc:
            raise ProtocolError(f"{self.name}: body is not JSON: {exc}") from exc
        if not isinstance(message, dict) or "type" not in message:
            raise ProtocolError(f"{self.name}: not a DAP message: {body[:200]!r}")
        return message

    def write(self, message: Message) -> None:
        try:
            text = json.dumps(message, separators=(",", ":"), allow_nan=False)
        except ValueError:  # NaN/Infinity from a peer: written as null, never as invalid JSON
            text = json.dumps(
                json.loads(json.dumps(message), parse_constant=lambda _: None),
                separators=(",", ":"),
            )
        body = text.encode("utf-8")
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
