"""Read back a `.pt` tensor file without torch: enough to check what torch.load would build.

Only the three globals a tensor file may reference are resolved (to stand-ins); anything
else fails the test, as torch.load(weights_only=True) would refuse it.
"""

from __future__ import annotations

import collections
import pickle
import zipfile
from pathlib import Path
from typing import Any

import ml_dtypes
import numpy as np

STORAGE_DTYPES = {
    "HalfStorage": np.float16, "BFloat16Storage": ml_dtypes.bfloat16, "FloatStorage": np.float32,
    "DoubleStorage": np.float64, "BoolStorage": np.bool_, "CharStorage": np.int8,
    "ByteStorage": np.uint8, "ShortStorage": np.int16, "IntStorage": np.int32,
    "LongStorage": np.int64,
}  # fmt: skip


class _Storage:
    def __init__(self, name: str) -> None:
        self.name = name


def _rebuild(storage: tuple[str, str, np.ndarray], offset: int, size: tuple[int, ...],
             stride: tuple[int, ...], requires_grad: bool, hooks: Any) -> tuple[str, np.ndarray]:  # fmt: skip
    assert offset == 0 and requires_grad is False and hooks == collections.OrderedDict()
    name, _, flat = storage
    item = flat.itemsize
    return name, np.lib.stride_tricks.as_strided(flat, size, tuple(s * item for s in stride))


class _Unpickler(pickle.Unpickler):
    def __init__(self, f: Any, archive: zipfile.ZipFile, stem: str) -> None:
        super().__init__(f)
        self.archive, self.stem = archive, stem

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) == ("torch._utils", "_rebuild_tensor_v2"):
            return _rebuild
        if (module, name) == ("collections", "OrderedDict"):
            return collections.OrderedDict
        if module == "torch" and name in STORAGE_DTYPES:
            return _Storage(name)
        raise pickle.UnpicklingError(f"{module}.{name} is not allowed")

    def persistent_load(self, pid: Any) -> tuple[str, str, np.ndarray]:
        kind, storage, key, location, numel = pid
        assert (kind, location) == ("storage", "cpu")
        raw = self.archive.read(f"{self.stem}/data/{key}")
        flat = np.frombuffer(raw, STORAGE_DTYPES[storage.name])
        assert flat.size == numel
        return storage.name, key, flat


def load_pt(path: Path) -> tuple[str, np.ndarray]:
    """(storage class name, array) of a tensor file written by torch.save."""
    with zipfile.ZipFile(path) as z:
        stem = z.namelist()[0].split("/")[0]
        assert z.read(f"{stem}/byteorder") == b"little"
        assert z.read(f"{stem}/version").strip() == b"3"
        with z.open(f"{stem}/data.pkl") as f:
            result: tuple[str, np.ndarray] = _Unpickler(f, z, stem).load()
    return result
