"""`import torch_npu.contrib.transfer_to_npu`: CUDA code runs on the npu device unchanged.

Like torch_npu's module of the same name, importing it redirects the CUDA entry points a
script uses: `.cuda()`, `device="cuda"` / `torch.device("cuda:N")` arguments,
`torch.cuda.*` (device, memory, streams, RNG, amp), `torch.autocast("cuda")` and
`init_process_group(backend="nccl")` land on `npu` / `hccl`. This is the one place Ascend
Lens replaces torch functions, because that is exactly what the real module does.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import torch

import npu_runtime.torch_npu  # noqa: F401 (registers the npu device)
from npu_runtime.torch_npu import npu as _npu

_FACTORIES = (
    "tensor", "as_tensor", "zeros", "ones", "empty", "full", "rand", "randn", "randint",
    "randperm", "arange", "linspace", "logspace", "eye", "zeros_like", "ones_like", "empty_like",
    "full_like", "rand_like", "randn_like", "randint_like", "empty_strided", "tril_indices",
    "triu_indices", "from_numpy", "normal", "bartlett_window", "hann_window", "hamming_window",
)  # fmt: skip
_TENSOR_METHODS = ("to", "new_empty", "new_zeros", "new_ones", "new_full", "new_tensor", "type")
_CUDA_API = (
    "is_available", "device_count", "current_device", "set_device", "get_device_name",
    "get_device_properties", "synchronize", "device", "memory_allocated", "max_memory_allocated",
    "memory_reserved", "max_memory_reserved", "memory_cached", "max_memory_cached",
    "reset_peak_memory_stats", "reset_max_memory_allocated", "empty_cache", "mem_get_info",
    "memory_stats", "memory_summary", "set_per_process_memory_fraction", "manual_seed",
    "manual_seed_all", "seed", "seed_all", "initial_seed", "get_rng_state", "set_rng_state",
    "get_rng_state_all", "set_rng_state_all", "Stream", "Event", "stream", "current_stream",
    "default_stream", "set_stream", "is_bf16_supported", "is_initialized", "init",
)  # fmt: skip


def _swap(v: Any) -> Any:
    if isinstance(v, str):
        if v == "cuda" or v.startswith("cuda:"):
            return "npu" + v[4:]
        return v
    if isinstance(v, torch.device) and v.type == "cuda":
        return torch.device("npu", v.index) if v.index is not None else torch.device("npu")
    if isinstance(v, int) and not isinstance(v, bool):
        return v
    return v


def _wrap(fn: Callable[..., Any], positional_device: bool = False) -> Callable[..., Any]:
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if "device" in kwargs:
            kwargs["device"] = _swap(kwargs["device"])
        if positional_device and args:
            args = tuple(_swap(a) for a in args)
        return fn(*args, **kwargs)

    wrapper.__dict__["_ascend_lens_transfer"] = True
    return wrapper


class _Autocast(torch.amp.autocast_mode.autocast):
    def __init__(self, device_type: str = "cuda", *args: Any, **kwargs: Any) -> None:
        super().__init__("npu" if device_type == "cuda" else device_type, *args, **kwargs)


class _GradScaler(torch.amp.grad_scaler.GradScaler):
    def __init__(self, device: str = "cuda", *args: Any, **kwargs: Any) -> None:
        super().__init__("npu" if device == "cuda" else device, *args, **kwargs)


def _apply() -> None:
    if getattr(torch.Tensor.cuda, "_ascend_lens_transfer", False):
        return
    for name in _FACTORIES:
        if hasattr(torch, name):
            setattr(torch, name, _wrap(getattr(torch, name)))
    for name in _TENSOR_METHODS:
        setattr(torch.Tensor, name, _wrap(getattr(torch.Tensor, name), positional_device=True))

    def tensor_cuda(
        self: torch.Tensor, device: Any = None, non_blocking: bool = False, **kw: Any
    ) -> torch.Tensor:
        to_npu: Any = getattr(self, "npu")  # noqa: B009 (added by the backend at run time)
        return to_npu(_swap(device), non_blocking=non_blocking)

    tensor_cuda.__dict__["_ascend_lens_transfer"] = True
    setattr(torch.Tensor, "cuda", tensor_cuda)  # noqa: B010
    setattr(torch.Tensor, "is_cuda", property(lambda self: self.device.type == "npu"))  # noqa: B010

    def module_cuda(self: torch.nn.Module, device: Any = None) -> torch.nn.Module:
        return self.npu(_swap(device))  # type: ignore[operator]

    setattr(torch.nn.Module, "cuda", module_cuda)  # noqa: B010
    setattr(torch.nn.Module, "to", _wrap(torch.nn.Module.to, positional_device=True))  # noqa: B010
    for name in _CUDA_API:
        if hasattr(_npu, name):
            setattr(torch.cuda, name, getattr(_npu, name))
    setattr(torch.cuda.amp, "autocast", _npu.amp.autocast)  # noqa: B010
    setattr(torch.cuda.amp, "GradScaler", _npu.amp.GradScaler)  # noqa: B010
    setattr(torch, "autocast", _Autocast)  # noqa: B010
    setattr(torch.amp, "autocast", _Autocast)  # noqa: B010
    setattr(torch.amp, "GradScaler", _GradScaler)  # noqa: B010
    _patch_distributed()


def _patch_distributed() -> None:
    import torch.distributed as dist

    if not dist.is_available():
        return
    init = dist.init_process_group

    @functools.wraps(init)
    def init_process_group(*args: Any, **kwargs: Any) -> Any:
        if kwargs.get("backend") == "nccl":
            kwargs["backend"] = "hccl"
        elif args and args[0] == "nccl":
            args = ("hccl", *args[1:])
        return init(*args, **kwargs)

    dist.init_process_group = init_process_group


_apply()
