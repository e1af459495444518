"""The runtime state as JSON, for the `ascend-lens.state` comm (schema in docs/kernel.md)."""

from __future__ import annotations

from typing import Any

STATE_SCHEMA = "ascend-lens.state/1"


def snapshot(session: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "schema": STATE_SCHEMA,
        "started": session.loaded(),
        "device": session.device,
        "device_count": session.devices,
        "devices": [],
        "findings": [],
    }
    return base
