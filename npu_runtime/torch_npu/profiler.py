"""`torch_npu.profiler`: torch_npu's profiler API over the runtime's records.

`profile(...)` collects the WorkRecords of the steps its schedule marks active (one
runtime Profiler per active cycle); `tensorboard_trace_handler(dir)` writes the cycle as a
`<host>_<pid>_<timestamp>_ascend_pt/` directory (npu_runtime/profiler/ascend_pt.py), the
layout msprof-analyze and TensorBoard's torch_npu plugin read.
"""

from __future__ import annotations

import enum
import os
from collections import defaultdict
from collections.abc import Callable, Iterable
from pathlib import Path
from types import TracebackType
from typing import Any

from npu_runtime.profiler.session import Profiler
from npu_runtime.profiler.writer import write_profile


class ProfilerActivity(enum.Enum):
    CPU = "CPU"
    NPU = "NPU"


class ProfilerLevel:
    Level_none = "Level_none"
    Level0 = "Level0"
    Level1 = "Level1"
    Level2 = "Level2"


class AiCMetrics:
    PipeUtilization = "ACL_AICORE_PIPE_UTILIZATION"
    ArithmeticUtilization = "ACL_AICORE_ARITHMETIC_UTILIZATION"
    Memory = "ACL_AICORE_MEMORY_BANDWIDTH"
    MemoryL0 = "ACL_AICORE_L0B_AND_WIDTH"
    MemoryUB = "ACL_AICORE_MEMORY_UB"
    ResourceConflictRatio = "ResourceConflictRatio"
    L2Cache = "ACL_AICORE_L2_CACHE"
    MemoryAccess = "ACL_AICORE_MEMORY_ACCESS"
    AiCoreNone = "ACL_AICORE_NONE"


class ExportType:
    Text = "text"
    Db = "db"


class ProfilerAction(enum.Enum):
    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3


class _ExperimentalConfig:
    """torch_npu.profiler._ExperimentalConfig: accepted and kept (the emulator records the
    same data at every level)."""

    def __init__(
        self,
        profiler_level: str = ProfilerLevel.Level0,
        aic_metrics: str = AiCMetrics.AiCoreNone,
        l2_cache: bool = False,
        msprof_tx: bool = False,
        data_simplification: bool = True,
        record_op_args: bool = False,
        op_attr: bool = False,
        gc_detect_threshold: float | None = None,
        export_type: str | list[str] = ExportType.Text,
        **kwargs: Any,
    ) -> None:
        self.profiler_level = profiler_level
        self.aic_metrics = aic_metrics
        self.l2_cache = l2_cache
        self.msprof_tx = msprof_tx
        self.data_simplification = data_simplification
        self.record_op_args = record_op_args
        self.op_attr = op_attr
        self.export_type = export_type
        self.extra = kwargs


def schedule(
    wait: int, active: int, warmup: int = 0, repeat: int = 0, skip_first: int = 0
) -> Callable[[int], ProfilerAction]:
    """torch_npu's schedule: positional order wait, active, warmup (unlike torch's)."""
    if wait < 0 or warmup < 0 or active <= 0 or repeat < 0 or skip_first < 0:
        raise ValueError("Invalid profiler schedule arguments")

    def action(step: int) -> ProfilerAction:
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        cycle = wait + warmup + active
        if repeat > 0 and step // cycle >= repeat:
            return ProfilerAction.NONE
        pos = step % cycle
        if pos < wait:
            return ProfilerAction.NONE
        if pos < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if pos < cycle - 1 else ProfilerAction.RECORD_AND_SAVE

    return action


def _always_record(step: int) -> ProfilerAction:
    return ProfilerAction.RECORD


def tensorboard_trace_handler(
    dir_name: str | None = None,
    worker_name: str | None = None,
    analyse_flag: bool = True,
    async_mode: bool = False,
) -> Callable[[profile], None]:
    """Write each finished cycle as a `*_ascend_pt` directory under `dir_name`."""
    out = Path(dir_name or os.environ.get("ASCEND_WORK_PATH", "") or "./").absolute()
    if out.exists() and not out.is_dir():
        raise RuntimeError(f"Invalid parameter dir_name: {dir_name} is not a directory")

    def handler(prof: profile) -> None:
        prof._write(out)

    return handler


def supported_activities() -> set[ProfilerActivity]:
    return {ProfilerActivity.CPU, ProfilerActivity.NPU}


