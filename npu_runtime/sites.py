"""Find the user's source line behind a call: the first frame outside our own packages.

Cheap by design: walk `sys._getframe` outward and compare each code object's filename
against a cached verdict, so a launch costs a few dictionary look-ups.
"""

from __future__ import annotations

import os
import sys
from types import CodeType, FrameType

from npu_runtime.records import SourceSite

_OUR_ROOTS: tuple[str, ...] = tuple(
    os.path.dirname(os.path.abspath(p))
    for p in (
        __file__,  # npu_runtime/
    )
)
_OUR_PACKAGES = ("ascend_lens", "npu_runtime", "npu_kernel", "npu_debug", "npu_lsp")
_verdict: dict[str, bool] = {}


def _is_ours(filename: str) -> bool:
    v = _verdict.get(filename)
    if v is None:
        path = os.path.abspath(filename)
        parts = path.replace("\\", "/").split("/")
        # A directory named like one of our packages counts only when it is a package
        # (has __init__.py): tests/npu_runtime/ or a user's own folder is user code.
        v = path.startswith(_OUR_ROOTS) or any(
            p in _OUR_PACKAGES and os.path.isfile("/".join([*parts[: i + 1], "__init__.py"]))
            for i, p in enumerate(parts[:-1])
        )
        # Frames from the import machinery and runpy are never the user's code either.
        v = v or filename.startswith("<frozen ") or os.path.basename(filename) == "runpy.py"
        _verdict[filename] = v
    return v


# (code object, line) -> its SourceSite: a loop relaunching from the same lines reuses the
# same few objects instead of building a frozen dataclass per frame per launch. Code objects
# compare equal without their filename (two notebook cells differing only in a comment do),
# so the filename is part of the key.
_site_cache: dict[tuple[CodeType, str, int], SourceSite] = {}


def add_internal_root(directory: str) -> None:
    """Treat every frame under `directory` as ours: a framework between the user's line and
    the device (torch, for torch_npu programs), so the launch site is the user's line."""
    global _OUR_ROOTS
    root = os.path.join(os.path.abspath(directory), "")
    if root not in _OUR_ROOTS:
        _OUR_ROOTS = (*_OUR_ROOTS, root)
        _verdict.clear()


def mark_internal(filename: str) -> None:
    """Treat frames from `filename` as ours (for launchers and shims outside the packages)."""
    _verdict[filename] = True


def user_site(skip: int = 1) -> SourceSite | None:
    """The first frame outside our packages, starting `skip` frames above the caller."""
    frame: FrameType | None = sys._getframe(skip)
    verdict = _verdict
    while frame is not None:
        code = frame.f_code
        ours = verdict.get(code.co_filename)
        if ours is None:
            ours = _is_ours(code.co_filename)
        if not ours:
            key = (code, code.co_filename, frame.f_lineno)
            site = _site_cache.get(key)
            if site is None:
                site = _site_cache[key] = SourceSite(code.co_filename, key[2], code.co_name)
            return site
        frame = frame.f_back
    return None


def user_stack(skip: int = 1, limit: int = 64) -> tuple[SourceSite, ...]:
    """Every user frame (innermost first), for the opt-in full stack."""
    out: list[SourceSite] = []
    frame: FrameType | None = sys._getframe(skip)
    verdict = _verdict
    while frame is not None and len(out) < limit:
        code = frame.f_code
        ours = verdict.get(code.co_filename)
        if ours is None:
            ours = _is_ours(code.co_filename)
        if not ours:
            key = (code, code.co_filename, frame.f_lineno)
            site = _site_cache.get(key)
            if site is None:
                site = _site_cache[key] = SourceSite(code.co_filename, key[2], code.co_name)
            out.append(site)
        frame = frame.f_back
    return tuple(out)
