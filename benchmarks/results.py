"""One way to write a benchmark's results file: the machine line, Markdown tables, the write.

Imported by the scripts beside it (`python benchmarks/NAME.py` puts this folder on sys.path).
"""

from __future__ import annotations

import os
import platform
import sys
from collections.abc import Collection, Iterable, Sequence
from datetime import datetime, timezone
from pathlib import Path


def machine() -> str:
    """`x86_64, 2 cores, Linux 6.1, Python 3.11.7, load average 1.0, 0.8, 0.6`."""
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    return (
        f"{platform.machine()}, {os.cpu_count()} cores, {platform.system()} {platform.release()}, "
        f"Python {platform.python_version()}, load average {load}"
    )


def now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


def measured_on() -> str:
    """`Measured <UTC time> on <machine> (<cores> cores, shared, load ...), <Python>`."""
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    return (
        f"Measured {now()} on {platform.machine()} ({os.cpu_count()} cores, shared; load average "
        f"{load} at the end), {platform.python_implementation()} {platform.python_version()}"
    )


def table(
    headers: Sequence[str], rows: Iterable[Sequence[object]], text: Collection[int] = (0,)
) -> list[str]:
    """A Markdown table: the `text` columns left-aligned, every other one a right-aligned figure."""
    out = [
        "| " + " | ".join(headers) + " |",
        "|" + "".join("---|" if i in text else "---:|" for i in range(len(headers))),
    ]
    out += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return out


def write(script: str, lines: Sequence[str], name: str | None = None) -> int:
    """Write the results beside the script (NAME.md, or `name`) and echo them; the exit code."""
    text = "\n".join(lines) + "\n"
    path = Path(script).with_suffix(".md") if name is None else Path(script).with_name(name)
    path.write_text(text, encoding="utf-8")
    sys.stdout.write(text)
    return 0
