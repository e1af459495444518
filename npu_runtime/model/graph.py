"""The ONNX side of compiling: load the model, check every op has an Ascend mapping, fix
the inputs per gear and find every tensor's shape and dtype."""

from __future__ import annotations

import contextlib
from typing import Any

import numpy as np

from npu_runtime.model.flags import AtcError, Options, bad_value, parse_input_shape
from npu_runtime.model.onnx_map import table


def attr_values(node: Any) -> dict[str, Any]:
    from onnx import helper

    out: dict[str, Any] = {}
    for a in node.attribute:
        v = helper.get_attribute_value(a)
        if isinstance(v, bytes):
            v = v.decode("utf-8", "replace")
        elif isinstance(v, list) and all(isinstance(x, (int, float)) for x in v):
            v = list(v)
        elif isinstance(v, list) and all(isinstance(x, bytes) for x in v):
            v = [x.decode("utf-8", "replace") for x in v]
        elif not isinstance(v, (int, float, str)):
            continue  # tensors and sub-graphs are not needed to price the node
        out[a.name] = v
    return out


def np_name(elem_type: int) -> str:
    from onnx import helper

    return str(np.dtype(helper.tensor_dtype_to_np_dtype(elem_type)))


def load_onnx(path: str) -> Any:
    import onnx

    try:
        model = onnx.load(path)
    except FileNotFoundError:
        raise bad_value("model", path, "the file does not exist") from None
    except Exception as exc:  # noqa: BLE001 - protobuf's parse errors have no common base
        raise AtcError(
            f"E19999: Failed to parse the ONNX model [{path}]: {exc}".rstrip(),
        ) from None
    if not model.graph.node:
        raise AtcError(f"E19999: The ONNX model [{path}] has no nodes.")
    return model


def check_ops(model: Any) -> None:
    rows = table()
    missing = [
        f"EZ3003: No supported Ops kernel and engine are found for [{n.name or n.op_type}], "
        f"optype [{n.op_type}]."
        for n in model.graph.node
        if n.domain not in ("", "ai.onnx") or n.op_type not in rows
    ]
    if missing:
        raise AtcError(
            *missing,
            "        Possible Cause: The operator is not supported by the system. Therefore, "
            "no hit is found in any operator information library.",
            "        Solution: Replace the operator with supported ones before export "
            "(docs/model.md lists them), or run it through acl.op.",
        )


def graph_inputs(model: Any) -> list[Any]:
    inits = {t.name for t in model.graph.initializer}
    return [i for i in model.graph.input if i.name not in inits]


def _declared_dims(vi: Any) -> list[int]:
    dims = vi.type.tensor_type.shape.dim
    return [d.dim_value if d.HasField("dim_value") and d.dim_value > 0 else -1 for d in dims]


