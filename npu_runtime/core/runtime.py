"""The process-wide runtime: lifecycle, devices, contexts, handles and error reporting.

Every core call raises AclError on failure; `fail()` builds the error, records it as the
thread's most recent error (acl.get_recent_err_msg) and tells the error listeners, so the
pyACL layer (which returns codes) and the Pythonic layer (which raises) report alike.
Behaviour and codes follow ../shared/reference/acl/api.md; sections are cited inline.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import sys
import threading
import time
from typing import TypeVar

import numpy as np

from npu_runtime.core import hooks
from npu_runtime.core.context import Context
from npu_runtime.core.device import Device
from npu_runtime.core.event import Event
from npu_runtime.core.faults import injector
from npu_runtime.core.hostmem import HostMemory
from npu_runtime.core.memory import MAX_DEVICES, device_of
from npu_runtime.core.sanitizer import Sanitizer
from npu_runtime.core.stream import HostWrite, Stream
from npu_runtime.devices import DeviceProfile, get_profile
from npu_runtime.errors import AclError, codes
from npu_runtime.records import SourceSite
from npu_runtime.sites import user_site

ENV_DEVICE = "NPU_DEVICE"
ENV_DEVICES = "NPU_DEVICES"
DEFAULT_DEVICE_COUNT = 8  # an Atlas 800T A2
_HANDLE_BASE = 0x5A00_0000_0000  # handles look like pointers, as in pyACL (api.md §0)
_HANDLE_STEP = 0x40

T = TypeVar("T")


class _ThreadState(threading.local):
    """Per host thread: the current context and the last error, as in AscendCL."""

    def __init__(self) -> None:
        self.context: Context | None = None
        self.recent_msg: str | None = None
        self.last_error = 0


class MemoryAccess:
    """`rt.memory`: device memory by address, whichever device it is on (for kernels)."""

    def __init__(self, rt: Runtime) -> None:
        self._rt = rt

    def view(self, addr: int, nbytes: int) -> np.ndarray:
        """A writable uint8 view of device memory; ValueError outside a live allocation."""
        dev_id = device_of(addr)
        dev = self._rt.devices.get(dev_id) if dev_id is not None else None
        if dev is None:
            raise ValueError(f"0x{addr:x} is not an address on an open device")
        return dev.memory.view(addr, nbytes)

    def is_device(self, addr: int) -> bool:
        return device_of(addr) is not None


class Runtime:
    """All runtime state of the process; `get_runtime()` returns the one instance.

    Configuration (profile, device count) survives `reset()`; devices, handles, host
    buffers, findings and injections do not. The current context is per host thread.
    """

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.memory = MemoryAccess(self)
        self.tls = _ThreadState()
        self.hostmem = HostMemory()
        self.sanitizer = Sanitizer()
        self.profile: DeviceProfile = _env_profile()
        self.device_count = _env_count()
        self._reset_state()
        _load_env_injections()

    def _reset_state(self) -> None:
        self.initialized = False
        self.ever_initialized = False
        self.devices: dict[int, Device] = {}
        self.handles: dict[int, object] = {}
        self._handle_seq = itertools.count(1)
        self.peak_by_device: dict[int, int] = {}
        self.streams_by_device: dict[int, int] = {}
        self.callbacks: dict[int, list[tuple[object, object, Stream]]] = {}
        self.callback_cv = threading.Condition(self.lock)
        self.running_callbacks = 0  # callbacks a report thread is executing right now
        self.sys_params: dict[int, int] = {}  # aclrtSetSysParamOpt values
        self.tls = _ThreadState()

    # -- configuration --------------------------------------------------------------
    def configure(self, device: str | None = None, devices: int | None = None) -> None:
        """Choose the emulated SoC and the device count (before any device is set)."""
        with self.lock:
            if self.devices:
                raise RuntimeError("configure() must be called before any device is set")
            if device is not None:
                self.profile = get_profile(device)
            if devices is not None:
                if not 1 <= devices <= MAX_DEVICES:
                    raise ValueError(device_count_error(devices))
                self.device_count = devices

    def reset(self) -> None:
        """Forget every device, handle, buffer, finding and injection: a clean process.

        As in a fresh process, NPU_INJECT is read again (with its counters at zero).
        """
        with self.lock:
            self._reset_state()
            self.hostmem.clear()
            self.sanitizer.clear()
            injector.clear()
            _load_env_injections()

    # -- errors ---------------------------------------------------------------------
    def fail(self, code: int, api: str, detail: str = "") -> AclError:
        """Build, record and announce the error a failing call returns."""
        err = AclError(code, api, detail, site=user_site(2))
        self.report(err)
        return err

    def report(self, err: AclError) -> None:
        self.tls.last_error = err.code
        self.tls.recent_msg = recent_message(err)
        hooks.emit_error(err)

    def check_injection(self, api: str) -> None:
        if injector.active:
            code = injector.api_fails(api)
            if code is not None:
                raise self.fail(code, api, f"injected failure ({api} -> {code})")

    # -- handles --------------------------------------------------------------------
    def new_handle(self, obj: object) -> int:
        h = _HANDLE_BASE + next(self._handle_seq) * _HANDLE_STEP
        self.handles[h] = obj
        return h

    def lookup(self, handle: int, kind: type[T]) -> T | None:
        obj = self.handles.get(handle)
        return obj if isinstance(obj, kind) else None

    # -- lifecycle (api.md §8) -----------------------------------------------------
    def init(self, config_path: str | None = None) -> None:
        api = "aclInit"
        self.check_injection(api)
        with self.lock:
            if self.initialized:
                raise self.fail(
                    codes.ACL_ERROR_REPEAT_INITIALIZE, api, "acl.init was already called"
                )
            if config_path:
                _read_config(self, config_path, api)
            self.initialized = True
            self.ever_initialized = True

    def finalize(self) -> None:
        api = "aclFinalize"
        self.check_injection(api)
        with self.lock:
            if not self.initialized:
                if self.ever_initialized:
                    raise self.fail(
                        codes.ACL_ERROR_REPEAT_FINALIZE, api, "acl.finalize was already called"
                    )
                raise self.fail(codes.ACL_ERROR_UNINITIALIZE, api, "acl.init was never called")
            for dev_id in list(self.devices):
                self._release_device(dev_id, api)
            self.report_host_leaks(api, user_site(1))
            self.initialized = False

    def _lost_write(self, write: HostWrite, site: SourceSite | None) -> None:
        """An async device-to-host copy finished into host memory freed meanwhile."""
        if self.sanitizer.enabled:
            old = self.hostmem.freed_pinned.get(write.dst)
            self.sanitizer.report(
                "use-after-free",
                "aclrtMemcpyAsync",
                f"the async copy into host 0x{write.dst:x} completed after that memory was freed; "
                "its bytes were dropped",
                site=site,
                launch_site=write.site,
                alloc_site=old.site if old is not None else None,
            )

    def report_host_leaks(self, api: str, site: SourceSite | None) -> None:
        """malloc_host blocks never freed are leaks too (sanitizer); they are released."""
        for buf in self.hostmem.live_pinned():
            if self.sanitizer.enabled:
                self.sanitizer.report(
                    "leak",
                    api,
                    f"{buf.size} bytes of host memory at 0x{buf.start:x} (malloc_host) were never freed",
                    site=site,
                    alloc_site=buf.site,
                )
            self.hostmem.free_host(buf.start)

    def require_init(self, api: str) -> None:
        if not self.initialized:
            raise self.fail(codes.ACL_ERROR_UNINITIALIZE, api, "call acl.init() first")

    # -- devices --------------------------------------------------------------------
    def set_device(self, device_id: int) -> None:
        api = "aclrtSetDevice"
        self.check_injection(api)
        self.require_init(api)
        with self.lock:
            if not 0 <= device_id < self.device_count:
                raise self.fail(
                    codes.ACL_ERROR_RT_INVALID_DEVICEID,
                    api,
                    f"device {device_id} is out of range: {self.device_count} device(s) (0..{self.device_count - 1})",
                )
            dev = self.devices.get(device_id)
            if dev is None:
                dev = Device(device_id, self.profile, self._lost_write)
                self.devices[device_id] = dev
                ctx = Context(0, dev, is_default=True)
                ctx.handle = self.new_handle(ctx)
                ctx.default_stream = self._new_stream(ctx, stream_id=0)
                dev.default_context = ctx
            dev.set_count += 1
            self.tls.context = dev.default_context

    def reset_device(self, device_id: int) -> None:
        api = "aclrtResetDevice"
        self.check_injection(api)
        with self.lock:
            dev = self.devices.get(device_id)
            if dev is None or dev.set_count == 0:
                raise self.fail(
                    codes.ACL_ERROR_RT_CONTEXT_RELEASE_ERROR,
                    api,
                    f"device {device_id} has not been set or has already been reset",
                )
            dev.set_count -= 1
            if dev.set_count == 0:
                self._release_device(device_id, api)

    def _release_device(self, device_id: int, api: str) -> None:
        """Free everything of the device; live allocations are leaks for the sanitizer."""
        dev = self.devices.pop(device_id)
        with dev.lock:
            dev.host_us = max([dev.host_us, *(s.ready_us for s in dev.streams.values())])
        # A device being torn down reports no more faults.
        with contextlib.suppress(AclError):
            dev.settle(list(dev.streams.values()), self.hostmem, user_site(2), api)
        if self.sanitizer.enabled:
            for block in list(dev.memory.live.values()):
                if block.owner:
                    continue
                self.sanitizer.report(
                    "leak",
                    api,
                    f"{block.size} bytes at 0x{block.addr:x} on device {device_id} were never freed",
                    site=user_site(2),
                    alloc_site=block.site,
                )
        self.peak_by_device[device_id] = max(self.peak_by_device.get(device_id, 0), dev.memory.peak)
        self.streams_by_device[device_id] = max(
            self.streams_by_device.get(device_id, 0), dev.peak_streams
        )
        for h, obj in list(self.handles.items()):
            if getattr(obj, "device", None) is dev:
                del self.handles[h]
                if hasattr(obj, "alive"):
                    obj.alive = False
        if self.tls.context is not None and self.tls.context.device is dev:
            self.tls.context = None

    def current_context(self, api: str) -> Context:
        ctx = self.tls.context
        if ctx is None or not ctx.alive:
            raise self.fail(
                codes.ACL_ERROR_RT_CONTEXT_NULL,
                api,
                "no current context in this thread: call acl.rt.set_device(id) or acl.rt.set_context(ctx) first",
            )
        return ctx

    def current_device(self, api: str) -> Device:
        return self.current_context(api).device

    def get_device(self) -> int:
        return self.current_device("aclrtGetDevice").id

    def get_device_count(self) -> int:
        self.check_injection("aclrtGetDeviceCount")
        return self.device_count

    def synchronize_device(self, timeout_ms: int = -1) -> None:
        """Wait for every stream of the device; 507046 when the work outlasts `timeout_ms` > 0."""
        api = "aclrtSynchronizeDevice" if timeout_ms < 0 else "aclrtSynchronizeDeviceWithTimeout"
        self.check_injection(api)
        dev = self.current_device(api)
        streams = list(dev.streams.values())
        last = max(s.ready_us for s in streams)
        if timeout_ms > 0 and last - dev.host_us > timeout_ms * 1000.0:
            dev.advance_host(dev.host_us + timeout_ms * 1000.0)
            raise self.fail(
                codes.ACL_ERROR_RT_STREAM_SYNC_TIMEOUT,
                api,
                f"device work outlasts the {timeout_ms} ms timeout",
            )
        dev.advance_host(max(s.ready_us for s in streams))
        try:
            dev.settle(streams, self.hostmem, user_site(1), api)
        except AclError as e:
            self.report(e)
            raise
        if hooks.sync_listeners:
            hooks.emit_sync(dev.id)

    # -- contexts -------------------------------------------------------------------
    def create_context(self, device_id: int) -> int:
        api = "aclrtCreateContext"
        self.check_injection(api)
        self.require_init(api)
        with self.lock:
            if not 0 <= device_id < self.device_count:
                raise self.fail(
                    codes.ACL_ERROR_RT_INVALID_DEVICEID, api, f"device {device_id} is out of range"
                )
            dev = self.devices.get(device_id)
            if dev is None:
                # Creating a context opens the device too (implicit set without a default ctx).
                self.set_device(device_id)
                dev = self.devices[device_id]
            ctx = Context(0, dev, is_default=False)
            ctx.handle = self.new_handle(ctx)
            ctx.default_stream = self._new_stream(ctx, stream_id=dev.next_stream_id())
            self.tls.context = ctx
            return ctx.handle

    def destroy_context(self, handle: int) -> None:
        api = "aclrtDestroyContext"
        self.check_injection(api)
        with self.lock:
            ctx = self.lookup(handle, Context) if handle else None
            if ctx is None or ctx.is_default:
                raise self.fail(
                    codes.ACL_ERROR_INVALID_PARAM,
                    api,
                    f"0x{handle:x} is not a context created by create_context",
                )
            for sh in [*ctx.streams, ctx.default_stream.handle if ctx.default_stream else 0]:
                s = self.handles.pop(sh, None)
                if isinstance(s, Stream):
                    s.alive = False
                    ctx.device.streams.pop(sh, None)
            ctx.alive = False
            del self.handles[handle]
            if self.tls.context is ctx:
                self.tls.context = None

    def set_context(self, handle: int) -> None:
        api = "aclrtSetCurrentContext"
        self.check_injection(api)
        ctx = self.lookup(handle, Context) if handle else None
        if ctx is None or not ctx.alive:
            raise self.fail(
                codes.ACL_ERROR_INVALID_PARAM, api, f"0x{handle:x} is not a live context"
            )
        self.tls.context = ctx

    def get_context(self) -> int:
        return self.current_context("aclrtGetCurrentContext").handle

    # -- streams (creation lives here: it needs handles and limits) --------------------
    def _new_stream(
        self, ctx: Context, stream_id: int, priority: int = 0, flags: int = 0
    ) -> Stream:
        dev = ctx.device
        if len(dev.streams) >= dev.profile.max_streams:
            raise self.fail(
                codes.ACL_ERROR_RT_NO_STREAM_RESOURCE,
                "aclrtCreateStream",
                f"device {dev.id} already has {len(dev.streams)} streams (limit {dev.profile.max_streams})",
            )
        s = Stream(0, stream_id, dev, ctx, ready_us=dev.host_us, priority=priority, flags=flags)
        s.handle = self.new_handle(s)
        dev.streams[s.handle] = s
        dev.peak_streams = max(dev.peak_streams, len(dev.streams))
        if stream_id != 0 and ctx.default_stream is not None:
            ctx.streams.add(s.handle)
        return s

    def resolve_stream(self, handle: int, api: str) -> Stream:
        """0 -> the current context's default stream; checks the stream's context (§8)."""
        ctx = self.current_context(api)
        if handle == 0:
            assert ctx.default_stream is not None
            return ctx.default_stream
        s = self.lookup(handle, Stream)
        if s is None or not s.alive:
            raise self.fail(
                codes.ACL_ERROR_RT_PARAM_INVALID, api, f"0x{handle:x} is not a live stream"
            )
        if s.device is not ctx.device:
            raise self.fail(
                codes.ACL_ERROR_RT_STREAM_CONTEXT,
                api,
                f"stream 0x{handle:x} belongs to device {s.device.id}, the current context to device {ctx.device.id}",
            )
        return s

    def resolve_event(self, handle: int, api: str) -> Event:
        if handle == 0:
            raise self.fail(codes.ACL_ERROR_INVALID_PARAM, api, "event is NULL (0)")
        e = self.lookup(handle, Event)
        if e is None or not e.alive:
            raise self.fail(
                codes.ACL_ERROR_RT_PARAM_INVALID, api, f"0x{handle:x} is not a live event"
            )
        return e

    # -- summary --------------------------------------------------------------------
    def device_stats(self) -> dict[int, dict[str, int]]:
        """Per device ever used: peak bytes, peak streams, live bytes, free, largest free block."""
        out: dict[int, dict[str, int]] = {}
        ids = set(self.devices) | set(self.peak_by_device)
        for i in sorted(ids):
            dev = self.devices.get(i)
            mem = dev.memory if dev else None
            out[i] = {
                "peak_bytes": max(self.peak_by_device.get(i, 0), mem.peak if mem else 0),
                "peak_streams": max(
                    self.streams_by_device.get(i, 0), dev.peak_streams if dev else 0
                ),
                "used_bytes": mem.used if mem else 0,
                "free_bytes": mem.free_bytes() if mem else self.profile.usable_bytes,
                "largest_free_block": mem.largest_free_block()
                if mem
                else self.profile.usable_bytes,
            }
        return out


# The code the CANN error manager puts in front of a report: EE1001 for an invalid argument,
# EL0004 for a failed memory allocation, EE9999 for everything else.
_MSG_PREFIX = {"param": "EE1001", "memory": "EL0004", "other": "EE9999"}


def recent_message(err: AclError) -> str:
    """Text in the shape of aclGetRecentErrMsg: code, message, cause, solution, traceback."""
    now = time.time()
    ms, us = int(now * 1000) % 1000, int(now * 1_000_000) % 1000
    stamp = time.strftime("%Y-%m-%d-%H:%M:%S", time.localtime(now)) + f".{ms:03d}.{us:03d}"
    kind = (
        "param"
        if err.code in (100000, 107000)
        else "memory"
        if err.code in (207001, 207018)
        else "other"
    )
    lines = [
        f"{_MSG_PREFIX[kind]}: [PID: {os.getpid()}] {stamp} {err.api or 'acl'} failed, error code "
        f"{err.code} ({err.name}). {err.detail or err.meaning}",
    ]
    if err.cause:
        lines.append(f"        Possible Cause: {err.cause}")
    if err.fix:
        lines.append(f"        Solution: {err.fix}")
    lines.append("        TraceBack (most recent call last):")
    if err.launch_site is not None:
        lines.append(f"        work launched at {err.launch_site}")
    if err.site is not None:
        lines.append(f"        {err.api} called at {err.site}")
    return "\n".join(lines)


def _env_profile() -> DeviceProfile:
    """NPU_DEVICE, or the default; a bad value is reported on stderr, never a traceback."""
    try:
        return get_profile(os.environ.get(ENV_DEVICE) or None)
    except ValueError as exc:
        sys.stderr.write(f"ascend-lens: ignoring {ENV_DEVICE}: {exc}\n")
        return get_profile(None)


def _env_count() -> int:
    raw = os.environ.get(ENV_DEVICES)
    if not raw:
        # As on a real host, ASCEND_RT_VISIBLE_DEVICES limits what the process sees.
        visible = os.environ.get("ASCEND_RT_VISIBLE_DEVICES", "").strip()
        if visible:
            return min(len([d for d in visible.split(",") if d.strip()]), MAX_DEVICES)
        return DEFAULT_DEVICE_COUNT
    try:
        n = int(raw)
    except ValueError:
        n = 0
    if not 1 <= n <= MAX_DEVICES:
        sys.stderr.write(
            f"ascend-lens: ignoring {ENV_DEVICES}={raw!r}: {device_count_error(n)}; "
            f"using {DEFAULT_DEVICE_COUNT}\n"
        )
        return DEFAULT_DEVICE_COUNT
    return n


def device_count_error(n: int) -> str:
    """Why `n` is no device count (CANN's runtime supports 1..64 devices per host)."""
    return f"{n} is not a device count from 1 to {MAX_DEVICES} (CANN's limit per host)"


def _load_env_injections() -> None:
    """Read NPU_INJECT. It is checked at the first ACL call: a bad spec or an unknown API or
    op name refuses the whole variable with one line on stderr, never a traceback."""
    injector.load_env()


def _read_config(rt: Runtime, path: str, api: str) -> None:
    """acl.json: missing/unreadable -> 100003, malformed JSON -> 100006 (api.md §8)."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as exc:
        raise rt.fail(
            codes.ACL_ERROR_INVALID_FILE, api, f"cannot read config {path!r}: {exc.strerror}"
        ) from None
    try:
        json.loads(text)
    except ValueError as exc:
        raise rt.fail(
            codes.ACL_ERROR_PARSE_FILE, api, f"config {path!r} is not valid JSON: {exc}"
        ) from None


_runtime = Runtime()


def get_runtime() -> Runtime:
    """The process-wide runtime (always the same object; reset() clears it in place)."""
    return _runtime
