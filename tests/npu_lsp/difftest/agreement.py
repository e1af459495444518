#!/usr/bin/env python3
"""Agreement of `check` with MindSpore 2.10 on judged difftest programs, per syntax level.

Usage: agreement.py [--dir DIR] [--labels FILE --cases SUBDIR] [--prefix P] [--show N]
(DIR: cases/ + labels.json; default tests/npu_lsp/fixtures/difftest). A written set's probes:
`--dir SET --labels SET/probe_labels.json --cases probes`. `--prefix r2_` scores only the cases
whose name starts with `r2_`, `--prefix '!r2_'` only the others (a blind set's first round).

A case counts at a level when PyNative accepts it and MindSpore gave a verdict (accept or
reject) at that level; `check` agrees when it reports an error-severity MS diagnostic exactly
when MindSpore rejects. Lax is checked with the default configuration (the file's own
settings), strict with the syntax level configured as STRICT (as MS_DEV_JIT_SYNTAX_LEVEL=0
does). Needs no MindSpore: the verdicts are in labels.json.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from pathlib import Path

HERE = Path(__file__).resolve().parent
LEVELS = ("lax", "strict")


def our_verdicts(path: Path) -> dict[str, tuple[str, list[tuple[int, str, str]]]]:
    """Our verdict and error diagnostics (line, code, message) per level."""
    from npu_lsp.config import Config
    from npu_lsp.engine import check_path

    out = {}
    for level in LEVELS:
        config = Config() if level == "lax" else replace(Config(), syntax_level="strict")
        diags = check_path(path, config)
        errors = [(d.span.line, d.code, d.message) for d in diags if d.severity == "error" and d.code.startswith("MS")]
        out[level] = ("reject" if errors else "accept", errors)
    return out


def counted(label: dict[str, object], level: str) -> bool:
    return label.get("pynative") == "accept" and label.get(level) in ("accept", "reject")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", type=Path, default=HERE.parent / "fixtures" / "difftest")
    ap.add_argument("--labels", type=Path, help="verdicts file (default DIR/labels.json)")
    ap.add_argument("--cases", default="cases", help="programs folder under DIR (default cases)")
    ap.add_argument("--prefix", default="", help="only names starting with P; '!P': only the others")
    ap.add_argument("--show", type=int, default=50)
    ap.add_argument(
        "--write-known",
        action="store_true",
        help="record every disagreement in DIR/known_misses.json with what MindSpore said",
    )
    args = ap.parse_args()
    labels: dict[str, dict[str, object]] = json.loads((args.labels or args.dir / "labels.json").read_text())
    negate, prefix = args.prefix.startswith("!"), args.prefix.lstrip("!")
    labels = {k: v for k, v in labels.items() if k.startswith(prefix) != negate}
    agree = dict.fromkeys(LEVELS, 0)
    total = dict.fromkeys(LEVELS, 0)
    false_errors = dict.fromkeys(LEVELS, 0)
    misses: list[str] = []
    known: dict[str, dict[str, str]] = {}
    for name, label in labels.items():
        ours = our_verdicts(args.dir / args.cases / name)
        for level in LEVELS:
            if not counted(label, level):
                continue
            total[level] += 1
            got, errors = ours[level]
            if got == label[level]:
                agree[level] += 1
                continue
            if got == "reject":
                false_errors[level] += 1
            ms = label.get("message_head") if level == label.get("error_from") else label.get("strict_message_head", label.get("message_head"))
            said = f"MindSpore: {label[level]}" + (f" ({str(ms)[:160]!r})" if label[level] == "reject" else "")
            misses.append(f"{name} [{level}] {said}; we: {got} {errors[:2]}")
            first = " ".join(str(ms or "").split())[:160]
            known.setdefault(name, {})[level] = (
                f"MindSpore {label[level]}s ({first!r}); check says {got}"
                + (f" ({errors[0][1]} line {errors[0][0]})" if errors else "")
            )
    for level in LEVELS:
        n = total[level]
        pct = 100.0 * agree[level] / n if n else 0.0
        print(f"{level}: {agree[level]}/{n} agree ({pct:.1f}%), false errors on accepted code: {false_errors[level]}")
    for m in misses[: args.show]:
        print(" ", m)
    if args.write_known:
        path = args.dir / "known_misses.json"
        path.write_text(json.dumps(known, indent=1, sort_keys=True) + "\n")
        print("wrote", path)
    sys.exit(0)


if __name__ == "__main__":
    main()
