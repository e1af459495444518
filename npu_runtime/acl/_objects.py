"""Host-side ACL objects handed out as integer handles: data buffers, tensor descs, datasets.

The ops engineer's acl.op and acl.mdl resolve handles here (`data_buffer`, `tensor_desc`,
`dataset`), so every part sees the same objects.
"""

from __future__ import annotations

import itertools
import threading
from dataclasses import dataclass, field

# aclDataType -> element size in bytes (api.md §7); sub-byte types report 1 like aclDataTypeSize
DTYPE_SIZES: dict[int, int] = {
    0: 4, 1: 2, 2: 1, 3: 4, 4: 1, 6: 2, 7: 2, 8: 4, 9: 8, 10: 8, 11: 8, 12: 1,
    16: 8, 17: 16, 27: 2, 29: 1, 30: 1, 33: 4, 34: 1, 35: 1, 36: 1, 37: 1, 38: 1, 39: 1, 40: 1, 41: 1,
}  # fmt: skip


@dataclass(eq=False)
class DataBuffer:
    addr: int
    size: int


@dataclass(eq=False)
class TensorDesc:
    dtype: int
    dims: list[int]
    format: int
    name: str = ""
    storage_format: int | None = None
    storage_dims: list[int] | None = None
    origin_format: int | None = None
    origin_dims: list[int] | None = None
    shape_range: list[list[int]] | None = None
    const: bytes | None = None
    placement: int = 0
    dynamic_input: str = ""
    value_range: list[list[float]] | None = None

    def element_count(self) -> int:
        n = 1
        for d in self.dims:
            n *= max(d, 0)
        return n

    def size(self) -> int:
        return self.element_count() * DTYPE_SIZES.get(self.dtype, 0)


@dataclass(eq=False)
class Dataset:
    buffers: list[int] = field(default_factory=list)  # data buffer handles
    tensor_descs: list[int] = field(default_factory=list)


_HANDLE_BASE = 0x5B00_0000_0000
_lock = threading.Lock()
_seq = itertools.count(1)
_objects: dict[int, object] = {}


def new(obj: object) -> int:
    with _lock:
        h = _HANDLE_BASE + next(_seq) * 0x40
        _objects[h] = obj
    return h


def drop(handle: int) -> object | None:
    with _lock:
        return _objects.pop(handle, None)


def data_buffer(handle: int) -> DataBuffer | None:
    obj = _objects.get(handle)
    return obj if isinstance(obj, DataBuffer) else None


def tensor_desc(handle: int) -> TensorDesc | None:
    obj = _objects.get(handle)
    return obj if isinstance(obj, TensorDesc) else None


def dataset(handle: int) -> Dataset | None:
    obj = _objects.get(handle)
    return obj if isinstance(obj, Dataset) else None
