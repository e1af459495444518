"""Loader for npu_runtime/data/cost_model.json: model parameters per device profile name."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any


@dataclass(frozen=True, slots=True)
class CostParams:
    """What the roofline adds to a device profile's hardware figures."""

    cube_efficiency: float
    vector_efficiency: float
    fractal_mnk: dict[str, tuple[int, int, int]]  # msprof dtype (or "default") -> (M, K, N)
    vector_min_bytes_per_core: int
    aicpu_launch_us: float
    aicpu_elements_per_us: float

    def fractal(self, msprof_dtype: str) -> tuple[int, int, int]:
        return self.fractal_mnk.get(msprof_dtype, self.fractal_mnk["default"])


@cache
def _table() -> dict[str, Any]:
    path = resources.files("npu_runtime.data").joinpath("cost_model.json")
    with path.open(encoding="utf-8") as f:
        data: dict[str, Any] = json.load(f)
    return data


@cache
def params_for(profile_name: str) -> CostParams:
    """Defaults overlaid with the entry for `profile_name` (a canonical devices.json name)."""
    t = _table()
    merged = {**t["default"], **t["profiles"].get(profile_name, {})}
    v = {k: e["value"] for k, e in merged.items()}
    v["fractal_mnk"] = {k: tuple(x) for k, x in v["fractal_mnk"].items()}
    return CostParams(**v)