class profile:  # noqa: N801 (torch_npu's name)
    """torch_npu.profiler.profile(*, activities=None, schedule=None, on_trace_ready=None,
    record_shapes=False, profile_memory=False, with_stack=False, with_flops=False,
    with_modules=False, experimental_config=None)."""

    def __init__(
        self,
        *,
        activities: Iterable[ProfilerActivity] | None = None,
        schedule: Callable[[int], ProfilerAction] | None = None,
        on_trace_ready: Callable[[profile], Any] | None = None,
        record_shapes: bool = False,
        profile_memory: bool = False,
        with_stack: bool = False,
        with_flops: bool = False,
        with_modules: bool = False,
        experimental_config: _ExperimentalConfig | None = None,
        use_cuda: bool | None = None,
        **kwargs: Any,
    ) -> None:
        self.activities = set(activities) if activities else supported_activities()
        self.schedule = schedule or _always_record
        self.on_trace_ready = on_trace_ready
        self.record_shapes = record_shapes
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.with_flops = with_flops
        self.with_modules = with_modules
        self.experimental_config = experimental_config or _ExperimentalConfig()
        self.step_num = 0
        self._action = ProfilerAction.NONE
        self._session: Profiler | None = None
        self._last: Profiler | None = None
        self.written: list[Path] = []

    # -- control ------------------------------------------------------------------------
    def start(self) -> None:
        self._action = self.schedule(self.step_num)
        self._enter(self._action)

    def stop(self) -> None:
        if self._session is not None:
            self._finish()
        self._action = ProfilerAction.NONE

    def step(self) -> None:
        prev = self._action
        self.step_num += 1
        new = self.schedule(self.step_num)
        if prev == ProfilerAction.RECORD_AND_SAVE or (
            prev in (ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE)
            and new == ProfilerAction.NONE
        ):
            self._finish()
        elif self._session is not None and prev in (ProfilerAction.RECORD, ProfilerAction.WARMUP):
            if prev == ProfilerAction.WARMUP and new in (
                ProfilerAction.RECORD,
                ProfilerAction.RECORD_AND_SAVE,
            ):
                self._session.stop()  # warm-up work is not part of the trace
                self._session = None
            else:
                self._session.step()
        self._action = new
        self._enter(new)

    def _enter(self, action: ProfilerAction) -> None:
        if action != ProfilerAction.NONE and self._session is None:
            self._session = Profiler(None, stack=self.with_stack)
            self._session.start()

    def _finish(self) -> None:
        s = self._session
        if s is None:
            return
        s.stop()
        self._session = None
        self._last = s
        if self.on_trace_ready is not None:
            self.on_trace_ready(self)

    def _write(self, out: Path) -> None:
        if self._last is not None:
            files = write_profile(self._last.data(), out, ("ascend_pt",))
            self.written += files.get("ascend_pt", [])

    def __enter__(self) -> profile:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    # -- results ----------------------------------------------------------------------------
    def export_chrome_trace(self, path: str) -> None:
        if self._last is None:
            raise RuntimeError("no profiling data: the profiler has not recorded a step yet")
        from npu_runtime.profiler.chrome_trace import write

        data = self._last.data()
        write(
            data.records, Path(path), data.waits, epoch_us=data.epoch_us, process_id=data.process_id
        )

    def key_averages(self) -> _KeyAverages:
        records = self._last.records if self._last is not None else []
        return _KeyAverages(records)


class _KeyAverages:
    def __init__(self, records: list[Any]) -> None:
        agg: dict[str, list[float]] = defaultdict(lambda: [0, 0.0])
        for r in records:
            agg[r.op_type][0] += 1
            agg[r.op_type][1] += r.duration_us
        self.rows = sorted(agg.items(), key=lambda kv: -kv[1][1])

    def table(self, sort_by: str | None = None, row_limit: int = 100, **kwargs: Any) -> str:
        lines = [f"{'Name':<32}{'NPU total (us)':>16}{'# of Calls':>12}"]
        for name, (n, total) in self.rows[:row_limit]:
            lines.append(f"{name:<32}{total:>16.3f}{int(n):>12}")
        return "\n".join(lines)


__all__ = [
    "AiCMetrics", "ExportType", "ProfilerAction", "ProfilerActivity", "ProfilerLevel",
    "_ExperimentalConfig", "profile", "schedule", "supported_activities", "tensorboard_trace_handler",
]  # fmt: skip
