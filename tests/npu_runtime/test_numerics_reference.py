"""Reference numerics: the same Tensor script at float32 or float64, to compare against NPU numerics."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

from npu_runtime import Tensor, numerics
from npu_runtime.core.runtime import get_runtime
from npu_runtime.tensor import softmax


@pytest.fixture(autouse=True)
def restore_mode() -> Iterator[None]:
    get_runtime().reset()
    previous = numerics.numerics_mode()
    yield
    numerics.set_numerics(previous)
    get_runtime().reset()


F16, BF16, F32, F64 = (
    np.dtype(np.float16),
    numerics.BFLOAT16,
    np.dtype(np.float32),
    np.dtype(np.float64),
)
I32 = np.dtype(np.int32)


@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        ("npu", (F16, BF16, F32, I32)),
        ("float32", (F32, F32, F32, I32)),
        ("float64", (F64, F64, F64, I32)),
    ],
)
def test_storage_dtype_per_mode(mode: str, expected: tuple[np.dtype, ...]) -> None:
    numerics.set_numerics(mode)
    assert tuple(numerics.storage_dtype(d) for d in (F16, BF16, F32, I32)) == expected


def test_float32_mode_stores_half_tensors_as_float32_and_does_not_overflow() -> None:
    assert numerics.set_numerics("float32") == "npu"
    x = Tensor(np.full((2, 2), 300.0), dtype="float16")
    assert x.dtype == F32
    assert (x * x).numpy().max() == 90000.0
    numerics.set_numerics("npu")
    y = Tensor(np.full((2, 2), 300.0), dtype="float16")
    assert y.dtype == F16
    assert np.isinf((y * y).numpy()).all()


def test_float64_mode_runs_float_ops_in_float64() -> None:
    numerics.set_numerics("float64")
    rng = np.random.default_rng(0)
    a = rng.standard_normal((8, 16))
    b = rng.standard_normal((16, 4))
    got = (Tensor(a, dtype="float16") @ Tensor(b, dtype="float16")).numpy()
    assert got.dtype == F64
    # Inputs enter as declared (float16), so both runs start from the same values.
    a16, b16 = (m.astype(np.float16).astype(np.float64) for m in (a, b))
    np.testing.assert_allclose(got, a16 @ b16, rtol=1e-12)
    s = softmax(Tensor(a)).numpy()
    np.testing.assert_allclose(s.sum(axis=-1), 1.0, rtol=1e-12)


def test_reference_tensors_remember_the_declared_dtype() -> None:
    numerics.set_numerics("float32")
    x = Tensor(np.ones((2, 2)), dtype="float16")
    y = (x + 1.0).astype("bfloat16")
    assert (x.dtype, x.declared) == (F32, F16)
    assert (y.dtype, y.declared) == (F32, BF16)
    assert (x @ x).declared == F16


def test_npu_mode_still_rejects_float64_ops() -> None:
    with pytest.raises(Exception, match="float64"):
        Tensor(np.ones((2, 2))).astype("float64") @ Tensor(np.ones((2, 2)))


def test_unknown_mode_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="'half'.*npu, float32, float64"):
        numerics.set_numerics("half")
