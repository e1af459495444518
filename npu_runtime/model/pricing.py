"""Price a loaded model's nodes: one work record template per node and gear, the node
costed as its Ascend op (the registry's rule, or its unit) in the precision mode's dtypes
on the device's profile."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from npu_runtime import numerics
from npu_runtime.core.device import Device
from npu_runtime.core.launch import Cost as LaunchCost
from npu_runtime.cost import estimate
from npu_runtime.model.onnx_map import node_work, table
from npu_runtime.ops.registry import Spec
from npu_runtime.records import TensorInfo


@dataclass(frozen=True)
class NodeTask:
    """A node's work record template for one gear."""

    name: str
    op_type: str
    cost: LaunchCost
    inputs: tuple[TensorInfo, ...]
    outputs: tuple[TensorInfo, ...]


def _info(shape: list[int], dtype: np.dtype) -> TensorInfo:
    return TensorInfo(
        tuple(shape), numerics.msprof_name(dtype), "NCHW" if len(shape) == 4 else "ND"
    )


def _spec(tensors: dict[str, list[Any]], name: str, low: bool) -> Spec:
    """A node tensor's Spec in the dtype the node computes in (fp16 for float tensors of an
    fp16 node)."""
    dims, dt = tensors.get(name, ([], "float32"))
    np_dt = np.dtype(np.float16) if low and dt == "float32" else np.dtype(dt)
    return Spec(tuple(dims), np_dt, "NCHW" if len(dims) == 4 else "ND")


def price(header: dict[str, Any], gear: int, device: Device) -> list[NodeTask]:
    rows = table()
    tensors: dict[str, list[Any]] = header["tensors"][gear]
    out: list[NodeTask] = []
    for node in header["nodes"]:
        row = rows[node["onnx"]]
        if row.folded:
            continue
        low = node["dtype"] == "float16"
        ins = [_spec(tensors, t, low) for t in node["inputs"]]
        outs = [_spec(tensors, t, low) for t in node["outputs"]]
        c = estimate(node_work(row, node["ascend"], ins, outs, node["attrs"]), device.profile)
        out.append(
            NodeTask(
                node["name"],
                node["ascend"],
                LaunchCost(
                    c.duration_us,
                    c.bound,
                    c.unit,
                    c.block_dim,
                    c.time_by_unit,
                    c.bytes_moved,
                    c.flops,
                ),
                tuple(_info(list(s.shape), s.dtype) for s in ins),
                tuple(_info(list(s.shape), s.dtype) for s in outs),
            )
        )
    return out
