"""Conv2D, MaxPool and AvgPool against direct float64 loops."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ops_testing import check_op, expect_code, rand, spec

from npu_runtime.ops.errors import (
    ACL_ERROR_FORMAT_NOT_MATCH,
    ACL_ERROR_OP_ATTR_NOT_MATCH,
    ACL_ERROR_OP_INPUT_NOT_MATCH,
)


def conv_loops(x, w, stride, pads, dil, groups, bias=None):
    n, c, h, wd = x.shape
    co, ci, kh, kw = w.shape
    x = np.pad(x, ((0, 0), (0, 0), (pads[0], pads[1]), (pads[2], pads[3])))
    ho = (x.shape[2] - dil[0] * (kh - 1) - 1) // stride[0] + 1
    wo = (x.shape[3] - dil[1] * (kw - 1) - 1) // stride[1] + 1
    out = np.zeros((n, co, ho, wo))
    cog = co // groups
    for b, o, i, j in itertools.product(range(n), range(co), range(ho), range(wo)):
        g = o // cog
        for cc, p, q in itertools.product(range(ci), range(kh), range(kw)):
            out[b, o, i, j] += (
                x[b, g * ci + cc, i * stride[0] + p * dil[0], j * stride[1] + q * dil[1]]
                * w[o, cc, p, q]
            )
    if bias is not None:
        out += bias[None, :, None, None]
    return out


@pytest.mark.parametrize(
    "stride,pads,dil,groups",
    [
        ((1, 1), (0, 0, 0, 0), (1, 1), 1),
        ((2, 1), (1, 0, 2, 1), (1, 2), 1),
        ((1, 2), (1, 1, 1, 1), (2, 1), 2),
    ],
)
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_conv2d_matches_loops(stride, pads, dil, groups, dtype) -> None:
    rng = np.random.default_rng(6)
    x = rand(rng, (2, 4, 7, 6), dtype)
    w = rand(rng, (6, 4 // groups, 3, 2), dtype)
    b = rand(rng, (6,), dtype)
    attrs = {
        "strides": [1, 1, *stride],
        "pads": list(pads),
        "dilations": [1, 1, *dil],
        "groups": groups,
    }
    check_op(
        "Conv2D",
        [x, w, b],
        lambda x, w, b: conv_loops(x, w, stride, pads, dil, groups, b),
        attrs,
        atol=1e-2 if dtype == np.float16 else None,
    )


def test_conv2d_bad_input() -> None:
    x, w = spec([1, 4, 5, 5]), spec([2, 3, 3, 3])
    expect_code(ACL_ERROR_OP_INPUT_NOT_MATCH, "Conv2D", [x, w], {"strides": [1, 1, 1, 1]})
    expect_code(ACL_ERROR_OP_ATTR_NOT_MATCH, "Conv2D", [x, spec([2, 4, 3, 3])])
    expect_code(
        ACL_ERROR_OP_INPUT_NOT_MATCH, "Conv2D", [x, spec([2, 4, 7, 7])], {"strides": [1, 1, 1, 1]}
    )
    expect_code(
        ACL_ERROR_FORMAT_NOT_MATCH,
        "Conv2D",
        [x, spec([2, 4, 3, 3])],
        {"strides": [1, 1, 1, 1], "data_format": "NHWC"},
    )


def pool_loops(x, k, s, padding, kind):
    n, c, h, w = x.shape
    if padding == "SAME":
        ho, wo = -(-h // s[0]), -(-w // s[1])
        ph = max((ho - 1) * s[0] + k[0] - h, 0)
        pw = max((wo - 1) * s[1] + k[1] - w, 0)
        top, left = ph // 2, pw // 2
    else:
        ho, wo = (h - k[0]) // s[0] + 1, (w - k[1]) // s[1] + 1
        top = left = 0
    out = np.zeros((n, c, ho, wo))
    for i, j in itertools.product(range(ho), range(wo)):
        r0, c0 = i * s[0] - top, j * s[1] - left
        win = x[:, :, max(r0, 0) : r0 + k[0], max(c0, 0) : c0 + k[1]]
        out[:, :, i, j] = win.max(axis=(2, 3)) if kind == "max" else win.mean(axis=(2, 3))
    return out


@pytest.mark.parametrize("padding", ["SAME", "VALID"])
@pytest.mark.parametrize("kind", ["max", "avg"])
@pytest.mark.parametrize("k,s", [((2, 2), (2, 2)), ((3, 2), (1, 2))])
def test_pool_matches_loops(padding: str, kind: str, k, s) -> None:
    x = rand(np.random.default_rng(7), (2, 3, 7, 5))
    attrs = {"ksize": [1, 1, *k], "strides": [1, 1, *s], "padding": padding}
    check_op(
        "MaxPool" if kind == "max" else "AvgPool",
        [x],
        lambda x: pool_loops(x, k, s, padding, kind),
        attrs,
    )


def test_pool_bad_input() -> None:
    x = spec([1, 1, 4, 4])
    expect_code(
        ACL_ERROR_OP_INPUT_NOT_MATCH,
        "MaxPool",
        [spec([4, 4])],
        {"ksize": [2, 2], "strides": [1, 1]},
    )
    expect_code(
        ACL_ERROR_OP_ATTR_NOT_MATCH,
        "MaxPool",
        [x],
        {"ksize": [2, 2], "strides": [1, 1], "padding": "FULL"},
    )
    expect_code(ACL_ERROR_OP_INPUT_NOT_MATCH, "AvgPool", [x], {"ksize": [5, 5], "strides": [1, 1]})
    expect_code(ACL_ERROR_OP_ATTR_NOT_MATCH, "AvgPool", [x], {"ksize": [0, 2], "strides": [1, 1]})


@settings(max_examples=25, deadline=None)
@given(
    data=st.data(),
    groups=st.sampled_from([1, 2]),
    kh=st.integers(1, 3),
    kw=st.integers(1, 3),
    sh=st.integers(1, 2),
    sw=st.integers(1, 3),
    dh=st.integers(1, 2),
    dw=st.integers(1, 2),
)
def test_conv2d_random_geometry(data, groups, kh, kw, sh, sw, dh, dw) -> None:
    pads = data.draw(st.lists(st.integers(0, 2), min_size=4, max_size=4))
    h = data.draw(st.integers(dh * (kh - 1) + 1, 7))
    w = data.draw(st.integers(dw * (kw - 1) + 1, 7))
    rng = np.random.default_rng(groups * 100 + kh)
    x = rand(rng, (1, 2 * groups, h, w))
    f = rand(rng, (2 * groups, 2, kh, kw))
    attrs = {"strides": [1, 1, sh, sw], "pads": pads, "dilations": [1, 1, dh, dw], "groups": groups}
    check_op(
        "Conv2D", [x, f], lambda x, f: conv_loops(x, f, (sh, sw), pads, (dh, dw), groups), attrs
    )
