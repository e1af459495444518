"""The state behind pyACL's `acl.prof`: aclprofInit/CreateConfig/Start/Stop/Finalize.

Failures raise AclError through the runtime (so error listeners and
acl.get_recent_err_msg see them); `npu_runtime.acl.prof` turns them into return codes.
`aclprofStop` writes msprof's layout under the init path:
`PROF_000001_<YYYYmmddHHMMSSmmm>_<16 letters>/mindstudio_profiler_output/` with
`op_summary_<ts>.csv`, `msprof_<ts>.json` (the Chrome trace) and our `lines.json`.
"""

from __future__ import annotations

import enum
import os
import random
import string
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from npu_runtime.core.runtime import Runtime, get_runtime
from npu_runtime.errors import codes
from npu_runtime.profiler.session import Profiler

# Codes the profiling API returns (acl_base_rt.h); looked up so a typo fails at import.
INVALID_PARAM: int = vars(codes)["ACL_ERROR_INVALID_PARAM"]
INVALID_FILE: int = vars(codes)["ACL_ERROR_INVALID_FILE"]
REPEAT_INITIALIZE: int = vars(codes)["ACL_ERROR_REPEAT_INITIALIZE"]
INVALID_PROFILING_CONFIG: int = vars(codes)["ACL_ERROR_INVALID_PROFILING_CONFIG"]
PROF_ALREADY_RUN: int = vars(codes)["ACL_ERROR_PROF_ALREADY_RUN"]
PROF_NOT_RUN: int = vars(codes)["ACL_ERROR_PROF_NOT_RUN"]

MAX_PATH = 4096


class DataType(enum.IntFlag):
    """aclprofCreateConfig's dataTypeConfig bits (acl_prof.h)."""

    ACL_API = 0x0001
    TASK_TIME = 0x0002
    AICORE_METRICS = 0x0004
    AICPU = 0x0008
    L2CACHE = 0x0010
    HCCL_TRACE = 0x0020
    TRAINING_TRACE = 0x0040
    MSPROFTX = 0x0080
    RUNTIME_API = 0x0100
    TASK_TIME_L0 = 0x0800
    TASK_MEMORY = 0x1000
    OP_ATTR = 0x4000


class AicoreMetrics(enum.IntEnum):
    """aclprofAicoreMetrics (acl_prof.h)."""

    ARITHMETIC_UTILIZATION = 0
    PIPE_UTILIZATION = 1
    MEMORY_BANDWIDTH = 2
    L0B_AND_WIDTH = 3
    RESOURCE_CONFLICT_RATIO = 4
    MEMORY_UB = 5
    L2_CACHE = 6
    NONE = 0xFF


@dataclass
class ProfConfig:
    """What aclprofCreateConfig was given."""

    devices: tuple[int, ...]
    metrics: AicoreMetrics
    data_types: DataType

    @property
    def pmu(self) -> bool:
        # Only PipeUtilization is modelled; other metric groups get the no-PMU header.
        return (
            DataType.AICORE_METRICS in self.data_types
            and self.metrics == AicoreMetrics.PIPE_UTILIZATION
        )


