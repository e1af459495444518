"""Streams, events, synchronisation and host callbacks on the simulated clock (api.md §2, §8).

Each stream has a clock (`ready_us`: when its last queued work completes); the host has a
position per device (`Device.host_us`). Synchronising moves the host to the stream's
clock and delivers what completed; queries compare the two, so a query right after
queuing long work says NOT_READY, as on hardware.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from npu_runtime.core import hooks
from npu_runtime.core.device import HOST_CALL_US, Device
from npu_runtime.core.event import ACL_EVENT_SYNC, Event
from npu_runtime.core.runtime import Runtime
from npu_runtime.core.stream import Stream
from npu_runtime.errors import AclError, codes
from npu_runtime.records import EventWait
from npu_runtime.sites import user_site

STATUS_COMPLETE, STATUS_NOT_READY = 0, 1  # aclrtStreamStatus / aclrtEventStatus
RECORDED_NOT_READY, RECORDED_COMPLETE = 0, 1  # aclrtEventRecordedStatus (reversed, §2)


def _poll(dev: Device, target_us: float) -> bool:
    """Whether the host has reached `target_us`; a negative answer costs host time.

    Polling takes time on a real host too: each NOT_READY moves the host a quarter of the
    remaining way (at least one host call), so a `while query(...)` loop ends after a few
    dozen iterations instead of spinning forever on a clock only syncs would move.
    """
    with dev.lock:
        if target_us <= dev.host_us:
            return True
        dev.host_us += max(HOST_CALL_US, (target_us - dev.host_us) / 4)
        return False


# -- streams --------------------------------------------------------------------------
def create_stream(rt: Runtime, priority: int = 0, flags: int = 0) -> int:
    api = "aclrtCreateStream"
    rt.check_injection(api)
    ctx = rt.current_context(api)
    with rt.lock:
        return rt._new_stream(ctx, ctx.device.next_stream_id(), priority, flags).handle


def destroy_stream(rt: Runtime, handle: int) -> None:
    api = "aclrtDestroyStream"
    rt.check_injection(api)
    if handle == 0:
        raise rt.fail(codes.ACL_ERROR_INVALID_PARAM, api, "stream is NULL (0)")
    s = rt.resolve_stream(handle, api)
    if s.id == 0 or (s.context.default_stream is s):
        raise rt.fail(codes.ACL_ERROR_INVALID_PARAM, api, "the default stream cannot be destroyed")
    # Destroying waits for the stream's work, as the real call does; a device fault still
    # pending on it is reported here, and the stream is gone either way.
    s.device.advance_host(s.ready_us)
    fault: AclError | None = None
    try:
        s.device.settle([s], rt.hostmem, user_site(1), api)
    except AclError as e:
        fault = e
    with rt.lock:
        s.alive = False
        rt.handles.pop(handle, None)
        s.device.streams.pop(handle, None)
        s.context.streams.discard(handle)
    if fault is not None:
        rt.report(fault)
        raise fault


def synchronize_stream(
    rt: Runtime, handle: int, api: str = "aclrtSynchronizeStream", timeout_ms: int = -1
) -> None:
    """Wait for the stream; with `timeout_ms` > 0, 507046 when its work outlasts the timeout."""
    rt.check_injection(api)
    s = rt.resolve_stream(handle, api)
    _run_callbacks_for(rt, s)
    if timeout_ms > 0 and s.ready_us - s.device.host_us > timeout_ms * 1000.0:
        s.device.advance_host(s.device.host_us + timeout_ms * 1000.0)
        raise rt.fail(
            codes.ACL_ERROR_RT_STREAM_SYNC_TIMEOUT,
            api,
            f"the stream's queued work needs {(s.ready_us - s.device.host_us) / 1000:.3f} ms more "
            f"(simulated) than the {timeout_ms} ms timeout",
        )
    s.device.advance_host(s.ready_us)
    try:
        s.device.settle([s], rt.hostmem, user_site(1), api)
    except AclError as e:
        rt.report(e)
        raise


def stream_query(rt: Runtime, handle: int) -> int:
    api = "aclrtStreamQuery"
    rt.check_injection(api)
    s = rt.resolve_stream(handle, api)
    return STATUS_COMPLETE if _poll(s.device, s.ready_us) else STATUS_NOT_READY


def stream_id(rt: Runtime, handle: int) -> int:
    return rt.resolve_stream(handle, "aclrtStreamGetId").id


def available_streams(rt: Runtime) -> int:
    dev = rt.current_device("aclrtGetStreamAvailableNum")
    return dev.profile.max_streams - len(dev.streams)


def default_stream(rt: Runtime) -> int:
    ctx = rt.current_context("aclrtCtxGetCurrentDefaultStream")
    assert ctx.default_stream is not None
    return ctx.default_stream.handle


# -- events ---------------------------------------------------------------------------
def create_event(rt: Runtime, flags: int = ACL_EVENT_SYNC, ex: bool = False) -> int:
    api = "aclrtCreateEvent"
    rt.check_injection(api)
    dev = rt.current_device(api)
    with rt.lock:
        if dev.events >= dev.profile.max_events:
            raise rt.fail(
                codes.ACL_ERROR_RT_NO_EVENT_RESOURCE,
                api,
                f"device {dev.id} already has {dev.events} events (limit {dev.profile.max_events})",
            )
        dev.events += 1
        e = Event(0, dev, flags=flags, ex=ex)
        e.handle = rt.new_handle(e)
        return e.handle


def destroy_event(rt: Runtime, handle: int) -> None:
    api = "aclrtDestroyEvent"
    rt.check_injection(api)
    e = rt.resolve_event(handle, api)
    with rt.lock:
        e.alive = False
        rt.handles.pop(handle, None)
        e.device.events -= 1


def record_event(rt: Runtime, handle: int, stream: int) -> None:
    api = "aclrtRecordEvent"
    rt.check_injection(api)
    e = rt.resolve_event(handle, api)
    s = rt.resolve_stream(stream, api)
    if e.device is not s.device:
        raise rt.fail(
            codes.ACL_ERROR_RT_STREAM_CONTEXT,
            api,
            f"event 0x{handle:x} belongs to device {e.device.id}, the stream to device {s.device.id}",
        )
    start, _ = s.device.enqueue(s, 0.0)
    e.recorded_us = start
    e.record_stream = s.id
    e.record_site = user_site(1)


def reset_event(rt: Runtime, handle: int, stream: int) -> None:
    api = "aclrtResetEvent"
    rt.check_injection(api)
    e = rt.resolve_event(handle, api)
    rt.resolve_stream(stream, api)
    e.recorded_us = None
    e.record_stream = -1


def query_event(rt: Runtime, handle: int, recorded_style: bool = False) -> int:
    """Status of the event. `recorded_style` uses aclrtEventRecordedStatus's reversed values."""
    api = "aclrtQueryEventStatus" if recorded_style else "aclrtQueryEvent"
    rt.check_injection(api)
    e = rt.resolve_event(handle, api)
    # An event never recorded counts as complete, as in CUDA and ACL.
    done = e.recorded_us is None or _poll(e.device, e.recorded_us)
    if recorded_style:
        return RECORDED_COMPLETE if done else RECORDED_NOT_READY
    return STATUS_COMPLETE if done else STATUS_NOT_READY


