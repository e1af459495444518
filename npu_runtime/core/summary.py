"""The run summary `ascend-lens run` prints on stderr: memory and streams per device, findings."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from npu_runtime.core.faults import injector
from npu_runtime.core.runtime import get_runtime
from npu_runtime.core.sanitizer import format_finding

MAX_FINDINGS = 20


def _size(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024  # type: ignore[assignment]
    return str(n)


def print_summary(console: Console | None = None) -> None:
    rt = get_runtime()
    console = console or Console(stderr=True, highlight=False)
    stats = rt.device_stats()
    title = f"ascend-lens run: {rt.profile.soc_name}, {rt.device_count} device(s)"
    if stats:
        table = Table(title=title, title_justify="left")
        for col in (
            "device",
            "peak memory",
            "in use at exit",
            "free (largest block)",
            "peak streams",
        ):
            table.add_column(col, justify="right")
        for dev, s in stats.items():
            table.add_row(
                str(dev),
                _size(s["peak_bytes"]),
                _size(s["used_bytes"]),
                f"{_size(s['free_bytes'])} ({_size(s['largest_free_block'])})",
                str(s["peak_streams"]),
            )
        console.print(table)
    else:
        console.print(f"{title}: no device was used")
    for rule in injector.rules():
        state = "fired" if rule.fired else f"never fired ({rule.seen} matching call(s))"
        console.print(f"injection {rule}: {state}", markup=False)
    findings = rt.sanitizer.findings
    if not rt.sanitizer.enabled:
        console.print("sanitizer: off")
    elif not findings:
        console.print("sanitizer: no findings")
    else:
        console.print(f"sanitizer: {len(findings)} finding(s)", style="bold red")
        for f in findings[:MAX_FINDINGS]:
            console.print(format_finding(f), markup=False, soft_wrap=True)
        if len(findings) > MAX_FINDINGS:
            console.print(f"... and {len(findings) - MAX_FINDINGS} more")
