"""The emulator's offline-model container (`.om`), version 1 (docs/model.md).

Layout, little endian:

    0   8 bytes  magic b"ALENSOM\\0"
    8   u32      format version
    12  u32      header length H
    16  u64      graph length G
    24  H bytes  header: UTF-8 JSON (inputs, outputs, nodes, gears, precision, SoC)
    24+H G bytes graph: the compiled ONNX ModelProto the executor runs

A reader refuses a newer version than it knows (the model needs a newer Ascend Lens) and
says plainly when the file is a genuine Huawei offline model, which only real hardware
runs.
"""

from __future__ import annotations

import json
import struct
from dataclasses import dataclass
from typing import Any

from npu_runtime.errors import codes

MAGIC = b"ALENSOM\0"
VERSION = 1
_FIXED = struct.Struct("<8sIIQ")
# Huawei's ModelFileHeader starts with magic 0x444F4D49 ("IMOD" in file order).
HUAWEI_MAGIC = b"IMOD"


class OmFormatError(Exception):
    """A file that is not a loadable emulator model; `code` is what the load call returns."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass(frozen=True)
class OmFile:
    """A parsed container: its JSON header and the compiled ONNX graph bytes."""

    header: dict[str, Any]
    graph: bytes


def dumps(header: dict[str, Any], graph: bytes) -> bytes:
    head = json.dumps(header, separators=(",", ":"), sort_keys=True).encode()
    return _FIXED.pack(MAGIC, VERSION, len(head), len(graph)) + head + graph


def _not_ours(data: bytes) -> str:
    from_onnx = "make an emulator model from the ONNX with `ascend-lens atc --framework=5 --model=net.onnx --output=net --soc_version=Ascend910B2`"
    kind = (
        "a Huawei offline model (compiled device binaries)"
        if data[:4] == HUAWEI_MAGIC
        else "not an Ascend Lens offline model"
    )
    return (
        f"{kind}: the Ascend Lens emulator cannot execute it; {from_onnx}, or run the "
        "model's ops through acl.op or the npu_runtime Tensor API"
    )


def loads(data: bytes) -> OmFile:
    """Parse a container; OmFormatError with the ACL code for anything else."""
    if data[: len(MAGIC)] != MAGIC:
        raise OmFormatError(codes.ACL_ERROR_FEATURE_UNSUPPORTED, _not_ours(data))
    if len(data) < _FIXED.size:
        raise OmFormatError(codes.ACL_ERROR_PARSE_MODEL, "the model file is truncated")
    _, version, hlen, glen = _FIXED.unpack_from(data)
    if version > VERSION:
        raise OmFormatError(
            codes.ACL_ERROR_DESERIALIZE_MODEL,
            f"the model uses offline-model format version {version}; this Ascend Lens reads "
            f"up to version {VERSION}: upgrade Ascend Lens or compile the ONNX again with "
            "this version's `ascend-lens atc`",
        )
    end = _FIXED.size + hlen + glen
    if len(data) < end:
        raise OmFormatError(
            codes.ACL_ERROR_PARSE_MODEL,
            f"the model file is truncated: {len(data)} bytes, its header promises {end}",
        )
    try:
        header = json.loads(data[_FIXED.size : _FIXED.size + hlen])
    except ValueError as exc:
        raise OmFormatError(codes.ACL_ERROR_PARSE_MODEL, f"bad model header: {exc}") from None
    if not isinstance(header, dict):
        raise OmFormatError(codes.ACL_ERROR_PARSE_MODEL, "bad model header: not an object")
    return OmFile(header, bytes(data[_FIXED.size + hlen : end]))
