"""`ascend-lens check` on a generated MindSpore model zoo, against Ruff on the same tree.

For each size (default 500, 1,000 and 2,000 modules of 150-170 lines, see gen_zoo.py) the
same run times, as subprocesses, each with its peak memory:

- `ruff check --select ALL --no-cache` (the baseline), and `ast.parse` of every file in one
  process (what any Python checker pays at least);
- `ascend-lens check` cold (no cache), warm (cache, nothing changed), after a one-line edit
  inside a function body (the module's summary is unchanged: that file is checked), and
  after an edit that changes a module's summary (a function added to a module near the
  end of the import chains: the project-wide resolution is redone).

Cost per module at each size shows whether the run is linear. Results go to
bench_check_repo.md beside this file (the "## History" part of that file is kept).

Commands run as an installed checker runs: with its compiled bytecode (`.pyc`), which
pip writes when it installs a package. An environment with `PYTHONDONTWRITEBYTECODE` set
(as some CI and sandbox images are) makes every run compile the checker's modules from
source, about 0.2 s of CPU per run at the time of writing: the variable is removed for
the commands measured, and a warm run and a one-line edit are also measured without the
checker's bytecode (the "no .pyc" figures: the standard library's is there, the
checker's is not, and none is written), to show what such an environment costs.
Run: .venv/bin/python benchmarks/bench_check_repo.py [--sizes 500,1000,2000] [--jobs N]
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from gen_zoo import generate  # noqa: E402

VENV_BIN = Path(sys.executable).parent
#: the environment of the commands measured: bytecode written and used, as installed
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
#: ... and without the checker's bytecode (set up by `no_pyc_env`)
NO_PYC: dict[str, str] = {}


def no_pyc_env(work: Path) -> dict[str, str]:
    """An environment where the checker's modules are compiled from source at each run
    while the standard library's bytecode is used (as with `PYTHONDONTWRITEBYTECODE` and
    a checkout never imported with bytecode on): bytecode is looked up in a folder of its
    own (`PYTHONPYCACHEPREFIX`), filled by importing everything a run imports and then
    emptied of the checker's (this repository's) files; nothing is written there later."""
    prefix = work / "pycache"
    imports = "import ascend_lens.cli, npu_lsp.cli, npu_lsp.workspace, npu_lsp.warm"
    subprocess.run(
        [sys.executable, "-c", imports], env={**ENV, "PYTHONPYCACHEPREFIX": str(prefix)}, check=True
    )
    repo = Path(__file__).resolve().parent.parent
    shutil.rmtree(prefix / repo.relative_to(repo.anchor), ignore_errors=True)
    return {**ENV, "PYTHONPYCACHEPREFIX": str(prefix), "PYTHONDONTWRITEBYTECODE": "1"}


MEASURE = """
import resource, subprocess, sys, time
t = time.perf_counter()
p = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
dt = time.perf_counter() - t
ru = resource.getrusage(resource.RUSAGE_CHILDREN)
print(dt, ru.ru_maxrss, p.returncode, ru.ru_utime + ru.ru_stime)
sys.stderr.write(p.stderr)
"""
PARSE_ALL = """
import ast, pathlib, sys
for f in sorted(pathlib.Path(sys.argv[1]).rglob("*.py")):
    try:
        ast.parse(f.read_bytes())
    except (SyntaxError, ValueError):
        pass  # a real project may hold files that do not parse: still count the work
