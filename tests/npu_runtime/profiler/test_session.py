"""`npu_runtime.profiler.profile()` over the real runtime: a user script's ops land on its lines."""

from __future__ import annotations

import csv
import json
import os
import runpy
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from npu_runtime.core import hooks
from npu_runtime.core.runtime import get_runtime
from npu_runtime.profiler import profile
from npu_runtime.profiler.data_files import op_summary_columns

from .trace_check import load

SCRIPT = textwrap.dedent(
    """\
    from npu_runtime.core import launch, sched
    from npu_runtime.core.runtime import get_runtime
    rt = get_runtime()
    def layer():
        launch.submit(0, name="MatMul", op_type="MatMul", cost=launch.Cost(10.0, bound="cube"))
    side = sched.create_stream(rt)
    ev = sched.create_event(rt)
    for _ in range(3):
        layer()
    launch.submit(side, name="Add", op_type="Add", cost=launch.Cost(30.0, "memory", "AI_VECTOR_CORE"))
    sched.record_event(rt, ev, side)
    sched.stream_wait_event(rt, 0, ev)
    launch.submit(0, name="Cast", op_type="Cast", cost=launch.Cost(1.0, "vector", "AI_VECTOR_CORE"))
    STEP()
    launch.submit(0, name="Cast", op_type="Cast", cost=launch.Cost(1.0, "vector", "AI_VECTOR_CORE"))
    """
)


@pytest.fixture
def script(tmp_path: Path) -> Iterator[Path]:
    rt = get_runtime()
    rt.reset()
    rt.init()
    rt.set_device(0)
    path = tmp_path / "user_script.py"
    path.write_text(SCRIPT)
    yield path
    rt.reset()


def test_profile_writes_three_outputs_mapped_to_user_lines(script: Path, tmp_path: Path) -> None:
    out = tmp_path / "prof"
    with profile(out, stack=True) as prof:
        runpy.run_path(str(script), init_globals={"STEP": prof.step})
    assert not hooks.work_listeners and not hooks.wait_listeners  # detached on exit

    csv_files = list(out.glob("op_summary_*.csv"))
    assert len(csv_files) == 1
    with open(csv_files[0], newline="") as f:
        rows = list(csv.reader(f))
    assert tuple(rows[0]) == op_summary_columns()
    # Rows in device time order: the side stream's Add starts while MatMuls queue on stream 0.
    assert [r[5] for r in rows[1:]] == ["MatMul", "Add", "MatMul", "MatMul", "Cast", "Cast"]
    assert [r[3] for r in rows[1:]] == ["0", "1", "0", "0", "0", "0"]

    lines = json.loads((out / "lines.json").read_text())
    assert lines["trace"] == str((out / "trace.json").resolve())
    assert lines["device"] == get_runtime().profile.soc_name
    by_line = {ln["line"]: ln for ln in lines["lines"]}
    assert set(by_line) == {5, 10, 13, 15}
    assert all(ln["file"] == str(script) for ln in lines["lines"])
    assert (by_line[5]["op_count"], by_line[5]["total_us"], by_line[5]["bound"]) == (
        3,
        30.0,
        "cube",
    )
    assert lines["lines"][0]["line"] in (5, 10)  # 30 µs each: the heaviest lines come first

    trace = load(out / "trace.json")
    sources = sorted(s.args["Source"] for s in trace.slices if s.name == "MatMul")
    assert sources == [f"{script}:5"] * 3
    # The full stack names the loop line that called layer().
    mm = next(s for s in trace.slices if s.name == "MatMul")
    assert mm.args["Call stack"].split(";\n")[:2] == [
        f"{script}(5): layer",
        f"{script}(9): <module>",
    ]
    # The wait on stream 0 for the side stream's event is one flow, side -> default.
    assert [(f.source.tid, f.target.tid) for f in trace.flows] == [(1, 0)]
    assert trace.flows[0].source.args["Source"] == f"{script}:11"
    wait = next(s for s in trace.slices if s.name == "EVENT_WAIT")
    assert wait.args["Source"] == f"{script}:12"
    # Steps: the last Cast ran in step 1, everything else in step 0.
    assert [r.step for r in prof.records] == [0, 0, 0, 0, 0, 1]
    assert {s.name for s in trace.slices} >= {"Step 0", "Step 1"}


