#!/usr/bin/env python3
"""Three-way merge of the JSON stores a `git merge` left conflicted (labels, known misses).

Usage, in the conflicted work tree: json_merge.py FILE...  (each FILE is then `git add`ed)

Helpers' branches add and drop entries of the same stores (`labels.json`,
`probe_labels.json`, `known_misses.json`, ...), so textual merges conflict where the entries
do not. Objects merge key by key, recursively, from git's stages (1 base, 2 ours, 3 theirs): a
key deleted on one side and unchanged on the other is deleted (a known miss a fix dropped), a
key added on either side is kept; a scalar changed differently on both sides takes theirs and
is reported. The file keeps our indentation (1 or 2 spaces).
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

_MISSING = object()


def _stage(n: int, path: str) -> Any:
    # `./`: git resolves the path from the working directory, not the repository's root
    r = subprocess.run(["git", "show", f":{n}:./{path}"], capture_output=True, text=True)
    return json.loads(r.stdout) if r.returncode == 0 else {}


def merge(base: Any, ours: Any, theirs: Any, where: str = "") -> Any:
    if isinstance(ours, dict) and isinstance(theirs, dict):
        base = base if isinstance(base, dict) else {}
        out: dict[str, Any] = {}
        for k in [*ours, *(k for k in theirs if k not in ours)]:
            b, o, t = base.get(k, _MISSING), ours.get(k, _MISSING), theirs.get(k, _MISSING)
            if o is _MISSING:
                if b is _MISSING or t != b:
                    out[k] = t  # added by them, or changed by them after we dropped it
            elif t is _MISSING:
                if b is _MISSING or o != b:
                    out[k] = o
            else:
                out[k] = merge(None if b is _MISSING else b, o, t, f"{where}/{k}")
        return out
    if ours == theirs or theirs == base:
        return ours
    if ours != base:
        print(f"json_merge: both sides changed {where}; taking theirs", file=sys.stderr)
    return theirs


def main(paths: list[str]) -> int:
    for path in paths:
        raw = subprocess.run(["git", "show", f":2:{path}"], capture_output=True, text=True).stdout
        indent = 1 if raw.startswith('{\n "') else 2
        merged = merge(_stage(1, path), _stage(2, path), _stage(3, path), path)
        with open(path, "w", encoding="utf-8") as f:
            f.write(json.dumps(merged, indent=indent, ensure_ascii=False) + "\n")
        subprocess.run(["git", "add", path], check=True)
        print(f"merged {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
