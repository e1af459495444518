"""pyACL's acl.prof over the emulated runtime: return codes, handles and the msprof layout."""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from npu_runtime.acl import prof
from npu_runtime.core import hooks, launch
from npu_runtime.core.runtime import get_runtime
from npu_runtime.errors import AclError
from npu_runtime.profiler.aclprof import AicoreMetrics, DataType, reset_state
from npu_runtime.profiler.data_files import op_summary_columns

from .trace_check import load

TASK_AND_PMU = int(DataType.TASK_TIME | DataType.AICORE_METRICS)
PIPE = int(AicoreMetrics.PIPE_UTILIZATION)


@pytest.fixture(autouse=True)
def runtime() -> Iterator[None]:
    rt = get_runtime()
    rt.reset()
    reset_state()
    rt.init()
    rt.set_device(0)
    yield
    reset_state()
    rt.reset()


def _matmul() -> None:
    launch.submit(0, name="MatMul", op_type="MatMul", cost=launch.Cost(5.0, "cube"))


def test_a_full_session_writes_msprof_layout(tmp_path: Path) -> None:
    assert prof.init(str(tmp_path)) == 0
    cfg = prof.create_config([0], PIPE, 0, TASK_AND_PMU)
    assert cfg != 0
    assert prof.start(cfg) == 0
    _matmul()
    _matmul()
    assert prof.stop(cfg) == 0
    assert prof.destroy_config(cfg) == 0
    assert prof.finalize() == 0

    (root,) = tmp_path.glob("PROF_000001_*")
    assert len(root.name.split("_")[2]) == 17  # YYYYmmddHHMMSSmmm
    out = root / "mindstudio_profiler_output"
    (summary,) = out.glob("op_summary_*.csv")
    (trace,) = out.glob("msprof_*.json")
    with open(summary, newline="") as f:
        rows = list(csv.reader(f))
    assert tuple(rows[0]) == op_summary_columns(pmu=True)
    assert [r[5] for r in rows[1:]] == ["MatMul", "MatMul"]
    assert len(load(trace).slices) == 2
    lines = json.loads((out / "lines.json").read_text())
    assert lines["trace"] == str(trace.resolve()) and lines["op_count"] == 2


def test_without_aicore_metrics_the_header_has_no_pmu(tmp_path: Path) -> None:
    prof.init(str(tmp_path))
    cfg = prof.create_config([0], int(AicoreMetrics.NONE), 0, int(DataType.TASK_TIME))
    prof.start(cfg)
    _matmul()
    prof.stop(cfg)
    (summary,) = tmp_path.glob("PROF_*/mindstudio_profiler_output/op_summary_*.csv")
    assert summary.read_text().split("\n", 1)[0] == ",".join(op_summary_columns(pmu=False))


def test_return_codes_follow_the_call_order_rules(tmp_path: Path) -> None:
    errors: list[AclError] = []
    hooks.add_error_listener(errors.append)
    try:
        assert prof.start(12345) == 100043  # ACL_ERROR_PROF_NOT_RUN: no init yet
        assert prof.finalize() == 100043
        assert prof.init("") == 100000  # ACL_ERROR_INVALID_PARAM
        assert prof.init(str(tmp_path)) == 0
        assert prof.init(str(tmp_path)) == 100002  # ACL_ERROR_REPEAT_INITIALIZE
        cfg = prof.create_config([0], PIPE, 0, TASK_AND_PMU)
        other = prof.create_config([0], PIPE, 0, TASK_AND_PMU)
        assert prof.stop(cfg) == 100043  # not running
        assert prof.start(0) == 100000  # not a config
        assert prof.start(cfg) == 0
        assert prof.start(other) == 100042  # ACL_ERROR_PROF_ALREADY_RUN
        assert prof.destroy_config(cfg) == 100042  # in use
        assert prof.stop(other) == 100010  # ACL_ERROR_INVALID_PROFILING_CONFIG
        assert prof.stop(cfg) == 0
        assert prof.destroy_config(cfg) == 0
        assert prof.destroy_config(cfg) == 100000
    finally:
        hooks.remove_error_listener(errors.append)
    # Every failing call reached the error listeners, naming its C API.
    assert [e.api for e in errors][:3] == ["aclprofStart", "aclprofFinalize", "aclprofInit"]
    assert len(errors) == 10


def test_bad_configs_return_a_null_handle() -> None:
    assert prof.create_config([], PIPE, 0, TASK_AND_PMU) == 0
    assert prof.create_config([99], PIPE, 0, TASK_AND_PMU) == 0
    assert prof.create_config([0], 42, 0, TASK_AND_PMU) == 0
    assert prof.create_config([0], PIPE, 0, 0x8000_0000) == 0


def test_arguments_are_positional_and_typed_as_pyacl_parses_them() -> None:
    with pytest.raises(TypeError, match="argument 1 is not list"):
        prof.create_config((0,), PIPE, 0, TASK_AND_PMU)
    with pytest.raises(TypeError, match=r"exactly 1 argument \(0 given\)"):
        prof.init()
    with pytest.raises(TypeError, match="must be str"):
        prof.init(3)


def test_finalize_while_running_keeps_the_data(tmp_path: Path) -> None:
    prof.init(str(tmp_path))
    cfg = prof.create_config([0], PIPE, 0, TASK_AND_PMU)
    prof.start(cfg)
    _matmul()
    assert prof.finalize() == 0
    assert not hooks.work_listeners
    assert len(list(tmp_path.glob("PROF_*/mindstudio_profiler_output/op_summary_*.csv"))) == 1


def test_init_on_a_file_is_an_invalid_file(tmp_path: Path) -> None:
    f = tmp_path / "f"
    f.write_text("")
    assert prof.init(str(f)) == 100003  # ACL_ERROR_INVALID_FILE


def test_runtime_reset_forgets_acl_prof(tmp_path: Path) -> None:
    prof.init(str(tmp_path))
    cfg = prof.create_config([0], PIPE, 0, TASK_AND_PMU)
    prof.start(cfg)
    get_runtime().reset()
    # The next acl.prof call sees a clean process: init forgotten (0, not 100002) and the
    # old session's listener gone.
    assert prof.init(str(tmp_path)) == 0
    assert not hooks.work_listeners
