"""One emulated device: its memory, its streams and the host's view of its simulated clock."""

from __future__ import annotations

import ctypes
import itertools
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from npu_runtime.core.memory import DeviceMemory
from npu_runtime.core.stream import DeviceFault, HostWrite, Stream
from npu_runtime.devices import DeviceProfile
from npu_runtime.errors import AclError
from npu_runtime.records import SourceSite

if TYPE_CHECKING:
    from npu_runtime.core.context import Context
    from npu_runtime.core.hostmem import HostMemory

HOST_CALL_US = 1.0  # simulated host time each enqueue costs (modelling choice)


class Device:
    def __init__(
        self,
        device_id: int,
        profile: DeviceProfile,
        on_lost_write: Callable[[HostWrite, SourceSite | None], None] | None = None,
    ) -> None:
        self.id = device_id
        # told when an async copy completes into host memory that is no longer there
        self.on_lost_write = on_lost_write
        self.profile = profile
        self.memory = DeviceMemory(device_id, profile.usable_bytes)
        self.lock = threading.RLock()
        self.host_us = 0.0  # the host's position on this device's simulated clock
        self._task_ids = itertools.count(1)
        self._stream_ids = itertools.count(1)
        self.streams: dict[int, Stream] = {}  # handle -> stream (default stream included)
        self.default_context: Context | None = None
        self.set_count = 0  # set_device calls not yet matched by reset_device
        self.events = 0
        self.peak_streams = 0
        self.sat_mode = 0

    def next_task_id(self) -> int:
        return next(self._task_ids)

    def next_stream_id(self) -> int:
        return next(self._stream_ids)

    def enqueue(self, stream: Stream, duration_us: float) -> tuple[float, float]:
        """Place work of `duration_us` on `stream`: returns (start_us, wait_us)."""
        with self.lock:
            self.host_us += HOST_CALL_US
            start = max(stream.ready_us, self.host_us)
            wait = start - stream.ready_us
            stream.ready_us = start + duration_us
        return start, wait

    def advance_host(self, until_us: float) -> None:
        with self.lock:
            if until_us > self.host_us:
                self.host_us = until_us

    def settle(
        self, streams: list[Stream], hostmem: HostMemory, site: SourceSite | None, api: str
    ) -> None:
        """Deliver completed async results on `streams`; raise the first device fault.

        Called at synchronisation points after the host clock moved. A fault surfaces here,
        carrying the sync site and the launch site of the work that failed.
        """
        fault: DeviceFault | None = None
        with self.lock:
            now = self.host_us
            for s in streams:
                if not s.pending:
                    continue
                keep: list[HostWrite | DeviceFault] = []
                for item in s.pending:
                    if item.end_us > now:
                        keep.append(item)
                    elif isinstance(item, HostWrite):
                        if hostmem.contains(item.dst, len(item.data)):
                            ctypes.memmove(item.dst, item.data, len(item.data))
                        elif self.on_lost_write is not None:
                            self.on_lost_write(item, site)
                        hostmem.pending_done(item.dst)
                    elif fault is None:
                        fault = item
                s.pending = keep
        if fault is not None:
            e = fault.error
            raise AclError(
                e.code,
                api,
                e.detail or f"device-side failure of work launched at {fault.site}",
                site=site,
                launch_site=fault.site,
            )
