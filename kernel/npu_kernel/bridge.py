"""`ascend-lens kernel bridge`: the kernel behind newline-delimited JSON on stdio.

For editors without the Jupyter extension (and the VS Code extension's own notebook
controller). One JSON object per line each way; docs/kernel.md lists every message.
Requests: execute, interrupt, restart, state, shutdown. Events: ready, output,
clear_output, reply, state, error, died. Only protocol goes to stdout; the kernel's own stdout and all logs
go to stderr.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import subprocess
import sys
import threading
import uuid
from typing import Any, TextIO

from npu_kernel import KERNEL_NAME, STATE_COMM_TARGET

log = logging.getLogger("npu_kernel.bridge")

READY_TIMEOUT_S = 60.0
OUTPUT_TYPES = ("stream", "display_data", "execute_result", "error", "update_display_data")


class BridgeError(Exception):
    """A request the bridge cannot accept; answered with an `error` event."""


def to_output(msg: dict[str, Any]) -> dict[str, Any] | None:
    """An iopub message as an nbformat-style output dict (None for other message types)."""
    kind = msg["header"]["msg_type"]
    content = msg["content"]
    if kind == "stream":
        return {"output_type": "stream", "name": content["name"], "text": content["text"]}
    if kind in ("display_data", "update_display_data"):
        out = {"output_type": kind, "data": content["data"], "metadata": content["metadata"]}
        display_id = content.get("transient", {}).get("display_id")
        if display_id is not None:
            out["display_id"] = display_id
        return out
    if kind == "execute_result":
        return {
            "output_type": "execute_result",
            "execution_count": content["execution_count"],
            "data": content["data"],
            "metadata": content["metadata"],
        }
    if kind == "error":
        return {
            "output_type": "error",
            "ename": content["ename"],
            "evalue": content["evalue"],
            "traceback": content["traceback"],
        }
    return None


class Bridge:
    """Owns one kernel (via jupyter_client) and translates between it and stdio JSON."""

    def __init__(self, kernel_name: str, cwd: str | None, out: TextIO) -> None:
        from jupyter_client.manager import AsyncKernelManager

        self.kernel_name = kernel_name
        self.cwd = cwd
        self.out = out
        self.km = AsyncKernelManager(kernel_name=kernel_name)
        self.kc: Any = None
        self._executions: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self._current: asyncio.Task[None] | None = None
        self._current_id: Any = None
        self._waiters: dict[str, asyncio.Queue[dict[str, Any]]] = {}  # msg_id -> its iopub
        self._pump: asyncio.Task[None] | None = None
        self._state_comm = ""

    # Output ----------------------------------------------------------------------------
    def send(self, message: dict[str, Any]) -> None:
        try:
            line = json.dumps(message, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
        except ValueError as exc:  # never write a line that is not JSON (NaN, Infinity)
            log.error("dropping an event that is not valid JSON: %s", exc)
            line = json.dumps(
                {"type": "error", "id": None, "message": f"internal: event not sendable ({exc})"}
            )
        self.out.write(line + "\n")
        self.out.flush()

    # Kernel lifecycle ------------------------------------------------------------------
    async def _connect(self) -> dict[str, Any]:
        self.kc = self.km.client()
        self.kc.start_channels()
        await self.kc.wait_for_ready(timeout=READY_TIMEOUT_S)
        msg_id = self.kc.kernel_info()
        reply = await self._shell_reply(msg_id)
        self._pump = asyncio.ensure_future(self._pump_iopub())
        # Our own `ascend-lens.state` comm: its messages become `state` events.
        self._state_comm = uuid.uuid4().hex
        content = {"comm_id": self._state_comm, "target_name": STATE_COMM_TARGET, "data": {}}
        self.kc.shell_channel.send(self.kc.session.msg("comm_open", content))
        return dict(reply["content"])

    async def _disconnect(self) -> None:
        if self._pump is not None:
            self._pump.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._pump
            self._pump = None
        self.kc.stop_channels()

    async def _pump_iopub(self) -> None:
        """Route iopub: state comm messages to `state` events, the rest to their request."""
        while True:
            msg: dict[str, Any] = await self.kc.get_iopub_msg()
            kind = msg["header"]["msg_type"]
            content = msg["content"]
            if kind == "comm_msg" and content.get("comm_id") == self._state_comm:
                data = content.get("data", {})
                if data.get("type") == "state":
                    self.send({"type": "state", "reason": data["reason"], "state": data["state"]})
                continue
            waiter = self._waiters.get(msg["parent_header"].get("msg_id", ""))
            if waiter is not None:
                waiter.put_nowait(msg)

    async def start(self) -> None:
        # The kernel never sees our stdin, and its stdout goes to our stderr: stdout is
        # the protocol stream.
        await self.km.start_kernel(
            cwd=self.cwd, stdin=subprocess.DEVNULL, stdout=sys.stderr.fileno()
        )
        info = await self._connect()
        self._send_ready(info)

    def _send_ready(self, info: dict[str, Any]) -> None:
        self.send(
            {
                "type": "ready",
                "kernel": self.kernel_name,
                "implementation": info.get("implementation"),
                "language_info": info.get("language_info", {}),
                "banner": info.get("banner", ""),
            }
        )

    async def _shell_reply(self, msg_id: str) -> dict[str, Any]:
        while True:
            reply: dict[str, Any] = await self.kc.get_shell_msg()
            if reply["parent_header"].get("msg_id") == msg_id:
                return reply

    # Execution -------------------------------------------------------------------------
    async def _execute(self, req: dict[str, Any]) -> None:
        rid = req.get("id")
        msg_id = self.kc.execute(req["code"], store_history=True, allow_stdin=False)
        # Registered before the first await, so the pump cannot miss a message.
        waiter: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self._waiters[msg_id] = waiter
        try:
            await self._relay(rid, msg_id, waiter)
        finally:
            del self._waiters[msg_id]

    async def _relay(self, rid: Any, msg_id: str, waiter: asyncio.Queue[dict[str, Any]]) -> None:
        while True:
            msg = await self._next_or_death(waiter)
            if msg is None:
                self.send({"type": "reply", "id": rid, "status": "aborted", "reason": "died"})
                return
            kind = msg["header"]["msg_type"]
            if kind == "status" and msg["content"]["execution_state"] == "idle":
                break
            if kind == "clear_output":
                self.send({"type": "clear_output", "id": rid, "wait": msg["content"]["wait"]})
                continue
            output = to_output(msg)
            if output is not None:
                self.send({"type": "output", "id": rid, "output": output})
        reply = await self._shell_reply(msg_id)
        content = reply["content"]
        self.send(
            {
                "type": "reply",
                "id": rid,
                "status": content["status"],
                "execution_count": content.get("execution_count"),
            }
        )

    async def _next_or_death(self, waiter: asyncio.Queue[dict[str, Any]]) -> dict[str, Any] | None:
        """The request's next iopub message, or None once the kernel process has died."""
        while True:
            try:
                return await asyncio.wait_for(waiter.get(), timeout=0.5)
            except asyncio.TimeoutError:
                if not await self.km.is_alive():
                    self.send({"type": "died", "exit_code": self._exit_code()})
                    return None

    def _exit_code(self) -> int | None:
        proc = getattr(self.km, "provisioner", None)
        code = getattr(getattr(proc, "process", None), "returncode", None)
        return code if isinstance(code, int) else None

    async def run_executions(self) -> None:
        while True:
            req = await self._executions.get()
            self._current_id = req.get("id")
            self._current = asyncio.ensure_future(self._execute(req))
            with contextlib.suppress(asyncio.CancelledError):
                await self._current
            self._current = None
            self._current_id = None

    # Requests --------------------------------------------------------------------------
    async def handle(self, req: dict[str, Any]) -> bool:
        """Act on one request; False once the bridge should exit."""
        kind = req.get("type")
        rid = req.get("id")
        if kind == "execute":
            if not isinstance(req.get("code"), str):
                raise BridgeError('"execute" needs a string "code"')
            self._executions.put_nowait(req)
            return True
        if kind == "interrupt":
            await self.km.interrupt_kernel()
            self.send({"type": "reply", "id": rid, "status": "ok"})
            return True
        if kind == "restart":
            await self._restart()
            self.send({"type": "reply", "id": rid, "status": "ok"})
            return True
        if kind == "state":
            data = {"comm_id": self._state_comm, "data": {"request": "state"}}
            self.kc.shell_channel.send(self.kc.session.msg("comm_msg", data))
            self.send({"type": "reply", "id": rid, "status": "ok"})
            return True
        if kind == "shutdown":
            await self._abort_all("shutdown")
            await self._disconnect()
            await self.km.shutdown_kernel()
            self.send({"type": "reply", "id": rid, "status": "ok"})
            return False
        raise BridgeError(
            f"unknown request type {kind!r}; "
            "expected execute, interrupt, restart, state or shutdown"
        )

    async def _abort_all(self, reason: str) -> None:
        """Cancel the running cell and drop queued ones, answering each with `aborted`."""
        if self._current is not None:
            self._current.cancel()
            self._current = None  # answered here; the runner must not answer it again
            self.send(
                {"type": "reply", "id": self._current_id, "status": "aborted", "reason": reason}
            )
        while not self._executions.empty():
            queued = self._executions.get_nowait()
            self.send(
                {"type": "reply", "id": queued.get("id"), "status": "aborted", "reason": reason}
            )
        await asyncio.sleep(0)  # let the cancelled task unwind

    async def _restart(self) -> None:
        await self._abort_all("restart")
        await self._disconnect()
        await self.km.restart_kernel(now=False)
        info = await self._connect()
        self._send_ready(info)


