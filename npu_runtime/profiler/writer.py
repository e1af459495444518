"""Turn collected records into files: a registry of exporters run over one ProfileData.

Each exporter is `fn(data, out_dir) -> list[Path]`, registered with `@exporter(name)`.
`ascend-lens run --profile`, `npu_runtime.profile()` and `acl.prof` all pick exporters by
name from here, so a later layout (torch_npu's `*_ascend_pt/`) is one more entry.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from npu_runtime.devices import DeviceProfile
from npu_runtime.profiler import chrome_trace, op_summary
from npu_runtime.profiler.lines import DEFAULT_DEVICE, aggregate
from npu_runtime.records import EventWait, WorkRecord

TRACE_FILE = "trace.json"
LINES_FILE = "lines.json"


@dataclass
class ProfileData:
    """Everything an exporter may need about one profiled run."""

    records: Sequence[WorkRecord]
    waits: Sequence[EventWait] = ()
    device: str = DEFAULT_DEVICE  # SoC name of the emulated device
    epoch_us: int = field(default_factory=lambda: int(time.time() * 1e6))
    started: float = field(default_factory=time.time)  # wall-clock seconds, for file names
    pmu: bool = True  # op_summary with PipeUtilization columns
    freq_mhz: float = op_summary.DEFAULT_FREQ_MHZ
    process_id: int = field(default_factory=os.getpid)
    trace_name: str = TRACE_FILE  # acl.prof uses msprof's msprof_<timestamp>.json
    device_profile: DeviceProfile | None = None  # core counts for exporters that list them
    # Device memory in use as each record was enqueued (parallel to records; may be empty).
    mem_used: Sequence[int] = ()
    # (record index, device) at each aclrtSynchronizeDevice, and whether the run marked
    # steps itself: a run that marks none gets one step per device sync (torch_npu layout).
    syncs: Sequence[tuple[int, int]] = ()
    steps_marked: bool = True

    @property
    def stamp(self) -> str:
        """msprof's 14-digit file timestamp (YYYYmmddHHMMSS)."""
        return time.strftime("%Y%m%d%H%M%S", time.localtime(self.started))


Exporter = Callable[[ProfileData, Path], list[Path]]
EXPORTERS: dict[str, Exporter] = {}


def exporter(name: str) -> Callable[[Exporter], Exporter]:
    """Register an exporter under `name`; names are unique."""

    def register(fn: Exporter) -> Exporter:
        if name in EXPORTERS:
            raise ValueError(f"profiler exporter {name!r} is already registered")
        EXPORTERS[name] = fn
        return fn

    return register


def _umask() -> int:
    """The process's umask (Linux reports it in /proc; elsewhere set it back at once)."""
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except OSError:
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def write_atomic(path: Path, text: str) -> None:
    """Replace `path` in one step, so a watching editor never reads half a file."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        # mkstemp makes the file 0600; give it the mode open() would, like the other files.
        os.fchmod(fd, 0o666 & ~_umask())
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


@exporter("op_summary")
def _op_summary(data: ProfileData, out_dir: Path) -> list[Path]:
    path = out_dir / f"op_summary_{data.stamp}.csv"
    op_summary.write(
        data.records, path, epoch_us=data.epoch_us, pmu=data.pmu, freq_mhz=data.freq_mhz
    )
    return [path]


@exporter("trace")
def _trace(data: ProfileData, out_dir: Path) -> list[Path]:
    path = out_dir / data.trace_name
    tmp = out_dir / f".{data.trace_name}.tmp"
    chrome_trace.write(
        data.records, tmp, data.waits, epoch_us=data.epoch_us, process_id=data.process_id
    )
    os.replace(tmp, path)
    return [path]


@exporter("lines")
def _lines(data: ProfileData, out_dir: Path) -> list[Path]:
    path = out_dir / LINES_FILE
    trace = out_dir / data.trace_name
    doc = aggregate(data.records, device=data.device, trace_path=trace if trace.exists() else None)
    write_atomic(path, json.dumps(doc, indent=1) + "\n")
    return [path]


DEFAULT_EXPORTERS: tuple[str, ...] = ("op_summary", "trace", "lines")


def write_profile(
    data: ProfileData,
    out_dir: str | os.PathLike[str],
    exporters: Sequence[str] = DEFAULT_EXPORTERS,
) -> dict[str, list[Path]]:
    """Run `exporters` in order into `out_dir` (created if missing); returns their files."""
    unknown = [e for e in exporters if e not in EXPORTERS]
    if unknown:
        raise ValueError(f"unknown profiler exporter(s): {', '.join(unknown)}")
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise NotADirectoryError(f"profile output {out} exists and is not a directory")
    out.mkdir(parents=True, exist_ok=True)
    return {name: EXPORTERS[name](data, out) for name in exporters}


def summary_of(written: dict[str, list[Path]]) -> dict[str, Any] | None:
    """The per-line document just written, if the `lines` exporter ran."""
    paths = written.get("lines")
    if not paths:
        return None
    doc: dict[str, Any] = json.loads(paths[0].read_text("utf-8"))
    return doc


# Exporters in their own modules register on import.
from npu_runtime.profiler import ascend_pt as _ascend_pt  # noqa: E402,F401
