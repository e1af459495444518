"""The migration rules and `check --fix` over whole public PyTorch repositories.

By hand only (CI has no network). As zoo_sweep.py does, each repository's Python files at
HEAD (or only the listed folders) are exported with `git archive` from a local git
directory (`<mirrors>/<owner>+<name>/repo`, the layout the code index's `fetch` writes) into
a temporary folder. Then, with `ascend-lens check --no-config --no-cache`:

1. `check --format json` on the tree: findings per code (and its wall time, beside
   `ruff check --select ALL --no-cache` on the same tree in the same run);
2. on a copy, `check --fix` (and on another copy `check --fix --unsafe-fixes`), then
   `check --diff` (same flags) on the fixed copy, which shows what fix-all left fixable;
3. per file, compared with the original: does it still `compile()`, did it change without
   having had a finding, does it hold both `"npu"`-style and `"cuda"`-style devices
   after the fix while it did not before (half moved; listed with the lines to judge);
4. any exit status other than 0/1, a traceback on stderr, or a timeout of `check`.

    .venv/bin/python benchmarks/migration_sweep.py --label after
    git archive OLD_COMMIT server ascend_lens | tar -x -C /tmp/old
    .venv/bin/python benchmarks/migration_sweep.py --checker /tmp/old --label "before (OLD_COMMIT)"

Results go to migration_sweep.md beside this script as a section named by `--label`
(sections with other labels are kept). `--list FILE` also writes every finding
(`repo/path:line:col CODE message`) to FILE, for reading them as a maintainer would.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import warnings
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import results

HERE = Path(__file__).resolve().parent
ASCEND_LENS = [sys.executable, "-m", "ascend_lens"]
RUFF = str(Path(sys.executable).with_name("ruff"))
COMMON = ["--no-config", "--no-cache", "-q"]
TIMEOUT = 1800.0


@dataclass
class Repo:
    name: str
    mirror: str
    folders: list[str] = field(default_factory=list)
    git_dir: Path | None = None
    round: int = 1  # 1: session 6's seventeen; 2: session 29's, none swept before


REPOS = [
    Repo("pytorch/examples", "pytorch+examples"),
    Repo("pytorch-image-models", "huggingface+pytorch-image-models"),
    Repo("detectron2", "facebookresearch+detectron2"),
    Repo("deit", "facebookresearch+deit"),
    Repo("mae", "facebookresearch+mae"),
    Repo("dino", "facebookresearch+dino"),
    Repo("guided-diffusion", "openai+guided-diffusion"),
    Repo("yolov5", "ultralytics+yolov5"),
    Repo("nanoGPT", "karpathy+nanoGPT"),
    Repo("minGPT", "karpathy+minGPT"),
    Repo("accelerate", "huggingface+accelerate"),
    Repo("open_clip", "mlfoundations+open_clip"),
    Repo("mmengine", "open-mmlab+mmengine"),
    Repo("fairseq", "facebookresearch+fairseq"),
    Repo("lightning", "Lightning-AI+pytorch-lightning", ["src", "examples"]),
    Repo("denoising-diffusion", "lucidrains+denoising-diffusion-pytorch"),
    Repo("vit-pytorch", "lucidrains+vit-pytorch"),
    Repo("detr", "facebookresearch+detr", round=2),
    Repo("Deformable-DETR", "fundamentalvision+Deformable-DETR", round=2),
    Repo("segment-anything", "facebookresearch+segment-anything", round=2),
    Repo("dinov2", "facebookresearch+dinov2", round=2),
    Repo("whisper", "openai+whisper", round=2),
    Repo("CLIP", "openai+CLIP", round=2),
    Repo("peft", "huggingface+peft", round=2),
    Repo("litgpt", "Lightning-AI+litgpt", round=2),
    Repo("mmpretrain", "open-mmlab+mmpretrain", round=2),
    Repo("stable-diffusion", "CompVis+stable-diffusion", round=2),
    Repo("DeepSpeedExamples", "microsoft+DeepSpeedExamples", round=2),
    Repo("yolov7", "WongKinYiu+yolov7", round=2),
]

#: a device string as a whole literal, or the head of an f-string
_DEVICE = re.compile(r"^(cuda|npu)(:\d+)?$")
_HEAD = re.compile(r"^(cuda|npu):")


@dataclass
class Run:
    """One `check --fix` run (safe or with unsafe fixes) over a copy of the tree."""

    seconds: float = 0.0
    remaining: Counter[str] = field(default_factory=Counter)
    changed: int = 0
    left_fixable: int = 0  # problems `--diff` would still fix on the fixed tree
    left_files: list[str] = field(default_factory=list)
    broken: list[str] = field(default_factory=list)  # compiled before, not after
    unprompted: list[str] = field(default_factory=list)  # changed without a finding
    half: list[str] = field(default_factory=list)  # both device styles after, not before
    crashes: list[str] = field(default_factory=list)


@dataclass
class Result:
    repo: str
    commit: str
    files: int = 0
    lines: int = 0
    check_s: float = 0.0
    ruff_s: float = 0.0
    findings: Counter[str] = field(default_factory=Counter)
    listed: list[str] = field(default_factory=list)
    runs: dict[str, Run] = field(default_factory=dict)
    crashes: list[str] = field(default_factory=list)


def git(git_dir: Path, *args: str) -> bytes:
    return subprocess.run(
        ["git", f"--git-dir={git_dir}", *args], check=True, capture_output=True
    ).stdout


def export(repo: Repo, dest: Path) -> str:
    """The repository's .py files at HEAD into `dest`; the commit."""
    assert repo.git_dir is not None
    commit = git(repo.git_dir, "rev-parse", "HEAD").decode().strip()
    names = git(repo.git_dir, "ls-tree", "-r", "--name-only", "HEAD", *repo.folders)
    paths = [p for p in names.decode().splitlines() if p.endswith(".py")]
    for start in range(0, len(paths), 500):  # keep the argument list short
        archive = git(repo.git_dir, "archive", "HEAD", *paths[start : start + 500])
        subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
    return commit


