"""A live status line on stderr for long profiled runs.

Nothing appears for runs shorter than `delay` seconds, and nothing at all when stderr is
not a terminal, so piped output and CI logs stay clean. The status is refreshed from a
timer thread reading the collector's counters: launches pay nothing for it.
"""

from __future__ import annotations

import threading

from rich.console import Console
from rich.status import Status

from npu_runtime.profiler.collector import Collector


class RunProgress:
    """Shows "profiling: N ops, X µs simulated" after `delay` seconds, until `stop()`."""

    def __init__(
        self,
        collector: Collector,
        console: Console,
        *,
        delay: float = 1.0,
        interval: float = 0.25,
    ) -> None:
        self.collector = collector
        self.console = console
        self.delay = delay
        self.interval = interval
        self.shown = threading.Event()  # set once the status is on screen (tests wait on it)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def _text(self) -> str:
        recs = self.collector.records
        # Reading the last record's end is O(1); summing all durations would not be.
        sim = max((r.end_us for r in recs[-64:]), default=0.0)
        return f"profiling: {len(recs)} device tasks, {sim:,.1f} µs simulated"

    def _run(self) -> None:
        if self._stop.wait(self.delay):
            return
        status = Status(self._text(), console=self.console, spinner="dots")
        status.start()
        self.shown.set()
        try:
            while not self._stop.wait(self.interval):
                status.update(self._text())
        finally:
            status.stop()

    def start(self) -> None:
        if not self.console.is_terminal or self._thread is not None:
            return
        self._thread = threading.Thread(target=self._run, name="ascend-lens-progress", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
