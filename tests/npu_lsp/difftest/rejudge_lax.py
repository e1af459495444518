#!/usr/bin/env python3
"""Re-judge only the LAX level of a set's LAX-accepted cases with the current batch runner
(judge_batch.RUNNER) and report the cases whose verdict flips (never imported by tests, never
run in CI).

Usage: rejudge_lax.py --root SET_DIR [--labels LABELS.json] [--dir cases] [--apply]

Written for the labels judged before the runner forgot `mindspore.graph._utils.jit_fallback_utils`
between cases (see WORKFLOW.md): with `--apply`, a case that now fails at LAX with that
AttributeError gets `lax: reject` and the error fields `judge_batch.label_for` writes; other
flips are only printed, for a person to judge.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "fixtures" / "ms210"))

from judge import DEFAULT_PY, error_line  # noqa: E402
from judge_batch import LEVELS, run_level  # noqa: E402

MARK = "has no attribute 'jit_fallback_utils'"


def relabel(label: dict[str, object], res: dict[str, object], case: Path) -> None:
    """`label` as `label_for` writes it when LAX rejects with `res` (PyNative and STRICT kept)."""
    msg = str(res.get("message") or "")
    label.update(lax="reject", error_from="lax", error_line=error_line(msg, case), call_line=res.get("call_line"),
                 error_type=res.get("error_type"), message_head=msg[:200])
    if label["strict"] == "reject":  # same verdict at both levels: label_for keeps LAX's line only
        label.pop("strict_message_head", None)
        label["strict_error_line"] = label["error_line"]
    if isinstance(label.get("stdout"), dict):  # judge_files' jsonl fields, when a label keeps them
        label["stdout"]["lax"] = str(res.get("stdout", ""))[:200]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--python", default=str(DEFAULT_PY))
    ap.add_argument("--root", type=Path, required=True)
    ap.add_argument("--labels", type=Path)
    ap.add_argument("--dir", default="cases")
    ap.add_argument("--apply", action="store_true")
    args = ap.parse_args()
    root: Path = args.root.resolve()
    labels_path: Path = args.labels or root / "labels.json"
    labels = json.loads(labels_path.read_text())
    names = sorted(n for n, lab in labels.items() if lab["lax"] == "accept" and (root / args.dir / n).is_file())
    cases = [f"{args.dir}/{n}" for n in names]
    with tempfile.TemporaryDirectory() as tmp:
        got = run_level(args.python, root, cases, LEVELS["lax"], Path(tmp) / "lax.jsonl")
    flipped = []
    for name, case in zip(names, cases, strict=True):
        res = got.get(case, {"verdict": "missing"})
        if res["verdict"] == "accept":
            continue
        why = f"{res.get('error_type')}: {str(res.get('message') or '')[:120]}"
        print(name, res["verdict"], why, flush=True)
        if res["verdict"] == "reject" and MARK in str(res.get("message")):
            flipped.append(name)
            relabel(labels[name], res, root / case)
    print(f"{root.name}: {len(names)} LAX-accepted re-judged, {len(flipped)} flip on jit_fallback_utils: {flipped}")
    if args.apply and flipped:
        labels_path.write_text(json.dumps(dict(sorted(labels.items())), indent=1, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
