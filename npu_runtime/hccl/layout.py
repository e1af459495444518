"""Where the ranks of a communicator sit: servers, HCCS meshes inside a server, devices.

HCCL builds its algorithms level by level (torch_npu / HCCL docs: level0 inside a server,
level1 between servers). The emulator splits a server once more where the profile's HCCS
full mesh is smaller than the server (910A: two meshes of four joined by PCIe), so a
communicator is up to three levels, innermost first:

    HCCS  the ranks of one full mesh (one link to each peer)
    PCIE  the meshes of one server
    RDMA  the servers (RoCE, one port per device)
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

Transport = Literal["HCCS", "PCIE", "RDMA"]


@dataclass(frozen=True, slots=True)
class Member:
    """One rank of the world: its global rank, the server it runs on and its device there."""

    rank: int
    server: str
    device: int


@dataclass(frozen=True, slots=True)
class Level:
    """One level of a communicator as seen from one rank: its size and that rank's peers."""

    transport: Transport
    size: int  # ranks taking part at this level (the largest group, when servers differ)
    peers: tuple[int, ...]  # group ranks this rank talks to at this level, itself included
    index: int  # this rank's position among `peers`


@dataclass(frozen=True)
class GroupLayout:
    """A communicator: its members in group-rank order and which of them is this process."""

    members: tuple[Member, ...]
    me: int  # group rank of this process
    mesh_size: int  # devices in one HCCS full mesh (device profile)

    @property
    def size(self) -> int:
        return len(self.members)

    @property
    def servers(self) -> list[str]:
        """Server ids in order of first appearance."""
        return list(dict.fromkeys(m.server for m in self.members))

    def _domain(self, m: Member) -> tuple[str, int]:
        return (m.server, m.device // self.mesh_size if self.mesh_size > 1 else m.device)

    def levels(self) -> list[Level]:
        """The levels with more than one participant, innermost first."""
        mine = self.members[self.me]
        domain = self._domain(mine)
        in_domain = [i for i, m in enumerate(self.members) if self._domain(m) == domain]
        pos_in_domain = in_domain.index(self.me)
        by_domain: dict[tuple[str, int], list[int]] = {}
        for i, m in enumerate(self.members):
            by_domain.setdefault(self._domain(m), []).append(i)
        out: list[Level] = []
        if len(in_domain) > 1 and self.mesh_size > 1:
            size = max(len(v) for v in by_domain.values())
            out.append(Level("HCCS", size, tuple(in_domain), pos_in_domain))
            index_key = pos_in_domain
        else:
            # No HCCS between these ranks: every device of the server is its own domain.
            by_domain = {(m.server, i): [i] for i, m in enumerate(self.members)}
            domain = (mine.server, self.me)
            index_key = 0
        # Same position in each domain of my server (one PCIe ring per position).
        same_server = [d for d in by_domain if d[0] == mine.server]
        pcie = [by_domain[d][index_key] for d in same_server if index_key < len(by_domain[d])]
        if len(pcie) > 1:
            per_server = _count_by(d[0] for d in by_domain)
            out.append(Level("PCIE", max(per_server.values()), tuple(pcie), pcie.index(self.me)))
        # Same local position on every server (one RoCE ring or tree per position).
        local = [i for i, m in enumerate(self.members) if m.server == mine.server]
        my_local = local.index(self.me)
        rdma = []
        for server in self.servers:
            ranks = [i for i, m in enumerate(self.members) if m.server == server]
            if my_local < len(ranks):
                rdma.append(ranks[my_local])
        if len(rdma) > 1:
            out.append(Level("RDMA", len(self.servers), tuple(rdma), rdma.index(self.me)))
        return out

    def transport_to(self, peer: int) -> Transport | Literal["LOCAL"]:
        """The link a point-to-point transfer from this rank to group rank `peer` takes."""
        if peer == self.me:
            return "LOCAL"
        a, b = self.members[self.me], self.members[peer]
        if a.server != b.server:
            return "RDMA"
        if self.mesh_size > 1 and self._domain(a) == self._domain(b):
            return "HCCS"
        return "PCIE"


def _count_by(keys: Iterable[str]) -> dict[str, int]:
    return dict(Counter(keys))


def single_server(size: int, me: int, mesh_size: int, server: str = "server0") -> GroupLayout:
    """`size` ranks on devices 0..size-1 of one server (benchmarks, tests, the launcher)."""
    return GroupLayout(tuple(Member(r, server, r) for r in range(size)), me, mesh_size)
