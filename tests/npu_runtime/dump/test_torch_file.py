"""`.pt` files written without torch: every device dtype round-trips through the format."""

from __future__ import annotations

from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

from npu_runtime.dump.names import torch_dtype
from npu_runtime.dump.torch_file import save

from .pt_reader import load_pt

VALUES = np.array([[0, 1, 2], [3, 4, 5]])
CASES = [
    (np.float16, "HalfStorage"), (ml_dtypes.bfloat16, "BFloat16Storage"),
    (np.float32, "FloatStorage"), (np.float64, "DoubleStorage"), (np.bool_, "BoolStorage"),
    (np.int8, "CharStorage"), (np.uint8, "ByteStorage"), (np.int16, "ShortStorage"),
    (np.int32, "IntStorage"), (np.int64, "LongStorage"), (np.uint16, "LongStorage"),
]  # fmt: skip


@pytest.mark.parametrize(("dtype", "storage"), CASES)
def test_round_trip(tmp_path: Path, dtype: type, storage: str) -> None:
    a = VALUES.astype(dtype)
    save(a, tmp_path / "t.pt")
    got_storage, got = load_pt(tmp_path / "t.pt")
    assert got_storage == storage
    assert got.shape == (2, 3)
    np.testing.assert_array_equal(got.astype(np.float64), a.astype(np.float64))


def test_scalars_empty_and_non_contiguous_tensors(tmp_path: Path) -> None:
    for a in (np.float32(7.5).reshape(()), np.zeros((0, 4), np.float16), VALUES.T.astype(np.int32)):
        save(a, tmp_path / "t.pt")
        _, got = load_pt(tmp_path / "t.pt")
        np.testing.assert_array_equal(got, a)


def test_a_type_torch_lacks_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="no torch dtype for numpy complex64"):
        torch_dtype(np.dtype(np.complex64))
