"""The server's JSON-RPC protocol: every request gets an answer, even one that does not parse.

pygls turns a request whose params do not fit the LSP types (a negative position,
`"params": null` where an object is required, a method name that is not a string) into an
exception inside its read loop: the failure is logged and the client, which waits for that
id, never hears back. Here such a request is answered with the JSON-RPC error it deserves
(-32602 Invalid params, or -32600 Invalid request) and then dropped; a body that is not JSON
gets -32700 with a null id. Notifications, which have no answer, are dropped with a log line.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
from typing import Any

from pygls.exceptions import (
    JsonRpcException,
    JsonRpcInternalError,
    JsonRpcInvalidParams,
    JsonRpcInvalidRequest,
)
from pygls.protocol import LanguageServerProtocol

log = logging.getLogger("npu_lsp.protocol")

PARSE_ERROR = -32700
INVALID_REQUEST = JsonRpcInvalidRequest.CODE
INVALID_PARAMS = JsonRpcInvalidParams.CODE


class _Answered:
    """Stands for a message already answered with an error: `handle_message` skips it."""


ANSWERED = _Answered()


def request_id(data: dict[str, Any]) -> int | str | None:
    """The id to answer `data` with: an integer or a string, else null (JSON-RPC §5)."""
    rid = data.get("id")
    if isinstance(rid, bool) or not isinstance(rid, int | str):
        return None
    return rid


class AnsweringProtocol(LanguageServerProtocol):
    """LanguageServerProtocol that answers requests it cannot deserialize."""

    def structure_message(self, data: dict[str, Any]) -> Any:
        if "jsonrpc" in data and "method" in data and not isinstance(data["method"], str):
            return self._refuse(data, INVALID_REQUEST, f"method {data['method']!r} is not a string")
        try:
            return super().structure_message(data)
        except JsonRpcException as exc:
            if "method" not in data:
                raise  # a response pygls cannot read: nobody waits for an answer
            method = data["method"]
            if data.get("params", {}) is None:
                why = "params must be an object or an array, not null"
            else:
                why = _cause(exc)
            return self._refuse(data, INVALID_PARAMS, f"invalid params for {method}: {why}")

    def _refuse(self, data: dict[str, Any], code: int, message: str) -> _Answered:
        """Answer a request with error `code` (a notification only gets a log line)."""
        if "id" not in data:
            log.warning("dropping notification %r: %s", data.get("method"), message)
            return ANSWERED
        log.warning("answering request %r with error %d: %s", data.get("id"), code, message)
        self.send_error(request_id(data), code, message)
        return ANSWERED

    def send_error(self, rid: int | str | None, code: int, message: str) -> None:
        """A JSON-RPC error response; `"id": null` when the request's id could not be read."""
        self._send_data({"jsonrpc": "2.0", "id": rid, "error": {"code": code, "message": message}})

    def notify_json(self, method: str, params_json: str) -> None:
        """A notification whose params are already JSON text (the server keeps each
        published diagnostic's JSON, so a large unchanged result is not encoded again);
        framed and written as pygls writes its own messages."""
        body = f'{{"jsonrpc": "2.0", "method": {json.dumps(method)}, "params": {params_json}}}'
        self._send_body(body)

    def _send_body(self, body: str) -> None:
        if self.writer is None:
            log.error("unable to send data, no available transport")
            return
        try:
            data = body.encode(self.CHARSET)
            if self._include_headers:
                header = (
                    f"Content-Length: {len(data)}\r\n"
                    f"Content-Type: {self.CONTENT_TYPE}; charset={self.CHARSET}\r\n\r\n"
                )
                data = header.encode(self.CHARSET) + data
            res = self.writer.write(data)
            if inspect.isawaitable(res):
                asyncio.ensure_future(res)
        except BrokenPipeError:
            log.exception("error sending data: broken pipe")
            raise
        except Exception as error:
            log.exception("error sending data")
            self._server._report_server_error(error, JsonRpcInternalError)

    def _execute_handler(
        self,
        msg_id: Any,
        handler: Any,
        callback: Any,
        args: tuple[Any, ...] | None = None,
        kwargs: dict[str, Any] | None = None,
    ) -> None:
        """pygls keeps the future of every handler it runs in `_request_futures` (so a request
        can be cancelled), but only a request's answer removes it: the futures of
        notifications (every didChange) and of the steps of its built-in generator handlers
        stay forever, about 0.65 MB per 500 edits. Each is dropped here once done."""
        super()._execute_handler(msg_id, handler, callback, args, kwargs)
        futures = self._request_futures
        future = futures.get(msg_id)
        if future is not None:

            def forget(done: Any, key: Any = msg_id) -> None:
                if futures.get(key) is done:
                    del futures[key]

            future.add_done_callback(forget)

    def handle_message(self, message: Any) -> None:
        if message is ANSWERED:
            return
        if not hasattr(message, "jsonrpc"):  # a JSON value that is not a message object
            log.warning("refusing a message that is not a JSON-RPC object: %.200r", message)
            kind = (
                'an object without "jsonrpc": "2.0"'
                if isinstance(message, dict)
                else (f"a JSON {type(message).__name__}")
            )
            self.send_error(None, INVALID_REQUEST, f"invalid request: {kind}, not a message")
            return
        super().handle_message(message)


def _cause(exc: BaseException) -> str:
    """The innermost reason cattrs/attrs gave, in one line."""
    cause: BaseException | None = exc.__cause__ or exc
    while cause is not None and getattr(cause, "exceptions", None):
        cause = cause.exceptions[0]  # type: ignore[attr-defined]
    text = str(cause).strip().splitlines()[0] if cause is not None and str(cause).strip() else ""
    return text or type(cause).__name__
