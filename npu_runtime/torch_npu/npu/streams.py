"""`torch.npu.Stream` / `Event` / `stream(...)` on the runtime's streams and simulated clock.

A torch Stream is a runtime stream of its device; `torch.npu.stream(s)` makes it the
stream npu ops are charged to (`_backend.current_streams`). Events are runtime events, so
`elapsed_time` reads the simulated clock.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import torch

from npu_runtime.core import sched
from npu_runtime.core.event import ACL_EVENT_SYNC, ACL_EVENT_TIME_LINE
from npu_runtime.core.runtime import get_runtime
from npu_runtime.core.stream import Stream as _RtStream
from npu_runtime.torch_npu import _backend as B

_rt = get_runtime()


@contextlib.contextmanager
def _on(index: int) -> Iterator[None]:
    """Make npu:index's default context current for a runtime call."""
    dev = B.ensure_device(index)
    saved = _rt.tls.context
    _rt.tls.context = dev.default_context
    try:
        yield
    finally:
        _rt.tls.context = saved


def _index(device: Any) -> int:
    from npu_runtime.torch_npu.npu import _index as idx

    return idx(device)


_PRIVATEUSE1 = 20  # c10::DeviceType::PrivateUse1, the `device_type` of an npu torch.Stream


class Stream(torch.Stream):
    """`torch.npu.Stream(device=None, priority=0)`: an in-order queue of the device.

    A `torch.Stream` (as torch_npu's is), so torch APIs that take a stream argument
    (`Tensor.record_stream`, which FSDP calls) accept it; its `stream_id` is the runtime
    stream's handle."""

    _stream: _RtStream
    priority: int

    def __new__(
        cls, device: Any = None, priority: int = 0, _rt_stream: _RtStream | None = None
    ) -> Stream:
        index = _index(device)
        if _rt_stream is None:
            with _on(index):
                handle = sched.create_stream(_rt, priority=priority)
            s = _rt.lookup(handle, _RtStream)
            assert s is not None
            _rt_stream = s
        self = super().__new__(
            cls, stream_id=_rt_stream.handle, device_index=index, device_type=_PRIVATEUSE1
        )
        self._stream = _rt_stream
        self.priority = priority
        return self

    def __init__(
        self, device: Any = None, priority: int = 0, _rt_stream: _RtStream | None = None
    ) -> None:
        pass  # all done in __new__ (torch.Stream's fields are set there)

    # torch_npu's own Event and Stream types in these signatures, as in torch_npu
    @property
    def device(self) -> torch.device:  # type: ignore[override]
        return torch.device("npu", self.device_index)

    @property
    def npu_stream(self) -> int:
        return self._stream.handle

    def synchronize(self) -> None:
        with _on(self.device_index):
            sched.synchronize_stream(_rt, self._stream.handle, "aclrtSynchronizeStream")

    def query(self) -> bool:
        with _on(self.device_index):
            return sched.stream_query(_rt, self._stream.handle) == sched.STATUS_COMPLETE

    def wait_event(self, event: Event) -> None:  # type: ignore[override]
        event.wait(self)

    def wait_stream(self, stream: Stream) -> None:  # type: ignore[override]
        self.wait_event(stream.record_event())

    def record_event(self, event: Event | None = None) -> Event:  # type: ignore[override]
        event = event or Event()
        event.record(self)
        return event

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Stream) and other._stream is self._stream

    def __hash__(self) -> int:
        return hash(self._stream.handle)

    def __repr__(self) -> str:
        return f"<torch_npu.npu.Stream device=npu:{self.device_index} npu_stream={self._stream.handle:#x}>"


class Event:
    """`torch.npu.Event(enable_timing=False, blocking=False)` on the simulated clock."""

    def __init__(
        self, enable_timing: bool = False, blocking: bool = False, interprocess: bool = False
    ) -> None:
        self.enable_timing = enable_timing
        self.blocking = blocking
        self._handle = 0
        self._index = -1

    def record(self, stream: Stream | None = None) -> None:
        stream = stream or current_stream()
        with _on(stream.device_index):
            if self._handle == 0:
                flags = (
                    ACL_EVENT_TIME_LINE | ACL_EVENT_SYNC if self.enable_timing else ACL_EVENT_SYNC
                )
                self._handle = sched.create_event(_rt, flags)
                self._index = stream.device_index
            sched.record_event(_rt, self._handle, stream._stream.handle)

    def wait(self, stream: Stream | None = None) -> None:
        stream = stream or current_stream()
        if self._handle == 0:
            return
        with _on(stream.device_index):
            sched.stream_wait_event(_rt, stream._stream.handle, self._handle)

    def query(self) -> bool:
        if self._handle == 0:
            return True
        with _on(self._index):
            return sched.query_event(_rt, self._handle) == sched.STATUS_COMPLETE

    def synchronize(self) -> None:
        if self._handle == 0:
            return
        with _on(self._index):
            sched.synchronize_event(_rt, self._handle)

    def elapsed_time(self, end_event: Event) -> float:
        """Milliseconds of simulated device time between this event and `end_event`."""
        if not (self.enable_timing and end_event.enable_timing):
            raise RuntimeError("Both events must be created with argument 'enable_timing=True'.")
        if self._handle == 0 or end_event._handle == 0:
            raise RuntimeError("Both events must be recorded before calculating elapsed time.")
        with _on(self._index):
            return float(sched.elapsed_time(_rt, self._handle, end_event._handle))

    def __repr__(self) -> str:
        return (
            f"<torch_npu.npu.Event {self._handle:#x}>"
            if self._handle
            else "<torch_npu.npu.Event uninitialized>"
        )


_wrappers: dict[int, Stream] = {}


def _wrap(s: _RtStream, index: int) -> Stream:
    w = _wrappers.get(s.handle)
    if w is None or w._stream is not s:
        w = _wrappers[s.handle] = Stream(index, _rt_stream=s)
    return w


def current_stream(device: Any = None) -> Stream:
    i = _index(device)
    return _wrap(B.stream_for(i), i)


def default_stream(device: Any = None) -> Stream:
    i = _index(device)
    ctx = B.ensure_device(i).default_context
    assert ctx is not None and ctx.default_stream is not None
    return _wrap(ctx.default_stream, i)


def set_stream(stream: Stream) -> None:
    B.current_streams[stream.device_index] = stream._stream


@contextlib.contextmanager
def stream(s: Stream | None) -> Iterator[None]:
    """`with torch.npu.stream(s):` npu ops in the block are queued on `s`."""
    if s is None:
        yield
        return
    prev = B.current_streams.get(s.device_index)
    B.current_streams[s.device_index] = s._stream
    try:
        yield
    finally:
        if prev is None:
            B.current_streams.pop(s.device_index, None)
        else:
            B.current_streams[s.device_index] = prev
