"""FlashAttentionScore equals naive attention for every layout and mask mode, in O(S) memory."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ops_testing import expect_code, rand, run_op, spec

from npu_runtime.ops import attention
from npu_runtime.ops.errors import (
    ACL_ERROR_OP_ATTR_NOT_MATCH,
    ACL_ERROR_OP_INPUT_NOT_MATCH,
    ACL_ERROR_UNSUPPORTED_DATA_TYPE,
)


def to_bnsd(x, layout, heads):
    if layout == "BSH":
        b, s, h = x.shape
        x = x.reshape(b, s, heads, h // heads)
    return x if layout == "BNSD" else x.transpose(0, 2, 1, 3)


def naive(q, k, v, *, layout, heads, kv_heads, scale, mask=None, sparse_mode=0):
    """Float64 textbook attention: the full score matrix, then softmax."""
    q, k, v = (
        to_bnsd(t.astype(np.float64), layout, h)
        for t, h in ((q, heads), (k, kv_heads), (v, kv_heads))
    )
    g = heads // kv_heads
    k, v = np.repeat(k, g, axis=1), np.repeat(v, g, axis=1)
    s = scale * q @ np.ascontiguousarray(np.swapaxes(k, -1, -2))
    sq, sk = s.shape[-2:]
    if sparse_mode == 3:
        visible = np.arange(sk)[None, :] <= np.arange(sq)[:, None] + (sk - sq)
    else:
        visible = np.ones((sq, sk), bool) if mask is None else (mask == 0)
    s = np.where(visible, s, -np.inf)
    m = s.max(axis=-1, keepdims=True)
    e = np.where(np.isfinite(m), np.exp(s - np.where(np.isfinite(m), m, 0)), 0)
    tot = e.sum(axis=-1, keepdims=True)
    out = np.where(tot > 0, (e @ v) / np.where(tot > 0, tot, 1), 0)
    if layout != "BNSD":
        out = out.transpose(0, 2, 1, 3)
        if layout == "BSH":
            out = out.reshape(out.shape[0], out.shape[1], -1)
    return out


def make(layout, b, n, nkv, sq, sk, d, dtype, seed=0):
    rng = np.random.default_rng(seed)
    shapes = {
        "BNSD": ((b, n, sq, d), (b, nkv, sk, d)),
        "BSND": ((b, sq, n, d), (b, sk, nkv, d)),
        "BSH": ((b, sq, n * d), (b, sk, nkv * d)),
    }[layout]
    return rand(rng, shapes[0], dtype), rand(rng, shapes[1], dtype), rand(rng, shapes[1], dtype)


@pytest.mark.parametrize("layout", ["BNSD", "BSND", "BSH"])
@pytest.mark.parametrize("sparse_mode", [0, 3])
# each head grouping with its own sequence shape: square, Sk > Sq, and Sq > Sk (where
# causal mode leaves the first queries with no visible key)
@pytest.mark.parametrize(
    "heads,kv_heads,sq,sk", [(4, 4, 300, 300), (4, 2, 200, 333), (4, 1, 333, 200)]
)
def test_matches_naive_attention(layout, sparse_mode, heads, kv_heads, sq, sk) -> None:
    q, k, v = make(layout, 2, heads, kv_heads, sq, sk, 16, np.float32)
    scale = 1 / np.sqrt(16)
    attrs = {
        "head_num": heads,
        "input_layout": layout,
        "scale_value": scale,
        "sparse_mode": sparse_mode,
    }
    out, smax, ssum = run_op("FlashAttentionScore", [q, k, v], attrs)
    want = naive(
        q, k, v, layout=layout, heads=heads, kv_heads=kv_heads, scale=scale, sparse_mode=sparse_mode
    )
    np.testing.assert_allclose(out, want, atol=2e-5, rtol=1e-4)
    assert smax.shape == ssum.shape == (2, heads, sq, 8)


@pytest.mark.parametrize("mask_shape", ["SS", "B1SS", "BNSS"])
def test_explicit_mask_broadcasts(mask_shape: str) -> None:
    b, n, s = 2, 4, 150
    q, k, v = make("BNSD", b, n, 2, s, s, 8, np.float16, seed=3)
    rng = np.random.default_rng(4)
    shape = {"SS": (s, s), "B1SS": (b, 1, s, s), "BNSS": (b, n, s, s)}[mask_shape]
    mask = (rng.random(shape) < 0.3).astype(np.uint8)
    mask[..., 5, :] = 1  # a query that sees nothing gives 0
    attrs = {"head_num": n, "input_layout": "BNSD", "scale_value": 0.3}
    (out, *_) = run_op("FlashAttentionScore", [q, k, v, mask], attrs)
    assert out.dtype == np.float16
    want = naive(q, k, v, layout="BNSD", heads=n, kv_heads=2, scale=0.3, mask=mask)
    np.testing.assert_allclose(out.astype(np.float64), want, atol=3e-3, rtol=3e-3)
    assert not out[..., 5, :].any()


def test_band_tokens_in_sparse_mode_0() -> None:
    q, k, v = make("BNSD", 1, 2, 2, 64, 64, 8, np.float32, seed=5)
    attrs = {"head_num": 2, "pre_tockens": 3, "next_tockens": 0}
    (out, *_) = run_op("FlashAttentionScore", [q, k, v], attrs)
    i, j = np.arange(64)[:, None], np.arange(64)[None, :]
    band_mask = ~((i - j <= 3) & (j - i <= 0))
    want = naive(
        q, k, v, layout="BNSD", heads=2, kv_heads=2, scale=1.0, mask=band_mask.astype(np.uint8)
    )
    np.testing.assert_allclose(out, want, atol=2e-5, rtol=1e-4)


def peak_extra_bytes(seq: int) -> int:
    q, k, v = make("BNSD", 1, 1, 1, seq, seq, 64, np.float16, seed=6)
    attrs = {"head_num": 1, "sparse_mode": 0}
    tracemalloc.start()
    tracemalloc.reset_peak()
    run_op("FlashAttentionScore", [q, k, v], attrs)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak


def test_extra_memory_grows_linearly_with_sequence() -> None:
    small, big = peak_extra_bytes(512), peak_extra_bytes(2048)
    one_score_matrix = 2048 * 2048 * 4  # what naive attention holds for one head, float32
    assert big < one_score_matrix / 4, (small, big)
    # 4x the sequence: linear growth is <= 4x (plus constant block buffers), quadratic 16x.
    assert big < 4.5 * small, (small, big)


def test_blocks_cover_sequences_not_multiple_of_block() -> None:
    s = attention.BLOCK_Q + 1
    q, k, v = make("BNSD", 1, 1, 1, s, attention.BLOCK_K + 3, 4, np.float32, seed=7)
    (out, *_) = run_op("FlashAttentionScore", [q, k, v], {"head_num": 1, "sparse_mode": 3})
    want = naive(q, k, v, layout="BNSD", heads=1, kv_heads=1, scale=1.0, sparse_mode=3)
    np.testing.assert_allclose(out, want, atol=2e-5, rtol=1e-4)


def test_bad_inputs() -> None:
    q, kv = spec([1, 4, 8, 16], np.float16), spec([1, 3, 8, 16], np.float16)
    expect_code(ACL_ERROR_OP_INPUT_NOT_MATCH, "FlashAttentionScore", [q, kv, kv], {"head_num": 4})
    expect_code(ACL_ERROR_OP_INPUT_NOT_MATCH, "FlashAttentionScore", [q, q, q], {"head_num": 2})
    expect_code(
        ACL_ERROR_OP_ATTR_NOT_MATCH,
        "FlashAttentionScore",
        [q, q, q],
        {"head_num": 4, "sparse_mode": 2},
    )
    expect_code(
        ACL_ERROR_OP_ATTR_NOT_MATCH,
        "FlashAttentionScore",
        [q, q, q],
        {"head_num": 4, "input_layout": "TND"},
    )
    expect_code(ACL_ERROR_OP_ATTR_NOT_MATCH, "FlashAttentionScore", [q, q, q])
    expect_code(
        ACL_ERROR_UNSUPPORTED_DATA_TYPE,
        "FlashAttentionScore",
        [q, q, q, spec([8, 8], np.float16)],
        {"head_num": 4},
    )
    expect_code(
        ACL_ERROR_OP_INPUT_NOT_MATCH,
        "FlashAttentionScore",
        [q, q, q, spec([8, 9], np.bool_)],
        {"head_num": 4},
    )
    bsh = spec([1, 8, 60], np.float16)
    expect_code(
        ACL_ERROR_OP_INPUT_NOT_MATCH,
        "FlashAttentionScore",
        [bsh, bsh, bsh],
        {"head_num": 7, "input_layout": "BSH"},
    )


@settings(max_examples=40, deadline=None)
@given(
    layout=st.sampled_from(["BNSD", "BSND", "BSH"]),
    kv_heads=st.sampled_from([1, 2, 4]),
    sq=st.integers(1, 40),
    sk=st.integers(1, 40),
    sparse_mode=st.sampled_from([0, 3]),
    masked=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_small_blocks_match_naive_for_random_shapes(
    layout, kv_heads, sq, sk, sparse_mode, masked, seed
) -> None:
    # Tiny blocks make every random shape cross many block edges (partial last blocks,
    # causal rows that end mid-block, queries that see nothing).
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(attention, "BLOCK_Q", 4)
        mp.setattr(attention, "BLOCK_K", 8)
        q, k, v = make(layout, 1, 4, kv_heads, sq, sk, 8, np.float32, seed=seed)
        mask = None
        if masked and sparse_mode == 0:
            mask = (np.random.default_rng(seed).random((sq, sk)) < 0.4).astype(np.bool_)
        attrs = {
            "head_num": 4,
            "input_layout": layout,
            "scale_value": 0.5,
            "sparse_mode": sparse_mode,
        }
        inputs = [q, k, v] + ([mask] if mask is not None else [])
        (out, *_) = run_op("FlashAttentionScore", inputs, attrs)
    want = naive(
        q,
        k,
        v,
        layout=layout,
        heads=4,
        kv_heads=kv_heads,
        scale=0.5,
        mask=mask,
        sparse_mode=sparse_mode,
    )
    np.testing.assert_allclose(out, want, atol=2e-5, rtol=1e-4)
