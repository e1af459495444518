"""The reports %npu and %npu_mem show, built from npu_runtime.state's reading of the runtime."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from npu_kernel.cells import CellLocator
from npu_kernel.render import Report
from npu_kernel.session import RuntimeSession
from npu_kernel.svg import Block, memory_map
from npu_runtime.state import allocations, snapshot

MIB = 1 << 20


def _mib(n: int) -> float:
    return round(n / MIB, 2)


def _where(site: Any, cells: CellLocator) -> tuple[str, str]:
    if site is None:
        return "(unknown)", ""
    place = cells.place(site.file, site.line)
    return place.label, place.source


def _not_started(session: RuntimeSession) -> Report:
    report = Report()
    report.add(f"NPU: {session.device} x{session.devices} (emulated)").note(
        "The runtime has not started yet: it starts on the first acl or npu_runtime call."
    )
    return report


def npu_report(session: RuntimeSession, cells: CellLocator) -> Report:
    """Devices, memory per device, streams, sanitizer findings and recent ACL errors."""
    if not session.loaded():
        return _not_started(session)
    doc = snapshot(session)
    report = Report()
    head = report.add(
        f"NPU: {doc['soc_name']} x{doc['device_count']} (emulated, profile {doc['device']}); "
        f"acl.init {'done' if doc['initialized'] else 'not called'}"
    )
    from npu_runtime.numerics import numerics_mode  # the runtime is loaded: numpy is too

    if (mode := numerics_mode()) != "npu":  # results differ from the device's: say so first
        head.note(f"Reference numerics: {mode} (%npu_numerics npu for the device's).")
    if not doc["devices"]:
        head.note("No device is set yet (acl.rt.set_device).")
    else:
        report.add("Devices").table(
            [
                "device",
                "used MiB",
                "peak MiB",
                "free MiB",
                "largest free MiB",
                "frag %",
                "allocations",
                "streams",
                "clock µs",
            ],
            [
                [
                    d["id"],
                    _mib(d["memory"]["used"]),
                    _mib(d["memory"]["peak"]),
                    _mib(d["memory"]["free"]),
                    _mib(d["memory"]["largest_free_block"]),
                    d["memory"]["fragmentation"] * 100,
                    d["memory"]["allocations"],
                    len(d["streams"]),
                    d["host_us"],
                ]
                for d in doc["devices"]
            ],
        )
    streams = [
        [
            d["id"],
            s["id"],
            f"0x{s['handle']:x}",
            "yes" if s["default"] else "",
            s["ready_us"],
            s["pending"],
        ]
        for d in doc["devices"]
        for s in d["streams"]
    ]
    if streams:
        report.add("Streams").table(
            ["device", "stream", "handle", "default", "busy until µs", "undelivered"], streams
        )
    rt = session.runtime()
    findings = list(rt.sanitizer.findings)
    rows = []
    for f in findings:
        at, _ = _where(f.site, cells)
        alloc, _ = _where(f.alloc_site, cells) if f.alloc_site else ("", "")
        freed, _ = _where(f.free_site, cells) if f.free_site else ("", "")
        rows.append([f.check, f.detail or f.meaning, at, alloc, freed])
    report.add(f"Sanitizer findings ({len(findings)})").table(
        ["check", "detail", "at", "allocated at", "freed at"], rows
    )
    errors = [e for e in session.all_errors if e.kind == "error"][-10:]
    if errors:
        report.add("Recent failed ACL calls").table(
            ["code", "name", "api", "detail", "at"],
            [
                [str(e.code), e.name, e.api, e.detail or e.meaning, _where(e.site, cells)[0]]
                for e in errors
            ],
        )
    return report


def mem_report(session: RuntimeSession, cells: CellLocator) -> Report:
    """Live allocations grouped by the line that made them, fragmentation, a memory map."""
    if not session.loaded():
        return _not_started(session)
    rt = session.runtime()
    allocs = allocations(rt)
    report = Report()
    with rt.lock:
        devices = [dev for _, dev in sorted(rt.devices.items())]
    if not devices:
        report.add("NPU memory").note("No device is set yet (acl.rt.set_device).")
        return report
    head = report.add("NPU memory")
    for dev in devices:
        mem = dev.memory
        head.note(
            f"device {dev.id}: {mem.used:,} of {mem.capacity:,} bytes used in "
            f"{len(mem.live)} allocation(s); peak {mem.peak:,}; fragmentation "
            f"{mem.fragmentation() * 100:.1f}% (largest free block {mem.largest_free_block():,})"
        )
    groups: dict[tuple[int, str, str], list[Any]] = defaultdict(list)
    for a in allocs:
        label, source = _where(a.site, cells)
        groups[(a.device, label, source)].append(a)
    rows = [
        [dev, label, source, len(items), sum(a.size for a in items), sum(a.consumed for a in items)]
        for (dev, label, source), items in sorted(
            groups.items(), key=lambda kv: -sum(a.consumed for a in kv[1])
        )
    ]
    report.add("Live allocations by source line").table(
        ["device", "allocated at", "source", "count", "bytes", "bytes reserved"], rows
    )
    figures = report.add("Memory map")
    for dev in devices:
        mine = [a for a in allocs if a.device == dev.id]
        if not mine:
            continue
        extent = max(a.offset + a.consumed for a in mine)
        blocks = [Block(a.offset, a.consumed, _where(a.site, cells)[0], used=True) for a in mine]
        title = f"device {dev.id}: address space up to the highest allocation ({extent:,} bytes)"
        used = sum(a.consumed for a in mine)
        figures.svg(
            memory_map(extent, blocks, title),
            f"{title}: {used / extent:.0%} in use, {len(mine)} block(s)",
        )
    return report
