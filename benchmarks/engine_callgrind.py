"""Instructions of the engine against `ast.parse` on bench_lsp_engine's 5,015-line file (callgrind).

Wall clock on the shared benchmark machine (2 cores, load 5-40) is mostly noise; instruction
counts are not. This runs, under `valgrind --tool=callgrind --toggle-collect=functools_reduce`,
a child that first warms the engine (one `check_source` run: dispatch tables, imports), then
makes two more runs inside one `functools.reduce` call: only instructions executed inside
that C function are counted, so start-up, imports and the warm-up run are left out without
subtracting a second process. The count is halved. The same is done for `ast.parse` of the
same text, and the ratio engine / parse printed (issue 14's bar: at most 2x).

Run: PYTHONPATH=$PWD/server:$PWD/kernel:$PWD .venv/bin/python benchmarks/engine_callgrind.py
         [--what engine|parse|both] [--keep DIR]
`--keep DIR` leaves the callgrind.out files there (for `callgrind_annotate`). Each run takes
about a minute of CPU under valgrind. The child runs with PYTHONHASHSEED=0 (or the one set):
with random string hashing the same code measured 843.5 M and 849.6 M. `--opcodes` instead counts Python opcodes per function
(`sys.settrace` with `f_trace_opcodes`, one warm engine run, no valgrind) and prints the top.
"""

from __future__ import annotations

import argparse
import collections
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from types import FrameType
from typing import Any

HERE = Path(__file__).resolve().parent
RUNS = 2


def _text() -> str:
    sys.path.insert(0, str(HERE))
    from bench_lsp_engine import make_source

    return make_source(5000)


def _child(what: str) -> None:
    """Body of the process valgrind runs: warm up, then RUNS runs inside functools.reduce."""
    import ast
    import functools

    text = _text()
    if what == "engine":
        from npu_lsp.config import Config
        from npu_lsp.engine import check_source
        from npu_lsp.registry import load_all

        load_all()
        cfg = Config()
        check_source(text, "bench.py", cfg)

        def one(_acc: object, _i: int) -> object:
            return check_source(text, "bench.py", cfg)
    else:
        ast.parse(text)

        def one(_acc: object, _i: int) -> object:
            return ast.parse(text)

    functools.reduce(one, range(RUNS), None)


def _callgrind(what: str, keep: Path | None) -> int:
    out_dir = keep or Path(tempfile.mkdtemp(prefix="engine_cg_"))
    out_dir.mkdir(parents=True, exist_ok=True)
    out = out_dir / f"callgrind.out.{what}"
    cmd = [
        "valgrind", "--tool=callgrind", "--toggle-collect=functools_reduce",
        f"--callgrind-out-file={out}", sys.executable, __file__, "--child", what,
    ]
    # string hashing is randomised per process: set and dict orders, and so the work of
    # some scans, differ from run to run (several M instructions); one seed for every run
    env = {**os.environ, "PYTHONHASHSEED": os.environ.get("PYTHONHASHSEED", "0")}
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        sys.stderr.write(proc.stderr[-4000:])
        raise SystemExit(f"valgrind run for {what} failed ({proc.returncode})")
    m = re.search(r"^(?:summary|totals):\s*(\d+)", out.read_text(), re.M)
    if m is None:
        raise SystemExit(f"no instruction total in {out}")
    if keep is None:
        out.unlink()
    return int(m.group(1)) // RUNS


def _opcodes(top: int) -> None:
    """Python opcodes executed per function in one warm engine run (self counts)."""
    from npu_lsp.config import Config
    from npu_lsp.engine import check_source
    from npu_lsp.registry import load_all

    text = _text()
    load_all()
    cfg = Config()
    check_source(text, "bench.py", cfg)
    counts: collections.Counter[str] = collections.Counter()
    calls: collections.Counter[str] = collections.Counter()

    def where(frame: FrameType) -> str:
        code = frame.f_code
        return f"{code.co_filename.rpartition('/server/')[2]}:{code.co_firstlineno}:{code.co_name}"

    def tracer(frame: FrameType, event: str, _arg: Any) -> Any:
        key = where(frame)
        if event == "call":
            calls[key] += 1
            frame.f_trace_opcodes = True
        elif event == "opcode":
            counts[key] += 1
        return tracer

    sys.settrace(tracer)
    try:
        check_source(text, "bench.py", cfg)
    finally:
        sys.settrace(None)
    total = sum(counts.values())
    print(f"opcodes: {total:,}  calls: {sum(calls.values()):,}")
    for key, n in counts.most_common(top):
        print(f"{n:>10,} {100 * n / total:5.1f}% {calls[key]:>8,}  {key}")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--child", choices=("engine", "parse"))
    p.add_argument("--what", choices=("engine", "parse", "both"), default="both")
    p.add_argument("--keep", type=Path)
    p.add_argument("--opcodes", action="store_true")
    p.add_argument("--top", type=int, default=40)
    args = p.parse_args()
    if args.child:
        _child(args.child)
        return 0
    if args.opcodes:
        _opcodes(args.top)
        return 0
    got: dict[str, int] = {}
    for what in ("engine", "parse") if args.what == "both" else (args.what,):
        got[what] = _callgrind(what, args.keep)
        print(f"{what}: {got[what] / 1e6:,.1f} M instructions per run")
    if len(got) == 2:
        print(f"engine / parse: {got['engine'] / got['parse']:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
