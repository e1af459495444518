"""Compile an ONNX model into the emulator's `.om`, as ATC does for `--framework=5`.

What it resolves, per "gear" (one per dynamic batch size, image size or dims set; one for a
static model): every tensor's shape and dtype, each node's Ascend op and the dtype it
computes in under the precision mode, the weight and working memory. The graph it stores
rounds every value an fp16 node produces to fp16 (and the weights it reads), so the
executor's results carry the precision mode's rounding.

Errors are `AtcError`s whose text follows ATC's (an error code such as E10001 and the node
or parameter at fault); `atc.main` prints them.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from npu_runtime.model import om
from npu_runtime.model.onnx_map import OnnxOp, table

PRECISION_MODES = (
    "force_fp16",
    "allow_fp32_to_fp16",
    "must_keep_origin_dtype",
    "allow_mix_precision",
)
OUTPUT_TYPES = {"FP32": "float32", "FP16": "float16", "UINT8": "uint8", "INT8": "int8"}
INPUT_FORMATS = {"NCHW": 0, "NHWC": 1, "ND": 2, "NCDHW": 30, "NDHWC": 27}
LOG_LEVELS = ("debug", "info", "warning", "error", "null")
DYNAMIC_TENSOR_NAME = "ascend_mbatch_shape_data"  # ACL_DYNAMIC_TENSOR_NAME
MAX_GEARS = 100


class AtcError(Exception):
    """A compile failure; `lines` are ATC-style error lines (code first)."""

    def __init__(self, *lines: str) -> None:
        super().__init__("\n".join(lines))
        self.lines = list(lines)


def bad_value(param: str, value: str, reason: str) -> AtcError:
    return AtcError(
        f"E10001: Value [{value}] for parameter [--{param}] is invalid. Reason: {reason}"
    )


@dataclass
class Options:
    """ATC's flags, as parsed by `atc.main`."""

    model: str
    output: str
    soc_version: str
    framework: int = 5
    input_shape: str = ""
    dynamic_batch_size: str = ""
    dynamic_image_size: str = ""
    dynamic_dims: str = ""
    input_format: str = "NCHW"
    output_type: str = ""
    precision_mode: str = "force_fp16"
    log: str = "null"
    extra: dict[str, str] = field(default_factory=dict)


# -- option parsing ----------------------------------------------------------------------
def _ints(text: str, param: str) -> list[int]:
    try:
        return [int(x) for x in text.split(",") if x.strip() != ""]
    except ValueError:
        raise bad_value(param, text, "it must be comma-separated integers") from None


def parse_input_shape(text: str) -> dict[str, list[int]]:
    """`name:1,3,224,224;name2:...` -> {name: dims}; -1 marks a dynamic dim."""
    shapes: dict[str, list[int]] = {}
    for part in filter(None, (p.strip() for p in text.split(";"))):
        name, sep, dims = part.rpartition(":")
        if not sep or not name:
            raise bad_value("input_shape", text, f'"{part}" must be name:dim1,dim2,...')
        values = _ints(dims, "input_shape")
        if any(d < -1 or d == 0 for d in values):
            raise bad_value("input_shape", text, f"dims of {name} must be positive or -1")
        shapes[name] = values
    return shapes


def parse_gears(opts: Options) -> tuple[str, list[list[int]]]:
    """(kind, gears) from the one dynamic option given: ("", []) for a static model."""
    given = [
        (k, v)
        for k, v in (
            ("batch", opts.dynamic_batch_size),
            ("hw", opts.dynamic_image_size),
            ("dims", opts.dynamic_dims),
        )
        if v
    ]
    if len(given) > 1:
        raise AtcError(
            "E10009: Parameters [--dynamic_batch_size], [--dynamic_image_size] and "
            "[--dynamic_dims] cannot be used together."
        )
    if not given:
        return "", []
    kind, text = given[0]
    param = {"batch": "dynamic_batch_size", "hw": "dynamic_image_size", "dims": "dynamic_dims"}[
        kind
    ]
    if kind == "batch":
        gears = [[b] for b in _ints(text, param)]
    else:
        gears = [_ints(g, param) for g in text.split(";") if g.strip()]
    if not 2 <= len(gears) <= MAX_GEARS:
        raise bad_value(param, text, f"give between 2 and {MAX_GEARS} gears")
    if any(v < 1 for g in gears for v in g):
        raise bad_value(param, text, "every value must be a positive integer")
    if kind == "hw" and any(len(g) != 2 for g in gears):
        raise bad_value(param, text, 'each gear must be "height,width"')
    if len({len(g) for g in gears}) != 1:
        raise bad_value(param, text, "every gear must have the same number of values")
    if len({tuple(g) for g in gears}) != len(gears):
        raise bad_value(param, text, "gears must not repeat")
    return kind, gears


