"""Softmax, LogSoftmax, LayerNorm, RmsNorm and the reductions against float64 formulas."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import array_shapes
from ops_testing import BF16, check_op, expect_code, rand, run_op, spec

from npu_runtime.ops.errors import (
    ACL_ERROR_OP_ATTR_NOT_MATCH,
    ACL_ERROR_OP_INPUT_NOT_MATCH,
    ACL_ERROR_UNSUPPORTED_DATA_TYPE,
)


def softmax64(x, axes):
    e = np.exp(x - x.max(axis=axes, keepdims=True))
    return e / e.sum(axis=axes, keepdims=True)


@pytest.mark.parametrize("dtype", [np.float32, np.float16, BF16])
@pytest.mark.parametrize("axes", [[-1], [0], [1, 2]])
def test_softmax_and_log_softmax(dtype, axes) -> None:
    x = rand(np.random.default_rng(8), (3, 4, 5), dtype, scale=4)
    ax = tuple(axes)
    check_op("SoftmaxV2", [x], lambda x: softmax64(x, ax), {"axes": axes})
    check_op(
        "LogSoftmaxV2",
        [x],
        lambda x: np.log(softmax64(x, ax)),
        {"axes": axes},
        atol=2e-2 if dtype == BF16 else None,
    )


def test_softmax_is_stable_for_large_logits() -> None:
    (out,) = run_op("Softmax", [np.array([[1000.0, 1000.0], [-1e4, 0.0]], np.float32)])
    np.testing.assert_allclose(out, [[0.5, 0.5], [0.0, 1.0]])


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("begin", [1, 2, -1])
def test_layer_norm(dtype, begin: int) -> None:
    rng = np.random.default_rng(9)
    x = rand(rng, (2, 3, 8), dtype, scale=3)
    b = begin % 3
    g, beta = rand(rng, x.shape[b:], dtype), rand(rng, x.shape[b:], dtype)

    def ref(x, g, beta):
        axes = tuple(range(b, 3))
        mean = x.mean(axis=axes, keepdims=True)
        var = x.var(axis=axes, keepdims=True)
        return (x - mean) / np.sqrt(var + 1e-5) * g + beta, mean, var

    attrs = {"begin_norm_axis": begin, "begin_params_axis": begin, "epsilon": 1e-5}
    check_op("LayerNorm", [x, g, beta], ref, attrs, atol=1e-2 if dtype == np.float16 else None)


@pytest.mark.parametrize("dtype", [np.float32, np.float16, BF16])
def test_rms_norm(dtype) -> None:
    rng = np.random.default_rng(10)
    x, g = rand(rng, (4, 16), dtype), rand(rng, (16,), dtype)

    def ref(x, g):
        rstd = 1 / np.sqrt((x * x).mean(axis=-1, keepdims=True) + 1e-6)
        return x * rstd * g, rstd

    y, rstd = check_op("RmsNorm", [x, g], ref, atol=3e-2 if dtype == BF16 else 1e-2)
    assert rstd.dtype == np.float32 and rstd.shape == (4, 1)


@pytest.mark.parametrize(
    "name,fn", [("ReduceSum", np.sum), ("ReduceMean", np.mean), ("ReduceMax", np.max)]
)
@pytest.mark.parametrize("axes,keep", [([], False), ([1], True), ([0, -1], False)])
def test_reductions(name: str, fn, axes, keep: bool) -> None:
    x = rand(np.random.default_rng(11), (3, 4, 5), np.float16)
    ax = tuple(axes) if axes else None
    check_op(
        name,
        [x],
        lambda x: fn(x, axis=ax, keepdims=keep),
        {"axes": axes, "keep_dims": keep},
        atol=1e-2,
    )


def test_fp16_reduce_sum_accumulates_in_float32() -> None:
    (out,) = run_op("ReduceSum", [np.ones(4096, np.float16)])
    assert out == 4096  # fp16 running sums would stall at 2048


def test_bad_inputs() -> None:
    expect_code(ACL_ERROR_OP_ATTR_NOT_MATCH, "SoftmaxV2", [spec([3, 4])], {"axes": [2]})
    expect_code(ACL_ERROR_UNSUPPORTED_DATA_TYPE, "SoftmaxV2", [spec([3], np.int32)])
    expect_code(
        ACL_ERROR_OP_INPUT_NOT_MATCH,
        "LayerNorm",
        [spec([2, 8]), spec([7]), spec([8])],
        {"begin_norm_axis": 1, "begin_params_axis": 1},
    )
    expect_code(ACL_ERROR_OP_INPUT_NOT_MATCH, "RmsNorm", [spec([2, 8]), spec([4])])
    expect_code(ACL_ERROR_OP_ATTR_NOT_MATCH, "ReduceSum", [spec([2, 8])], {"axes": [3]})
    expect_code(ACL_ERROR_OP_ATTR_NOT_MATCH, "ReduceSum", [spec([2, 8])], {"keep_dims": "yes"})


@settings(max_examples=40, deadline=None)
@given(
    shape=array_shapes(min_dims=1, max_dims=4, max_side=5),
    data=st.data(),
    name=st.sampled_from(["ReduceSum", "ReduceMean", "ReduceMax"]),
    keep=st.booleans(),
)
def test_reductions_over_random_axes(shape, data, name, keep) -> None:
    axes = data.draw(st.lists(st.integers(-len(shape), len(shape) - 1), max_size=len(shape)))
    norm = {a % len(shape) for a in axes}
    fn = {"ReduceSum": np.sum, "ReduceMean": np.mean, "ReduceMax": np.max}[name]
    x = rand(np.random.default_rng(len(shape)), shape)
    ax = tuple(sorted(norm)) if axes else None
    check_op(name, [x], lambda x: fn(x, axis=ax, keepdims=keep), {"axes": axes, "keep_dims": keep})
