"""Listeners for executed work, failing calls and stream waits.

The profiler, kernel and debug adapter install these in-process. Listener tuples are
replaced, never mutated, so emitting needs no lock and a listener may remove itself.
A listener that raises is reported on stderr and never breaks the user's program.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from npu_runtime.records import EventWait, WorkRecord

if TYPE_CHECKING:
    from npu_runtime.errors import AclError

T = TypeVar("T")
WorkListener = Callable[[WorkRecord], None]
ErrorListener = Callable[["AclError"], None]
WaitListener = Callable[[EventWait], None]
# (op type, input arrays, output arrays, attributes): the values an op read and wrote, while
# they are still there (precision dumps copy or summarise them before returning).
TensorListener = Callable[[str, list[Any], list[Any], Mapping[str, Any]], None]
SyncListener = Callable[[int], None]  # device id that finished aclrtSynchronizeDevice

_lock = threading.Lock()
work_listeners: tuple[WorkListener, ...] = ()
error_listeners: tuple[ErrorListener, ...] = ()
wait_listeners: tuple[WaitListener, ...] = ()
tensor_listeners: tuple[TensorListener, ...] = ()
sync_listeners: tuple[SyncListener, ...] = ()


def add_work_listener(fn: WorkListener) -> None:
    """Call `fn(record)` for every op, copy and memset as it is enqueued."""
    global work_listeners
    with _lock:
        work_listeners = (*work_listeners, fn)


def remove_work_listener(fn: WorkListener) -> None:
    global work_listeners
    with _lock:
        work_listeners = _without(work_listeners, fn)


def add_error_listener(fn: ErrorListener) -> None:
    """Call `fn(error)` for every failing runtime call and every sanitizer finding."""
    global error_listeners
    with _lock:
        error_listeners = (*error_listeners, fn)


def remove_error_listener(fn: ErrorListener) -> None:
    global error_listeners
    with _lock:
        error_listeners = _without(error_listeners, fn)


def add_wait_listener(fn: WaitListener) -> None:
    """Call `fn(wait)` for every stream_wait_event (an EventWait record)."""
    global wait_listeners
    with _lock:
        wait_listeners = (*wait_listeners, fn)


def remove_wait_listener(fn: WaitListener) -> None:
    global wait_listeners
    with _lock:
        wait_listeners = _without(wait_listeners, fn)


def add_tensor_listener(fn: TensorListener) -> None:
    """Call `fn(op_type, inputs, outputs, attrs)` inside every op kernel, after it wrote its
    outputs. The arrays are views of device memory: copy what you keep."""
    global tensor_listeners
    with _lock:
        tensor_listeners = (*tensor_listeners, fn)


def remove_tensor_listener(fn: TensorListener) -> None:
    global tensor_listeners
    with _lock:
        tensor_listeners = _without(tensor_listeners, fn)


def add_sync_listener(fn: SyncListener) -> None:
    """Call `fn(device_id)` after every successful aclrtSynchronizeDevice (profiler steps)."""
    global sync_listeners
    with _lock:
        sync_listeners = (*sync_listeners, fn)


def remove_sync_listener(fn: SyncListener) -> None:
    global sync_listeners
    with _lock:
        sync_listeners = _without(sync_listeners, fn)


def _without(listeners: tuple[T, ...], fn: T) -> tuple[T, ...]:
    """`listeners` minus its first entry equal to `fn`.

    Equality, not identity: `list.append` makes a new bound-method object on every access,
    so `remove_work_listener(records.append)` must still find it.
    """
    for i, f in enumerate(listeners):
        if f == fn:
            return listeners[:i] + listeners[i + 1 :]
    return listeners


def _guard(fn: Callable[..., None], arg: object) -> None:
    try:
        fn(arg)
    except Exception as exc:  # a broken listener must not break the user's program
        sys.stderr.write(f"ascend-lens: listener {fn!r} failed: {exc!r}\n")


def emit_work(record: WorkRecord) -> None:
    for fn in work_listeners:
        _guard(fn, record)


def emit_error(error: AclError) -> None:
    for fn in error_listeners:
        _guard(fn, error)


def emit_wait(wait: EventWait) -> None:
    for fn in wait_listeners:
        _guard(fn, wait)


def emit_tensors(
    op_type: str, inputs: list[Any], outputs: list[Any], attrs: Mapping[str, Any]
) -> None:
    for fn in tensor_listeners:
        try:
            fn(op_type, inputs, outputs, attrs)
        except Exception as exc:  # a broken listener must not break the user's program
            sys.stderr.write(f"ascend-lens: listener {fn!r} failed: {exc!r}\n")


def emit_sync(device_id: int) -> None:
    for fn in sync_listeners:
        _guard(fn, device_id)