def test_summary_without_output_dir(script: Path) -> None:
    with profile() as prof:
        runpy.run_path(str(script), init_globals={"STEP": prof.step})
    assert prof.files == {}
    assert prof.summary["op_count"] == 6
    assert prof.summary["trace"] is None
    assert prof.records[0].stack is None  # stacks are opt-in


def test_output_written_even_when_the_block_raises(script: Path, tmp_path: Path) -> None:
    out = tmp_path / "p"
    with pytest.raises(ZeroDivisionError), profile(out):
        runpy.run_path(str(script), init_globals={"STEP": lambda: 1 / 0})
    assert json.loads((out / "lines.json").read_text())["op_count"] == 5


def test_output_dir_that_is_a_file_is_refused_up_front(tmp_path: Path) -> None:
    f = tmp_path / "file"
    f.write_text("")
    with pytest.raises(NotADirectoryError, match="not a directory"):
        profile(f).start()
    assert not hooks.work_listeners


def test_profile_is_reachable_as_npu_runtime_profile(script: Path, tmp_path: Path) -> None:
    import npu_runtime

    with npu_runtime.profile(tmp_path / "p") as prof:
        runpy.run_path(str(script), init_globals={"STEP": prof.step})
    assert isinstance(prof, npu_runtime.Profiler)
    assert (tmp_path / "p" / "lines.json").exists()


def test_summary_is_live_while_collecting(script: Path) -> None:
    from npu_runtime.core import launch

    with profile() as prof:
        launch.submit(0, name="Add", op_type="Add", cost=launch.Cost(2.0, "vector"))
        assert prof.summary["op_count"] == 1
        launch.submit(0, name="Add", op_type="Add", cost=launch.Cost(2.0, "vector"))
        assert prof.summary["op_count"] == 2
    launch.submit(0, name="Add", op_type="Add", cost=launch.Cost(2.0, "vector"))
    assert prof.summary["op_count"] == 2  # stopped: later work is not profiled


def test_two_devices_are_two_processes_and_csv_rows_per_device(
    script: Path, tmp_path: Path
) -> None:
    from npu_runtime.core import launch

    rt = get_runtime()
    out = tmp_path / "multi"
    with profile(out):
        launch.submit(0, name="MatMul", op_type="MatMul", cost=launch.Cost(4.0, "cube"))
        rt.set_device(1)
        launch.submit(0, name="Add", op_type="Add", cost=launch.Cost(2.0, "vector"))
    trace = load(out / "trace.json")
    events = json.loads((out / "trace.json").read_text())
    labels = {e["pid"]: e["args"]["labels"] for e in events if e["name"] == "process_labels"}
    assert sorted(labels.values()) == ["NPU 0", "NPU 1"]
    by_name = {s.name: labels[s.pid] for s in trace.slices}
    assert by_name == {"MatMul": "NPU 0", "Add": "NPU 1"}
    (csv_file,) = out.glob("op_summary_*.csv")
    with open(csv_file, newline="") as f:
        rows = list(csv.DictReader(f))
    assert [(r["Device_id"], r["OP Type"], r["Task Wait Time(us)"]) for r in rows] == [
        ("0", "MatMul", "0"),
        ("1", "Add", "0"),
    ]


def test_relative_output_dir_survives_a_chdir(
    script: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "elsewhere").mkdir()
    with profile("rel") as prof:
        runpy.run_path(str(script), init_globals={"STEP": prof.step})
        os.chdir(tmp_path / "elsewhere")
    assert (tmp_path / "rel" / "lines.json").exists()
    assert not (tmp_path / "elsewhere" / "rel").exists()
