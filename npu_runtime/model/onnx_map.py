"""The ONNX node -> Ascend op table (npu_runtime/data/onnx_ops.json) and node pricing.

Each executed node is priced as the registry op its row names, with the node's shapes in
the dtype the precision mode chose; ops the registry does not model are priced by the
row's unit (a matmul on the Cube, element operations on the Vector unit, bytes moved, or
the AI CPU).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any, Literal

import numpy as np

from npu_runtime.ops.registry import REGISTRY, Matmul, Spec, Work

Unit = Literal["cube", "vector", "move", "aicpu"]
MixList = Literal["white", "black", "gray"]


@dataclass(frozen=True, slots=True)
class OnnxOp:
    """One row of the table: how ATC maps an ONNX op type."""

    onnx: str
    ascend: str
    unit: Unit
    mix: MixList
    fp32: bool
    ops: float = 1.0
    batched: str = ""
    attrs: str = ""
    folded: bool = False
    exact: bool = False

    def ascend_for(self, in_rank: int) -> str:
        return self.batched if self.batched and in_rank > 2 else self.ascend


@cache
def table() -> dict[str, OnnxOp]:
    """ONNX op type -> its row."""
    raw = json.loads(
        resources.files("npu_runtime.data").joinpath("onnx_ops.json").read_text("utf-8")
    )
    return {name: OnnxOp(onnx=name, **row) for name, row in raw["ops"].items()}


# -- attribute translation: ONNX attributes -> the registry op's, for its cost rule ---------
AttrRule = Callable[[Mapping[str, Any], Sequence[Spec]], dict[str, Any]]


def _conv(a: Mapping[str, Any], ins: Sequence[Spec]) -> dict[str, Any]:
    sh, sw = (list(a.get("strides", [1, 1])) + [1, 1])[:2]
    p = list(a.get("pads", [0, 0, 0, 0]))
    pads = [p[0], p[2], p[1], p[3]] if len(p) == 4 else [0, 0, 0, 0]  # ONNX: begins, ends
    dh, dw = (list(a.get("dilations", [1, 1])) + [1, 1])[:2]
    return {
        "strides": [1, 1, sh, sw],
        "pads": pads,
        "dilations": [1, 1, dh, dw],
        "groups": int(a.get("group", 1)),
    }


def _gemm(a: Mapping[str, Any], ins: Sequence[Spec]) -> dict[str, Any]:
    return {"transpose_x1": bool(a.get("transA", 0)), "transpose_x2": bool(a.get("transB", 0))}


def _pool(a: Mapping[str, Any], ins: Sequence[Spec]) -> dict[str, Any]:
    kh, kw = (list(a.get("kernel_shape", [1, 1])) + [1, 1])[:2]
    sh, sw = (list(a.get("strides", [1, 1])) + [1, 1])[:2]
    return {"ksize": [1, 1, kh, kw], "strides": [1, 1, sh, sw], "padding": "VALID"}


def _global_pool(a: Mapping[str, Any], ins: Sequence[Spec]) -> dict[str, Any]:
    rank = len(ins[0].shape) if ins else 4
    return {"axes": list(range(2, rank)), "keep_dims": True}


def _reduce(a: Mapping[str, Any], ins: Sequence[Spec]) -> dict[str, Any]:
    return {"axes": list(a.get("axes", [])), "keep_dims": bool(a.get("keepdims", 1))}


def _softmax(a: Mapping[str, Any], ins: Sequence[Spec]) -> dict[str, Any]:
    return {"axes": [int(a.get("axis", -1))]}


def _concat(a: Mapping[str, Any], ins: Sequence[Spec]) -> dict[str, Any]:
    return {"concat_dim": int(a.get("axis", 0)), "N": len(ins)}


def _transpose(a: Mapping[str, Any], ins: Sequence[Spec]) -> dict[str, Any]:
    return {"perm": list(a["perm"])} if "perm" in a else {}


def _layer_norm(a: Mapping[str, Any], ins: Sequence[Spec]) -> dict[str, Any]:
    axis = int(a.get("axis", -1))
    return {
        "begin_norm_axis": axis,
        "begin_params_axis": axis,
        "epsilon": float(a.get("epsilon", 1e-5)),
    }


ATTR_RULES: dict[str, AttrRule] = {
    "conv": _conv,
    "gemm": _gemm,
    "pool": _pool,
    "global_pool": _global_pool,
    "reduce": _reduce,
    "softmax": _softmax,
    "concat": _concat,
    "transpose": _transpose,
    "layer_norm": _layer_norm,
}


def _io_bytes(ins: Sequence[Spec], outs: Sequence[Spec]) -> int:
    return sum(s.nbytes for s in ins) + sum(s.nbytes for s in outs)


def unit_work(row: OnnxOp, ins: Sequence[Spec], outs: Sequence[Spec]) -> Work:
    """What a node costs when the registry has no rule for its Ascend op: by its unit."""
    dtype = outs[0].dtype if outs else (ins[0].dtype if ins else np.dtype(np.float32))
    moved = _io_bytes(ins, outs)
    out_elems = sum(s.size for s in outs)
    if row.unit == "cube":
        # the output as M x N, reduced over K = (second input's elements) / N
        n = outs[0].shape[-1] if outs and outs[0].shape else 1
        m = max(out_elems // max(n, 1), 1)
        k = max((ins[1].size if len(ins) > 1 else 1) // max(n, 1), 1)
        mm = Matmul(1, m, n, k)
        return Work("cube", dtype, moved, matmuls=(mm,), flops=2 * m * n * k)
    if row.unit == "aicpu":
        return Work("aicpu", dtype, moved, vector_ops=out_elems)
    if row.unit == "vector":
        ops = int(math.ceil(out_elems * row.ops))
        return Work("vector", dtype, moved, vector_ops=ops, flops=ops)
    return Work("vector", dtype, moved)


def node_work(
    row: OnnxOp,
    ascend: str,
    ins: Sequence[Spec],
    outs: Sequence[Spec],
    onnx_attrs: Mapping[str, Any],
) -> Work:
    """The node's Work: the registry's cost rule for `ascend` when it has one and accepts
    the node, otherwise the row's unit."""
    d = REGISTRY.get(ascend)
    if d is not None:
        rule = ATTR_RULES.get(row.attrs)
        try:
            attrs = rule(onnx_attrs, ins) if rule is not None else {}
            return d.cost(ins, outs, attrs)
        except Exception:  # noqa: BLE001 - a shape the registry rule does not take: price by unit
            pass
    return unit_work(row, ins, outs)
