#!/usr/bin/env python3
"""Known-miss bookkeeping for every judged store at once, to run after each merge.

Usage: known_miss_sync.py [--write] [--only NAME ...] [--jobs N]

Walks the three kinds of judged stores the tests read: written sets (`cases/`, `labels.json`,
`known_misses.json`), their probes (`probes/`, `probe_labels.json`, `probe_known_misses.json`)
and the generated store (`fixtures/difftest`). For each counted case and level it compares
`check`'s verdict with MindSpore's and prints:

  STALE  a known miss that agrees now (the tests fail on it until it is dropped);
  NEW    a disagreement that is not listed (the tests fail on it until it is fixed or listed).

`--write` drops the STALE entries from their JSON files. NEW ones are never written: a known
miss needs MindSpore's words and the idiom, which only a person can say; the label's
`message_head` and `error_line` are printed to start from. Exit status 1 when anything is left.
Run from the repository root with PYTHONPATH=server:kernel:. ; needs no MindSpore. `--jobs N`
checks in N worker processes (the output is the same, in the same order).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
LEVELS = ("lax", "strict")


@dataclass(frozen=True)
class Store:
    name: str
    cases: Path
    labels: Path
    known: Path
    workspace: bool  # probe folders may hold packages: check them with a workspace index


def stores() -> Iterator[Store]:
    written = FIXTURES / "written"
    for folder in sorted(p.parent for p in written.glob("*/labels.json")):
        yield Store(folder.name, folder / "cases", folder / "labels.json", folder / "known_misses.json", False)
    for folder in sorted(p.parent for p in written.glob("*/probe_labels.json")):
        yield Store(
            f"{folder.name}/probes",
            folder / "probes",
            folder / "probe_labels.json",
            folder / "probe_known_misses.json",
            True,
        )
    store = FIXTURES / "difftest"
    yield Store("difftest", store / "cases", store / "labels.json", store / "known_misses.json", False)


def _load(path: Path) -> dict[str, dict[str, object]]:
    return json.loads(path.read_text()) if path.is_file() else {}


def _counted(label: dict[str, object], level: str) -> bool:
    return label.get("pynative") == "accept" and label.get(level) in ("accept", "reject")


def verdict(path: Path, level: str, workspace: bool) -> str:
    from npu_lsp.config import Config
    from npu_lsp.engine import WorkspaceIndex, check_path

    config = Config() if level == "lax" else replace(Config(), syntax_level="strict")
    index = None
    if workspace and any(p.is_dir() and any(p.glob("*.py")) for p in path.parent.iterdir()):
        index = WorkspaceIndex.from_paths([path.parent], root=str(path.parent))
    diags = check_path(path, config, index)
    return "reject" if any(d.severity == "error" and d.code.startswith("MS") for d in diags) else "accept"


def _verdict(job: tuple[Path, str, bool]) -> str:
    return verdict(*job)


#: verdicts of (path, level, workspace) jobs, in order
Verdicts = Callable[[Iterable[tuple[Path, str, bool]]], Iterable[str]]


def sync(store: Store, write: bool, verdicts: Verdicts) -> tuple[int, int]:
    """(entries left to look at, verdicts compared) for one store."""
    labels = _load(store.labels)
    known = _load(store.known)
    left = 0
    stale: list[tuple[str, str]] = []
    counted = [(name, level) for name, label in sorted(labels.items()) for level in LEVELS if _counted(label, level)]
    found = verdicts([(store.cases / name, level, store.workspace) for name, level in counted])
    for (name, level), got in zip(counted, found, strict=True):
        label = labels[name]
        agrees = got == label[level]
        listed = level in known.get(name, {})
        if listed and agrees:
            stale.append((name, level))
            print(f"STALE {store.name} {name} [{level}]")
        elif not listed and not agrees:
            left += 1
            where = f"line {label.get('error_line')}: {label.get('message_head')}" if label[level] == "reject" else "accepted"
            print(f"NEW   {store.name} {name} [{level}] MindSpore {label[level]} ({where})")
    if stale and write:
        for name, level in stale:
            del known[name][level]
            if not known[name]:
                del known[name]
        store.known.write_text(json.dumps(known, indent=1, ensure_ascii=False) + "\n")
    return left + (0 if write else len(stale)), len(counted)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="drop the known misses that agree now")
    parser.add_argument("--only", nargs="*", default=[], help="store names to visit (e.g. heldout18a difftest)")
    parser.add_argument("--jobs", type=int, default=1, help="worker processes (default 1)")
    args = parser.parse_args()
    left = compared = visited = 0
    pool = ProcessPoolExecutor(args.jobs) if args.jobs > 1 else None
    verdicts: Verdicts = (lambda jobs: pool.map(_verdict, jobs, chunksize=8)) if pool else (lambda jobs: map(_verdict, jobs))
    try:
        for store in stores():
            if args.only and store.name.split("/")[0] not in args.only:
                continue
            store_left, store_compared = sync(store, args.write, verdicts)
            left, compared, visited = left + store_left, compared + store_compared, visited + 1
    finally:
        if pool:
            pool.shutdown()
    print(f"{compared} verdicts in {visited} stores; {left} entr{'y' if left == 1 else 'ies'} left to look at")
    return 1 if left else 0


if __name__ == "__main__":
    sys.exit(main())
