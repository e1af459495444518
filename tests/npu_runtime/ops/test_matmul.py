"""MatMul and BatchMatMul against float64, with the Cube's float32 accumulation."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import mutually_broadcastable_shapes
from ops_testing import BF16, check_op, expect_code, rand, run_op, spec

from npu_runtime.ops.errors import ACL_ERROR_OP_INPUT_NOT_MATCH, ACL_ERROR_UNSUPPORTED_DATA_TYPE


@pytest.mark.parametrize("dtype", [np.float32, np.float16, BF16])
@pytest.mark.parametrize("ta", [False, True])
@pytest.mark.parametrize("tb", [False, True])
def test_matmul_matches_float64(dtype, ta: bool, tb: bool) -> None:
    rng = np.random.default_rng(2)
    a = rand(rng, (20, 37) if ta else (37, 20), dtype)
    b = rand(rng, (48, 20) if tb else (20, 48), dtype)
    ref = lambda x, y: (x.T if ta else x) @ (y.T if tb else y)  # noqa: E731
    check_op(
        "MatMul",
        [a, b],
        ref,
        {"transpose_x1": ta, "transpose_x2": tb},
        atol=2e-2 if dtype == BF16 else None,
    )


def test_matmul_with_bias() -> None:
    rng = np.random.default_rng(3)
    a, b, c = rand(rng, (5, 7)), rand(rng, (7, 3)), rand(rng, (3,))
    check_op("MatMul", [a, b, c], lambda x, y, z: x @ y + z)


def test_fp16_matmul_accumulates_in_float32() -> None:
    # Summing 4096 ones in fp16 would stop at 2048 (2048 + 1 rounds back to 2048);
    # the Cube accumulates in float32 and rounds once, so the answer is exact.
    a = np.ones((1, 4096), np.float16)
    b = np.ones((4096, 1), np.float16)
    (out,) = run_op("MatMul", [a, b])
    assert out.dtype == np.float16 and out[0, 0] == 4096


def test_bf16_matmul_accumulates_in_float32() -> None:
    # bf16 has 8 significant bits: a running bf16 sum of ones stalls at 256.
    a = np.ones((1, 1024), BF16)
    (out,) = run_op("MatMul", [a, a.T.copy()])
    assert out.dtype == BF16 and out.astype(np.float32)[0, 0] == 1024


def test_fp16_matmul_overflows_to_inf_at_the_output() -> None:
    a = np.full((1, 4), 200.0, np.float16)
    (out,) = run_op("MatMul", [a, a.T.copy()])  # 4 * 40000 > 65504
    assert np.isposinf(out[0, 0])


def test_int8_matmul_writes_int32() -> None:
    a = np.full((2, 64), 127, np.int8)
    (out,) = run_op("MatMul", [a, a.T.copy()])
    assert out.dtype == np.int32 and out[0, 0] == 64 * 127 * 127


@settings(max_examples=30, deadline=None)
@given(
    batch=mutually_broadcastable_shapes(num_shapes=2, max_dims=2, max_side=3),
    m=st.integers(1, 9),
    k=st.integers(1, 9),
    n=st.integers(1, 9),
)
def test_batch_matmul_broadcasts_batch_dims(batch, m: int, k: int, n: int) -> None:
    rng = np.random.default_rng(4)
    a = rand(rng, (*batch.input_shapes[0], m, k))
    b = rand(rng, (*batch.input_shapes[1], k, n))
    (out,) = check_op("BatchMatMul", [a, b], np.matmul)
    assert out.shape == (*batch.result_shape, m, n)


def test_batch_matmul_adjoint_flags() -> None:
    rng = np.random.default_rng(5)
    a, b = rand(rng, (3, 6, 4), np.float16), rand(rng, (3, 5, 6), np.float16)
    ref = lambda x, y: np.swapaxes(x, -1, -2) @ np.swapaxes(y, -1, -2)  # noqa: E731
    check_op("BatchMatMul", [a, b], ref, {"adj_x1": True, "adj_x2": True})


def test_bad_matmuls_give_the_acl_codes() -> None:
    err = expect_code(ACL_ERROR_OP_INPUT_NOT_MATCH, "MatMul", [spec([4, 5]), spec([6, 7])])
    assert "K=5" in err.message and "K=6" in err.message
    expect_code(ACL_ERROR_OP_INPUT_NOT_MATCH, "MatMul", [spec([4, 5, 1]), spec([5, 7])])
    expect_code(ACL_ERROR_OP_INPUT_NOT_MATCH, "MatMul", [spec([4, 5], np.float16), spec([5, 7])])
    expect_code(ACL_ERROR_UNSUPPORTED_DATA_TYPE, "MatMul", [spec([4, 5], np.int32)] * 2)
    expect_code(ACL_ERROR_OP_INPUT_NOT_MATCH, "MatMul", [spec([4, 5]), spec([5, 7]), spec([6])])
    expect_code(ACL_ERROR_OP_INPUT_NOT_MATCH, "BatchMatMul", [spec([2, 4, 5]), spec([3, 5, 7])])
    expect_code(ACL_ERROR_OP_INPUT_NOT_MATCH, "BatchMatMul", [spec([5]), spec([5, 7])])
