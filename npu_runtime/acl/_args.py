"""Positional-argument parsing with CPython's PyArg_ParseTuple messages (api.md §0).

pyACL functions are METH_VARARGS: no keywords, exact counts, `k` = unsigned long without
overflow checking, `i` = C int with range checks, `s` = str, `O` = any object.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

_ULONG = 1 << 64


_INT_LIMITS = {"k": (0, _ULONG), "K": (0, _ULONG), "i": (-(2**31), 2**31)}
# Per code: a test that, when true, means the slow path would return the value unchanged.
_FAST: dict[str, str] = {
    **{c: f"type({{0}}) is int and {lo} <= {{0}} < {hi}" for c, (lo, hi) in _INT_LIMITS.items()},
    "s": "type({0}) is str",
    "O": "",
}
_checkers: dict[str, Callable[[tuple[Any, ...]], tuple[Any, ...]]] = {}


def parse(fmt: str, args: tuple[Any, ...]) -> tuple[Any, ...]:
    """Check `args` against `fmt` ('|' starts optional ones); TypeError etc. as CPython says."""
    return checker(fmt)(args)


def checker(fmt: str) -> Callable[[tuple[Any, ...]], tuple[Any, ...]]:
    """`parse` for one format, bound once: a hot function calls it without the look-up."""
    check = _checkers.get(fmt)
    if check is None:
        check = _checkers[fmt] = _compile(fmt)
    return check


def _compile(fmt: str) -> Callable[[tuple[Any, ...]], tuple[Any, ...]]:
    """A checker for `fmt` whose common case (plain in-range ints, exact strs, any object
    for `O`) is one generated test; anything else takes the slow path and its messages."""
    required, _, optional = fmt.partition("|")
    if optional or not required or any(c not in _FAST for c in required):
        return lambda args: _slow(required, optional, args)
    names = [f"a{i}" for i in range(len(required))]
    tests = " and ".join(
        _FAST[c].format(n) for n, c in zip(names, required, strict=True) if _FAST[c]
    )
    src = (
        "def check(args):\n"
        f"    if len(args) == {len(names)}:\n"
        f"        {', '.join(names)}, = args\n"
        f"        if {tests or 'True'}:\n"
        "            return args\n"
        "    return slow(required, '', args)\n"
    )
    namespace: dict[str, Any] = {"slow": _slow, "required": required}
    exec(src, namespace)  # generated once per format string
    checker: Callable[[tuple[Any, ...]], tuple[Any, ...]] = namespace["check"]
    return checker


def _slow(required: str, optional: str, args: tuple[Any, ...]) -> tuple[Any, ...]:
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
