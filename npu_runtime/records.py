"""One record type for executed work: an op, a copy or a memset.

Every consumer reads these records and nothing else: the msprof CSV and Chrome-trace
exporters, the per-line aggregate (docs/profile-format.md), the terminal tables, the
kernel's MIME bundle, the debug adapter's events and the extension's decorations.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

WorkKind = Literal["op", "memcpy", "memset"]
# What limited the simulated duration, as a roofline says.
Bound = Literal["cube", "vector", "memory", "launch", "aicpu"]
# The unit that executed the work (msprof "Task Type" vocabulary).
Unit = Literal["AI_CORE", "AI_VECTOR_CORE", "AI_CPU", "MEMCPY", "MEMSET"]


@dataclass(frozen=True, slots=True)
class SourceSite:
    """A user source location: the first frame outside Ascend Lens's own packages."""

    file: str
    line: int
    function: str = ""

    def __str__(self) -> str:
        return f"{self.file}:{self.line}"


@dataclass(frozen=True, slots=True)
class TensorInfo:
    """Shape, dtype and format of one op input or output, as msprof reports them."""

    shape: tuple[int, ...]
    dtype: str  # msprof spelling: "FLOAT16", "FLOAT", "BF16", "INT32", ...
    format: str = "ND"  # "ND", "NCHW", "NHWC", "FRACTAL_NZ", ...


@dataclass(slots=True)
class WorkRecord:
    """One piece of executed device work with its simulated timing and launch site.

    Times are microseconds on the device's simulated clock (per device, starting at 0
    when the device is first set).
    """

    kind: WorkKind
    name: str  # op instance name ("MatMul_3") or the copy kind ("MEMCPY_HOST_TO_DEVICE")
    op_type: str  # "MatMul", "Add", "MemcpyH2D", "Memset", ...
    device: int
    stream: int  # stream id (not the handle): 0 is the device's default stream
    task_id: int  # per-device, increasing in enqueue order
    start_us: float
    duration_us: float
    wait_us: float = 0.0  # gap between the stream being ready for it and its start
    bound: Bound = "launch"
    unit: Unit = "AI_CORE"
    block_dim: int = 1
    inputs: tuple[TensorInfo, ...] = ()
    outputs: tuple[TensorInfo, ...] = ()
    # simulated microseconds by unit: keys among "cube", "vector", "memory", "scalar", "launch"
    time_by_unit: dict[str, float] = field(default_factory=dict)
    bytes_moved: int = 0
    flops: int = 0
    site: SourceSite | None = None
    stack: tuple[SourceSite, ...] | None = None  # full user stack, when asked for
    step: int = 0  # profiler step the work belongs to
    model_id: int | None = None  # the offline model (acl.mdl) a layer's task belongs to

    @property
    def end_us(self) -> float:
        return self.start_us + self.duration_us


@dataclass(frozen=True, slots=True)
class EventWait:
    """A stream waiting for an event recorded on another stream (aclrtStreamWaitEvent).

    Emitted by the runtime when the wait is enqueued; the profiler draws it as a flow
    from the record to the wait. Times are simulated microseconds, as in WorkRecord.
    """

    device: int
    stream: int  # stream id that waits
    event: int  # event handle, as the user sees it
    record_stream: int  # stream id the event was recorded on; -1 when never recorded
    record_us: float  # simulated time the recorded work completed on record_stream
    wait_start_us: float  # when the waiting stream reached the wait
    wait_end_us: float  # when it could go on: max(wait_start_us, record_us)
    record_site: SourceSite | None = None  # the user line that recorded the event
    site: SourceSite | None = None  # the user line that enqueued the wait
    step: int = 0
