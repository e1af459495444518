"""Run a registered op on emulated device memory: infer, price, then launch on a stream.

Both `acl.op.execute_v2` and the `Tensor` API come through `launch()`. Validation
(`plan`) runs on the host and raises OpError with the code the ACL call returns; the
kernel itself runs inside `submit`'s compute callback, so its failures (an index out of
range, a NaN under the check mode, a buffer too small) are device-side faults that surface
at the next synchronisation with this launch's source line.
"""

from __future__ import annotations

import itertools
import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from npu_runtime import numerics
from npu_runtime.core import hooks
from npu_runtime.core.launch import Cost as LaunchCost
from npu_runtime.core.launch import submit_positional
from npu_runtime.core.memory import Block, DeviceMemory, device_of
from npu_runtime.core.runtime import get_runtime
from npu_runtime.cost import estimate
from npu_runtime.devices import DeviceProfile
from npu_runtime.errors import AclError
from npu_runtime.ops.errors import (
    ACL_ERROR_OP_OUTPUT_NOT_MATCH,
    ACL_ERROR_RT_AICORE_OVER_FLOW,
    ACL_ERROR_RT_AICORE_TRAP_READ_OVERFLOW,
    ACL_ERROR_RT_AICORE_TRAP_WRITE_OVERFLOW,
    ACL_ERROR_RT_AIVEC_OVER_FLOW,
    OpError,
)
from npu_runtime.ops.registry import OpDef, Spec, get
from npu_runtime.records import SourceSite, TensorInfo, WorkRecord

_seq = itertools.count(1)
_rt = get_runtime()  # always the same object (reset() clears it in place)


@dataclass(frozen=True, slots=True)
class Plan:
    """An op resolved for one set of input specs and attributes: what `launch` needs."""

    op: OpDef
    outputs: tuple[Spec, ...]
    cost: LaunchCost
    in_infos: tuple[TensorInfo, ...]
    out_infos: tuple[TensorInfo, ...]
    # The outputs as the Tensor API describes its results ("ND", int dims, a device dtype),
    # or None when an output needs the general path (and its checks).
    nd_outputs: tuple[Spec, ...] | None = None


# Plans by (op type, input specs, attributes, device profile): a training loop repeats the
# same shapes, so inference and pricing run once per shape, as CANN compiles an op once.
_plans: dict[tuple[Any, ...], Plan] = {}
_MAX_PLANS = 4096

# Equal specs as one object: tuples of interned specs compare by identity (a C pointer
# test) instead of calling the dataclass __eq__ per element on every cache hit.
_interned: dict[Spec, Spec] = {}


def intern(s: Spec) -> Spec:
    """The canonical Spec equal to `s`."""
    got = _interned.get(s)
    if got is None:
        if len(_interned) >= 4 * _MAX_PLANS:
            _interned.clear()
        got = _interned[s] = s
    return got


def _freeze(v: Any) -> Any:
    if isinstance(v, (list, tuple)):
        return tuple(_freeze(x) for x in v)
    return v


def plan(
    op_type: str, inputs: Sequence[Spec], attrs: Mapping[str, Any], profile: DeviceProfile
) -> Plan:
    """The (cached) plan for running `op_type` on `inputs`; OpError for bad input."""
    key = (
        op_type,
        tuple(inputs),
        tuple(sorted((k, _freeze(v)) for k, v in attrs.items())) if attrs else (),
        profile.name,
    )
    p = _plans.get(key)
    if p is None:
        d = get(op_type)
        inferred = d.infer(inputs, attrs)
        c = estimate(d.cost(inputs, inferred, attrs), profile)
        outs = tuple(map(intern, inferred))
        nd = all(
            s.format == "ND"
            and all(type(x) is int for x in s.shape)
            and numerics.by_numpy(s.dtype) is not None
            for s in outs
        )
        p = Plan(
            d,
            outs,
            LaunchCost(
                c.duration_us, c.bound, c.unit, c.block_dim, c.time_by_unit, c.bytes_moved, c.flops
            ),
            tuple(map(tensor_info, inputs)),
            tuple(map(tensor_info, outs)),
            outs if nd else None,
        )
        if len(_plans) >= _MAX_PLANS:
            _plans.clear()
        # Stored with interned specs, so later look-ups with interned specs hit by identity.
        _plans[(key[0], tuple(map(intern, key[1]))) + tuple(key[2:])] = p
    return p


