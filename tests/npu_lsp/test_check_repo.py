"""`ascend-lens check` on a repository: worker processes, the cache, deep inheritance chains.

Everything goes through the CLI as a subprocess. `--timings` (a benchmark aid) prints one
JSON line on stderr saying what the run did; tests use it to tell a cached run from a
checked one, and compare stdout byte for byte across ways of running.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from npu_lsp.engine import WorkspaceIndex
from npu_lsp.scope import summarize
from npu_lsp.summary import portable

EXE = [sys.executable, "-m", "ascend_lens", "check"]

BASE = """import mindspore as ms
from mindspore import nn

from .util import shift


class Base(nn.Cell):
    def construct(self, x):
        return shift(x)
"""
UTIL = """def shift(x):
    try:
        y = x + 1
    except ValueError:
        y = x
    return y


def plain(x):
    return {1, 2}
"""
MODULE = """from mindspore import nn
from .{base_mod} import {base_cls}
from .util import plain


class Net{i}({base_cls}):
    def construct(self, x):
        s = {{1, {i}}}
        return plain(x)


def unused{i}():
    return [v for v in range({i})]
"""


def run(
    *args: str, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*EXE, *args], capture_output=True, text=True, cwd=cwd, timeout=600, env=env
    )


def timings(proc: subprocess.CompletedProcess[str]) -> dict[str, object]:
    last = proc.stderr.strip().splitlines()[-1]
    return json.loads(last)  # type: ignore[no-any-return]


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    """Keep the cache's signing key inside the test's folder."""
    return {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "xdg")}


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A package of 40 modules whose Cells subclass Cells of other modules, with errors in
    a shared helper (reported at the call sites that compile it), a syntax error and a
    file that is not UTF-8."""
    root = tmp_path / "proj"
    pkg = root / "pkg"
    pkg.mkdir(parents=True)
    (root / "pyproject.toml").write_text("[tool.ascend-lens]\n")
    (pkg / "__init__.py").write_text("")
    (pkg / "base.py").write_text(BASE)
    (pkg / "util.py").write_text(UTIL)
    for i in range(40):
        base_mod, base_cls = ("base", "Base") if i == 0 else (f"m{i - 1:02d}", f"Net{i - 1}")
        (pkg / f"m{i:02d}.py").write_text(MODULE.format(i=i, base_mod=base_mod, base_cls=base_cls))
    (pkg / "broken.py").write_text("def f(:\n    pass\n")
    (pkg / "latin1.py").write_bytes(b"# caf\xe9\nx = 1\n")
    return root


def test_jobs_1_and_2_give_byte_identical_output(repo: Path, env: dict[str, str]) -> None:
    outs = {}
    for jobs in ("1", "2"):
        proc = run("--no-cache", "--jobs", jobs, "--timings", ".", cwd=repo, env=env)
        assert proc.returncode == 1, proc.stderr
        assert timings(proc)["jobs"] == int(jobs)
        outs[jobs] = proc.stdout
    assert outs["1"] == outs["2"]
    text = outs["1"]
    # the helper's error is reported where Cells of other modules compile it
    assert "pkg/util.py:2:5: MS101" in text
    assert "pkg/util.py:10:12: MS109" in text
    assert "pkg/m39.py:8:13: MS109" in text
    assert "pkg/broken.py:1:7: AL001" in text
    assert "pkg/latin1.py:1:1: AL002" in text
    assert "AL003" not in text


def test_every_way_of_handling_summaries_gives_the_same_output(
    repo: Path, env: dict[str, str]
) -> None:
    """Without a cache the summaries are used as made (nothing is pickled or pruned); with
    a cache they are pruned and pickled, and the index holds the pruned copies; with two
    workers, forked for the check, each checks files whose trees and summaries this
    process made (the pruned copies with a cache). Same output."""
    from repo_support import write_mixed_project

    write_mixed_project(repo)
    outs = []
    ways = (
        ("--no-cache", "--jobs", "1"),
        ("--jobs", "1"),
        ("--no-cache", "--jobs", "2"),
        ("--jobs", "2"),
    )
    for args in ways:
        shutil.rmtree(repo / ".ascend-lens_cache", ignore_errors=True)
        proc = run(*args, "--timings", ".", cwd=repo, env=env)
        assert proc.returncode == 1, proc.stderr
        assert timings(proc)["jobs"] == int(args[-1])
        assert timings(proc)["parsed"] == timings(proc)["checked"] > 40
        outs.append(proc.stdout)
    assert outs[0] == outs[1] == outs[2] == outs[3]
    assert "pkg/m39.py:8:13: MS109" in outs[0]


