"""`torch.npu` (also `torch_npu.npu`): device, memory, stream and RNG API of the npu device."""

from __future__ import annotations

from typing import Any

import torch

from npu_runtime.core.runtime import get_runtime
from npu_runtime.torch_npu import _backend as B
from npu_runtime.torch_npu.random import generator

_rt = get_runtime()

from npu_runtime.torch_npu.npu import amp as amp  # noqa: E402
from npu_runtime.torch_npu.npu.streams import Event as Event  # noqa: E402
from npu_runtime.torch_npu.npu.streams import Stream as Stream  # noqa: E402
from npu_runtime.torch_npu.npu.streams import current_stream as current_stream  # noqa: E402
from npu_runtime.torch_npu.npu.streams import default_stream as default_stream  # noqa: E402
from npu_runtime.torch_npu.npu.streams import set_stream as set_stream  # noqa: E402
from npu_runtime.torch_npu.npu.streams import stream as stream  # noqa: E402


def _index(device: Any = None) -> int:
    if device is None:
        return B.state.device
    if isinstance(device, int):
        return device
    if isinstance(device, str):
        device = torch.device(device)
    if isinstance(device, torch.device):
        if device.type not in ("npu", "cuda"):
            raise ValueError(f"Expected a npu device, but got: {device}")
        return device.index if device.index is not None else B.state.device
    return int(device)


# -- devices ------------------------------------------------------------------------------
def is_available() -> bool:
    return True


def is_initialized() -> bool:
    return bool(B._devices)


def init() -> None:
    B.ensure_device(B.state.device)


def _lazy_init() -> None:
    init()


def _is_in_bad_fork() -> bool:
    return False


def device_count() -> int:
    return _rt.device_count


def current_device() -> int:
    return B.state.device


def set_device(device: Any) -> None:
    i = _index(device)
    if not 0 <= i < _rt.device_count:
        raise RuntimeError(
            f"Invalid device ordinal {i}: the process sees {_rt.device_count} NPU device(s)"
        )
    B.state.device = i
    dev = B.ensure_device(i)
    _rt.tls.context = dev.default_context


def get_device_name(device: Any = None) -> str:
    return _rt.profile.soc_name


class _DeviceProperties:
    def __init__(self, i: int) -> None:
        prof = _rt.profile
        self.name = prof.soc_name
        self.total_memory = B.torch_capacity(B.ensure_device(i))
        self.cube_core_num = prof.cube_core
        self.vector_core_num = prof.vector_core
        self.L2_cache_size = prof.l2_bytes

    def __repr__(self) -> str:
        return (
            f"_NPUDeviceProperties(name='{self.name}', total_memory={self.total_memory >> 20}MB, "
            f"cube_core_num={self.cube_core_num}, vector_core_num={self.vector_core_num}, "
            f"L2_cache_size={self.L2_cache_size >> 20}MB)"
        )


def get_device_properties(device: Any = None) -> _DeviceProperties:
    return _DeviceProperties(_index(device))


def synchronize(device: Any = None) -> None:
    i = _index(device)
    B.ensure_device(i)
    dev = B._devices[i]
    streams = list(dev.streams.values())
    dev.advance_host(max(s.ready_us for s in streams))
    dev.settle(streams, _rt.hostmem, None, "aclrtSynchronizeDevice")


class device:
    """Context manager that makes npu:N current: `with torch.npu.device(1): ...`."""

    def __init__(self, device: Any) -> None:
        self.idx = _index(device)
        self.prev = -1

    def __enter__(self) -> None:
        self.prev = B.state.device
        set_device(self.idx)

    def __exit__(self, *exc: object) -> None:
        set_device(self.prev)


# -- memory ---------------------------------------------------------------------------------
def _alloc(device: Any = None) -> Any:
    return B.allocator_for(_index(device))


def memory_allocated(device: Any = None) -> int:
    return int(_alloc(device).stats.allocated)


def max_memory_allocated(device: Any = None) -> int:
    return int(_alloc(device).stats.peak_allocated)


def memory_reserved(device: Any = None) -> int:
    return int(_alloc(device).reserved)


def max_memory_reserved(device: Any = None) -> int:
    return int(_alloc(device).stats.peak_reserved)


memory_cached = memory_reserved
max_memory_cached = max_memory_reserved


def reset_peak_memory_stats(device: Any = None) -> None:
    _alloc(device).reset_peak()


reset_max_memory_allocated = reset_peak_memory_stats


def empty_cache() -> None:
    for i in list(B._allocators):
        B._allocators[i].empty_cache()


def mem_get_info(device: Any = None) -> tuple[int, int]:
    a = _alloc(device)
    mem = a.memory
    return max(a.capacity - mem.used, 0), a.capacity


