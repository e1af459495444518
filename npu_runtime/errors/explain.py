"""Say what a bare ACL code in a script's own exception means.

Most real scripts check `ret` themselves and raise their own exception with just the
number (`raise Exception("execute failed ret=145013")`). `LastError` remembers the last
failing ACL call (install it as an error listener); `explain(exc, last)` returns the lines
to add on stderr when the exception names that call's code: the constant, its meaning,
the call's detail, the fix, where it was called and the line that launched the work.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from npu_runtime.errors import AclError
    from npu_runtime.records import SourceSite


class LastError:
    """Error listener keeping the most recent failing ACL call of the process."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.error: AclError | None = None

    def __call__(self, err: AclError) -> None:
        if err.kind == "error" and err.code:
            with self._lock:
                self.error = err

    def clear(self) -> None:
        """Forget the last failure (a runtime reset starts a clean process)."""
        with self._lock:
            self.error = None


def _mentions(exc: BaseException, code: int) -> bool:
    if isinstance(exc, SystemExit):
        return exc.code == code or (isinstance(exc.code, str) and _in_text(exc.code, code))
    return _in_text(str(exc), code) or any(
        isinstance(a, int) and not isinstance(a, bool) and a == code for a in exc.args
    )


def _in_text(text: str, code: int) -> bool:
    return re.search(rf"(?<![0-9]){code}(?![0-9])", text) is not None


def explain(
    exc: BaseException,
    last: AclError | None,
    place: Callable[[SourceSite], str] = str,
) -> str:
    """Lines for stderr (ending in a newline), or "" when `exc` does not name `last`'s code.

    `place` words a source site ("net.py:12" by default; the kernel names its cells)."""
    if last is None or not _mentions(exc, last.code):
        return ""
    where = f" at {place(last.site)}" if last.site is not None else ""
    lines = [
        f"ascend-lens: {last.code} is {last.name}, returned by {last.api or 'an ACL call'}{where}",
        f"    meaning: {last.meaning}",
    ]
    if last.detail:
        lines.append(f"    detail: {last.detail}")
    if last.cause:
        lines.append(f"    cause: {last.cause}")
    if last.fix:
        lines.append(f"    fix: {last.fix}")
    if last.launch_site is not None and last.launch_site != last.site:
        lines.append(f"    work launched at {place(last.launch_site)}")
    return "\n".join(lines) + "\n"
