"""NpuKernel: IPython's kernel with the emulated Ascend runtime one import away.

Only hooks are overridden (do_execute, do_shutdown); the protocol, completion,
inspection, comms, interrupts and debug requests are ipykernel's own. The runtime is
never imported here: user code imports it, and the kernel hooks in at that moment.
"""

from __future__ import annotations

import sys
from types import ModuleType, TracebackType
from typing import Any

from ipykernel.ipkernel import IPythonKernel
from traitlets import Bool, Integer, Unicode

from npu_kernel import DISPLAY_NAME, KERNEL_NAME
from npu_kernel.cells import CellLocator
from npu_kernel.comm import StateChannel
from npu_kernel.imports import ImportWatcher, ensure_shim_on_path
from npu_kernel.kernelspec import DEFAULT_DEVICE, DEFAULT_DEVICES
from npu_kernel.magics import NpuMagics
from npu_kernel.render import Report
from npu_kernel.session import RuntimeSession
from npu_kernel.tracebacks import SUMMARY_HEADERS, structured_traceback, summary_rows

__version__ = "0.1.0"


class NpuKernel(IPythonKernel):
    """IPython kernel hosting the emulated Ascend NPU (`import acl`, `import npu_runtime`)."""

    implementation = KERNEL_NAME
    implementation_version = __version__
    banner = f"{DISPLAY_NAME}: `import acl` or `import npu_runtime`; `%npu` shows the devices."

    device = Unicode(DEFAULT_DEVICE, help="Device profile the runtime emulates.").tag(config=True)
    devices = Integer(DEFAULT_DEVICES, help="Number of emulated devices.").tag(config=True)
    full_traceback = Bool(
        False, help="Show frames inside Ascend Lens in ACL error tracebacks."
    ).tag(config=True)

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        shell = self.shell
        assert shell is not None  # IPythonKernel always creates its shell
        ensure_shim_on_path()
        self.npu = RuntimeSession(self.device, self.devices)
        self.cells = CellLocator(shell.compile)
        self.state_channel = StateChannel(self.comm_manager, self.npu.snapshot)
        self._watcher = ImportWatcher()
        self._watcher.watch("npu_runtime.errors", self._errors_loaded)
        self._watcher.watch("npu_runtime.core.hooks", self.npu.attach)
        shell.register_magics(NpuMagics(shell, session=self.npu))
        shell.configurables.append(self)  # so `%config NpuKernel.full_traceback = True` works

    # AclError tracebacks -----------------------------------------------------------
    def _errors_loaded(self, module: ModuleType) -> None:
        assert self.shell is not None
        self.shell.set_custom_exc((module.AclError,), self._acl_traceback)

    def _acl_traceback(
        self,
        shell: Any,
        etype: type[BaseException],
        value: BaseException,
        tb: TracebackType | None,
        tb_offset: int | None = None,
    ) -> list[str]:
        # What showtraceback would have stored, so %tb and %debug still see the error.
        sys.last_type, sys.last_value, sys.last_traceback = etype, value, tb
        if sys.version_info >= (3, 12):
            sys.last_exc = value
        stb = structured_traceback(shell, etype, value, tb, full=self.full_traceback)
        shell._showtraceback(etype, value, stb)
        return stb

    # Hooks ---------------------------------------------------------------------------
    async def do_execute(
        self,
        code: str,
        silent: bool,
        store_history: bool = True,
        user_expressions: dict[str, Any] | None = None,
        allow_stdin: bool = False,
        **kwargs: Any,
    ) -> dict[str, Any]:
        self.npu.begin_cell()
        try:
            reply: dict[str, Any] = await super().do_execute(
                code, silent, store_history, user_expressions, allow_stdin, **kwargs
            )
        finally:
            errors = self.npu.end_cell()
        if not silent:
            self._explain_raised()
            self._show_unraised(errors)
            self.state_channel.push("execute")
        return reply

    def _explain_raised(self) -> None:
        """The cell stopped on its own exception (or sys.exit) carrying a bare ACL code: say
        on the cell's stderr what the last failing call's code means, as `ascend-lens run`."""
        assert self.shell is not None
        result = self.shell.last_execution_result
        exc = result.error_in_exec if result is not None else None
        errors = sys.modules.get("npu_runtime.errors")
        if exc is None or (errors is not None and isinstance(exc, errors.AclError)):
            return  # an AclError's own header already says all of it
        text = self.npu.explain(exc, lambda site: self.cells.place(site.file, site.line).label)
        if text:
            sys.stderr.write(text)
            sys.stderr.flush()

    def _show_unraised(self, errors: list[Any]) -> None:
        """Failed ACL calls that returned a code instead of raising (the pyACL style)."""
        assert self.shell is not None
        raised = self.shell.last_execution_result
        raised_exc = raised.error_in_exec if raised is not None else None
        shown = [e for e in errors if e is not raised_exc]
        if not shown:
            return
        report = Report()
        findings = sum(1 for e in shown if getattr(e, "kind", "error") == "sanitizer")
        parts = []
        if len(shown) > findings:
            n = len(shown) - findings
            parts.append(f"{n} ACL call{'s' if n > 1 else ''} failed")
        if findings:
            parts.append(f"{findings} sanitizer finding{'s' if findings > 1 else ''}")
        report.add(" and ".join(parts) + " in this cell").table(
            SUMMARY_HEADERS, summary_rows(shown, self.cells)
        )
        report.display()

    def do_shutdown(
        self, restart: bool
    ) -> Any:  # a dict here; the base class also allows a coroutine
        # A restart starts a new process, but reset first so no device state outlives us.
        self.npu.reset()
        self._watcher.close()
        return super().do_shutdown(restart)
