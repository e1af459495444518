#!/usr/bin/env python3
"""Mine MindSpore's own graph-syntax tests into standalone programs, judge them with MindSpore
2.10 and score `check` on them (never imported by tests, never run in CI).

The programs are MindSpore's code: they and their labels live OUTSIDE the repository, under
~/.cache/ascend-lens/mstests/ (cases/*.py, manifest.json, labels.json). Only this script and the
report (MSTESTS.md, numbers and short quoted error messages) are committed.

Usage (from the repository root, PYTHONPATH=server:kernel:.):
  mine_mstests.py mine  [--git GITDIR] [--sample N] [--seed S]   write cases/ + manifest.json
  mine_mstests.py judge [--python PY] [--batch N] [--only-missing]  MindSpore verdicts -> labels.json
  mine_mstests.py score [--json OUT]                               agreement, recall, false errors

Mining: every top-level `def test_*` of the test modules under FOLDERS becomes one program: the
module's imports (test infrastructure `tests.*` and pytest dropped), the module-level
definitions the test reaches by name (transitively, in source order), the module-level
`set_context`/`set_device` calls, then the test function itself (decorators dropped, the first
`pytest.mark.parametrize` value of each parameter bound before it) and a call to it.
`with pytest.raises(...):` is unwrapped to its body (statements that read its `as` name are
dropped) and `assert E` becomes the expression statement `E`. Tests marked for Ascend or GPU
only, skipped tests, tests with fixtures, tests that still need pytest or `tests.*` helpers and
tests that set MS_DEV_* environment variables are not mined (counted in manifest.json).
The sample is stratified by folder with a fixed seed (default 14).

Judging: one MindSpore process per level (PyNative MS_JIT=0, LAX, STRICT
MS_DEV_JIT_SYNTAX_LEVEL=0) runs a batch through judge_batch.run_level, with a script where the context
(mode, syntax level) and os.environ are restored before each case so that no test's
`set_context` leaks into the next program.
"""

from __future__ import annotations

import argparse
import ast
import json
import random
import re
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "fixtures" / "ms210"))

from judge import DEFAULT_PY  # noqa: E402
from judge_batch import LEVELS, label_for, run_level, runner  # noqa: E402

STORE = Path.home() / ".cache" / "ascend-lens" / "mstests"
GIT = Path("/work/.mirror/mindspore-ai+mindspore_test/repo")
FOLDERS = (
    "tests/ut/python/graph_syntax",
    "tests/ut/python/fallback",
    "tests/ut/python/pipeline/parse",
    "tests/st/compiler/fallback",
    "tests/st/compiler/graph_syntax",
    "tests/st/compiler/syntax",
    "tests/st/compiler/control",
    "tests/st/compiler/augassign_inplace",
    "tests/st/compiler/auto_monad",
    "tests/st/compiler/construct_input",
    "tests/st/compiler/functional_overload",
    "tests/st/compiler/gradient",
    "tests/st/compiler/hypermap",
    "tests/st/compiler/inline",
    "tests/st/compiler/jit",
    "tests/st/compiler/mutable",
    "tests/st/compiler/support_binary",
    "tests/st/compiler/tensor_inplace",
    "tests/st/compiler/tensor_hook",
    "tests/st/compiler/boost_parse",
)
# Text that marks a test as outside graph-syntax judging (bytecode capture, devices, parallel,
# data/IO, profiling, environment-driven syntax levels).
SKIP_TEXT = re.compile(
    r"pi_jit|capture_mode|bytecode|mindspore\.communication|auto_parallel|profiler|Profiler|"
    r"mindspore\.dataset|MS_DEV_|device_target=['\"](Ascend|GPU)|subprocess|save_checkpoint|load_checkpoint"
)
CPU_MARKS = ("cpu_linux", "platform_x86_cpu", "cpu")
SETUP_CALLS = {"set_context", "set_device"}
PER_CASE_TIMEOUT = 60

# judge_batch's batch script, restoring the context and the environment before each case (a
# fresh process would).
RUNNER = runner(
    PER_CASE_TIMEOUT,
    setup="""import os
import mindspore as ms
env0 = dict(os.environ)
ctx0 = {k: ms.get_context(k) for k in ("mode", "jit_syntax_level")}
""",
    before_case="""    os.environ.clear(); os.environ.update(env0)
    for k, v in ctx0.items():
        try:
            ms.set_context(**{k: v})
        except Exception:
            pass
""",
)


