"""What a collective would cost on the device profile's links: an alpha-beta model per level.

Each level of the communicator (layout.py: HCCS mesh, PCIe inside a server, RoCE between
servers) runs one algorithm; a step costs the link's latency and the bytes cost the link's
achievable rate. Hierarchical collectives compose the levels as HCCL does: an all-reduce
reduce-scatters inside the mesh, all-reduces the 1/p shard across the outer levels, then
all-gathers inside the mesh again. Messages larger than HCCL_BUFFSIZE go in several
rounds, each paying the latencies again (HCCL stages data through that buffer).

    mesh   one step, each peer over its own link       (HCCS full mesh, HCCL level0)
    ring   p-1 steps to the next rank                    (PCIe, HCCL_ALGO level1:ring)
    H-D_R  recursive halving/doubling, log2 p steps, an extra exchange when p is not a
           power of two; NHR/NHR_V1/NB/AHC: log steps without it; pairwise: p-1 steps
    pipeline  outer and inner levels overlap: latencies add, transfer times do not

Sizes follow hccl_test's data_size: the tensor for all_reduce and broadcast, the full
gathered (or scattered) buffer for all_gather and reduce_scatter, one rank's input for
all_to_all, the message for send/recv.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Literal

from npu_runtime.devices import DeviceProfile
from npu_runtime.hccl.layout import GroupLayout, Level, Transport

OpKind = Literal[
    "allreduce", "allgather", "reducescatter", "broadcast", "alltoall", "send", "recv",
    "barrier", "reduce", "gather", "scatter",
]  # fmt: skip
LEVEL1_ALGORITHMS = ("ring", "H-D_R", "NHR", "NHR_V1", "NB", "AHC", "pipeline", "pairwise")
_LOG_STEP = ("NHR", "NHR_V1", "NB", "AHC")
_PIPELINE_OPS = ("allreduce", "reducescatter", "allgather")
BARRIER_BYTES = 8  # torch_npu's barrier is an all-reduce of one small tensor


@dataclass(frozen=True, slots=True)
class Link:
    """A level's link figures: achievable rate and latency per algorithm step."""

    transport: Transport
    Bps: float
    latency_us: float

    @property
    def bytes_per_us(self) -> float:
        return self.Bps / 1e6


@dataclass
class Phase:
    """One level's share of a collective, from this rank's point of view."""

    transport: Transport
    algorithm: str
    alpha_us: float = 0.0  # latency part (repeated per HCCL_BUFFSIZE round)
    beta_us: float = 0.0  # transfer part
    bytes_sent: float = 0.0
    to_peer: dict[int, float] = field(default_factory=dict)  # group rank -> bytes sent


@dataclass(frozen=True)
class CommCost:
    """The simulated cost of one collective on one rank."""

    op: str
    algorithm: str  # per level, innermost first: "mesh", "mesh+H-D_R", "ring", ...
    duration_us: float
    rounds: int  # HCCL_BUFFSIZE rounds
    transit: dict[str, tuple[float, float]]  # transport -> (bytes sent, transfer µs)
    to_peer: dict[int, tuple[str, float, float]]  # group rank -> (transport, bytes, µs)

    @property
    def bytes_sent(self) -> float:
        return sum(b for b, _ in self.transit.values())


def link(profile: DeviceProfile, transport: Transport) -> Link:
    """The achievable figures of one kind of link on `profile`."""
    eff = profile.link_efficiency
    if transport == "HCCS":
        return Link("HCCS", profile.hccs_link_Bps * eff, profile.hccs_latency_us)
    if transport == "PCIE":
        # Between HCCS meshes of one server the data crosses PCIe as SDMA copies.
        return Link("PCIE", profile.memcpy_h2d_Bps * eff, profile.memcpy_overhead_us)
    return Link("RDMA", profile.roce_Bps * eff, profile.roce_latency_us)


def level_algorithm(op: str, level: Level, profile: DeviceProfile, level1: str | None) -> str:
    """The algorithm HCCL runs at `level` for `op` (`level1` = the HCCL_ALGO choice, if any)."""
    if level.transport == "HCCS":
        return "mesh"  # HCCL_ALGO level0 only accepts NA: the mesh is HCCL's own choice
    if level.transport == "PCIE":
        return "ring"
    base = "alltoall" if op == "alltoall" else op
    if level1 is not None:
        if level1 == "pairwise" and base != "alltoall":
            level1 = None  # pairwise serves only AlltoAll(V/VC); HCCL falls back
        elif level1 == "pipeline" and base not in _PIPELINE_OPS:
            level1 = None  # pipeline serves AllReduce/ReduceScatter/AllGather only
    if level1 is not None:
        return level1
    if base == "alltoall":
        return "pairwise"
    pow2 = level.size & (level.size - 1) == 0
    return profile.hccl_level1_default["pow2" if pow2 else "other"]


