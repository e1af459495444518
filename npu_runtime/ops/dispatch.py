"""Run a registered op on emulated device memory: infer, price, then launch on a stream.

Both `acl.op.execute_v2` and the `Tensor` API come through `launch()`. Validation
(`prepare`) runs on the host and raises OpError with the code the ACL call returns; the
kernel itself runs inside `submit`'s compute callback, so its failures (an index out of
range, a NaN under the check mode, a buffer too small) are device-side faults that surface
at the next synchronisation with this launch's source line.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from npu_runtime import numerics
from npu_runtime.cost import Cost, estimate
from npu_runtime.errors import AclError
from npu_runtime.ops.errors import (
    ACL_ERROR_OP_OUTPUT_NOT_MATCH,
    ACL_ERROR_RT_AICORE_OVER_FLOW,
    ACL_ERROR_RT_AIVEC_OVER_FLOW,
    OpError,
)
from npu_runtime.ops.registry import OpDef, Spec, get
from npu_runtime.records import TensorInfo, WorkRecord

ACL_ERROR_RT_AICORE_TRAP_READ_OVERFLOW = 507042
ACL_ERROR_RT_AICORE_TRAP_WRITE_OVERFLOW = 507043

_seq = itertools.count(1)


def prepare(
    op_type: str, inputs: Sequence[Spec], attrs: Mapping[str, Any], outputs: Sequence[Spec] | None
) -> tuple[OpDef, list[Spec]]:
    """Look the op up and infer its outputs; check them against `outputs` when given."""
    d = get(op_type)
    inferred = d.infer(inputs, attrs)
    if outputs is not None:
        if len(outputs) != len(inferred):
            raise OpError(
                ACL_ERROR_OP_OUTPUT_NOT_MATCH,
                f"{d.name} produces {len(inferred)} outputs, {len(outputs)} descriptions given",
            )
        for i, (got, want) in enumerate(zip(outputs, inferred, strict=True)):
            if got.shape != want.shape or got.dtype != want.dtype:
                raise OpError(
                    ACL_ERROR_OP_OUTPUT_NOT_MATCH,
                    f"{d.name} output {i} is {list(want.shape)} {want.dtype.name}, the "
                    f"description says {list(got.shape)} {got.dtype.name}",
                )
    return d, inferred


def tensor_info(s: Spec) -> TensorInfo:
    return TensorInfo(s.shape, numerics.msprof_name(s.dtype), s.format)


def _device_views() -> Callable[[int, int], np.ndarray]:
    from npu_runtime.core.memory import device_of
    from npu_runtime.core.runtime import get_runtime

    devices = get_runtime().devices

    def view(addr: int, nbytes: int) -> np.ndarray:
        dev = devices.get(device_of(addr))  # type: ignore[arg-type]
        if dev is None:
            raise ValueError(f"0x{addr:x} is not an address on an open device")
        return dev.memory.view(addr, nbytes)

    return view


def _compute(
    d: OpDef,
    in_specs: Sequence[Spec],
    in_addrs: Sequence[int],
    out_specs: Sequence[Spec],
    out_addrs: Sequence[int],
    attrs: Mapping[str, Any],
) -> Callable[[], None]:
    api = "aclopExecuteV2"

    def compute() -> None:
        view = _device_views()
        arrays = []
        for i, (s, a) in enumerate(zip(in_specs, in_addrs, strict=True)):
            try:
                raw = view(a, s.nbytes) if s.nbytes else np.empty(0, np.uint8)
            except ValueError as exc:
                raise AclError(
                    ACL_ERROR_RT_AICORE_TRAP_READ_OVERFLOW, api, f"{d.name} input {i}: {exc}"
                ) from None
            arrays.append(raw.view(s.dtype).reshape(s.shape))
        try:
            results = d.kernel(arrays, attrs)
        except OpError as exc:
            raise AclError(exc.code, api, f"{d.name}: {exc.message}") from None
        for i, (s, a, r) in enumerate(zip(out_specs, out_addrs, results, strict=True)):
            if not s.nbytes:
                continue
            try:
                dst = view(a, s.nbytes)
            except ValueError as exc:
                raise AclError(
                    ACL_ERROR_RT_AICORE_TRAP_WRITE_OVERFLOW, api, f"{d.name} output {i}: {exc}"
                ) from None
            dst[:] = np.ascontiguousarray(r, dtype=s.dtype).reshape(-1).view(np.uint8)
        if numerics.check_numerics_enabled():
            _check_finite(d, arrays, results, api)

    return compute


def _check_finite(d: OpDef, arrays: list[np.ndarray], results: list[np.ndarray], api: str) -> None:
    """Fault on the first op whose outputs went non-finite while its inputs were finite."""
    bad = numerics.first_nonfinite(results)
    if bad is None or numerics.first_nonfinite(arrays) is not None:
        return
    index, kind = bad
    code = ACL_ERROR_RT_AICORE_OVER_FLOW if d.unit == "cube" else ACL_ERROR_RT_AIVEC_OVER_FLOW
    raise AclError(code, api, f"{d.name} produced {kind} in output {index} from finite inputs")


def price(
    d: OpDef, inputs: Sequence[Spec], outputs: Sequence[Spec], attrs: Mapping[str, Any]
) -> Cost:
    """The op's simulated cost on the runtime's device profile."""
    from npu_runtime.core.runtime import get_runtime

    return estimate(d.cost(inputs, outputs, attrs), get_runtime().profile)


def launch(
    d: OpDef,
    in_specs: Sequence[Spec],
    in_addrs: Sequence[int],
    out_specs: Sequence[Spec],
    out_addrs: Sequence[int],
    attrs: Mapping[str, Any],
    stream: int,
) -> WorkRecord:
    """Queue op `d` (already prepared) on `stream`; returns the WorkRecord submit emits."""
    from npu_runtime.core.launch import submit

    return submit(
        stream,
        kind="op",
        name=f"{d.name}_{next(_seq)}",
        op_type=d.name,
        cost=price(d, in_specs, out_specs, attrs),
        inputs=tuple(map(tensor_info, in_specs)),
        outputs=tuple(map(tensor_info, out_specs)),
        compute=_compute(d, in_specs, in_addrs, out_specs, out_addrs, attrs),
    )
