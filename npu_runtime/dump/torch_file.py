"""Write a numpy array as a `torch.save` file (`.pt`) without importing torch.

msprobe's PyTorch compare loads tensor dumps with `torch.load`, so tensor-mode dumps must
be real `.pt` files; torch itself is far too heavy a dependency for the emulator. The
format is a stored (uncompressed) zip archive:

    <stem>/data.pkl     pickle: torch._utils._rebuild_tensor_v2(<storage>, 0, shape, stride,
                        False, OrderedDict()), the storage given as a persistent id
                        ('storage', torch.<Type>Storage, '0', 'cpu', numel)
    <stem>/byteorder    b"little"
    <stem>/data/0       the raw little-endian element bytes
    <stem>/version      b"3\\n"

Only classes that `torch.load(weights_only=True)` allows are referenced.
"""

from __future__ import annotations

import io
import struct
import zipfile
from pathlib import Path

import numpy as np

from npu_runtime.dump.names import torch_dtype

# Pickle opcodes (protocol 2) used below; see the standard library's pickletools.
_PROTO, _STOP, _MARK, _TUPLE, _EMPTY_TUPLE = b"\x80\x02", b".", b"(", b"t", b")"
_GLOBAL, _REDUCE, _BINPERSID, _NEWFALSE = b"c", b"R", b"Q", b"\x89"


def _int(v: int) -> bytes:
    if 0 <= v < 256:
        return b"K" + bytes([v])  # BININT1
    if -(2**31) <= v < 2**31:
        return b"J" + struct.pack("<i", v)  # BININT
    raw = v.to_bytes((v.bit_length() + 8) // 8, "little", signed=True)
    return b"\x8a" + bytes([len(raw)]) + raw  # LONG1


def _str(s: str) -> bytes:
    raw = s.encode("utf-8")
    return b"X" + struct.pack("<I", len(raw)) + raw  # BINUNICODE


def _global(module: str, name: str) -> bytes:
    return _GLOBAL + f"{module}\n{name}\n".encode("ascii")


def _ints(values: tuple[int, ...]) -> bytes:
    return _MARK + b"".join(map(_int, values)) + _TUPLE


def tensor_pickle(storage: str, shape: tuple[int, ...], numel: int) -> bytes:
    """data.pkl for one contiguous CPU tensor whose storage is record '0'."""
    strides = tuple(int(np.prod(shape[i + 1 :], dtype=np.int64)) for i in range(len(shape)))
    persistent = (
        _MARK + _str("storage") + _global("torch", storage) + _str("0") + _str("cpu")
        + _int(numel) + _TUPLE + _BINPERSID
    )  # fmt: skip
    hooks = _global("collections", "OrderedDict") + _EMPTY_TUPLE + _REDUCE
    args = _MARK + persistent + _int(0) + _ints(shape) + _ints(strides) + _NEWFALSE + hooks
    return _PROTO + _global("torch._utils", "_rebuild_tensor_v2") + args + _TUPLE + _REDUCE + _STOP


def save(array: np.ndarray, path: Path) -> None:
    """Write `array` to `path` as torch.save would write the equivalent CPU tensor."""
    info = torch_dtype(array.dtype)
    data = np.ascontiguousarray(array, dtype=np.dtype(info.save_as).newbyteorder("<"))
    stem = path.stem or "archive"
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as z:
        z.writestr(f"{stem}/data.pkl", tensor_pickle(info.storage, data.shape, data.size))
        z.writestr(f"{stem}/byteorder", b"little")
        z.writestr(f"{stem}/data/0", data.tobytes())
        z.writestr(f"{stem}/version", b"3\n")
    path.write_bytes(buf.getvalue())
