"""Data-movement ops: Transpose, Reshape, ConcatD, SplitD, Gather and Embedding."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from npu_runtime.ops.common import (
    INDEX,
    attr_int,
    attr_ints,
    axis,
    dtype_in,
    move_work,
    n_inputs,
    same_dtype,
)
from npu_runtime.ops.errors import (
    ACL_ERROR_OP_ATTR_NOT_MATCH,
    ACL_ERROR_OP_INPUT_NOT_MATCH,
    ACL_ERROR_RT_AICORE_EXCEPTION,
    OpError,
)
from npu_runtime.ops.registry import Attrs, Spec, op

# --- Transpose -----------------------------------------------------------------------------


def axes_order_infer(
    op_type: str, attr: str, reverse_by_default: bool
) -> Callable[[Sequence[Spec], Attrs], list[Spec]]:
    """Shape inference of an axis permutation named by `attr` (Transpose's `perm`, Permute's
    `order`): every axis exactly once; the default is the reversed or the identity order."""

    def infer(inputs: Sequence[Spec], attrs: Attrs) -> list[Spec]:
        n_inputs(op_type, inputs, 1)
        x = inputs[0]
        default = list(range(len(x.shape)))
        order = attr_ints(op_type, attrs, attr, default[::-1] if reverse_by_default else default)
        norm = [axis(op_type, p, len(x.shape), attr) for p in order]
        if sorted(norm) != default:
            raise OpError(
                ACL_ERROR_OP_ATTR_NOT_MATCH,
                f"{op_type} {attr} {order} is not a permutation of {len(x.shape)} axes",
            )
        return [Spec(tuple(x.shape[p] for p in norm), x.dtype)]

    return infer


def permuted(x: np.ndarray, order: Sequence[int]) -> np.ndarray:
    """`x` with its axes in `order`, written contiguously (as the device writes its output)."""
    return np.ascontiguousarray(np.transpose(x, [p % x.ndim for p in order]))


@op(
    "Transpose",
    unit="vector",
    infer=axes_order_infer("Transpose", "perm", reverse_by_default=True),
    cost=move_work,
    inputs=("x", "perm (constant, optional)"),
    attrs={"perm": "list[int] = reversed axes"},
    aliases=("TransposeD",),
    const_inputs={1: "perm"},
)
def transpose(inputs: list[np.ndarray], attrs: Attrs) -> list[np.ndarray]:
    """Permute the axes by `perm`; the result is written contiguously."""
    x = inputs[0]
    return [permuted(x, attrs.get("perm", list(range(x.ndim))[::-1]))]


# --- Reshape -------------------------------------------------------------------------------


def _reshape_infer(inputs: Sequence[Spec], attrs: Attrs) -> list[Spec]:
    n_inputs("Reshape", inputs, 1)
    x = inputs[0]
    shape = attr_ints("Reshape", attrs, "shape")
    if shape.count(-1) > 1 or any(d < -1 for d in shape):
        raise OpError(ACL_ERROR_OP_ATTR_NOT_MATCH, f"Reshape shape {shape} is not valid")
    known = 1
    for d in shape:
        if d != -1:
            known *= d
    if -1 in shape:
        if known == 0 or x.size % known:
            raise OpError(
                ACL_ERROR_OP_INPUT_NOT_MATCH, f"cannot reshape {list(x.shape)} into {shape}"
            )
        shape = [x.size // known if d == -1 else d for d in shape]
    elif known != x.size:
        raise OpError(ACL_ERROR_OP_INPUT_NOT_MATCH, f"cannot reshape {list(x.shape)} into {shape}")
    return [Spec(tuple(shape), x.dtype)]


@op(
    "Reshape",
    unit="vector",
    infer=_reshape_infer,
    cost=move_work,
    inputs=("x",),
    attrs={"shape": "list[int], required (one -1 allowed)"},
)
def reshape(inputs: list[np.ndarray], attrs: Attrs) -> list[np.ndarray]:
    """Same elements in a new shape (row-major); one dimension may be -1."""
    return [np.reshape(inputs[0], attrs["shape"]).copy()]


# --- ConcatD / SplitD ----------------------------------------------------------------------


def _concat_infer(inputs: Sequence[Spec], attrs: Attrs) -> list[Spec]:
    if not inputs:
        raise OpError(ACL_ERROR_OP_INPUT_NOT_MATCH, "ConcatD needs at least one input")
    n = attr_int("ConcatD", attrs, "N", len(inputs))
    if n != len(inputs):
        raise OpError(ACL_ERROR_OP_INPUT_NOT_MATCH, f"ConcatD N={n} but {len(inputs)} inputs given")
    dt = same_dtype("ConcatD", inputs)
    first = inputs[0].shape
    d = axis("ConcatD", attr_int("ConcatD", attrs, "concat_dim"), len(first), "concat_dim")
    total = 0
    for s in inputs:
        if len(s.shape) != len(first) or any(
            a != b for i, (a, b) in enumerate(zip(s.shape, first, strict=True)) if i != d
        ):
            raise OpError(
                ACL_ERROR_OP_INPUT_NOT_MATCH,
                f"ConcatD inputs {list(first)} and {list(s.shape)} differ outside dim {d}",
            )
        total += s.shape[d]
    return [Spec(first[:d] + (total,) + first[d + 1 :], dt)]


@op(
    "ConcatD",
    unit="vector",
    infer=_concat_infer,
    cost=move_work,
    inputs=("x0", "x1", "..."),
    attrs={"concat_dim": "int, required", "N": "int = number of inputs"},
    aliases=("Concat",),
)
def concat(inputs: list[np.ndarray], attrs: Attrs) -> list[np.ndarray]:
    """Join the inputs along `concat_dim`."""
    return [np.concatenate(inputs, axis=int(attrs["concat_dim"]))]


def _split_infer(inputs: Sequence[Spec], attrs: Attrs) -> list[Spec]:
    n_inputs("SplitD", inputs, 1)
    x = inputs[0]
    d = axis("SplitD", attr_int("SplitD", attrs, "split_dim"), len(x.shape), "split_dim")
    k = attr_int("SplitD", attrs, "num_split")
    if k < 1 or x.shape[d] % k:
        raise OpError(
            ACL_ERROR_OP_ATTR_NOT_MATCH,
            f"SplitD cannot split dim {d} of size {x.shape[d]} into {k} equal parts",
        )
    part = x.shape[:d] + (x.shape[d] // k,) + x.shape[d + 1 :]
    return [Spec(part, x.dtype) for _ in range(k)]


@op(
    "SplitD",
    unit="vector",
    infer=_split_infer,
    cost=move_work,
    inputs=("x",),
    attrs={"split_dim": "int, required", "num_split": "int, required"},
    aliases=("Split",),
)
def split(inputs: list[np.ndarray], attrs: Attrs) -> list[np.ndarray]:
    """Cut `split_dim` into `num_split` equal parts (one output each)."""
    parts = np.split(inputs[0], int(attrs["num_split"]), axis=int(attrs["split_dim"]))
    return [np.ascontiguousarray(p) for p in parts]


# --- Gather / Embedding --------------------------------------------------------------------


def _take(x: np.ndarray, idx: np.ndarray, ax: int, name: str) -> np.ndarray:
    n = x.shape[ax]
    if idx.size and (idx.min() < 0 or idx.max() >= n):
        bad = idx[(idx < 0) | (idx >= n)].flat[0]
        # On the device this is an out-of-bounds read inside the kernel.
        raise OpError(ACL_ERROR_RT_AICORE_EXCEPTION, f"{name} index {bad} is out of range [0, {n})")
    return np.take(x, idx, axis=ax)


def _gather_infer(inputs: Sequence[Spec], attrs: Attrs) -> list[Spec]:
    n_inputs("GatherV2", inputs, 2)
    x, idx = inputs
    dtype_in("GatherV2", idx, INDEX, "indices")
    ax = axis("GatherV2", attr_int("GatherV2", attrs, "axis", 0), len(x.shape))
    return [Spec(x.shape[:ax] + idx.shape + x.shape[ax + 1 :], x.dtype)]


@op(
    "GatherV2",
    unit="vector",
    infer=_gather_infer,
    cost=move_work,
    inputs=("x", "indices"),
    attrs={"axis": "int = 0"},
    aliases=("Gather", "GatherV2D"),
)
def gather(inputs: list[np.ndarray], attrs: Attrs) -> list[np.ndarray]:
    """Select slices of x along `axis` by integer indices; an index out of range is a
    device-side fault (ACL_ERROR_RT_AICORE_EXCEPTION at the next synchronisation)."""
    x, idx = inputs
    ax = int(attrs.get("axis", 0)) % max(x.ndim, 1)
    return [_take(x, idx, ax, "GatherV2")]


def _embedding_infer(inputs: Sequence[Spec], attrs: Attrs) -> list[Spec]:
    n_inputs("Embedding", inputs, 2)
    w, idx = inputs
    if len(w.shape) != 2:
        raise OpError(
            ACL_ERROR_OP_INPUT_NOT_MATCH, f"Embedding weight must be [V, D], got {list(w.shape)}"
        )
    dtype_in("Embedding", idx, INDEX, "indices")
    return [Spec(idx.shape + (w.shape[1],), w.dtype)]


@op(
    "Embedding",
    unit="vector",
    infer=_embedding_infer,
    cost=move_work,
    inputs=("weight [V, D]", "indices"),
)
def embedding(inputs: list[np.ndarray], attrs: Attrs) -> list[np.ndarray]:
    """Rows of `weight` for each index: output shape indices.shape + [D]."""
    w, idx = inputs
    return [_take(w, idx, 0, "Embedding")]
