"""A small ResNet-style image classifier built with onnx.helper (no downloads)."""

from __future__ import annotations

from pathlib import Path

import numpy as np


def build(
    path: Path, batch: int | str = 1, size: int | str = 32, classes: int = 10, seed: int = 0
) -> Path:
    """stem conv + 2 residual blocks + global pool + Gemm + Softmax; weights seeded."""
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(seed)
    inits: list = []
    nodes: list = []

    def weight(name: str, *shape: int, scale: float = 0.2) -> str:
        inits.append(
            numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name)
        )
        return name

    def conv(
        name: str, x: str, cin: int, cout: int, k: int, stride: int = 1, relu: bool = True
    ) -> str:
        w = weight(f"{name}.w", cout, cin, k, k, scale=(2.0 / (cin * k * k)) ** 0.5)
        b = weight(f"{name}.b", cout, scale=0.05)
        p = k // 2
        nodes.append(
            helper.make_node(
                "Conv",
                [x, w, b],
                [f"{name}.out"],
                name=name,
                kernel_shape=[k, k],
                strides=[stride, stride],
                pads=[p, p, p, p],
            )
        )
        if not relu:
            return f"{name}.out"
        nodes.append(
            helper.make_node("Relu", [f"{name}.out"], [f"{name}.relu"], name=f"{name}_relu")
        )
        return f"{name}.relu"

    x = conv("stem", "input", 3, 16, 3)
    nodes.append(
        helper.make_node(
            "MaxPool", [x], ["pool1"], name="maxpool", kernel_shape=[2, 2], strides=[2, 2]
        )
    )
    x = "pool1"
    for i in range(2):
        y = conv(f"block{i}.conv1", x, 16, 16, 3)
        y = conv(f"block{i}.conv2", y, 16, 16, 3, relu=False)
        nodes.append(helper.make_node("Add", [x, y], [f"block{i}.sum"], name=f"block{i}_add"))
        nodes.append(
            helper.make_node("Relu", [f"block{i}.sum"], [f"block{i}.out"], name=f"block{i}_relu")
        )
        x = f"block{i}.out"
    nodes.append(helper.make_node("GlobalAveragePool", [x], ["gap"], name="gap"))
    nodes.append(helper.make_node("Flatten", ["gap"], ["flat"], name="flatten", axis=1))
    w = weight("fc.w", classes, 16)
    b = weight("fc.b", classes, scale=0.05)
    nodes.append(helper.make_node("Gemm", ["flat", w, b], ["logits"], name="fc", transB=1))
    nodes.append(helper.make_node("Softmax", ["logits"], ["prob"], name="softmax", axis=1))
    graph = helper.make_graph(
        nodes,
        "resnet_tiny",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, [batch, 3, size, size])],
        [helper.make_tensor_value_info("prob", TensorProto.FLOAT, [batch, classes])],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=9)
    path.write_bytes(model.SerializeToString())
    return path
