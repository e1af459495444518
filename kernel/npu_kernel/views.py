"""Reports for %npu and %npu_mem, built from the runtime's state (see state.py)."""

from __future__ import annotations

from npu_kernel.cells import CellLocator
from npu_kernel.render import Report
from npu_kernel.session import RuntimeSession


def _not_started(session: RuntimeSession) -> Report:
    report = Report()
    report.add(f"NPU: {session.device} x{session.devices} (emulated)").note(
        "The runtime has not started yet: it starts on the first acl or npu_runtime call."
    )
    return report


def npu_report(session: RuntimeSession, cells: CellLocator) -> Report:
    if not session.loaded():
        return _not_started(session)
    raise NotImplementedError  # wired once npu_runtime.core lands


def mem_report(session: RuntimeSession, cells: CellLocator) -> Report:
    if not session.loaded():
        return _not_started(session)
    raise NotImplementedError
