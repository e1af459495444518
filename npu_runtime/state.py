"""The runtime's state as plain data, for every shell that shows it.

`snapshot()` is the `ascend-lens.state/1` document (docs/kernel.md): the kernel's
`ascend-lens.state` comm and %npu/%npu_mem, and the debug adapter's stop events, send it.
Reading never starts the runtime: before user code imports it, the document says
`"started": false` and lists no devices.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

STATE_SCHEMA = "ascend-lens.state/1"


class StateSource(Protocol):
    """What a snapshot reads: the kernel's RuntimeSession, or the debuggee's bridge."""

    @property
    def device(self) -> str | None: ...

    @property
    def devices(self) -> int | None: ...

    @property
    def all_errors(self) -> Sequence[Any]: ...

    def loaded(self) -> bool: ...

    def runtime(self) -> Any: ...


MAX_FINDINGS = 50  # the comm carries the most recent ones; %npu shows them all


@dataclass(frozen=True, slots=True)
class Allocation:
    device: int
    addr: int
    offset: int  # from the device's base address
    size: int  # bytes asked for
    reserved: int  # bytes aclrtMalloc set aside (rounding + padding)
    consumed: int  # bytes taken from the address space
    site: Any  # SourceSite | None


def _site(site: Any) -> dict[str, Any] | None:
    if site is None:
        return None
    return {"file": site.file, "line": site.line, "function": site.function}


def finding_json(err: Any) -> dict[str, Any]:
    return {
        "kind": err.kind,
        "check": err.check,
        "code": err.code,
        "name": err.name,
        "api": err.api,
        "detail": err.detail or err.meaning,
        "site": _site(err.site),
        "launch_site": _site(err.launch_site),
        "alloc_site": _site(err.alloc_site),
        "free_site": _site(err.free_site),
    }


def allocations(rt: Any) -> list[Allocation]:
    """Every live device allocation, by device then address."""
    out: list[Allocation] = []
    with rt.lock:
        devices = sorted(rt.devices.items())
    for dev_id, dev in devices:
        mem = dev.memory
        for block in sorted(list(mem.live.values()), key=lambda b: b.addr):
            out.append(
                Allocation(
                    dev_id,
                    block.addr,
                    block.addr - mem.base,
                    block.size,
                    block.reserved,
                    block.consumed,
                    block.site,
                )
            )
    return out


def _device_json(dev: Any) -> dict[str, Any]:
    mem = dev.memory
    streams = sorted(dev.streams.values(), key=lambda s: s.id)
    return {
        "id": dev.id,
        "host_us": round(dev.host_us, 3),
        "memory": {
            "capacity": mem.capacity,
            "used": mem.used,
            "peak": mem.peak,
            "free": mem.free_bytes(),
            "largest_free_block": mem.largest_free_block(),
            "fragmentation": round(mem.fragmentation(), 4),
            "allocations": len(mem.live),
        },
        "streams": [
            {
                "id": s.id,
                "handle": s.handle,
                "default": s.context.default_stream is s,
                "ready_us": round(s.ready_us, 3),
                "pending": len(s.pending),
            }
            for s in streams
        ],
    }


def snapshot(session: StateSource) -> dict[str, Any]:
    """The `ascend-lens.state/1` document."""
    doc: dict[str, Any] = {
        "schema": STATE_SCHEMA,
        "started": session.loaded(),
        "device": session.device,
        "soc_name": None,
        "device_count": session.devices,
        "initialized": False,
        "devices": [],
        "findings": [],
        "finding_count": 0,
        "error_count": sum(1 for e in session.all_errors if e.kind == "error"),
    }
    if not session.loaded():
        return doc
    rt = session.runtime()
    with rt.lock:
        devices = [dev for _, dev in sorted(rt.devices.items())]
        doc["soc_name"] = rt.profile.soc_name
        doc["device_count"] = rt.device_count
        doc["initialized"] = rt.initialized
        doc["devices"] = [_device_json(dev) for dev in devices]
    findings = list(rt.sanitizer.findings)
    doc["finding_count"] = len(findings)
    doc["findings"] = [finding_json(f) for f in findings[-MAX_FINDINGS:]]
    return doc