class AclProf:
    """One process's acl.prof state (pyACL keeps it global, so do we)."""

    def __init__(self, rt: Runtime) -> None:
        self.rt = rt
        self.handles = rt.handles  # replaced by Runtime.reset(): then this state is stale
        self.lock = threading.Lock()
        self.path: Path | None = None
        self.running: tuple[int, ProfConfig, Profiler] | None = None
        self.written: list[Path] = []  # PROF_* directories, newest last

    def init(self, path: str) -> None:
        api = "aclprofInit"
        with self.lock:
            if self.path is not None:
                raise self.rt.fail(REPEAT_INITIALIZE, api, "acl.prof.init was already called")
            if not path or len(path) > MAX_PATH:
                raise self.rt.fail(
                    INVALID_PARAM, api, f"profiling path must be 1..{MAX_PATH} chars"
                )
            p = Path(path)
            if p.exists() and not p.is_dir():
                raise self.rt.fail(INVALID_FILE, api, f"{path} exists and is not a directory")
            try:
                p.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise self.rt.fail(
                    INVALID_FILE, api, f"cannot create {path}: {exc.strerror}"
                ) from None
            if not os.access(p, os.W_OK):
                raise self.rt.fail(INVALID_FILE, api, f"{path} is not writable")
            self.path = p.absolute()  # the script may chdir before stop

    def config(self, handle: int) -> ProfConfig | None:
        return self.rt.lookup(handle, ProfConfig)

    def create_config(self, devices: list[int], metrics: int, data_types: int) -> int:
        """A new config handle (runtime handles, so it looks like pyACL's pointers)."""
        api = "aclprofCreateConfig"
        if not devices or len(set(devices)) != len(devices):
            raise self.rt.fail(INVALID_PARAM, api, "device list must be non-empty, without repeats")
        bad = [d for d in devices if not 0 <= d < self.rt.device_count]
        if bad:
            raise self.rt.fail(
                INVALID_PARAM, api, f"no device {bad[0]} (count {self.rt.device_count})"
            )
        try:
            m = AicoreMetrics(metrics)
        except ValueError:
            raise self.rt.fail(INVALID_PARAM, api, f"unknown aicore metrics {metrics}") from None
        known = sum(DataType)
        if data_types < 0 or data_types & ~known:
            raise self.rt.fail(INVALID_PARAM, api, f"unknown data type bits {data_types:#x}")
        return self.rt.new_handle(ProfConfig(tuple(devices), m, DataType(data_types)))

    def destroy_config(self, handle: int) -> None:
        api = "aclprofDestroyConfig"
        with self.lock:
            if self.config(handle) is None:
                raise self.rt.fail(INVALID_PARAM, api, "not a profiling config handle")
            if self.running is not None and self.running[0] == handle:
                raise self.rt.fail(PROF_ALREADY_RUN, api, "the config is in use: stop first")
            self.rt.handles.pop(handle, None)

    def start(self, handle: int) -> None:
        api = "aclprofStart"
        config = self.config(handle)
        with self.lock:
            if self.path is None:
                raise self.rt.fail(PROF_NOT_RUN, api, "call acl.prof.init first")
            if config is None:
                raise self.rt.fail(INVALID_PARAM, api, "not a profiling config handle")
            if self.running is not None:
                raise self.rt.fail(PROF_ALREADY_RUN, api, "profiling is already running")
            prof = Profiler(None, pmu=config.pmu)
            prof.start()
            self.running = (handle, config, prof)

    def stop(self, handle: int) -> Path:
        api = "aclprofStop"
        config = self.config(handle)
        with self.lock:
            if self.path is None or self.running is None:
                raise self.rt.fail(PROF_NOT_RUN, api, "profiling is not running")
            if config is None or handle != self.running[0]:
                raise self.rt.fail(
                    INVALID_PROFILING_CONFIG,
                    api,
                    "stop needs the config profiling was started with",
                )
            _, cfg, prof = self.running
            self.running = None
            return self._write(prof, cfg, api)

    def finalize(self) -> None:
        api = "aclprofFinalize"
        with self.lock:
            if self.path is None:
                raise self.rt.fail(PROF_NOT_RUN, api, "acl.prof.init was never called")
            if self.running is not None:
                # Finalizing while running stops first, so the data is not lost.
                _, cfg, prof = self.running
                self.running = None
                self._write(prof, cfg, api)
            self.path = None

    def _write(self, prof: Profiler, cfg: ProfConfig, api: str) -> Path:
        assert self.path is not None
        prof.collector.detach()
        data = prof.data()
        data.records = [r for r in data.records if r.device in cfg.devices]
        data.waits = [w for w in data.waits if w.device in cfg.devices]
        data.trace_name = f"msprof_{data.stamp}.json"
        ms = time.strftime("%Y%m%d%H%M%S", time.localtime(data.started)) + (
            f"{int(data.started * 1000) % 1000:03d}"
        )
        tag = "".join(random.choices(string.ascii_uppercase, k=16))
        root = self.path / f"PROF_{len(self.written) + 1:06d}_{ms}_{tag}"
        out = root / "mindstudio_profiler_output"
        from npu_runtime.profiler.writer import write_profile

        try:
            write_profile(data, out)
        except OSError as exc:
            raise self.rt.fail(INVALID_FILE, api, f"cannot write {out}: {exc.strerror}") from None
        self.written.append(root)
        return root


_state: AclProf | None = None


def state() -> AclProf:
    """The process's acl.prof state, bound to the runtime."""
    global _state
    rt = get_runtime()
    if _state is None or _state.rt is not rt or _state.handles is not rt.handles:
        # A runtime reset is a clean process: forget init and any running session too.
        reset_state()
        _state = AclProf(rt)
    return _state


def reset_state() -> None:
    """Forget acl.prof's state (init path, running session): for a clean process in tests."""
    global _state
    if _state is not None and _state.running is not None:
        _state.running[2].collector.detach()
    _state = None
