"""One-line op checks: run an op's infer + kernel and compare with a float64 reference."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pytest

from npu_runtime import numerics
from npu_runtime.ops import OpError, Spec, get

BF16 = numerics.BFLOAT16
# Output tolerances by dtype: one rounding at the output plus float32 internals.
TOL = {
    np.dtype(np.float64): (1e-12, 1e-12),
    np.dtype(np.float32): (1e-5, 1e-5),
    np.dtype(np.float16): (2e-3, 2e-3),
    BF16: (1.6e-2, 1.6e-2),
}


def run_op(op_type: str, inputs: Sequence[np.ndarray], attrs: Mapping[str, Any] | None = None):
    """Infer, then run the kernel; checks the kernel agrees with its own shape rule."""
    attrs = dict(attrs or {})
    d = get(op_type)
    specs = d.infer([Spec.of(a) for a in inputs], attrs)
    outs = d.kernel([np.asarray(a) for a in inputs], attrs)
    assert len(outs) == len(specs)
    for s, o in zip(specs, outs, strict=True):
        assert (tuple(o.shape), o.dtype) == (s.shape, s.dtype), (op_type, s, o.shape, o.dtype)
    return outs


def check_op(
    op_type: str,
    inputs: Sequence[np.ndarray],
    reference: Callable[..., Any],
    attrs: Mapping[str, Any] | None = None,
    atol: float | None = None,
    rtol: float | None = None,
) -> list[np.ndarray]:
    """Compare op output(s) with `reference(*inputs as float64)` within the dtype tolerance."""
    outs = run_op(op_type, inputs, attrs)
    f64 = [np.asarray(a).astype(np.float64) if _floaty(a) else np.asarray(a) for a in inputs]
    want = reference(*f64)
    want = list(want) if isinstance(want, (list, tuple)) else [want]
    for got, exp in zip(outs, want, strict=False):
        a, r = TOL.get(got.dtype, (0, 0))
        np.testing.assert_allclose(
            got.astype(np.float64),
            np.asarray(exp, np.float64),
            atol=a if atol is None else atol,
            rtol=r if rtol is None else rtol,
        )
    return outs


def _floaty(a: Any) -> bool:
    return np.asarray(a).dtype.kind == "f" or np.asarray(a).dtype == BF16


def expect_code(
    code: int, op_type: str, specs: Sequence[Spec], attrs: Mapping[str, Any] | None = None
):
    """Infer must refuse these inputs with exactly `code`."""
    with pytest.raises(OpError) as info:
        get(op_type).infer(list(specs), dict(attrs or {}))
    assert info.value.code == code, str(info.value)
    return info.value


def spec(shape: Sequence[int], dtype: Any = np.float32) -> Spec:
    return Spec(tuple(shape), np.dtype(dtype))


def rand(
    rng: np.random.Generator, shape: Sequence[int], dtype: Any = np.float32, scale: float = 1.0
):
    return (rng.standard_normal(shape) * scale).astype(dtype)
