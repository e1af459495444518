"""The op registry: one entry per op type, each with its four rules.

An op is registered once, by decorating its numpy kernel:

    @op("Relu", unit="vector", infer=same_as_input, cost=elementwise_work(1))
    def relu(inputs, attrs): ...

- ``infer(inputs, attrs) -> outputs``: shapes and dtypes only (no data), or ``OpError``
  with the ACL code pyACL returns for that input. Runs before any work is queued.
- ``kernel(inputs, attrs) -> outputs``: numpy at NPU numerics (see npu_runtime.numerics).
- ``cost(inputs, outputs, attrs) -> Work``: how much Cube, Vector and memory work the op
  does; npu_runtime.cost turns that into a simulated duration for a device profile.
- ``unit``: where it runs ("cube", "vector", "aicpu").

`acl.op.execute_v2` and the `Tensor` API both look ops up here; nothing else lists ops.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from npu_runtime.ops.errors import ACL_ERROR_OP_NOT_FOUND, OpError

OpUnit = Literal["cube", "vector", "aicpu"]
Attrs = Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class Spec:
    """Shape, dtype and format of one tensor, without data (what `infer` sees)."""

    shape: tuple[int, ...]
    dtype: np.dtype
    format: str = "ND"
    # stored, not computed: dispatch reads it for every buffer of every launch
    nbytes: int = field(init=False, compare=False, repr=False)
    _hash: int = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "nbytes", math.prod(self.shape) * self.dtype.itemsize)
        object.__setattr__(self, "_hash", hash((self.shape, self.dtype, self.format)))

    def __hash__(self) -> int:  # specs key the plan cache: hash once, not per launch
        return self._hash

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @classmethod
    def of(cls, a: np.ndarray, format: str = "ND") -> Spec:
        return cls(tuple(a.shape), a.dtype, format)


@dataclass(frozen=True, slots=True)
class Matmul:
    """One batch of matrix products the Cube unit computes: batch x (M x K) @ (K x N)."""

    batch: int
    m: int
    n: int
    k: int


@dataclass(frozen=True, slots=True)
class Work:
    """What an op costs, in hardware-neutral quantities (the cost model prices them).

    ``vector_ops`` counts element operations (one add of one element = 1); ``flops`` is
    the useful arithmetic reported in the profile (no padding).
    """

    unit: OpUnit
    dtype: np.dtype
    bytes_moved: int
    matmuls: tuple[Matmul, ...] = ()
    vector_ops: int = 0
    flops: int = 0


InferFn = Callable[[Sequence[Spec], Attrs], list[Spec]]
KernelFn = Callable[[list[np.ndarray], Attrs], list[np.ndarray]]
CostFn = Callable[[Sequence[Spec], Sequence[Spec], Attrs], Work]


@dataclass(frozen=True, slots=True)
class OpDef:
    """A registered op: its name, unit, rules and user-facing documentation."""

    name: str
    unit: OpUnit
    infer: InferFn
    kernel: KernelFn
    cost: CostFn
    doc: str
    attrs: Mapping[str, str] = field(default_factory=dict)  # attr name -> "type = default"
    inputs: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()
    # The kernel takes `out=` (destination arrays in device memory) and may write there
    # directly, saving a temporary and a copy on large outputs.
    writes_out: bool = False
    # Inputs CANN wants as constants (a tensor desc with set_tensor_const, or a small device
    # tensor read on the host): input index -> the attribute they become, so `Slice`'s
    # offsets input is `SliceD`'s offsets attribute.
    const_inputs: Mapping[int, str] = field(default_factory=dict)


REGISTRY: dict[str, OpDef] = {}


def op(
    name: str,
    *,
    unit: OpUnit,
    infer: InferFn,
    cost: CostFn,
    inputs: Sequence[str],
    attrs: Mapping[str, str] | None = None,
    aliases: Sequence[str] = (),
    writes_out: bool = False,
    const_inputs: Mapping[int, str] | None = None,
) -> Callable[[KernelFn], KernelFn]:
    """Register the decorated numpy kernel as op `name` (and its `aliases`)."""

    def register(kernel: KernelFn) -> KernelFn:
        for rule, fn in (("infer", infer), ("kernel", kernel), ("cost", cost)):
            if not callable(fn):
                raise TypeError(f"op {name!r}: rule {rule!r} is not callable")
        if unit not in ("cube", "vector", "aicpu"):
            raise ValueError(f"op {name!r}: unknown unit {unit!r}")
        doc = (kernel.__doc__ or "").strip()
        if not doc:
            raise ValueError(f"op {name!r}: the kernel needs a docstring (it is published)")
        d = OpDef(
            name,
            unit,
            infer,
            kernel,
            cost,
            doc,
            dict(attrs or {}),
            tuple(inputs),
            tuple(aliases),
            writes_out,
            dict(const_inputs or {}),
        )
        keys = (name, *aliases)
        taken = [k for k in keys if k in REGISTRY]
        if taken or len(set(keys)) != len(keys):
            raise ValueError(f"op {(taken or [name])[0]!r} is registered twice")
        for key in keys:
            REGISTRY[key] = d
        return kernel

    return register


def get(op_type: str) -> OpDef:
    """The op registered as `op_type`; OpError(ACL_ERROR_OP_NOT_FOUND) when there is none."""
    d = REGISTRY.get(op_type)
    if d is None:
        raise OpError(ACL_ERROR_OP_NOT_FOUND, f"no op named {op_type!r} is registered")
    return d


def ops() -> list[OpDef]:
    """Every registered op once (aliases folded), sorted by name."""
    seen = {id(d): d for d in REGISTRY.values()}
    return sorted(seen.values(), key=lambda d: d.name)
