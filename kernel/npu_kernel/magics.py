"""The kernel's magics: %npu, %%npu_profile, %%npu_dump, %npu_numerics, %npu_mem,
%npu_reset, %npu_device.

Each magic turns runtime state into a Report (plain text + HTML) and nothing more; the
numbers come from the runtime's own records and the per-line aggregate.
"""

from __future__ import annotations

import shlex
import sys
from types import CodeType, FrameType
from typing import Any

from IPython.core.magic import Magics, cell_magic, line_magic, magics_class
from IPython.core.magic_arguments import argument, magic_arguments, parse_argstring
from IPython.display import publish_display_data

from npu_kernel import PROFILE_MIME
from npu_kernel.cells import CellLocator
from npu_kernel.render import Report
from npu_kernel.session import RuntimeSession
from npu_kernel.svg import Bar, timeline


@magics_class
class NpuMagics(Magics):
    """Magics that show and control the emulated NPU."""

    def __init__(self, shell: Any, session: RuntimeSession) -> None:
        super().__init__(shell)
        self.ipython: Any = shell  # Magics.shell is Optional; ours is always set
        self.session = session
        self.cells = CellLocator(shell.compile)

    # %npu ------------------------------------------------------------------------------
    @line_magic
    def npu(self, line: str = "") -> None:
        """Show the emulated devices, memory per device, streams and sanitizer findings."""
        from npu_kernel.views import npu_report

        npu_report(self.session, self.cells).display()

    # %npu_mem --------------------------------------------------------------------------
    @line_magic
    def npu_mem(self, line: str = "") -> None:
        """Show live device allocations grouped by the line that made them, and a memory map."""
        from npu_kernel.views import mem_report

        mem_report(self.session, self.cells).display()

    # %npu_reset ------------------------------------------------------------------------
    @line_magic
    def npu_reset(self, line: str = "") -> None:
        """Free every device resource and start the emulated runtime afresh."""
        self.session.reset()
        print(f"NPU runtime reset ({self.session.device} x{self.session.devices}).")

    # %npu_device -----------------------------------------------------------------------
    @line_magic
    def npu_device(self, line: str = "") -> None:
        """%npu_device NAME [--devices N]: emulate another device profile (resets the runtime)."""
        words = shlex.split(line)
        if not words:
            print(f"Emulating {self.session.device} x{self.session.devices}.")
            return
        devices = self.session.devices
        if "--devices" in words:
            i = words.index("--devices")
            try:
                devices = int(words[i + 1])
            except (IndexError, ValueError):
                print("usage: %npu_device NAME [--devices N]  (N a positive integer)")
                return
            del words[i : i + 2]
        if len(words) != 1 or not 1 <= devices <= 16:
            print("usage: %npu_device NAME [--devices N]  (N between 1 and 16)")
            return
        try:
            self.session.configure(words[0], devices)
        except ValueError as exc:
            print(f"%npu_device: {exc}")
            return
        print(f"Emulating {self.session.device} x{devices}; runtime reset.")

    # %%npu_profile ---------------------------------------------------------------------
    @magic_arguments()
    @argument("--out", metavar="DIR", help="also write op_summary CSV, trace.json, lines.json")
    @argument("--stack", action="store_true", help="record full user call stacks")
    @argument(
        "--ascend-pt",
        action="store_true",
        help="also write torch_npu-style *_ascend_pt/ dirs in DIR (for msprof-analyze)",
    )
    @cell_magic
    def npu_profile(self, line: str, cell: str) -> None:
        """Profile the cell: top ops, a per-line table keyed to the cell's lines, a timeline."""
        args = parse_argstring(self.npu_profile, line)
        if args.ascend_pt and not args.out:
            print("%%npu_profile: --ascend-pt needs --out DIR (the directories go there)")
            return
        from npu_runtime.profiler.session import Profiler
        from npu_runtime.profiler.writer import DEFAULT_EXPORTERS

        code, filename, number = self._compile_cell(cell)
        exporters = DEFAULT_EXPORTERS + (("ascend_pt",) if args.ascend_pt else ())
        prof = Profiler(args.out, stack=args.stack, exporters=exporters)
        prof.start()
        try:
            exec(code, self.ipython.user_global_ns, self.ipython.user_ns)
        finally:
            prof.stop()
            self._show_profile(prof, filename, number)

    # %%npu_dump ------------------------------------------------------------------------
    @magic_arguments()
    @argument("dir", metavar="DIR", help="write DIR/step<k>/rank<device>/dump.json")
    @argument(
        "--level",
        default="statistics",
        help="statistics: Max/Min/Mean/Norm per tensor (default); tensor: also each tensor as .pt",
    )
    @cell_magic
    def npu_dump(self, line: str, cell: str) -> None:
        """Run the cell under an msprobe-compatible precision dump (docs/interop.md)."""
        from npu_runtime.dump.session import LEVELS, Dumper

        args = parse_argstring(self.npu_dump, line)
        if args.level not in LEVELS:
            print(f"%%npu_dump: --level {args.level!r}: expected one of {', '.join(LEVELS)}")
            return
        try:
            dumper = Dumper(args.dir, args.level).start()
        except OSError as exc:
            print(f"%%npu_dump: cannot dump to {args.dir}: {exc.strerror or exc}")
            return
        code, _, _ = self._compile_cell(cell)
        try:
            exec(code, self.ipython.user_global_ns, self.ipython.user_ns)
        finally:
            # Written even when the cell fails: the ops before the failure are the evidence.
            try:
                files = dumper.stop()
            except OSError as exc:
                print(f"%%npu_dump: cannot write {dumper.out_dir}: {exc.strerror or exc}")
            else:
                entries = sum(1 for f in files if f.name == "dump.json")
                if entries:
                    print(
                        f"%%npu_dump: {args.level} dump, {entries} dump.json written: "
                        f"{dumper.out_dir}"
                    )
                else:
                    print(f"%%npu_dump: no op ran; nothing written to {dumper.out_dir}")

    # %npu_numerics ---------------------------------------------------------------------
    @line_magic
    def npu_numerics(self, line: str = "") -> None:
        """%npu_numerics [npu|float32|float64]: show or switch the numerics of later cells."""
        from npu_runtime import numerics

        words = line.split()
        if not words:
            print(f"Numerics: {numerics.numerics_mode()}.")
            return
        if len(words) != 1 or words[0] not in numerics.NUMERICS_MODES:
            print(f"usage: %npu_numerics [{'|'.join(numerics.NUMERICS_MODES)}]")
            return
        previous = numerics.set_numerics(words[0])
        print(f"Numerics: {words[0]} (was {previous}); applies to tensors created from now on.")

    def _compile_cell(self, cell: str) -> tuple[CodeType, str, int]:
        """Compile a cell magic's body so its line numbers and filename are the cell's own."""
        number, magic_line = self._calling_cell()
        # Blank lines stand for the lines up to and including the %%magic line, so compiled
        # line numbers are the cell's own (also for a cell magic under another one, whose
        # body starts further down); the filename maps back to this cell in tracebacks.
        source = "\n" * magic_line + self.ipython.transform_cell(cell)
        filename = self.ipython.compile.cache(source, number)
        return self.ipython.compile(source, filename, "exec"), filename, number

    def _calling_cell(self) -> tuple[int, int]:
        """The running cell's execution count, and the cell line that invoked the magic.

        IPython has already advanced its own count, so the number comes from the calling
        code object's file. A cell magic alone in a cell is called from line 1.
        """
        frame: FrameType | None = sys._getframe(1)
        while frame is not None:  # the cell's code object calls the magic
            number = self.cells.cell_of(frame.f_code.co_filename)
            if number is not None:
                return number, frame.f_lineno
            frame = frame.f_back
        return int(self.ipython.execution_count), 1

    def _show_profile(self, prof: Any, filename: str, number: int) -> None:
        doc = prof.summary
        report = Report()
        head = report.add(
            f"NPU profile of cell In[{number}]: {doc['op_count']} records, "
            f"{doc['total_us']:,.2f} µs simulated on {doc['device']}"
        )
        if doc["trace"]:
            head.note(f"trace: {doc['trace']}")
        report.add("Top ops").table(
            ["op type", "count", "total µs", "share %", "bound"],
            [
                [o["op_type"], o["count"], o["total_us"], o["share"] * 100, o["bound"]]
                for o in doc["top_ops"][:10]
            ],
        )
        rows = []
        for entry in doc["lines"]:
            place = self.cells.place(entry["file"], entry["line"])
            top = entry["top_ops"][0]["op_type"] if entry["top_ops"] else ""
            rows.append(
                [
                    place.label,
                    place.source,
                    entry["op_count"],
                    entry["total_us"],
                    entry["share"] * 100,
                    entry["bound"],
                    top,
                ]
            )
        report.add("Per line").table(
            ["where", "source", "records", "total µs", "share %", "bound", "top op"], rows
        )
        bars = [
            Bar(
                row=f"dev{r.device} stream{r.stream}",
                start_us=r.start_us,
                duration_us=r.duration_us,
                bound=r.bound,
                title=f"{r.name} ({r.op_type}) {r.duration_us:.2f} µs, {r.bound}",
            )
            for r in prof.records
        ]
        if bars:
            streams = len({b.row for b in bars})
            report.add("Timeline").svg(
                timeline(bars), f"{len(bars)} records on {streams} stream(s)"
            )
        data = report.bundle({PROFILE_MIME: doc})
        # The schema stays as documented; which file is this cell travels as metadata.
        metadata = {PROFILE_MIME: {"cell_file": filename, "execution_count": number}}
        publish_display_data(data, metadata=metadata)
