"""Precision modes: which dtype each node computes in, and the graph the executor runs
with float16 rounding where the device stores float16."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from npu_runtime.model.graph import graph_inputs
from npu_runtime.model.onnx_map import table


def compute_dtypes(
    model: Any, shapes: dict[str, tuple[list[int], str]], mode: str
) -> list[str | None]:
    """Per node: the float dtype it computes in ("float16"/"float32"), None if no floats."""
    rows = table()
    low: set[str] = set()  # tensors an fp16 node produced
    out: list[str | None] = []
    for node in model.graph.node:
        names = [t for t in [*node.input, *node.output] if t]
        floats = any(shapes.get(t, ([], ""))[1] == "float32" for t in names)
        if not floats:
            out.append(None)
            continue
        row = rows[node.op_type]
        if mode == "force_fp16":
            fp16 = True
        elif mode == "must_keep_origin_dtype":
            fp16 = False
        elif mode == "allow_fp32_to_fp16":
            fp16 = row.unit == "cube" or not row.fp32
        else:  # allow_mix_precision: white lists drop to fp16, black stay fp32, gray follow
            fp16 = row.mix == "white" or (
                row.mix == "gray" and any(t in low for t in node.input if t)
            )
        if row.folded and not fp16:
            fp16 = any(t in low for t in node.input if t)
        if fp16:
            low.update(t for t in node.output if t)
        out.append("float16" if fp16 else "float32")
    return out


def lowered_graph(
    model: Any,
    dtypes: Sequence[str | None],
    declared: dict[str, list[int]],
    output_type: str,
    float_tensors: set[str],
) -> Any:
    """The graph the executor runs: fp16 rounding after every fp16 node (and on the weights
    and inputs it reads), the inputs' dynamic dims symbolic, outputs in --output_type."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    m = onnx.ModelProto()
    m.CopyFrom(model)
    g = m.graph
    consumers: dict[str, list[int]] = {}
    for i, n in enumerate(g.node):
        for t in n.input:
            consumers.setdefault(t, []).append(i)

    def all_fp16(t: str) -> bool:
        users = consumers.get(t, [])
        return bool(users) and all(dtypes[u] == "float16" for u in users)

    for init in g.initializer:
        if init.data_type == TensorProto.FLOAT and all_fp16(init.name):
            a = numpy_helper.to_array(init).astype(np.float16).astype(np.float32)
            init.CopyFrom(numpy_helper.from_array(a, init.name))
    new_nodes: list[Any] = []
    counter = [0]

    def round_pair(src: str, dst: str) -> list[Any]:
        counter[0] += 1
        mid = f"{dst}__fp16_{counter[0]}"
        return [
            helper.make_node("Cast", [src], [mid], to=TensorProto.FLOAT16, name=mid + "_c1"),
            helper.make_node("Cast", [mid], [dst], to=TensorProto.FLOAT, name=mid + "_c2"),
        ]

    renames: dict[str, str] = {}
    for vi in graph_inputs(m):
        if vi.name in float_tensors and all_fp16(vi.name):
            raw = f"{vi.name}__input"
            renames[vi.name] = raw
    for vi in g.input:
        if vi.name in renames:
            new_nodes.extend(round_pair(renames[vi.name], vi.name))
            vi.name = renames[vi.name]
    # A float tensor is fp16-exact when an fp16 node rounded it (or it is a rounded weight
    # or input). Rounding after an `exact` op (Relu, MaxPool, reshapes) equals rounding
    # before it, so an output read only by exact fp16 nodes waits: fewer Casts, and
    # onnxruntime can still fuse Conv+Relu.
    rows = table()
    exact_ok = {i.name for i in g.initializer if all_fp16(i.name)} | set(renames)
    graph_outputs = {o.name for o in g.output}
    for node, dt in zip(g.node, dtypes, strict=True):
        rounded: list[tuple[str, str]] = []
        row = rows[node.op_type]
        if dt == "float16" and node.op_type not in ("Shape", "Cast"):
            floats_in = [t for t in node.input if t in float_tensors]
            if row.exact and all(t in exact_ok for t in floats_in):
                exact_ok.update(node.output)
            else:
                for k, out in enumerate(node.output):
                    if out not in float_tensors:
                        continue
                    users = consumers.get(out, [])
                    if (
                        out not in graph_outputs
                        and users
                        and all(
                            dtypes[u] == "float16" and rows[model.graph.node[u].op_type].exact
                            for u in users
                        )
                    ):
                        continue  # the exact readers round after themselves
                    raw = f"{out}__fp32"
                    node.output[k] = raw
                    rounded.append((raw, out))
                    exact_ok.add(out)
        new_nodes.append(node)
        for raw, out in rounded:
            new_nodes.extend(round_pair(raw, out))
    del g.node[:]
    g.node.extend(new_nodes)
    # dynamic dims become symbols so one session serves every gear
    for vi in g.input:
        name = next((k for k, v in renames.items() if v == vi.name), vi.name)
        if name in declared and declared[name]:
            shape = vi.type.tensor_type.shape
            del shape.dim[:]
            for j, d in enumerate(declared[name]):
                dim = shape.dim.add()
                if d == -1:
                    dim.dim_param = f"{name}_dyn{j}"
                else:
                    dim.dim_value = d
    del g.value_info[:]
    for vi in g.output:
        vi.type.tensor_type.ClearField("shape")
    if output_type and output_type != "float32":
        onnx_t = {
            "float16": TensorProto.FLOAT16,
            "uint8": TensorProto.UINT8,
            "int8": TensorProto.INT8,
        }[output_type]
        for vi in g.output:
            if vi.type.tensor_type.elem_type == TensorProto.FLOAT:
                raw = f"{vi.name}__out"
                for n in g.node:
                    for k, o in enumerate(n.output):
                        if o == vi.name:
                            n.output[k] = raw
                    for k, i in enumerate(n.input):
                        if i == vi.name:
                            n.input[k] = raw
                g.node.append(helper.make_node("Cast", [raw], [vi.name], to=onnx_t))
                vi.type.tensor_type.elem_type = onnx_t
    m.ir_version = min(m.ir_version, 10)
    return m
