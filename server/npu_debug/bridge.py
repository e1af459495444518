"""The runtime bridge inside the debuggee: tells the adapter what the emulated NPU did.

Installed by `npu_debug.bootstrap` before the user's program runs. It listens to the
runtime's hooks, runs the profiler for the per-line profile, answers the adapter's
requests on the side channel from an untraced thread (so it answers while the program is
stopped), and turns ACL failures into debugger stops at the user's line.
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import os
import sys
import threading
import types
from typing import Any

from npu_debug.channel import LineSocket, Message, connect

log = logging.getLogger(__name__)

# Stopping waits this long for the adapter to acknowledge the error details.
ACK_TIMEOUT = 5.0


class _State:
    def __init__(self) -> None:
        self.channel: LineSocket | None = None
        self.stop_on_acl_error = True
        self.lock = threading.Lock()
        self.profile_dir: str | None = None
        self.trace_path: str | None = None
        self.traced_count = 0  # records in the trace last written at a stop
        self.profiler: Any = None  # npu_runtime.profiler.session.Profiler when profiling
        self.profile_ascend_pt = False  # also write torch_npu-style *_ascend_pt/ dirs
        self.dumper: Any = None  # npu_runtime.dump.session.Dumper when dumping
        self.last_call: types.FrameType | None = None  # runtime frame of the last stop
        self.errors: list[Any] = []  # recent failing calls, for the state document
        self.device: str | None = None  # the launch's device profile name, if given
        self.devices: int | None = None
        self.last: Any = None  # npu_runtime.errors.explain.LastError once tracking


_state = _State()


def _site(site: Any) -> dict[str, Any] | None:
    if site is None:
        return None
    return {
        "file": getattr(site, "file", None),
        "line": getattr(site, "line", None),
        "function": getattr(site, "function", ""),
    }


def describe_error(err: BaseException) -> dict[str, Any]:
    """The facts the adapter shows for an ACL failure (exceptionInfo, stopped description)."""
    return {
        "code": getattr(err, "code", None),
        "name": getattr(err, "name", type(err).__name__),
        "meaning": getattr(err, "meaning", str(err)),
        "fix": getattr(err, "fix", ""),
        "api": getattr(err, "api", ""),
        "kind": getattr(err, "kind", "error"),
        "check": getattr(err, "check", ""),
        "detail": getattr(err, "detail", ""),
        "message": str(err),
        "type": type(err).__name__,
        "site": _site(getattr(err, "site", None)),
        "launch_site": _site(getattr(err, "launch_site", None)),
        "alloc_site": _site(getattr(err, "alloc_site", None)),
        "free_site": _site(getattr(err, "free_site", None)),
    }


def _device_name() -> str:
    if "npu_runtime.core.runtime" in sys.modules:
        from npu_runtime.core.runtime import get_runtime

        return str(get_runtime().profile.soc_name)
    from npu_runtime.devices import get_profile

    return str(get_profile(os.environ.get("NPU_DEVICE") or None).soc_name)


def profile_snapshot(final: bool = False) -> dict[str, Any] | None:
    """The per-line aggregate (docs/profile-format.md) of all work recorded so far.

    At a stop the Chrome trace is (re)written first, so the document names a trace that
    matches it; at exit the profiler writes its whole directory (CSV, trace, lines.json).
    """
    if _state.profile_dir is None:
        return None
    from npu_runtime.profiler.lines import aggregate

    profiler = _state.profiler
    if profiler is None:  # no device work yet
        return aggregate([], device=_device_name(), trace_path=None)
    if final:
        profiler.stop()
        return dict(profiler.summary)
    from npu_runtime.profiler.writer import write_profile

    records = list(profiler.records)
    if len(records) != _state.traced_count:
        written = write_profile(profiler.data(), profiler.out_dir, ("trace",))
        _state.trace_path = str(written["trace"][0])
        _state.traced_count = len(records)
    return aggregate(records, device=profiler.device, trace_path=_state.trace_path)


def _start_profiler(record: Any) -> None:
    """Work listener for the first record only: start the profiler and hand it the record.

    Starting lazily keeps numpy and the runtime out of programs that never use the NPU.
    """
    from npu_runtime.core import hooks

    with _state.lock:
        hooks.remove_work_listener(_start_profiler)
        if _state.profiler is not None or _state.profile_dir is None:
            return
        from npu_runtime.profiler.session import Profiler
        from npu_runtime.profiler.writer import DEFAULT_EXPORTERS

        exporters = DEFAULT_EXPORTERS + (("ascend_pt",) if _state.profile_ascend_pt else ())
        profiler = Profiler(_state.profile_dir, device=_device_name(), exporters=exporters)
        profiler.start()
        profiler.collector.on_work(record)
        _state.profiler = profiler


def _user_frame() -> tuple[types.FrameType | None, types.FrameType | None]:
    """The first user frame above the failing call, and the runtime frame it called."""
    from npu_runtime.sites import _is_ours

    callee: types.FrameType | None = None
    frame: types.FrameType | None = sys._getframe(2)
    while frame is not None:
        filename = frame.f_code.co_filename
        if not _is_ours(filename) and not filename.startswith(_PACKAGE_DIR):
            return frame, callee
        callee, frame = frame, frame.f_back
    return None, None


_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


def _stop_line(frame: types.FrameType, info: dict[str, Any]) -> int:
    """Stop at the launching line when the failure surfaced later in the same function."""
    launch = info.get("launch_site")
    code = frame.f_code
    if (
        launch
        and launch.get("line")
        and os.path.abspath(str(launch.get("file"))) == os.path.abspath(code.co_filename)
        and launch.get("function", code.co_name) in ("", code.co_name)
    ):
        return int(launch["line"])
    return frame.f_lineno


class _StateSource:
    """What `npu_runtime.state.snapshot` reads (the kernel's session reads the same), for this process."""

    def __init__(self) -> None:
        self.device = _state.device
        self.devices = _state.devices
        self.all_errors = list(_state.errors)

    @staticmethod
    def loaded() -> bool:
        return "npu_runtime.core.runtime" in sys.modules

    @staticmethod
    def runtime() -> Any:
        from npu_runtime.core.runtime import get_runtime

        return get_runtime()


def state_snapshot() -> dict[str, Any]:
    """The `ascend-lens.state/1` document (docs/kernel.md) the Devices view shows."""
    from npu_runtime.state import snapshot

    return snapshot(_StateSource())


def on_error(err: BaseException) -> None:
    """Error listener: stop the debugger at the user's line for this ACL failure."""
    _state.errors.append(err)
    del _state.errors[:-200]  # bounded: a failing loop must not grow memory
    channel = _state.channel
    if channel is None or not _state.stop_on_acl_error:
        return
    import debugpy

    if not debugpy.is_client_connected():
        return
    frame, callee = _user_frame()
    if frame is None:
        return
    info = describe_error(err)
    # One call can report twice (a sanitizer finding, then the call's own error): stop once.
    # Holding the callee frame keeps its identity unique until the next failing call.
    if callee is not None and callee is _state.last_call:
        channel.send({"event": "aclErrorAlso", "body": info})
        return
    _state.last_call = callee
    line = _stop_line(frame, info)
    info["stop"] = {"file": frame.f_code.co_filename, "line": line}
    info["thread"] = threading.get_ident()
    # The adapter must hold the details before debugpy reports the stop on its own path.
    channel.request("aclError", info, timeout=ACK_TIMEOUT)
    tb = types.TracebackType(None, frame, frame.f_lasti, line)
    exc = err if isinstance(err, Exception) else RuntimeError(str(err))
    debugpy.trigger_exception_handler((type(exc), exc, tb), as_uncaught=False)


def track_last_error() -> None:
    """Remember the last failing ACL call, to explain a bare code the program raises."""
    if _state.last is not None:
        return
    try:
        from npu_runtime.core import hooks  # light: no numpy, no runtime state
        from npu_runtime.errors.explain import LastError
    except ImportError:
        return  # the runtime is not available: a plain Python session
    _state.last = LastError()
    hooks.add_error_listener(_state.last)


def explanation(exc: BaseException) -> str:
    """What the last failing ACL call's code means, when `exc` names that code (else "")."""
    last = _state.last
    if last is None or last.error is None:
        return ""
    from npu_runtime.errors.explain import explain

    return explain(exc, last.error)


def _guarded(fn: Any) -> Any:
    try:
        return fn()
    except Exception:  # the state is an extra: never let it cost the profile
        log.exception("%s failed", getattr(fn, "__name__", fn))
        return None


def _serve(channel: LineSocket) -> None:
    while (message := channel.read()) is not None:
        name = message.get("request")
        seq = message.get("seq")
        if name is None or not isinstance(seq, int):
            continue
        body: Message = {}
        if name == "profile":
            body = {"profile": profile_snapshot(), "state": _guarded(state_snapshot)}
        elif name == "explain":
            # The adapter has only the stopped exception's text (str(exc)) from debugpy.
            text = str(message.get("body", {}).get("text") or "")
            body = {"explanation": explanation(Exception(text)) if text else ""}
        elif name == "config":
            value = message.get("body", {}).get("stopOnAclError")
            if isinstance(value, bool):
                _state.stop_on_acl_error = value
        channel.reply(seq, body)


def _start_dump(out_dir: str, level: str) -> None:
    """Dump every op from the start: the dumper must see the first kernel's tensors."""
    try:
        from npu_runtime.dump.session import Dumper

        _state.dumper = Dumper(out_dir, level).start()
    except (ImportError, OSError, ValueError) as exc:
        sys.stderr.write(f"ascend-lens debug: no dump to {out_dir} ({exc})\n")


def _stop_dump() -> None:
    dumper, _state.dumper = _state.dumper, None
    if dumper is None:
        return
    try:
        files = dumper.stop()
    except OSError as exc:
        sys.stderr.write(f"ascend-lens debug: cannot write dump to {dumper.out_dir}: {exc}\n")
        return
    written = "written to" if files else "empty (no op ran): nothing written to"
    sys.stderr.write(f"dump {written} {dumper.out_dir}\n")


def _at_exit() -> None:
    channel = _state.channel
    if channel is None:
        _stop_dump()
        return
    if "debugpy" in sys.modules:
        # The program is over (user atexit handlers ran before this one): writing the
        # profile directory need not pay for the debugger's tracing of every call.
        import debugpy

        with contextlib.suppress(Exception):  # debugpy may have shut down already
            debugpy.trace_this_thread(False)
    _stop_dump()
    try:
        profile = profile_snapshot(final=True)
    except Exception:  # a profile we cannot write must not hide the program's own exit
        log.exception("writing the profile failed")
        profile = None
    state = _guarded(state_snapshot)
    channel.send({"event": "profile", "body": {"profile": profile, "state": state, "final": True}})
    channel.close()
    _state.channel = None


def install(settings: dict[str, Any]) -> None:
    """Connect to the adapter and hook the runtime. Settings come from the adapter (JSON)."""
    track_last_error()
    if settings.get("dump"):  # asked for explicitly: wanted with or without the adapter
        _start_dump(str(settings["dump"]), str(settings.get("dumpLevel") or "statistics"))
        if _state.dumper is not None:
            atexit.register(_stop_dump)  # runs after _at_exit (LIFO): then a no-op
    endpoint = settings.get("channel")
    if not endpoint:
        return
    try:
        channel = connect(str(endpoint))
    except (OSError, ValueError) as exc:
        # The program still runs under the debugger, only without the NPU extras.
        sys.stderr.write(f"ascend-lens debug: no side channel to the adapter ({exc})\n")
        return
    _state.channel = channel
    _state.stop_on_acl_error = bool(settings.get("stopOnAclError", True))
    _state.device = settings.get("device")
    _state.devices = settings.get("devices")
    _state.profile_ascend_pt = bool(settings.get("profileAscendPt", False))
    thread = threading.Thread(target=_serve, args=(channel,), name="npu-debug-bridge", daemon=True)
    # Never traced or suspended by pydevd: it must answer while the program is stopped.
    thread.pydev_do_not_trace = True  # type: ignore[attr-defined]
    thread.is_pydev_daemon_thread = True  # type: ignore[attr-defined]
    thread.start()
    atexit.register(_at_exit)
    # The editor's exception filters were set after launch: ask for the current switch.
    current = channel.request("getConfig", timeout=ACK_TIMEOUT)
    if current is not None and isinstance(current.get("stopOnAclError"), bool):
        _state.stop_on_acl_error = current["stopOnAclError"]
    try:
        from npu_runtime.core import hooks  # light: no numpy, no runtime state
    except ImportError:
        return  # the runtime is not available: a plain Python session
    hooks.add_error_listener(on_error)
    profile_dir = settings.get("profileDir")
    if profile_dir:
        _state.profile_dir = str(profile_dir)
        hooks.add_work_listener(_start_profiler)