def test_warm_run_answers_from_the_cache_with_the_same_output(
    repo: Path, env: dict[str, str]
) -> None:
    cold = run("--timings", ".", cwd=repo, env=env)
    assert timings(cold)["checked"] == 43 and timings(cold)["reused"] == 0
    ignore = repo / ".ascend-lens_cache" / ".gitignore"
    assert ignore.read_text().splitlines()[-1] == "*"
    warm = run("--timings", ".", cwd=repo, env=env)
    assert warm.stdout == cold.stdout
    assert timings(warm)["reused"] == 45 and timings(warm)["checked"] == 0
    # another format from the same cache
    as_json = json.loads(run("--format", "json", ".", cwd=repo, env=env).stdout)
    assert len(as_json) == sum(line.startswith("pkg/") for line in cold.stdout.splitlines())


def test_an_edit_rechecks_the_file_and_what_depends_on_it(repo: Path, env: dict[str, str]) -> None:
    run(".", cwd=repo, env=env)
    # inside a function body, same lines: the summary is unchanged, only this file is checked
    m10 = repo / "pkg" / "m10.py"
    m10.write_text(m10.read_text().replace("range(10)", "range(11)"))
    proc = run("--timings", ".", cwd=repo, env=env)
    t = timings(proc)
    assert (t["parsed"], t["checked"]) == (1, 1)
    assert proc.stdout == run("--no-cache", ".", cwd=repo, env=env).stdout
    # another one: the summary of the first edit is cached too (not parsed again)
    m11 = repo / "pkg" / "m11.py"
    m11.write_text(m11.read_text().replace("range(11)", "range(12)"))
    t = timings(run("--timings", ".", cwd=repo, env=env))
    assert (t["parsed"], t["checked"], t["summaries_cached"]) == (1, 1, 42)
    # a new function in a module: the project-wide resolution is redone, but only the
    # modules importing it are checked again (every Net module imports util)
    util = repo / "pkg" / "util.py"
    util.write_text(util.read_text() + "\n\ndef extra(x):\n    return x\n")
    proc = run("--timings", ".", cwd=repo, env=env)
    t = timings(proc)
    assert t["checked"] == 42 and t["reused"] == 1  # all but the empty __init__.py
    assert proc.stdout == run("--no-cache", ".", cwd=repo, env=env).stdout
    # the end of the chain: nothing imports it, nothing else is checked
    m39 = repo / "pkg" / "m39.py"
    m39.write_text(m39.read_text() + "\n\ndef more():\n    return 1\n")
    proc = run("--timings", ".", cwd=repo, env=env)
    t = timings(proc)
    assert (t["parsed"], t["checked"]) == (1, 1)
    assert proc.stdout == run("--no-cache", ".", cwd=repo, env=env).stdout


