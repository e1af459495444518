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

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from npu_runtime.model import om
from npu_runtime.model.flags import (
    DYNAMIC_TENSOR_NAME,
    INPUT_FORMATS,
    OUTPUT_TYPES,
    PRECISION_MODES,
    AtcError,
    Options,
    bad_value,
    parse_gears,
)
from npu_runtime.model.graph import (
    attr_values,
    check_ops,
    graph_inputs,
    load_onnx,
    np_name,
    resolve_inputs,
    shapes_for,
)
from npu_runtime.model.onnx_map import OnnxOp, table
from npu_runtime.model.precision import compute_dtypes, lowered_graph

__all__ = ["Options", "compile_model", "write"]


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
        dt = np_name(t.data_type)
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
    model = load_onnx(opts.model)
    check_ops(model)
    declared, per_gear = resolve_inputs(model, opts, kind, gears)
    gear_shapes = [shapes_for(model, g) for g in per_gear]
    first = gear_shapes[0]
    dtypes = compute_dtypes(model, first, opts.precision_mode)
    floats = {t for t, (_, dt) in first.items() if dt == "float32"}
    lowered = lowered_graph(model, dtypes, declared, out_type, floats)
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
                "attrs": attr_values(n),
                "inputs": [t for t in n.input if t],
                "outputs": [t for t in n.output if t],
            }
        )
    inputs = []
    fmt = INPUT_FORMATS[opts.input_format]
    for vi in graph_inputs(model):
        name = vi.name
        shapes = [g[name] for g in per_gear]
        inputs.append(
            {
                "name": name,
                "dtype": np_name(vi.type.tensor_type.elem_type),
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
        "feeds": [vi.name for vi in graph_inputs(lowered)],
        "weight_bytes": _weight_bytes(model, dtypes),
        "work_bytes": max(_work_bytes(model, gs, dtypes) for gs in gear_shapes),
    }
    graph = lowered.SerializeToString()
    _check_executable(graph, [o["name"] for o in outputs])
    return header, graph


def _check_executable(graph: bytes, outputs: list[str]) -> None:
    """Build the executor once, so a graph it cannot run fails here, naming the reason,
    rather than at every load."""
    from npu_runtime.model.executor import Executor

    try:
        Executor(graph, outputs)
    except Exception as exc:  # noqa: BLE001 - the executor's own message says what is wrong
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise AtcError(f"E19999: The compiled graph cannot be built: {first}") from None


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
