"""The dump's two tables: msprobe API names per op type, and torch's names per dtype."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

import numpy as np

UNLISTED_PREFIX = "Npu"


@dataclass(frozen=True, slots=True)
class TorchDType:
    """How a numpy dtype appears in a PyTorch dump."""

    torch: str  # "torch.float16"
    storage: str  # legacy storage class torch.save pickles: "HalfStorage"
    save_as: str  # numpy dtype written into the tensor file


def _load(name: str) -> dict[str, Any]:
    text = resources.files("npu_runtime.dump").joinpath("data").joinpath(name).read_text("utf-8")
    doc: dict[str, Any] = json.loads(text)
    return doc


@cache
def _api_names() -> dict[str, str]:
    names: dict[str, str] = _load("api_names.json")["names"]
    return names


@cache
def _torch_dtypes() -> dict[str, TorchDType]:
    rows = _load("torch_dtypes.json")["dtypes"]
    return {k: TorchDType(v["torch"], v["storage"], v.get("save_as", k)) for k, v in rows.items()}


def api_name(op_type: str) -> str:
    """'<Prefix>.<api>' for an op type: `Torch.matmul` for MatMul, `Npu.Foo` when unlisted."""
    return _api_names().get(op_type) or f"{UNLISTED_PREFIX}.{op_type}"


def torch_dtype(dtype: np.dtype) -> TorchDType:
    """torch's view of a numpy dtype; ValueError names the dtype when torch has no such type."""
    row = _torch_dtypes().get(np.dtype(dtype).name)
    if row is None:
        raise ValueError(f"no torch dtype for numpy {np.dtype(dtype).name}")
    return row
