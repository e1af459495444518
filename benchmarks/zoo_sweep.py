"""Graph-mode check of public MindSpore model zoos: errors at lax and strict, other findings by code.

By hand only (CI has no network). The zoos come from local git directories (bare clones or
mirrors; `git clone --mirror https://github.com/mindspore-lab/mindcv` gives one). Each zoo's
Python files at HEAD (or only the listed folders) are exported with `git archive` into a
temporary folder and checked with `ascend-lens check --format json --no-config --no-cache`,
once at `--syntax-level lax` and once at `strict`. A zoo with several independent projects
(mindspore-ai/models: one `src/` package per model) is checked project by project, so two
models' `src.utils` never resolve into each other.

    .venv/bin/python benchmarks/zoo_sweep.py --mirrors /work/.mirror --label after
    git archive OLD_COMMIT server ascend_lens | tar -x -C /tmp/old
    .venv/bin/python benchmarks/zoo_sweep.py --checker /tmp/old --label "before (OLD_COMMIT)"
    .venv/bin/python benchmarks/zoo_sweep.py --only "other projects" --other 2024-MindSpore-1+Code2

`--mirrors DIR` holds `<owner>+<name>/repo` git directories (the layout the code index's
`fetch` writes); `--zoo NAME=GITDIR` adds or overrides one. The results go to zoo_sweep.md
beside this script, as a section named by `--label`; sections with other labels are kept,
so a `before` and an `after` sweep sit side by side. Every error and graph-mode warning is
listed below the table, to be judged. Progress goes to stderr as each project is checked (both
levels), with every error and graph-mode warning as it is found, so a long sweep that is
stopped early still shows what it found.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import results

HERE = Path(__file__).resolve().parent
ASCEND_LENS = [sys.executable, "-m", "ascend_lens"]

@dataclass
class Zoo:
    name: str
    mirror: str
    #: folders whose sub-folders are independent projects, each checked on its own (None:
    #: the whole repository is one project)
    parents: list[str] | None = None
    #: with `parents`: keep every `every`-th project (in sorted order), to sample big zoos
    every: int = 1
    #: with `every`: keep the other projects instead (the ones `every` leaves out)
    rest: bool = False
    #: folders of the repository to check (None: all of it)
    only: list[str] | None = None
    #: more project folders checked one by one, besides the sub-folders of `parents` (a
    #: project that sits beside folders of projects, or the only one of its parent)
    projects: list[str] = field(default_factory=list)
    #: more repositories (mirror names), each checked as one project in a folder of its own
    #: named after it; with them `mirror` is only the first
    mirrors: list[str] = field(default_factory=list)
    git_dir: Path | None = None
    folders: list[str] = field(default_factory=list)


#: Other people's MindSpore projects from the code index (course work, paper reproductions,
#: competition code), fetched with the index's `fetch` into `--mirrors`: `<mirror>` is one
#: project, `<mirror>/*` has one project per top-level folder, `<mirror>/*/*` one per folder
#: below those (collections of several people's projects).
OTHERS = [
    "2023-MindSpore-4+Code12/*/*",
    "2023-MindSpore-4+Code4/*",
    "2024-MindSpore-1+Code10/*",
    "2024-MindSpore-1+Code2/*/*",
    "2024-MindSpore-1+Code3/*",
    "2024-MindSpore-1+Code7/*",
    "Blues-star+pointRCNN_mindspore",
    "ElcarimQAQ+HDN_mindspore",
    "EliwiiKeeya+RWKV7_Mindspore",
    "GCKt+GSCNN_mindspore",
    "JoegameZhou+F-Conv_MindSpore",
    "Kahsolt+MindSpore-2024-AI-model-develop-challenge",
    "KimJisso0610+ConvLSTM_MindSpore",
    "LeVoyageur1222+FEDformer_MindSpore",
    "MindSpore-paper-code-2+code3/*",
    "MysticFace-0+st_gcn_mindspore",
    "Rogersiy+bisenetv2_mindspore",
    "Tangzl7+tracktor_for_mindspore",
    "TianTianSuper+MaskTextSpotter-MindSpore",
    "Winfred666+Mindspore-BERT-NER",
    "ZJUT-ERCISS+fairmot_mindspore",
    "ZJUT-ERCISS+r2plus1d_mindspore",
    "dmcv-ecnu+MindSpore_ModelZoo/*",
    "eaginilir+SparseTSF_mindspore",
    "hyliu-nlp+LUKE_mindspore",
    "jerry-njucs+nanoGPT_MindSpore",
    "jiamny+Deep_learning_with_MindSpore",
    "kill2013110+YOLOv1_mindspore",
    "liu0haha123+HW_mindspore",
    "lvyufeng+DuConv_mindspore",
    "lvyufeng+elmo_mindspore",
    "mindspore-courses+External-Attention-MindSpore",
    "mindspore-courses+MindSpore-GAN",
    "spencerr221+svtr_mindspore",
    "tyolm+groupfree3d_mindspore",
    "viewsetting+MindSpore-GPT2",
    "wuyongfa-genius+SSVOS_mindspore",
    "yanan0122+DBnetpp_mindspore",
    "yym68686+ACL-DGReID-mindspore",
    "zhangzw12319+DDAG_mindspore",
    "zhanghuiyao+yolov7_mindspore",
]
#: folders of those left out: copies of a model zoo swept above
OTHERS_SKIP = {
    "dmcv-ecnu+MindSpore_ModelZoo/few-shot-meta-baseline_mindspore",  # all of mindspore-ai/models
    "2023-MindSpore-4+Code12/MindFormers",
}

ZOOS = [
    Zoo("mindcv", "mindspore-lab+mindcv"),
    Zoo("mindyolo", "mindspore-lab+mindyolo"),
    Zoo("mindocr", "mindspore-lab+mindocr"),
    Zoo("mindformers", "mindspore-lab+mindformers"),
    Zoo(
        "models/official",
        "mindspore-ai+models",
        ["official/cv", "official/nlp", "official/audio", "official/recommend"],
    ),
    Zoo("models/research (every 6th)", "mindspore-ai+models", ["research/cv", "research/nlp"], 6),
    Zoo(
        "models/research (the other 5/6)", "mindspore-ai+models", ["research/cv", "research/nlp"], 6,
        rest=True,
    ),
    Zoo("mindnlp", "mindspore-lab+mindnlp"),
    Zoo("mindaudio", "mindspore-lab+mindaudio"),
    # mindspore-lab/mindone's snapshot is too large for the index's fetch; a fork of it
    # (zhtmike/mindone, Nov 2025) is not. The library package is one project; the examples
    # are projects of their own.
    Zoo("mindone", "zhtmike+mindone", only=["mindone"]),
    Zoo("mindone/examples", "zhtmike+mindone", ["examples"]),
    Zoo("other projects", "", mirrors=OTHERS),
    # session 30 (zoo31): mindspore-lab's smaller libraries, each one project, and
    # mindspore-courses/applications (one tutorial model per top-level folder)
    Zoo("mindediting", "mindspore-lab+mindediting"),
    Zoo("mindface", "mindspore-lab+mindface"),
    Zoo("mindpose", "mindspore-lab+mindpose"),
    Zoo("minddet", "mindspore-lab+minddet"),
    Zoo("mindspore-courses/applications", "", mirrors=["mindspore-courses+applications/*"]),
    # session 31 (zoo32): mindspore-lab/models (not mindspore-ai/models: a newer zoo of
    # university and lab projects, one per folder below an organisation's folder; xidian's
    # 108 projects sampled every 3rd), minddiffusion (one model per folder of vision/),
    # mindrlhf, mindpet, cambrian_mindspore (a user port of Cambrian-1), and mindscience's
    # six products (one project per folder below each: libraries and applications)
    Zoo(
        "mindspore-lab/models",
        "mindspore-lab+models",
        ["official/cv", *(f"research/{o}" for o in (
            "BUAA", "EdinU", "USTC", "ZJU", "arxiv_papers", "huawei-gts", "huawei-noah",
            "huawei-ostd", "huawei", "marigold"))],
    ),
    Zoo("mindspore-lab/models xidian (every 3rd)", "mindspore-lab+models", ["research/xidian"], 3),
    Zoo("minddiffusion", "mindspore-lab+minddiffusion", ["vision"]),
    Zoo("mindrlhf", "mindspore-lab+mindrlhf"),
    Zoo("mindpet", "mindspore-lab+mindpet"),
    Zoo("cambrian_mindspore", "zhanghuiyao+cambrian_mindspore"),
    Zoo(
        "mindscience",
        "mindspore-ai+mindscience",
        ["MindSPONGE", "MindFlow", "MindEarth", "MindChemistry", "MindElec", "SciAI"],
    ),
    # session 32 (zoo33): what zoo32 left of mindspore-lab/models (marigold as one project),
    # xidian's other two thirds, and mindscience's applications, one project per folder
    # (MindFlow and MindEarth group theirs by kind)
    Zoo(
        "mindspore-lab/models (rest)",
        "mindspore-lab+models",
        projects=["research/huawei-ostd/PGNet", "research/huawei/GaoYaoEval", "research/marigold"],
    ),
    Zoo(
        "mindspore-lab/models xidian (the other 2/3)", "mindspore-lab+models", ["research/xidian"], 3,
        rest=True,
    ),
    Zoo(
        "mindscience applications",
        "mindspore-ai+mindscience",
        [*(f"MindFlow/applications/{k}" for k in (
            "cfd", "data_driven", "data_mechanism_fusion", "physics_driven", "research")),
         "MindSPONGE/applications/research", "MindChemistry/applications",
         *(f"MindEarth/applications/{k}" for k in ("climate-prediction", "medium-range", "nowcasting"))],
        projects=["MindFlow/applications/pdeformer1d", "MindSPONGE/applications/common_utils",
                  "MindEarth/applications/dem-super-resolution", "MindEarth/applications/earthquake"],
    ),
    # found with the code index in session 32 (zoo33): mindspore-lab/mindrl (reinforcement
    # learning library and examples), mindspore-ai/graphlearning (GNN library, model zoo),
    # mindspore-courses/step_into_llm (one course chapter per folder)
    Zoo("mindrl", "mindspore-lab+mindrl"),
    Zoo("graphlearning", "mindspore-ai+graphlearning"),
    Zoo("step_into_llm", "", mirrors=["mindspore-courses+step_into_llm/*/*"]),
    # the six products' libraries only, as one project (their packages have distinct names)
    Zoo(
        "mindscience (libraries)",
        "mindspore-ai+mindscience",
        only=["MindSPONGE/src", "MindFlow/mindflow", "MindEarth/mindearth", "MindChemistry/mindchemistry",
              "MindElec/mindelec", "SciAI/sciai"],
    ),
]


@dataclass
class Result:
    zoo: str
    commit: str
    projects: int = 1
    files: int = 0
    lines: int = 0
    errors: dict[str, int] = field(default_factory=dict)
    warnings: dict[str, Counter[str]] = field(default_factory=dict)
    listed: dict[str, list[str]] = field(default_factory=dict)


def git(git_dir: Path, *args: str) -> bytes:
    return subprocess.run(
        ["git", f"--git-dir={git_dir}", *args], check=True, capture_output=True
    ).stdout


def export(zoo: Zoo, dest: Path) -> str:
    """The zoo's .py files (and pyproject.toml files) at HEAD into `dest`; the commit. Sets
    `zoo.folders` to the projects checked one by one (with `parents`)."""
    assert zoo.git_dir is not None
    commit = git(zoo.git_dir, "rev-parse", "HEAD").decode().strip()
    if zoo.parents:
        found = git(zoo.git_dir, "ls-tree", "-d", "--name-only", "HEAD", *(f"{p}/" for p in zoo.parents))
        every = sorted(found.decode().splitlines())
        picked = every[zoo.every - 1 :: zoo.every]
        zoo.folders = [f for f in every if f not in picked] if zoo.rest else picked
    zoo.folders += zoo.projects
    export_tree(zoo.git_dir, zoo.folders or zoo.only or [], dest)
    return commit


def export_tree(git_dir: Path, folders: list[str], dest: Path) -> None:
    names = git(git_dir, "ls-tree", "-r", "--name-only", "HEAD", *folders)
    paths = [
        p for p in names.decode().splitlines() if p.endswith(".py") or p.endswith("pyproject.toml")
    ]
    dest.mkdir(parents=True, exist_ok=True)
    for start in range(0, len(paths), 500):  # keep the argument list short
        archive = git(git_dir, "archive", "HEAD", *paths[start : start + 500])
        subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)


def export_many(zoo: Zoo, mirrors: Path, dest: Path) -> str:
    """Each of `zoo.mirrors` into `dest/<mirror>`; sets `zoo.folders` to the projects found."""
    zoo.folders = []
    fetched = 0
    for spec in zoo.mirrors:
        name, _, pattern = spec.partition("/")
        git_dir = mirrors / name / "repo"
        if not git_dir.exists():
            print(f"skipped {name}: no git directory at {git_dir}", file=sys.stderr)
            continue
        fetched += 1
        projects = [""]
        for _ in pattern.split("/") if pattern else ():
            below = [
                line
                for p in projects
                for line in git(git_dir, "ls-tree", "-d", "--name-only", "HEAD", *([f"{p}/"] if p else []))
                .decode().splitlines()
            ]
            projects = sorted(p for p in below if f"{name}/{p}" not in OTHERS_SKIP)
        export_tree(git_dir, [p for p in projects if p], dest / name)
        zoo.folders += [f"{name}/{p}" if p else name for p in projects]
    return f"{fetched} repositories"


def check(root: Path, level: str, env: dict[str, str]) -> list[dict[str, object]]:
    proc = subprocess.run(
        [*ASCEND_LENS, "check", ".", "--format", "json", "--no-config", "--no-cache", "-q",
         "--syntax-level", level],
        cwd=root, capture_output=True, text=True, env=env,
    )
    if proc.returncode not in (0, 1):
        raise SystemExit(f"check failed in {root}: {proc.stderr}")
    found: list[dict[str, object]] = json.loads(proc.stdout or "[]")
    return found


def sweep(zoo: Zoo, env: dict[str, str], mirrors: Path) -> Result:
    with tempfile.TemporaryDirectory(prefix="zoo-") as tmp:
        root = Path(tmp)
        res = Result(zoo.name, export_many(zoo, mirrors, root) if zoo.mirrors else export(zoo, root))
        files = list(root.rglob("*.py"))
        res.files = len(files)
        res.lines = sum(len(f.read_bytes().splitlines()) for f in files)
        by_project = zoo.parents or zoo.projects or zoo.mirrors
        roots = [root / p for p in zoo.folders if (root / p).is_dir()] if by_project else [root]
        res.projects = len(roots)
        for level in ("lax", "strict"):
            res.errors[level] = 0
            res.warnings[level] = Counter()
            res.listed[level] = []
        started = time.monotonic()
        # project by project, both levels, so a long sweep shows what it found as it goes
        for n, proj in enumerate(roots, 1):
            counts: dict[str, int] = {}
            for level in ("lax", "strict"):
                before = len(res.listed[level])
                for d in check(proj, level, env):
                    code = str(d["code"])
                    where = (proj / str(d["path"])).relative_to(root)
                    entry = f"{where}:{d['line']}:{d['column']} {code} {d['message']}"
                    if d["severity"] == "error":
                        res.errors[level] += 1
                        res.listed[level].append(entry)
                    else:
                        res.warnings[level][code] += 1
                        if code.startswith("MS"):  # graph-mode warnings are listed to be judged
                            res.listed[level].append(entry)
                new = res.listed[level][before:]
                counts[level] = len(new)
                for entry in new:
                    print(f"  {level}: {entry}", file=sys.stderr, flush=True)
            name = proj.relative_to(root).as_posix() if proj != root else zoo.name
            print(
                f"[{zoo.name} {n}/{len(roots)} {time.monotonic() - started:.0f}s] {name}: "
                f"listed lax {counts['lax']}, strict {counts['strict']}",
                file=sys.stderr, flush=True,
            )
        return res


def section(label: str, found: list[Result]) -> list[str]:
    lines = [f"## {label}", "", results.measured_on() + ".", ""]

    def by_code(c: Counter[str]) -> str:
        return ", ".join(f"{k} {v}" for k, v in sorted(c.items())) or "-"

    rows = [
        (r.zoo, r.commit[:12] if len(r.commit) == 40 else r.commit, r.projects, f"{r.files:,}", f"{r.lines:,}", r.errors["lax"],
         r.errors["strict"], by_code(r.warnings["lax"]), by_code(r.warnings["strict"]))
        for r in found
    ]
    total = (
        "total", "", sum(r.projects for r in found), f"{sum(r.files for r in found):,}", f"{sum(r.lines for r in found):,}",
        sum(r.errors["lax"] for r in found), sum(r.errors["strict"] for r in found),
        by_code(sum((r.warnings["lax"] for r in found), Counter())),
        by_code(sum((r.warnings["strict"] for r in found), Counter())),
    )
    headers = ("zoo", "commit", "projects", "files", "lines", "errors lax", "errors strict",
               "other findings lax", "other findings strict")
    lines += results.table(headers, [*rows, total], text=(0, 1, 7, 8))
    for r in found:
        for level in ("lax", "strict"):
            if r.listed[level]:
                lines += ["", f"Errors and graph-mode warnings in {r.zoo} at {level}:", ""]
                lines += [f"- `{e}`" for e in r.listed[level]]
    return lines + [""]


def merge(path: Path, label: str, new: list[str]) -> list[str]:
    """The results file with the `label` section replaced (or added at the end)."""
    head = [
        "# Graph-mode check on public MindSpore model zoos",
        "",
        "Written by `benchmarks/zoo_sweep.py` (by hand; needs local git copies of the zoos).",
        "Errors count every error diagnostic, including the repetition of an error at the call",
        "that compiles it. Other findings (warning and info severity, any family: graph-mode",
        "warnings, and migration findings on the zoos' few PyTorch scripts) are counted by code.",
        "mindspore-ai/models is checked project by project (each model folder has its own `src`).",
        "",
    ]
    sections: dict[str, list[str]] = {}
    if path.exists():
        current: str | None = None
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.startswith("## "):
                current = line[3:]
                sections[current] = []
            if current is not None:
                sections[current].append(line)
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
    ap.add_argument("--zoo", action="append", default=[], metavar="NAME=GITDIR")
    ap.add_argument("--only", action="append", default=[], metavar="NAME")
    ap.add_argument(
        "--other", action="append", default=[], metavar="MIRROR",
        help="with `--only 'other projects'`: sweep only these repositories of OTHERS (mirror "
        "names such as 2024-MindSpore-1+Code2); the zoo is then named after them",
    )
    ap.add_argument("--label", default="latest")
    ap.add_argument(
        "--checker", type=Path, metavar="DIR",
        help="run the checker from this source tree (holding server/ and ascend_lens/), e.g. an "
        "older commit exported with `git archive`, for a before/after comparison",
    )
    args = ap.parse_args()
    env = dict(os.environ)
    if args.checker is not None:
        env["PYTHONPATH"] = f"{args.checker / 'server'}{os.pathsep}{args.checker}"
    overrides = dict(z.split("=", 1) for z in args.zoo)
    found: list[Result] = []
    for zoo in ZOOS:
        if args.only and zoo.name not in args.only:
            continue
        if zoo.mirrors and args.other:
            zoo.mirrors = [m for m in zoo.mirrors if m.partition("/")[0] in args.other]
            zoo.name = f"other projects ({', '.join(args.other)})"
        if not zoo.mirrors:
            zoo.git_dir = Path(overrides.get(zoo.name, args.mirrors / zoo.mirror / "repo"))
            if not zoo.git_dir.exists():
                print(f"skipped {zoo.name}: no git directory at {zoo.git_dir}", file=sys.stderr)
                continue
        found.append(sweep(zoo, env, args.mirrors))
        print(f"{zoo.name}: errors {found[-1].errors}", file=sys.stderr)
    out = HERE / "zoo_sweep.md"
    return results.write(__file__, merge(out, args.label, section(args.label, found)))


if __name__ == "__main__":
    raise SystemExit(main())