def check_outputs(p: Plan, outputs: Sequence[Spec]) -> None:
    """OP_OUTPUT_NOT_MATCH unless the caller's output descs are what the op produces."""
    if tuple(outputs) == p.outputs:  # the usual case: descs exactly as inferred
        return
    name = p.op.name
    if len(outputs) != len(p.outputs):
        raise OpError(
            ACL_ERROR_OP_OUTPUT_NOT_MATCH,
            f"{name} produces {len(p.outputs)} outputs, {len(outputs)} descriptions given",
        )
    for i, (got, want) in enumerate(zip(outputs, p.outputs, strict=True)):
        if got.shape != want.shape or got.dtype != want.dtype:
            raise OpError(
                ACL_ERROR_OP_OUTPUT_NOT_MATCH,
                f"{name} output {i} is {list(want.shape)} {want.dtype.name}, the "
                f"description says {list(got.shape)} {got.dtype.name}",
            )


def tensor_info(s: Spec) -> TensorInfo:
    return TensorInfo(s.shape, numerics.msprof_name(s.dtype), s.format)


# Per device memory: its backing mapping and the kernel views made over it, so a buffer
# seen before costs one dict look-up rather than an ndarray constructor (about half a
# microsecond, as much as a tiny numpy op). Views are only windows: whether the range is
# live is checked on every launch. Keyed by id() (a WeakKeyDictionary look-up builds a
# weakref every time); the entry is dropped when the DeviceMemory dies, so neither the
# mapping leaks nor an id is reused.
_backing: dict[int, tuple[Any, dict[tuple[int, tuple[int, ...], np.dtype], np.ndarray]]] = {}
_MAX_VIEWS = 4096
_READ, _WRITE = ACL_ERROR_RT_AICORE_TRAP_READ_OVERFLOW, ACL_ERROR_RT_AICORE_TRAP_WRITE_OVERFLOW


def _fault(code: int, d: OpDef, i: int, why: str) -> AclError:
    kind = "input" if code == _READ else "output"
    return AclError(code, "aclopExecuteV2", f"{d.name} {kind} {i}: {why}")


def _arrays(
    devices: Mapping[int, Any],
    groups: tuple[tuple[int, Sequence[Spec], Sequence[int]], ...],
    d: OpDef,
) -> list[list[np.ndarray]]:
    """For each (fault code, specs, addrs) group, arrays shaped by `specs` over device
    memory at `addrs`; a device fault (with the group's code) for any that is not live
    device memory. One pass over inputs and outputs, so the usual single-device op looks
    its device up once."""
    out: list[list[np.ndarray]] = []
    mem: DeviceMemory | None = None
    buf: Any = None
    views: dict[tuple[int, tuple[int, ...], np.dtype], np.ndarray] = {}
    base = end = 0
    for code, specs, addrs in groups:
        arrays: list[np.ndarray] = []
        out.append(arrays)
        for s, addr in zip(specs, addrs, strict=True):
            n = s.nbytes
            if not n:
                arrays.append(np.empty(s.shape, s.dtype))
                continue
            if not base <= addr < end:
                dev = devices.get(device_of(addr))  # type: ignore[arg-type]
                if dev is None:
                    raise _fault(code, d, len(arrays), f"0x{addr:x} is not on an open device")
                mem = dev.memory
                base, end = mem.base, mem.base + mem.capacity
                entry = _backing.get(id(mem))
                if entry is None:
                    entry = _backing[id(mem)] = (mem._backing(), {})
                    weakref.finalize(mem, _backing.pop, id(mem), None)
                    # cached launch arrays are views of this mapping: let it go with the device
                    weakref.finalize(mem, _launch_views.clear)
                buf, views = entry
            assert mem is not None
            # A buffer at the start of a live block (the usual case) is one dict look-up;
            # any other address takes check_range's locked search and its message.
            b = mem.live.get(addr)
            if b is None or n > b.reserved:
                try:
                    mem.check_range(addr, n)  # ValueError outside live allocations
                except ValueError as exc:
                    raise _fault(code, d, len(arrays), str(exc)) from None
            key = (addr, s.shape, s.dtype)
            v = views.get(key)
            if v is None:
                if len(views) >= _MAX_VIEWS:
                    views.clear()
                v = views[key] = np.ndarray(s.shape, s.dtype, buf, addr - base)
            arrays.append(v)
    return out


# A launch repeated on the same buffers (a training loop, a Tensor result block the
# caching allocator hands out again) reuses its kernel arrays: keyed by (id(plan), addrs),
# valid while every buffer is still the live block it was (Block identity: a block freed
# and allocated again, even at the same address, is a new object unless the Tensor cache
# hands back the same one, whose range is unchanged). The entry keeps the plan, so its id
# is not reused while the entry lives.
_launch_views: dict[
    tuple[int, ...],
    tuple[Plan, int, tuple[Block, ...], tuple[np.ndarray, ...], tuple[np.ndarray, ...]],
] = {}
_MAX_LAUNCHES = 4096