def run(cmd: list[str], cwd: Path, env: dict[str, str]) -> tuple[int, str, str, float]:
    """Exit status (-1 on timeout), stdout, stderr, wall seconds."""
    start = time.perf_counter()
    try:
        proc = subprocess.run(
            cmd, cwd=cwd, capture_output=True, text=True, env=env, timeout=TIMEOUT
        )
    except subprocess.TimeoutExpired:
        return -1, "", "timeout", time.perf_counter() - start
    return proc.returncode, proc.stdout, proc.stderr, time.perf_counter() - start


def crashed(what: str, rc: int, err: str) -> str | None:
    if rc == -1:
        return f"{what}: timeout after {TIMEOUT:.0f} s"
    if rc not in (0, 1) or "Traceback" in err:
        tail = " | ".join(err.strip().splitlines()[-3:])
        return f"{what}: exit {rc}: {tail}"
    return None


def compiles(text: str, name: str) -> bool:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compile(text, name, "exec", dont_inherit=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


def styles(text: str) -> dict[str, list[int]]:
    """Lines holding a `cuda`-style and an `npu`-style device: literal device strings,
    f-string heads and `.cuda()`/`.npu()` calls (a `torch.cuda.*` API left without a fix
    beside `torch.npu.*` is reported as such, not counted here)."""
    out: dict[str, list[int]] = {"cuda": [], "npu": []}
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return out
    for node in ast.walk(tree):
        style = None
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            m = _DEVICE.match(node.value)
            style = m.group(1) if m else None
        elif isinstance(node, ast.JoinedStr) and node.values:
            head = node.values[0]
            if isinstance(head, ast.Constant) and isinstance(head.value, str):
                m = _HEAD.match(head.value)
                style = m.group(1) if m else None
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("cuda", "npu")
        ):
            style = node.func.attr
        if style is not None:
            out[style].append(node.lineno)  # type: ignore[attr-defined]
    return out


def mixed(text: str) -> dict[str, list[int]] | None:
    found = styles(text)
    return found if found["cuda"] and found["npu"] else None


def texts(root: Path) -> dict[str, str]:
    out = {}
    for f in sorted(root.rglob("*.py")):
        try:
            out[str(f.relative_to(root))] = f.read_text(encoding="utf-8-sig")
        except (OSError, UnicodeDecodeError):
            continue
    return out