def _not_json(token: str) -> float:
    raise json.JSONDecodeError(f"{token} is not JSON", token, 0)


def _finite(text: str) -> float:
    value = float(text)
    if value != value or value in (float("inf"), float("-inf")):
        raise json.JSONDecodeError(f"{text} is out of range for a JSON number", text, 0)
    return value


def decode_request(line: str) -> dict[str, Any]:
    """One request line as strict JSON (no NaN/Infinity), with an `id` that can be echoed.

    An id is a string, a finite number or null, as in JSON-RPC: anything else could not be
    written back as valid JSON (or would not identify the request)."""
    req = json.loads(line, parse_constant=_not_json, parse_float=_finite)
    if not isinstance(req, dict):
        raise BridgeError("each line must be a JSON object")
    rid = req.get("id")
    if isinstance(rid, bool) or not (rid is None or isinstance(rid, str | int | float)):
        raise BridgeError(f'"id" must be a string, a number or null, not {json.dumps(rid)}')
    return req


def _reader(
    loop: asyncio.AbstractEventLoop, queue: asyncio.Queue[str | None], stream: TextIO
) -> None:
    for line in stream:
        loop.call_soon_threadsafe(queue.put_nowait, line)
    loop.call_soon_threadsafe(queue.put_nowait, None)


