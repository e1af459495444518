"""NPU numerics in one table: dtypes, their ACL/msprof names, and how values round on device.

The table is the executable spec (in the spirit of tinygrad's python_alu):

- float16 follows IEEE binary16 as the AI Core does: results beyond 65504 overflow to
  +/-inf, magnitudes below the smallest subnormal (2**-24) underflow to signed zero.
- bfloat16 comes from ml_dtypes (round to nearest even, 8-bit exponent, 7-bit mantissa).
- Cube ops (MatMul, Conv2D, attention) read fp16/bf16, accumulate in float32 and round
  once when they write the output; `accumulator()` says which type a kernel computes in.
- Vector ops on fp16/bf16 run in float32 inside the Unified Buffer and round once at the
  output, so a fused op (Softmax, LayerNorm, Gelu) rounds once, not once per step.
- float -> integer casts truncate toward zero and saturate at the integer range; NaN
  becomes 0 (the device's saturation mode, the default on Atlas A2).

The opt-in check mode (`NPU_CHECK_NUMERICS=1` or `set_check_numerics(True)`) makes the op
dispatcher report the first op whose output holds a NaN or Inf while its inputs did not.
"""

from __future__ import annotations

import os
from contextvars import ContextVar
from dataclasses import dataclass
from types import TracebackType

import ml_dtypes
import numpy as np

__all__ = [
    "DType",
    "DTYPES",
    "accumulator",
    "by_acl",
    "by_name",
    "by_numpy",
    "check_numerics_enabled",
    "first_nonfinite",
    "is_float",
    "msprof_name",
    "numerics_mode",
    "quiet",
    "reference_allows",
    "round_to",
    "set_check_numerics",
    "set_numerics",
    "storage_dtype",
]

BFLOAT16 = np.dtype(ml_dtypes.bfloat16)
NpDType = np.dtype  # the field below is named `np`, which would shadow the module in annotations


@dataclass(frozen=True, slots=True)
class DType:
    """One device data type: how pyACL, msprof and numpy each name it."""

    name: str  # our spelling, numpy-like: "float16", "bfloat16"
    acl: int  # aclDataType value
    msprof: str  # msprof op_summary spelling
    np: NpDType
    accum: NpDType  # the type kernels compute in before rounding to `np`

    @property
    def itemsize(self) -> int:
        return self.np.itemsize


_F32 = np.dtype(np.float32)

# aclDataType values from the CANN headers (acl_base.h); one row per supported dtype.
DTYPES: tuple[DType, ...] = (
    DType("float32", 0, "FLOAT", _F32, _F32),
    DType("float16", 1, "FLOAT16", np.dtype(np.float16), _F32),
    DType("int8", 2, "INT8", np.dtype(np.int8), np.dtype(np.int32)),
    DType("int32", 3, "INT32", np.dtype(np.int32), np.dtype(np.int32)),
    DType("uint8", 4, "UINT8", np.dtype(np.uint8), np.dtype(np.int32)),
    DType("int16", 6, "INT16", np.dtype(np.int16), np.dtype(np.int32)),
    DType("uint16", 7, "UINT16", np.dtype(np.uint16), np.dtype(np.int32)),
    DType("uint32", 8, "UINT32", np.dtype(np.uint32), np.dtype(np.uint32)),
    DType("int64", 9, "INT64", np.dtype(np.int64), np.dtype(np.int64)),
    DType("uint64", 10, "UINT64", np.dtype(np.uint64), np.dtype(np.uint64)),
    DType("float64", 11, "DOUBLE", np.dtype(np.float64), np.dtype(np.float64)),
    DType("bool", 12, "BOOL", np.dtype(np.bool_), np.dtype(np.bool_)),
    DType("bfloat16", 27, "BF16", BFLOAT16, _F32),
)

_BY_ACL = {d.acl: d for d in DTYPES}
_BY_NAME = {d.name: d for d in DTYPES}
_BY_NP = {d.np: d for d in DTYPES}
_FLOATS = frozenset(d.np for d in DTYPES if d.name.startswith(("float", "bfloat")))


def by_acl(code: int) -> DType | None:
    """The dtype for an aclDataType value, or None when the emulator does not support it."""
    return _BY_ACL.get(code)


def by_name(name: str) -> DType:
    """The dtype for our spelling ("float16", "bfloat16", ...); KeyError names the choices."""
    try:
        return _BY_NAME[name]
    except KeyError:
        raise KeyError(f"unknown dtype {name!r}; expected one of {sorted(_BY_NAME)}") from None


def by_numpy(dtype: np.dtype | type) -> DType | None:
    """The dtype row for a numpy dtype, or None when the device has no such type."""
    return _BY_NP.get(np.dtype(dtype))


def msprof_name(dtype: np.dtype) -> str:
    """msprof's spelling of a numpy dtype ("FLOAT16"); unknown types keep numpy's name."""
    d = _BY_NP.get(dtype)
    return d.msprof if d is not None else str(dtype).upper()


