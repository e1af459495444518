"""How device tensors look in the variables view: a summary and paged values, never the whole.

pydevd's default view of an object lists every attribute, which for `npu_runtime.Tensor`
would evaluate properties such as `.T` (launching a Transpose on the device) and would show
nothing of the data. These providers show shape, dtype, device and the first few values,
and expand into value ranges of at most PAGE elements, each read straight from emulated
device memory when it is opened: no synchronisation, no copy of the rest, no profile record.

Loaded only inside the debuggee, after debugpy (its `_pydevd_bundle` is importable then).
"""

from __future__ import annotations

import sys
from typing import Any

from _pydevd_bundle.pydevd_extension_api import StrPresentationProvider, TypeResolveProvider

__all__ = ["TensorResolver", "TensorStr", "ValueRangeResolver", "register"]

PAGE = 100  # children per level: values in a leaf range, sub-ranges above it
PREVIEW = 4  # values shown in the one-line summary
TENSOR_TYPES = {("npu_runtime.tensor", "Tensor")}


class ValueRange:
    """Elements [start, stop) of a tensor in flat (C) order; expands lazily."""

    __slots__ = ("stop", "start", "tensor")

    def __init__(self, tensor: Any, start: int, stop: int) -> None:
        self.tensor, self.start, self.stop = tensor, start, stop

    def __repr__(self) -> str:
        return f"[{self.start}:{self.stop}]"


def _is_tensor(type_object: type) -> bool:
    return (getattr(type_object, "__module__", ""), type_object.__name__) in TENSOR_TYPES


def read_values(tensor: Any, start: int, stop: int) -> list[Any]:
    """Elements [start, stop) read from device memory (not synchronised: what is there now)."""
    itemsize = tensor.dtype.itemsize
    raw = tensor._dev.memory.view(tensor.addr + start * itemsize, (stop - start) * itemsize)
    return raw.view(tensor.dtype).tolist()


def _dtype_name(tensor: Any) -> str:
    try:
        from npu_runtime import numerics

        info = numerics.by_numpy(tensor.dtype)
        return info.name if info is not None else str(tensor.dtype)
    except Exception:
        return str(tensor.dtype)


def _index(tensor: Any, flat: int) -> str:
    """`[i, j, k]` for a flat element index."""
    out: list[int] = []
    for dim in reversed(tensor.shape):
        out.append(flat % dim if dim else 0)
        flat = flat // dim if dim else 0
    return "[" + ", ".join(str(i) for i in reversed(out)) + "]"


def _ranges(tensor: Any, start: int, stop: int) -> dict[str, Any]:
    """At most PAGE children: single values for a short range, else equal sub-ranges."""
    n = stop - start
    if n <= PAGE:
        try:
            values = read_values(tensor, start, stop)
        except Exception as exc:
            return {"<unreadable>": f"device memory is not readable: {exc}"}
        return {_index(tensor, start + i): v for i, v in enumerate(values)}
    step = PAGE
    while step * PAGE < n:
        step *= PAGE
    return {
        f"[{lo}:{min(lo + step, stop)}]": ValueRange(tensor, lo, min(lo + step, stop))
        for lo in range(start, stop, step)
    }


def summary(tensor: Any) -> str:
    size = tensor.size
    head = (
        f"Tensor(shape={list(tensor.shape)}, dtype={_dtype_name(tensor)}, device={tensor.device})"
    )
    if size == 0:
        return head + " []"
    try:
        values = read_values(tensor, 0, min(size, PREVIEW))
    except Exception:
        return head + " <memory released>"
    more = ", ..." if size > PREVIEW else ""
    return (
        head
        + " ["
        + ", ".join(f"{v:g}" if isinstance(v, float) else str(v) for v in values)
        + more
        + "]"
    )


class TensorStr(StrPresentationProvider):
    def can_provide(self, type_object: type, type_name: str) -> bool:
        return _is_tensor(type_object) or type_object is ValueRange

    def get_str(self, val: Any) -> str:
        if isinstance(val, ValueRange):
            return f"elements {val.start}..{val.stop - 1}"
        return summary(val)


class TensorResolver(TypeResolveProvider):
    def can_provide(self, type_object: type, type_name: str) -> bool:
        return _is_tensor(type_object)

    def get_dictionary(self, var: Any) -> dict[str, Any]:
        children: dict[str, Any] = {
            "shape": tuple(var.shape),
            "dtype": _dtype_name(var),
            "device": var.device,
            "nbytes": var.nbytes,
            "address": hex(var.addr),
        }
        if var.size:
            children["values"] = ValueRange(var, 0, var.size)
        return children

    def resolve(self, var: Any, attribute: str) -> Any:
        return self.get_dictionary(var).get(attribute)

    def get_contents_debug_adapter_protocol(
        self, var: Any, fmt: Any = None
    ) -> list[tuple[str, Any, None]]:
        """Children in our order (pydevd would sort names as strings)."""
        return [(k, v, None) for k, v in self.get_dictionary(var).items()]


class ValueRangeResolver(TypeResolveProvider):
    def can_provide(self, type_object: type, type_name: str) -> bool:
        return type_object is ValueRange

    def get_dictionary(self, var: ValueRange) -> dict[str, Any]:
        return _ranges(var.tensor, var.start, var.stop)

    def resolve(self, var: ValueRange, attribute: str) -> Any:
        return self.get_dictionary(var).get(attribute)

    def get_contents_debug_adapter_protocol(
        self, var: ValueRange, fmt: Any = None
    ) -> list[tuple[str, Any, None]]:
        return [(k, v, None) for k, v in self.get_dictionary(var).items()]


def register() -> None:
    """Add these providers to pydevd's extension list (before any variable is shown)."""
    from _pydevd_bundle import pydevd_extension_utils

    manager = pydevd_extension_utils.EXTENSION_MANAGER_INSTANCE
    manager._ensure_loaded()
    if sys.modules[__name__] not in manager.loaded_extensions:
        manager.loaded_extensions.append(sys.modules[__name__])
        manager.type_to_instance.clear()
