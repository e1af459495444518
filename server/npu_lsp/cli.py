"""`ascend-lens check PATH... [--format text|json|sarif] [--select CODES] [--ignore CODES]
[--syntax-level strict|lax] [--fix | --diff] [--unsafe-fixes] [--jobs N] [--no-cache]
[--statistics] [--quiet]`: the engine over files and folders (discovery in `discovery.py`,
the repository run with its worker processes and cache in `workspace.py`, fixes in
`fixing.py`).

Exit status (as `ruff check`): 0 when nothing is found, 1 when anything is found, 2 on a
usage or I/O error (bad option, unknown rule code, missing or unreadable path, a special
file). Files skipped inside folders (unreadable, special, over `max-file-size`) are listed
on stderr, one line each. Notebooks (.ipynb) are checked cell by cell, as the editor does.
With `--fix`, 1 when problems remain after fixing; with `--diff`, 1 when a file would
change (`npu_lsp.fixing`).
"""

from __future__ import annotations

import argparse
import os
import stat
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, replace
from pathlib import Path

from npu_lsp.config import Config, load_config
from npu_lsp.diagnostics import Diagnostic
from npu_lsp.discovery import discover, report_into
from npu_lsp.files import is_checkable
from npu_lsp.filetypes import claimed
from npu_lsp.output import RENDERERS, render_statistics
from npu_lsp.parallel import WorkerFailed, default_jobs
from npu_lsp.progress import Progress
from npu_lsp.warm import Miss, Stats, answer, look_up, project_root

# The rules, the engine and the repository run (`workspace`) are imported only when a file
# has to be checked: a run the cache answers (`warm.answer`) needs none of them.


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
    p.add_argument("--fix", action="store_true", help="apply fixes to the files, in place")
    p.add_argument(
        "--diff",
        action="store_true",
        help="print the fixes as a unified diff instead of writing them (exit 1 if any)",
    )
    p.add_argument("--unsafe-fixes", action="store_true", help="also apply fixes marked unsafe")
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
    from npu_lsp.registry import load_all

    rules = load_all()
    codes = tuple(c.strip().upper() for c in raw.split(",") if c.strip())
    for c in codes:
        if c != "ALL" and not any(code.startswith(c) for code in rules):
            raise UsageError(f"{flag}: unknown rule code or prefix {c!r}")
    return codes


def _is_target(path: Path) -> bool:
    """A file of a folder `check` looks at: Python sources, notebooks, and the files a rule
    family claims (`filetypes`: the matchers the families register)."""
    if path.suffix in (".py", ".pyi", ".ipynb"):
        return True
    try:
        return claimed(str(path))
    except Exception:
        return False