def synchronize_event(rt: Runtime, handle: int, timeout_ms: int = -1) -> None:
    """Wait for the event; with `timeout_ms` > 0, 507047 when it completes later than that."""
    api = "aclrtSynchronizeEvent" if timeout_ms < 0 else "aclrtSynchronizeEventWithTimeout"
    rt.check_injection(api)
    e = rt.resolve_event(handle, api)
    if e.recorded_us is None:
        return
    if timeout_ms > 0 and e.recorded_us - e.device.host_us > timeout_ms * 1000.0:
        e.device.advance_host(e.device.host_us + timeout_ms * 1000.0)
        raise rt.fail(
            codes.ACL_ERROR_RT_EVENT_SYNC_TIMEOUT,
            api,
            f"the event completes after the {timeout_ms} ms timeout",
        )
    e.device.advance_host(e.recorded_us)
    streams = [s for s in e.device.streams.values() if s.id == e.record_stream]
    try:
        e.device.settle(streams, rt.hostmem, user_site(1), api)
    except AclError as err:
        rt.report(err)
        raise


def elapsed_time(rt: Runtime, start: int, end: int) -> float:
    """Milliseconds between two recorded events (api.md §8: unrecorded -> 507000)."""
    api = "aclrtEventElapsedTime"
    rt.check_injection(api)
    a = rt.resolve_event(start, api)
    b = rt.resolve_event(end, api)
    if a.recorded_us is None or b.recorded_us is None:
        which = "start" if a.recorded_us is None else "end"
        raise rt.fail(
            codes.ACL_ERROR_RT_INTERNAL_ERROR, api, f"the {which} event was never recorded"
        )
    return (b.recorded_us - a.recorded_us) / 1000.0


def event_timestamp(rt: Runtime, handle: int) -> int:
    api = "aclrtEventGetTimestamp"
    e = rt.resolve_event(handle, api)
    if e.recorded_us is None:
        raise rt.fail(codes.ACL_ERROR_RT_INTERNAL_ERROR, api, "the event was never recorded")
    return int(e.recorded_us * 1000)  # nanoseconds on the simulated clock


