"""What moving a file's summary between processes costs, against making it.

`check` parses and summarises every file in one process, then forks the workers that
check (they inherit the trees, the summaries and the project-wide resolution, nothing is
sent). Parsing and summarising in the workers instead needs every summary in the process
that resolves (and in every worker that checks against the index): a summary made in
one process must be pruned (`summary.portable`), pickled, sent and unpickled in another.
This measures, per tree, in one process on CPU time (`time.process_time`, so the
machine's load moves it little), over every `.py` file:

- read + decode, `ast.parse`, `scope.summarize` (making a summary);
- `summary.portable`, `pickle.dumps` of the pruned copy, `pickle.loads` of it (moving
  one), with the pickled bytes;
- the pickled bytes per field of the pruned summary, and the node types the pruned
  definitions (functions, methods, classes) hold: what a compact form has to replace.

Each timing is the smallest total over `--repeats` passes. The split pays only when
moving a summary costs much less than making it (see bench_check_repo.md, `cold18`).
Run: PYTHONPATH=server .venv/bin/python benchmarks/summary_cost.py TREE [TREE ...]
"""

from __future__ import annotations

import argparse
import ast
import collections
import dataclasses
import gc
import pickle
import time
from pathlib import Path

from npu_lsp import engine
from npu_lsp.scope import summarize
from npu_lsp.summary import portable

STEPS = ("read", "parse", "summarise", "portable", "pickle", "unpickle")


def module_name(root: Path, f: Path) -> str:
    parts = list(f.relative_to(root).with_suffix("").parts)
    if parts and parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts) or "__init__"


def one_pass(root: Path, files: list[Path]) -> tuple[dict[str, float], int, list[object]]:
    """(CPU seconds per step, pickled bytes, the pruned summaries) of every file."""
    clock = time.process_time
    spent = dict.fromkeys(STEPS, 0.0)
    size = 0
    kept: list[object] = []
    for f in files:
        t0 = clock()
        text = engine.decode_source(f.read_bytes())
        t1 = clock()
        if not isinstance(text, str):
            continue
        tree = engine.parse_python(text, str(f))
        t2 = clock()
        if tree is None:
            continue
        info = summarize(tree, str(f), module_name(root, f), text)
        t3 = clock()
        pruned = portable(info, text)
        t4 = clock()
        blob = pickle.dumps(pruned, protocol=pickle.HIGHEST_PROTOCOL)
        t5 = clock()
        pickle.loads(blob)
        t6 = clock()
        for step, dt in zip(
            STEPS, (t1 - t0, t2 - t1, t3 - t2, t4 - t3, t5 - t4, t6 - t5), strict=True
        ):
            spent[step] += dt
        size += len(blob)
        kept.append(pruned)
    return spent, size, kept


def composition(kept: list[object]) -> tuple[collections.Counter[str], collections.Counter[str]]:
    """(pickled bytes per field, node types in the pruned definitions)."""
    by_field: collections.Counter[str] = collections.Counter()
    nodes: collections.Counter[str] = collections.Counter()
    for info in kept:
        for fl in dataclasses.fields(info):  # type: ignore[arg-type]
            by_field[fl.name] += len(pickle.dumps(getattr(info, fl.name), protocol=5))
        defs: list[ast.AST] = list(info.functions.values())  # type: ignore[attr-defined]
        defs.extend(c.node for c in info.classes.values())  # type: ignore[attr-defined]
        seen: set[int] = set()
        for d in defs:
            for node in ast.walk(d):
                if id(node) not in seen:
                    seen.add(id(node))
                    nodes[type(node).__name__] += 1
    return by_field, nodes


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("trees", nargs="+", type=Path)
    p.add_argument("--repeats", type=int, default=3)
    args = p.parse_args()
    gc.disable()  # as `check` runs (workspace.check_files)
    for root in args.trees:
        files = sorted(root.rglob("*.py"))
        best: dict[str, float] = {}
        size, kept = 0, []
        for _ in range(args.repeats):
            spent, size, kept = one_pass(root, files)
            best = {s: min(best.get(s, spent[s]), spent[s]) for s in STEPS}
        make = best["parse"] + best["summarise"]
        move = best["portable"] + best["pickle"] + best["unpickle"]
        print(f"## {root} ({len(kept)} files, {size / 1e6:.1f} MB pickled)")
        print(" | ".join(f"{s} {best[s]:.2f} s" for s in STEPS))
        print(f"making (parse + summarise) {make:.2f} s; moving (portable + pickle + unpickle)")
        print(f"  {move:.2f} s = {move / make:.0%} of making")
        by_field, nodes = composition(kept)
        total = sum(by_field.values())
        print(
            "pickled bytes by field:",
            ", ".join(f"{k} {v / total:.0%}" for k, v in by_field.most_common(5)),
        )
        all_nodes = sum(nodes.values())
        print(
            f"nodes in pruned definitions: {all_nodes:,} ({all_nodes / len(kept):.0f} a file):",
            ", ".join(f"{k} {v / all_nodes:.0%}" for k, v in nodes.most_common(8)),
        )


if __name__ == "__main__":
    main()
