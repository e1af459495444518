"""The pyACL-compatible `acl` module over the emulated runtime (../shared/reference/acl/api.md).

Layout as pyACL: top-level functions here, submodules rt, util, mdl, media, plus op (ops
engineer) and prof (profiler engineer) when present. Positional arguments, integer handles,
`(values..., ret)` tuples. Scripts reach this as `import acl` through the shim directory
npu_runtime/_shim, which the launchers put on sys.path; it is never installed as `acl`.
"""

from __future__ import annotations

import importlib
import importlib.util
import struct
import sys
from typing import Any

import numpy as np

from npu_runtime.acl import _objects
from npu_runtime.acl import mdl as mdl
from npu_runtime.acl import media as media
from npu_runtime.acl import rt as rt
from npu_runtime.acl import util as util
from npu_runtime.acl._args import parse
from npu_runtime.core.runtime import get_runtime
from npu_runtime.errors import AclError, codes

_rt = get_runtime()
ACL_VERSION = (1, 15, 0)  # ACL_*_VERSION of the headers (api.md §1)


# -- lifecycle ------------------------------------------------------------------------------
def init(*args: Any) -> int:
    (path,) = parse("|s", args) or (None,)
    try:
        _rt.init(path)
    except AclError as e:
        return e.code
    return 0


def finalize(*args: Any) -> int:
    parse("", args)
    try:
        _rt.finalize()
    except AclError as e:
        return e.code
    return 0


def finalize_reference(*args: Any) -> tuple[int, int]:
    parse("", args)
    return 0, finalize()


def get_version(*args: Any) -> tuple[int, int, int, int]:
    parse("", args)
    return (*ACL_VERSION, 0)


def get_soc_name(*args: Any) -> str:
    parse("", args)
    return _rt.profile.soc_name


def get_recent_err_msg(*args: Any) -> str | None:
    """The calling thread's most recent error message, cleared once read (like the real one)."""
    parse("", args)
    msg = _rt.tls.recent_msg
    _rt.tls.recent_msg = None
    return msg


def app_log(*args: Any) -> None:
    level, msg = parse("is", args)
    names = {0: "DEBUG", 1: "INFO", 2: "WARNING", 3: "ERROR"}
    sys.stderr.write(f"[{names.get(level, level)}] {msg}\n")


def get_device_capability(*args: Any) -> tuple[int, int]:
    dev, info = parse("ii", args)
    if not 0 <= dev < _rt.device_count:
        return 0, _rt.fail(
            codes.ACL_ERROR_RT_INVALID_DEVICEID,
            "aclGetDeviceCapability",
            f"device {dev} is out of range",
        ).code
    p = _rt.profile
    table = {0: p.ai_core, 1: p.vector_core, 2: p.l2_bytes}
    if info not in table:
        return 0, _rt.fail(
            codes.ACL_ERROR_INVALID_PARAM,
            "aclGetDeviceCapability",
            f"info {info} is not an aclDeviceInfo",
        ).code
    return table[info], 0


# -- numerics helpers ---------------------------------------------------------------------------
def float16_to_float(*args: Any) -> float:
    (value,) = parse("k", args)
    return float(np.frombuffer(struct.pack("<H", value & 0xFFFF), np.float16)[0])


def float_to_float16(*args: Any) -> int:
    (value,) = parse("d", args)
    return int(np.array(value, np.float16).view(np.uint16))


def data_type_size(*args: Any) -> int:
    (dtype,) = parse("i", args)
    return _objects.DTYPE_SIZES.get(dtype, 0)


# -- data buffers ---------------------------------------------------------------------------
def create_data_buffer(*args: Any) -> int:
    ptr, size = parse("kk", args)
    return _objects.new(_objects.DataBuffer(ptr, size))


def destroy_data_buffer(*args: Any) -> int:
    (buf,) = parse("k", args)
    if _objects.data_buffer(buf) is None:
        return _rt.fail(
            codes.ACL_ERROR_INVALID_PARAM, "aclDestroyDataBuffer", f"0x{buf:x} is not a data buffer"
        ).code
    _objects.drop(buf)
    return 0


def get_data_buffer_addr(*args: Any) -> int:
    (buf,) = parse("k", args)
    b = _objects.data_buffer(buf)
    return b.addr if b else 0


def get_data_buffer_size(*args: Any) -> int:
    (buf,) = parse("k", args)
    b = _objects.data_buffer(buf)
    return b.size if b else 0


get_data_buffer_size_v2 = get_data_buffer_size


def update_data_buffer(*args: Any) -> int:
    buf, ptr, size = parse("kkk", args)
    b = _objects.data_buffer(buf)
    if b is None:
        return _rt.fail(
            codes.ACL_ERROR_INVALID_PARAM, "aclUpdateDataBuffer", f"0x{buf:x} is not a data buffer"
        ).code
    b.addr, b.size = ptr, size
    return 0


# -- tensor descriptions --------------------------------------------------------------------------
def create_tensor_desc(*args: Any) -> int:
    dtype, dims, fmt = parse("iOi", args)
    if not isinstance(dims, list):
        raise TypeError("argument 2 is not list")
    return _objects.new(_objects.TensorDesc(dtype, [int(d) for d in dims], fmt))