def fix_run(
    base: Path,
    work: Path,
    original: dict[str, str],
    had: set[str],
    unsafe: bool,
    env: dict[str, str],
) -> Run:
    shutil.copytree(base, work)
    flags = ["--unsafe-fixes"] if unsafe else []
    out = Run()
    rc, stdout, err, out.seconds = run(
        [*ASCEND_LENS, "check", ".", "--fix", "--format", "json", *flags, *COMMON], work, env
    )
    what = "check --fix" + (" --unsafe-fixes" if unsafe else "")
    if (c := crashed(what, rc, err)) is not None:
        out.crashes.append(c)
        return out
    for d in json.loads(stdout or "[]"):
        out.remaining[str(d["code"])] += 1
    rc, diff, err, _ = run([*ASCEND_LENS, "check", ".", "--diff", *flags, *COMMON], work, env)
    if (c := crashed(what.replace("--fix", "--diff"), rc, err)) is not None:
        out.crashes.append(c)
    m = re.search(r"Would fix (\d+)", err)
    out.left_fixable = int(m.group(1)) if m else 0
    out.left_files = sorted(set(re.findall(r"^--- (?:\./)?(.+)$", diff, re.M)))
    after = texts(work)
    for path, before in original.items():
        now = after.get(path, before)
        if now == before:
            continue
        out.changed += 1
        if compiles(before, path) and not compiles(now, path):
            out.broken.append(path)
        if path not in had:
            out.unprompted.append(path)
        if mixed(before) is None and (found := mixed(now)) is not None:
            out.half.append(f"{path} (cuda at {found['cuda'][:6]}, npu at {found['npu'][:6]})")
    return out


def sweep(repo: Repo, env: dict[str, str]) -> Result:
    with tempfile.TemporaryDirectory(prefix="migsweep-") as tmp:
        base = Path(tmp) / "base"
        base.mkdir()
        res = Result(repo.name, export(repo, base))
        original = texts(base)
        res.files = len(original)
        res.lines = sum(len(t.splitlines()) for t in original.values())
        rc, _, err, res.ruff_s = run(
            [RUFF, "check", "--select", "ALL", "--no-cache", "--exit-zero", "-q", "."], base, env
        )
        rc, stdout, err, res.check_s = run(
            [*ASCEND_LENS, "check", ".", "--format", "json", *COMMON], base, env
        )
        if (c := crashed("check", rc, err)) is not None:
            res.crashes.append(c)
        had: set[str] = set()
        for d in json.loads(stdout or "[]") if c is None else []:
            code = str(d["code"])
            res.findings[code] += 1
            path = str(d["path"]).removeprefix("./")
            if code.startswith("NPU"):
                had.add(path)
                res.listed.append(f"{path}:{d['line']}:{d['column']} {code} {d['message']}")
            else:
                had.add(path)
        for label, unsafe in (("safe", False), ("unsafe", True)):
            res.runs[label] = fix_run(base, Path(tmp) / label, original, had, unsafe, env)
            res.crashes += res.runs[label].crashes
        return res


def by_code(c: Counter[str]) -> str:
    return ", ".join(f"{k} {v}" for k, v in sorted(c.items())) or "-"


def section(label: str, found: list[Result]) -> list[str]:
    lines = [f"## {label}", "", results.measured_on() + ".", ""]
    rows = []
    for r in found:
        s, u = r.runs.get("safe", Run()), r.runs.get("unsafe", Run())
        rows.append(
            (
                r.repo,
                r.commit[:12],
                f"{r.files:,}",
                f"{r.lines:,}",
                by_code(r.findings),
                f"{s.changed} / {u.changed}",
                f"{len(s.broken)} / {len(u.broken)}",
                f"{s.left_fixable} / {u.left_fixable}",
                f"{len(s.half)} / {len(u.half)}",
                f"{len(s.unprompted)} / {len(u.unprompted)}",
                len(r.crashes),
                by_code(s.remaining),
            )
        )
    total: Counter[str] = sum((r.findings for r in found), Counter())
    left: Counter[str] = sum(
        (r.runs["safe"].remaining for r in found if "safe" in r.runs), Counter()
    )

    def both(f: str) -> str:
        a = sum(
            getattr(r.runs.get("safe", Run()), f)
            if f in ("changed", "left_fixable")
            else len(getattr(r.runs.get("safe", Run()), f))
            for r in found
        )
        b = sum(
            getattr(r.runs.get("unsafe", Run()), f)
            if f in ("changed", "left_fixable")
            else len(getattr(r.runs.get("unsafe", Run()), f))
            for r in found
        )
        return f"{a} / {b}"

    rows.append(
        (
            "total",
            "",
            f"{sum(r.files for r in found):,}",
            f"{sum(r.lines for r in found):,}",
            by_code(total),
            both("changed"),
            both("broken"),
            both("left_fixable"),
            both("half"),
            both("unprompted"),
            sum(len(r.crashes) for r in found),
            by_code(left),
        )
    )
    headers = (
        "repository",
        "commit",
        "files",
        "lines",
        "findings",
        "changed by fix (safe / unsafe)",
        "no longer compile",
        "fixable left",
        "half moved",
        "changed without finding",
        "crashes",
        "left after safe fix",
    )
    lines += results.table(headers, rows, text=(0, 1, 4, 5, 6, 7, 8, 9, 11))
    lines += [
        "",
        "Time per repository, `check` (all default rules, 2 workers) against "
        "`ruff check --select ALL --no-cache` on the same tree in the same run:",
        "",
    ]
    lines += results.table(
        (
            "repository",
            "files",
            "check s",
            "ruff s",
            "check / ruff",
            "fix s (safe)",
            "fix s (unsafe)",
        ),
        [
            (
                r.repo,
                r.files,
                f"{r.check_s:.1f}",
                f"{r.ruff_s:.1f}",
                f"{r.check_s / r.ruff_s:.1f}x" if r.ruff_s else "-",
                f"{r.runs['safe'].seconds:.1f}" if "safe" in r.runs else "-",
                f"{r.runs['unsafe'].seconds:.1f}" if "unsafe" in r.runs else "-",
            )
            for r in found
        ],
    )
    for r in found:
        notes = list(r.crashes)
        for label, fr in r.runs.items():
            notes += [f"{label}: no longer compiles: {p}" for p in fr.broken]
            notes += [f"{label}: half moved: {p}" for p in fr.half]
            notes += [f"{label}: changed without a finding: {p}" for p in fr.unprompted]
            notes += [f"{label}: fixable left: {p}" for p in fr.left_files]
        if notes:
            lines += ["", f"{r.repo}:", ""] + [f"- {n}" for n in notes]
    return lines + [""]


