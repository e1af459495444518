"""`acl.mdl`: datasets work; offline models (.om) cannot run on the emulator and say so (api.md §5)."""

from __future__ import annotations

import os
from typing import Any

from npu_runtime.acl import _objects
from npu_runtime.acl._args import parse
from npu_runtime.core.runtime import get_runtime
from npu_runtime.errors import AclError, codes

_rt = get_runtime()
_UNSUPPORTED = (
    "offline models (.om) are compiled device binaries that the Ascend Lens emulator cannot "
    "execute; run the model's ops through acl.op or the npu_runtime Tensor API instead"
)


def _load(path: str, api: str) -> int:
    if not os.path.isfile(path):
        raise _rt.fail(
            codes.ACL_ERROR_GE_EXEC_MODEL_PATH_INVALID, api, f"model file {path!r} does not exist"
        )
    raise _rt.fail(codes.ACL_ERROR_FEATURE_UNSUPPORTED, api, f"{path!r}: {_UNSUPPORTED}")


def load_from_file(*args: Any) -> tuple[int, int]:
    (path,) = parse("s", args)
    try:
        return _load(path, "aclmdlLoadFromFile"), 0
    except AclError as e:
        return 0, e.code


def load_from_file_with_mem(*args: Any) -> tuple[int, int]:
    path, *_ = parse("skkkk", args)
    try:
        return _load(path, "aclmdlLoadFromFileWithMem"), 0
    except AclError as e:
        return 0, e.code


def load_from_mem(*args: Any) -> tuple[int, int]:
    parse("kk", args)
    err = _rt.fail(codes.ACL_ERROR_FEATURE_UNSUPPORTED, "aclmdlLoadFromMem", _UNSUPPORTED)
    return 0, err.code


def query_size(*args: Any) -> tuple[int, int, int]:
    (path,) = parse("s", args)
    try:
        _load(path, "aclmdlQuerySize")
    except AclError as e:
        return 0, 0, e.code
    return 0, 0, 0  # pragma: no cover - _load always fails


def _bad_model(api: str, model_id: int) -> int:
    return _rt.fail(
        codes.ACL_ERROR_INVALID_MODEL_ID, api, f"model id {model_id} was never loaded"
    ).code


def unload(*args: Any) -> int:
    (model_id,) = parse("k", args)
    return _bad_model("aclmdlUnload", model_id)


def execute(*args: Any) -> int:
    model_id, _in, _out = parse("kkk", args)
    return _bad_model("aclmdlExecute", model_id)


def execute_async(*args: Any) -> int:
    model_id, _in, _out, _s = parse("kkkk", args)
    return _bad_model("aclmdlExecuteAsync", model_id)


def create_desc(*args: Any) -> int:
    parse("", args)
    return _objects.new(object())


def get_desc(*args: Any) -> int:
    _desc, model_id = parse("kk", args)
    return _bad_model("aclmdlGetDesc", model_id)


def _invalid(api: str, what: str, handle: int) -> int:
    return _rt.fail(codes.ACL_ERROR_INVALID_PARAM, api, f"0x{handle:x} is not a {what}").code


def destroy_desc(*args: Any) -> int:
    (desc,) = parse("k", args)
    return (
        0
        if _objects.drop(desc) is not None
        else _invalid("aclmdlDestroyDesc", "model description", desc)
    )


# -- datasets (used with models and by some op samples) ------------------------------------
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


def get_dataset_num_buffers(*args: Any) -> int:
    (ds,) = parse("k", args)
    d = _objects.dataset(ds)
    return len(d.buffers) if d is not None else 0
