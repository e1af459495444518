#!/usr/bin/env python3
"""Generate programs for a range of seeds and judge them with the real MindSpore 2.10 in batches
(never imported by tests, never run in CI).

Usage: judge_batch.py [--python PY] [--out DIR] SEEDS...   (SEEDS: `100-199` or single numbers)

Writes `DIR/cases/seed_N.py` and merges verdicts into `DIR/labels.json` (DIR defaults to
tests/npu_lsp/fixtures/difftest, which CI scores). The verdicts are judge.py's (fixtures/ms210): PyNative (`MS_JIT=0`), GRAPH_MODE at the
default level (lax) and with `MS_DEV_JIT_SYNTAX_LEVEL=0` (strict), with the same label fields.
Unlike judge.py, one MindSpore process per level runs the whole batch (each case by
`runpy.run_path` in its own namespace, kept alive so no object id is reused): importing
MindSpore once instead of three times a case makes batches of hundreds practical. A case that
kills its process is recorded as a crash and the batch goes on in a new process.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "fixtures" / "ms210"))

from generator import generate  # noqa: E402
from judge import DEFAULT_PY, error_line  # noqa: E402

STORE = HERE.parent / "fixtures" / "difftest"
PER_CASE_TIMEOUT = 120
LEVELS = {"pynative": {"MS_JIT": "0"}, "lax": {}, "strict": {"MS_DEV_JIT_SYNTAX_LEVEL": "0"}}

# Runs the cases named in argv[2:] one after another, appending one JSON line per case to argv[1].
_RUNNER_TEMPLATE = r"""
import contextlib, io, json, runpy, signal, sys, traceback
@SETUP@out_path, cases = sys.argv[1], sys.argv[2:]
keep = []
def alarm(signum, frame):
    raise TimeoutError("case timed out")
signal.signal(signal.SIGALRM, alarm)
for case in cases:
@BEFORE_CASE@    res = {"verdict": "accept"}
    buf = io.StringIO()
    signal.alarm(@TIMEOUT@)
    try:
        with contextlib.redirect_stdout(buf):
            keep.append(runpy.run_path(case, run_name="__main__"))
    except BaseException as e:  # the case's own failure is the measurement
        frames = [f.lineno for f in traceback.extract_tb(e.__traceback__) if f.filename.endswith(case.split("/")[-1])]
        res = {"verdict": "timeout" if isinstance(e, TimeoutError) else "reject", "error_type": type(e).__name__,
               "message": str(e), "call_line": frames[-1] if frames else None}
    signal.alarm(0)
    res["stdout"] = buf.getvalue().strip()[-300:]
    with open(out_path, "a") as fh:
        fh.write(json.dumps({case: res}) + "\n")
"""


def runner(timeout: int, *, setup: str = "", before_case: str = "") -> str:
    """The batch script `run_level` starts. `setup` (lines, at module level) runs once after
    the imports; `before_case` (lines indented by four spaces) runs before every case."""
    return (
        _RUNNER_TEMPLATE.replace("@SETUP@", setup)
        .replace("@BEFORE_CASE@", before_case)
        .replace("@TIMEOUT@", str(timeout))
    )


#: MindSpore context options a case can set that outlive it (`ms.set_context(max_call_depth=...)`,
#: the mode, the syntax level, `jit_config`'s level): put back before every case, so each case is
#: judged as if run on its own (`python case.py`) whatever the cases before it set
_CONTEXT_OPTIONS = ("mode", "max_call_depth", "jit_syntax_level", "jit_level")
_SAVE_CONTEXT = f"""import mindspore as _ms
_context = {{k: _ms.get_context(k) for k in {_CONTEXT_OPTIONS!r}}}
"""
_RESTORE_CONTEXT = """    for _k, _v in _context.items():
        if _ms.get_context(_k) != _v:
            _ms.set_context(**{_k: _v})
"""

#: MindSpore's LAX run-time fallback (PyExecute) runs scripts such as
#: `__import__('mindspore').graph._utils.jit_fallback_utils.dict_setitem(...)`, which assume the
#: submodule is already an attribute of `mindspore.graph._utils`; `import mindspore` does not
#: import it, and only some fallback paths import it themselves (list `insert`/`extend`/... via
#: `set_local_variable`). Alone (`python case.py`) a program can so fail with "module
#: 'mindspore.graph._utils' has no attribute 'jit_fallback_utils'" where, in a batch, it passes
#: because an earlier case imported the submodule. Forget it (and its deprecated alias
#: `mindspore.common._jit_fallback_utils`, which imports and copies it) before every case, so
#: each case finds the same modules a fresh process has.
_FORGET_FALLBACK_UTILS = """    for _mod, _parent, _attr in (("mindspore.graph._utils.jit_fallback_utils", "mindspore.graph._utils", "jit_fallback_utils"),
                                 ("mindspore.common._jit_fallback_utils", "mindspore.common", "_jit_fallback_utils")):
        sys.modules.pop(_mod, None)
        if _parent in sys.modules and hasattr(sys.modules[_parent], _attr):
            delattr(sys.modules[_parent], _attr)
