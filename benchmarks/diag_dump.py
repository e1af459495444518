"""Every diagnostic of the fixture files and the zoo sweep, at LAX and STRICT, as one JSON file.

For changes that must not change any verdict (speed work): dump before, dump after, compare.

    PYTHONPATH=/tmp/base/server:/tmp/base .venv/bin/python benchmarks/diag_dump.py --out /tmp/before.json
    PYTHONPATH=$PWD/server:$PWD .venv/bin/python benchmarks/diag_dump.py --out /tmp/after.json
    .venv/bin/python benchmarks/diag_dump.py --compare /tmp/before.json /tmp/after.json

The checker is whichever `npu_lsp` is first on the path (the fixtures are read from this
tree, or `--fixtures`). Fixture files are checked one by one in this process (`check_source`,
every rule, at each level); the zoos (as `zoo_sweep.py` exports them, `--no-zoo` to skip)
with `ascend-lens check --format json` per project, so cross-module resolution is included.
Every field of a diagnostic is kept (message, span, fix, related information).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
LEVELS = ("lax", "strict")


def dump_fixtures(root: Path) -> dict[str, Any]:
    from npu_lsp.config import Config
    from npu_lsp.engine import check_source

    configs = {lv: Config(syntax_level=lv) for lv in LEVELS}  # type: ignore[arg-type]
    out: dict[str, Any] = {}
    for p in sorted(root.rglob("*.py")):
        try:
            text = p.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        rel = str(p.relative_to(root))
        for lv, cfg in configs.items():
            out[f"{lv}:{rel}"] = [dataclasses.asdict(d) for d in check_source(text, str(p), cfg)]
    return out


def dump_zoos(mirrors: Path) -> dict[str, Any]:
    sys.path.insert(0, str(HERE))
    import os

    import zoo_sweep

    out: dict[str, Any] = {}
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    for zoo in zoo_sweep.ZOOS:
        zoo.git_dir = mirrors / zoo.mirror / "repo"
        if not zoo.git_dir.exists():
            print(f"skipped {zoo.name}", file=sys.stderr)
            continue
        with tempfile.TemporaryDirectory(prefix="zoo-") as tmp:
            root = Path(tmp)
            zoo_sweep.export(zoo, root)
            projects = [root / p for p in zoo.folders if (root / p).is_dir()] if zoo.parents else [root]
            for proj in projects:
                name = f"{zoo.name}/{proj.relative_to(root)}"
                for lv in LEVELS:
                    out[f"{lv}:{name}"] = zoo_sweep.check(proj, lv, env)
        print(f"{zoo.name}: done", file=sys.stderr)
    return out


def compare(a: Path, b: Path) -> int:
    old, new = json.loads(a.read_text()), json.loads(b.read_text())
    differ = [k for k in sorted(old.keys() | new.keys()) if old.get(k) != new.get(k)]
    total = sum(len(v) for v in new.values())
    for k in differ[:40]:
        print(f"differs: {k}: {len(old.get(k) or [])} -> {len(new.get(k) or [])} diagnostics")
    print(f"{len(new)} entries, {total} diagnostics; {len(differ)} entries differ")
    return 1 if differ else 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path)
    ap.add_argument("--fixtures", type=Path, default=HERE.parent / "tests/npu_lsp/fixtures")
    ap.add_argument("--mirrors", type=Path, default=Path("/work/.mirror"))
    ap.add_argument("--no-zoo", action="store_true")
    ap.add_argument("--compare", nargs=2, type=Path, metavar=("BEFORE", "AFTER"))
    args = ap.parse_args()
    if args.compare:
        return compare(*args.compare)
    if args.out is None:
        ap.error("--out or --compare")
    import npu_lsp

    print(f"checker: {Path(npu_lsp.__file__).parent}", file=sys.stderr)
    t0 = time.perf_counter()
    found = {f"fixture:{k}": v for k, v in dump_fixtures(args.fixtures).items()}
    print(f"fixtures: {len(found)} entries, {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    if not args.no_zoo:
        found.update({f"zoo:{k}": v for k, v in dump_zoos(args.mirrors).items()})
    args.out.write_text(json.dumps(found, sort_keys=True, indent=0), encoding="utf-8")
    print(f"{len(found)} entries, {sum(len(v) for v in found.values())} diagnostics", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
