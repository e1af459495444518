"""%%npu_profile over torch_npu code in a real kernel: aten ops land on the cell's lines."""

from __future__ import annotations

from typing import Any

import pytest

from tests.npu_kernel.conftest import execute, of_type

pytest.importorskip("torch")

PROFILE_MIME = "application/vnd.ascend-lens.profile+json"

CELL = """%%npu_profile
a = torch.randn(64, 64, device="npu")
b = a @ a
c = torch.relu(b).sum()
print("sum is finite", bool(torch.isfinite(c)))
"""


def test_npu_profile_charges_torch_ops_to_the_cell_lines(fresh_kernel: tuple[Any, Any]) -> None:
    _, kc = fresh_kernel
    reply, msgs = execute(
        kc, "import torch\nimport torch_npu\nprint(torch.npu.get_device_name(0))", timeout=120
    )
    assert reply["status"] == "ok", msgs
    reply, msgs = execute(kc, CELL, timeout=120)
    assert reply["status"] == "ok", msgs
    out = "".join(m["text"] for m in of_type(msgs, "stream") if m["name"] == "stdout")
    assert out == "sum is finite True\n"
    (display,) = [d for d in of_type(msgs, "display_data") if PROFILE_MIME in d["data"]]
    doc = display["data"][PROFILE_MIME]
    lines = {e["line"]: {o["op_type"] for o in e["top_ops"]} for e in doc["lines"]}
    assert lines[2] == {"StatelessRandomNormalV2"}
    assert lines[3] == {"MatMul"}
    assert lines[4] == {"Relu", "ReduceSum"}
    assert "MemcpyD2H" in lines[5]  # bool() reads the value back
    assert doc["device"] == "Ascend910B2"
