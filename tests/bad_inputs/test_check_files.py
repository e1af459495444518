"""`ascend-lens check` on files a linter should not choke on: special files, huge files,
unreadable folders, notebooks. Each ends quickly with one line, and the right exit status."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
from bad_input_support import run, without_root_override

CUDA = "import torch\nx = torch.ones(2).cuda()\n"


def test_a_fifo_in_a_folder_is_skipped_with_one_message(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text(CUDA)
    os.mkfifo(tmp_path / "pipe.py")
    r = run("check", str(tmp_path), timeout=30)
    assert r.returncode == 1
    assert f"{tmp_path}/a.py:2:19: NPU201" in r.stdout
    assert (
        r.stderr == f"ascend-lens check: skipped {tmp_path}/pipe.py: a FIFO, not a regular file\n"
    )


@pytest.mark.parametrize("special", ["/dev/zero", "fifo"])
def test_a_named_special_file_is_refused_quickly(tmp_path: Path, special: str) -> None:
    if special == "fifo":
        special = str(tmp_path / "named.py")
        os.mkfifo(special)
    started = time.monotonic()
    r = run("check", special, timeout=30)
    assert time.monotonic() - started < 10
    kind = "a character device" if special == "/dev/zero" else "a FIFO"
    assert (r.returncode, r.stdout) == (2, "")
    assert r.stderr == f"ascend-lens check: error: {special}: {kind}, not a regular file\n"


def test_files_over_the_size_limit_are_skipped_and_reported(tmp_path: Path) -> None:
    big = tmp_path / "generated.py"
    big.write_text("x = 1\n" * 350_000)  # 2.1 MB: over the 2 MB default
    (tmp_path / "a.py").write_text(CUDA)
    started = time.monotonic()
    r = run("check", str(tmp_path), timeout=30)
    assert time.monotonic() - started < 10
    assert r.returncode == 1 and "NPU201" in r.stdout
    assert r.stderr == (
        f"ascend-lens check: skipped {big}: 2,100,000 bytes, larger than the max-file-size "
        "limit of 2,000,000 bytes\n"
    )
    # The limit is configurable: lowered, it skips a.py too; a named file is reported alike.
    (tmp_path / "pyproject.toml").write_text("[tool.ascend-lens]\nmax-file-size = 20\n")
    r = run("check", str(tmp_path / "a.py"), timeout=30)
    assert (r.returncode, r.stdout) == (0, "All checks passed!\n")
    assert r.stderr == (
        f"ascend-lens check: skipped {tmp_path / 'a.py'}: 38 bytes, larger than the "
        "max-file-size limit of 20 bytes\n"
    )
    (tmp_path / "pyproject.toml").write_text("[tool.ascend-lens]\nmax-file-size = 40\n")
    r = run("check", str(tmp_path / "a.py"), timeout=30)
    assert r.stderr == "" and r.returncode == 1


def test_a_bad_size_limit_is_a_configuration_warning(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.ascend-lens]\nmax-file-size = "big"\n')
    (tmp_path / "a.py").write_text("x = 1\n")
    r = run("check", str(tmp_path), timeout=30)
    assert r.returncode == 0
    assert "`max-file-size` must be a number of bytes (0 for no limit); ignored" in r.stderr


def test_unreadable_folders_exit_2_or_are_reported(tmp_path: Path) -> None:
    preexec = without_root_override()
    (tmp_path / "ok").mkdir()
    (tmp_path / "ok" / "a.py").write_text("x = 1\n")
    locked = tmp_path / "locked"
    locked.mkdir()
    (locked / "b.py").write_text(CUDA)
    secret = tmp_path / "ok" / "secret.py"
    secret.write_text(CUDA)
    secret.chmod(0)
    locked.chmod(0)
    try:
        top = run("check", str(locked), preexec_fn=preexec)
        inner = run("check", str(tmp_path / "ok"), "--format", "json", preexec_fn=preexec)
        walked = run("check", str(tmp_path), "--select", "NPU", preexec_fn=preexec)
        inside = run("check", str(locked / "b.py"), preexec_fn=preexec)
        named = run("check", str(secret), preexec_fn=preexec)
    finally:
        locked.chmod(0o755)
        secret.chmod(0o644)
    denied = "Permission denied"
    assert (top.returncode, top.stdout) == (2, "")
    assert top.stderr == f"ascend-lens check: error: {locked}: cannot read folder: {denied}\n"
    # In a folder, an unreadable file is a finding (AL002), an unreadable subfolder is skipped.
    assert inner.returncode == 1
    assert [(f["path"], f["code"]) for f in json.loads(inner.stdout)] == [(str(secret), "AL002")]
    assert f"cannot read file: {denied}" in inner.stdout
    assert walked.returncode == 1 and "AL002" in walked.stdout and "NPU201" not in walked.stdout
    assert walked.stderr == f"ascend-lens check: skipped {locked}: cannot read folder: {denied}\n"
    # A named file that cannot be read is an I/O error: one line, status 2.
    for r, path in ((inside, locked / "b.py"), (named, secret)):
        assert (r.returncode, r.stdout) == (2, "")
        assert r.stderr == f"ascend-lens check: error: {path}: {denied}\n"


def _notebook(path: Path, cells: list[tuple[str, str]]) -> None:
    path.write_text(
        json.dumps(
            {
                "cells": [
                    {"cell_type": kind, "source": src.splitlines(keepends=True), "metadata": {}}
                    | ({"outputs": [], "execution_count": None} if kind == "code" else {})
                    for kind, src in cells
                ],
                "metadata": {},
                "nbformat": 4,
                "nbformat_minor": 5,
            }
        )
    )


def test_notebooks_are_checked_cell_by_cell(tmp_path: Path) -> None:
    nb = tmp_path / "nb.ipynb"
    _notebook(
        nb,
        [
            ("markdown", "# CUDA code: x.cuda() here is prose"),
            ("code", "%matplotlib inline\nimport torch"),
            ("code", "x = torch.ones(2)\ny = x.cuda()  # moved"),
        ],
    )
    r = run("check", str(nb), "--format", "json")
    assert r.returncode == 1, r.stderr
    (found,) = json.loads(r.stdout)
    assert (found["path"], found["line"], found["column"], found["code"]) == (
        f"{nb}:cell 3",
        2,
        7,
        "NPU201",
    )
    # Found when walking a folder too; a clean notebook passes; a broken one is one finding.
    clean = tmp_path / "clean.ipynb"
    _notebook(clean, [("code", "import torch\nimport torch_npu\nx = torch.ones(2).npu()")])
    assert run("check", str(clean)).stdout == "All checks passed!\n"
    (tmp_path / "broken.ipynb").write_text("{not json")
    r = run("check", str(tmp_path))
    assert f"{nb}:cell 3:2:7: NPU201" in r.stdout
    assert f"{tmp_path / 'broken.ipynb'}:1:1: AL002 not a notebook (invalid JSON" in r.stdout
