"""Transpose, Reshape, ConcatD, SplitD, GatherV2 and Embedding against numpy."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import array_shapes
from ops_testing import expect_code, rand, run_op, spec

from npu_runtime.ops.errors import (
    ACL_ERROR_OP_ATTR_NOT_MATCH,
    ACL_ERROR_OP_INPUT_NOT_MATCH,
    ACL_ERROR_RT_AICORE_EXCEPTION,
    ACL_ERROR_UNSUPPORTED_DATA_TYPE,
    OpError,
)

RNG = np.random.default_rng(12)


def test_transpose() -> None:
    x = rand(RNG, (2, 3, 4))
    (out,) = run_op("Transpose", [x], {"perm": [2, 0, 1]})
    np.testing.assert_array_equal(out, x.transpose(2, 0, 1))
    assert out.flags.c_contiguous
    expect_code(ACL_ERROR_OP_ATTR_NOT_MATCH, "Transpose", [spec([2, 3])], {"perm": [0, 0]})


def test_reshape() -> None:
    x = rand(RNG, (2, 3, 4))
    (out,) = run_op("Reshape", [x], {"shape": [4, -1]})
    np.testing.assert_array_equal(out, x.reshape(4, 6))
    expect_code(ACL_ERROR_OP_INPUT_NOT_MATCH, "Reshape", [spec([2, 3])], {"shape": [4, 2]})
    expect_code(ACL_ERROR_OP_ATTR_NOT_MATCH, "Reshape", [spec([2, 3])], {"shape": [-1, -1]})


def test_concat_and_split_round_trip() -> None:
    parts = [rand(RNG, (2, n, 3)) for n in (1, 4, 2)]
    (joined,) = run_op("ConcatD", parts, {"concat_dim": 1})
    np.testing.assert_array_equal(joined, np.concatenate(parts, axis=1))
    x = rand(RNG, (6, 4))
    outs = run_op("SplitD", [x], {"split_dim": 0, "num_split": 3})
    for got, want in zip(outs, np.split(x, 3), strict=True):
        np.testing.assert_array_equal(got, want)
    expect_code(
        ACL_ERROR_OP_INPUT_NOT_MATCH, "ConcatD", [spec([2, 3]), spec([3, 3])], {"concat_dim": 1}
    )
    expect_code(
        ACL_ERROR_OP_ATTR_NOT_MATCH, "SplitD", [spec([5, 3])], {"split_dim": 0, "num_split": 2}
    )


def test_gather_and_embedding() -> None:
    x = rand(RNG, (5, 3))
    idx = np.array([[4, 0], [1, 1]], np.int32)
    (g,) = run_op("GatherV2", [x, idx], {"axis": 0})
    np.testing.assert_array_equal(g, x[idx])
    (g1,) = run_op("Gather", [x, np.array([2, 0], np.int64)], {"axis": 1})
    np.testing.assert_array_equal(g1, x[:, [2, 0]])
    (e,) = run_op("Embedding", [x, idx])
    assert e.shape == (2, 2, 3)
    expect_code(ACL_ERROR_UNSUPPORTED_DATA_TYPE, "GatherV2", [spec([5, 3]), spec([2])])


def test_out_of_range_index_is_a_device_fault() -> None:
    x = rand(RNG, (5, 3))
    try:
        run_op("Embedding", [x, np.array([5], np.int32)])
    except OpError as exc:
        assert exc.code == ACL_ERROR_RT_AICORE_EXCEPTION and "index 5" in exc.message
    else:
        raise AssertionError("an out-of-range index must fault")


@settings(max_examples=30, deadline=None)
@given(shape=array_shapes(min_dims=1, max_dims=5, max_side=4), data=st.data())
def test_transpose_random_permutations(shape, data) -> None:
    perm = data.draw(st.permutations(range(len(shape))))
    x = rand(RNG, shape)
    (out,) = run_op("Transpose", [x], {"perm": list(perm)})
    np.testing.assert_array_equal(out, np.transpose(x, perm))
