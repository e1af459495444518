"""A context: the device it belongs to and its default stream."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from npu_runtime.core.device import Device
    from npu_runtime.core.stream import Stream


@dataclass(eq=False)
class Context:
    handle: int
    device: Device
    is_default: bool  # the implicit context set_device creates
    default_stream: Stream | None = None
    streams: set[int] = field(default_factory=set)  # handles of streams created in it
    alive: bool = True
