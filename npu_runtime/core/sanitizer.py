"""The sanitizer: what no hardware reports, with the line that allocated and the line that misused.

Checks: use-after-free, double free, out-of-bounds copy (past the requested size, even when
still inside aclrtMalloc's padding), host read of an async copy's destination before the
synchronisation that completes it, leaks at reset/finalize, and memcpy kinds that contradict
where the pointers live (CANN 8 copies anyway; older CANN refuses). Findings are AclError
objects of kind "sanitizer", sent to the error listeners and kept for the run summary.
Findings never change a call's return code: the runtime's own checks decide that.
"""

from __future__ import annotations

import os
import sys
import threading

from npu_runtime.core import hooks
from npu_runtime.errors import AclError, codes
from npu_runtime.records import SourceSite

ENV_VAR = "NPU_SANITIZE"

# check name -> the ACL code that describes the misuse closest
CHECK_CODES = {
    "use-after-free": codes.ACL_ERROR_RT_PARAM_INVALID,
    "double-free": codes.ACL_ERROR_RT_PARAM_INVALID,
    "out-of-bounds": codes.ACL_ERROR_RT_PARAM_INVALID,
    "read-before-sync": codes.ACL_ERROR_RT_STREAM_NOT_COMPLETE,
    "leak": codes.ACL_ERROR_RT_MEMORY_FREE,
    "kind-mismatch": codes.ACL_ERROR_RT_PARAM_INVALID,
}


class Sanitizer:
    def __init__(self) -> None:
        self.enabled = os.environ.get(ENV_VAR, "1").lower() not in ("0", "false", "off", "no")
        self.findings: list[AclError] = []
        self.echo = False  # print each finding to stderr as it happens (the launcher sets it)
        self._lock = threading.Lock()

    def report(
        self,
        check: str,
        api: str,
        detail: str,
        *,
        site: SourceSite | None,
        alloc_site: SourceSite | None = None,
        free_site: SourceSite | None = None,
        launch_site: SourceSite | None = None,
    ) -> AclError:
        finding = AclError(
            CHECK_CODES[check],
            api,
            detail,
            site=site,
            alloc_site=alloc_site,
            free_site=free_site,
            launch_site=launch_site,
            kind="sanitizer",
            check=check,
        )
        with self._lock:
            self.findings.append(finding)
        if self.echo:
            sys.stderr.write(format_finding(finding) + "\n")
        hooks.emit_error(finding)
        return finding

    def clear(self) -> None:
        with self._lock:
            self.findings.clear()


def format_finding(f: AclError) -> str:
    """Several lines: what, where misused, where allocated/freed."""
    lines = [f"ascend-lens sanitizer: {f.check}: {f.detail}"]
    if f.site is not None:
        lines.append(f"    at {f.site}" + (f" in {f.site.function}" if f.site.function else ""))
    if f.launch_site is not None:
        lines.append(f"    async work launched at {f.launch_site}")
    if f.alloc_site is not None:
        lines.append(f"    allocated at {f.alloc_site}")
    if f.free_site is not None:
        lines.append(f"    freed at {f.free_site}")
    return "\n".join(lines)