def is_float(dtype: np.dtype) -> bool:
    return dtype in _FLOATS


def accumulator(dtype: np.dtype) -> np.dtype:
    """The type a kernel computes in for inputs of `dtype` (float32 for fp16/bf16)."""
    d = _BY_NP.get(dtype)
    return d.accum if d is not None else dtype


def round_to(values: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """Round computed values once to the device output type, as the device stores them."""
    if values.dtype == dtype:
        return values
    if dtype.kind in "iu" and (values.dtype.kind == "f" or values.dtype == BFLOAT16):
        info = np.iinfo(dtype)
        with np.errstate(invalid="ignore"):
            t = np.trunc(values.astype(np.float64, copy=False))
            t = np.nan_to_num(t, nan=0.0, posinf=info.max, neginf=info.min)
        return np.clip(t, info.min, info.max).astype(dtype)
    if dtype == np.bool_:
        return values != 0
    # IEEE overflow to inf is the device behaviour, so numpy's warning is not news here.
    with quiet():
        return values.astype(dtype)


# --- IEEE results without numpy's warnings ------------------------------------------------
# np.errstate costs several microseconds per use, a third of an op's budget; setting the
# context variable it wraps directly costs a fraction of that. Fall back when numpy moves it.
try:
    from numpy._core._ufunc_config import (  # type: ignore[attr-defined]
        _extobj_contextvar,
        _make_extobj,
    )

    _IGNORE = _make_extobj(all="ignore")
except ImportError:  # pragma: no cover - other numpy layouts
    _extobj_contextvar = None


class quiet:
    """Context manager: float errors (overflow, divide by zero, invalid) give inf/NaN silently,
    as they do on the device, instead of numpy RuntimeWarnings."""

    __slots__ = ("_token", "_fallback")

    def __enter__(self) -> None:
        if _extobj_contextvar is not None:
            self._token = _extobj_contextvar.set(_IGNORE)
        else:  # pragma: no cover
            self._fallback = np.errstate(all="ignore")
            self._fallback.__enter__()

    def __exit__(
        self, t: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        if _extobj_contextvar is not None:
            _extobj_contextvar.reset(self._token)
        else:  # pragma: no cover
            self._fallback.__exit__(t, e, tb)


# --- opt-in NaN/Inf check mode ------------------------------------------------------------

_check = os.environ.get("NPU_CHECK_NUMERICS", "") not in ("", "0", "false", "False")


def set_check_numerics(enabled: bool) -> bool:
    """Turn the NaN/Inf check on or off; returns the previous setting."""
    global _check
    previous, _check = _check, bool(enabled)
    return previous


def check_numerics_enabled() -> bool:
    return _check


def first_nonfinite(arrays: list[np.ndarray]) -> tuple[int, str] | None:
    """(output index, "NaN" | "Inf") of the first float array holding a NaN or Inf."""
    for i, a in enumerate(arrays):
        if a.dtype not in _FLOATS or a.size == 0:
            continue
        f = a.astype(np.float32, copy=False) if a.dtype == BFLOAT16 else a
        if not np.isfinite(f).all():
            return i, ("NaN" if np.isnan(f).any() else "Inf")
    return None


# --- reference numerics (the same script at higher precision, to compare against) ---------
# "npu" is the device; "float32" stores float16/bfloat16 tensors as float32; "float64"
# stores every float tensor as float64 and lets float ops take it. Only the Pythonic
# layer's storage follows the mode: pyACL scripts size their own buffers.
NUMERICS_MODES = ("npu", "float32", "float64")
_F64 = np.dtype(np.float64)
_mode = os.environ.get("NPU_NUMERICS", "npu") or "npu"
if _mode not in NUMERICS_MODES:  # a bad environment value must not break every import
    _mode = "npu"


# Set by the Tensor API around a launch in a reference mode: (input, output) dtypes as the
# program declared them, so precision dumps name float16 where the values are held wider.
declared: ContextVar[tuple[list[np.dtype], list[np.dtype]] | None] = ContextVar(
    "declared", default=None
)


def set_numerics(mode: str) -> str:
    """Switch to `mode` (one of NUMERICS_MODES); returns the previous one. ValueError otherwise."""
    global _mode
    if mode not in NUMERICS_MODES:
        raise ValueError(f"numerics mode {mode!r}: expected one of {', '.join(NUMERICS_MODES)}")
    previous, _mode = _mode, mode
    return previous


def numerics_mode() -> str:
    return _mode


def storage_dtype(dtype: np.dtype) -> np.dtype:
    """The dtype a tensor requested as `dtype` is stored in under the current mode."""
    if _mode == "npu" or dtype not in _FLOATS:
        return dtype
    if _mode == "float32":
        return _F32 if dtype.itemsize < 4 else dtype
    return _F64


def reference_allows(dtype: np.dtype, allowed: frozenset[np.dtype]) -> bool:
    """Whether an op that takes float32 takes `dtype` too (float64 in "float64" mode)."""
    return _mode == "float64" and dtype == _F64 and _F32 in allowed