def merge(path: Path, label: str, new: list[str]) -> list[str]:
    """The results file with the `label` section replaced (or added at the end)."""
    head = [
        "# Migration rules and `check --fix` on whole public PyTorch repositories",
        "",
        "Written by `benchmarks/migration_sweep.py` (by hand; needs local git copies). Findings",
        "count every diagnostic of the default rule set by code. The fix columns read",
        "`safe / unsafe`: `check --fix` and `check --fix --unsafe-fixes` each on its own copy.",
        "`fixable left` is what `check --diff` (same flags) would still fix on the fixed copy;",
        "`half moved`: files holding both a `cuda`-style and an `npu`-style device (string,",
        "f-string head, `.cuda()`/`.npu()`) after the fix and not before.",
        "",
    ]
    sections: dict[str, list[str]] = {}
    preamble = True
    if path.exists():
        current: str | None = None
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.startswith("## "):
                current = line[3:]
                sections[current] = []
                preamble = False
            if current is not None:
                sections[current].append(line)
            elif not preamble:
                pass
    sections[label] = new
    out = list(head)
    for body in sections.values():
        out += body
        if out[-1] != "":
            out.append("")
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mirrors", type=Path, default=Path("/work/.mirror"))
    ap.add_argument("--only", action="append", default=[], metavar="NAME")
    ap.add_argument(
        "--round",
        type=int,
        default=1,
        help="which set of repositories (1: session 6, 2: session 29)",
    )
    ap.add_argument("--label", default="latest")
    ap.add_argument("--list", type=Path, metavar="FILE", help="write every NPU finding here")
    ap.add_argument("--dry", action="store_true", help="print, do not write the .md")
    ap.add_argument(
        "--checker",
        type=Path,
        metavar="DIR",
        help="run the checker from this source tree (holding server/ and ascend_lens/)",
    )
    args = ap.parse_args()
    env = dict(os.environ)
    if args.checker is not None:
        env["PYTHONPATH"] = f"{args.checker / 'server'}{os.pathsep}{args.checker}"
    found: list[Result] = []
    for repo in REPOS:
        if args.only and repo.name not in args.only:
            continue
        if not args.only and repo.round != args.round:
            continue
        repo.git_dir = args.mirrors / repo.mirror / "repo"
        if not repo.git_dir.exists():
            print(f"skipped {repo.name}: no git directory at {repo.git_dir}", file=sys.stderr)
            continue
        found.append(sweep(repo, env))
        r = found[-1]
        print(
            f"{r.repo}: {r.files} files, {by_code(r.findings)}, crashes {len(r.crashes)}, "
            f"check {r.check_s:.1f}s ruff {r.ruff_s:.1f}s",
            file=sys.stderr,
        )
    if args.list is not None:
        args.list.write_text(
            "".join(f"{r.repo}/{e}\n" for r in found for e in r.listed), encoding="utf-8"
        )
    lines = section(args.label, found)
    if args.dry:
        print("\n".join(lines))
        return 0
    out = HERE / "migration_sweep.md"
    return results.write(__file__, merge(out, args.label, lines))


if __name__ == "__main__":
    raise SystemExit(main())