# ---------------------------------------------------------------- mining


def git_files(git: Path) -> list[str]:
    out = subprocess.run(
        ["git", "-C", str(git), "ls-tree", "-r", "--name-only", "HEAD", *FOLDERS],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return sorted(p for p in out.splitlines() if re.search(r"/test_[^/]*\.py$", p))


def git_show(git: Path, path: str) -> str:
    return subprocess.run(
        ["git", "-C", str(git), "show", f"HEAD:{path}"], capture_output=True, text=True, check=True
    ).stdout


def is_infra_import(node: ast.stmt) -> bool:
    if isinstance(node, ast.ImportFrom):
        mod = node.module or ""
        return node.level > 0 or mod == "tests" or mod.startswith(("tests.", "pytest"))
    if isinstance(node, ast.Import):
        return any(
            a.name == "pytest" or a.name.startswith(("tests.", "pytest")) or a.name == "tests"
            for a in node.names
        )
    return False


def defined_names(node: ast.stmt) -> set[str]:
    names: set[str] = set()
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return {node.name}
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store):
            names.add(sub.id)
        elif isinstance(sub, ast.Import | ast.ImportFrom):
            names.update((a.asname or a.name).split(".")[0] for a in sub.names)
        elif isinstance(sub, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(sub.name)
    return names


def used_names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def is_setup_call(node: ast.stmt) -> bool:
    if not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)):
        return False
    f = node.value.func
    name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
    return name in SETUP_CALLS


def decorator_name(d: ast.expr) -> str:
    return ast.unparse(d.func if isinstance(d, ast.Call) else d)


def device_ok(fn: ast.FunctionDef) -> tuple[bool, str]:
    """(mined?, why not) from the test's marks: CPU tests only, no skips."""
    marks = []
    for d in fn.decorator_list:
        name = decorator_name(d)
        if name.endswith(("mark.skip", "mark.skipif")):
            return False, "skipped"
        if name == "arg_mark" and isinstance(d, ast.Call):
            for kw in d.keywords:
                if kw.arg == "plat_marks":
                    marks.extend(ast.literal_eval(kw.value))
        elif name.startswith("pytest.mark.") and not name.endswith("parametrize"):
            marks.append(name.removeprefix("pytest.mark."))
    plat = [m for m in marks if m.startswith(("platform_", "cpu_"))] + [
        m for m in marks if m in ("cpu_linux",)
    ]
    if plat and not any(m in CPU_MARKS for m in plat):
        return False, "device_only"
    return True, ""


def parametrize_bindings(fn: ast.FunctionDef) -> dict[str, ast.expr] | None:
    """First value of each parametrized argument; None when an argument has no value (fixture)."""
    binds: dict[str, ast.expr] = {}
    for d in fn.decorator_list:
        if not (
            isinstance(d, ast.Call)
            and decorator_name(d).endswith("mark.parametrize")
            and len(d.args) >= 2
        ):
            continue
        try:
            argnames = ast.literal_eval(d.args[0])
        except ValueError:
            return None
        names = (
            [n.strip() for n in argnames.split(",")]
            if isinstance(argnames, str)
            else list(argnames)
        )
        values = d.args[1]
        if not isinstance(values, ast.List | ast.Tuple) or not values.elts:
            return None
        first = values.elts[0]
        if isinstance(first, ast.Call) and decorator_name(first) == "pytest.param":
            first = (
                first.args[0]
                if len(first.args) == 1
                else ast.Tuple(elts=list(first.args), ctx=ast.Load())
            )
        if len(names) == 1:
            binds[names[0]] = first
        elif isinstance(first, ast.Tuple | ast.List) and len(first.elts) == len(names):
            binds.update(zip(names, first.elts, strict=True))
        else:
            return None
    args = [a.arg for a in fn.args.args + fn.args.kwonlyargs]
    if any(a not in binds for a in args):
        return None
    return binds


