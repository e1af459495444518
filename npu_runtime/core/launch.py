"""Enqueue device work: the one path every op, copy and memset takes onto a stream.

`submit` computes the work now (numpy), places it on the stream's simulated clock, and
turns a device-side failure (an AclError raised by `compute`, or an injected op fault)
into a fault that surfaces at the next synchronisation with the launch site attached.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from npu_runtime.core import hooks
from npu_runtime.core.faults import injector
from npu_runtime.core.runtime import get_runtime
from npu_runtime.core.stream import DeviceFault, Stream
from npu_runtime.errors import AclError
from npu_runtime.records import Bound, SourceSite, TensorInfo, Unit, WorkKind, WorkRecord
from npu_runtime.sites import user_site

_rt = get_runtime()  # always the same object (reset() clears it in place)


@dataclass(frozen=True, slots=True)
class Cost:
    """The cost model's verdict for one piece of work."""

    duration_us: float
    bound: Bound = "launch"
    unit: Unit = "AI_CORE"
    block_dim: int = 1
    time_by_unit: dict[str, float] = field(default_factory=dict)
    bytes_moved: int = 0
    flops: int = 0


def _as_cost(cost: Cost | Mapping[str, Any] | Any) -> Cost:
    if isinstance(cost, Cost):
        return cost
    if isinstance(cost, Mapping):
        return Cost(**cost)
    # Any object with the same attributes (the ops engineer's own cost type).
    names = ("duration_us", "bound", "unit", "block_dim", "time_by_unit", "bytes_moved", "flops")
    return Cost(**{n: getattr(cost, n) for n in names if hasattr(cost, n)})


def submit(
    stream_handle: int,
    *,
    kind: WorkKind = "op",
    name: str,
    op_type: str,
    cost: Cost | Mapping[str, Any] | Any,
    inputs: Iterable[TensorInfo] = (),
    outputs: Iterable[TensorInfo] = (),
    compute: Callable[[], None] | None = None,
    api: str = "aclopExecuteV2",
    site: SourceSite | None = None,
) -> WorkRecord:
    """Run `compute` as work on `stream_handle` (0 = current default stream).

    Raises AclError for host-side failures (no context: 107002; bad stream: 107000/107003).
    Device-side failures do not raise here: they surface at the next synchronisation.
    """
    return submit_positional(
        stream_handle, kind, name, op_type, cost, inputs, outputs, compute, api, site
    )


def submit_positional(
    stream_handle: int,
    kind: WorkKind,
    name: str,
    op_type: str,
    cost: Cost | Mapping[str, Any] | Any,
    inputs: Iterable[TensorInfo],
    outputs: Iterable[TensorInfo],
    compute: Callable[[], None] | None,
    api: str = "aclopExecuteV2",
    site: SourceSite | None = None,
) -> WorkRecord:
    """`submit` with its arguments in order: the op launch path calls it for every op, and
    binding ten keywords costs more than the rest of the call's set-up."""
    stream = _rt.resolve_stream(stream_handle, api)
    c = cost if type(cost) is Cost else _as_cost(cost)
    if site is None:
        site = user_site(2)
    fault: AclError | None = None
    injected = injector.op_fails(op_type) if injector.active else None
    if injected is not None:
        fault = AclError(injected, api, f"injected device fault in {op_type} ({injected})")
    elif compute is not None:
        try:
            compute()
        except AclError as exc:
            fault = exc
    if type(inputs) is not tuple:
        inputs = tuple(inputs)
    if type(outputs) is not tuple:
        outputs = tuple(outputs)
    return place(stream, kind, name, op_type, c, inputs, outputs, site, fault)


# `place` builds records positionally (a keyword call costs about a microsecond more per
# record): fail at import, not silently, if WorkRecord's fields ever move.
_RECORD_ORDER = (
    "kind", "name", "op_type", "device", "stream", "task_id", "start_us", "duration_us",
    "wait_us", "bound", "unit", "block_dim", "inputs", "outputs", "time_by_unit",
    "bytes_moved", "flops", "site",
)  # fmt: skip
if tuple(f.name for f in fields(WorkRecord))[: len(_RECORD_ORDER)] != _RECORD_ORDER:
    raise ImportError("npu_runtime.records.WorkRecord changed field order; update place()")


def place(
    stream: Stream,
    kind: WorkKind,
    name: str,
    op_type: str,
    c: Cost,
    inputs: tuple[TensorInfo, ...],
    outputs: tuple[TensorInfo, ...],
    site: SourceSite | None,
    fault: AclError | None = None,
    model_id: int | None = None,
) -> WorkRecord:
    """Put already-computed work on the stream's clock and announce it (`model_id`: the
    offline model whose layer this is)."""
    dev = stream.device
    start, wait = dev.enqueue(stream, c.duration_us)
    record = WorkRecord(
        kind,
        name,
        op_type,
        dev.id,
        stream.id,
        dev.next_task_id(),
        start,
        c.duration_us,
        wait,
        c.bound,
        c.unit,
        c.block_dim,
        inputs,
        outputs,
        dict(c.time_by_unit),  # records are mutable; the plan's cost is shared
        c.bytes_moved,
        c.flops,
        site,
    )
    if model_id is not None:
        record.model_id = model_id
    if fault is not None:
        with dev.lock:
            stream.pending.append(DeviceFault(record.end_us, fault, site))
    if hooks.work_listeners:
        hooks.emit_work(record)
    return record
