"""Positional-argument parsing with CPython's PyArg_ParseTuple messages (api.md §0).

pyACL functions are METH_VARARGS: no keywords, exact counts, `k` = unsigned long without
overflow checking, `i` = C int with range checks, `s` = str, `O` = any object.
"""

from __future__ import annotations

from typing import Any

_ULONG = 1 << 64


_INT_LIMITS = {"k": (0, _ULONG), "K": (0, _ULONG), "i": (-(2**31), 2**31)}
# fmt -> (required, optional, per-argument int limits or None when a slow check is needed)
_compiled: dict[str, tuple[str, str, tuple[tuple[int, int], ...] | None]] = {}


def parse(fmt: str, args: tuple[Any, ...]) -> tuple[Any, ...]:
    """Check `args` against `fmt` ('|' starts optional ones); TypeError etc. as CPython says."""
    spec = _compiled.get(fmt)
    if spec is None:
        required, _, optional = fmt.partition("|")
        limits = (
            None
            if optional or any(c not in _INT_LIMITS for c in required)
            else tuple(_INT_LIMITS[c] for c in required)
        )
        spec = _compiled[fmt] = (required, optional, limits)
    required, optional, limits = spec
    # Fast path: the usual all-int call with plain in-range values needs no conversion.
    if limits is not None and len(args) == len(limits):
        for a, (lo, hi) in zip(args, limits, strict=True):
            if type(a) is not int or not lo <= a < hi:
                break
        else:
            return args
    lo, hi = len(required), len(required) + len(optional)
    n = len(args)
    if not lo <= n <= hi:
        if lo == hi:
            raise TypeError(
                f"function takes exactly {lo} argument{'s' if lo != 1 else ''} ({n} given)"
            )
        if n < lo:
            raise TypeError(
                f"function takes at least {lo} argument{'s' if lo != 1 else ''} ({n} given)"
            )
        raise TypeError(f"function takes at most {hi} argument{'s' if hi != 1 else ''} ({n} given)")
    return tuple(
        _convert(code, value, i)
        for i, (code, value) in enumerate(zip(required + optional, args, strict=False), start=1)
    )


def _convert(code: str, value: Any, i: int) -> Any:
    if code in "kK":
        if isinstance(value, int):
            return int(value) % _ULONG  # 'k' masks, never checks overflow
        raise TypeError(f"argument {i} must be int, not {type(value).__name__}")
    if code == "i":
        if isinstance(value, float):
            raise TypeError("'float' object cannot be interpreted as an integer")
        try:
            v = int(value.__index__())
        except AttributeError:
            raise TypeError(
                f"'{type(value).__name__}' object cannot be interpreted as an integer"
            ) from None
        if v > 2**31 - 1:
            raise OverflowError("signed integer is greater than maximum")
        if v < -(2**31):
            raise OverflowError("signed integer is less than minimum")
        return v
    if code == "s":
        if not isinstance(value, str):
            raise TypeError(f"argument {i} must be str, not {type(value).__name__}")
        return value
    if code in "fd":
        if isinstance(value, int | float):
            return float(value)
        raise TypeError(f"must be real number, not {type(value).__name__}")
    return value  # 'O'
