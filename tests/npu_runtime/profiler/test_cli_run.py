"""`ascend-lens run --profile DIR` as a user runs it: files, stderr tables, clean stdout."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from rich.console import Console

from npu_runtime.profiler.collector import Collector
from npu_runtime.profiler.progress import RunProgress
from npu_runtime.records import WorkRecord

from .trace_check import load

SCRIPT = textwrap.dedent(
    """\
    import numpy as np
    import acl
    acl.init()
    acl.rt.set_device(0)
    stream, _ = acl.rt.create_stream()
    host = np.arange(1 << 20, dtype=np.float32)
    dev, _ = acl.rt.malloc(host.nbytes, 0)
    acl.rt.memcpy(dev, host.nbytes, acl.util.numpy_to_ptr(host), host.nbytes, 1)
    acl.rt.memset_async(dev, host.nbytes, 0, host.nbytes, stream)
    out = np.ones_like(host)
    acl.rt.memcpy_async(acl.util.numpy_to_ptr(out), out.nbytes, dev, out.nbytes, 2, stream)
    acl.rt.synchronize_stream(stream)
    print("sum", float(out.sum()))
    acl.rt.free(dev)
    acl.rt.destroy_stream(stream)
    acl.rt.reset_device(0)
    acl.finalize()
    """
)


def _run(*args: str, cwd: Path, columns: int = 200) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": str(columns), "PYTHONPATH": ""}
    return subprocess.run(
        [sys.executable, "-m", "ascend_lens", "run", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=lambda: os.umask(0o022),
    )


def test_profile_writes_dir_and_prints_tables_on_stderr(tmp_path: Path) -> None:
    script = tmp_path / "roundtrip.py"
    script.write_text(SCRIPT)
    res = _run("--profile", "out", "--profile-ascend-pt", "--no-summary", str(script), cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert res.stdout == "sum 0.0\n"  # stdout is the script's alone
    assert "Top ops" in res.stderr and "Hot lines" in res.stderr
    assert "MemcpyH2D" in res.stderr and "roundtrip.py:11" in res.stderr

    out = tmp_path / "out"
    assert len(list(out.glob("op_summary_*.csv"))) == 1
    lines = json.loads((out / "lines.json").read_text())
    assert {(ln["line"], ln["top_ops"][0]["op_type"]) for ln in lines["lines"]} == {
        (8, "MemcpyH2D"),
        (9, "Memset"),
        (11, "MemcpyD2H"),
    }
    assert all(ln["file"] == str(script) for ln in lines["lines"])
    assert lines["trace"] == str(out / "trace.json")
    trace = load(out / "trace.json")  # valid with sync and async copies on two streams
    assert sorted(s.name for s in trace.slices) == [
        "MEMCPY_DEVICE_TO_HOST",
        "MEMCPY_HOST_TO_DEVICE",
        "MEMSET",
    ]
    (pt,) = out.glob("*_ascend_pt")
    view = load(pt / "ASCEND_PROFILER_OUTPUT" / "trace_view.json")
    assert len(view.flows) == 3  # one torch_to_npu flow per copy or memset


def test_hot_lines_fit_80_columns_with_short_places_and_whole_figures(tmp_path: Path) -> None:
    deep = tmp_path / "a_rather_long_project_folder_name" / "training_scripts"
    deep.mkdir(parents=True)
    script = deep / "roundtrip.py"
    script.write_text(SCRIPT)
    elsewhere = tmp_path / "elsewhere"  # the script is not under the working directory
    elsewhere.mkdir()
    res = _run("--profile", "out", "--no-summary", str(script), cwd=elsewhere, columns=80)
    assert res.returncode == 0, res.stderr
    tables = res.stderr[res.stderr.index("Top ops") : res.stderr.index("profile written")]
    assert [row for row in tables.splitlines() if len(row) > 80] == []
    table = tables[tables.index("Hot lines") :].splitlines()
    # The folder they share heads the table, its end kept when it does not fit.
    title = table[0].strip()
    assert title.startswith("Hot lines (in …") and f"{deep})".endswith(title[15:]), title
    doc = json.loads((elsewhere / "out" / "lines.json").read_text())
    for ln in doc["lines"]:
        cells = f"roundtrip.py:{ln['line']} │ {ln['op_count']} │ {ln['total_us']:.3f} │"
        assert any(cells in " ".join(row.split()) for row in table), cells


def test_profile_files_are_written_with_one_mode(tmp_path: Path) -> None:
    script = tmp_path / "roundtrip.py"
    script.write_text(SCRIPT)
    res = _run("--profile", "out", "--no-summary", str(script), cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    modes = {f.name: oct(f.stat().st_mode & 0o777) for f in (tmp_path / "out").iterdir()}
    assert "lines.json" in modes and set(modes.values()) == {"0o644"}, modes


def test_bad_profile_options_are_usage_errors(tmp_path: Path) -> None:
    script = tmp_path / "s.py"
    script.write_text("print('ran')\n")
    (tmp_path / "file").write_text("")
    res = _run("--profile", "file", str(script), cwd=tmp_path)
    assert res.returncode == 2 and "not a directory" in res.stderr and res.stdout == ""
    res = _run("--profile-stack", str(script), cwd=tmp_path)
    assert res.returncode == 2 and "--profile-stack needs --profile DIR" in res.stderr
    res = _run("--profile-ascend-pt", str(script), cwd=tmp_path)
    assert res.returncode == 2 and "--profile-ascend-pt needs --profile DIR" in res.stderr


def test_progress_appears_only_on_a_terminal() -> None:
    collector = Collector()
    collector.records.append(
        WorkRecord("op", "Add_1", "Add", 0, 0, 1, start_us=0.0, duration_us=12.5)
    )
    buf = io.StringIO()
    progress = RunProgress(collector, Console(file=buf, force_terminal=True), delay=0.0)
    progress.start()
    assert progress.shown.wait(10)
    progress.stop()
    assert "profiling: 1 device tasks, 12.5 µs simulated" in buf.getvalue()

    quiet = io.StringIO()
    progress = RunProgress(collector, Console(file=quiet, force_terminal=False), delay=0.0)
    progress.start()
    progress.stop()
    assert quiet.getvalue() == "" and not progress.shown.is_set()


ACL_PROF_SCRIPT = textwrap.dedent(
    """\
    import numpy as np
    import acl
    acl.init()
    acl.rt.set_device(0)
    assert acl.prof.init("prof_out") == 0
    config = acl.prof.create_config([0], 1, 0, 0x0002 | 0x0004)
    assert config != 0
    assert acl.prof.start(config) == 0
    host = np.zeros(256, dtype=np.float32)
    dev, _ = acl.rt.malloc(host.nbytes, 0)
    acl.rt.memset(dev, host.nbytes, 0, host.nbytes)
    assert acl.prof.stop(config) == 0
    assert acl.prof.destroy_config(config) == 0
    assert acl.prof.finalize() == 0
    print(acl.prof.finalize())
    """
)


def test_acl_prof_from_a_pyacl_script(tmp_path: Path) -> None:
    script = tmp_path / "with_prof.py"
    script.write_text(ACL_PROF_SCRIPT)
    res = _run("--no-summary", str(script), cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert res.stdout == "100043\n"  # finalize twice: ACL_ERROR_PROF_NOT_RUN
    (lines,) = tmp_path.glob("prof_out/PROF_000001_*/mindstudio_profiler_output/lines.json")
    doc = json.loads(lines.read_text())
    assert [(ln["line"], ln["top_ops"][0]["op_type"]) for ln in doc["lines"]] == [(11, "Memset")]
