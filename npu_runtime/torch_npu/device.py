"""Registers the `npu` device with PyTorch (PrivateUse1) once per process."""

from __future__ import annotations

import os
from typing import Any

import torch

from npu_runtime.core.runtime import get_runtime

_done = False


class _Hooks(torch._C._acc.PrivateUse1Hooks):
    def is_available(self) -> bool:
        return True

    def has_primary_context(self, dev_id: int) -> bool:
        return dev_id in get_runtime().devices

    def is_built(self) -> bool:
        return True


class _Guard(torch._C._acc.DeviceGuard):
    def type_(self) -> Any:
        return torch._C._autograd.DeviceType.PrivateUse1


def _kernel(op: Any) -> Any:
    from npu_runtime.torch_npu.aten import fallback

    def kernel(*args: Any, **kwargs: Any) -> Any:
        return fallback(op, *args, **kwargs)

    return kernel


_DENSE = ("cpu", "npu")


def _compatible_shallow_copy(self: torch.Tensor, src: torch.Tensor) -> bool:
    """Dense CPU and npu tensors can take each other's data, as in torch_npu."""
    if torch._C._dispatch_keys(self) == torch._C._dispatch_keys(src):
        return True
    return (
        self.layout == src.layout == torch.strided
        and self.device.type in _DENSE
        and src.device.type in _DENSE
    )


def _pin_memory(t: torch.Tensor, device: Any = None) -> torch.Tensor:
    return t.clone()


def _is_pinned(t: torch.Tensor, device: Any = None) -> bool:
    return False


def setup() -> None:
    """Rename PrivateUse1 to npu, install the backend module, hooks and the op fallback."""
    global _done
    if _done:
        return
    from torch.utils.backend_registration import _setup_privateuseone_for_python_backend

    from npu_runtime import sites
    from npu_runtime.torch_npu import _backend, aten, native_guard, npu

    if torch._C._get_privateuse1_backend_name() != "privateuseone":
        raise RuntimeError(
            f"PrivateUse1 is already taken by {torch._C._get_privateuse1_backend_name()!r}: "
            "a real torch_npu (or another out-of-tree device) was imported before the emulator's"
        )
    # The C++ guard first (it knows every device and the current one, which the autograd
    # engine needs for npu:N > 0); torch's Python guard is then not registered. Without a
    # compiler the Python guard remains (backward on npu:0 only).
    if native_guard.install(get_runtime().device_count):
        _backend.use_guard_state()
    _setup_privateuseone_for_python_backend("npu", npu, _Hooks(), _Guard())
    lib = torch.library.Library("_", "IMPL")  # noqa: TOR901 (a backend fallback, kept alive below)
    lib.fallback(aten.fallback, "PrivateUse1")
    # Ops whose default (CompositeExplicitAutograd) kernel would shadow the fallback.
    aten_lib = torch.library.Library("aten", "IMPL")  # noqa: TOR901
    for name in aten.EXPLICIT:
        op = getattr(torch.ops.aten, name).default
        aten_lib.impl(name, _kernel(op), "PrivateUse1")
    # `param.data = npu_tensor` on a CPU parameter (FSDP1 moving a module to its device):
    # torch's own check knows only its in-tree dense backends; torch_npu registers this.
    aten_lib.impl("_has_compatible_shallow_copy_type", _compatible_shallow_copy, "PrivateUse1")
    # Pinned host memory: PyTorch asks the device's C++ hooks for a pinned allocator, which a
    # Python backend cannot provide. Host memory is host memory to the emulator, so pinning
    # (DataLoader(pin_memory=True), tensor.pin_memory()) gives a CPU copy, as a page-locked
    # copy would be.
    cpu_lib = torch.library.Library("aten", "IMPL")  # noqa: TOR901
    cpu_lib.impl("_pin_memory", _pin_memory, "CPU")
    cpu_lib.impl("is_pinned", _is_pinned, "CPU")
    globals()["_libs"] = (lib, aten_lib, cpu_lib)
    from npu_runtime.torch_npu import autocast

    autocast.register()
    # torch.load(map_location="npu"): PyTorch's own hook for a device's storages.
    torch.serialization.register_package(15, _tag, _restore)
    # Frames inside torch sit between the user's line and the device: never a launch site.
    sites.add_internal_root(os.path.dirname(torch.__file__))
    _done = True


def is_set_up() -> bool:
    """True once `npu` is registered with PyTorch in this process."""
    return _done


def _tag(obj: Any) -> str | None:
    if obj.device.type == "npu":
        return f"npu:{obj.device.index or 0}"
    return None


def _restore(obj: Any, location: str) -> Any:
    """torch.load(map_location="npu[:N]"): storage from the caching allocator, filled from
    the file's CPU bytes as a host-to-device copy."""
    if not location.startswith("npu"):
        return None
    from npu_runtime.torch_npu import _backend as B

    index = int(location.split(":", 1)[1]) if ":" in location else B.state.device
    n = obj.nbytes()
    storage = B.new_storage(index, n)
    if n:
        dst = B.with_storage(storage, [n], [1], torch.uint8, index)
        src = torch.empty(0, dtype=torch.uint8, device="cpu").set_(
            obj.untyped_storage() if hasattr(obj, "untyped_storage") else obj
        )
        dst.copy_(src)
    return storage