def _log2(p: int) -> int:
    return max(1, math.ceil(math.log2(p)))


def _spread(level: Level, algo: str, total: float) -> dict[int, float]:
    """Bytes sent to each peer of the level when `total` bytes leave this rank."""
    others = [r for i, r in enumerate(level.peers) if i != level.index]
    if not others or total <= 0:
        return {}
    if algo == "mesh":
        return {r: total / len(others) for r in others}
    if algo in ("ring", "pairwise"):
        nxt = level.peers[(level.index + 1) % len(level.peers)]
        return {nxt: total} if algo == "ring" else {r: total / len(others) for r in others}
    # Halving/doubling and the log-step families: partner at distance 2^k gets half, then a
    # quarter, ... of the data.
    out: dict[int, float] = {}
    share, k, p = total, 0, len(level.peers)
    while (1 << k) < p:
        partner = level.peers[(level.index ^ (1 << k)) % p]
        if partner != level.peers[level.index]:
            share /= 2
            out[partner] = out.get(partner, 0.0) + share
        k += 1
    scale = total / sum(out.values()) if out else 0.0
    return {r: b * scale for r, b in out.items()}


def _scatter_gather(level: Level, algo: str, n: float, lk: Link) -> Phase:
    """One reduce-scatter (or all-gather) of an `n`-byte buffer at one level."""
    p = level.size
    sent = n * (p - 1) / p
    ph = Phase(lk.transport, algo, bytes_sent=sent)
    if algo == "mesh" and lk.transport == "HCCS":  # a link to each peer, all busy at once
        ph.alpha_us, ph.beta_us = lk.latency_us, n / p / lk.bytes_per_us
    elif algo == "mesh":  # the same exchange through one port (RoCE inside the server)
        ph.alpha_us, ph.beta_us = lk.latency_us, sent / lk.bytes_per_us
    elif algo in ("ring", "pairwise"):
        ph.alpha_us, ph.beta_us = (p - 1) * lk.latency_us, sent / lk.bytes_per_us
    elif algo == "H-D_R":
        steps = _log2(p)
        extra = 0.0 if p & (p - 1) == 0 else n / 2  # fold the ranks beyond the power of two
        ph.alpha_us = (steps + (0 if extra == 0 else 1)) * lk.latency_us
        ph.bytes_sent = sent + extra
        ph.beta_us = ph.bytes_sent / lk.bytes_per_us
    else:  # NHR, NB, AHC, pipeline (per level), NHR_V1
        steps = _log2(p) if algo != "NHR_V1" else max(1, math.ceil(math.sqrt(p)))
        ph.alpha_us, ph.beta_us = steps * lk.latency_us, sent / lk.bytes_per_us
    ph.to_peer = _spread(level, algo, ph.bytes_sent)
    return ph


def _broadcast(level: Level, algo: str, n: float, lk: Link) -> Phase:
    p = level.size
    if algo == "ring":  # pipelined chain: p-1 hops, the message crosses each link once
        ph = Phase(lk.transport, algo, (p - 1) * lk.latency_us, n / lk.bytes_per_us, n)
    else:  # scatter then all-gather (mesh and the log-step families)
        sg = _scatter_gather(level, algo, n, lk)
        ph = Phase(lk.transport, algo, 2 * sg.alpha_us, 2 * sg.beta_us, 2 * sg.bytes_sent)
    ph.to_peer = _spread(level, algo, ph.bytes_sent)
    return ph


def _alltoall(level: Level, algo: str, crossing: float, lk: Link) -> Phase:
    """`crossing` bytes leave this rank through this level's links."""
    p = level.size
    ph = Phase(lk.transport, algo, bytes_sent=crossing)
    if algo == "mesh" and lk.transport == "HCCS":
        ph.alpha_us, ph.beta_us = lk.latency_us, crossing / max(1, p - 1) / lk.bytes_per_us
    elif algo == "mesh":  # through one port
        ph.alpha_us, ph.beta_us = lk.latency_us, crossing / lk.bytes_per_us
    elif algo in ("ring", "pairwise"):
        ph.alpha_us, ph.beta_us = (p - 1) * lk.latency_us, crossing / lk.bytes_per_us
    else:
        ph.alpha_us, ph.beta_us = _log2(p) * lk.latency_us, crossing / lk.bytes_per_us
    ph.to_peer = _spread(level, "pairwise" if algo != "ring" else algo, crossing)
    return ph