def stream_wait_event(rt: Runtime, stream: int, handle: int) -> None:
    api = "aclrtStreamWaitEvent"
    rt.check_injection(api)
    s = rt.resolve_stream(stream, api)
    e = rt.resolve_event(handle, api)
    with s.device.lock:
        begin = max(s.ready_us, s.device.host_us)
        end = begin if e.recorded_us is None else max(begin, e.recorded_us)
        s.ready_us = end
    if hooks.wait_listeners:
        hooks.emit_wait(
            EventWait(
                device=s.device.id,
                stream=s.id,
                event=handle,
                record_stream=e.record_stream,
                record_us=-1.0 if e.recorded_us is None else e.recorded_us,
                wait_start_us=begin,
                wait_end_us=end,
                record_site=e.record_site,
                site=user_site(1),
            )
        )


# -- callbacks (aclrtSubscribeReport / LaunchCallback / ProcessReport) ---------------
def subscribe_report(rt: Runtime, thread_id: int, stream: int) -> None:
    api = "aclrtSubscribeReport"
    s = rt.resolve_stream(stream, api)
    if s.subscriber is not None:
        raise rt.fail(
            codes.ACL_ERROR_REPEAT_SUBSCRIBE, api, "stream already has a subscribed thread"
        )
    s.subscriber = thread_id


def unsubscribe_report(rt: Runtime, thread_id: int, stream: int) -> None:
    api = "aclrtUnSubscribeReport"
    s = rt.resolve_stream(stream, api)
    if s.subscriber != thread_id:
        raise rt.fail(
            codes.ACL_ERROR_THREAD_NOT_SUBSCRIBE, api, "thread is not subscribed to this stream"
        )
    _run_callbacks_for(rt, s)
    s.subscriber = None


def launch_callback(
    rt: Runtime, fn: Callable[[object], None], data: object, block: int, stream: int
) -> None:
    api = "aclrtLaunchCallback"
    rt.check_injection(api)
    s = rt.resolve_stream(stream, api)
    if s.subscriber is None:
        raise rt.fail(
            codes.ACL_ERROR_RT_STREAM_NO_CB_REG,
            api,
            "no thread is subscribed to this stream: call acl.rt.subscribe_report first",
        )
    s.device.enqueue(s, 0.0)
    with rt.callback_cv:
        rt.callbacks.setdefault(s.subscriber, []).append((fn, data, s))
        rt.callback_cv.notify_all()


def process_report(rt: Runtime, timeout_ms: int) -> None:
    """Run the callbacks queued for this thread; 507012 when none arrives in time."""
    api = "aclrtProcessReport"
    me = threading.get_ident()
    timeout = None if timeout_ms < 0 else timeout_ms / 1000.0
    with rt.callback_cv:
        if not rt.callback_cv.wait_for(lambda: rt.callbacks.get(me), timeout):
            raise rt.fail(
                codes.ACL_ERROR_RT_REPORT_TIMEOUT, api, f"no callback within {timeout_ms} ms"
            )
        batch = rt.callbacks.pop(me)
        rt.running_callbacks += len(batch)
    try:
        _run(batch)
    finally:
        with rt.callback_cv:
            rt.running_callbacks -= len(batch)
            rt.callback_cv.notify_all()


def _run(batch: list[tuple[object, object, Stream]]) -> None:
    for fn, data, s in batch:
        s.device.advance_host(s.ready_us)
        fn(data)  # type: ignore[operator]


# How long a stream synchronisation waits for the subscribed report thread before it runs
# the stream's callbacks itself (a script whose report thread died would hang otherwise).
CALLBACK_WAIT_S = 10.0


def _run_callbacks_for(rt: Runtime, s: Stream) -> None:
    """A stream sync includes its callbacks: wait for the report thread to run them."""
    sub = s.subscriber
    if sub is None:
        return

    def done() -> bool:
        queued = rt.callbacks.get(sub) or ()
        return not any(c[2] is s for c in queued) and rt.running_callbacks == 0

    with rt.callback_cv:
        if sub != threading.get_ident() and _thread_alive(sub):
            rt.callback_cv.wait_for(done, CALLBACK_WAIT_S)
        queued = rt.callbacks.get(sub)
        if not queued:
            return
        mine = [c for c in queued if c[2] is s]
        rt.callbacks[sub] = [c for c in queued if c[2] is not s]
    _run(mine)


def _thread_alive(ident: int) -> bool:
    return any(t.ident == ident and t.is_alive() for t in threading.enumerate())
