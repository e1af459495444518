"""Ops the Ascend samples use around inference: ArgMaxV2, Slice (SliceD) and Permute.

ArgMaxV2's `dimension` and Slice's `offsets`/`size` are inputs in CANN, given as constant
tensor descs (`acl.set_tensor_const`); the registry's `const_inputs` turns them into the
attributes these rules read, so `SliceD` (attributes) and `Slice` (inputs) are one op.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from npu_runtime.ops.common import (
    NUMERIC,
    attr_int,
    attr_ints,
    axis,
    dtype_in,
    move_work,
    n_inputs,
    vector_work,
)
from npu_runtime.ops.errors import (
    ACL_ERROR_OP_ATTR_NOT_MATCH,
    ACL_ERROR_OP_INPUT_NOT_MATCH,
    OpError,
)
from npu_runtime.ops.registry import Attrs, Spec, op
from npu_runtime.ops.shape import axes_order_infer, permuted

# aclDataType -> index dtype for ArgMaxV2's `dtype` attribute (ACL_INT32 = 3, ACL_INT64 = 9)
_INDEX_TYPES: dict[int, np.dtype] = {3: np.dtype(np.int32), 9: np.dtype(np.int64)}


def _dimension(attrs: Attrs) -> int:
    v = attrs.get("dimension")
    if isinstance(v, (list, tuple)):
        if len(v) != 1:
            raise OpError(
                ACL_ERROR_OP_ATTR_NOT_MATCH, f"ArgMaxV2 dimension must be one value, got {list(v)}"
            )
        v = v[0]
    if v is None:
        raise OpError(
            ACL_ERROR_OP_INPUT_NOT_MATCH,
            "ArgMaxV2 needs its dimension input as a constant (acl.set_tensor_const)",
        )
    return int(v)


def _argmax_infer(inputs: Sequence[Spec], attrs: Attrs) -> list[Spec]:
    n_inputs("ArgMaxV2", inputs, 1)
    x = inputs[0]
    dtype_in("ArgMaxV2", x, NUMERIC)
    d = axis("ArgMaxV2", _dimension(attrs), len(x.shape), "dimension")
    out_type = attr_int("ArgMaxV2", attrs, "dtype", 3)
    if out_type not in _INDEX_TYPES:
        raise OpError(
            ACL_ERROR_OP_ATTR_NOT_MATCH,
            f"ArgMaxV2 dtype must be ACL_INT32 (3) or ACL_INT64 (9), got {out_type}",
        )
    shape = x.shape[:d] + x.shape[d + 1 :]
    # A 1-D input gives one index: [1], as the samples' single-op models declare it.
    return [Spec(shape or (1,), _INDEX_TYPES[out_type])]


@op(
    "ArgMaxV2",
    unit="vector",
    infer=_argmax_infer,
    cost=vector_work(1),
    inputs=("x", "dimension (int32 constant)"),
    attrs={"dtype": "int (aclDataType of the indices) = ACL_INT32"},
    aliases=("ArgMaxD",),
    const_inputs={1: "dimension"},
)
def argmax_v2(inputs: list[np.ndarray], attrs: Attrs) -> list[np.ndarray]:
    """Index of the largest value along `dimension` (the first one on ties)."""
    x = inputs[0]
    d = _dimension(attrs) % max(x.ndim, 1)
    out = np.argmax(x, axis=d).astype(_INDEX_TYPES[int(attrs.get("dtype", 3))])
    return [out.reshape(out.shape or (1,))]


def _slice_bounds(x: Spec, attrs: Attrs) -> list[tuple[int, int]]:
    offsets = attr_ints("Slice", attrs, "offsets")
    size = attr_ints("Slice", attrs, "size")
    if len(offsets) != len(x.shape) or len(size) != len(x.shape):
        raise OpError(
            ACL_ERROR_OP_ATTR_NOT_MATCH,
            f"Slice offsets {offsets} and size {size} need one value per dim of {list(x.shape)}",
        )
    out = []
    for dim, (o, s, n) in enumerate(zip(offsets, size, x.shape, strict=True)):
        end = n if s == -1 else o + s
        if o < 0 or s < -1 or end > n or end < o:
            raise OpError(
                ACL_ERROR_OP_ATTR_NOT_MATCH,
                f"Slice dim {dim}: offset {o} size {s} does not fit in {n}",
            )
        out.append((o, end))
    return out


def _slice_infer(inputs: Sequence[Spec], attrs: Attrs) -> list[Spec]:
    n_inputs("Slice", inputs, 1)
    x = inputs[0]
    return [Spec(tuple(e - b for b, e in _slice_bounds(x, attrs)), x.dtype)]


@op(
    "Slice",
    unit="vector",
    infer=_slice_infer,
    cost=move_work,
    inputs=("x", "offsets (constant)", "size (constant)"),
    attrs={"offsets": "list[int], one per dim", "size": "list[int], one per dim (-1: to the end)"},
    aliases=("SliceD",),
    const_inputs={1: "offsets", 2: "size"},
)
def slice_(inputs: list[np.ndarray], attrs: Attrs) -> list[np.ndarray]:
    """The block starting at `offsets` with extent `size` (-1 takes the rest of the dim)."""
    x = inputs[0]
    bounds = _slice_bounds(Spec.of(x), attrs)
    return [np.ascontiguousarray(x[tuple(slice(b, e) for b, e in bounds)])]


@op(
    "Permute",
    unit="vector",
    infer=axes_order_infer("Permute", "order", reverse_by_default=False),
    cost=move_work,
    inputs=("x",),
    attrs={"order": "list[int] = identity"},
)
def permute(inputs: list[np.ndarray], attrs: Attrs) -> list[np.ndarray]:
    """Caffe's Permute: the axes in `order` (Transpose with the Caffe attribute name)."""
    x = inputs[0]
    return [permuted(x, attrs.get("order", list(range(x.ndim))))]
