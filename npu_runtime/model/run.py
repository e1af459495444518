"""Execute a loaded model: check the datasets (GE's codes), read the inputs from device
memory, compute with the ONNX executor, write the outputs, and put one work record per
node on the stream at the user line of the execute call."""

from __future__ import annotations

from typing import Any

import numpy as np

from npu_runtime.acl import _objects
from npu_runtime.core.faults import injector
from npu_runtime.core.launch import place
from npu_runtime.core.runtime import Runtime, get_runtime
from npu_runtime.errors import AclError, codes
from npu_runtime.model.loaded import IoDesc, Model, store
from npu_runtime.sites import user_site

_rt: Runtime = get_runtime()


def _buffers(ds: int, what: str, api: str) -> list[_objects.DataBuffer]:
    d = _objects.dataset(ds)
    if d is None:
        raise _rt.fail(
            codes.ACL_ERROR_INVALID_PARAM, api, f"{what} dataset 0x{ds:x} is not a dataset"
        )
    out = []
    for i, h in enumerate(d.buffers):
        b = _objects.data_buffer(h)
        if b is None:
            raise _rt.fail(
                codes.ACL_ERROR_INVALID_PARAM, api, f"{what} buffer {i} is not a data buffer"
            )
        out.append(b)
    return out


def _gear_of(m: Model, bufs: list[_objects.DataBuffer], api: str) -> int:
    """The gear the dynamic input buffer selects (what set_dynamic_* wrote there)."""
    if not m.kind:
        return 0
    idx = next(i for i, d in enumerate(m.inputs) if d.dynamic_data)
    b = bufs[idx]
    width = len(m.gears[0])
    item = 8 if b.size >= width * 8 else 4
    try:
        raw = bytes(_rt.memory.view(b.addr, width * item))
    except ValueError as exc:
        raise _rt.fail(
            codes.ACL_ERROR_GE_PARAM_INVALID, api, f"dynamic input buffer: {exc}"
        ) from None
    values = np.frombuffer(raw, np.int64 if item == 8 else np.int32).tolist()
    if values not in m.gears:
        raise _rt.fail(
            codes.ACL_ERROR_GE_DYNAMIC_BATCH_SIZE_INVALID,
            api,
            f"the dynamic input holds {values}, which is not a gear of the model "
            f"({m.gears}): call acl.mdl.set_dynamic_batch_size (or _hw_size, "
            "set_input_dynamic_dims) with a compiled value before executing",
        )
    return m.gears.index(values)


def _check_count(m: Model, bufs: list[Any], descs: list[IoDesc], what: str, api: str) -> None:
    if len(bufs) != len(descs):
        raise _rt.fail(
            codes.ACL_ERROR_GE_PARAM_INVALID,
            api,
            f"Verify {what} data num failed: model requires {len(descs)}, but user actually "
            f"feeds {len(bufs)}",
        )


def _check_sizes(
    bufs: list[_objects.DataBuffer], descs: list[IoDesc], gear: int, what: str, api: str
) -> None:
    for i, (b, d) in enumerate(zip(bufs, descs, strict=True)):
        need = d.nbytes(gear)
        if b.size < need:
            raise _rt.fail(
                codes.ACL_ERROR_GE_PARAM_INVALID,
                api,
                f"{what} {i} ({d.name}): buffer size {b.size} from user is less than the "
                f"{need} bytes the model needs",
            )


def _describe_outputs(ds: int, outputs: list[IoDesc], gear: int) -> None:
    """Give the output dataset a tensor desc per output with its actual dims (what
    aclmdlGetDatasetTensorDesc returns after an execute)."""
    d = _objects.dataset(ds)
    if d is None:
        return
    d.tensor_descs.extend([0] * (len(outputs) - len(d.tensor_descs)))
    for i, io in enumerate(outputs):
        td = _objects.tensor_desc(d.tensor_descs[i]) if d.tensor_descs[i] else None
        if td is None:
            td = _objects.TensorDesc(io.acl_dtype, [], io.format, io.name)
            d.tensor_descs[i] = _objects.new(td)
        td.dims = list(io.gear_shapes[gear])
        td.dtype = io.acl_dtype


def execute(model_id: int, in_ds: int, out_ds: int, stream: int, api: str, sync: bool) -> None:
    m = store.get(model_id, api)
    s = _rt.resolve_stream(stream, api)
    if s.device is not m.device:
        raise _rt.fail(
            codes.ACL_ERROR_RT_MODEL_CONTEXT,
            api,
            f"model {model_id} was loaded on device {m.device.id}; the current context is on "
            f"device {s.device.id}",
        )
    ins = _buffers(in_ds, "input", api)
    outs = _buffers(out_ds, "output", api)
    _check_count(m, ins, m.inputs, "input", api)
    _check_count(m, outs, m.outputs, "output", api)
    gear = _gear_of(m, ins, api)
    _check_sizes(ins, m.inputs, gear, "input", api)
    _check_sizes(outs, m.outputs, gear, "output", api)
    feeds: dict[str, np.ndarray] = {}
    feed_names = m.header["feeds"]
    k = 0
    for b, d in zip(ins, m.inputs, strict=True):
        if d.dynamic_data:
            continue
        shape = d.gear_shapes[gear]
        try:
            view = _rt.memory.view(b.addr, d.nbytes(gear))
        except ValueError as exc:
            raise _rt.fail(
                codes.ACL_ERROR_GE_PARAM_INVALID, api, f"input {k} ({d.name}): {exc}"
            ) from None
        feeds[feed_names[k]] = view.view(d.dtype).reshape(shape)
        k += 1
    try:
        results = m.executor.run(feeds)
    except Exception as exc:  # noqa: BLE001 - the executor's failure is the model's failure
        raise _rt.fail(
            codes.ACL_ERROR_RT_MODEL_EXECUTE,
            api,
            f"model {model_id} failed to execute: {exc}",
        ) from None
    for i, (b, d, r) in enumerate(zip(outs, m.outputs, results, strict=True)):
        arr = np.ascontiguousarray(r, dtype=d.dtype)
        try:
            _rt.memory.view(b.addr, arr.nbytes)[:] = arr.reshape(-1).view(np.uint8)
        except ValueError as exc:
            raise _rt.fail(
                codes.ACL_ERROR_GE_PARAM_INVALID, api, f"output {i} ({d.name}): {exc}"
            ) from None
    m.cur_gear = gear
    _describe_outputs(out_ds, m.outputs, gear)

    site = user_site(2)
    for t in m.tasks(gear):
        fault = None
        if injector.active:  # --inject op:Conv2D:N:CODE reaches model layers too
            code = injector.op_fails(t.op_type)
            if code is not None:
                fault = AclError(code, api, f"injected device fault in {t.name} ({t.op_type})")
        place(s, "op", t.name, t.op_type, t.cost, t.inputs, t.outputs, site, fault, m.id)
    if sync:  # aclmdlExecute returns when the model has run, with its device-side failure
        s.device.advance_host(s.ready_us)
        try:
            s.device.settle([s], _rt.hostmem, site, api)
        except AclError as e:
            _rt.report(e)
            raise