# -- ONNX helpers ----------------------------------------------------------------------------
def _attr_values(node: Any) -> dict[str, Any]:
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


def _np_name(elem_type: int) -> str:
    from onnx import helper

    return str(np.dtype(helper.tensor_dtype_to_np_dtype(elem_type)))


def _load(path: str) -> Any:
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


def _check_ops(model: Any) -> None:
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


def _graph_inputs(model: Any) -> list[Any]:
    inits = {t.name for t in model.graph.initializer}
    return [i for i in model.graph.input if i.name not in inits]


def _declared_dims(vi: Any) -> list[int]:
    dims = vi.type.tensor_type.shape.dim
    return [d.dim_value if d.HasField("dim_value") and d.dim_value > 0 else -1 for d in dims]


def _resolve_inputs(
    model: Any, opts: Options, kind: str, gears: list[list[int]]
) -> tuple[dict[str, list[int]], list[dict[str, list[int]]]]:
    """Declared dims per input (with -1) and, per gear, the concrete shape of each input."""
    inputs = _graph_inputs(model)
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


def _shapes_for(model: Any, gear: dict[str, list[int]]) -> dict[str, tuple[list[int], str]]:
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
            found[vi.name] = (dims, _np_name(tt.elem_type))
    for t in m.graph.initializer:
        found[t.name] = (list(t.dims), _np_name(t.data_type))
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
    for vi in _graph_inputs(m):
        dt = np.dtype(onnx.helper.tensor_dtype_to_np_dtype(vi.type.tensor_type.elem_type))
        feeds[vi.name] = np.zeros(gear[vi.name], dt)
    try:
        values = Executor(m.SerializeToString(), names).run(feeds)
    except Exception as exc:  # noqa: BLE001 - report as ATC does, naming the model
        raise AtcError(f"E19999: Shape inference failed for the model: {exc}") from None
    return {n: (list(v.shape), str(v.dtype)) for n, v in zip(names, values, strict=True)}


