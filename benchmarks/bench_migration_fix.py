"""The migration rules' value following and fix-all on CUDA-era training scripts, against
`ast.parse` of the same text.

Scripts come from the seeded generator of the property tests (tests/npu_lsp/migration/
script_gen.py): typical training scripts of 60-120 lines, and one long file made of 60 of
them (a dense web of names, attributes and argparse options that all flow into each other).
Each measurement alternates with `ast.parse` of the same text in the same run, so machine
load hits both alike; the ratios are the numbers to compare. "check" is `check_source` with
every rule enabled (and, for comparison, with the NPU2xx rules off); "fix" is `fixing.fix_source` (check, fix, check again until nothing
applies), which is what `check --fix` and the editor's fix-all run.
Results go to bench_migration_fix.md beside this file.
Run: .venv/bin/python benchmarks/bench_migration_fix.py [--repeats N]
"""

from __future__ import annotations

import argparse
import ast
import datetime
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests" / "npu_lsp" / "migration"))

from script_gen import generate  # noqa: E402

from npu_lsp.config import Config  # noqa: E402
from npu_lsp.engine import check_source  # noqa: E402
from npu_lsp.fixing import fix_source  # noqa: E402
from npu_lsp.registry import load_all  # noqa: E402


def alternate(
    a: Callable[[], object], b: Callable[[], object], repeats: int
) -> tuple[float, float, float, float]:
    """Median wall-clock seconds of `a` and of `b`, timed alternately, and their median
    CPU seconds (this process only: on a shared, loaded machine the steadier ratio)."""
    ta: list[float] = []
    tb: list[float] = []
    ca: list[float] = []
    cb: list[float] = []
    for _ in range(repeats):
        start, cpu = time.perf_counter(), time.process_time()
        a()
        ta.append(time.perf_counter() - start)
        ca.append(time.process_time() - cpu)
        start, cpu = time.perf_counter(), time.process_time()
        b()
        tb.append(time.perf_counter() - start)
        cb.append(time.process_time() - cpu)
    med = statistics.median
    return med(ta), med(tb), med(ca), med(cb)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=9)
    args = parser.parse_args()
    load_all()
    config = Config()
    no_migration = Config(ignore=("NPU",))
    scripts = [generate(seed).text for seed in range(100, 160)]
    long_file = "\n".join(scripts)
    rows = []

    def per_script(fn: Callable[[str], object]) -> Callable[[], object]:
        return lambda: [fn(text) for text in scripts]

    def parse(text: str) -> object:
        return ast.parse(text)

    def check(text: str) -> object:
        return check_source(text, "train.py", config)

    def check_without_migration(text: str) -> object:
        return check_source(text, "train.py", no_migration)

    def fix(text: str) -> object:
        return fix_source(text, "train.py", config)

    lines = sum(t.count("\n") for t in scripts)
    for label, work in (
        ("check without the migration rules", check_without_migration),
        ("check", check),
        ("fix (safe)", fix),
    ):
        timed = alternate(per_script(parse), per_script(work), args.repeats)
        rows.append((f"60 scripts one by one ({lines} lines), {label}", *timed))
        timed = alternate(lambda: parse(long_file), lambda w=work: w(long_file), args.repeats)
        rows.append((f"one {long_file.count(chr(10))}-line file, {label}", *timed))

    load = os.getloadavg()
    now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    out = [
        "# bench_migration_fix",
        "",
        f"Run {now} on {platform.node()} ({platform.machine()}, {os.cpu_count()} cores shared, "
        f"Python {platform.python_version()}).",
        f"Load average before the run (1, 5, 15 min): {load[0]:.1f}, {load[1]:.1f}, {load[2]:.1f}.",
        f"Command: `.venv/bin/python benchmarks/bench_migration_fix.py --repeats {args.repeats}`",
        "",
        "| input | ast.parse (median) | engine (median) | engine / parse | CPU: engine / parse |",
        "|---|---|---|---|---|",
    ]
    for label, parse_s, work_s, parse_cpu, work_cpu in rows:
        out.append(
            f"| {label} | {parse_s * 1000:.1f} ms | {work_s * 1000:.1f} ms | "
            f"**{work_s / parse_s:.2f}x** | {work_cpu / parse_cpu:.2f}x |"
        )
    out += [
        "",
        "Fix-all checks the text at least twice (once to find the fixes, once to confirm",
        "nothing is left), so it costs about two checks plus the edits.",
    ]
    text = "\n".join(out) + "\n"
    (HERE / "bench_migration_fix.md").write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
