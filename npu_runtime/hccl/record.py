"""Collectives on the device's simulated clock: a communication stream beside the compute one.

HCCL runs on its own stream. A collective starts when its inputs are ready (the compute
stream's work queued so far), the communication stream is free, and every rank of the
communicator has arrived; the compute stream waits for it only when the program waits
(a blocking collective, `work.wait()`), so gradient all-reduces overlap the backward pass
as they do on the device. Each collective is one WorkRecord (kind "comm") with its
communicator, algorithm and link traffic, announced to the profiler like any op.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from types import FrameType

from npu_runtime.core import hooks
from npu_runtime.core.device import HOST_CALL_US, Device
from npu_runtime.core.runtime import get_runtime
from npu_runtime.core.stream import Stream
from npu_runtime.records import CommInfo, SourceSite, TensorInfo, WorkRecord
from npu_runtime.sites import _is_ours

# The torch front end sets this to answer "which stream is current on device N" (torch's
# current npu stream); by default it is the context's default stream.
current_stream: Callable[[Device], Stream | None] | None = None
# ... and this one "which device is current in this thread" (torch.npu.current_device()).
default_device: Callable[[], int | None] | None = None
# ... and this one the line to charge when no user frame is on the stack (autograd's device
# thread running DDP's hooks: the line that called backward()).
fallback_site: Callable[[], SourceSite | None] | None = None

_comm_streams: dict[int, Stream] = {}


def default_device_id() -> int | None:
    """The device a collective without tensors (a barrier) runs on."""
    if default_device is not None:
        return default_device()
    d = device()
    return d.id if d is not None else None


def device(device_id: int | None = None) -> Device | None:
    """The emulated device collectives of this thread run on (None: no device is set)."""
    rt = get_runtime()
    if device_id is not None:
        return rt.devices.get(device_id)
    ctx = rt.tls.context
    return ctx.device if ctx is not None and ctx.alive else None


def _compute_stream(dev: Device) -> Stream | None:
    if current_stream is not None:
        s = current_stream(dev)
        if s is not None:
            return s
    ctx = dev.default_context
    return ctx.default_stream if ctx is not None else None


def comm_stream(dev: Device) -> Stream:
    """The device's HCCL stream, created on first use (one per device, as torch_npu keeps)."""
    s = _comm_streams.get(dev.id)
    if s is None or not s.alive or s.device is not dev:
        rt = get_runtime()
        ctx = dev.default_context
        assert ctx is not None
        with rt.lock:
            s = rt._new_stream(ctx, dev.next_stream_id())
        _comm_streams[dev.id] = s
    return s


def arrival_us(dev: Device) -> float:
    """When a collective issued now could start on this rank (before waiting for the others)."""
    comm = comm_stream(dev)
    compute = _compute_stream(dev)
    with dev.lock:
        ready = compute.ready_us if compute is not None else 0.0
        return max(comm.ready_us, ready, dev.host_us + HOST_CALL_US)


def place(
    dev: Device,
    start_us: float,
    arrival: float,
    duration_us: float,
    name: str,
    op_type: str,
    inputs: tuple[TensorInfo, ...],
    site: SourceSite | None,
    info: CommInfo,
    bytes_moved: int,
) -> WorkRecord:
    """Put one collective on the communication stream, starting at `start_us` (all ranks in)."""
    comm = comm_stream(dev)
    with dev.lock:
        dev.host_us += HOST_CALL_US
        comm.ready_us = start_us + duration_us
        task = dev.next_task_id()
    rec = WorkRecord(
        kind="comm",
        name=name,
        op_type=op_type,
        device=dev.id,
        stream=comm.id,
        task_id=task,
        start_us=start_us,
        duration_us=duration_us,
        wait_us=max(0.0, start_us - arrival),
        bound="link",
        unit="HCCL",
        inputs=inputs,
        outputs=inputs,
        time_by_unit={"link": duration_us},
        bytes_moved=bytes_moved,
        site=site,
        comm=info,
    )
    if hooks.work_listeners:
        hooks.emit_work(rec)
    return rec


def join(dev: Device, end_us: float) -> None:
    """The compute stream waits for a collective that ends at `end_us` (work.wait())."""
    compute = _compute_stream(dev)
    if compute is None:
        return
    with dev.lock:
        compute.ready_us = max(compute.ready_us, end_us)


_skip_dirs: tuple[str, ...] | None = None


def _framework_dirs() -> tuple[str, ...]:
    global _skip_dirs
    if _skip_dirs is None:
        dirs = []
        torch = sys.modules.get("torch")
        path = getattr(torch, "__file__", None) if torch is not None else None
        if path:
            dirs.append(os.path.dirname(os.path.abspath(path)) + os.sep)
        _skip_dirs = tuple(dirs)
    return _skip_dirs


def user_call_site(skip: int = 2) -> SourceSite | None:
    """The user's line behind a collective: the first frame outside our packages and torch."""
    try:
        frame: FrameType | None = sys._getframe(skip)
    except ValueError:  # called from C++ (DDP's reducer) with hardly any Python above
        frame = sys._getframe(0)
    skip_dirs = _framework_dirs()
    while frame is not None:
        fn = frame.f_code.co_filename
        if not _is_ours(fn) and not os.path.abspath(fn).startswith(skip_dirs):
            return SourceSite(fn, frame.f_lineno, frame.f_code.co_name)
        frame = frame.f_back
    return fallback_site() if fallback_site is not None else None


def reset() -> None:
    _comm_streams.clear()
