"""Autocast for `npu` (AutocastPrivateUse1): the cast policy torch_npu registers in C++.

PyTorch ships autocast kernels for CUDA and CPU only; an out-of-tree device registers its
own. The policy table is npu_runtime/data/autocast_npu.json; every other op falls through.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable
from importlib import resources
from typing import Any

import torch

_KEY = torch._C.DispatchKeySet(torch._C.DispatchKey.AutocastPrivateUse1)  # type: ignore[attr-defined]
_libs: list[torch.library.Library] = []


def _policy() -> dict[str, list[str]]:
    path = resources.files("npu_runtime.data").joinpath("autocast_npu.json")
    with path.open(encoding="utf-8") as f:
        data: dict[str, list[str]] = json.load(f)
    return data


def _cast(v: Any, to: Callable[[torch.Tensor], torch.dtype | None]) -> Any:
    if isinstance(v, torch.Tensor):
        if v.is_floating_point() and v.device.type == "npu":
            dt = to(v)
            if dt is not None and v.dtype != dt:
                return v.to(dt)
        return v
    if isinstance(v, (list, tuple)):
        return type(v)(_cast(x, to) for x in v)
    return v


def _lower(t: torch.Tensor) -> torch.dtype | None:
    return None if t.dtype == torch.float64 else torch.get_autocast_dtype("npu")


def _fp32(t: torch.Tensor) -> torch.dtype | None:
    return torch.float32 if t.dtype in (torch.float16, torch.bfloat16) else None


def _kernel(op: Any, policy: str) -> Callable[..., Any]:
    def kernel(*args: Any, **kwargs: Any) -> Any:
        if policy == "promote":
            widest = None
            for a in args:
                if isinstance(a, torch.Tensor) and a.is_floating_point():
                    widest = a.dtype if widest is None else torch.promote_types(widest, a.dtype)

            def to(t: torch.Tensor) -> torch.dtype | None:
                return widest

        else:
            to = _lower if policy == "lower_precision" else _fp32
        args = _cast(args, to)
        kwargs = {k: _cast(v, to) for k, v in kwargs.items()}
        with torch._C._ExcludeDispatchKeyGuard(_KEY):
            return op(*args, **kwargs)

    return kernel


def register() -> None:
    """Install the fallthrough and the policy kernels (once)."""
    if _libs:
        return
    fb = torch.library.Library("_", "IMPL")  # noqa: TOR901
    fb.fallback(torch.library.fallthrough_kernel, "AutocastPrivateUse1")
    lib = torch.library.Library("aten", "IMPL")  # noqa: TOR901
    for policy, names in _policy().items():
        if policy == "about":
            continue
        for name in names:
            packet = getattr(torch.ops.aten, name, None)
            if packet is None:
                continue
            for overload in packet.overloads():
                op = getattr(packet, overload)
                qual = name if overload == "default" else f"{name}.{overload}"
                # an overload that has an autocast kernel of its own already is left alone
                with contextlib.suppress(RuntimeError):
                    lib.impl(qual, _kernel(op, policy), "AutocastPrivateUse1")
    _libs.extend((fb, lib))
