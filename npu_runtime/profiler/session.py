"""`npu_runtime.profile(out_dir)`: profile a block of code and write msprof-style output.

with npu_runtime.profile("prof") as prof:
    for batch in data:
        train_step(batch)
        prof.step()
print(prof.summary["lines"][0])
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from types import TracebackType
from typing import Any

from npu_runtime import steps
from npu_runtime.devices import DeviceProfile
from npu_runtime.profiler.collector import Collector
from npu_runtime.profiler.lines import aggregate
from npu_runtime.profiler.writer import DEFAULT_EXPORTERS, ProfileData, write_profile
from npu_runtime.records import EventWait, WorkRecord


class Profiler:
    """A profiling session: collects while active, writes `out_dir` when it stops.

    `out_dir=None` collects only (for the kernel and debugger, which want `summary`).
    """

    def __init__(
        self,
        out_dir: str | os.PathLike[str] | None,
        *,
        stack: bool = False,
        device: str | None = None,
        exporters: tuple[str, ...] = DEFAULT_EXPORTERS,
        pmu: bool = True,
    ) -> None:
        # Absolute now: the profiled code may chdir before the output is written.
        self.out_dir = Path(out_dir).absolute() if out_dir is not None else None
        self.device = device
        self.exporters = exporters
        self.pmu = pmu
        self.collector = Collector(stack=stack)
        self.files: dict[str, list[Path]] = {}
        self._epoch_us = 0
        self._started = 0.0
        self._summary: dict[str, Any] | None = None

    @property
    def records(self) -> list[WorkRecord]:
        return self.collector.records

    @property
    def waits(self) -> list[EventWait]:
        return self.collector.waits

    def start(self) -> Profiler:
        """Start collecting (idempotent: a second call changes nothing)."""
        if self.collector.attached:
            return self
        if self.out_dir is not None and self.out_dir.exists() and not self.out_dir.is_dir():
            raise NotADirectoryError(f"profile output {self.out_dir} is not a directory")
        self._started = time.time()
        self._epoch_us = int(self._started * 1e6)
        self.collector.attach()
        steps.attach(self.step)
        return self

    def step(self) -> int:
        """Mark the end of a step: later work belongs to the next one. Returns the new step."""
        return self.collector.step()

    def stop(self) -> dict[str, list[Path]]:
        """Stop collecting and write the output directory (if any). Returns files by exporter."""
        self.collector.detach()
        steps.detach(self.step)
        self._summary = None
        if self.out_dir is None:
            return {}
        self.files = write_profile(self.data(), self.out_dir, self.exporters)
        return self.files

    def data(self) -> ProfileData:
        """What was collected so far, ready for the exporters."""
        prof = _device_profile()
        return ProfileData(
            records=list(self.records),
            waits=list(self.waits),
            device=self.device or prof.soc_name,
            freq_mhz=prof.clock_hz / 1e6,
            epoch_us=_shared_epoch() or self._epoch_us,
            started=self._started or time.time(),
            pmu=self.pmu,
            device_profile=prof,
            mem_used=list(self.collector.mem_used),
            syncs=list(self.collector.syncs),
            steps_marked=self.collector.step_no > 0,
        )

    @property
    def summary(self) -> dict[str, Any]:
        """The per-line profile (`ascend-lens.profile/1`) of what was collected.

        Recomputed on every access while collecting; cached once stopped.
        """
        if self._summary is None or self.collector.attached:
            trace = self.files.get("trace")
            self._summary = aggregate(
                self.records,
                device=self.device or _device_profile().soc_name,
                trace_path=trace[0] if trace else None,
            )
        return self._summary

    def __enter__(self) -> Profiler:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        # Write even when the block raised: a profile of a failing run is the useful one.
        self.stop()


def profile(
    out_dir: str | os.PathLike[str] | None = None,
    *,
    stack: bool = False,
    device: str | None = None,
    ascend_pt: bool = False,
) -> Profiler:
    """Profile a `with` block into `out_dir` (op_summary_*.csv, trace.json, lines.json).

    `stack=True` records every launch's full user call stack (slower); `device` overrides
    the SoC name written into lines.json; `ascend_pt=True` also writes a torch_npu-style
    `*_ascend_pt/` directory for msprof-analyze.
    """
    exporters = DEFAULT_EXPORTERS + (("ascend_pt",) if ascend_pt else ())
    return Profiler(out_dir, stack=stack, device=device, exporters=exporters)


def _shared_epoch() -> int | None:
    """The time origin every rank of a distributed job shares (so their traces line up)."""
    from npu_runtime.hccl import world

    job = world.current()
    return job.epoch_us if job is not None else None


def _device_profile() -> DeviceProfile:
    """The emulated device's figures (SoC name for lines.json, clock for op_summary cycles)."""
    from npu_runtime.core.runtime import get_runtime

    return get_runtime().profile