# -- precision ---------------------------------------------------------------------------------
def _compute_dtypes(
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


def _lowered_graph(
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
    for vi in _graph_inputs(m):
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


# -- memory ------------------------------------------------------------------------------------
def _itemsize(dtype: str) -> int:
    return np.dtype(dtype).itemsize


def _work_bytes(
    model: Any, shapes: dict[str, tuple[list[int], str]], dtypes: Sequence[str | None]
) -> int:
    """Peak bytes of intermediate tensors, each freed after its last reader (ATC reuses
    memory the same way); inputs and outputs live in the user's buffers."""
    g = model.graph
    outside = {i.name for i in g.input} | {o.name for o in g.output}
    outside |= {t.name for t in g.initializer}
    last: dict[str, int] = {}
    for i, n in enumerate(g.node):
        for t in n.input:
            last[t] = i
    live: dict[str, int] = {}
    peak = cur = 0
    for i, (n, dt) in enumerate(zip(g.node, dtypes, strict=True)):
        for t in n.output:
            if not t or t in outside or t not in shapes:
                continue
            dims, np_dt = shapes[t]
            size = math.prod(dims) * (
                2 if np_dt == "float32" and dt == "float16" else _itemsize(np_dt)
            )
            size = (size + 31) // 32 * 32 + 32
            live[t] = size
            cur += size
        peak = max(peak, cur)
        for t in list(live):
            if last.get(t, -1) <= i:
                cur -= live.pop(t)
    return peak


def _weight_bytes(model: Any, dtypes: Sequence[str | None]) -> int:
    consumers: dict[str, list[int]] = {}
    for i, n in enumerate(model.graph.node):
        for t in n.input:
            consumers.setdefault(t, []).append(i)
    total = 0
    for t in model.graph.initializer:
        n = math.prod(t.dims)
        dt = _np_name(t.data_type)
        fp16 = dt == "float32" and all(dtypes[u] == "float16" for u in consumers.get(t.name, [0]))
        total += n * (2 if fp16 else _itemsize(dt))
    return total


# -- the whole compile ---------------------------------------------------------------------------
def compile_model(opts: Options) -> tuple[dict[str, Any], bytes]:
    """(header, graph bytes) of the `.om` for `opts`; AtcError on bad input."""
    from npu_runtime.devices import get_profile

    if opts.framework != 5:
        raise bad_value(
            "framework",
            str(opts.framework),
            "the Ascend Lens emulator compiles ONNX models only (--framework=5)",
        )
    try:
        profile = get_profile(opts.soc_version)
    except ValueError:
        raise bad_value(
            "soc_version", opts.soc_version, "it is not a SoC in the device data"
        ) from None
    if opts.precision_mode not in PRECISION_MODES:
        raise bad_value(
            "precision_mode", opts.precision_mode, f"it must be one of {', '.join(PRECISION_MODES)}"
        )
    out_type = ""
    if opts.output_type:
        if opts.output_type.upper() not in OUTPUT_TYPES:
            raise bad_value(
                "output_type", opts.output_type, f"it must be one of {', '.join(OUTPUT_TYPES)}"
            )
        out_type = OUTPUT_TYPES[opts.output_type.upper()]
    if opts.input_format not in INPUT_FORMATS:
        raise bad_value(
            "input_format", opts.input_format, f"it must be one of {', '.join(INPUT_FORMATS)}"
        )
    kind, gears = parse_gears(opts)
    model = _load(opts.model)
    _check_ops(model)
    declared, per_gear = _resolve_inputs(model, opts, kind, gears)
    gear_shapes = [_shapes_for(model, g) for g in per_gear]
    first = gear_shapes[0]
    dtypes = _compute_dtypes(model, first, opts.precision_mode)
    floats = {t for t, (_, dt) in first.items() if dt == "float32"}
    lowered = _lowered_graph(model, dtypes, declared, out_type, floats)
    rows = table()
    nodes = []
    for i, (n, dt) in enumerate(zip(model.graph.node, dtypes, strict=True)):
        row: OnnxOp = rows[n.op_type]
        rank = len(first.get(n.input[0], ([], ""))[0]) if n.input else 0
        nodes.append(
            {
                "name": n.name or f"{n.op_type}_{i}",
                "onnx": n.op_type,
                "ascend": row.ascend_for(rank),
                "dtype": dt,
                "attrs": _attr_values(n),
                "inputs": [t for t in n.input if t],
                "outputs": [t for t in n.output if t],
            }
        )
    inputs = []
    fmt = INPUT_FORMATS[opts.input_format]
    for vi in _graph_inputs(model):
        name = vi.name
        shapes = [g[name] for g in per_gear]
        inputs.append(
            {
                "name": name,
                "dtype": _np_name(vi.type.tensor_type.elem_type),
                "format": fmt if len(declared[name]) == 4 or fmt == 2 else 2,
                "dims": declared[name],
                "gear_shapes": shapes,
            }
        )
    if kind:
        width = len(gears[0])
        inputs.append(
            {
                "name": DYNAMIC_TENSOR_NAME,
                "dtype": "int64",
                "format": 2,
                "dims": [width],
                "gear_shapes": [[width]] * len(gears),
                "dynamic_data": True,
            }
        )
    outputs = []
    for vi in model.graph.output:
        per = [gs[vi.name][0] for gs in gear_shapes]
        dims = max(per, key=math.prod)  # GE reports a dynamic model's outputs at its largest gear
        src_dt = first[vi.name][1]
        dt = out_type if out_type and src_dt == "float32" else src_dt
        outputs.append(
            {"name": vi.name, "dtype": dt, "format": 2, "dims": dims, "gear_shapes": per}
        )
    header: dict[str, Any] = {
        "format": "ascend-lens-om",
        "producer": "ascend-lens atc",
        "framework": 5,
        "source": opts.model,
        "soc_version": opts.soc_version,
        "profile": profile.name,
        "precision_mode": opts.precision_mode,
        "output_type": out_type or "",
        "input_format": opts.input_format,
        "dynamic": {"kind": kind, "gears": gears},
        "inputs": inputs,
        "outputs": outputs,
        "nodes": nodes,
        "tensors": [{t: [dims, dt] for t, (dims, dt) in gs.items()} for gs in gear_shapes],
        "feeds": [vi.name for vi in _graph_inputs(lowered)],
        "weight_bytes": _weight_bytes(model, dtypes),
        "work_bytes": max(_work_bytes(model, gs, dtypes) for gs in gear_shapes),
    }
    return header, lowered.SerializeToString()


def write(opts: Options) -> str:
    """Compile and write `<output>.om`; returns the path."""
    header, graph = compile_model(opts)
    path = opts.output if opts.output.endswith(".om") else opts.output + ".om"
    try:
        with open(path, "wb") as f:
            f.write(om.dumps(header, graph))
    except OSError as exc:
        raise bad_value("output", opts.output, f"cannot write {path}: {exc.strerror}") from None
    return path
