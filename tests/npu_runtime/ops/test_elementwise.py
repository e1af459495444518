"""Element-wise ops against float64 formulas, broadcasting by hypothesis, NPU edge numerics."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import mutually_broadcastable_shapes
from ops_testing import BF16, check_op, expect_code, rand, run_op, spec

from npu_runtime.ops.errors import (
    ACL_ERROR_OP_ATTR_NOT_MATCH,
    ACL_ERROR_OP_INPUT_NOT_MATCH,
    ACL_ERROR_UNSUPPORTED_DATA_TYPE,
)

BINARY = {"Add": np.add, "Sub": np.subtract, "Mul": np.multiply, "Div": np.divide}
FLOAT_TYPES = [np.float32, np.float16, BF16]


@settings(max_examples=40, deadline=None)
@given(
    shapes=mutually_broadcastable_shapes(num_shapes=2, max_dims=4, max_side=5),
    name=st.sampled_from(sorted(BINARY)),
    dtype=st.sampled_from(FLOAT_TYPES),
)
def test_binary_broadcasts_like_numpy(shapes, name, dtype) -> None:
    rng = np.random.default_rng(0)
    x = rand(rng, shapes.input_shapes[0], dtype)
    y = rand(rng, shapes.input_shapes[1], dtype)
    if name == "Div":
        y = (np.abs(y.astype(np.float32)) + 0.5).astype(dtype)
    (out,) = check_op(name, [x, y], BINARY[name])
    assert out.shape == shapes.result_shape


def test_int32_add_wraps_like_the_device() -> None:
    x = np.array([2**31 - 1, 5], np.int32)
    (out,) = run_op("Add", [x, np.array([1, 2], np.int32)])
    assert out.tolist() == [-(2**31), 7]


ACTIVATIONS = {
    "Relu": lambda x: np.maximum(x, 0),
    "Sigmoid": lambda x: 1 / (1 + np.exp(-x)),
    "Tanh": np.tanh,
    "Silu": lambda x: x / (1 + np.exp(-x)),
    "Gelu": lambda x: 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3))),
}


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
@pytest.mark.parametrize("dtype", FLOAT_TYPES)
def test_activation_matches_float64_formula(name: str, dtype) -> None:
    x = rand(np.random.default_rng(1), (7, 33), dtype, scale=3)
    check_op(name, [x], ACTIVATIONS[name])


def test_sigmoid_saturates_without_overflow() -> None:
    (out,) = run_op("Sigmoid", [np.array([-1000.0, 1000.0], np.float32)])
    assert out.tolist() == [0.0, 1.0]


def test_float16_overflows_to_inf_and_underflows_to_zero() -> None:
    big = np.array([60000.0, -60000.0], np.float16)
    (s,) = run_op("Add", [big, big])
    assert np.isposinf(s[0]) and np.isneginf(s[1])
    tiny = np.array([1e-4], np.float16)
    (p,) = run_op("Mul", [tiny, tiny])  # 1e-8 is below fp16's smallest subnormal (6e-8)
    assert p[0] == 0.0
    (q,) = run_op("Div", [np.array([1.0, 0.0], np.float16), np.zeros(2, np.float16)])
    assert np.isposinf(q[0]) and np.isnan(q[1])


def test_float16_rounds_once_not_per_step() -> None:
    # Gelu on fp16 computes in float32 and rounds once: the result is the correctly
    # rounded fp16 of the float32 formula.
    x = np.linspace(-4, 4, 101).astype(np.float16)
    (out,) = run_op("Gelu", [x])
    xf = x.astype(np.float32)
    want = 0.5 * xf * (1 + np.tanh(np.float32(np.sqrt(2 / np.pi)) * (xf + 0.044715 * xf**3)))
    np.testing.assert_array_equal(out, want.astype(np.float16))


def test_cast_to_bfloat16_rounds_to_nearest_even() -> None:
    x = np.array([1 + 2**-8, 1 + 3 * 2**-8, 3.0e38, 3.4e38], np.float32)
    (out,) = run_op("Cast", [x], {"dst_type": 27})
    assert out.dtype == BF16
    got = out.astype(np.float32)
    assert got[0] == 1.0  # tie goes to the even mantissa
    assert got[1] == 1 + 4 * 2**-8
    assert np.isfinite(got[2])
    assert np.isposinf(got[3])  # rounds past bf16's largest finite value (3.39e38)


def test_cast_float_to_int_truncates_and_saturates() -> None:
    x = np.array([1.9, -1.9, 3e9, -3e9, np.nan], np.float32)
    (out,) = run_op("Cast", [x], {"dst_type": 3})
    assert out.dtype == np.int32
    assert out.tolist() == [1, -1, 2**31 - 1, -(2**31), 0]


def test_cast_float32_to_float16_overflows_to_inf() -> None:
    (out,) = run_op("Cast", [np.array([70000.0, 1e-9], np.float32)], {"dst_type": 1})
    assert np.isposinf(out[0]) and out[1] == 0


def test_bad_inputs_give_the_acl_codes() -> None:
    expect_code(ACL_ERROR_OP_INPUT_NOT_MATCH, "Add", [spec([3]), spec([4])])
    expect_code(ACL_ERROR_OP_INPUT_NOT_MATCH, "Add", [spec([3], np.float16), spec([3])])
    expect_code(ACL_ERROR_OP_INPUT_NOT_MATCH, "Add", [spec([3])])
    expect_code(ACL_ERROR_UNSUPPORTED_DATA_TYPE, "Div", [spec([3], np.int32)] * 2)
    expect_code(ACL_ERROR_UNSUPPORTED_DATA_TYPE, "Relu", [spec([3], np.int32)])
    expect_code(ACL_ERROR_UNSUPPORTED_DATA_TYPE, "Cast", [spec([3])], {"dst_type": 99})
    expect_code(ACL_ERROR_OP_ATTR_NOT_MATCH, "Cast", [spec([3])])
    err = expect_code(ACL_ERROR_OP_ATTR_NOT_MATCH, "Cast", [spec([3])], {"dst_type": "fp16"})
    assert "dst_type" in err.message


def test_bfloat16_arithmetic_rounds_to_nearest_even() -> None:
    one = np.ones(2, BF16)
    tiny = np.array([2**-8, 3 * 2**-8], BF16)  # half an ulp of 1.0, and one and a half
    (out,) = run_op("Add", [one, tiny])
    assert out.dtype == BF16
    assert out.astype(np.float32).tolist() == [1.0, 1 + 2**-6]  # ties go to the even mantissa
