"""`ascend-lens check PATH... [--format text|json|sarif] [--select CODES] [--ignore CODES]
[--syntax-level strict|lax] [--fix | --diff] [--unsafe-fixes]`: the engine over files and folders.

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
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from npu_lsp.config import Config, load_config
from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import LANGUAGES, WorkspaceIndex, check_path, iter_python_files
from npu_lsp.files import is_checkable
from npu_lsp.fixing import run_fix
from npu_lsp.notebook_file import check_notebook_file
from npu_lsp.output import RENDERERS
from npu_lsp.registry import RULES, load_all


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
    return p


def _codes(raw: str | None, flag: str) -> tuple[str, ...] | None:
    if raw is None:
        return None
    codes = tuple(c.strip().upper() for c in raw.split(",") if c.strip())
    for c in codes:
        if c != "ALL" and not any(code.startswith(c) for code in RULES):
            raise UsageError(f"{flag}: unknown rule code or prefix {c!r}")
    return codes


def _is_target(path: Path) -> bool:
    return path.suffix in (".py", ".pyi", ".ipynb") or any(
        _safe(m, str(path)) for m, _ in LANGUAGES
    )


def _safe(matcher: object, path: str) -> bool:
    try:
        return bool(matcher(path))  # type: ignore[operator]
    except Exception:
        return False


def _collect(paths: list[str], config: Config, skipped: list[str]) -> list[Path]:
    """The files to check. A named path that cannot be read at all is a UsageError (exit 2);
    files and folders inside that cannot be read, special files and files over the size
    limit are appended to `skipped` ("path: reason") and left out."""
    files: list[Path] = []
    limit = config.max_file_size

    def unlistable(exc: OSError) -> None:
        skipped.append(f"{exc.filename}: cannot read folder: {exc.strerror or exc}")

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
            for f in iter_python_files([p], config.exclude, suffixes, on_error=unlistable):
                if not _is_target(f):
                    continue
                reason = is_checkable(f, limit)
                if reason is None:
                    files.append(f)
                else:
                    skipped.append(f"{f}: {reason}")
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
        files.append(p)
    return files


def run(argv: Sequence[str]) -> int:
    args = _parser().parse_intermixed_args(list(argv))
    load_all()
    select = _codes(args.select, "--select")
    ignore = _codes(args.ignore, "--ignore")
    paths = args.paths or ["."]
    config = Config() if args.no_config else load_config(paths[0])
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
    skipped: list[str] = []
    files = _collect(paths, config, skipped)
    for entry in skipped:
        sys.stderr.write(f"ascend-lens check: skipped {entry}\n")
    root = config.root or os.getcwd()
    workspace = WorkspaceIndex.from_paths(
        [f for f in files if f.suffix in (".py", ".pyi")], root=root, limit=config.max_file_size
    )
    if args.fix or args.diff:
        return run_fix(
            files,
            config,
            workspace,
            unsafe=args.unsafe_fixes,
            diff=args.diff,
            render=RENDERERS[args.format],
            text_format=args.format == "text",
        )
    results: list[tuple[str, Diagnostic]] = []
    for f in files:
        if f.suffix == ".ipynb":
            results.extend(check_notebook_file(f, config, workspace))
        else:
            results.extend((str(f), d) for d in check_path(f, config, workspace))
    sys.stdout.write(RENDERERS[args.format](results))
    sys.stdout.flush()
    return 1 if results else 0


def main(argv: Sequence[str] | None = None) -> int:
    try:
        return run(sys.argv[1:] if argv is None else argv)
    except UsageError as exc:
        sys.stderr.write(f"ascend-lens check: error: {exc}\n")
        return 2
    except OSError as exc:  # an I/O failure is no finding: one line, status 2
        sys.stderr.write(f"ascend-lens check: error: {exc}\n")
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
