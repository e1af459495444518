"""The terminal tables read the per-line document: what a user sees after --profile."""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest
from rich.console import Console

from npu_runtime.profiler.lines import aggregate
from npu_runtime.profiler.tables import print_summary

from .factory import Clock


def _render(doc: dict, limit: int = 10) -> str:
    buf = io.StringIO()
    print_summary(doc, Console(file=buf, width=200, color_system=None), limit)
    return buf.getvalue()


def test_tables_show_ops_and_lines_relative_to_cwd(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    c = Clock()
    here = os.path.join(tmp_path, "train.py")
    recs = [c.op("MatMul", 30.0, site=(here, 4)) for _ in range(3)]
    recs.append(c.op("Add", 10.0, site=("/elsewhere/lib.py", 9)))
    out = _render(aggregate(recs, device="Ascend910B2"))
    assert "Top ops (Ascend910B2, 100.000 µs simulated)" in out
    # op type, count, total, average, share, bound
    row = next(ln for ln in out.splitlines() if "MatMul " in ln)
    cells = [cell.strip() for cell in row.split("│")[1:-1]]
    assert cells == ["MatMul", "3", "90.000", "30.000", "90.0%", "cube"]
    assert "train.py:4" in out and f"{tmp_path}" not in out  # under cwd: shown relative
    assert "/elsewhere/lib.py:9" in out  # outside cwd: shown absolute
    assert "MatMul×3" in out


def test_limit_and_empty_run() -> None:
    c = Clock()
    recs = [c.op(f"Op{i}", float(i + 1), site=("/w/x.py", i + 1)) for i in range(5)]
    out = _render(aggregate(recs), limit=2)
    assert "Op4" in out and "Op3" in out and "Op2" not in out
    assert _render(aggregate([])) == "profile: no device work was recorded\n"


def test_hot_lines_keep_figures_and_the_end_of_the_place_at_80_columns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    c = Clock()
    script = os.path.join(tmp_path, "examples", "a_rather_long_script_name.py")
    helper = os.path.join(tmp_path, "lib", "data.py")
    recs = [c.op("MemcpyH2D", 80.0, site=(script, 123)), c.op("MatMul", 10.0, site=(helper, 7))]
    buf = io.StringIO()
    print_summary(aggregate(recs, device="Ascend910B2"), Console(file=buf, width=80), 10)
    out = buf.getvalue()
    assert max(map(len, out.splitlines())) <= 80
    rows = [[cell.strip() for cell in ln.split("│")[1:-1]] for ln in out.splitlines()]
    hot = [r for r in rows if r and r[0].endswith((".py:123", ".py:7"))]
    # Every figure whole; a place keeps its end (file name and line), a short one all of it.
    assert hot == [
        ["…her_long_script_name.py:123", "1", "80.000", "88.9%", "memory", "MemcpyH2D×1"],
        ["lib/data.py:7", "1", "10.000", "11.1%", "cube", "MatMul×1"],
    ]
    # Where the terminal is wide enough, nothing is cut.
    assert "examples/a_rather_long_script_name.py:123 │" in _render(aggregate(recs))


def test_hot_lines_in_one_folder_are_named_relative_to_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    c = Clock()
    here = os.path.join(tmp_path, "examples", "train.py")
    out = _render(aggregate([c.op("Add", 1.0, site=(here, 3)), c.op("Mul", 1.0, site=(here, 9))]))
    assert "Hot lines (in examples)" in out
    assert "│ train.py:3 " in out and "│ train.py:9 " in out
