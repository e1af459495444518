"""`torch.npu.amp` / `torch_npu.npu.amp`: autocast and GradScaler for the npu device."""

from __future__ import annotations

from typing import Any

import torch


class autocast(torch.amp.autocast_mode.autocast):  # noqa: N801 (torch's name)
    """`torch.npu.amp.autocast(enabled=True, dtype=torch.float16, cache_enabled=True)`."""

    def __init__(
        self, enabled: bool = True, dtype: torch.dtype = torch.float16, cache_enabled: bool = True
    ) -> None:
        super().__init__("npu", enabled=enabled, dtype=dtype, cache_enabled=cache_enabled)


class GradScaler(torch.amp.grad_scaler.GradScaler):
    """`torch.npu.amp.GradScaler(...)`: torch.amp.GradScaler on the npu device."""

    def __init__(
        self,
        init_scale: float = 2.0**16,
        growth_factor: float = 2.0,
        backoff_factor: float = 0.5,
        growth_interval: int = 2000,
        enabled: bool = True,
        dynamic: bool = True,
    ) -> None:
        super().__init__("npu", init_scale, growth_factor, backoff_factor, growth_interval, enabled)
        self._dynamic = dynamic


def custom_fwd(*args: Any, **kwargs: Any) -> Any:
    return torch.amp.custom_fwd(*args, device_type="npu", **kwargs)


def custom_bwd(*args: Any, **kwargs: Any) -> Any:
    return torch.amp.custom_bwd(*args, device_type="npu", **kwargs)