def set_per_process_memory_fraction(fraction: float, device: Any = None) -> None:
    if not 0 <= fraction <= 1:
        raise ValueError(f"invalid fraction: {fraction}. Please set within [0, 1].")
    _alloc(device).fraction = fraction


def memory_stats(device: Any = None) -> dict[str, int]:
    a = _alloc(device)
    s = a.stats
    return {
        "allocated_bytes.all.current": s.allocated,
        "allocated_bytes.all.peak": s.peak_allocated,
        "reserved_bytes.all.current": a.reserved,
        "reserved_bytes.all.peak": s.peak_reserved,
        "active_bytes.all.current": s.allocated,
        "num_alloc_retries": s.num_alloc_retries,
        "num_ooms": s.num_ooms,
        "allocation.all.allocated": s.alloc_count,
        "allocation.all.freed": s.free_count,
    }


def memory_summary(device: Any = None, abbreviated: bool = False) -> str:
    from npu_runtime.torch_npu.allocator import format_size

    i = _index(device)
    st = memory_stats(i)
    rows = [
        ("Allocated memory", st["allocated_bytes.all.current"], st["allocated_bytes.all.peak"]),
        ("Active memory", st["active_bytes.all.current"], st["allocated_bytes.all.peak"]),
        ("NPU reserved memory", st["reserved_bytes.all.current"], st["reserved_bytes.all.peak"]),
    ]
    line = "|" + "=" * 75 + "|"
    out = [line, f"|{'PyTorch NPU memory summary, device ID ' + str(i):^75}|", line,
           f"|{'Metric':<30}| {'Cur Usage':>20} | {'Peak Usage':>20} |", line]  # fmt: skip
    for name, cur, peak in rows:
        out.append(f"|{name:<30}| {format_size(cur):>20} | {format_size(peak):>20} |")
    out.append(f"|{'NPU OOMs':<30}| {st['num_ooms']:>20} | {'':>20} |")
    out.append(line)
    return "\n".join(out) + "\n"


# -- random ------------------------------------------------------------------------------------
def manual_seed(seed: int) -> None:
    generator(B.state.device).manual_seed(int(seed))


def manual_seed_all(seed: int) -> None:
    for i in range(_rt.device_count):
        generator(i).manual_seed(int(seed))


def seed() -> None:
    generator(B.state.device).seed()


def seed_all() -> None:
    for i in range(_rt.device_count):
        generator(i).seed()


def initial_seed() -> int:
    return int(generator(B.state.device).initial_seed())


def get_rng_state(device: Any = None) -> torch.Tensor:
    return generator(_index(device)).get_state()


def set_rng_state(new_state: torch.Tensor, device: Any = None) -> None:
    generator(_index(device)).set_state(new_state.cpu())


def get_rng_state_all() -> list[torch.Tensor]:
    return [get_rng_state(i) for i in range(_rt.device_count)]


def set_rng_state_all(states: list[torch.Tensor]) -> None:
    for i, s in enumerate(states):
        set_rng_state(s, i)


# -- amp support hooks PyTorch asks the device module for -----------------------------------
def get_amp_supported_dtype() -> list[torch.dtype]:
    return [torch.float16, torch.bfloat16]


def is_bf16_supported() -> bool:
    return _rt.profile.name != "910A"


# -- settings real scripts set at start-up -------------------------------------------------------
class _Flags:
    """A settings namespace: `torch.npu.config.allow_internal_format = False` and the like.

    The emulator keeps every tensor in ND format and computes Cube ops in the input type
    with float32 accumulation, so the values are recorded but change nothing."""

    def __init__(self, **defaults: Any) -> None:
        self.__dict__.update(defaults)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.__dict__})"


config = _Flags(allow_internal_format=False)
matmul = _Flags(allow_hf32=False)
conv = _Flags(allow_hf32=True)
_compile_mode = {"jit_compile": False}


def set_compile_mode(jit_compile: bool = False) -> None:
    """torch.npu.set_compile_mode(jit_compile=...): online compilation on or off (recorded)."""
    _compile_mode["jit_compile"] = bool(jit_compile)


def is_jit_compile_false() -> bool:
    return not _compile_mode["jit_compile"]


def get_device_capability(device: Any = None) -> None:
    """torch_npu reports no CUDA-style compute capability for an NPU."""
    return None


def __getattr__(name: str) -> Any:
    if name == "default_generators":  # one generator per device, as torch_npu exposes them
        return tuple(generator(i) for i in range(_rt.device_count))
    raise AttributeError(f"module 'torch.npu' has no attribute {name!r}")