async def serve(kernel_name: str, cwd: str | None, stdin: TextIO, stdout: TextIO) -> int:
    bridge = Bridge(kernel_name, cwd, stdout)
    try:
        await bridge.start()
    except Exception as exc:
        bridge.send(
            {"type": "error", "id": None, "message": f"cannot start kernel {kernel_name!r}: {exc}"}
        )
        with contextlib.suppress(Exception):
            await bridge.km.shutdown_kernel(now=True)
        return 1
    lines: asyncio.Queue[str | None] = asyncio.Queue()
    loop = asyncio.get_running_loop()
    threading.Thread(target=_reader, args=(loop, lines, stdin), daemon=True).start()
    runner = asyncio.ensure_future(bridge.run_executions())
    try:
        while True:
            line = await lines.get()
            if line is None:  # editor closed stdin: shut the kernel down
                await bridge.handle({"type": "shutdown", "id": None})
                return 0
            if not line.strip():
                continue
            req: Any = None
            try:
                req = decode_request(line)
                if not await bridge.handle(req):
                    return 0
            except json.JSONDecodeError as exc:
                bridge.send({"type": "error", "id": None, "message": f"invalid JSON: {exc}"})
            except BridgeError as exc:
                rid = req.get("id") if isinstance(req, dict) else None
                bridge.send({"type": "error", "id": rid, "message": str(exc)})
            except Exception as exc:  # a failed interrupt/restart must not kill the bridge
                log.exception("request failed")
                rid = req.get("id") if isinstance(req, dict) else None
                bridge.send({"type": "error", "id": rid, "message": f"{type(exc).__name__}: {exc}"})
    finally:
        runner.cancel()


def main(kernel_name: str = KERNEL_NAME, cwd: str | None = None) -> int:
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING)
    return asyncio.run(serve(kernel_name, cwd, sys.stdin, sys.stdout))
