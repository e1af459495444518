"""A stream: an in-order queue with its own simulated clock.

Work is computed at enqueue; what the host may see only after a synchronisation (an async
copy's host-side result, a device-side failure) waits in `pending` until the host's
simulated time passes the work's end.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from npu_runtime.records import SourceSite

if TYPE_CHECKING:
    from npu_runtime.core.context import Context
    from npu_runtime.core.device import Device
    from npu_runtime.errors import AclError


@dataclass(slots=True)
class HostWrite:
    """Bytes an async device-to-host copy delivers to host memory when it completes."""

    end_us: float
    dst: int
    data: bytes
    site: SourceSite | None


@dataclass(slots=True)
class DeviceFault:
    """A device-side failure waiting for the synchronisation that reports it."""

    end_us: float
    error: AclError
    site: SourceSite | None  # launch site


@dataclass(eq=False)
class Stream:
    handle: int
    id: int  # per device; 0 for the default stream
    device: Device
    context: Context
    ready_us: float = 0.0  # simulated time the last queued work completes
    pending: list[HostWrite | DeviceFault] = field(default_factory=list)
    subscriber: int | None = None  # thread id that processes its callbacks
    alive: bool = True
    priority: int = 0
    flags: int = 0
