"""Show ACL errors and sanitizer findings as the user needs them.

A cell that fails with an AclError gets a header with the code, name, meaning, fix and
the cell line (plus the launch line when the failure surfaced at a sync), followed by the
traceback with frames from our own packages removed. The full traceback stays one step
away: `%tb` prints it, and `%config NpuKernel.full_traceback = True` makes it the default.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from collections.abc import Iterable
from types import TracebackType
from typing import Any

from npu_kernel.cells import CellLocator

_PACKAGES = ("npu_runtime", "npu_kernel", "npu_debug", "npu_lsp", "IPython", "ipykernel")

RED, BOLD, DIM, GREEN, CYAN, RESET = (
    "\x1b[0;31m",
    "\x1b[1m",
    "\x1b[2m",
    "\x1b[0;32m",
    "\x1b[0;36m",
    "\x1b[0m",
)


def _package_roots() -> tuple[str, ...]:
    roots: list[str] = []
    for name in _PACKAGES:
        module = sys.modules.get(name)
        locations = list(getattr(module, "__path__", []))
        if not locations:
            try:
                spec = importlib.util.find_spec(name)
            except (ImportError, ValueError):
                continue
            locations = list(spec.submodule_search_locations or []) if spec else []
        for loc in locations:
            # A folder that only shares the name (tests/npu_kernel/ on sys.path) is not ours.
            if os.path.isfile(os.path.join(loc, "__init__.py")):
                roots.append(os.path.abspath(loc) + os.sep)
    return tuple(roots)


_ROOTS = _package_roots()


def is_internal(filename: str) -> bool:
    """True for frames the user did not write: our packages and IPython's machinery."""
    return os.path.abspath(filename).startswith(_ROOTS) or filename.startswith("<frozen ")


def user_traceback(tb: TracebackType | None) -> TracebackType | None:
    """The same traceback chain without internal frames (None when nothing is left)."""
    kept: list[TracebackType] = []
    while tb is not None:
        if not is_internal(tb.tb_frame.f_code.co_filename):
            kept.append(tb)
        tb = tb.tb_next
    chain: TracebackType | None = None
    for item in reversed(kept):
        chain = TracebackType(chain, item.tb_frame, item.tb_lasti, item.tb_lineno)
    return chain


def _site_line(title: str, site: Any, cells: CellLocator) -> list[str]:
    if site is None:
        return []
    place = cells.place(site.file, site.line)
    code = f"   {CYAN}{place.source}{RESET}" if place.source else ""
    return [f"{BOLD}{title:>12}{RESET}: {GREEN}{place.label}{RESET}{code}"]


def error_header(err: Any, cells: CellLocator) -> list[str]:
    """The lines that explain one AclError (or sanitizer finding), ANSI-coloured."""
    kind = "Sanitizer finding" if getattr(err, "kind", "error") == "sanitizer" else "ACL error"
    api = getattr(err, "api", "") or ""
    title = f"{RED}{BOLD}{kind} {err.code} {err.name}{RESET}"
    lines = [title + (f" in {BOLD}{api}{RESET}" if api else "")]
    detail = getattr(err, "detail", "")
    if detail and detail != err.meaning:
        lines.append(f"{BOLD}{'detail':>12}{RESET}: {detail}")
    lines.append(f"{BOLD}{'meaning':>12}{RESET}: {err.meaning}")
    if getattr(err, "fix", ""):
        lines.append(f"{BOLD}{'fix':>12}{RESET}: {err.fix}")
    lines += _site_line("at", getattr(err, "site", None), cells)
    lines += _site_line("launched at", getattr(err, "launch_site", None), cells)
    lines += _site_line("allocated at", getattr(err, "alloc_site", None), cells)
    lines += _site_line("freed at", getattr(err, "free_site", None), cells)
    return lines


def structured_traceback(
    shell: Any,
    etype: type[BaseException],
    value: BaseException,
    tb: TracebackType | None,
    *,
    full: bool,
) -> list[str]:
    """IPython's structured traceback for an AclError: our header, then the user's frames."""
    cells = CellLocator(shell.compile)
    header = "\n".join(error_header(value, cells))
    frames = tb if full else user_traceback(tb)
    body: list[str] = []
    if frames is not None:
        body = shell.InteractiveTB.structured_traceback(etype, value, frames, tb_offset=0)
        body = body[:-1]  # IPython's last entry repeats "AclError: message"; the header says it
    hint = "" if full else f"{DIM}(frames inside Ascend Lens hidden; %tb shows them){RESET}"
    return [header, *body, *([hint] if hint else [])]


SUMMARY_HEADERS = ["kind", "code", "name", "api", "detail", "meaning", "fix", "where"]


def summary_rows(errors: Iterable[Any], cells: CellLocator) -> list[list[str]]:
    """One row per failed call or sanitizer finding, for a table with SUMMARY_HEADERS."""
    rows = []
    for err in errors:
        kind = "error"
        if getattr(err, "kind", "error") == "sanitizer":
            kind = f"sanitizer: {err.check}" if getattr(err, "check", "") else "sanitizer"
        where = []
        for title, site in (
            ("", getattr(err, "site", None)),
            ("launched at ", getattr(err, "launch_site", None)),
            ("allocated at ", getattr(err, "alloc_site", None)),
            ("freed at ", getattr(err, "free_site", None)),
        ):
            if site is not None:
                where.append(title + cells.place(site.file, site.line).label)
        detail = getattr(err, "detail", "") or ""
        rows.append(
            [
                kind,
                str(err.code),
                err.name,
                getattr(err, "api", "") or "",
                detail,
                err.meaning,
                err.fix,
                "; ".join(where),
            ]
        )
    return rows
