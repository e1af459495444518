"""This process's place in the distributed job, for the parts that are not torch.

The process group fills it when communicators are created; the profiler reads it to name
the rank directory (`profiler_info_<rank>.json`), to list the communicators in
`profiler_metadata.json` and to share one time origin between ranks.
"""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass, field


@dataclass(frozen=True)
class GroupInfo:
    """One communicator as msprof-analyze names it."""

    group_id: str  # HCCL's group id ("<ip>%<nic>_<port>_<n>_<ms>"), the parallel_group_info key
    name: str  # torch's group description ("default_group", a user's group_desc, ...)
    global_ranks: tuple[int, ...]
    group_rank: int


@dataclass
class World:
    rank: int
    world_size: int
    local_rank: int
    server: str
    device: int
    epoch_us: int | None = None  # a wall-clock origin shared by every rank
    groups: dict[str, GroupInfo] = field(default_factory=dict)


_world: World | None = None


def current() -> World | None:
    """The job this process belongs to, once a communicator exists (else None)."""
    return _world


def join(world: World) -> World:
    global _world
    if _world is None:
        _world = world
    return _world


def add_group(info: GroupInfo) -> None:
    if _world is not None:
        _world.groups[info.group_id] = info


def env_rank() -> int | None:
    """RANK from the launcher, when this process is one rank of several."""
    raw = os.environ.get("RANK")
    size = os.environ.get("WORLD_SIZE")
    if raw is None or size is None or not raw.isdigit() or not size.isdigit() or int(size) < 2:
        return None
    return int(raw)


def server_id() -> str:
    """Which 'machine' this rank is on: NPU_SERVER_ID, else the host (and node, under torchrun)."""
    explicit = os.environ.get("NPU_SERVER_ID")
    if explicit:
        return explicit
    node = os.environ.get("GROUP_RANK")
    host = socket.gethostname()
    return host if node in (None, "") else f"{host}#node{node}"


def reset() -> None:
    """Forget the job (tests)."""
    global _world
    _world = None
