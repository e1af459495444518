"""Which files a run looks at: the one place that walks folders (CLI, language server).

`discover(paths, ...)` returns regular files only, in a stable order (the order the paths
were given; inside a folder, sorted names, depth first), each once. Folders skip hidden
directories, virtual environments and build output. A file named directly is kept even
when it has no known suffix (the user asked for it); anything that is not a regular file
(a FIFO, a device, a socket, a dangling link) is never opened: opening a FIFO would block.
Checks that decide whether to look at a file at all (special files, and with `limit` the
size) are `files.refusal` applied here, on the one `stat` of each walked file.
"""

from __future__ import annotations

import fnmatch
import os
import stat
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from npu_lsp.files import refusal

SKIP_DIRS = frozenset(
    {
        "__pycache__",
        "node_modules",
        "site-packages",
        ".venv",
        "venv",
        ".git",
        ".tox",
        "build",
        "dist",
    }
)
DEFAULT_SUFFIXES = (".py", ".pyi")


class MissingPath(Exception):
    """A path given on the command line does not exist."""


def discover(
    paths: Iterable[str | os.PathLike[str]],
    exclude: Iterable[str] = (),
    suffixes: tuple[str, ...] = DEFAULT_SUFFIXES,
    is_target: Callable[[Path], bool] | None = None,
    *,
    strict: bool = False,
    on_error: Callable[[OSError], None] | None = None,
    on_skip: Callable[[Path, str], None] | None = None,
    limit: int = 0,
    stats: dict[str, os.stat_result] | None = None,
) -> list[Path]:
    """Regular files under `paths`: folders are walked for names ending in `suffixes`
    (and passing `is_target`, when given) that no `exclude` glob matches; files named
    directly are kept as given. With `strict`, a missing path raises `MissingPath`;
    otherwise it is passed through (the checker reports it unreadable). A folder that
    cannot be listed goes to `on_error`, and a special file inside a folder (or, with `limit`
    > 0, one larger than `limit` bytes) to `on_skip` with the reason (default: both silently
    skipped). With `stats`, the `os.stat` taken of each file kept goes there by `str` of its
    path (`check` stamps files with it instead of taking another)."""
    excl = tuple(exclude)
    out: list[Path] = []
    seen: set[str] = set()

    def keep(f: Path, st: os.stat_result | None = None) -> None:
        key = os.path.normpath(f)
        if key not in seen:
            seen.add(key)
            out.append(f)
            if stats is not None and st is not None:
                stats[str(f)] = st

    for raw in paths:
        p = Path(raw)
        try:
            st = p.stat()
        except OSError:
            if strict:
                raise MissingPath(f"{raw}: no such file or directory") from None
            keep(p)
            continue
        if stat.S_ISDIR(st.st_mode):
            for f, f_st in _walk(p, excl, suffixes, is_target, on_error, on_skip, limit):
                keep(f, f_st)
        elif stat.S_ISREG(st.st_mode):
            keep(p, st)
    return out


def _walk(
    root: Path,
    exclude: tuple[str, ...],
    suffixes: tuple[str, ...],
    is_target: Callable[[Path], bool] | None = None,
    on_error: Callable[[OSError], None] | None = None,
    on_skip: Callable[[Path, str], None] | None = None,
    limit: int = 0,
) -> Iterable[tuple[Path, os.stat_result]]:
    """(file, its `os.stat`) of every file kept under `root`."""
    for dirpath, dirnames, filenames in os.walk(root, onerror=on_error):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS and not d.startswith("."))
        for name in sorted(filenames):
            if not name.endswith(suffixes):
                continue
            f = Path(dirpath) / name
            if (exclude and _excluded(f, exclude)) or (is_target is not None and not is_target(f)):
                continue  # (before the stat: a file no one checks is never reported)
            try:
                st = f.stat()
            except OSError:
                continue  # a dangling link
            reason = refusal(st, limit)
            if reason is None:
                yield f, st
            elif on_skip is not None:
                on_skip(f, reason)


def report_into(skipped: list[str]) -> dict[str, Any]:
    """`on_error` and `on_skip` for `discover` that append "path: reason" lines to `skipped`
    (what `check` prints and the language server logs)."""

    def unlistable(exc: OSError) -> None:
        skipped.append(f"{exc.filename}: cannot read folder: {exc.strerror or exc}")

    def special(path: Path, reason: str) -> None:
        skipped.append(f"{path}: {reason}")

    return {"on_error": unlistable, "on_skip": special}


def _excluded(path: Path, exclude: tuple[str, ...]) -> bool:
    posix = path.as_posix()
    return any(fnmatch.fnmatch(posix, g) or fnmatch.fnmatch(path.name, g) for g in exclude)
