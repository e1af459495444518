"""ACL error codes, their meaning and fix, and the exception the Pythonic API raises.

Importable without numpy: the language server uses it for hovers.

    >>> from npu_runtime.errors import lookup
    >>> lookup(107002).name
    'ACL_ERROR_RT_CONTEXT_NULL'
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from npu_runtime.errors import codes
from npu_runtime.errors._table import ErrorInfo, constants, table

if TYPE_CHECKING:
    from npu_runtime.records import SourceSite

__all__ = ["AclError", "ErrorInfo", "codes", "constants", "lookup", "name_of", "all_codes"]

ErrorKind = Literal["error", "sanitizer"]


def lookup(code: int) -> ErrorInfo:
    """The ErrorInfo for `code`; an unknown code gets a placeholder saying so."""
    info = table().get(int(code))
    if info is None:
        return ErrorInfo(
            code=int(code),
            name=f"UNKNOWN_ERROR_{int(code)}",
            meaning="This code is not in the ACL, RT or GE headers.",
            cause="",
            fix="",
        )
    return info


def name_of(code: int) -> str:
    """The constant name for `code` (ACL_SUCCESS for 0)."""
    return lookup(code).name


def all_codes() -> list[ErrorInfo]:
    """Every known code, ascending."""
    return [table()[c] for c in sorted(table())]


class AclError(Exception):
    """A failing ACL call (kind "error") or a sanitizer finding (kind "sanitizer").

    `site` is the user line that made the failing call, or the synchronisation where a
    device-side failure surfaced; `launch_site` is the line that launched the failing work.
    `alloc_site`/`free_site` locate the memory a sanitizer finding is about.
    """

    def __init__(
        self,
        code: int,
        api: str = "",
        detail: str = "",
        *,
        site: SourceSite | None = None,
        launch_site: SourceSite | None = None,
        alloc_site: SourceSite | None = None,
        free_site: SourceSite | None = None,
        kind: ErrorKind = "error",
        check: str = "",
    ) -> None:
        info = lookup(code)
        self.code: int = info.code
        self.name: str = info.name
        self.meaning: str = info.meaning
        self.cause: str = info.cause
        self.fix: str = info.fix
        self.api: str = api
        self.detail: str = detail
        self.site: SourceSite | None = site
        self.launch_site: SourceSite | None = launch_site
        self.alloc_site: SourceSite | None = alloc_site
        self.free_site: SourceSite | None = free_site
        self.kind: ErrorKind = kind
        self.check: str = check  # sanitizer check name: "use-after-free", "leak", ...
        super().__init__(self._message())

    def _message(self) -> str:
        head = f"{self.api} failed: " if self.api else ""
        if self.kind == "sanitizer":
            head = f"sanitizer: {self.check}: " if self.check else "sanitizer: "
        text = f"{head}{self.name} ({self.code}): {self.detail or self.meaning}"
        if self.site is not None:
            text += f" [at {self.site}]"
        if self.launch_site is not None and self.launch_site != self.site:
            text += f" [launched at {self.launch_site}]"
        return text

    def __str__(self) -> str:
        return self._message()

    def __reduce__(self) -> tuple[object, ...]:
        # Keep the keyword-only fields across pickling (the kernel and debugger send errors).
        return (
            _rebuild,
            (
                self.code,
                self.api,
                self.detail,
                self.site,
                self.launch_site,
                self.alloc_site,
                self.free_site,
                self.kind,
                self.check,
            ),
        )


def _rebuild(
    code: int,
    api: str,
    detail: str,
    site: SourceSite | None,
    launch_site: SourceSite | None,
    alloc_site: SourceSite | None,
    free_site: SourceSite | None,
    kind: ErrorKind,
    check: str,
) -> AclError:
    return AclError(
        code,
        api,
        detail,
        site=site,
        launch_site=launch_site,
        alloc_site=alloc_site,
        free_site=free_site,
        kind=kind,
        check=check,
    )
