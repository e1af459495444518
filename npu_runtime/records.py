"""One record type for executed work: an op, a copy, a memset or a collective.

Every consumer reads these records and nothing else: the msprof CSV and Chrome-trace
exporters, the per-line aggregate (docs/profile-format.md), the terminal tables, the
kernel's MIME bundle, the debug adapter's events and the extension's decorations.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

WorkKind = Literal["op", "memcpy", "memset", "comm"]
# What limited the simulated duration, as a roofline says ("link": HCCS/RoCE/PCIe links).
Bound = Literal["cube", "vector", "memory", "launch", "aicpu", "link"]
# The unit that executed the work (msprof "Task Type" vocabulary; HCCL for collectives).
Unit = Literal["AI_CORE", "AI_VECTOR_CORE", "AI_CPU", "MEMCPY", "MEMSET", "HCCL"]


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


@dataclass(frozen=True, slots=True)
class CommInfo:
    """What a collective's record adds: its communicator, algorithm and link traffic."""

    group: str  # HCCL group id, the key of profiler_metadata.json's parallel_group_info
    group_name: str  # "default_group" or the group's description
    global_ranks: tuple[int, ...]
    group_rank: int
    algorithm: str  # per level, innermost first: "mesh", "mesh+H-D_R", "p2p", ...
    # (transport "HCCS"/"PCIE"/"RDMA", bytes sent, transfer µs) per transport used
    transit: tuple[tuple[str, float, float], ...] = ()
    # (peer group rank, transport, bytes sent to it, transfer µs) per peer
    links: tuple[tuple[int, str, float, float], ...] = ()
    p2p: bool = False  # send/recv (msprof-analyze's "p2p" section)


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
    comm: CommInfo | None = None  # collectives only

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