@pytest.mark.parametrize("damage", ["garbage", "truncate", "flip"])
def test_a_corrupt_cache_is_ignored_and_rebuilt(
    repo: Path, env: dict[str, str], damage: str
) -> None:
    first = run(".", cwd=repo, env=env)
    files = [
        p
        for p in (repo / ".ascend-lens_cache").rglob("*")
        if p.is_file() and p.parent.name != ".ascend-lens_cache"
    ]
    assert {p.name for p in files} == {"results", "summaries", "scopes", "blobs"}
    for p in files:
        data = p.read_bytes()
        if damage == "garbage":
            p.write_bytes(b"not a cache" * 10)
        elif damage == "truncate":
            p.write_bytes(data[: len(data) // 2])
        else:
            p.write_bytes(data[:-10] + bytes([data[-10] ^ 0xFF]) + data[-9:])
    again = run("--timings", ".", cwd=repo, env=env)
    assert again.stdout == first.stdout
    assert timings(again)["checked"] == 43  # nothing trusted
    assert timings(run("--timings", ".", cwd=repo, env=env))["reused"] == 45  # rebuilt


def test_a_tampered_summary_is_not_trusted(repo: Path, env: dict[str, str]) -> None:
    """Summaries are read from the `blobs` file only when used, each against its signed
    digest: a changed byte in a summary that is read makes the run start again without
    the cache."""
    run(".", cwd=repo, env=env)
    blobs = next((repo / ".ascend-lens_cache").rglob("blobs"))
    data = bytearray(blobs.read_bytes())
    for at in range(0, len(data), 97):  # a byte in every summary (one only may never be read)
        data[at] ^= 0xFF
    blobs.write_bytes(bytes(data))
    util = repo / "pkg" / "util.py"  # every Net module imports it: their summaries are read
    util.write_text(util.read_text() + "\n\ndef extra(x):\n    return x\n")
    proc = run("--timings", ".", cwd=repo, env=env)
    assert proc.stdout == run("--no-cache", ".", cwd=repo, env=env).stdout
    assert timings(proc)["summaries_cached"] == 0


def test_a_tampered_summary_is_not_trusted_by_forked_workers(
    repo: Path, env: dict[str, str]
) -> None:
    """Edits in 30 function bodies keep every summary and the cached resolution: the other
    modules' summaries are read from the cache only when a check uses them, possibly in a
    worker forked for the check. They are all read (and checked) before the workers are
    forked, so a tampered one makes the run start again without the cache instead of a
    worker failing."""
    run(".", cwd=repo, env=env)
    blobs = next((repo / ".ascend-lens_cache").rglob("blobs"))
    data = bytearray(blobs.read_bytes())
    for at in range(0, len(data), 97):
        data[at] ^= 0xFF
    blobs.write_bytes(bytes(data))
    for i in range(30):
        module = repo / "pkg" / f"m{i:02d}.py"
        module.write_text(module.read_text() + "\n# touched\n")
    proc = run("--timings", "--jobs", "2", ".", cwd=repo, env=env)
    assert proc.returncode == 1, proc.stderr
    assert proc.stdout == run("--no-cache", ".", cwd=repo, env=env).stdout
    assert timings(proc)["summaries_cached"] == 0
    assert timings(proc)["jobs"] == 2


def test_a_notebook_is_checked_against_the_runs_index(repo: Path, env: dict[str, str]) -> None:
    """A notebook's Cell whose base is a Cell of the project: known from the repository
    run's summaries (no second index of the project), the same cold, cached and warm."""
    cell = "from pkg.m05 import Net5\n\n\nclass Mine(Net5):\n    def construct(self, x):\n"
    cell += "        s = {1, 2}\n        return x\n"
    (repo / "nb.ipynb").write_text(
        json.dumps(
            {
                "cells": [
                    {
                        "cell_type": "code",
                        "source": cell.splitlines(keepends=True),
                        "metadata": {},
                        "outputs": [],
                        "execution_count": None,
                    }
                ],
                "metadata": {},
                "nbformat": 4,
                "nbformat_minor": 5,
            }
        )
    )
    outs = [
        run("--no-cache", "--jobs", "2", ".", cwd=repo, env=env).stdout,
        run("--jobs", "1", ".", cwd=repo, env=env).stdout,
        run(".", cwd=repo, env=env).stdout,  # warm: every result from the cache
    ]
    assert outs[0] == outs[1] == outs[2]
    assert "nb.ipynb:cell 1:6:13: MS109" in outs[0]


def _notebook(path: Path, cell: str) -> None:
    code = {"cell_type": "code", "source": cell.splitlines(keepends=True), "metadata": {}}
    code.update(outputs=[], execution_count=None)
    path.write_text(
        json.dumps({"cells": [code], "metadata": {}, "nbformat": 4, "nbformat_minor": 5})
    )


def test_notebook_results_are_cached_until_what_they_import_changes(
    repo: Path, env: dict[str, str]
) -> None:
    """A notebook is checked again when its content changes or a module its imports reach
    (through the import chain) changes its summary; not after an edit anywhere else, nor
    when only its time stamp changes. Every run prints what `--no-cache` prints."""
    cell = "from pkg.m05 import Net5\n\n\nclass Mine(Net5):\n    def construct(self, x):\n"
    cell += "        s = {1, 2}\n        return x\n"
    _notebook(repo / "nb.ipynb", cell)

    def both() -> tuple[str, dict[str, object]]:
        cold = run("--no-cache", "--jobs", "1", ".", cwd=repo, env=env).stdout
        cached = run("--timings", ".", cwd=repo, env=env)
        assert cached.stdout == cold
        return cold, timings(cached)

    out, t = both()
    assert "nb.ipynb:cell 1:6:13: MS109" in out
    assert (t["notebooks"], t["notebooks_reused"]) == (1, 0)
    out, t = both()  # warm
    assert (t["notebooks"], t["notebooks_reused"], t["checked"]) == (0, 1, 0)
    # a summary change in a module the notebook does not reach
    with (repo / "pkg" / "m30.py").open("a") as f:
        f.write("\n\ndef extra30(x):\n    return x\n")
    out, t = both()
    assert (t["notebooks"], t["notebooks_reused"]) == (0, 1) and t["checked"] != 0
    # a body-only edit where it does reach: no summary changed, nothing to redo for it
    (repo / "pkg" / "util.py").write_text(UTIL.replace("y = x + 1", "y = x + 2"))
    out, t = both()
    assert (t["notebooks"], t["notebooks_reused"]) == (0, 1)
    # the notebook's base chain (m05 -> m04 -> ... -> base) loses its Cell: checked again
    (repo / "pkg" / "base.py").write_text(BASE.replace("class Base(nn.Cell):", "class Base:"))
    out, t = both()
    assert (t["notebooks"], t["notebooks_reused"]) == (1, 0)
    assert "nb.ipynb" not in out
    # same content, new time stamp: reused; new content: checked
    os.utime(repo / "nb.ipynb", ns=(1, 1))
    out, t = both()
    assert (t["notebooks"], t["notebooks_reused"]) == (0, 1)
    _notebook(repo / "nb.ipynb", cell.replace("Net5", "Net6"))
    out, t = both()
    assert (t["notebooks"], t["notebooks_reused"]) == (1, 0)


def test_no_cache_writes_nothing(repo: Path, env: dict[str, str]) -> None:
    run("--no-cache", ".", cwd=repo, env=env)
    assert not (repo / ".ascend-lens_cache").exists()


def test_statistics_and_quiet_progress(repo: Path, env: dict[str, str]) -> None:
    proc = run("--statistics", ".", cwd=repo, env=env)
    assert proc.returncode == 1
    rows = [line.split("\t") for line in proc.stdout.splitlines()]
    counts = {code.strip(): int(n) for n, code, *_ in rows}
    assert counts["MS109"] == 41  # one per Net module, one in the helper
    assert counts["AL001"] == 1 and counts["AL002"] == 1
    assert rows[0][1].strip() == "MS109" and rows[0][2]  # most frequent first, with a name
    assert proc.stderr == ""  # not a terminal: no progress


def test_bad_jobs_is_a_usage_error(repo: Path, env: dict[str, str]) -> None:
    proc = run("--jobs", "0", ".", cwd=repo, env=env)
    assert proc.returncode == 2
    assert "--jobs must be at least 1" in proc.stderr


def test_a_thousand_module_chain_of_cells_has_no_false_al003(
    tmp_path: Path, env: dict[str, str]
) -> None:
    root = tmp_path / "chain"
    pkg = root / "deep"
    pkg.mkdir(parents=True)
    (root / "pyproject.toml").write_text("[tool.ascend-lens]\n")
    (pkg / "__init__.py").write_text("from .c0999 import C999\n")
    (pkg / "c0000.py").write_text(
        "from mindspore import nn\n\n\nclass C0(nn.Cell):\n    def construct(self, x):\n        return x\n"
    )
    for i in range(1, 1000):
        (pkg / f"c{i:04d}.py").write_text(
            f"from .c{i - 1:04d} import C{i - 1}\n\n\nclass C{i}(C{i - 1}):\n    pass\n"
        )
    # the end of the chain is a Cell: its construct is compiled, so this is an error
    (pkg / "c0999.py").write_text(
        "from .c0998 import C998\n\n\nclass C999(C998):\n    def construct(self, x):\n        return {1, 2}\n"
    )
    proc = run("--no-cache", "--format", "json", ".", cwd=root, env=env)
    items = json.loads(proc.stdout)
    assert [(Path(i["path"]).name, i["code"]) for i in items] == [("c0999.py", "MS109")]


def test_portable_summaries_resolve_like_the_trees_on_every_fixture() -> None:
    """Every rule fixture and MindSpore-judged case as modules of one workspace: pruned and
    full summaries give the same project-wide graph scopes."""
    import ast

    fixtures = Path(__file__).parent / "fixtures"
    files = sorted(p for p in fixtures.rglob("*.py") if p.name not in ("judge.py", "case_specs.py"))
    assert len(files) > 200
    full, pruned = WorkspaceIndex(fixtures), WorkspaceIndex(fixtures)
    for f in files:
        text = f.read_text(encoding="utf-8")
        try:
            tree = ast.parse(text)
        except SyntaxError:
            continue
        key = full.key(str(f))
        info = summarize(tree, key, full.module_for(str(f)), text)
        full.add_summary(key, info)
        pruned.add_summary(key, portable(info, text))

    def shape(index: WorkspaceIndex) -> list[tuple[object, ...]]:
        return [
            (
                q,
                s.kind,
                s.level,
                [
                    (c.path, c.line, c.column, c.end_line, c.end_column, c.caller)
                    for c in s.call_sites
                ],
            )
            for q, s in index.graph_scopes().items()
        ]

    expected = shape(full)
    assert len(expected) > 300
    assert shape(pruned) == expected


def test_portable_summaries_resolve_like_the_trees(tmp_path: Path) -> None:
    """The index's pruned summaries give the same project-wide graph scopes as the full
    summaries they come from (kinds, levels, call sites in order)."""
    from repo_support import write_mixed_project

    files = write_mixed_project(tmp_path)
    full, pruned = WorkspaceIndex(tmp_path), WorkspaceIndex(tmp_path)
    for f in files:
        text = f.read_text()
        import ast

        key = full.key(str(f))
        info = summarize(ast.parse(text), key, full.module_for(str(f)), text)
        full.add_summary(key, info)
        pruned.add_summary(key, portable(info, text))

    def shape(index: WorkspaceIndex) -> list[tuple[object, ...]]:
        return [
            (
                q,
                s.kind,
                s.level,
                [
                    (c.path, c.line, c.column, c.end_line, c.end_column, c.caller)
                    for c in s.call_sites
                ],
            )
            for q, s in index.graph_scopes().items()
        ]

    assert shape(full) == shape(pruned)
    assert len(shape(full)) > 10


def test_progress_goes_to_a_terminal_only(tmp_path: Path, env: dict[str, str]) -> None:
    """stderr on a terminal: a progress line (phase, files, rate), erased at the end; stdout
    keeps only the report. `--quiet` turns it off."""
    import pty

    root = tmp_path / "many"
    pkg = root / "pkg"
    pkg.mkdir(parents=True)
    (root / "pyproject.toml").write_text("[tool.ascend-lens]\n")
    for i in range(600):
        (pkg / f"m{i:03d}.py").write_text(MODULE.format(i=i, base_mod="m000", base_cls="Net0"))

    def on_terminal(*args: str) -> tuple[str, str]:
        leader, follower = pty.openpty()
        proc = subprocess.Popen(
            [*EXE, "--no-cache", *args, "."],
            cwd=root,
            env={**env, "ASCEND_LENS_PROGRESS_DELAY": "0"},  # however fast the machine
            stdout=subprocess.PIPE,
            stderr=follower,
            text=True,
        )
        os.close(follower)
        chunks = []
        while True:
            try:
                chunk = os.read(leader, 4096)
            except OSError:  # the other side closed
                break
            if not chunk:
                break
            chunks.append(chunk)
        out = proc.stdout.read() if proc.stdout else ""
        proc.wait(timeout=600)
        os.close(leader)
        return out, b"".join(chunks).decode()

    out, err = on_terminal()
    assert "files/s)" in err and ("indexed" in err or "checked" in err)
    assert err.endswith("\r")  # the line is erased
    assert out == "All checks passed!\n"
    out, err = on_terminal("--quiet")
    assert err == ""


def test_the_repository_run_agrees_with_checking_file_by_file(
    repo: Path, env: dict[str, str]
) -> None:
    """`check` (summaries, workers, cache) reports what the engine's file-by-file API does
    with a workspace index of the same folder (the language server's way)."""
    from repo_support import write_mixed_project

    from npu_lsp.config import load_config
    from npu_lsp.engine import check_path
    from npu_lsp.output import render_text

    write_mixed_project(repo)
    (repo / "pkg" / "__init__.py").write_text("")
    for jobs in ("1", "2"):
        proc = run("--no-cache", "--jobs", jobs, ".", cwd=repo, env=env)
        cwd = os.getcwd()
        os.chdir(repo)
        try:
            config = load_config(".")
            index = WorkspaceIndex.from_paths(["."], root=str(repo))
            files = sorted(Path("pkg").glob("*.py"))
            results = [(str(f), d) for f in files for d in check_path(f, config, index)]
        finally:
            os.chdir(cwd)
        assert proc.stdout == render_text(results)


def test_special_files_are_never_opened(repo: Path, env: dict[str, str]) -> None:
    """A FIFO named like a module (opening it would block) and a dangling link are left
    out of a folder walk."""
    os.mkfifo(repo / "pkg" / "pipe.py")
    (repo / "pkg" / "gone.py").symlink_to(repo / "pkg" / "missing.py")
    proc = run("--no-cache", "--format", "json", ".", cwd=repo, env=env)
    assert proc.returncode == 1
    paths = {Path(i["path"]).name for i in json.loads(proc.stdout)}
    assert "pipe.py" not in paths and "gone.py" not in paths
    assert "m39.py" in paths


def test_a_match_statement_calling_into_another_module(tmp_path: Path, env: dict[str, str]) -> None:
    """`case` clauses have no position of their own: summarising the calls a function makes
    into other modules must not read one (it stopped the whole run with a traceback)."""
    root = tmp_path / "proj"
    root.mkdir()
    (root / "pyproject.toml").write_text("[tool.ascend-lens]\n")
    (root / "a.py").write_text("def pick(x, mode):\n    return x\n")
    (root / "b.py").write_text(
        "from a import pick\n\n\n"
        "def route(x, mode):\n"
        "    match mode:\n"
        '        case "a" if pick(x, mode):\n'
        "            return pick(x, mode)\n"
        "        case _:\n"
        "            return x\n"
    )
    for jobs in ("1", "2"):
        proc = run("--no-cache", "--jobs", jobs, ".", cwd=root, env=env)
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout == "All checks passed!\n"
        assert proc.stderr == ""


# ----------------------------------------------------------------------------- the cache's first step
# A run first stamps every file and reads the cache's `results` index (npu_lsp/warm.py); a
# file whose stamp it cannot trust is read and hashed. A stamp is (size, mtime, ctime,
# inode); a file changed less than `cache.RACY_NS` (2 s) before its stamp was taken is
# hashed anyway. Fresh files are within that window: tests that want stamps trusted wait.
RACY_S = 2.1


def _settle() -> None:
    time.sleep(RACY_S)


def _trusted_cache(repo: Path, env: dict[str, str]) -> None:
    """A cache whose stamps are trusted: made, then (the files no longer fresh) recorded
    again by a run that hashed them."""
    run(".", cwd=repo, env=env)
    _settle()
    run(".", cwd=repo, env=env)


def test_a_warm_run_imports_no_rule_engine_or_pool(repo: Path, env: dict[str, str]) -> None:
    """What the cache answers needs neither the rules, nor the engine, nor worker
    processes: the warm run imports none of them (what keeps it near interpreter start)."""
    run(".", cwd=repo, env=env)
    probe = (
        "import sys\n"
        "from npu_lsp.cli import run\n"
        "code = run(sys.argv[1:])\n"
        "heavy = sorted(m for m in sys.modules if m.startswith(('npu_lsp.rules', 'npu_lsp.engine',"
        " 'npu_lsp.workspace', 'npu_lsp.scope', 'multiprocessing', 'numpy', 'pygls',"
        " 'lsprotocol', 'rich')))\n"
        "sys.stderr.write(repr(heavy))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", probe, "."], capture_output=True, text=True, cwd=repo, env=env
    )
    assert proc.stdout == run("--no-cache", ".", cwd=repo, env=env).stdout
    assert proc.stderr.strip().endswith("[]"), proc.stderr
    # a file changed: the full run is imported after all, and gives the same output
    (repo / "pkg" / "m10.py").write_text(
        MODULE.format(i=10, base_mod="m09", base_cls="Net9") + "#\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", probe, "."], capture_output=True, text=True, cwd=repo, env=env
    )
    assert "npu_lsp.workspace" in proc.stderr
    assert proc.stdout == run("--no-cache", ".", cwd=repo, env=env).stdout