"""


def measure(
    cmd: list[str], cwd: Path, env: dict[str, str] | None = None
) -> tuple[float, int, str, float]:
    """(seconds, peak RSS in MB of the command and its children, stderr, CPU seconds of
    the command and its children: less disturbed than wall time on a loaded machine)."""
    out = subprocess.run(
        [sys.executable, "-c", MEASURE, *cmd],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
        env=ENV if env is None else env,
    )
    seconds, rss_kb, _code, cpu = out.stdout.split()
    return float(seconds), int(rss_kb) // 1024, out.stderr, float(cpu)


def lens(target: str, *args: str) -> list[str]:
    return [str(VENV_BIN / "ascend-lens"), "check", "--no-config", "--timings", *args, target]


def timings(stderr: str) -> dict[str, object]:
    for line in reversed(stderr.strip().splitlines()):
        if line.startswith("{"):
            return json.loads(line)  # type: ignore[no-any-return]
    return {}


def bench_size(modules: int, jobs: list[str], work: Path, repeats: int) -> dict[str, object]:
    root = work / f"zoo{modules}"
    files = generate(root, modules, seed=modules)
    row = bench_tree(root, "zoo", files, jobs, repeats)
    row["modules"] = modules
    shutil.rmtree(root)
    return row


def bench_tree(
    root: Path, target: str, files: list[Path], jobs: list[str], repeats: int
) -> dict[str, object]:
    """Every measurement on the Python files under `root/target` (edited in place)."""
    lines = sum(f.read_text(encoding="utf-8", errors="replace").count("\n") for f in files)
    row: dict[str, object] = {"modules": len(files), "files": len(files), "lines": lines}
    ruff = [
        str(VENV_BIN / "ruff"),
        "check",
        "--select",
        "ALL",
        "--no-cache",
        "--exit-zero",
        "-q",
        target,
    ]
    # alternately, best of `repeats`: the run least disturbed by other jobs on the machine
    ruffs, parses, colds = [], [], []
    for _ in range(repeats):
        ruffs.append(measure(ruff, root))
        parses.append(measure([sys.executable, "-c", PARSE_ALL, target], root))
        colds.append(measure(lens(target, "--no-cache", *jobs), root))
    row["ruff"] = min(ruffs)[:2]
    row["parse"] = min(parses)[:2]
    cold = min(colds)
    row["cold"] = cold[:2]
    row["cold_all"] = [round(c[0], 2) for c in colds]
    row["ruff_all"] = [round(r[0], 2) for r in ruffs]
    row["cold_phases"] = timings(cold[2]).get("phases", {})
    row["cold_cpu"] = cold[3]
    row["ruff_cpu"] = min(ruffs)[3]
    row["parse_cpu"] = min(parses)[3]
    shutil.rmtree(root / ".ascend-lens_cache", ignore_errors=True)
    measure(lens(target, *jobs), root)  # fills the cache
    warms = [measure(lens(target, *jobs), root) for _ in range(repeats)]
    warm = min(warms)
    row["warm"] = warm[:2]
    row["warm_cpu"] = warm[3]
    row["warm_all"] = [round(w[0], 2) for w in warms]
    row["warm_inner"] = timings(warm[2]).get("seconds")
    no_pyc = measure(lens(target, *jobs), root, NO_PYC)
    row["warm_no_pyc"] = (no_pyc[0], no_pyc[3])
    # each kind of edit `repeats` times, the best kept (the machine is shared)
    edits: dict[str, list[tuple[float, int, str, float]]] = {"body": [], "summary": [], "graph": []}
    candidates = sorted(files)[len(files) // 2 :]
    last = sorted(files)[-1]
    for k in range(repeats):
        _edit_keeping_summary(candidates)
        edits["body"].append(measure(lens(target, *jobs), root))
        # a function nothing calls: the summary changes, the call graph does not
        _append(last, f"\n\ndef added{k}():\n    return 1\n")
        edits["summary"].append(measure(lens(target, *jobs), root))
        # a new jitted function calling a new helper: the call graph changes
        _append(
            last,
            f"\n\nimport mindspore as ms\n\n\n@ms.jit\ndef added_jit{k}(x):\n"
            f"    return added_helper{k}(x)\n\n\ndef added_helper{k}(x):\n    return x\n",
        )
        edits["graph"].append(measure(lens(target, *jobs), root))
    _edit_keeping_summary(candidates)
    no_pyc = measure(lens(target, *jobs), root, NO_PYC)
    row["edit_no_pyc"] = (no_pyc[0], no_pyc[3])
    for kind, runs in edits.items():
        best = min(runs)
        row[f"edit_{kind}"] = best[:2]
        row[f"edit_{kind}_cpu"] = best[3]
        row[f"edit_{kind}_all"] = [round(r[0], 2) for r in runs]
        row[f"edit_{kind}_stats"] = {
            k: timings(best[2]).get(k) for k in ("parsed", "checked", "reused", "resolved")
        }
    return row


def _append(path: Path, text: str) -> None:
    path.write_text(path.read_text(encoding="utf-8") + text, encoding="utf-8")


def _edit_keeping_summary(candidates: list[Path]) -> None:
    """A one-line edit that keeps the module's summary: the generated zoo's `y = x * k`
    becomes `y = x * k * 1`; in another tree, text is added to a comment line."""
    for f in candidates:
        text = f.read_text(encoding="utf-8")
        if "    y = x * k\n" in text:  # once per file: the next edit takes the next file
            f.write_text(
                text.replace("    y = x * k\n", "    y = x * k * 1\n", 1), encoding="utf-8"
            )
            return
        lines = text.split("\n")
        for n, line in enumerate(lines):
            if line.lstrip().startswith("#"):
                lines[n] = line + " (edited)"
                f.write_text("\n".join(lines), encoding="utf-8")
                return
    raise SystemExit("no line to edit")


def _history(out: Path) -> str:
    old = out.read_text(encoding="utf-8") if out.exists() else ""
    at = old.find("\n## History")
    return old[at:] if at >= 0 else ""


def report(rows: list[dict[str, object]], args: argparse.Namespace, load: str) -> str:
    def s(pair: object) -> str:
        return f"{pair[0]:.2f} s" if isinstance(pair, (list, tuple)) else "-"  # type: ignore[index]

    def mb(pair: object) -> str:
        return f"{pair[1]} MB" if isinstance(pair, (list, tuple)) else "-"  # type: ignore[index]

    lines = [
        "# bench_check_repo",
        "",
        f"Run {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC on {platform.node()} "
        f"({platform.machine()}, {os.cpu_count()} cores shared, Python {platform.python_version()}).",
        f"Load average before the run (1, 5, 15 min): {load}.",
        f"Command: `.venv/bin/python benchmarks/bench_check_repo.py --sizes {args.sizes} --repeats {args.repeats}"
        + (f" --jobs {args.jobs}" if args.jobs else "")
        + "".join(f" --tree {t}" for t in args.tree)
        + "`",
        "",
        "Wall-clock seconds of each command as a subprocess (peak memory of it and its workers);",
        "Ruff, `ast.parse` and the cold check are run alternately, best of the repeats each.",
        "",
        "| modules | lines | ruff --select ALL | ast.parse all | check cold | cold / ruff | warm | edit in a body | edit changing a summary | edit changing the call graph |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        ratio = r["cold"][0] / r["ruff"][0]  # type: ignore[index]
        label = r.get("name") or f"{r['modules']:,}"
        lines.append(
            f"| {label} | {r['lines']:,} | {s(r['ruff'])} ({mb(r['ruff'])}) | {s(r['parse'])} "
            f"| {s(r['cold'])} ({mb(r['cold'])}) | **{ratio:.1f}x** | {s(r['warm'])} ({mb(r['warm'])}) "
            f"| {s(r['edit_body'])} | {s(r['edit_summary'])} | {s(r['edit_graph'])} |"
        )
    lines += [
        "",
        "CPU seconds (user + system, the command and its workers) of the same runs: on a",
        "shared machine less disturbed than wall time.",
        "",
        "| modules | ruff | ast.parse all | check cold | cold / ruff | warm | edit in a body | edit changing a summary | edit changing the call graph |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        label = r.get("name") or f"{r['modules']:,}"
        cpu_ratio = r["cold_cpu"] / max(r["ruff_cpu"], 1e-9)  # type: ignore[operator]
        lines.append(
            f"| {label} | {r['ruff_cpu']:.2f} | {r['parse_cpu']:.2f} | {r['cold_cpu']:.2f} "
            f"| {cpu_ratio:.1f}x | {r['warm_cpu']:.2f} | {r['edit_body_cpu']:.2f} | {r['edit_summary_cpu']:.2f} "
            f"| {r['edit_graph_cpu']:.2f} |"
        )
    lines += [
        "",
        "Cost per module (linearity):",
        "",
        "| modules | cold ms/module | ruff ms/module | cold vs the smallest size |",
        "|---|---|---|---|",
    ]
    zoo = [r for r in rows if "name" not in r] or rows
    base = zoo[0]["cold"][0] / zoo[0]["modules"]  # type: ignore[index,operator]
    for r in zoo:
        per = r["cold"][0] / r["modules"]  # type: ignore[index,operator]
        rp = r["ruff"][0] / r["modules"]  # type: ignore[index,operator]
        lines.append(
            f"| {r['modules']:,} | {per * 1000:.1f} | {rp * 1000:.1f} | {per / base:.2f}x |"
        )
    lines += [
        "",
        "Where a cold run's time goes (seconds, from `--timings`), and what the edits re-did:",
        "",
    ]
    for r in rows:
        phases = ", ".join(f"{k} {v:.2f}" for k, v in r["cold_phases"].items())  # type: ignore[attr-defined]
        label = r.get("name") or f"{r['modules']:,} modules"
        lines.append(
            f"- {label} ({r['files']:,} files): every cold run {r['cold_all']} s, every ruff run "
            f"{r['ruff_all']} s; phases of the best cold run: {phases}; warm runs {r['warm_all']} s, "
            f"inside the process {r['warm_inner']:.2f} s (the rest is interpreter start and imports); "
            f"without .pyc: warm {r['warm_no_pyc'][0]:.2f} s ({r['warm_no_pyc'][1]:.2f} s CPU), "
            f"an edit in a body {r['edit_no_pyc'][0]:.2f} s ({r['edit_no_pyc'][1]:.2f} s CPU); "
            f"edits (every run, s; what the best did): "
            f"in a body {r['edit_body_all']} {r['edit_body_stats']}; changing a summary "
            f"{r['edit_summary_all']} {r['edit_summary_stats']}; changing the call graph "
            f"{r['edit_graph_all']} {r['edit_graph_stats']}"
        )
    return "\n".join(lines) + "\n"


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes", default="500,1000,2000")
    p.add_argument("--repeats", type=int, default=3, help="cold runs (and Ruff runs) per size")
    p.add_argument("--jobs", type=int, default=0, help="--jobs for check (default: all cores)")
    p.add_argument(
        "--tree",
        type=Path,
        action="append",
        default=[],
        help="also measure a real project (copied first), e.g. a model zoo's checkout",
    )
    p.add_argument("--out", type=Path, default=Path(__file__).with_name("bench_check_repo.md"))
    args = p.parse_args()
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    t0 = time.perf_counter()
    jobs = ["--jobs", str(args.jobs)] if args.jobs else []
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench_check_repo.") as tmp:
        NO_PYC.update(no_pyc_env(Path(tmp)))
        for n in (int(x) for x in args.sizes.split(",") if x):
            t = time.perf_counter()
            rows.append(bench_size(n, jobs, Path(tmp), args.repeats))
            print(f"{n} modules done in {time.perf_counter() - t:.0f} s", file=sys.stderr)
        for src in args.tree:
            # a copy: the edits must not touch the original
            copy = Path(tmp) / "trees" / src.name
            shutil.copytree(src, copy, ignore=shutil.ignore_patterns(".git", ".ascend-lens_cache"))
            py = sorted(f for f in copy.rglob("*.py") if f.is_file())
            row = bench_tree(copy.parent, src.name, py, jobs, args.repeats)
            row["name"] = src.name
            rows.append(row)
    after = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    text = report(rows, args, f"{load}; after it ({time.perf_counter() - t0:.0f} s later): {after}")
    args.out.write_text(text + _history(args.out), encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
