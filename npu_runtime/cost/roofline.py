"""Price an op's Work on a device profile: a roofline over Cube, Vector and HBM, plus launch.

- Cube: each AI Core retires one M x K x N fractal (16 x 16 x 16; 16 x 32 x 16 for int8)
  per step at the dtype's peak. Matrices are cut into fractals, so a dimension that is not
  a multiple of the fractal pays for the padding; output tiles are spread over the Cube
  cores in waves, and each tile takes ceil(K / fractal K) steps.
- Vector: element operations at the profile's vector throughput for the dtype, spread
  over the vector cores.
- Memory: bytes read and written once at the achievable HBM bandwidth.
- The three overlap in a pipelined kernel, so the op takes the slowest of them plus the
  launch overhead; `bound` names the slowest, or "launch" when the overhead dominates.

All efficiencies come from cost_model.json; all hardware figures from devices.json.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache

import numpy as np

from npu_runtime import numerics
from npu_runtime.cost.params import CostParams, params_for
from npu_runtime.devices import DeviceProfile, get_profile
from npu_runtime.ops.registry import Work
from npu_runtime.records import Bound, Unit

_F64 = np.dtype(np.float64)


@dataclass(frozen=True, slots=True)
class Cost:
    """Simulated timing of one op, in the fields `core.launch.submit` expects."""

    duration_us: float
    bound: Bound
    unit: Unit
    block_dim: int
    time_by_unit: dict[str, float] = field(default_factory=dict)
    bytes_moved: int = 0
    flops: int = 0


def _ceil(a: int, b: int) -> int:
    return -(-a // b)


def _rate(table: dict[str, float], msprof: str) -> float:
    """A per-dtype figure, falling back to fp16 then fp32 for types the table omits."""
    for key in (msprof, "FLOAT16", "FLOAT"):
        if key in table:
            return table[key]
    return next(iter(table.values()))


def cube_time_us(work: Work, prof: DeviceProfile, params: CostParams) -> tuple[float, int]:
    """(microseconds, block_dim) of the Cube part."""
    if not work.matmuls:
        return 0.0, 0
    msprof = numerics.msprof_name(work.dtype)
    fm, fk, fn = params.fractal(msprof)
    cores = max(prof.cube_core, 1)
    # fractal steps per second per core, from the dtype's whole-chip peak
    step_rate = _rate(prof.peak_flops, msprof) / (2 * fm * fk * fn) / cores
    steps = 0
    tiles_max = 0
    for mm in work.matmuls:
        tiles = mm.batch * _ceil(mm.m, fm) * _ceil(mm.n, fn)
        steps += _ceil(tiles, cores) * _ceil(mm.k, fk)
        tiles_max = max(tiles_max, tiles)
    return steps / step_rate / params.cube_efficiency * 1e6, min(cores, tiles_max)


def vector_time_us(work: Work, prof: DeviceProfile, params: CostParams) -> tuple[float, int]:
    """(microseconds, block_dim) of the Vector part."""
    cores = prof.vector_core or prof.ai_core  # coupled cores (910A) run vector work themselves
    by_bytes = _ceil(max(work.bytes_moved, 1), params.vector_min_bytes_per_core)
    block_dim = max(1, min(cores, by_bytes))
    if not work.vector_ops:
        return 0.0, block_dim
    rate = _rate(prof.vector_ops_per_s, numerics.msprof_name(work.dtype))
    ops = _ceil(work.vector_ops, cores) * cores  # whole vector lanes per core
    return ops / (rate * params.vector_efficiency) * 1e6, block_dim


def estimate(work: Work, profile: str | DeviceProfile | None = None) -> Cost:
    """The simulated Cost of `work` on `profile` (a name, a DeviceProfile, or the default)."""
    prof = profile if isinstance(profile, DeviceProfile) else get_profile(profile)
    params = params_for(prof.name)
    memory = work.bytes_moved / prof.effective_bandwidth_Bps * 1e6
    if work.unit == "aicpu" or work.dtype == _F64:  # AI Cores have no float64 datapath
        elems = work.vector_ops or work.bytes_moved // max(work.dtype.itemsize, 1)
        scalar = elems / params.aicpu_elements_per_us
        launch = params.aicpu_launch_us
        busy = max(scalar, memory)
        return Cost(
            launch + busy,
            "aicpu" if busy > launch else "launch",
            "AI_CPU",
            1,
            {"scalar": scalar, "memory": memory, "launch": launch},
            work.bytes_moved,
            work.flops,
        )
    cube, cube_blocks = cube_time_us(work, prof, params)
    vector, vec_blocks = vector_time_us(work, prof, params)
    launch = prof.launch_overhead_us
    times = {"cube": cube, "vector": vector, "memory": memory, "launch": launch}
    slowest = max(("cube", "vector", "memory"), key=times.__getitem__)
    bound: Bound = slowest if times[slowest] > launch else "launch"  # type: ignore[assignment]
    if work.unit == "cube" or prof.vector_core == 0:
        unit: Unit = "AI_CORE"
        block_dim = max(cube_blocks, 1)
    else:
        unit = "AI_VECTOR_CORE"
        block_dim = vec_blocks
    return Cost(
        launch + times[slowest],
        bound,
        unit,
        block_dim,
        times,
        work.bytes_moved,
        work.flops,
    )


@cache
def default_profile() -> DeviceProfile:
    return get_profile(None)
