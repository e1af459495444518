"""The roofline cost model: monotone in size, 16-padding visible, bounds as a roofline says."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from npu_runtime.cost import estimate, params_for
from npu_runtime.cost.roofline import Cost
from npu_runtime.devices import get_profile, profile_names
from npu_runtime.ops import Spec, get

F16, F32, F64 = np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64)
I8 = np.dtype(np.int8)
DATA = Path(__file__).resolve().parents[3] / "npu_runtime" / "data" / "cost_model.json"


def cost_of(
    op_type: str, shapes: list[tuple[int, ...]], dtype=F16, attrs=None, profile="910B2"
) -> Cost:
    attrs = attrs or {}
    d = get(op_type)
    ins = [Spec(s, dtype) for s in shapes]
    outs = d.infer(ins, attrs)
    return estimate(d.cost(ins, outs, attrs), profile)


def mm(m: int, n: int, k: int, dtype=F16, profile="910B2") -> Cost:
    return cost_of("MatMul", [(m, k), (k, n)], dtype, profile=profile)


@settings(max_examples=60, deadline=None)
@given(
    m=st.integers(1, 3000), n=st.integers(1, 3000), k=st.integers(1, 3000),
    dim=st.sampled_from("mnk"), grow=st.integers(1, 500),
)  # fmt: skip
def test_matmul_time_is_monotone_in_each_dimension(m, n, k, dim, grow) -> None:
    bigger = {"m": (m + grow, n, k), "n": (m, n + grow, k), "k": (m, n, k + grow)}[dim]
    assert mm(*bigger).duration_us >= mm(m, n, k).duration_us


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 1 << 22), grow=st.integers(1, 1 << 20))
def test_vector_time_is_monotone(n: int, grow: int) -> None:
    a, b = cost_of("Gelu", [(n,)]), cost_of("Gelu", [(n + grow,)])
    assert b.duration_us >= a.duration_us


def test_padding_to_16_is_visible() -> None:
    # A K of 1025 pays for a whole extra 16-deep fractal step: the same Cube time as 1040.
    base = mm(4096, 4096, 1024).time_by_unit["cube"]
    over = mm(4096, 4096, 1025).time_by_unit["cube"]
    full = mm(4096, 4096, 1040).time_by_unit["cube"]
    assert over == full > base
    assert over / base == pytest.approx(1040 / 1024)
    # M and N pad too: 17 rows cost as much Cube time as 32
    assert mm(17, 4096, 4096).time_by_unit["cube"] == mm(32, 4096, 4096).time_by_unit["cube"]
    # int8 fractals are 32 deep
    assert (
        mm(4096, 4096, 1040, I8).time_by_unit["cube"]
        == mm(4096, 4096, 1056, I8).time_by_unit["cube"]
    )


def test_large_matmul_runs_near_the_cube_peak() -> None:
    c = mm(8192, 8192, 8192)
    p = get_profile("910B2")
    achieved = c.flops / (c.duration_us * 1e-6)
    eff = params_for("910B2").cube_efficiency
    assert c.bound == "cube" and c.unit == "AI_CORE" and c.block_dim == p.cube_core
    assert achieved == pytest.approx(p.peak_flops["FLOAT16"] * eff, rel=0.01)
    # float32 goes through the half-rate path; int8 doubles
    assert mm(8192, 8192, 8192, F32).duration_us > 1.9 * c.duration_us
    assert mm(8192, 8192, 8192, I8).duration_us < 0.55 * c.duration_us


def test_bounds_are_classified_as_a_roofline_says() -> None:
    add = cost_of("Add", [(1 << 26,), (1 << 26,)])
    assert add.bound == "memory" and add.unit == "AI_VECTOR_CORE" and add.block_dim == 48
    p = get_profile("910B2")
    assert add.duration_us == pytest.approx(
        p.launch_overhead_us + add.bytes_moved / p.effective_bandwidth_Bps * 1e6
    )
    assert cost_of("Relu", [(16,)]).bound == "launch"
    assert mm(16, 16, 16).bound == "launch"
    assert mm(4096, 4096, 4096).bound == "cube"
    # a skinny GEMV moves its matrix once and does little math on it: memory-bound
    assert mm(1, 8192, 8192).bound == "memory"
    # softmax on fp16 does ~5 vector ops per element read: compute (vector) bound? no:
    # 2 bytes in + 2 out per 5 ops is below the vector/HBM balance point, so memory-bound
    assert cost_of("SoftmaxV2", [(4096, 4096)]).bound == "memory"
    attn = cost_of("FlashAttentionScore", [(1, 32, 4096, 128)] * 3, attrs={"head_num": 32})
    assert attn.bound == "cube" and attn.unit == "AI_CORE"
    causal = cost_of(
        "FlashAttentionScore", [(1, 32, 4096, 128)] * 3, attrs={"head_num": 32, "sparse_mode": 3}
    )
    assert 0.45 < causal.duration_us / attn.duration_us < 0.6


def test_float64_runs_on_ai_cpu() -> None:
    c = cost_of("Add", [(1024,), (1024,)], F32)
    d = estimate(get("Add").cost([Spec((1024,), F64)] * 2, [Spec((1024,), F64)], {}), "910B2")
    assert c.unit == "AI_VECTOR_CORE" and d.unit == "AI_CPU" and d.duration_us > c.duration_us


def test_every_record_field_is_consistent() -> None:
    c = mm(1000, 1000, 1000)
    assert c.duration_us == pytest.approx(
        c.time_by_unit["launch"] + max(c.time_by_unit[u] for u in ("cube", "vector", "memory"))
    )
    assert c.flops == 2 * 1000**3 and c.bytes_moved == 3 * 1000 * 1000 * 2


def test_slower_profile_is_slower() -> None:
    assert (
        mm(4096, 4096, 4096, profile="910B4").duration_us
        > mm(4096, 4096, 4096, profile="910B2").duration_us
    )


def test_cost_table_names_real_profiles_and_every_entry_has_a_source() -> None:
    data = json.loads(DATA.read_text())
    canonical = {get_profile(n).name for n in profile_names()}
    assert set(data["profiles"]) <= canonical
    for entries in [data["default"], *data["profiles"].values()]:
        for key, entry in entries.items():
            assert set(entry) == {"value", "source"}, key
            assert entry["source"].startswith(("MODEL:", "INI ")), key
    for name in canonical:
        p = params_for(name)
        assert 0 < p.cube_efficiency <= 1 and 0 < p.vector_efficiency <= 1
