"""FlashAttentionScore with torch_npu `npu_fusion_attention` semantics, computed blockwise.

Like the fused kernel, it never holds the Sq x Sk score matrix: query blocks stream over
key/value blocks with an online softmax (running max and sum), so the extra memory is one
block of scores plus O(sequence) running statistics.

Layouts: BNSD [B, N, S, D], BSND [B, S, N, D] and BSH [B, S, N*D]. Grouped-query heads:
key/value may have fewer heads than `head_num` (query heads per kv head = N / N_kv).
`atten_mask` (optional, bool/uint8, 1 = masked out) broadcasts from [Sq, Sk], [B, 1, Sq, Sk]
or [B, N, Sq, Sk]. sparse_mode 0 applies the mask plus the pre/next token band;
sparse_mode 3 is right-down-aligned causal (key j visible to query i iff j <= i + Sk - Sq)
and ignores the mask's values (torch_npu passes a compressed 2048 x 2048 mask there).
A query row with no visible key gives 0.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from npu_runtime import numerics
from npu_runtime.ops.common import (
    BF16,
    F16,
    F32,
    attr_float,
    attr_int,
    attr_str,
    dtype_in,
    io_bytes,
    n_inputs,
    same_dtype,
)
from npu_runtime.ops.errors import (
    ACL_ERROR_OP_ATTR_NOT_MATCH,
    ACL_ERROR_OP_INPUT_NOT_MATCH,
    ACL_ERROR_UNSUPPORTED_DATA_TYPE,
    OpError,
)
from npu_runtime.ops.registry import Attrs, Matmul, Spec, Work, op

BLOCK_Q = 128
BLOCK_K = 256
_NO_BAND = 2147483647
_LAYOUTS = ("BNSD", "BSND", "BSH")
_MASK_DTYPES = frozenset({np.dtype(np.bool_), np.dtype(np.uint8)})


class _Dims:
    """Batch, heads, sequence lengths and head size of one call, validated."""

    def __init__(self, inputs: Sequence[Spec], attrs: Attrs) -> None:
        self.layout = attr_str("FlashAttentionScore", attrs, "input_layout", "BNSD")
        if self.layout not in _LAYOUTS:
            raise OpError(
                ACL_ERROR_OP_ATTR_NOT_MATCH,
                f"FlashAttentionScore input_layout must be one of {', '.join(_LAYOUTS)}, got {self.layout!r}",
            )
        self.heads = attr_int("FlashAttentionScore", attrs, "head_num")
        if self.heads < 1:
            raise OpError(ACL_ERROR_OP_ATTR_NOT_MATCH, "FlashAttentionScore head_num must be >= 1")
        self.sparse_mode = attr_int("FlashAttentionScore", attrs, "sparse_mode", 0)
        if self.sparse_mode not in (0, 3):
            raise OpError(
                ACL_ERROR_OP_ATTR_NOT_MATCH,
                f"FlashAttentionScore sparse_mode {self.sparse_mode} is not emulated (0 and 3 are)",
            )
        q, k, v = inputs[0], inputs[1], inputs[2]
        want = 3 if self.layout == "BSH" else 4
        for s, what in ((q, "query"), (k, "key"), (v, "value")):
            if len(s.shape) != want:
                raise OpError(
                    ACL_ERROR_OP_INPUT_NOT_MATCH,
                    f"FlashAttentionScore {what} must have rank {want} for {self.layout}, got {list(s.shape)}",
                )
        if k.shape != v.shape:
            raise OpError(
                ACL_ERROR_OP_INPUT_NOT_MATCH,
                f"FlashAttentionScore key {list(k.shape)} and value {list(v.shape)} differ",
            )
        if self.layout == "BSH":
            self.b, self.sq, hq = q.shape
            _, self.sk, hk = k.shape
            if hq % self.heads:
                raise OpError(
                    ACL_ERROR_OP_INPUT_NOT_MATCH,
                    f"FlashAttentionScore query hidden size {hq} is not divisible by head_num {self.heads}",
                )
            self.d = hq // self.heads
            self.kv_heads, rem = divmod(hk, self.d)
            if rem:
                raise OpError(
                    ACL_ERROR_OP_INPUT_NOT_MATCH,
                    f"FlashAttentionScore key hidden size {hk} is not a multiple of head size {self.d}",
                )
        else:
            if self.layout == "BNSD":
                self.b, nq, self.sq, self.d = q.shape
                _, self.kv_heads, self.sk, dk = k.shape
            else:
                self.b, self.sq, nq, self.d = q.shape
                _, self.sk, self.kv_heads, dk = k.shape
            if nq != self.heads:
                raise OpError(
                    ACL_ERROR_OP_INPUT_NOT_MATCH,
                    f"FlashAttentionScore query has {nq} heads but head_num is {self.heads}",
                )
            if dk != self.d:
                raise OpError(
                    ACL_ERROR_OP_INPUT_NOT_MATCH,
                    f"FlashAttentionScore query head size {self.d} and key head size {dk} differ",
                )
        if k.shape[0] != self.b or self.kv_heads < 1 or self.heads % self.kv_heads:
            raise OpError(
                ACL_ERROR_OP_INPUT_NOT_MATCH,
                f"FlashAttentionScore key/value {list(k.shape)} do not fit query {list(q.shape)} "
                f"(batch must match and head_num {self.heads} be a multiple of the kv heads)",
            )
        if len(inputs) == 4 and self.sparse_mode == 0:
            m = inputs[3].shape
            ok = len(m) == 2 or (len(m) == 4 and m[0] in (1, self.b) and m[1] in (1, self.heads))
            if not ok or m[-2:] != (self.sq, self.sk):
                raise OpError(
                    ACL_ERROR_OP_INPUT_NOT_MATCH,
                    f"FlashAttentionScore atten_mask {list(m)} must be [Sq, Sk], [B, 1, Sq, Sk] or "
                    f"[B, N, Sq, Sk] with Sq={self.sq}, Sk={self.sk}",
                )

    def visible_fraction(self) -> float:
        """Share of (query, key) pairs the causal mode computes (1 for sparse_mode 0)."""
        if self.sparse_mode != 3 or self.sq == 0 or self.sk == 0:
            return 1.0
        off = self.sk - self.sq
        i = np.arange(self.sq)
        return float(np.clip(i + off + 1, 0, self.sk).sum()) / (self.sq * self.sk)


def _infer(inputs: Sequence[Spec], attrs: Attrs) -> list[Spec]:
    n_inputs("FlashAttentionScore", inputs, 3, 4)
    dt = same_dtype("FlashAttentionScore", inputs[:3])
    dtype_in("FlashAttentionScore", inputs[0], {F16, BF16, F32})
    if len(inputs) == 4 and inputs[3].dtype not in _MASK_DTYPES:
        raise OpError(
            ACL_ERROR_UNSUPPORTED_DATA_TYPE, "FlashAttentionScore atten_mask must be bool or uint8"
        )
    if attr_float("FlashAttentionScore", attrs, "keep_prob", 1.0) != 1.0:
        raise OpError(ACL_ERROR_OP_ATTR_NOT_MATCH, "FlashAttentionScore dropout is not emulated")
    d = _Dims(inputs, attrs)
    stat = Spec((d.b, d.heads, d.sq, 8), F32)
    return [Spec(inputs[0].shape, dt, inputs[0].format), stat, stat]


def _cost(inputs: Sequence[Spec], outputs: Sequence[Spec], attrs: Attrs) -> Work:
    d = _Dims(inputs, attrs)
    frac = d.visible_fraction()
    bn = d.b * d.heads
    sq_eff = max(1, round(d.sq * frac)) if d.sq else 0
    mms = (Matmul(bn, sq_eff, d.sk, d.d), Matmul(bn, sq_eff, d.d, d.sk))
    pairs = int(bn * d.sq * d.sk * frac)
    return Work(
        "cube",
        inputs[0].dtype,
        io_bytes(inputs, outputs),
        matmuls=mms,
        vector_ops=6 * pairs,  # scale, mask, max, exp, sum, rescale per score
        flops=4 * pairs * d.d,
    )


def _to_bnsd(x: np.ndarray, layout: str, heads: int) -> np.ndarray:
    """A float32 [B, N, S, D] copy of one input: O(sequence) memory."""
    if layout == "BSH":
        b, s, h = x.shape
        x = x.reshape(b, s, heads, h // heads)
    if layout in ("BSH", "BSND"):
        x = x.transpose(0, 2, 1, 3)
    return np.ascontiguousarray(x, dtype=F32)


def _from_bnsd(x: np.ndarray, layout: str) -> np.ndarray:
    if layout == "BNSD":
        return x
    x = x.transpose(0, 2, 1, 3)
    if layout == "BSH":
        b, s, n, d = x.shape
        x = x.reshape(b, s, n * d)
    return x


def _block_mask(
    d: _Dims, mask: np.ndarray | None, q0: int, q1: int, k0: int, k1: int, attrs: Attrs
) -> np.ndarray | None:
    """Visible (True) score positions of one block, broadcastable to [B, Nkv, G, bq, bk]."""
    i = np.arange(q0, q1)[:, None]
    j = np.arange(k0, k1)[None, :]
    if d.sparse_mode == 3:
        return j <= i + (d.sk - d.sq)
    pre = int(attrs.get("pre_tockens", _NO_BAND))
    nxt = int(attrs.get("next_tockens", _NO_BAND))
    vis: np.ndarray | None = None
    if pre < _NO_BAND or nxt < _NO_BAND:
        vis = (i - j <= pre) & (j - i <= nxt)
    if mask is not None:
        mb = mask[..., q0:q1, k0:k1] == 0
        if mb.ndim == 4:  # [B|1, N|1, bq, bk] -> [B|1, Nkv|1, G|1, bq, bk]
            g = d.heads // d.kv_heads
            mb = (
                mb.reshape(mb.shape[0], d.kv_heads, g, *mb.shape[2:])
                if mb.shape[1] > 1
                else (mb[:, :, None])
            )
        vis = mb if vis is None else (vis & mb)
    return vis


def _k_range(d: _Dims, q0: int, q1: int) -> int:
    """One past the last key any query in [q0, q1) can see (for skipping masked blocks)."""
    if d.sparse_mode == 3:
        return max(0, min(d.sk, q1 + d.sk - d.sq))
    return d.sk


@op(
    "FlashAttentionScore",
    unit="cube",
    infer=_infer,
    cost=_cost,
    inputs=("query", "key", "value", "atten_mask (optional)"),
    attrs={
        "head_num": "int, required",
        "input_layout": 'str "BNSD" | "BSND" | "BSH" = "BNSD"',
        "scale_value": "float = 1.0",
        "sparse_mode": "int 0 | 3 = 0",
        "pre_tockens": "int = 2147483647",
        "next_tockens": "int = 2147483647",
        "keep_prob": "float = 1.0 (no dropout)",
    },
    aliases=("FlashAttention",),
)
def flash_attention(inputs: list[np.ndarray], attrs: Attrs) -> list[np.ndarray]:
    """softmax(scale * Q K^T, masked) V, blockwise with an online softmax; outputs
    attention_out (query's layout and dtype), softmax_max and softmax_sum ([B, N, Sq, 8],
    float32, as torch_npu returns them)."""
    d = _Dims([Spec.of(a) for a in inputs], attrs)
    scale = F32.type(float(attrs.get("scale_value", 1.0)))
    g = d.heads // d.kv_heads
    q = _to_bnsd(inputs[0], d.layout, d.heads).reshape(d.b, d.kv_heads, g, d.sq, d.d)
    # K^T laid out contiguously once (O(S*D)): matmul on a strided view misses the BLAS path.
    kt = np.ascontiguousarray(np.swapaxes(_to_bnsd(inputs[1], d.layout, d.kv_heads), -1, -2))
    kt = kt[:, :, None]
    v = _to_bnsd(inputs[2], d.layout, d.kv_heads)[:, :, None]
    mask = inputs[3] if len(inputs) == 4 and d.sparse_mode == 0 else None
    out = np.zeros_like(q)
    row_max = np.full(q.shape[:-1], -np.inf, F32)
    row_sum = np.zeros(q.shape[:-1], F32)
    with numerics.quiet():
        for q0 in range(0, d.sq, BLOCK_Q):
            q1 = min(q0 + BLOCK_Q, d.sq)
            qb = q[..., q0:q1, :] * scale
            m = np.full(qb.shape[:-1], -np.inf, F32)
            s_acc = np.zeros(qb.shape[:-1], F32)
            acc = np.zeros(qb.shape, F32)
            for k0 in range(0, _k_range(d, q0, q1), BLOCK_K):
                k1 = min(k0 + BLOCK_K, d.sk)
                s = qb @ kt[..., k0:k1]
                vis = _block_mask(d, mask, q0, q1, k0, k1, attrs)
                if vis is not None:
                    s = np.where(vis, s, -np.inf)
                m_new = np.maximum(m, s.max(axis=-1))
                safe = np.where(np.isneginf(m_new), 0.0, m_new).astype(F32)
                p = np.exp(s - safe[..., None])
                corr = np.exp(m - safe)
                s_acc = s_acc * corr + p.sum(axis=-1)
                acc = acc * corr[..., None] + p @ v[..., k0:k1, :]
                m = m_new
            out[..., q0:q1, :] = np.where(s_acc[..., None] > 0, acc / s_acc[..., None], 0.0)
            row_max[..., q0:q1] = m
            row_sum[..., q0:q1] = s_acc
    shape4 = (d.b, d.heads, d.sq)
    result = _from_bnsd(out.reshape(*shape4, d.d), d.layout)
    stats = [np.repeat(a.reshape(*shape4, 1), 8, axis=-1) for a in (row_max, row_sum)]
    return [numerics.round_to(np.ascontiguousarray(result), inputs[0].dtype), *stats]
