"""Device profiles as data: core counts, memory, bandwidth, peaks and limits per Ascend SoC.

Figures live in npu_runtime/data/devices.json, each with its source; this module only loads
them. `get_profile("910B")` resolves aliases ("910B" -> the 910B2 figures).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any

__all__ = ["DeviceProfile", "get_profile", "profile_names", "default_profile_name"]


@dataclass(frozen=True)
class DeviceProfile:
    """The figures the runtime and the cost model need for one SoC."""

    name: str  # canonical key in devices.json, e.g. "910B2"
    soc_name: str  # what acl.get_soc_name() reports
    ai_core: int
    cube_core: int
    vector_core: int
    ai_cpu: int
    hbm_bytes: int
    reserved_bytes: int  # kept back by driver/runtime; not allocatable
    hbm_bandwidth_Bps: float
    hbm_efficiency: float  # achievable fraction of the peak bandwidth
    l2_bytes: int
    clock_hz: float
    peak_flops: dict[str, float]  # cube peak by msprof dtype name ("FLOAT16", "BF16", ...)
    vector_ops_per_s: dict[str, float]  # vector element ops per second by dtype
    launch_overhead_us: float
    memcpy_h2d_Bps: float
    memcpy_overhead_us: float
    max_streams: int
    max_events: int
    hbm_in_ddr: bool  # memory reported through the DDR attributes (310P)
    # Links between devices (the HCCL cost model, npu_runtime/hccl/cost.py).
    devices_per_server: int
    hccs_mesh_size: int  # devices in one HCCS full mesh; 1 = no HCCS (PCIe only)
    hccs_link_Bps: float  # one HCCS link, one direction
    hccs_latency_us: float  # one algorithm step over HCCS
    roce_Bps: float  # a device's RoCE port between servers, one direction
    roce_latency_us: float  # one algorithm step between servers
    link_efficiency: float  # achievable fraction of a link's rate
    hccl_op_overhead_us: float  # fixed cost of one HCCL op
    hccl_level1_default: dict[str, str]  # server-level algorithm: {"pow2": .., "other": ..}
    sources: dict[str, str] = field(default_factory=dict, compare=False)

    @property
    def usable_bytes(self) -> int:
        """Bytes acl.rt.get_mem_info reports as total."""
        return self.hbm_bytes - self.reserved_bytes

    @property
    def effective_bandwidth_Bps(self) -> float:
        return self.hbm_bandwidth_Bps * self.hbm_efficiency


def _load() -> dict[str, Any]:
    with resources.files("npu_runtime.data").joinpath("devices.json").open(encoding="utf-8") as f:
        data: dict[str, Any] = json.load(f)
    return data


@cache
def _table() -> dict[str, Any]:
    return _load()


def default_profile_name() -> str:
    return str(_table()["default"])


def profile_names() -> list[str]:
    """Canonical profile names and their aliases."""
    t = _table()
    return sorted(set(t["profiles"]) | set(t["aliases"]))


def get_profile(name: str | None = None) -> DeviceProfile:
    """The profile for `name` (canonical or alias, case-insensitive); default 910B.

    Raises ValueError naming the known profiles when `name` is unknown.
    """
    t = _table()
    key = name or t["default"]
    by_lower = {k.lower(): k for k in t["profiles"]} | {
        k.lower(): v for k, v in t["aliases"].items()
    }
    canonical = by_lower.get(key.lower())
    if canonical is None:
        raise ValueError(f"unknown device {key!r}; known: {', '.join(profile_names())}")
    return _build(canonical)


@cache
def _build(canonical: str) -> DeviceProfile:
    raw = _table()["profiles"][canonical]
    values = {k: v["value"] for k, v in raw.items() if isinstance(v, dict) and "value" in v}
    sources = {k: v["source"] for k, v in raw.items() if isinstance(v, dict) and "source" in v}
    return DeviceProfile(name=canonical, soc_name=raw["soc_name"], sources=sources, **values)