def destroy_tensor_desc(*args: Any) -> None:
    (desc,) = parse("k", args)
    if _objects.tensor_desc(desc) is not None:
        _objects.drop(desc)


def _desc(desc: int) -> _objects.TensorDesc | None:
    return _objects.tensor_desc(desc)


def _bad_desc(api: str, desc: int, index: int | None = None) -> int:
    what = (
        f"0x{desc:x} is not a tensor description"
        if _desc(desc) is None
        else f"dim index {index} is out of range"
    )
    return _rt.fail(codes.ACL_ERROR_INVALID_PARAM, api, what).code


def get_tensor_desc_type(*args: Any) -> int:
    (desc,) = parse("k", args)
    d = _desc(desc)
    return d.dtype if d else -1


def get_tensor_desc_format(*args: Any) -> int:
    (desc,) = parse("k", args)
    d = _desc(desc)
    return d.format if d else -1


def get_tensor_desc_size(*args: Any) -> int:
    (desc,) = parse("k", args)
    d = _desc(desc)
    return d.size() if d else 0


def get_tensor_desc_element_count(*args: Any) -> int:
    (desc,) = parse("k", args)
    d = _desc(desc)
    return d.element_count() if d else 0


def get_tensor_desc_num_dims(*args: Any) -> int:
    (desc,) = parse("k", args)
    d = _desc(desc)
    return len(d.dims) if d else 0


def get_tensor_desc_dim(*args: Any) -> int:
    desc, i = parse("kk", args)
    d = _desc(desc)
    return d.dims[i] if d and 0 <= i < len(d.dims) else -1


def get_tensor_desc_dim_v2(*args: Any) -> tuple[int, int]:
    desc, i = parse("kk", args)
    d = _desc(desc)
    if d is None or not 0 <= i < len(d.dims):
        return -1, _bad_desc("aclGetTensorDescDimV2", desc, i)
    return d.dims[i], 0


def get_tensor_desc_name(*args: Any) -> str:
    (desc,) = parse("k", args)
    d = _desc(desc)
    return d.name if d else ""


def set_tensor_desc_name(*args: Any) -> None:
    desc, name = parse("ks", args)
    d = _desc(desc)
    if d:
        d.name = name


def _setter(attr: str, conv: Any = int) -> Any:
    def set_(*args: Any) -> int:
        desc, value = parse("kO", args)
        d = _desc(desc)
        if d is None:
            return _bad_desc(f"aclSetTensor{attr.title()}", desc)
        setattr(d, attr, conv(value))
        return 0

    set_.__name__ = f"set_tensor_{attr}"
    return set_


def _dims(value: Any) -> list[int]:
    if not isinstance(value, list):
        raise TypeError("argument 2 is not list")
    return [int(v) for v in value]


set_tensor_format = _setter("format")
set_tensor_origin_format = _setter("origin_format")
set_tensor_storage_format = _setter("storage_format")
set_tensor_shape = _setter("dims", _dims)
set_tensor_origin_shape = _setter("origin_dims", _dims)
set_tensor_storage_shape = _setter("storage_dims", _dims)
set_tensor_shape_range = _setter("shape_range", lambda v: [list(map(int, r)) for r in v])
set_tensor_place_ment = _setter("placement")
set_tensor_dynamic_input = _setter("dynamic_input", str)


def set_tensor_const(*args: Any) -> int:
    desc, ptr, length = parse("kkk", args)
    d = _desc(desc)
    if d is None:
        return _bad_desc("aclSetTensorConst", desc)
    d.const = util.ptr_to_bytes(ptr, length)
    return 0


def get_tensor_desc_dim_range(*args: Any) -> tuple[list[int] | None, int]:
    """[low, high] of dim `i`: the shape range when one is set, else the dim itself."""
    desc, i, n = parse("kkk", args)
    if n > 4096:
        return None, codes.ACL_ERROR_INVALID_PARAM  # pyACL's own limit (api.md §1)
    d = _desc(desc)
    if d is None or not 0 <= i < len(d.dims):
        return None, _bad_desc("aclGetTensorDescDimRange", desc, i)
    if d.shape_range and i < len(d.shape_range):
        return list(d.shape_range[i])[:n], 0
    return [d.dims[i], d.dims[i]][:n], 0


def trans_tensor_desc_format(*args: Any) -> tuple[int, int]:
    desc, fmt = parse("ki", args)
    d = _desc(desc)
    if d is None:
        return 0, _bad_desc("aclTransTensorDescFormat", desc)
    copy = _objects.TensorDesc(d.dtype, list(d.dims), fmt, d.name)
    return _objects.new(copy), 0


def set_tensor_value_range(*args: Any) -> int:
    desc, ranges = parse("kO", args)
    d = _desc(desc)
    if d is None:
        return _bad_desc("aclSetTensorValueRange", desc)
    d.value_range = [list(map(float, r)) for r in ranges]
    return 0


# Submodules other parts own: imported when they exist (acl.op: ops, acl.prof: profiler).
# A broken submodule is reported and left out, so scripts that do not use it still run.
for _name in ("op", "prof"):
    if importlib.util.find_spec(f"{__name__}.{_name}") is not None:
        try:
            importlib.import_module(f"{__name__}.{_name}")
        except Exception as _exc:
            sys.stderr.write(f"ascend-lens: acl.{_name} is unavailable: {_exc!r}\n")