def test_a_touched_file_is_hashed_once_then_trusted(repo: Path, env: dict[str, str]) -> None:
    run(".", cwd=repo, env=env)  # the files were just written: their stamps are not trusted
    _settle()
    t = timings(run("--timings", ".", cwd=repo, env=env))  # hashed, found unchanged, recorded
    assert (t["reused"], t["checked"]) == (45, 0)
    t = timings(run("--timings", ".", cwd=repo, env=env))
    assert (t["read"], t["reused"], t["checked"]) == (0, 45, 0)  # every stamp trusted
    util = repo / "pkg" / "util.py"
    os.utime(util, ns=(util.stat().st_atime_ns, util.stat().st_mtime_ns + 10**9))
    _settle()
    first = run("--timings", ".", cwd=repo, env=env)
    t = timings(first)
    # read, found unchanged: answered from the cache, and its new stamp recorded
    assert (t["read"], t["reused"], t["checked"], t["parsed"]) == (1, 45, 0, 0)
    t = timings(run("--timings", ".", cwd=repo, env=env))
    assert (t["read"], t["reused"]) == (0, 45)
    assert first.stdout == run("--no-cache", ".", cwd=repo, env=env).stdout


def test_a_change_keeping_size_and_mtime_is_caught(repo: Path, env: dict[str, str]) -> None:
    """Content rewritten to the same size with the old modification time put back (as
    `touch -r` or `cp -p` can): Ruff's key (mtime and permissions) would not see it; the
    status-change time, which `utime` cannot set, does."""
    _trusted_cache(repo, env)
    assert timings(run("--timings", ".", cwd=repo, env=env))["read"] == 0
    util = repo / "pkg" / "util.py"
    before = util.stat()
    changed = UTIL.replace("return {1, 2}", "return (1, 2)")  # MS109 gone
    assert len(changed) == len(UTIL)
    util.write_text(changed)
    os.utime(util, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = util.stat()
    assert (after.st_size, after.st_mtime_ns, after.st_ino) == (
        before.st_size,
        before.st_mtime_ns,
        before.st_ino,
    )
    proc = run("--timings", ".", cwd=repo, env=env)
    t = timings(proc)
    assert t["read"] == 1 and t["parsed"] == 1 and t["checked"] >= 1
    assert proc.stdout == run("--no-cache", ".", cwd=repo, env=env).stdout
    assert "pkg/util.py:10:12: MS109" not in proc.stdout


def test_a_change_in_the_same_instant_as_the_check_is_caught(
    repo: Path, env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file changed within a clock tick of the moment its stamp was taken can keep its
    stamp (size, mtime, ctime). Emulated: the file is rewritten to the same size, and the
    cache's record of it is given the file's new stamp, as if taken in that same tick.
    The record is then trusted only if the file's last change is older than the run that
    took it by `RACY_NS`; it is not, so the file is hashed and the change is seen."""
    from dataclasses import replace

    from npu_lsp.cache import Cache, stamp_of

    run(".", cwd=repo, env=env)
    util = repo / "pkg" / "util.py"
    changed = UTIL.replace("return {1, 2}", "return (1, 2)")
    assert len(changed) == len(UTIL)
    util.write_text(changed)
    monkeypatch.setenv("XDG_CACHE_HOME", env["XDG_CACHE_HOME"])  # the cache's signing key
    folder = next((repo / ".ascend-lens_cache").glob("*/results")).parent
    cache = Cache(repo, folder.name)
    recorded = cache.load_results()
    key = str(util.resolve())
    recorded.files[key] = replace(recorded.files[key], stamp=stamp_of(util.stat()))
    cache.save(recorded, None)
    assert Cache(repo, folder.name).load_results().files[key].stamp == stamp_of(util.stat())
    proc = run("--timings", ".", cwd=repo, env=env)
    t = timings(proc)
    assert t["parsed"] == 1 and t["reused"] < 45
    assert proc.stdout == run("--no-cache", ".", cwd=repo, env=env).stdout
    assert "pkg/util.py:10:12: MS109" not in proc.stdout


def test_a_settings_change_never_reads_another_settings_results(
    repo: Path, env: dict[str, str]
) -> None:
    run(".", cwd=repo, env=env)
    for args in (["--select", "MS1"], ["--syntax-level", "strict"], ["--ignore", "MS109"]):
        proc = run("--timings", *args, ".", cwd=repo, env=env)
        assert timings(proc)["reused"] == 0, args
        assert proc.stdout == run("--no-cache", *args, ".", cwd=repo, env=env).stdout
        again = run("--timings", *args, ".", cwd=repo, env=env)
        assert timings(again)["reused"] == 45 and again.stdout == proc.stdout
    default = run("--timings", ".", cwd=repo, env=env)
    assert timings(default)["reused"] == 45
    assert default.stdout == run("--no-cache", ".", cwd=repo, env=env).stdout


def test_a_changed_checker_never_reads_the_old_checkers_cache(
    repo: Path, env: dict[str, str], tmp_path: Path
) -> None:
    """The cache's key holds every checker file's size and time: a copy of the checker
    with one rule file changed (as a development checkout or an upgrade is) checks all
    again, and its output is its own."""
    import npu_lsp

    copy = tmp_path / "checker"
    shutil.copytree(
        Path(npu_lsp.__file__).parent,
        copy / "npu_lsp",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    own = {**env, "PYTHONPATH": str(copy)}
    first = run("--timings", ".", cwd=repo, env=own)
    assert timings(first)["checked"] == 43
    assert timings(run("--timings", ".", cwd=repo, env=own))["reused"] == 45
    rule = copy / "npu_lsp" / "rules" / "graphmode" / "try_statement.py"
    rule.write_text(rule.read_text() + "\n# changed\n")
    again = run("--timings", ".", cwd=repo, env=own)
    assert timings(again)["reused"] == 0 and timings(again)["checked"] == 43
    assert again.stdout == first.stdout


def test_the_installed_version_is_the_one_importlib_metadata_reads() -> None:
    from importlib import metadata

    from npu_lsp.cache import installed_version

    assert installed_version() == metadata.version("ascend-lens")


def test_the_families_claim_the_file_types_filetypes_names() -> None:
    """`check` decides which non-Python files to look at without loading the rules
    (`filetypes.CLAIMED`): exactly the matchers the families register."""
    from npu_lsp.engine import LANGUAGES
    from npu_lsp.filetypes import CLAIMED
    from npu_lsp.registry import load_all

    load_all()
    assert [m for m, _ in LANGUAGES] == list(CLAIMED)


def test_a_rank_table_is_found_and_cached_without_the_rules(
    repo: Path, env: dict[str, str]
) -> None:
    (repo / "rank_table_2p.json").write_text('{"status": "completed", "server_list": []}\n')
    (repo / "config.json").write_text("{}\n")  # claimed by no family: not looked at
    cold = run("--timings", ".", cwd=repo, env=env)
    assert "rank_table_2p.json" in cold.stdout and "config.json" not in cold.stdout
    warm = run("--timings", ".", cwd=repo, env=env)
    assert warm.stdout == cold.stdout and timings(warm)["reused"] == 46
    assert cold.stdout == run("--no-cache", ".", cwd=repo, env=env).stdout


PROJECT_PACKAGE_NAMED_LIKE_STDLIB = {
    "code/__init__.py": "",
    "code/densenet.py": """\
import mindspore.nn as nn
import mindspore.ops as ops


class GlobalAvgPooling(nn.Cell):
    def construct(self, x):
        return ops.mean(x, (2, 3))


def conv1x1(cin, cout):
    return nn.Conv2d(cin, cout, 1)


class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.conv = conv1x1(4, 2)
        self.pool = GlobalAvgPooling()

    def construct(self, x):
        return self.pool(self.conv(x))
""",
    "main.py": """\
import mindspore as ms
import mindspore.nn as nn
from code.densenet import GlobalAvgPooling, conv1x1

ms.set_context(mode=ms.GRAPH_MODE)


class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.conv = conv1x1(4, 2)
        self.pool = GlobalAvgPooling()

    def construct(self, x):
        return self.pool(self.conv(x))
""",
}


@pytest.mark.parametrize("target", [".", "main.py", "code/densenet.py"])
def test_a_project_package_named_like_a_standard_module_is_compiled(tmp_path: Path, target: str) -> None:
    """A project's own package named `code` (liumanhua/BrainStatTrans-GAN-MindSpore) is the
    project's code, compiled by MindSpore (it looks at where a module's file is), not the
    standard library's `code` called as Python: measured on MindSpore 2.10, the cells it
    builds compile at STRICT; `check` gave MS131 on every call of them."""
    for name, text in PROJECT_PACKAGE_NAMED_LIKE_STDLIB.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    proc = run("--no-cache", "--no-config", "--syntax-level", "strict", "--format", "json", target, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert json.loads(proc.stdout) == []
