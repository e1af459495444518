"""Progress of a long `check` on stderr: the phase, files done, of how many, and the rate
("indexed" while files are parsed and summarised, "checked" while they are checked).

Shown only when stderr is a terminal (a CI log or a pipe gets nothing) and only once a run
has lasted half a second (a quick run prints nothing at all; `ASCEND_LENS_PROGRESS_DELAY`
sets another delay); `--quiet` turns it off. One
line, redrawn in place at most ten times a second, and erased when the run ends, so it
never mixes with the diagnostics on stdout.
"""

from __future__ import annotations

import os
import time
from typing import TextIO

_INTERVAL = 0.1


def _delay() -> float:
    """Seconds before the line appears (`ASCEND_LENS_PROGRESS_DELAY`, default 0.5)."""
    try:
        return max(0.0, float(os.environ.get("ASCEND_LENS_PROGRESS_DELAY", "0.5")))
    except ValueError:
        return 0.5


class Progress:
    """Callable as `progress(done, total, phase)`; `finish()` erases the line."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.start = time.monotonic()
        self.last = 0.0
        self.width = 0
        self.phase = ""
        self.phase_start = self.start
        self.delay = _delay()

    @classmethod
    def for_stream(cls, stream: TextIO) -> Progress | None:
        try:
            tty = stream.isatty()
        except (AttributeError, ValueError):
            tty = False
        return cls(stream) if tty else None

    def __call__(self, done: int, total: int, phase: str = "checked") -> None:
        now = time.monotonic()
        if phase != self.phase:
            self.phase, self.phase_start = phase, now
        if now - self.start < self.delay or (now - self.last < _INTERVAL and done < total):
            return
        self.last = now
        elapsed = now - self.phase_start
        rate = done / elapsed if elapsed > 0 else 0.0
        line = f"ascend-lens: {phase} {done:,}/{total:,} files ({rate:,.0f} files/s)"
        self.stream.write("\r" + line.ljust(self.width))
        self.stream.flush()
        self.width = len(line)

    def finish(self) -> None:
        if self.width:
            self.stream.write("\r" + " " * self.width + "\r")
            self.stream.flush()
            self.width = 0
