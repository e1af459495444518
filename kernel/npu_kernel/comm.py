"""The `ascend-lens.state` comm: pushes device, memory and stream state to the frontend.

The frontend opens a comm to this target; the kernel answers with the current state at
once, again after every execution, and whenever the frontend sends {"request": "state"}.
Nothing is computed while no comm is open.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from npu_kernel import STATE_COMM_TARGET

log = logging.getLogger(__name__)

Snapshot = Callable[[], dict[str, Any]]


class StateChannel:
    """Tracks open `ascend-lens.state` comms and sends them state messages."""

    def __init__(self, comm_manager: Any, snapshot: Snapshot) -> None:
        self._snapshot = snapshot
        self._comms: dict[str, Any] = {}
        comm_manager.register_target(STATE_COMM_TARGET, self._opened)

    @property
    def open_count(self) -> int:
        return len(self._comms)

    def _opened(self, comm: Any, open_msg: dict[str, Any]) -> None:
        self._comms[comm.comm_id] = comm
        comm.on_msg(lambda msg: self._received(comm, msg))
        comm.on_close(lambda msg: self._comms.pop(comm.comm_id, None))
        self._send(comm, "open")

    def _received(self, comm: Any, msg: dict[str, Any]) -> None:
        data = msg.get("content", {}).get("data", {})
        if isinstance(data, dict) and data.get("request") == "state":
            self._send(comm, "request")
        else:
            comm.send({"type": "error", "message": 'unknown request; send {"request": "state"}'})

    def message(self, reason: str) -> dict[str, Any]:
        return {"type": "state", "reason": reason, "state": self._snapshot()}

    def _send(self, comm: Any, reason: str) -> None:
        comm.send(self.message(reason))

    def push(self, reason: str = "execute") -> None:
        """Send the state to every open comm (no work when none is open)."""
        if not self._comms:
            return
        data = self.message(reason)
        for comm in list(self._comms.values()):
            try:
                comm.send(data)
            except Exception:  # a frontend that went away must not break execution
                log.exception("dropping state comm %s", comm.comm_id)
                self._comms.pop(comm.comm_id, None)
