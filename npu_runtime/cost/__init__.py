"""The roofline cost model: an op's Work priced on a device profile (see roofline.py)."""

from __future__ import annotations

from npu_runtime.cost.params import CostParams, params_for
from npu_runtime.cost.roofline import Cost, estimate

__all__ = ["Cost", "CostParams", "estimate", "params_for"]