"""
RUNNER = runner(PER_CASE_TIMEOUT, setup=_SAVE_CONTEXT, before_case=_RESTORE_CONTEXT + _FORGET_FALLBACK_UTILS)


def run_level(
    py: str, root: Path, cases: list[str], env_extra: dict[str, str], tmp: Path, *, script: str = RUNNER
) -> dict[str, dict[str, object]]:
    """Verdicts of `cases` (paths relative to `root`) at one level, run by `script` (`runner`);
    a case that kills the process is a crash. MindSpore runs in a fresh
    temporary working directory, deleted afterwards: it writes `rank_0/` and `*.ir` files into
    the current directory, which must never land in the repository."""
    env = {**os.environ, **env_extra, "GLOG_v": "3", "PYTHONWARNINGS": "ignore"}
    results: dict[str, dict[str, object]] = {}
    by_path = {str((root / c).resolve()): c for c in cases}
    todo = list(cases)
    while todo:
        tmp.unlink(missing_ok=True)
        # errors="replace": a run-time str MindSpore prints from C++ can be bytes that are not UTF-8
        with tempfile.TemporaryDirectory(prefix="ms210-cwd-") as cwd:
            p = subprocess.run(
                [py, "-c", script, str(tmp), *(str((root / c).resolve()) for c in todo)],
                cwd=cwd, env=env, capture_output=True, text=True, errors="replace",
            )
        done = {}
        if tmp.is_file():
            for line in tmp.read_text().splitlines():
                done.update({by_path.get(k, k): v for k, v in json.loads(line).items()})
        results.update(done)
        rest = [c for c in todo if c not in done]
        if rest and p.returncode != 0:  # the first unfinished case killed the process
            results[rest[0]] = {"verdict": "crash", "error_type": f"exit {p.returncode}", "message": p.stderr[-300:], "call_line": None}
            rest = rest[1:]
        elif rest:
            break
        todo = rest
    return results


def label_for(case: Path, by_level: dict[str, dict[str, object]]) -> dict[str, object]:
    """The same fields judge.py writes (fixtures/ms210/judge.py `judge`)."""
    pyn, lax, strict = by_level["pynative"], by_level["lax"], by_level["strict"]
    label: dict[str, object] = {
        "pynative": pyn["verdict"], "lax": lax["verdict"], "strict": strict["verdict"], "category": "difftest",
        "error_from": None, "error_line": None, "call_line": None, "error_type": None, "message_head": None,
    }
    for name, res in (("lax", lax), ("strict", strict)):
        if res["verdict"] in ("reject", "crash", "timeout"):
            msg = str(res.get("message") or "")
            label.update(error_from=name, error_line=error_line(msg, case), call_line=res.get("call_line"),
                         error_type=res.get("error_type"), message_head=msg[:200])
            if name == "strict":
                label["call_line"] = None
            break
    if strict["verdict"] in ("reject", "crash") and lax["verdict"] != strict["verdict"]:
        msg = str(strict.get("message") or "")
        label["strict_error_line"] = error_line(msg, case)
        label["strict_message_head"] = msg[:200]
    elif strict["verdict"] in ("reject", "crash"):
        label["strict_error_line"] = label["error_line"]
    if pyn["verdict"] != "accept":
        label["pynative_error"] = f"{pyn.get('error_type')}: {str(pyn.get('message') or '')[:150]}"
    return label


def parse_seeds(specs: list[str]) -> list[int]:
    seeds: list[int] = []
    for s in specs:
        if "-" in s:
            a, b = s.split("-")
            seeds.extend(range(int(a), int(b) + 1))
        else:
            seeds.append(int(s))
    return seeds


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--python", default=str(DEFAULT_PY))
    ap.add_argument("--out", type=Path, default=STORE)
    ap.add_argument("seeds", nargs="+")
    args = ap.parse_args()
    root: Path = args.out.resolve()
    (root / "cases").mkdir(parents=True, exist_ok=True)
    names = []
    for seed in parse_seeds(args.seeds):
        path = root / "cases" / f"seed_{seed}.py"
        path.write_text(generate(seed))
        names.append(f"cases/{path.name}")
    by_level = {}
    for level, env in LEVELS.items():
        by_level[level] = run_level(args.python, root, names, env, root / f".judge_{level}.jsonl")
        (root / f".judge_{level}.jsonl").unlink(missing_ok=True)
        print(level, "done", flush=True)
    labels_path = root / "labels.json"
    labels = json.loads(labels_path.read_text()) if labels_path.is_file() else {}
    for name in names:
        case = root / name
        label = label_for(case, {lv: by_level[lv].get(name, {"verdict": "missing"}) for lv in LEVELS})
        labels[case.name] = label
        print(case.name, label["pynative"], label["lax"], label["strict"], str(label["message_head"] or "")[:90], flush=True)
    labels_path.write_text(json.dumps(dict(sorted(labels.items(), key=lambda kv: int(kv[0][5:-3]))), indent=1) + "\n")
    for d in (root / "rank_0", root / "cases" / "rank_0"):
        if d.is_dir():
            subprocess.run(["rm", "-rf", str(d)], check=False)


if __name__ == "__main__":
    main()