def _phases(
    op: str, n: float, levels: list[Level], algos: list[str], links: list[Link]
) -> list[Phase]:
    """The phases of `op` over `levels` (innermost first) in the order HCCL runs them."""
    if not levels:
        return []
    lv, algo, lk, rest = levels[0], algos[0], links[0], (levels[1:], algos[1:], links[1:])
    p = lv.size
    if op == "allreduce":
        return [_scatter_gather(lv, algo, n, lk), *_phases("allreduce", n / p, *rest),
                _scatter_gather(lv, algo, n, lk)]  # fmt: skip
    if op == "reducescatter":
        return [_scatter_gather(lv, algo, n, lk), *_phases("reducescatter", n / p, *rest)]
    if op == "allgather":
        return [*_phases("allgather", n / p, *rest), _scatter_gather(lv, algo, n, lk)]
    if op == "broadcast":
        return [*_phases("broadcast", n, *rest), _broadcast(lv, algo, n, lk)]
    raise ValueError(f"no hierarchical schedule for {op!r}")


def collective_cost(
    op: OpKind | str,
    nbytes: int,
    layout: GroupLayout,
    profile: DeviceProfile,
    *,
    level1: str | None = None,
    buffsize_bytes: int = 200 * 2**20,
    peer: int | None = None,
    intra_roce: bool = False,
) -> CommCost:
    """The simulated cost of `op` on `nbytes` for the rank `layout.me` of `layout`.

    `level1` is the server-level algorithm HCCL_ALGO asks for (None: the profile's own
    choice); `peer` is the other group rank of a send or recv; `intra_roce` sends the
    traffic inside a server over each device's RoCE port too (HCCL_INTRA_ROCE_ENABLE=1).
    """
    levels = layout.levels()

    def wire(t: Transport) -> Link:
        return link(profile, "RDMA" if intra_roce else t)

    kind = {"barrier": "allreduce", "reduce": "allreduce", "gather": "allgather",
            "scatter": "reducescatter"}.get(op, op)  # fmt: skip
    n = float(BARRIER_BYTES if op == "barrier" else nbytes)
    phases: list[Phase]
    if kind in ("send", "recv"):
        if peer is None:
            raise ValueError(f"{op} needs the peer rank")
        transport = layout.transport_to(peer)
        if transport == "LOCAL":
            phases = []
        else:
            lk = wire(transport)
            transport = lk.transport
            phases = [Phase(transport, "p2p", lk.latency_us, n / lk.bytes_per_us, n if kind == "send" else 0.0,
                            {peer: n} if kind == "send" else {})]  # fmt: skip
    elif kind == "alltoall":
        phases = []
        inner = 1
        for lv in levels:
            algo = level_algorithm(op, lv, profile, level1)
            crossing = n * inner * (lv.size - 1) / layout.size
            phases.append(_alltoall(lv, algo, crossing, wire(lv.transport)))
            inner *= lv.size
    else:
        algos = [level_algorithm(kind, lv, profile, level1) for lv in levels]
        phases = _phases(kind, n, levels, algos, [wire(lv.transport) for lv in levels])
    return _total(op, n, phases, profile, buffsize_bytes, layout)


def _total(
    op: str,
    n: float,
    phases: list[Phase],
    profile: DeviceProfile,
    buffsize: int,
    layout: GroupLayout,
) -> CommCost:
    rounds = max(1, math.ceil(n / buffsize)) if buffsize > 0 else 1
    alpha = sum(ph.alpha_us for ph in phases)
    if any(ph.algorithm == "pipeline" for ph in phases):
        beta = max((ph.beta_us for ph in phases), default=0.0)  # the levels overlap
    else:
        beta = sum(ph.beta_us for ph in phases)
    duration = profile.hccl_op_overhead_us + rounds * alpha + beta
    transit: dict[str, tuple[float, float]] = {}
    to_peer: dict[int, tuple[str, float, float]] = {}
    for ph in phases:
        b, t = transit.get(ph.transport, (0.0, 0.0))
        transit[ph.transport] = (b + ph.bytes_sent, t + ph.beta_us)
        for r, nb in ph.to_peer.items():
            share = ph.beta_us * nb / ph.bytes_sent if ph.bytes_sent else 0.0
            _, b0, t0 = to_peer.get(r, (ph.transport, 0.0, 0.0))
            to_peer[r] = (ph.transport, b0 + nb, t0 + share)
    algorithm = "+".join(dict.fromkeys(ph.algorithm for ph in phases)) or "local"
    return CommCost(op, algorithm, duration, rounds, transit, to_peer)


def bus_bandwidth(op: str, nbytes: int, duration_us: float, size: int) -> float:
    """nccl-tests' bus bandwidth (bytes/s) from the algorithm bandwidth, for comparisons."""
    algbw = nbytes / (duration_us * 1e-6) if duration_us > 0 else 0.0
    factor = {"allreduce": 2 * (size - 1) / size, "allgather": (size - 1) / size,
              "reducescatter": (size - 1) / size, "alltoall": (size - 1) / size}.get(op, 1.0)  # fmt: skip
    return algbw * factor
