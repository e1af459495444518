"""One way to write a benchmark's results file: the machine line, Markdown tables, the write.

Imported by the scripts beside it (`python benchmarks/NAME.py` puts this folder on sys.path).
"""

from __future__ import annotations

import os
import platform
import sys
from collections.abc import Iterable, Sequence
from datetime import datetime, timezone
from pathlib import Path


def measured_on() -> str:
    """`Measured <UTC time> on <machine> (<cores> cores, shared, load ...), <Python>`."""
    now = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    return (
        f"Measured {now} on {platform.machine()} ({os.cpu_count()} cores, shared; load average "
        f"{load} at the end), {platform.python_implementation()} {platform.python_version()}"
    )


def table(headers: Sequence[str], rows: Iterable[Sequence[object]]) -> list[str]:
    """A Markdown table; every column after the first is a right-aligned figure."""
    out = [
        "| " + " | ".join(headers) + " |",
        "|---|" + "---:|" * (len(headers) - 1),
    ]
    out += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return out


def write(script: str, lines: Sequence[str]) -> int:
    """Write the results beside the script (NAME.md) and echo them; the script's exit code."""
    text = "\n".join(lines) + "\n"
    Path(script).with_suffix(".md").write_text(text, encoding="utf-8")
    sys.stdout.write(text)
    return 0