def _still_live(device_id: int, blocks: tuple[Block, ...]) -> bool:
    dev = _rt.devices.get(device_id)
    if dev is None:
        return False
    live = dev.memory.live
    for b in blocks:  # noqa: SIM110 (a loop is cheaper than all() over a generator)
        if live.get(b.addr) is not b:
            return False
    return True


def _remember(
    key: tuple[int, ...],
    p: Plan,
    addrs: tuple[int, ...],
    arrays: list[np.ndarray],
    outs: list[np.ndarray],
) -> None:
    """Cache this launch's arrays when every buffer starts a live block of one device."""
    if not addrs:
        return
    dev = _rt.devices.get(device_of(addrs[0]))  # type: ignore[arg-type]
    if dev is None:
        return
    mem = dev.memory
    found = tuple(map(mem.live.get, addrs))
    blocks = tuple(b for b in found if b is not None)
    if len(blocks) != len(found):  # an offset into a block, or another device: full checks
        return
    if len(_launch_views) >= _MAX_LAUNCHES:
        _launch_views.clear()
    _launch_views[key] = (p, dev.id, blocks, tuple(arrays), tuple(outs))


def _compute(
    p: Plan,
    in_specs: Sequence[Spec],
    in_addrs: Sequence[int],
    out_specs: Sequence[Spec],
    out_addrs: Sequence[int],
    attrs: Mapping[str, Any],
) -> Callable[[], None]:
    d = p.op

    def compute() -> None:
        key = (id(p), *in_addrs, *out_addrs)
        hit = _launch_views.get(key)
        if hit is not None and hit[0] is p and _still_live(hit[1], hit[2]):
            arrays, outs = list(hit[3]), list(hit[4])  # fresh lists: kernels own theirs
        else:
            arrays, outs = _arrays(
                _rt.devices, ((_READ, in_specs, in_addrs), (_WRITE, out_specs, out_addrs)), d
            )
            _remember(key, p, (*in_addrs, *out_addrs), arrays, outs)
        try:
            # a writes_out kernel may put its results straight into device memory
            results = (
                d.kernel(arrays, attrs, out=outs)  # type: ignore[call-arg]
                if d.writes_out
                else d.kernel(arrays, attrs)
            )
        except OpError as exc:
            raise AclError(exc.code, "aclopExecuteV2", f"{d.name}: {exc.message}") from None
        for out, r in zip(outs, results, strict=True):
            if r is out:
                continue
            if type(r) is np.ndarray and r.dtype is out.dtype:
                out[...] = r  # same as copyto here, without its dispatch wrapper
            else:
                np.copyto(out, r, casting="unsafe")
        if hooks.tensor_listeners:  # precision dumps: the values as stored on the device
            hooks.emit_tensors(d.name, arrays, outs, attrs)
        if numerics._check:
            _check_finite(d, arrays, results, "aclopExecuteV2")

    return compute


def _check_finite(d: OpDef, arrays: list[np.ndarray], results: list[np.ndarray], api: str) -> None:
    """Fault on the first op whose outputs went non-finite while its inputs were finite."""
    bad = numerics.first_nonfinite(results)
    if bad is None or numerics.first_nonfinite(arrays) is not None:
        return
    index, kind = bad
    code = ACL_ERROR_RT_AICORE_OVER_FLOW if d.unit == "cube" else ACL_ERROR_RT_AIVEC_OVER_FLOW
    raise AclError(code, api, f"{d.name} produced {kind} in output {index} from finite inputs")


def launch(
    p: Plan,
    in_specs: Sequence[Spec],
    in_addrs: Sequence[int],
    out_addrs: Sequence[int],
    attrs: Mapping[str, Any],
    stream: int,
    site: SourceSite | None = None,
) -> WorkRecord:
    """Queue planned op `p` on `stream`; returns the WorkRecord submit emits.

    `site` is the user line launching it, when the caller found it already (else submit
    looks it up)."""
    d = p.op
    return submit_positional(
        stream,
        "op",
        f"{d.name}_{next(_seq)}",
        d.name,
        p.cost,
        p.in_infos,
        p.out_infos,
        _compute(p, in_specs, in_addrs, p.outputs, out_addrs, attrs),
        "aclopExecuteV2",
        site,
    )
