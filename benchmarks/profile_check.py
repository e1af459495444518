"""Where the CPU of one `ascend-lens check` run goes, sampled on CPU time (not wall time).

cProfile measures wall time and slows small functions down unevenly; on the shared
benchmark machine (load 5-40) its shares say more about the load than about the code.
This samples the running stack every millisecond of *CPU time* of the process
(`ITIMER_PROF`, user + system), so a function's share does not depend on how busy the
machine is. The run is made in this process (`cli.run`, so `main`'s `os._exit` does not
end it unrecorded) with `--jobs 1` unless told otherwise: forked workers inherit no
interval timer, so their CPU is not sampled.

Run: PYTHONPATH=server .venv/bin/python benchmarks/profile_check.py [--top N]
         [--under FUNCTION] [--save FILE.pkl] -- CHECK ARGUMENTS...
e.g. `... profile_check.py --under npu_lsp/scope.py:summarize -- --no-cache /tmp/zoo`
prints the inclusive and self shares of the whole run's samples, then, with `--under`,
of the samples whose stack passes through FUNCTION (as `path under server/:name`).
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import io
import pickle
import signal
import sys
import time
from types import FrameType

Stack = tuple[str, ...]


def _where(frame: FrameType) -> str:
    code = frame.f_code
    return f"{code.co_filename.rpartition('/server/')[2]}:{code.co_name}"


def sample(argv: list[str], interval: float = 0.001) -> tuple[float, collections.Counter[Stack]]:
    """(CPU seconds of the run, how many samples saw each stack, outermost first)."""
    from npu_lsp import cli

    stacks: collections.Counter[Stack] = collections.Counter()

    def record(_signum: int, frame: FrameType | None) -> None:
        out: list[str] = []
        while frame is not None:
            out.append(_where(frame))
            frame = frame.f_back
        out.reverse()
        stacks[tuple(out)] += 1

    if "--jobs" not in argv and not any(a.startswith("--jobs=") for a in argv):
        argv = ["--jobs", "1", *argv]
    signal.signal(signal.SIGPROF, record)
    t0 = time.process_time()
    signal.setitimer(signal.ITIMER_PROF, interval, interval)
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            cli.run(argv)
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0, 0)
    return time.process_time() - t0, stacks


def shares(
    stacks: collections.Counter[Stack], under: str | None = None
) -> tuple[int, collections.Counter[str], collections.Counter[str]]:
    """(samples counted, inclusive samples per function, self samples per function), of
    every sample or of those passing through `under` (then counted from it down)."""
    total = 0
    inclusive: collections.Counter[str] = collections.Counter()
    own: collections.Counter[str] = collections.Counter()
    for stack, n in stacks.items():
        if under is not None:
            if under not in stack:
                continue
            stack = stack[stack.index(under) :]
        total += n
        for fn in set(stack):
            inclusive[fn] += n
        own[stack[-1]] += n
    return total, inclusive, own


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--top", type=int, default=40)
    p.add_argument("--under", action="append", default=[], help="break this function down too")
    p.add_argument("--save", help="pickle (cpu seconds, stacks) here")
    p.add_argument("check", nargs=argparse.REMAINDER, help="-- then the `check` arguments")
    args = p.parse_args()
    argv = args.check[1:] if args.check[:1] == ["--"] else args.check
    cpu, stacks = sample(argv)
    if args.save:
        with open(args.save, "wb") as f:
            pickle.dump((cpu, stacks), f)
    everything = sum(stacks.values())
    print(f"{cpu:.2f} s of CPU, {everything} samples")
    for under in [None, *args.under]:
        total, inclusive, own = shares(stacks, under)
        if not total:
            print(f"\nno sample under {under}")
            continue
        head = "the whole run" if under is None else f"{under} ({100 * total / everything:.1f}% of the run)"
        print(f"\n{head}: inclusive, % of the run")
        for fn, n in inclusive.most_common(args.top):
            print(f"{100 * n / everything:6.1f}%  {fn}")
        print(f"\n{head}: self, % of the run")
        for fn, n in own.most_common(args.top // 2):
            print(f"{100 * n / everything:6.1f}%  {fn}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
