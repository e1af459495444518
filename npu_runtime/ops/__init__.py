"""The op registry, filled at import by one module per op family.

Public: `get(op_type)`, `ops()`, `REGISTRY`, `Spec`, `Work`, `OpError`, and `run` /
`launch` from npu_runtime.ops.dispatch.
"""

from __future__ import annotations

from npu_runtime.ops import (  # noqa: F401  (imported for their registrations)
    attention,
    conv,
    elementwise,
    matmul,
    norm,
    pool,
    reduce,
    select,
    shape,
    softmax,
)
from npu_runtime.ops.errors import OpError
from npu_runtime.ops.registry import REGISTRY, Matmul, OpDef, Spec, Work, get, ops

__all__ = ["REGISTRY", "Matmul", "OpDef", "OpError", "Spec", "Work", "get", "ops"]
