"""Validation and cost helpers shared by the op modules: one place for each check's ACL code."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np

from npu_runtime import numerics
from npu_runtime.ops.errors import (
    ACL_ERROR_OP_ATTR_NOT_MATCH,
    ACL_ERROR_OP_INPUT_NOT_MATCH,
    ACL_ERROR_UNSUPPORTED_DATA_TYPE,
    OpError,
)
from npu_runtime.ops.registry import Attrs, Spec, Work

F16 = np.dtype(np.float16)
F32 = np.dtype(np.float32)
BF16 = numerics.BFLOAT16
FLOATS: frozenset[np.dtype] = frozenset({F16, F32, BF16})
NUMERIC: frozenset[np.dtype] = FLOATS | {np.dtype(np.int32), np.dtype(np.int8)}
INDEX: frozenset[np.dtype] = frozenset({np.dtype(np.int32), np.dtype(np.int64)})


def dtype_name(dt: np.dtype) -> str:
    d = numerics.by_numpy(dt)
    return d.name if d is not None else str(dt)


def n_inputs(op: str, inputs: Sequence[Spec], lo: int, hi: int | None = None) -> None:
    """Require between lo and hi (default: exactly lo) inputs."""
    hi = lo if hi is None else hi
    if not lo <= len(inputs) <= hi:
        want = str(lo) if lo == hi else f"{lo} to {hi}"
        raise OpError(ACL_ERROR_OP_INPUT_NOT_MATCH, f"{op} takes {want} inputs, got {len(inputs)}")


def dtype_in(op: str, spec: Spec, allowed: Iterable[np.dtype], what: str = "input") -> None:
    allowed = frozenset(allowed)
    if spec.dtype not in allowed and not numerics.reference_allows(spec.dtype, allowed):
        names = ", ".join(sorted(dtype_name(d) for d in allowed))
        raise OpError(
            ACL_ERROR_UNSUPPORTED_DATA_TYPE,
            f"{op} does not support {what} dtype {dtype_name(spec.dtype)} (supported: {names})",
        )


def same_dtype(op: str, specs: Sequence[Spec]) -> np.dtype:
    dts = {s.dtype for s in specs}
    if len(dts) > 1:
        names = ", ".join(dtype_name(s.dtype) for s in specs)
        raise OpError(ACL_ERROR_OP_INPUT_NOT_MATCH, f"{op} inputs must share a dtype, got {names}")
    return specs[0].dtype


def rank_in(op: str, spec: Spec, ranks: Iterable[int], what: str = "input") -> None:
    ranks = tuple(ranks)
    if len(spec.shape) not in ranks:
        raise OpError(
            ACL_ERROR_OP_INPUT_NOT_MATCH,
            f"{op} {what} must have rank {' or '.join(map(str, ranks))}, got shape {list(spec.shape)}",
        )


def broadcast(op: str, *shapes: tuple[int, ...]) -> tuple[int, ...]:
    """numpy broadcasting, or OP_INPUT_NOT_MATCH naming the shapes."""
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        got = " and ".join(str(list(s)) for s in shapes)
        raise OpError(ACL_ERROR_OP_INPUT_NOT_MATCH, f"{op} cannot broadcast {got}") from None


def axis(op: str, value: int, ndim: int, name: str = "axis") -> int:
    """A possibly negative axis, normalised; OP_ATTR_NOT_MATCH when out of range."""
    if not -ndim <= value < max(ndim, 1):
        raise OpError(
            ACL_ERROR_OP_ATTR_NOT_MATCH, f"{op} {name}={value} is out of range for rank {ndim}"
        )
    return value % max(ndim, 1)


# --- attributes ------------------------------------------------------------------------------

_MISSING: Any = object()


def _attr(op: str, attrs: Attrs, name: str, default: Any, check: Callable[[Any], bool], kind: str):
    value = attrs.get(name, default)
    if value is _MISSING:
        raise OpError(ACL_ERROR_OP_ATTR_NOT_MATCH, f"{op} needs attribute {name!r} ({kind})")
    if not check(value):
        raise OpError(
            ACL_ERROR_OP_ATTR_NOT_MATCH, f"{op} attribute {name!r} must be {kind}, got {value!r}"
        )
    return value


def _is_int(v: Any) -> bool:
    return isinstance(v, (int, np.integer)) and not isinstance(v, bool)


def attr_int(op: str, attrs: Attrs, name: str, default: Any = _MISSING) -> int:
    return int(_attr(op, attrs, name, default, _is_int, "an int"))


def attr_bool(op: str, attrs: Attrs, name: str, default: Any = _MISSING) -> bool:
    check = lambda v: isinstance(v, (bool, np.bool_)) or v in (0, 1)  # noqa: E731
    return bool(_attr(op, attrs, name, default, check, "a bool"))


def attr_float(op: str, attrs: Attrs, name: str, default: Any = _MISSING) -> float:
    check = lambda v: isinstance(v, (int, float, np.number)) and not isinstance(v, bool)  # noqa: E731
    return float(_attr(op, attrs, name, default, check, "a float"))


def attr_str(op: str, attrs: Attrs, name: str, default: Any = _MISSING) -> str:
    return str(_attr(op, attrs, name, default, lambda v: isinstance(v, str), "a string"))


def attr_ints(op: str, attrs: Attrs, name: str, default: Any = _MISSING) -> list[int]:
    check = lambda v: isinstance(v, (list, tuple)) and all(map(_is_int, v))  # noqa: E731
    return [int(x) for x in _attr(op, attrs, name, default, check, "a list of ints")]


# --- cost helpers ----------------------------------------------------------------------------


def io_bytes(inputs: Sequence[Spec], outputs: Sequence[Spec]) -> int:
    """Bytes an op reads and writes once each: the roofline's memory traffic."""
    return sum(s.nbytes for s in inputs) + sum(s.nbytes for s in outputs)


def vector_work(ops_per_element: float) -> Callable[[Sequence[Spec], Sequence[Spec], Attrs], Work]:
    """Cost rule for a Vector op doing `ops_per_element` operations per output element."""

    def cost(inputs: Sequence[Spec], outputs: Sequence[Spec], attrs: Attrs) -> Work:
        n = max((s.size for s in outputs), default=0)
        ops = int(n * ops_per_element)
        return Work(
            "vector", outputs[0].dtype, io_bytes(inputs, outputs), vector_ops=ops, flops=ops
        )

    return cost


def move_work(inputs: Sequence[Spec], outputs: Sequence[Spec], attrs: Attrs) -> Work:
    """Cost rule for data movement only (transpose, concat, gather): bytes, no arithmetic."""
    return Work("vector", outputs[0].dtype, io_bytes(inputs, outputs))


def accumulate(x: np.ndarray) -> np.ndarray:
    """`x` in the type kernels compute in (float32 for fp16/bf16), without copying otherwise."""
    return x.astype(numerics.accumulator(x.dtype), copy=False)