class Unwrap(ast.NodeTransformer):
    """`with pytest.raises(...) [as e]:` -> its body (statements reading `e` dropped afterwards);
    `assert E` -> `E`."""

    def __init__(self) -> None:
        self.raises_names: set[str] = set()

    def _is_raises(self, item: ast.withitem) -> bool:
        e = item.context_expr
        return isinstance(e, ast.Call) and decorator_name(e) in ("pytest.raises", "raises")

    def generic_visit(self, node: ast.AST) -> ast.AST:
        for field, old in ast.iter_fields(node):
            if isinstance(old, list):
                new: list[object] = []
                for x in old:
                    if (
                        isinstance(x, ast.stmt)
                        and self.raises_names & used_names(x)
                        and not isinstance(x, ast.With)
                    ):
                        continue
                    got = self.visit(x) if isinstance(x, ast.AST) else x
                    new.extend(got if isinstance(got, list) else [got] if got is not None else [])
                if old and isinstance(old[0], ast.stmt) and not new:
                    new = [ast.Pass()]
                setattr(node, field, new)
            elif isinstance(old, ast.AST):
                setattr(node, field, self.visit(old))
        return node

    def visit_With(self, node: ast.With) -> ast.AST | list[ast.stmt]:
        raises = [i for i in node.items if self._is_raises(i)]
        if not raises:
            return self.generic_visit(node)
        for i in raises:
            if isinstance(i.optional_vars, ast.Name):
                self.raises_names.add(i.optional_vars.id)
        rest = [i for i in node.items if i not in raises]
        body = ast.Module(body=node.body, type_ignores=[])
        self.generic_visit(body)
        if rest:
            node.items = rest
            node.body = body.body
            return node
        return body.body

    def visit_Assert(self, node: ast.Assert) -> ast.stmt:
        return ast.Expr(value=self.visit(node.test))


def mine_module(path: str, source: str) -> tuple[dict[str, str], Counter[str]]:
    """Programs of one module, by test id `path::name`, and the reasons tests were not mined."""
    why: Counter[str] = Counter()
    try:
        tree = ast.parse(source)
    except SyntaxError:
        why["unparsable_module"] += 1
        return {}, why
    imports: list[ast.stmt] = []
    infra: set[str] = set()
    defs: list[tuple[ast.stmt, set[str], set[str]]] = []
    setup: list[ast.stmt] = []
    tests: list[ast.FunctionDef] = []
    for node in tree.body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            (infra.update(defined_names(node)) if is_infra_import(node) else imports.append(node))
        elif isinstance(node, ast.FunctionDef) and node.name.startswith("test"):
            tests.append(node)
        elif is_setup_call(node):
            setup.append(node)
        elif isinstance(
            node, ast.FunctionDef | ast.ClassDef | ast.Assign | ast.AnnAssign | ast.If | ast.Try
        ):
            defs.append((node, defined_names(node), used_names(node)))
    programs: dict[str, str] = {}
    for fn in tests:
        ok, reason = device_ok(fn)
        if not ok:
            why[reason] += 1
            continue
        binds = parametrize_bindings(fn)
        if binds is None:
            why["fixture_or_parametrize"] += 1
            continue
        if SKIP_TEXT.search(ast.unparse(fn)):
            why["out_of_scope_text"] += 1
            continue
        fn.decorator_list = []
        fn.args = ast.arguments(
            posonlyargs=[],
            args=[],
            vararg=None,
            kwonlyargs=[],
            kw_defaults=[],
            kwarg=None,
            defaults=[],
        )
        fn = Unwrap().visit(fn)
        assert isinstance(fn, ast.FunctionDef)
        fn.body = [
            ast.Assign(targets=[ast.Name(id=k, ctx=ast.Store())], value=v, lineno=0)
            for k, v in binds.items()
        ] + fn.body
        need = used_names(fn)
        chosen: set[int] = set()
        frontier = set(need)
        while frontier:
            name = frontier.pop()
            for i, (_, d, u) in enumerate(defs):
                if i not in chosen and name in d:
                    chosen.add(i)
                    frontier |= u - need
                    need |= u
        kept = [defs[i][0] for i in sorted(chosen)]
        body_text = "\n".join(ast.unparse(n) for n in [*kept, fn])
        if "pytest" in need or (need & infra) or re.search(r"\bpytest\.", body_text):
            why["needs_test_infrastructure"] += 1
            continue
        if SKIP_TEXT.search(body_text):
            why["out_of_scope_text"] += 1
            continue
        mod = ast.Module(
            body=[
                *imports,
                *setup,
                *kept,
                fn,
                ast.Expr(ast.Call(ast.Name(fn.name, ast.Load()), [], [])),
            ],
            type_ignores=[],
        )
        text = ast.unparse(ast.fix_missing_locations(mod))
        programs[f"{path}::{fn.name}"] = (
            f"# mined from MindSpore {path}::{fn.name} (not for commit)\n{text}\n"
        )
    return programs, why


