"""torch_npu's fused ops (op-plugin schemas), each one record on the device.

`npu_fusion_attention` is the registry's FlashAttentionScore (its shape checks and its
cost); `npu_rms_norm` the registry's RmsNorm; `npu_rotary_mul` and `npu_swiglu` are priced
as vector work. Each runs as one autograd Function: the forward computes on host views in
float32 and rounds once (NPU numerics), the backward recomputes on the host and charges
one `<OpType>Grad` record.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import torch

from npu_runtime.core.launch import Cost
from npu_runtime.cost import estimate
from npu_runtime.ops import registry
from npu_runtime.ops.errors import OpError
from npu_runtime.ops.registry import Spec, Work
from npu_runtime.torch_npu import _backend as B
from npu_runtime.torch_npu.costing import np_dtype

Compute = Callable[[list[torch.Tensor]], list[torch.Tensor]]


def _spec(t: torch.Tensor) -> Spec:
    return Spec(tuple(t.shape), np_dtype(t.dtype))


def _price(work: Work, index: int) -> Cost:
    c = estimate(work, B.ensure_device(index).profile)
    return Cost(
        c.duration_us, c.bound, c.unit, c.block_dim, dict(c.time_by_unit), c.bytes_moved, c.flops
    )


def _registry_work(op_type: str, ins: Sequence[torch.Tensor], attrs: dict[str, Any]) -> Work:
    d = registry.get(op_type)
    specs = [_spec(t) for t in ins]
    try:
        outs = d.infer(specs, attrs)
    except OpError as e:
        raise RuntimeError(f"{op_type}: {e.message}") from None
    return d.cost(specs, outs, attrs)


def _vector_work(ins: Sequence[torch.Tensor], outs: Sequence[torch.Tensor], per_elem: int) -> Work:
    moved = sum(t.numel() * t.element_size() for t in (*ins, *outs))
    n = sum(t.numel() for t in outs)
    return Work("vector", np_dtype(ins[0].dtype), moved, (), n * per_elem, n * per_elem)


def _to_npu(t: torch.Tensor, index: int) -> torch.Tensor:
    out = B.empty(t.shape, t.dtype, index)
    if not B.estimate and t.numel():
        B.host_view(out).copy_(t)
    return out


def _host(ts: Sequence[torch.Tensor | None]) -> list[torch.Tensor]:
    return [B.host_view(t) if t is not None else None for t in ts]  # type: ignore[misc]


class _Fused(torch.autograd.Function):
    @staticmethod
    def forward(ctx: Any, spec: dict[str, Any], *inputs: torch.Tensor) -> Any:
        index = next(t.device.index or 0 for t in inputs if t is not None)
        compute: Compute = spec["compute"]
        host = _host(inputs)
        outs_cpu = compute([h if h is None else h for h in host]) if B.estimate else compute(host)
        outs = [_to_npu(o, index) for o in outs_cpu]
        work = spec["work"](inputs, outs)
        B.charge(index, spec["op_type"], _price(work, index),
                 tuple(B.info(t) for t in inputs if t is not None), tuple(map(B.info, outs)))  # fmt: skip
        ctx.spec = spec
        ctx.index = index
        ctx.save_for_backward(*[t for t in inputs if t is not None])
        ctx.present = [t is not None for t in inputs]
        ctx.mark_non_differentiable(
            *[o for o, d in zip(outs, spec["differentiable"], strict=False) if not d]
        )
        return tuple(outs) if len(outs) > 1 else outs[0]

    @staticmethod
    def backward(ctx: Any, *grads: torch.Tensor) -> Any:
        spec = ctx.spec
        saved = iter(ctx.saved_tensors)
        inputs = [next(saved) if p else None for p in ctx.present]
        index = ctx.index
        host_in = []
        for t in inputs:
            if t is None or B.estimate:
                host_in.append(
                    None if t is None else B.host_view(t).requires_grad_(t.is_floating_point())
                )
                continue
            h = B.host_view(t).detach().clone()
            host_in.append(h.requires_grad_(h.is_floating_point()))
        with torch.enable_grad():
            outs = spec["compute"](host_in)
        pairs = [
            (o, B.host_view(g))
            for o, g in zip(outs, grads, strict=False)
            if g is not None and o.requires_grad
        ]
        wrt = [h for h in host_in if h is not None and h.requires_grad]
        got = torch.autograd.grad(
            [o for o, _ in pairs], wrt, [g for _, g in pairs], allow_unused=True
        )
        it = iter(got)
        result: list[torch.Tensor | None] = [None]
        grads_npu = []
        for hi in host_in:
            if hi is None or not hi.requires_grad:
                result.append(None)
                continue
            gi = next(it)
            g_npu = _to_npu(gi if gi is not None else torch.zeros_like(hi), index)
            grads_npu.append(g_npu)
            result.append(g_npu)
        work = spec["work"]([t for t in inputs if t is not None], grads_npu)
        back = Work(
            work.unit,
            work.dtype,
            work.bytes_moved * 2,
            work.matmuls * 2,
            work.vector_ops * 2,
            work.flops * 2,
        )
        B.charge(index, spec["op_type"] + "Grad", _price(back, index),
                 tuple(B.info(t) for t in inputs if t is not None), tuple(map(B.info, grads_npu)))  # fmt: skip
        return tuple(result)


def _apply(spec: dict[str, Any], *inputs: torch.Tensor | None) -> Any:
    for t in inputs:
        if t is not None and t.device.type != "npu":
            raise RuntimeError(
                f"{spec['name']}: expected all tensors on the npu device, but got a tensor on {t.device}"
            )
    return _Fused.apply(spec, *inputs)


# -- npu_fusion_attention ---------------------------------------------------------------------
def _bnsd(x: torch.Tensor, layout: str, heads: int) -> torch.Tensor:
    if layout == "BSH":
        b, s, h = x.shape
        return x.reshape(b, s, heads, h // heads).transpose(1, 2)
    if layout == "BSND":
        return x.transpose(1, 2)
    if layout == "SBH":
        s, b, h = x.shape
        return x.reshape(s, b, heads, h // heads).permute(1, 2, 0, 3)
    return x


def _from_bnsd(x: torch.Tensor, layout: str) -> torch.Tensor:
    b, n, s, d = x.shape
    if layout == "BSH":
        return x.transpose(1, 2).reshape(b, s, n * d)
    if layout == "BSND":
        return x.transpose(1, 2)
    if layout == "SBH":
        return x.permute(2, 0, 1, 3).reshape(s, b, n * d)
    return x


def _visible(
    sq: int, sk: int, mask: torch.Tensor | None, mode: int, pre: int, nxt: int
) -> torch.Tensor | None:
    """Bool [.., Sq, Sk]: True where a query may attend a key (torch_npu: mask 1 = masked)."""
    i = torch.arange(sq, device="cpu")[:, None]
    j = torch.arange(sk, device="cpu")[None, :]
    if mode == 2:  # left-up causal
        return j <= i
    if mode == 3:  # right-down causal
        return j <= i + (sk - sq)
    vis = None
    if mask is not None:
        vis = ~mask.bool()
    if pre < sq + sk or nxt < sq + sk:  # the token band
        band = (j >= i - pre) & (j <= i + nxt)
        vis = band if vis is None else vis & band
    return vis


def npu_fusion_attention(
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    head_num: int,
    input_layout: str,
    pse: torch.Tensor | None = None,
    padding_mask: torch.Tensor | None = None,
    atten_mask: torch.Tensor | None = None,
    scale: float = 1.0,
    keep_prob: float = 1.0,
    pre_tockens: int = 2147483647,
    next_tockens: int = 2147483647,
    inner_precise: int = 0,
    prefix: Any = None,
    actual_seq_qlen: Any = None,
    actual_seq_kvlen: Any = None,
    sparse_mode: int = 0,
    gen_mask_parallel: bool = True,
    sync: bool = False,
) -> tuple[Any, ...]:
    """FlashAttentionScore: (attention_out, softmax_max, softmax_sum, softmax_out, seed,
    offset, mask length), as op-plugin returns them."""
    layout = str(input_layout)
    if layout == "TND" or pse is not None or keep_prob != 1.0 or prefix is not None:
        what = (
            "TND layout"
            if layout == "TND"
            else "pse"
            if pse is not None
            else "dropout (keep_prob < 1)"
            if keep_prob != 1.0
            else "prefix"
        )
        raise NotImplementedError(f"npu_fusion_attention: {what} is not emulated yet")
    if layout not in ("BSH", "SBH", "BSND", "BNSD"):
        raise RuntimeError(
            f"npu_fusion_attention: input_layout must be BSH, SBH, BSND, BNSD or TND, got {layout!r}"
        )
    if sparse_mode not in (0, 2, 3):
        raise NotImplementedError(
            f"npu_fusion_attention: sparse_mode {sparse_mode} is not emulated yet (0, 2, 3 are)"
        )
    heads = int(head_num)

    def compute(h: list[torch.Tensor]) -> list[torch.Tensor]:
        q, k, v, m = h
        if q.device.type == "meta":
            b, n, sq, _ = _bnsd(q, layout, heads).shape
            stat = torch.empty(b, n, sq, 8, dtype=torch.float32, device="meta")
            return [torch.empty_like(q), stat, stat.clone()]
        qf = _bnsd(q.float(), layout, heads)
        kv_heads = heads if layout in ("BNSD", "BSND") else None
        kf = _bnsd(k.float(), layout, kv_heads or (heads * k.shape[-1] // q.shape[-1]))
        vf = _bnsd(v.float(), layout, kv_heads or (heads * v.shape[-1] // q.shape[-1]))
        g = qf.shape[1] // kf.shape[1]
        if g > 1:
            kf = kf.repeat_interleave(g, dim=1)
            vf = vf.repeat_interleave(g, dim=1)
        s = (qf @ kf.transpose(-1, -2)) * scale
        vis = _visible(s.shape[-2], s.shape[-1], m, sparse_mode, pre_tockens, next_tockens)
        if vis is not None:
            s = s.masked_fill(~vis, float("-inf"))
        mx = s.amax(-1, keepdim=True)
        safe = torch.where(torch.isinf(mx), torch.zeros_like(mx), mx)
        p = torch.exp(s - safe)
        sm = p.sum(-1, keepdim=True)
        o = torch.where(sm > 0, (p / sm.clamp_min(1e-30)) @ vf, torch.zeros((), device="cpu"))
        out = _from_bnsd(o, layout).to(q.dtype)
        return [
            out,
            safe.detach().expand(*mx.shape[:-1], 8).contiguous(),
            sm.detach().expand(*sm.shape[:-1], 8).contiguous(),
        ]

    reg_mode = 3 if sparse_mode in (2, 3) else 0
    reg_layout = layout if layout != "SBH" else "BSH"

    def work(ins: Sequence[torch.Tensor], outs: Sequence[torch.Tensor]) -> Work:
        q, k, v = ins[0], ins[1], ins[2]
        if layout == "SBH":
            q, k, v = (t.transpose(0, 1) for t in (q, k, v))
        attrs = {"head_num": heads, "input_layout": reg_layout, "scale_value": float(scale), "sparse_mode": reg_mode,
                 "pre_tockens": int(pre_tockens), "next_tockens": int(next_tockens), "keep_prob": 1.0}  # fmt: skip
        mask = [ins[3]] if len(ins) > 3 and reg_mode == 0 and ins[3].dim() in (2, 4) else []
        return _registry_work("FlashAttentionScore", [q, k, v, *mask], attrs)

    spec = {"name": "npu_fusion_attention", "op_type": "FlashAttentionScore", "compute": compute, "work": work,
            "differentiable": (True, False, False)}  # fmt: skip
    out, smax, ssum = _apply(spec, query, key, value, atten_mask)
    reserved = B.empty([0], query.dtype, query.device.index or 0)
    return out, smax, ssum, reserved, 0, 0, 0


# -- npu_rms_norm -----------------------------------------------------------------------------
def npu_rms_norm(
    x: torch.Tensor, gamma: torch.Tensor, epsilon: float = 1e-06
) -> tuple[torch.Tensor, torch.Tensor]:
    """RmsNorm: (y, rstd); rstd is float32 over the leading dims, as op-plugin returns it."""
    k = gamma.dim()

    def compute(h: list[torch.Tensor]) -> list[torch.Tensor]:
        xv, gv = h
        dims = tuple(range(xv.dim() - k, xv.dim()))
        xf = xv.float()
        rstd = torch.rsqrt(xf.pow(2).mean(dims, keepdim=True) + epsilon)
        return [(xf * rstd * gv.float()).to(xv.dtype), rstd]

    def work(ins: Sequence[torch.Tensor], outs: Sequence[torch.Tensor]) -> Work:
        return _registry_work("RmsNorm", ins[:2], {"epsilon": float(epsilon)})

    spec = {"name": "npu_rms_norm", "op_type": "RmsNorm", "compute": compute, "work": work,
            "differentiable": (True, False)}  # fmt: skip
    y, rstd = _apply(spec, x, gamma)
    return y, rstd


# -- npu_rotary_mul ---------------------------------------------------------------------------
def npu_rotary_mul(
    x: torch.Tensor, r1: torch.Tensor, r2: torch.Tensor, rotary_mode: str = "half"
) -> torch.Tensor:
    """RotaryMul: r1 * x + r2 * rotate(x); 'half' rotates halves, 'interleave' pairs."""
    if x.dim() != 4:
        raise RuntimeError(f"npu_rotary_mul: x must be 4-D (BNSD, BSND or SBND), got {x.dim()}-D")
    if rotary_mode not in ("half", "interleave"):
        raise RuntimeError(
            f"npu_rotary_mul: rotary_mode must be 'half' or 'interleave', got {rotary_mode!r}"
        )

    def compute(h: list[torch.Tensor]) -> list[torch.Tensor]:
        xv, a, b = h
        xf = xv.float()
        if rotary_mode == "half":
            x1, x2 = xf.chunk(2, dim=-1)
            rot = torch.cat((-x2, x1), dim=-1)
        else:
            rot = torch.stack((-xf[..., 1::2], xf[..., ::2]), dim=-1).flatten(-2)
        return [(a.float() * xf + b.float() * rot).to(xv.dtype)]

    spec = {"name": "npu_rotary_mul", "op_type": "RotaryMul", "compute": compute,
            "work": lambda ins, outs: _vector_work(ins, outs, 3), "differentiable": (True,)}  # fmt: skip
    out: torch.Tensor = _apply(spec, x, r1, r2)
    return out


# -- npu_swiglu -------------------------------------------------------------------------------
def npu_swiglu(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    """SwiGlu: split x in two along `dim`, silu(a) * b."""
    if x.shape[dim] % 2:
        raise RuntimeError(f"npu_swiglu: x.shape[{dim}] = {x.shape[dim]} must be even")

    def compute(h: list[torch.Tensor]) -> list[torch.Tensor]:
        a, b = h[0].float().chunk(2, dim=dim)
        return [(torch.nn.functional.silu(a) * b).to(h[0].dtype)]

    spec = {"name": "npu_swiglu", "op_type": "SwiGlu", "compute": compute,
            "work": lambda ins, outs: _vector_work(ins, outs, 5), "differentiable": (True,)}  # fmt: skip
    out: torch.Tensor = _apply(spec, x)
    return out


# -- formats ---------------------------------------------------------------------------------
ACL_FORMAT_ND = 2


def npu_format_cast(x: torch.Tensor, acl_format: int) -> torch.Tensor:
    """TransData to another storage format. The emulator keeps every tensor ND, so the
    result is x itself (torch_npu also returns its input when no conversion is needed)."""
    if x.device.type != "npu":
        raise RuntimeError(f"npu_format_cast: expected a tensor on the npu device, got {x.device}")
    return x


def get_npu_format(x: torch.Tensor) -> int:
    """The tensor's ACL storage format: always ND (2) on the emulator."""
    return ACL_FORMAT_ND


__all__ = [
    "get_npu_format",
    "npu_format_cast",
    "npu_fusion_attention",
    "npu_rms_norm",
    "npu_rotary_mul",
    "npu_swiglu",
]
