"""An event: a point on a stream's simulated timeline."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from npu_runtime.records import SourceSite

if TYPE_CHECKING:
    from npu_runtime.core.device import Device

ACL_EVENT_SYNC = 0x1
ACL_EVENT_TIME_LINE = 0x8


@dataclass(eq=False)
class Event:
    handle: int
    device: Device
    flags: int = 0
    ex: bool = False  # created by create_event_ex_with_flag
    recorded_us: float | None = None  # completion time of the work before the record
    record_stream: int = -1  # stream id it was recorded on
    record_site: SourceSite | None = None
    alive: bool = True