def case_name(test_id: str) -> str:
    path, name = test_id.split("::")
    stem = path.removeprefix("tests/").removesuffix(".py").replace("/", "__")
    return f"{stem}__{name}.py"


def stratum(test_id: str) -> str:
    parts = test_id.split("/")
    return "/".join(parts[:4]) if parts[1] == "st" else "/".join(parts[:4])


def cmd_mine(args: argparse.Namespace) -> None:
    all_programs: dict[str, str] = {}
    why: Counter[str] = Counter()
    for path in git_files(args.git):
        programs, w = mine_module(path, git_show(args.git, path))
        all_programs.update(programs)
        why.update(w)
    by_stratum: dict[str, list[str]] = defaultdict(list)
    for tid in sorted(all_programs):
        by_stratum[stratum(tid)].append(tid)
    rng = random.Random(args.seed)
    total = len(all_programs)
    chosen: list[str] = []
    for key in sorted(by_stratum):
        ids = by_stratum[key]
        k = len(ids) if args.sample >= total else max(1, round(len(ids) * args.sample / total))
        chosen.extend(sorted(rng.sample(ids, min(k, len(ids)))))
    cases = STORE / "cases"
    cases.mkdir(parents=True, exist_ok=True)
    for tid in chosen:
        (cases / case_name(tid)).write_text(all_programs[tid])
    manifest = {
        "git_head": subprocess.run(
            ["git", "-C", str(args.git), "rev-parse", "HEAD"], capture_output=True, text=True
        ).stdout.strip(),
        "seed": args.seed,
        "mined": total,
        "not_mined": dict(why),
        "strata": {k: len(v) for k, v in sorted(by_stratum.items())},
        "sample": {case_name(t): t for t in chosen},
    }
    (STORE / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    print(f"mined {total} programs, sampled {len(chosen)}; not mined: {dict(why)}")


# ---------------------------------------------------------------- judging


def cmd_judge(args: argparse.Namespace) -> None:
    manifest = json.loads((STORE / "manifest.json").read_text())
    labels_path = STORE / "labels.json"
    labels: dict[str, dict[str, object]] = (
        json.loads(labels_path.read_text()) if labels_path.is_file() else {}
    )
    def judged(n: str) -> bool:
        # a case a batch never reached (the process ended early) is judged again
        return n in labels and "missing" not in (labels[n]["pynative"], labels[n]["lax"], labels[n]["strict"])

    names = [n for n in sorted(manifest["sample"]) if not (args.only_missing and judged(n))]
    random.Random(manifest["seed"]).shuffle(names)  # every batch is a sample of every stratum
    for start in range(0, len(names), args.batch):
        batch = names[start : start + args.batch]
        paths = [STORE / "cases" / n for n in batch]
        with tempfile.TemporaryDirectory() as tmp, ThreadPoolExecutor(args.jobs) as pool:
            futures = {
                lv: pool.submit(
                    run_level, args.python, STORE / "cases", batch, env, Path(tmp) / f"{lv}.jsonl", script=RUNNER
                )
                for lv, env in LEVELS.items()
            }
            by_level = {lv: f.result() for lv, f in futures.items()}
        for n, p in zip(batch, paths, strict=True):
            got = {lv: by_level[lv].get(n, {"verdict": "missing"}) for lv in LEVELS}
            label = label_for(p, got)
            label["category"] = manifest["sample"][n]
            labels[n] = label
        labels_path.write_text(json.dumps(labels, indent=1, sort_keys=True) + "\n")
        print(f"judged {min(start + args.batch, len(names))}/{len(names)}", flush=True)


# ---------------------------------------------------------------- scoring


def family(message: str) -> str:
    """MindSpore's error message reduced to a family key: first line, quoted names and numbers blanked."""
    first = next(
        (ln.strip() for ln in message.splitlines() if ln.strip() and not ln.startswith("-")), ""
    )
    first = first.strip("'\"")  # a message that is one quoted sentence
    if "already exists" in first:
        return "The parameter …, its name '…' already exists"
    first = re.sub(r"'[^']*'|\"[^\"]*\"", "'…'", first)
    first = re.sub(r"\b\d+(\.\d+)?\b", "N", first)
    first = re.sub(r"In file \S+", "In file …", first)
    return first[:110]


def cmd_score(args: argparse.Namespace) -> None:
    from npu_lsp.config import Config
    from npu_lsp.engine import check_path

    labels: dict[str, dict[str, object]] = json.loads((STORE / "labels.json").read_text())
    levels = ("lax", "strict")
    dropped = Counter(str(lb["pynative"]) for lb in labels.values() if lb["pynative"] != "accept")
    rows: list[dict[str, object]] = []
    for name, label in sorted(labels.items()):
        if label["pynative"] != "accept":
            continue
        for level in levels:
            if label[level] not in ("accept", "reject"):
                dropped[f"{level}:{label[level]}"] += 1
                continue
            config = Config() if level == "lax" else replace(Config(), syntax_level="strict")
            diags = check_path(STORE / "cases" / name, config)
            errors = [
                f"{d.code}@{d.span.line}"
                for d in diags
                if d.severity == "error" and d.code.startswith("MS")
            ]
            ms = (
                label.get("message_head")
                if level == label.get("error_from")
                else label.get("strict_message_head", label.get("message_head"))
            )
            rows.append(
                {
                    "case": name,
                    "id": label["category"],
                    "level": level,
                    "ms": label[level],
                    "we": "reject" if errors else "accept",
                    "errors": errors,
                    "error_type": label.get("error_type"),
                    "message": str(ms or ""),
                }
            )
    print(f"dropped (not counted): {dict(dropped)}")
    for level in levels:
        lr = [r for r in rows if r["level"] == level]
        n = len(lr)
        rej = [r for r in lr if r["ms"] == "reject"]
        agree = sum(r["ms"] == r["we"] for r in lr)
        hit = sum(r["we"] == "reject" for r in rej)
        fe = [r for r in lr if r["ms"] == "accept" and r["we"] == "reject"]
        print(
            f"{level}: {n} programs, MindSpore rejects {len(rej)} ({100 * len(rej) / max(n, 1):.1f}%), "
            f"agreement {agree}/{n} ({100 * agree / max(n, 1):.1f}%), recall on rejects {hit}/{len(rej)} "
            f"({100 * hit / max(len(rej), 1):.1f}%), false errors {len(fe)}"
        )
    print("\nFALSE ERRORS")
    for r in rows:
        if r["ms"] == "accept" and r["we"] == "reject":
            print(f"  [{r['level']}] {r['id']}  {r['errors']}")
    print("\nMISS FAMILIES (MindSpore rejects, check accepts)")
    fam: dict[str, list[dict[str, object]]] = defaultdict(list)
    for r in rows:
        if r["ms"] == "reject" and r["we"] == "accept":
            fam[f"{r['error_type']}: {family(str(r['message']))}"].append(r)
    for key, rs in sorted(fam.items(), key=lambda kv: -len(kv[1])):
        lv = Counter(str(r["level"]) for r in rs)
        print(f"  {len(rs):3d} {dict(lv)} {key}")
        for r in rs[:4]:
            print(f"        {r['id']} [{r['level']}]")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1) + "\n")


def main() -> None:
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    m = sub.add_parser("mine")
    m.add_argument("--git", type=Path, default=GIT)
    m.add_argument("--sample", type=int, default=700)
    m.add_argument("--seed", type=int, default=14)
    j = sub.add_parser("judge")
    j.add_argument("--python", default=str(DEFAULT_PY))
    j.add_argument("--batch", type=int, default=100)
    j.add_argument("--jobs", type=int, default=2)
    j.add_argument("--only-missing", action="store_true", help="skip cases judged at every level")
    s = sub.add_parser("score")
    s.add_argument("--json", default="")
    args = ap.parse_args()
    {"mine": cmd_mine, "judge": cmd_judge, "score": cmd_score}[args.cmd](args)


if __name__ == "__main__":
    main()
