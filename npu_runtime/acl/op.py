"""`acl.op`: single-op execution as pyACL scripts use it (api.md section 4).

Ops come from the registry (npu_runtime.ops), not from compiled .om models, so
`set_model_dir` and `load` are accepted and ignored. `execute_v2` validates on the host
(returning the ACL code for a bad op, description, buffer or attribute), then queues the
op on the stream: it reads and writes emulated device memory when it is enqueued, and its
device-side failures surface at the next synchronisation, as on hardware.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from npu_runtime import numerics
from npu_runtime.acl import _objects
from npu_runtime.acl._args import checker, parse
from npu_runtime.core.runtime import get_runtime
from npu_runtime.errors import AclError, codes
from npu_runtime.ops import OpError, Spec
from npu_runtime.ops import dispatch as _dispatch
from npu_runtime.ops.errors import ACL_ERROR_UNSUPPORTED_DATA_TYPE
from npu_runtime.ops.registry import REGISTRY, OpDef
from npu_runtime.sites import user_site

_rt = get_runtime()

# aclFormat values (api.md section 7) -> the names msprof and our Specs use.
FORMATS: dict[int, str] = {
    0: "NCHW", 1: "NHWC", 2: "ND", 3: "NC1HWC0", 4: "FRACTAL_Z", 12: "NC1HWC0_C04",
    16: "HWCN", 27: "NDHWC", 29: "FRACTAL_NZ", 30: "NCDHW", 32: "NDC1HWC0",
    33: "FRACTAL_Z_3D", 35: "NC", 47: "NCL",
}  # fmt: skip


class OpAttr(dict[str, Any]):
    """An aclopAttr: attribute name -> value, set through the set_attr_* calls."""


@dataclass(eq=False)
class OpHandle:
    """What create_handle fixes ahead of execute_with_handle: the plan, shapes and attributes."""

    plan: _dispatch.Plan
    in_specs: list[Spec]
    attrs: dict[str, Any]
    folded: tuple[int, ...] = ()  # constant inputs turned into attributes (their buffers skip)


def _lookup(handle: int, kind: type[Any]) -> Any:
    """The object behind an acl handle when it is a `kind`, else None."""
    obj = _objects._objects.get(handle)
    return obj if isinstance(obj, kind) else None


def _fail(code: int, api: str, detail: str) -> int:
    return _rt.fail(code, api, detail).code


def _lists(api: str, *values: Any) -> None:
    for i, v in enumerate(values, start=2):
        if not isinstance(v, list):
            raise TypeError(f"argument {i} is not list")


# Specs by (aclDataType, dims, aclFormat): descs repeat across calls, so each is checked once.
_specs: dict[tuple[int, tuple[int, ...], int], Spec] = {}


def _spec(handle: Any, kind: str, i: int) -> Spec:
    d = _objects.tensor_desc(handle) if isinstance(handle, int) else None
    if d is None:
        raise OpError(
            codes.ACL_ERROR_INVALID_PARAM, f"{kind} desc {i} ({handle!r}) is not a tensor desc"
        )
    key = (d.dtype, tuple(d.dims), d.format)
    spec = _specs.get(key)
    if spec is None:
        dt = numerics.by_acl(d.dtype)
        if dt is None:
            raise OpError(
                ACL_ERROR_UNSUPPORTED_DATA_TYPE,
                f"{kind} desc {i}: aclDataType {d.dtype} is not supported",
            )
        if any(x < 0 for x in d.dims):
            raise OpError(
                codes.ACL_ERROR_INVALID_PARAM,
                f"{kind} desc {i}: dynamic dims {d.dims} need concrete sizes",
            )
        if len(_specs) >= 4096:
            _specs.clear()
        spec = _specs[key] = _dispatch.intern(Spec(key[1], dt.np, FORMATS.get(d.format, "ND")))
    return spec


def _spec_list(handles: list[Any], kind: str) -> list[Spec]:
    """`_spec` of each handle; descs seen before cost a dict look-up each."""
    objs, specs, TD = _objects._objects, _specs, _objects.TensorDesc  # noqa: N806
    out: list[Spec] = []
    for h in handles:
        d = objs.get(h) if type(h) is int else None
        spec = specs.get((d.dtype, tuple(d.dims), d.format)) if isinstance(d, TD) else None
        out.append(spec if spec is not None else _spec(h, kind, len(out)))
    return out


def _buffers(handles: Sequence[Any], specs: Sequence[Spec], what: str) -> list[int]:
    if len(handles) != len(specs):
        raise OpError(
            codes.ACL_ERROR_INVALID_PARAM,
            f"{len(specs)} {what} descs but {len(handles)} {what} buffers",
        )
    addrs: list[int] = []
    objs, DB = _objects._objects, _objects.DataBuffer  # noqa: N806
    for h, s in zip(handles, specs, strict=False):  # lengths checked above
        b = objs.get(h) if isinstance(h, int) else None
        if not isinstance(b, DB):
            i = len(addrs)
            raise OpError(codes.ACL_ERROR_INVALID_PARAM, f"{what} buffer {i} is not a data buffer")
        if b.size < s.nbytes:
            raise OpError(
                codes.ACL_ERROR_INVALID_PARAM,
                f"{what} buffer {len(addrs)} holds {b.size} bytes, its desc needs {s.nbytes}",
            )
        addrs.append(b.addr)
    return addrs


def _attrs(handle: int) -> dict[str, Any]:
    if not handle:
        return {}
    a = _lookup(handle, OpAttr)
    if a is None:
        raise OpError(codes.ACL_ERROR_INVALID_PARAM, f"0x{handle:x} is not an op attr")
    return dict(a)


def _const_values(desc_handle: Any, buf_handle: Any, name: str) -> list[Any]:
    """The values of a constant input: its desc's set_tensor_const bytes, else its (small)
    device buffer read on the host, as CANN reads host-side constants before launch."""
    d = _objects.tensor_desc(desc_handle) if isinstance(desc_handle, int) else None
    if d is None:
        raise OpError(codes.ACL_ERROR_INVALID_PARAM, f"{name} desc is not a tensor desc")
    dt = numerics.by_acl(d.dtype)
    if dt is None:
        raise OpError(
            ACL_ERROR_UNSUPPORTED_DATA_TYPE, f"{name}: aclDataType {d.dtype} is not supported"
        )
    count = d.element_count()
    nbytes = count * dt.np.itemsize
    raw = d.const
    if raw is None:
        b = _objects.data_buffer(buf_handle) if isinstance(buf_handle, int) else None
        if b is None or b.size < nbytes:
            raise OpError(
                codes.ACL_ERROR_INVALID_PARAM,
                f"{name} must be a constant (acl.set_tensor_const) or a buffer of {nbytes} bytes",
            )
        try:
            raw = bytes(_rt.memory.view(b.addr, nbytes)) if nbytes else b""
        except ValueError as exc:
            raise OpError(codes.ACL_ERROR_INVALID_PARAM, f"{name}: {exc}") from None
    if len(raw) < nbytes:
        raise OpError(
            codes.ACL_ERROR_INVALID_PARAM, f"{name} constant holds {len(raw)} bytes, needs {nbytes}"
        )
    values: list[Any] = np.frombuffer(raw[:nbytes], dt.np).tolist()
    return values


def _fold_consts(
    d: OpDef, in_descs: list[Any], in_bufs: list[Any] | None, attrs: dict[str, Any]
) -> tuple[list[Any], list[Any] | None, dict[str, Any], tuple[int, ...]]:
    """Constant inputs of `d` become attributes; the remaining descs and buffers."""
    folded = tuple(i for i in d.const_inputs if i < len(in_descs))
    if not folded:
        return in_descs, in_bufs, attrs, ()
    attrs = dict(attrs)
    for i in folded:
        name = d.const_inputs[i]
        buf = in_bufs[i] if in_bufs is not None and i < len(in_bufs) else None
        attrs[name] = _const_values(in_descs[i], buf, f"{d.name} input {i} ({name})")
    keep = [i for i in range(len(in_descs)) if i not in folded]
    bufs = [in_bufs[i] for i in keep if i < len(in_bufs)] if in_bufs is not None else None
    return [in_descs[i] for i in keep], bufs, attrs, folded


def _plan(
    op_type: str, ins: list[Spec], attrs: dict[str, Any], outs: list[Spec] | None
) -> _dispatch.Plan:
    p = _dispatch.plan(op_type, ins, attrs, _rt.profile)
    if outs is not None:
        _dispatch.check_outputs(p, outs)
    return p


def _run(api: str, body: Callable[[], None]) -> int:
    try:
        body()
    except OpError as e:
        return _fail(e.code, api, e.message)
    except AclError as e:  # already reported by the runtime
        return e.code
    return 0


# -- execution -------------------------------------------------------------------------------
_parse_execute = checker("sOOOOkk")


def execute_v2(*args: Any) -> int:
    """execute_v2(op_type, in_descs, in_bufs, out_descs, out_bufs, attr, stream) -> ret"""
    op_type, in_descs, in_bufs, out_descs, out_bufs, attr, stream = _parse_execute(args)
    if not (
        type(in_descs) is list
        and type(in_bufs) is list
        and type(out_descs) is list
        and type(out_bufs) is list
    ):
        _lists("aclopExecuteV2", in_descs, in_bufs, out_descs, out_bufs)
    # The body inline rather than through `_run`: this is the per-op hot path.
    try:
        attrs = _attrs(attr) if attr else {}
        d = REGISTRY.get(op_type)
        if d is not None and d.const_inputs:
            in_descs, in_bufs, attrs, _ = _fold_consts(d, in_descs, in_bufs, attrs)
        ins = _spec_list(in_descs, "input")
        outs = _spec_list(out_descs, "output")
        p = _dispatch.plan(op_type, ins, attrs, _rt.profile)
        if tuple(outs) != p.outputs:  # interned specs: usually an identity test per desc
            _dispatch.check_outputs(p, outs)
        in_addrs = _buffers(in_bufs, ins, "input")
        out_addrs = _buffers(out_bufs, p.outputs, "output")
        # Start the site search at our caller: CPython builds a frame object for each
        # frame the search visits, and ours are never the user's line.
        _dispatch.launch(p, ins, in_addrs, out_addrs, attrs, stream, user_site(2))
    except OpError as e:
        return _fail(e.code, "aclopExecuteV2", e.message)
    except AclError as e:  # already reported by the runtime
        return e.code
    return 0


execute = execute_v2  # aclopExecute: same arguments; output descs are not updated either way


def create_handle(*args: Any) -> tuple[int, int]:
    """create_handle(op_type, in_descs, out_descs, attr) -> (handle, ret)"""
    op_type, in_descs, out_descs, attr = parse("sOOk", args)
    _lists("aclopCreateHandle", in_descs, out_descs)
    made: list[int] = []

    def body() -> None:
        attrs = _attrs(attr)
        descs: list[Any] = in_descs
        folded: tuple[int, ...] = ()
        d = REGISTRY.get(op_type)
        if d is not None and d.const_inputs:
            descs, _, attrs, folded = _fold_consts(d, in_descs, None, attrs)
        ins = _spec_list(descs, "input")
        outs = _spec_list(out_descs, "output")
        plan = _plan(op_type, ins, attrs, outs)
        made.append(_objects.new(OpHandle(plan, ins, attrs, folded)))

    ret = _run("aclopCreateHandle", body)
    return (made[0] if made else 0), ret


def update_params(*args: Any) -> int:
    """update_params(op_type, in_descs, out_descs, attr) -> ret: compiles (here: plans and
    checks) the op for these shapes, as aclopUpdateParams does for dynamic-shape ops."""
    op_type, in_descs, out_descs, attr = parse("sOOk", args)
    _lists("aclopUpdateParams", in_descs, out_descs)

    def body() -> None:
        attrs = _attrs(attr)
        descs = in_descs
        d = REGISTRY.get(op_type)
        if d is not None and d.const_inputs:
            descs, _, attrs, _ = _fold_consts(d, in_descs, None, attrs)
        _plan(op_type, _spec_list(descs, "input"), attrs, _spec_list(out_descs, "output"))

    return _run("aclopUpdateParams", body)


def destroy_handle(*args: Any) -> None:
    (handle,) = parse("k", args)
    if _lookup(handle, OpHandle) is not None:
        _objects.drop(handle)


def execute_with_handle(*args: Any) -> int:
    """execute_with_handle(handle, in_bufs, out_bufs, stream) -> ret"""
    handle, in_bufs, out_bufs, stream = parse("kOOk", args)
    _lists("aclopExecWithHandle", in_bufs, out_bufs)

    def body() -> None:
        h = _lookup(handle, OpHandle)
        if h is None:
            raise OpError(codes.ACL_ERROR_INVALID_PARAM, f"0x{handle:x} is not an op handle")
        bufs = [b for i, b in enumerate(in_bufs) if i not in h.folded] if h.folded else in_bufs
        in_addrs = _buffers(bufs, h.in_specs, "input")
        out_addrs = _buffers(out_bufs, h.plan.outputs, "output")
        _dispatch.launch(h.plan, h.in_specs, in_addrs, out_addrs, h.attrs, stream)

    return _run("aclopExecWithHandle", body)


def cast(*args: Any) -> int:
    """cast(src_desc, src_buf, dst_desc, dst_buf, truncate, stream) -> ret"""
    src_desc, src_buf, dst_desc, dst_buf, _truncate, stream = parse("kkkkik", args)

    def body() -> None:
        d = _objects.tensor_desc(dst_desc)
        if d is None:
            raise OpError(codes.ACL_ERROR_INVALID_PARAM, "dst desc is not a tensor desc")
        attrs = {"dst_type": d.dtype}
        ins, outs = [_spec(src_desc, "src", 0)], [_spec(dst_desc, "dst", 0)]
        p = _plan("Cast", ins, attrs, outs)
        in_addrs = _buffers([src_buf], ins, "input")
        out_addrs = _buffers([dst_buf], p.outputs, "output")
        _dispatch.launch(p, ins, in_addrs, out_addrs, attrs, stream)

    return _run("aclopCast", body)


def infer_shape(*args: Any) -> int:
    """infer_shape(op_type, in_descs, in_bufs, num_out, out_descs, attr) -> ret; fills out_descs."""
    op_type, in_descs, _in_bufs, num_out, out_descs, attr = parse("sOOiOk", args)
    _lists("aclopInferShape", in_descs, _in_bufs)

    def body() -> None:
        ins = [_spec(h, "input", i) for i, h in enumerate(in_descs)]
        outs = _plan(op_type, ins, _attrs(attr), None).outputs
        if not isinstance(out_descs, list) or num_out != len(outs) or len(out_descs) != num_out:
            raise OpError(
                codes.ACL_ERROR_INVALID_PARAM,
                f"{op_type} has {len(outs)} outputs, num_out={num_out}",
            )
        for h, s in zip(out_descs, outs, strict=True):
            d = _objects.tensor_desc(h)
            if d is None:
                raise OpError(codes.ACL_ERROR_INVALID_PARAM, "an output desc is not a tensor desc")
            dt = numerics.by_numpy(s.dtype)
            d.dims = list(s.shape)
            d.dtype = dt.acl if dt is not None else d.dtype

    return _run("aclopInferShape", body)


# -- accepted and ignored: the emulator needs no compiled op models ---------------------------
def set_model_dir(*args: Any) -> int:
    parse("s", args)
    return 0


def load(*args: Any) -> int:
    parse("kk", args)
    return 0


def set_max_op_queue_num(*args: Any) -> int:
    parse("k", args)
    return 0


# -- attributes ------------------------------------------------------------------------------
def create_attr(*args: Any) -> int:
    parse("", args)
    return _objects.new(OpAttr())


def destroy_attr(*args: Any) -> None:
    (attr,) = parse("k", args)
    if _lookup(attr, OpAttr) is not None:
        _objects.drop(attr)


def _setter(api: str, fmt: str, conv: Callable[[Any], Any]) -> Callable[..., int]:
    def set_attr(*args: Any) -> int:
        attr, name, value = parse("ks" + fmt, args)
        a = _lookup(attr, OpAttr)
        if a is None:
            return _fail(codes.ACL_ERROR_INVALID_PARAM, api, f"0x{attr:x} is not an op attr")
        try:
            a[name] = conv(value)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"{api}: bad value for {name!r}: {exc}") from None
        return 0

    set_attr.__name__ = api
    return set_attr


def _list_of(conv: Callable[[Any], Any]) -> Callable[[Any], list[Any]]:
    def convert(value: Any) -> list[Any]:
        if not isinstance(value, list):
            raise TypeError("argument 3 is not list")
        return [conv(v) for v in value]

    return convert


set_attr_bool = _setter("aclopSetAttrBool", "i", lambda v: bool(v))
set_attr_int = _setter("aclopSetAttrInt", "L", int)
set_attr_float = _setter("aclopSetAttrFloat", "f", lambda v: float(np.float32(v)))
set_attr_string = _setter("aclopSetAttrString", "s", str)
set_attr_list_bool = _setter("aclopSetAttrListBool", "O", _list_of(bool))
set_attr_list_int = _setter("aclopSetAttrListInt", "O", _list_of(int))
set_attr_list_float = _setter(
    "aclopSetAttrListFloat", "O", _list_of(lambda v: float(np.float32(v)))
)
set_attr_list_string = _setter("aclopSetAttrListString", "O", _list_of(str))
set_attr_list_list_int = _setter("aclopSetAttrListListInt", "O", _list_of(_list_of(int)))
_set_data_type = _setter("aclopSetAttrDataType", "i", int)
_set_list_data_type = _setter("aclopSetAttrListDataType", "O", _list_of(int))


def set_attr_data_type(*args: Any) -> tuple[int, int]:
    """set_attr_data_type(attr, name, dtype) -> (attr, ret), as pyACL returns it."""
    return args[0] if args else 0, _set_data_type(*args)


def set_attr_list_data_type(*args: Any) -> tuple[int, int]:
    return args[0] if args else 0, _set_list_data_type(*args)
