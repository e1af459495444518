"""`acl.mdl`: offline models compiled by `ascend-lens atc`, with pyACL's signatures (api.md §5).

A thin translation over npu_runtime.model.loaded: positional arguments, `(value, ret)`
tuples, integer handles. Genuine Huawei `.om` files cannot run on the emulator and say so,
naming the command that makes an emulator model from the ONNX.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from npu_runtime.acl import _objects
from npu_runtime.acl._args import parse
from npu_runtime.core.runtime import get_runtime
from npu_runtime.errors import AclError, codes
from npu_runtime.model import loaded, run

_rt = get_runtime()
T = TypeVar("T")
ACL_DT_UNDEFINED = -1
ACL_FORMAT_UNDEFINED = -1


def _code(fn: Callable[[], Any]) -> int:
    try:
        fn()
    except AclError as e:
        return e.code
    return 0


def _value(default: T, fn: Callable[[], T]) -> tuple[T, int]:
    try:
        return fn(), 0
    except AclError as e:
        return default, e.code


# -- loading -----------------------------------------------------------------------------------
def load_from_file(*args: Any) -> tuple[int, int]:
    """load_from_file(path) -> (model_id, ret)"""
    (path,) = parse("s", args)
    api = "aclmdlLoadFromFile"
    return _value(0, lambda: loaded.load(loaded.parse(loaded.read_file(path, api), api), api))


def load_from_mem(*args: Any) -> tuple[int, int]:
    """load_from_mem(model_ptr, model_size) -> (model_id, ret)"""
    ptr, size = parse("kk", args)
    api = "aclmdlLoadFromMem"
    return _value(0, lambda: loaded.load(loaded.parse(loaded.read_host(ptr, size, api), api), api))


def load_from_file_with_mem(*args: Any) -> tuple[int, int]:
    """load_from_file_with_mem(path, work_ptr, work_size, weight_ptr, weight_size)"""
    path, work_ptr, work_size, weight_ptr, weight_size = parse("skkkk", args)
    api = "aclmdlLoadFromFileWithMem"
    return _value(
        0,
        lambda: loaded.load(
            loaded.parse(loaded.read_file(path, api), api),
            api,
            (work_ptr, work_size),
            (weight_ptr, weight_size),
        ),
    )


def load_from_mem_with_mem(*args: Any) -> tuple[int, int]:
    """load_from_mem_with_mem(ptr, size, work_ptr, work_size, weight_ptr, weight_size)"""
    ptr, size, work_ptr, work_size, weight_ptr, weight_size = parse("kkkkkk", args)
    api = "aclmdlLoadFromMemWithMem"
    return _value(
        0,
        lambda: loaded.load(
            loaded.parse(loaded.read_host(ptr, size, api), api),
            api,
            (work_ptr, work_size),
            (weight_ptr, weight_size),
        ),
    )


def query_size(*args: Any) -> tuple[int, int, int]:
    """query_size(path) -> (work_size, weight_size, ret)"""
    (path,) = parse("s", args)
    api = "aclmdlQuerySize"
    try:
        work, weight = loaded.sizes(loaded.parse(loaded.read_file(path, api), api))
    except AclError as e:
        return 0, 0, e.code
    return work, weight, 0


def query_size_from_mem(*args: Any) -> tuple[int, int, int]:
    """query_size_from_mem(ptr, size) -> (work_size, weight_size, ret)"""
    ptr, size = parse("kk", args)
    api = "aclmdlQuerySizeFromMem"
    try:
        work, weight = loaded.sizes(loaded.parse(loaded.read_host(ptr, size, api), api))
    except AclError as e:
        return 0, 0, e.code
    return work, weight, 0


def unload(*args: Any) -> int:
    (model_id,) = parse("k", args)
    return _code(lambda: loaded.unload(model_id))


# -- execution ---------------------------------------------------------------------------------
def execute(*args: Any) -> int:
    """execute(model_id, input_dataset, output_dataset) -> ret (synchronous)"""
    model_id, ins, outs = parse("kkk", args)
    return _code(lambda: run.execute(model_id, ins, outs, 0, "aclmdlExecute", True))


def execute_async(*args: Any) -> int:
    """execute_async(model_id, input_dataset, output_dataset, stream) -> ret"""
    model_id, ins, outs, stream = parse("kkkk", args)
    return _code(lambda: run.execute(model_id, ins, outs, stream, "aclmdlExecuteAsync", False))


# -- descriptions ------------------------------------------------------------------------------
@dataclass(eq=False)
class ModelDesc:
    """An aclmdlDesc: filled by get_desc from a loaded model."""

    model: loaded.Model | None = None


def create_desc(*args: Any) -> int:
    parse("", args)
    return _objects.new(ModelDesc())


def _desc(handle: int) -> ModelDesc | None:
    obj = _objects._objects.get(handle)
    return obj if isinstance(obj, ModelDesc) else None


def _invalid(api: str, what: str, handle: int) -> int:
    return _rt.fail(codes.ACL_ERROR_INVALID_PARAM, api, f"0x{handle:x} is not a {what}").code


def get_desc(*args: Any) -> int:
    """get_desc(desc, model_id) -> ret"""
    desc, model_id = parse("kk", args)
    d = _desc(desc)
    if d is None:
        return _invalid("aclmdlGetDesc", "model description", desc)

    m = loaded.store.find(model_id)
    if m is None:  # GE's GetModelDescInfo turns the bad id into a tensor-info failure
        return _rt.fail(
            codes.ACL_ERROR_GE_GET_TENSOR_INFO,
            "aclmdlGetDesc",
            f"Invalid model id {model_id}, check whether model has been loaded or not",
        ).code
    d.model = m
    return 0


def destroy_desc(*args: Any) -> int:
    (desc,) = parse("k", args)
    if _desc(desc) is None:
        return _invalid("aclmdlDestroyDesc", "model description", desc)
    _objects.drop(desc)
    return 0


def _model(desc: int) -> loaded.Model | None:
    d = _desc(desc)
    return d.model if d is not None else None


def _io(desc: int, index: int, outputs: bool) -> loaded.IoDesc | None:
    m = _model(desc)
    if m is None:
        return None
    items = m.outputs if outputs else m.inputs
    return items[index] if 0 <= index < len(items) else None


def get_num_inputs(*args: Any) -> int:
    (desc,) = parse("k", args)
    m = _model(desc)
    return len(m.inputs) if m is not None else 0


def get_num_outputs(*args: Any) -> int:
    (desc,) = parse("k", args)
    m = _model(desc)
    return len(m.outputs) if m is not None else 0


def _size(outputs: bool) -> Callable[..., int]:
    def get_size_by_index(*args: Any) -> int:
        desc, index = parse("kk", args)
        io = _io(desc, index, outputs)
        return io.max_bytes if io is not None else 0

    return get_size_by_index


get_input_size_by_index = _size(False)
get_output_size_by_index = _size(True)


def _dims_dict(name: str, dims: tuple[int, ...] | list[int]) -> dict[str, Any]:
    return {"name": name, "dimCount": len(dims), "dims": list(dims)}


def _dims(outputs: bool, current: bool, api: str) -> Callable[..., tuple[dict[str, Any], int]]:
    def get_dims(*args: Any) -> tuple[dict[str, Any], int]:
        desc, index = parse("kk", args)
        io = _io(desc, index, outputs)
        if io is None:
            return {}, _bad_index(api, desc, index)
        if current:
            m = _model(desc)
            assert m is not None
            return _dims_dict(io.name, io.gear_shapes[m.cur_gear]), 0
        return _dims_dict(io.name, io.dims), 0

    return get_dims


def _bad_index(api: str, desc: int, index: int) -> int:
    m = _model(desc)
    if m is None:
        return _invalid(api, "model description filled by get_desc", desc)
    return _rt.fail(codes.ACL_ERROR_INVALID_PARAM, api, f"index {index} is out of range").code


get_input_dims = _dims(False, False, "aclmdlGetInputDims")
get_input_dims_v2 = _dims(False, False, "aclmdlGetInputDimsV2")
get_output_dims = _dims(True, False, "aclmdlGetOutputDims")
get_cur_output_dims = _dims(True, True, "aclmdlGetCurOutputDims")


def _attr(outputs: bool, pick: Callable[[loaded.IoDesc], T], default: T) -> Callable[..., T]:
    def getter(*args: Any) -> T:
        desc, index = parse("kk", args)
        io = _io(desc, index, outputs)
        return pick(io) if io is not None else default

    return getter


get_input_data_type = _attr(False, lambda io: io.acl_dtype, ACL_DT_UNDEFINED)
get_output_data_type = _attr(True, lambda io: io.acl_dtype, ACL_DT_UNDEFINED)
get_input_format = _attr(False, lambda io: io.format, ACL_FORMAT_UNDEFINED)
get_output_format = _attr(True, lambda io: io.format, ACL_FORMAT_UNDEFINED)
get_input_name_by_index = _attr(False, lambda io: io.name, "")
get_output_name_by_index = _attr(True, lambda io: io.name, "")


def _index_by_name(outputs: bool, api: str) -> Callable[..., tuple[int, int]]:
    def get_index(*args: Any) -> tuple[int, int]:
        desc, name = parse("ks", args)
        m = _model(desc)
        if m is None:
            return 0, _invalid(api, "model description filled by get_desc", desc)
        for i, io in enumerate(m.outputs if outputs else m.inputs):
            if io.name == name:
                return i, 0
        return 0, _rt.fail(codes.ACL_ERROR_INVALID_PARAM, api, f"the model has no {name!r}").code

    return get_index


get_input_index_by_name = _index_by_name(False, "aclmdlGetInputIndexByName")
get_output_index_by_name = _index_by_name(True, "aclmdlGetOutputIndexByName")


def get_dynamic_batch(*args: Any) -> tuple[dict[str, Any], int]:
    """get_dynamic_batch(desc) -> ({"batchCount", "batch"}, ret); empty for other models."""
    (desc,) = parse("k", args)
    m = _model(desc)
    if m is None:
        return {}, _invalid("aclmdlGetDynamicBatch", "model description filled by get_desc", desc)
    batches = [g[0] for g in m.gears] if m.kind == "batch" else []
    return {"batchCount": len(batches), "batch": batches}, 0


def get_dynamic_hw(*args: Any) -> tuple[dict[str, Any], int]:
    """get_dynamic_hw(desc, index) -> ({"hwCount", "hw": [[h, w], ...]}, ret)"""
    desc, _index = parse("kk", args)
    m = _model(desc)
    if m is None:
        return {}, _invalid("aclmdlGetDynamicHW", "model description filled by get_desc", desc)
    hw = [list(g) for g in m.gears] if m.kind == "hw" else []
    return {"hwCount": len(hw), "hw": hw}, 0


def get_input_dynamic_gear_count(*args: Any) -> tuple[int, int]:
    """get_input_dynamic_gear_count(desc, index) -> (count, ret)"""
    desc, _index = parse("kk", args)
    m = _model(desc)
    if m is None:
        return 0, _invalid(
            "aclmdlGetInputDynamicGearCount", "model description filled by get_desc", desc
        )
    return (len(m.gears) if m.kind == "dims" else 0), 0


def get_input_dynamic_dims(*args: Any) -> tuple[list[dict[str, Any]], int]:
    """get_input_dynamic_dims(desc, index, gear_count) -> ([dims dict per gear], ret)"""
    desc, _index, count = parse("kkk", args)
    m = _model(desc)
    api = "aclmdlGetInputDynamicDims"
    if m is None:
        return [], _invalid(api, "model description filled by get_desc", desc)
    if m.kind != "dims" or count != len(m.gears):
        return [], _rt.fail(
            codes.ACL_ERROR_INVALID_PARAM, api, f"gear_count {count}, the model has {len(m.gears)}"
        ).code
    out = []
    for g in range(len(m.gears)):
        dims = [d for io in m.data_inputs for d in io.gear_shapes[g]]
        out.append(_dims_dict("", dims))
    return out, 0


# -- dynamic gears -----------------------------------------------------------------------------
def set_dynamic_batch_size(*args: Any) -> int:
    """set_dynamic_batch_size(model_id, dataset, index, batch) -> ret"""
    model_id, ds, index, batch = parse("kkkk", args)
    return _code(
        lambda: loaded.set_gear(model_id, ds, index, [batch], "batch", "aclmdlSetDynamicBatchSize")
    )


def set_dynamic_hw_size(*args: Any) -> int:
    """set_dynamic_hw_size(model_id, dataset, index, height, width) -> ret"""
    model_id, ds, index, h, w = parse("kkkkk", args)
    return _code(
        lambda: loaded.set_gear(model_id, ds, index, [h, w], "hw", "aclmdlSetDynamicHWSize")
    )


def set_input_dynamic_dims(*args: Any) -> int:
    """set_input_dynamic_dims(model_id, dataset, index, {"name", "dimCount", "dims"}) -> ret"""
    model_id, ds, index, dims = parse("kkkO", args)
    api = "aclmdlSetInputDynamicDims"
    if not isinstance(dims, dict) or not isinstance(dims.get("dims"), list):
        raise TypeError("argument 4 must be a dict with a 'dims' list")

    def body() -> None:
        m = loaded.store.get(model_id, api)
        values = loaded.dims_gear_values(m, [int(d) for d in dims["dims"]], api)
        loaded.set_gear(model_id, ds, index, values, "dims", api)

    return _code(body)


# -- datasets ------------------------------------------------------------------------------------
def create_dataset(*args: Any) -> int:
    parse("", args)
    return _objects.new(_objects.Dataset())


def destroy_dataset(*args: Any) -> int:
    (ds,) = parse("k", args)
    if _objects.dataset(ds) is None:
        return _invalid("aclmdlDestroyDataset", "dataset", ds)
    _objects.drop(ds)
    return 0


def add_dataset_buffer(*args: Any) -> tuple[int, int]:
    ds, buf = parse("kk", args)
    d = _objects.dataset(ds)
    if d is None or _objects.data_buffer(buf) is None:
        what, h = ("dataset", ds) if d is None else ("data buffer", buf)
        return ds, _invalid("aclmdlAddDatasetBuffer", what, h)
    d.buffers.append(buf)
    return ds, 0


def get_dataset_buffer(*args: Any) -> int:
    ds, i = parse("ki", args)
    d = _objects.dataset(ds)
    return d.buffers[i] if d is not None and 0 <= i < len(d.buffers) else 0


def get_dataset_tensor_desc(*args: Any) -> int:
    """get_dataset_tensor_desc(dataset, index) -> tensor desc (0 when none): after an
    execute, an output dataset's descs hold each output's actual dims."""
    ds, i = parse("kk", args)
    d = _objects.dataset(ds)
    return d.tensor_descs[i] if d is not None and 0 <= i < len(d.tensor_descs) else 0


def set_dataset_tensor_desc(*args: Any) -> int:
    """set_dataset_tensor_desc(dataset, tensor_desc, index) -> ret"""
    ds, desc, i = parse("kkk", args)
    d = _objects.dataset(ds)
    api = "aclmdlSetDatasetTensorDesc"
    if d is None:
        return _invalid(api, "dataset", ds)
    if _objects.tensor_desc(desc) is None:
        return _invalid(api, "tensor desc", desc)
    if i >= len(d.buffers):
        return _rt.fail(
            codes.ACL_ERROR_INVALID_PARAM,
            api,
            f"index {i}: the dataset has {len(d.buffers)} buffers",
        ).code
    d.tensor_descs.extend([0] * (len(d.buffers) - len(d.tensor_descs)))
    d.tensor_descs[i] = desc
    return 0


def get_dataset_num_buffers(*args: Any) -> int:
    (ds,) = parse("k", args)
    d = _objects.dataset(ds)
    return len(d.buffers) if d is not None else 0
