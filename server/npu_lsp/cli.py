"""`ascend-lens check PATH... [--format text|json|sarif] [--select CODES] [--ignore CODES]
[--syntax-level strict|lax] [--jobs N] [--no-cache] [--statistics] [--quiet]`: the engine
over files and folders (discovery in `discovery.py`, the repository run with its worker
processes and cache in `workspace.py`).

Exit status (as `ruff check`): 0 when nothing is found, 1 when anything is found, 2 on a
usage error (bad option, unknown rule code, missing path).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from dataclasses import asdict, replace
from pathlib import Path

from npu_lsp.config import Config, load_config
from npu_lsp.diagnostics import Diagnostic
from npu_lsp.discovery import MissingPath, discover
from npu_lsp.engine import LANGUAGES
from npu_lsp.output import RENDERERS, render_statistics
from npu_lsp.parallel import WorkerFailed, default_jobs
from npu_lsp.progress import Progress
from npu_lsp.registry import RULES, load_all
from npu_lsp.workspace import check_files, project_root


class UsageError(Exception):
    """Bad command-line input: reported on stderr with exit status 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(message)


def _parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog="ascend-lens check",
        description="Lint Python files for MindSpore graph-mode and Ascend migration problems.",
    )
    p.add_argument("paths", nargs="*", metavar="PATH", help="files or folders (default: .)")
    p.add_argument(
        "--format", choices=sorted(RENDERERS), default="text", help="output format (default: text)"
    )
    p.add_argument(
        "--select",
        metavar="CODES",
        help="comma-separated codes or prefixes to enable (e.g. MS1,NPU201)",
    )
    p.add_argument("--ignore", metavar="CODES", help="comma-separated codes or prefixes to disable")
    p.add_argument(
        "--syntax-level",
        choices=("strict", "lax"),
        help="MindSpore JIT syntax level (overrides the code, as MS_DEV_JIT_SYNTAX_LEVEL does)",
    )
    p.add_argument("--preview", action="store_true", help="also enable preview rules")
    p.add_argument(
        "--no-config", action="store_true", help="ignore [tool.ascend-lens] in pyproject.toml"
    )
    p.add_argument(
        "--jobs",
        "-j",
        type=_jobs,
        metavar="N",
        help="worker processes (default: one per available core)",
    )
    p.add_argument(
        "--no-cache", action="store_true", help="neither read nor write .ascend-lens_cache/"
    )
    p.add_argument(
        "--statistics",
        action="store_true",
        help="print the number of diagnostics per code instead of the diagnostics",
    )
    p.add_argument("--quiet", "-q", action="store_true", help="no progress or warnings on stderr")
    # for benchmarks: one JSON line on stderr with what the run did and where time went
    p.add_argument("--timings", action="store_true", help=argparse.SUPPRESS)
    return p


def _jobs(raw: str) -> int:
    try:
        n = int(raw)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid number of jobs: {raw!r}") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"--jobs must be at least 1, not {n}")
    return n


def _codes(raw: str | None, flag: str) -> tuple[str, ...] | None:
    if raw is None:
        return None
    codes = tuple(c.strip().upper() for c in raw.split(",") if c.strip())
    for c in codes:
        if c != "ALL" and not any(code.startswith(c) for code in RULES):
            raise UsageError(f"{flag}: unknown rule code or prefix {c!r}")
    return codes


def _is_target(path: Path) -> bool:
    return path.suffix in (".py", ".pyi") or any(_safe(m, str(path)) for m, _ in LANGUAGES)


def _safe(matcher: object, path: str) -> bool:
    try:
        return bool(matcher(path))  # type: ignore[operator]
    except Exception:
        return False


def _collect(paths: list[str], config: Config) -> list[Path]:
    try:
        return discover(
            paths, config.exclude, (".py", ".pyi", ".json"), is_target=_is_target, strict=True
        )
    except MissingPath as exc:
        raise UsageError(str(exc)) from None


def _config(args: argparse.Namespace, paths: list[str]) -> Config:
    select = _codes(args.select, "--select")
    ignore = _codes(args.ignore, "--ignore")
    config = Config() if args.no_config else load_config(paths[0])
    if not args.quiet:
        for problem in config.problems:
            sys.stderr.write(f"ascend-lens: warning: {problem}\n")
    if select is not None:
        config = replace(config, select=select)
    if ignore is not None:
        config = replace(config, ignore=config.ignore + ignore)
    if args.syntax_level:
        config = replace(config, syntax_level=args.syntax_level)
    if args.preview:
        config = replace(config, preview=True)
    return config


def run(argv: Sequence[str]) -> int:
    args = _parser().parse_intermixed_args(list(argv))
    load_all()
    paths = args.paths or ["."]
    config = _config(args, paths)
    files = _collect(paths, config)
    root = config.root or os.getcwd()
    progress = None if args.quiet else Progress.for_stream(sys.stderr)
    try:
        checked, stats = check_files(
            files,
            config,
            root,
            jobs=args.jobs or default_jobs(),
            cache_root=None if args.no_cache else project_root(config),
            progress=progress,
        )
    finally:
        if progress is not None:
            progress.finish()
    if args.timings:
        sys.stderr.write(json.dumps(asdict(stats)) + "\n")
    results: list[tuple[str, Diagnostic]] = [(p, d) for p, diags in checked for d in diags]
    if args.statistics:
        sys.stdout.write(render_statistics(results))
    else:
        sys.stdout.write(RENDERERS[args.format](results))
    sys.stdout.flush()
    return 1 if results else 0


def main(argv: Sequence[str] | None = None) -> int:
    try:
        return run(sys.argv[1:] if argv is None else argv)
    except UsageError as exc:
        sys.stderr.write(f"ascend-lens check: error: {exc}\n")
        return 2
    except WorkerFailed as exc:
        sys.stderr.write(f"ascend-lens check: error: {exc}; try --jobs 1\n")
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
