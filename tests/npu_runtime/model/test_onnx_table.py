"""The ONNX node -> Ascend op table is well formed and names real ONNX ops."""

from __future__ import annotations

import onnx.defs

from npu_runtime.model.onnx_map import ATTR_RULES, table
from npu_runtime.ops import REGISTRY


def test_rows_are_valid() -> None:
    rows = table()
    assert len(rows) > 100
    for name, row in rows.items():
        assert onnx.defs.has(name), f"{name} is not an ONNX operator"
        assert row.unit in ("cube", "vector", "move", "aicpu"), name
        assert row.mix in ("white", "black", "gray"), name
        assert not row.attrs or row.attrs in ATTR_RULES, name
        assert row.ascend and row.ascend[0].isupper(), name
        if row.unit == "cube":
            assert not row.fp32 and row.mix == "white", name  # Cube layers drop to fp16


def test_the_resnet_layers_price_with_registry_rules() -> None:
    # the ops a classifier is made of must reach the registry's cost rules, not the fallback
    for onnx_op in ("Conv", "Gemm", "MatMul", "Relu", "Add", "MaxPool", "Softmax"):
        assert table()[onnx_op].ascend in REGISTRY, onnx_op