def resolve_inputs(
    model: Any, opts: Options, kind: str, gears: list[list[int]]
) -> tuple[dict[str, list[int]], list[dict[str, list[int]]]]:
    """Declared dims per input (with -1) and, per gear, the concrete shape of each input."""
    inputs = graph_inputs(model)
    names = [i.name for i in inputs]
    given = parse_input_shape(opts.input_shape) if opts.input_shape else {}
    for name in given:
        if name not in names:
            raise AtcError(
                f"E10016: Input parameter [--input_shape]'s opname [{name}] is not found in "
                f"model, the model's inputs are [{', '.join(names)}]."
            )
    declared: dict[str, list[int]] = {}
    for vi in inputs:
        dims = given.get(vi.name, _declared_dims(vi))
        if vi.name not in given and len(dims) != len(vi.type.tensor_type.shape.dim):
            dims = []
        declared[vi.name] = dims
    unknown = [n for n, d in declared.items() if -1 in d]
    if not kind:
        if unknown:
            raise AtcError(
                f"E10001: Value [{opts.input_shape or '(none)'}] for parameter [--input_shape] "
                f"is invalid. Reason: input [{unknown[0]}] has unknown dims "
                f"{declared[unknown[0]]}; give every dim in --input_shape, or -1 with "
                "--dynamic_batch_size, --dynamic_image_size or --dynamic_dims."
            )
        return declared, [declared]
    if not unknown:
        raise AtcError(
            "E10001: Value [" + (opts.input_shape or "(none)") + "] for parameter "
            "[--input_shape] is invalid. Reason: a dynamic gear option needs -1 in "
            "--input_shape for the dims it sets."
        )
    per_gear: list[dict[str, list[int]]] = []
    if kind == "batch":
        for name in unknown:
            if declared[name].count(-1) != 1 or declared[name][0] != -1:
                raise bad_value(
                    "input_shape",
                    opts.input_shape,
                    f"with --dynamic_batch_size only the first dim of [{name}] may be -1",
                )
        for (b,) in gears:
            per_gear.append(
                {n: [b if d == -1 else d for d in dims] for n, dims in declared.items()}
            )
    elif kind == "hw":
        for name in unknown:
            if declared[name].count(-1) != 2:
                raise bad_value(
                    "input_shape",
                    opts.input_shape,
                    f"with --dynamic_image_size the height and width of [{name}] must be -1",
                )
        for h, w in gears:
            gear: dict[str, list[int]] = {}
            for n, dims in declared.items():
                hw = iter((h, w))
                gear[n] = [next(hw) if d == -1 else d for d in dims]
            per_gear.append(gear)
    else:
        count = sum(d.count(-1) for d in declared.values())
        if len(gears[0]) != count:
            raise bad_value(
                "dynamic_dims",
                opts.dynamic_dims,
                f"each gear needs {count} values, one per -1 in --input_shape",
            )
        for g in gears:
            values = iter(g)
            per_gear.append(
                {n: [next(values) if d == -1 else d for d in dims] for n, dims in declared.items()}
            )
    return declared, per_gear


def shapes_for(model: Any, gear: dict[str, list[int]]) -> dict[str, tuple[list[int], str]]:
    """Every tensor's (shape, numpy dtype name) with the inputs fixed to `gear`."""
    import onnx
    from onnx import shape_inference

    m = onnx.ModelProto()
    m.CopyFrom(model)
    for vi in m.graph.input:
        if vi.name in gear:
            shape = vi.type.tensor_type.shape
            del shape.dim[:]
            for d in gear[vi.name]:
                shape.dim.add().dim_value = d
    del m.graph.value_info[:]
    with contextlib.suppress(Exception):  # what inference cannot give, a run gives below
        m = shape_inference.infer_shapes(m, strict_mode=False, data_prop=True)
    found: dict[str, tuple[list[int], str]] = {}
    for vi in [*m.graph.input, *m.graph.value_info, *m.graph.output]:
        tt = vi.type.tensor_type
        dims = [d.dim_value if d.HasField("dim_value") else -1 for d in tt.shape.dim]
        if tt.elem_type and tt.HasField("shape") and -1 not in dims:
            found[vi.name] = (dims, np_name(tt.elem_type))
    for t in m.graph.initializer:
        found[t.name] = (list(t.dims), np_name(t.data_type))
    wanted = {o for n in m.graph.node for o in n.output if o}
    if wanted - found.keys():
        found.update(_run_for_shapes(m, gear, sorted(wanted - found.keys())))
    return found


def _run_for_shapes(
    model: Any, gear: dict[str, list[int]], names: list[str]
) -> dict[str, tuple[list[int], str]]:
    """Shapes shape inference could not give: run the graph once on zeros and look."""
    import onnx

    from npu_runtime.model.executor import Executor

    m = onnx.ModelProto()
    m.CopyFrom(model)
    del m.graph.output[:]
    for n in names:
        m.graph.output.add().name = n
    feeds = {}
    for vi in graph_inputs(m):
        dt = np.dtype(onnx.helper.tensor_dtype_to_np_dtype(vi.type.tensor_type.elem_type))
        feeds[vi.name] = np.zeros(gear[vi.name], dt)
    try:
        values = Executor(m.SerializeToString(), names).run(feeds)
    except Exception as exc:  # noqa: BLE001 - report as ATC does, naming the model
        raise AtcError(f"E19999: Shape inference failed for the model: {exc}") from None
    return {n: (list(v.shape), str(v.dtype)) for n, v in zip(names, values, strict=True)}
