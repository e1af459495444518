#!/usr/bin/env python3
"""Judge hand-written programs with the real MindSpore 2.10 in batches (never imported by tests,
never run in CI): one MindSpore process per level, as judge_batch.py does for generated seeds.

Usage: judge_files.py [--python PY] --root SET_DIR --jsonl OUT.jsonl CASE...   (CASE relative to
SET_DIR, e.g. cases/x.py or probes/y.py). Appends one JSON line per case to OUT.jsonl with the
fields judge.py writes (the `# category:` header of the case as its category); `--merge
LABELS.json` also merges the verdicts (without `stdout`) into that file, replacing a case's
earlier verdict in place and adding new cases at the end. MindSpore runs in a temporary working directory that is
deleted afterwards (judge_batch.run_level), so the `rank_0/` folder and `*.ir` files it writes
never land in the repository, wherever this is started from. With `--pythonpath DIR` (relative
to SET_DIR), DIR goes on MindSpore's `sys.path`: the modules a multi-module case imports
(`written/crossmod/probes/xmhelp/`) are found there. One process runs a level's whole batch,
so modules of the same name must be the same files for every case of the batch. The context options
a case can set that would outlive it (`ms.set_context(max_call_depth=...)`, the mode, the
syntax level, `jit_config`'s level) are put back before every case (judge_batch.RUNNER), so a
case's verdict does not depend on the cases before it.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "fixtures" / "ms210"))

from judge import DEFAULT_PY  # noqa: E402
from judge_batch import LEVELS, label_for, run_level  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--python", default=str(DEFAULT_PY))
    ap.add_argument("--root", type=Path, required=True)
    ap.add_argument("--jsonl", type=Path, required=True)
    ap.add_argument("--pythonpath", help="folder (relative to --root) put on sys.path")
    ap.add_argument("--merge", type=Path, help="labels.json to merge the verdicts into")
    ap.add_argument("cases", nargs="+")
    args = ap.parse_args()
    root: Path = args.root.resolve()
    extra = {"PYTHONPATH": str(root / args.pythonpath)} if args.pythonpath else {}
    by_level = {}
    with tempfile.TemporaryDirectory() as tmp:
        for level, env in LEVELS.items():
            by_level[level] = run_level(args.python, root, args.cases, {**env, **extra}, Path(tmp) / f"{level}.jsonl")
    judged: dict[str, dict[str, object]] = {}
    with args.jsonl.open("a") as fh:
        for name in args.cases:
            case = root / name
            got = {lv: by_level[lv].get(name, {"verdict": "missing"}) for lv in LEVELS}
            label = label_for(case, got)
            m = re.match(r"# category: (\S+)", case.read_text())
            label["category"] = m.group(1) if m else root.name
            label["stdout"] = {lv: str(got[lv].get("stdout", ""))[:200] for lv in LEVELS}
            fh.write(json.dumps({case.name: label}) + "\n")
            judged[case.name] = {k: v for k, v in label.items() if k != "stdout"}
            print(case.name, label["pynative"], label["lax"], label["strict"], str(label["message_head"] or "")[:100], flush=True)
    if args.merge:
        merged = json.loads(args.merge.read_text()) if args.merge.exists() else {}
        merged.update(judged)
        # in place, new cases at the end: the file's order is kept, so its diff shows only the change
        args.merge.write_text(json.dumps(merged, indent=1, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