def _collect(
    paths: list[str], config: Config, skipped: list[str], stats: dict[str, os.stat_result]
) -> list[Path]:
    """The files to check. A named path that cannot be read at all is a UsageError (exit 2);
    files and folders inside that cannot be read, special files and files over the size
    limit are appended to `skipped` ("path: reason") and left out. Each file's `os.stat`
    goes to `stats` (by `str` of its path): the cache's stamps are taken from them."""
    files: list[Path] = []
    limit = config.max_file_size

    for raw in paths:
        p = Path(raw)
        try:
            st = p.stat()
        except FileNotFoundError:
            raise UsageError(f"{raw}: no such file or directory") from None
        except OSError as exc:
            raise UsageError(f"{raw}: {exc.strerror or exc}") from None
        if stat.S_ISDIR(st.st_mode):
            try:
                os.listdir(p)
            except OSError as exc:
                raise UsageError(f"{raw}: cannot read folder: {exc.strerror or exc}") from None
            suffixes = (".py", ".pyi", ".json", ".ipynb")
            files.extend(
                discover(
                    [p],
                    config.exclude,
                    suffixes,
                    _is_target,
                    limit=limit,
                    stats=stats,
                    **report_into(skipped),
                )
            )
            continue
        reason = is_checkable(p, limit)
        if reason is not None and not stat.S_ISREG(st.st_mode):
            raise UsageError(f"{raw}: {reason}")
        if reason is not None:
            skipped.append(f"{raw}: {reason}")
            continue
        try:  # a named file we may not read is an I/O error, not a finding
            os.close(os.open(p, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)))
        except OSError as exc:
            raise UsageError(f"{raw}: {exc.strerror or exc}") from None
        stats[str(p)] = st
        files.append(p)
    return files


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
    stamped_at = time.time_ns()  # before the first `stat` of a file (see `cache.trusted`)
    args = _parser().parse_intermixed_args(list(argv))
    paths = args.paths or ["."]
    config = _config(args, paths)
    skipped: list[str] = []
    stats: dict[str, os.stat_result] = {}
    files = _collect(paths, config, skipped, stats)
    if not args.quiet:
        for entry in skipped:
            sys.stderr.write(f"ascend-lens check: skipped {entry}\n")
    root = config.root or os.getcwd()
    notebooks = [f for f in files if f.suffix == ".ipynb"]
    if args.fix or args.diff:
        return _fix(files, config, root, args)
    progress = None if args.quiet else Progress.for_stream(sys.stderr)
    # notebooks: against the run's index of every summary (they import the project)
    by_file: dict[str, list[tuple[str, Diagnostic]]] = {}
    sources = [str(f) for f in files if f.suffix != ".ipynb"]
    try:
        t0 = time.perf_counter()
        lookup = look_up(
            sources,
            config,
            root,
            None if args.no_cache else project_root(config),
            stats=[stats.get(p) for p in sources],
            stamped_at=stamped_at,
        )
        _RETAINED.append(lookup)
        try:
            found = Stats(
                files=len(sources), read=lookup.read, cache="off" if lookup.cache is None else "on"
            )
            checked = answer(lookup, sources, [str(n) for n in notebooks], config, by_file, found)
            found.seconds = time.perf_counter() - t0
            if progress is not None:
                progress(len(sources), len(sources), "checked")
        except Miss:
            from npu_lsp.workspace import check_files

            by_file.clear()
            checked, found = check_files(
                sources,
                config,
                root,
                jobs=args.jobs or default_jobs(),
                cache_root=None if args.no_cache else project_root(config),
                progress=progress,
                notebooks=notebooks,
                notebook_results=by_file,
                keep=_RETAINED,
                lookup=lookup,
            )
    finally:
        if progress is not None:
            progress.finish()
    if args.timings:
        import json

        sys.stderr.write(json.dumps(asdict(found)) + "\n")
    for p, diags in checked:
        by_file.setdefault(p, []).extend((p, d) for d in diags)
    results = [r for f in files for r in by_file.pop(str(f), [])]
    if args.statistics:
        sys.stdout.write(render_statistics(results))
    else:
        sys.stdout.write(RENDERERS[args.format](results))
    sys.stdout.flush()
    return 1 if results else 0


def _fix(files: list[Path], config: Config, root: str, args: argparse.Namespace) -> int:
    """`--fix` / `--diff`: fix rounds re-check the text on the in-process index."""
    from npu_lsp.engine import WorkspaceIndex
    from npu_lsp.fixing import run_fix
    from npu_lsp.registry import load_all

    load_all()
    workspace = WorkspaceIndex.from_paths(
        [f for f in files if f.suffix in (".py", ".pyi")], root=root, limit=config.max_file_size
    )
    return run_fix(
        files,
        config,
        workspace,
        unsafe=args.unsafe_fixes,
        diff=args.diff,
        render=RENDERERS[args.format],
        text_format=args.format == "text",
    )


#: What a check run built, kept for `main` to exit without freeing it.
_RETAINED: list[object] = []


def main(argv: Sequence[str] | None = None) -> int:
    try:
        code = run(sys.argv[1:] if argv is None else argv)
    except UsageError as exc:
        sys.stderr.write(f"ascend-lens check: error: {exc}\n")
        return 2
    except OSError as exc:  # an I/O failure is no finding: one line, status 2
        sys.stderr.write(f"ascend-lens check: error: {exc}\n")
        return 2
    except WorkerFailed as exc:
        sys.stderr.write(f"ascend-lens check: error: {exc}; try --jobs 1\n")
        return 2
    except KeyboardInterrupt:
        return 130
    if _RETAINED:
        # Freeing a repository's trees and summaries object by object costs about a tenth
        # of a cold run's CPU; the process ends here, so let its exit free the memory.
        # (The workers are gone; nothing else is pending: the cache is written, the
        # output flushed.)
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    return code


if __name__ == "__main__":
    sys.exit(main())
