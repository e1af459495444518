"""One debug session: the editor, debugpy's adapter and the runtime side channel, tied together.

Relaying is the default: every request goes to debugpy and every response and event comes
back, with sequence numbers mapped so our own messages never collide with either side.
Handlers exist only for what this adapter adds (see the `_on_request_*`, `_on_response_*`
and `_on_event_*` methods); they are found by name.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Callable
from typing import Any

from npu_debug import config as launch_config
from npu_debug import debuggee, describe, ranks
from npu_debug.channel import ChannelListener, LineSocket
from npu_debug.messaging import JsonStream, Message, ProtocolError, StreamClosed

log = logging.getLogger(__name__)

# How long to wait, once the debuggee has exited, for the bridge's final profile.
FINAL_PROFILE_WAIT = 5.0
# How long the bridge has to say what a bare ACL code in the program's exception means.
EXPLAIN_TIMEOUT = 3.0
# How long debugpy has to answer terminate/disconnect before we end the processes ourselves.
ENDING_TIMEOUT = 3.0


class Session:
    def __init__(self, client: JsonStream) -> None:
        self.client = client
        self.server: JsonStream | None = None
        self.server_process: subprocess.Popen[bytes] | None = None
        self.channel: ChannelListener | None = None
        self.lock = threading.RLock()
        self._client_seq = 0
        self._server_seq = 0
        # server seq -> (editor seq or None, our callback or None)
        self._pending: dict[int, tuple[int | None, Callable[[Message], None] | None]] = {}
        # editor seq of a relayed reverse request -> debugpy's seq
        self._reverse: dict[int, int] = {}
        self.config: launch_config.LaunchConfig | None = None
        self.acl_filter = True
        self.debuggee_pid: int | None = None
        self.pending_error: dict[str, Any] | None = None
        self.thread_errors: dict[int, dict[str, Any]] = {}
        self.done = threading.Event()
        self._reaper_control: int | None = None  # closing it kills debugpy's whole tree
        self._ending = False  # set once we ended debugpy ourselves (it did not answer)
        self._terminated_sent = False
        self.siblings: ranks.SiblingRanks | None = None  # the other ranks of a distributed job

    # ---- sending -------------------------------------------------------------------------

    def send_client(self, message: Message) -> None:
        with self.lock:
            self._client_seq += 1
            message["seq"] = self._client_seq
            if message.get("type") == "request" and "_server_seq" in message:
                self._reverse[self._client_seq] = message.pop("_server_seq")
        try:
            self.client.write(message)
        except StreamClosed:
            self.done.set()

    def send_event(self, event: str, body: dict[str, Any] | None = None) -> None:
        message: Message = {"type": "event", "event": event}
        if body is not None:
            message["body"] = body
        self.send_client(message)

    def respond(
        self, request: Message, body: dict[str, Any] | None = None, error: str | None = None
    ) -> None:
        response: Message = {
            "type": "response",
            "request_seq": request.get("seq", 0),
            "command": request.get("command", ""),
            "success": error is None,
        }
        if error is not None:
            response["message"] = error
            response["body"] = {"error": {"id": 1, "format": error, "showUser": True}}
        elif body is not None:
            response["body"] = body
        self.send_client(response)

    def send_server(
        self,
        request: Message,
        editor_seq: int | None,
        callback: Callable[[Message], None] | None = None,
    ) -> int:
        """Send `request` to debugpy; returns the seq it went out with."""
        if self.server is None:
            raise StreamClosed("debugpy adapter is not running")
        with self.lock:
            self._server_seq += 1
            seq = self._server_seq
            request = {**request, "seq": seq}
            self._pending[seq] = (editor_seq, callback)
        self.server.write(request)
        return seq

    # ---- the editor side -----------------------------------------------------------------

    def run(self) -> None:
        """Serve the editor until it disconnects or closes the stream."""
        try:
            while not self.done.is_set():
                try:
                    message = self.client.read()
                except (StreamClosed, ProtocolError) as exc:
                    log.info("editor stream ended: %s", exc)
                    break
                self.on_client_message(message)
        finally:
            self.shutdown()

    def on_client_message(self, message: Message) -> None:
        kind = message.get("type")
        if kind == "response":
            server_seq = self._reverse.pop(message.get("request_seq", -1), None)
            if server_seq is not None and self.server is not None:
                self.server.write({**message, "request_seq": server_seq})
            return
        if kind != "request":
            return
        command = str(message.get("command", ""))
        handler = getattr(self, f"_on_request_{command}", None)
        try:
            if handler is not None:
                handler(message)
            else:
                self.relay(message)
        except launch_config.ConfigError as exc:
            self.respond(message, error=str(exc))
        except StreamClosed:
            self.respond(message, error="the debugger is not running")
        except Exception as exc:  # never let one bad request take the adapter down
            log.exception("request %s failed", command)
            self.respond(message, error=f"internal error handling {command!r}: {exc}")

    def relay(self, message: Message, callback: Callable[[Message], None] | None = None) -> int:
        """Forward an editor request; its response comes back through `callback` if given."""
        return self.send_server(message, message.get("seq"), callback)

    # ---- intercepted requests ------------------------------------------------------------

    def _on_request_initialize(self, request: Message) -> None:
        if self.server is None:
            self._start_debugpy()

        def done(response: Message) -> None:
            if response.get("success"):
                body = response.setdefault("body", {})
                filters = body.setdefault("exceptionBreakpointFilters", [])
                filters.append(dict(describe.FILTER))
                body["supportsExceptionInfoRequest"] = True
            self.forward_response(response)

        self.relay(request, done)

    def _on_request_launch(self, request: Message) -> None:
        cfg = launch_config.parse(request.get("arguments") or {})
        self.config = cfg
        if self.channel is not None:  # a previous launch that debugpy refused
            self.channel.close()
        self.channel = ChannelListener(self._on_channel_message)
        rank_env = None
        if cfg.nproc is not None:
            port = ranks.free_port()
            rank_env = ranks.rank_env(cfg, cfg.rank, port)
            self.siblings = ranks.SiblingRanks(
                lambda category, text: self.send_event(
                    "output", {"category": category, "output": text}
                )
            )
            self.siblings.start(cfg, port)
        args = debuggee.debugpy_launch(cfg, self.channel.endpoint, rank_env)
        self.relay({**request, "arguments": args})

    def _on_request_setExceptionBreakpoints(self, request: Message) -> None:
        args = dict(request.get("arguments") or {})
        raw_filters, raw_options = args.get("filters"), args.get("filterOptions")
        filters = (
            [f for f in raw_filters if isinstance(f, str)] if isinstance(raw_filters, list) else []
        )
        options = (
            [o for o in raw_options if isinstance(o, dict)] if isinstance(raw_options, list) else []
        )
        enabled = describe.FILTER_ID in filters or any(
            o.get("filterId") == describe.FILTER_ID for o in options
        )
        self.acl_filter = enabled
        args["filters"] = [f for f in filters if f != describe.FILTER_ID]
        if "filterOptions" in args:
            args["filterOptions"] = [o for o in options if o.get("filterId") != describe.FILTER_ID]
        self._push_bridge_config()
        self.relay({**request, "arguments": args})

    def _on_request_disconnect(self, request: Message) -> None:
        args = dict(request.get("arguments") or {})
        if self.config is not None:
            # We never leave a launched debuggee behind (and debugpy would wait for it to end).
            args["terminateDebuggee"] = True
        self._relay_ending({**request, "arguments": args})

    def _on_request_terminate(self, request: Message) -> None:
        self._relay_ending(request)

    def _relay_ending(self, request: Message) -> None:
        """Relay terminate/disconnect, and answer it ourselves if debugpy does not in time.

        debugpy waits for the debuggee's output to end; a child the debuggee started in its
        own session that keeps stdout open makes that wait endless. Then we kill the whole
        tree (see reaper.py), answer, and say the session terminated."""
        if self._ending or self.server is None:  # we already ended debugpy's processes
            self.respond(request)
            if request.get("command") == "disconnect":
                self.done.set()
            return
        answered = threading.Event()

        def done(response: Message) -> None:
            answered.set()
            self.forward_response(response)

        server_seq = self.relay(request, done)

        def watchdog() -> None:
            if answered.wait(ENDING_TIMEOUT):
                return
            with self.lock:
                if self._pending.pop(server_seq, None) is None:
                    return  # answered meanwhile
            log.warning(
                "debugpy did not answer %s in %.1fs: ending the session's processes",
                request.get("command"),
                ENDING_TIMEOUT,
            )
            self._ending = True  # debugpy's stream is about to end: that is not our end
            self.kill_tree()
            self.respond(request)
            if not self._terminated_sent:
                self._terminated_sent = True
                self.send_event("terminated")
            if request.get("command") == "disconnect":
                self.done.set()

        threading.Thread(target=watchdog, name="npu-debug-ending", daemon=True).start()

    def kill_tree(self) -> None:
        """Kill debugpy, its launcher, the debuggee and everything they started (reaper.py)."""
        fd, self._reaper_control = self._reaper_control, None
        if fd is not None:
            with contextlib.suppress(OSError):
                os.close(fd)
        proc = self.server_process
        if proc is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=5)

    def _on_request_exceptionInfo(self, request: Message) -> None:
        thread_id = (request.get("arguments") or {}).get("threadId")
        info = self.thread_errors.get(thread_id) if isinstance(thread_id, int) else None

        def done(response: Message) -> None:
            if info is not None:
                response = {**response, "success": True, "body": describe.exception_info(info)}
                response.pop("message", None)
                self.forward_response(response)
            elif response.get("success") and self.channel is not None:
                # The program's own exception: the bridge says whether it names the code of
                # the last failing ACL call. Asked off debugpy's reader thread.
                threading.Thread(
                    target=self._forward_explained,
                    args=(response,),
                    name="npu-debug-explain",
                    daemon=True,
                ).start()
            else:
                self.forward_response(response)

        self.relay(request, done)

    def _forward_explained(self, response: Message) -> None:
        body = dict(response.get("body") or {})
        text = ""
        try:
            if self.channel is not None and body.get("description"):
                reply = self.channel.request(
                    "explain", {"text": str(body["description"])}, timeout=EXPLAIN_TIMEOUT
                )
                text = str((reply or {}).get("explanation") or "")
        finally:
            self.forward_response({**response, "body": describe.explained(body, text)})

    # ---- the debugpy side ----------------------------------------------------------------

    def _start_debugpy(self) -> None:
        cmd = [sys.executable, "-m", "debugpy.adapter"]
        log_dir = os.environ.get("ASCEND_LENS_DEBUGPY_LOG")
        if log_dir:
            cmd += ["--log-dir", log_dir]
        # debugpy runs below a reaper that kills the whole tree when our end of the control
        # pipe closes: at shutdown, on a stuck terminate, or when this adapter is killed.
        control_in, self._reaper_control = os.pipe()
        try:
            self.server_process = subprocess.Popen(
                [sys.executable, "-m", "npu_debug.reaper", str(control_in), "--", *cmd],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                pass_fds=(control_in,),
            )
        finally:
            os.close(control_in)
        assert self.server_process.stdout is not None and self.server_process.stdin is not None
        self.server = JsonStream(self.server_process.stdout, self.server_process.stdin, "debugpy")
        threading.Thread(target=self._read_server, name="npu-debug-server", daemon=True).start()

    def _read_server(self) -> None:
        assert self.server is not None
        try:
            while True:
                try:
                    message = self.server.read()
                except (StreamClosed, ProtocolError) as exc:
                    log.info("debugpy stream ended: %s", exc)
                    break
                try:
                    self.on_server_message(message)
                except Exception:
                    log.exception(
                        "relaying %r failed", message.get("command") or message.get("event")
                    )
        finally:
            if not self._ending:  # else the editor's disconnect ends the session
                self.done.set()

    def on_server_message(self, message: Message) -> None:
        kind = message.get("type")
        if kind == "response":
            with self.lock:
                editor_seq, callback = self._pending.pop(
                    message.get("request_seq", -1), (None, None)
                )
            if editor_seq is not None:
                message = {**message, "request_seq": editor_seq}
            if callback is not None:
                callback(message)
            elif editor_seq is not None:
                self.forward_response(message)
        elif kind == "event":
            handler = getattr(self, f"_on_event_{message.get('event')}", None)
            if handler is not None:
                handler(message)
            else:
                self.send_client(message)
        elif kind == "request":
            self.send_client({**message, "_server_seq": message.get("seq")})

    def forward_response(self, response: Message) -> None:
        self.send_client(dict(response))

    def _on_event_process(self, event: Message) -> None:
        pid = (event.get("body") or {}).get("systemProcessId")
        if isinstance(pid, int):
            self.debuggee_pid = pid
        self.send_client(event)

    def _on_event_stopped(self, event: Message) -> None:
        body = dict(event.get("body") or {})
        log.debug("stopped: %r", body)
        info = None
        if body.get("reason") == "exception":
            with self.lock:
                # Only the stop the bridge announced: an ordinary exception keeps debugpy's words.
                pending = self.pending_error
                if pending is not None and (
                    body.get("description") == pending.get("message")
                    or body.get("text") == pending.get("type")
                ):
                    info, self.pending_error = pending, None
        if info is not None:
            body["description"] = describe.stopped_description(info)
            body["text"] = str(info.get("name"))
            thread_id = body.get("threadId")
            if isinstance(thread_id, int):
                self.thread_errors[thread_id] = info
        self.send_client({**event, "body": body})
        if self.channel is not None and self.channel.connection is not None:
            threading.Thread(
                target=self._send_profile, name="npu-debug-profile", daemon=True
            ).start()

    def _on_event_continued(self, event: Message) -> None:
        thread_id = (event.get("body") or {}).get("threadId")
        if (event.get("body") or {}).get("allThreadsContinued", True):
            self.thread_errors.clear()
        elif isinstance(thread_id, int):
            self.thread_errors.pop(thread_id, None)
        self.send_client(event)

    def _on_event_exited(self, event: Message) -> None:
        self._await_final_profile()
        self.send_client(event)

    def _on_event_terminated(self, event: Message) -> None:
        self._await_final_profile()
        self._terminated_sent = True
        self.send_client(event)

    # ---- the runtime side channel --------------------------------------------------------

    def _on_channel_message(self, conn: LineSocket, message: Message) -> None:
        if message.get("request") == "aclError":
            with self.lock:
                self.pending_error = dict(message.get("body") or {})
            conn.reply(int(message.get("seq", 0)), {})
        elif message.get("request") == "getConfig":
            conn.reply(int(message.get("seq", 0)), {"stopOnAclError": self._stop_on_acl()})
        elif message.get("event") == "aclErrorAlso":
            # The same call failed twice (sanitizer + error): show the second in the console.
            text = describe.stopped_description(dict(message.get("body") or {}))
            self.send_event("output", {"category": "console", "output": f"also: {text}\n"})
        elif message.get("event") == "profile":
            body = message.get("body") or {}
            self._emit_profile(body.get("profile"))
            self._emit_state(body.get("state"))

    def _push_bridge_config(self) -> None:
        if self.channel is not None and self.channel.connection is not None:
            self.channel.request("config", {"stopOnAclError": self._stop_on_acl()}, timeout=0)

    def _stop_on_acl(self) -> bool:
        return self.acl_filter and (self.config is None or self.config.stop_on_acl_error)

    def _send_profile(self) -> None:
        if self.channel is None:
            return
        reply = self.channel.request("profile")
        if reply is not None:
            self._emit_profile(reply.get("profile"))
            self._emit_state(reply.get("state"))

    def _emit_profile(self, profile: Any) -> bool:
        if not isinstance(profile, dict) or self.config is None or self.config.profile is False:
            return False
        self.send_event("ascendProfile", profile)
        return True

    def _emit_state(self, state: Any) -> None:
        if isinstance(state, dict):
            self.send_event("ascendState", state)

    def _await_final_profile(self) -> None:
        if self.channel is not None and self.channel.connected.is_set():
            self.channel.closed.wait(FINAL_PROFILE_WAIT)

    # ---- ending --------------------------------------------------------------------------

    def shutdown(self) -> None:
        """Leave nothing running: debugpy's adapter, the debuggee and its process group, and
        the other ranks of a distributed job."""
        self.done.set()
        if self.siblings is not None:
            self.siblings.stop()
        proc = self.server_process
        if proc is not None and proc.poll() is None:
            try:
                assert proc.stdin is not None
                proc.stdin.close()
            except OSError:
                pass
            try:
                proc.wait(timeout=3)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        if self.debuggee_pid is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.debuggee_pid, signal.SIGKILL)
        self.kill_tree()  # whatever the debuggee left, in any session
        if self.channel is not None:
            self.channel.close()
