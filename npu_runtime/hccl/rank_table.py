"""HCCL rank tables (RANK_TABLE_FILE) at run time: parsed, checked, and held against the launch.

The language server checks a rank table as text (HCCL3xx rules, with positions); here the
same facts are checked when ranks start, where the launch is known too: the table must
list as many ranks as the job has, give this rank the device it really uses, and put as
many ranks on each server as were started there. Each problem names the rule code the
language server uses for the same mistake, so `docs/rules/` explains it.

Rank tables store numbers as decimal strings ("device_id": "0"); both forms are accepted.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from npu_runtime.hccl.layout import Member


class RankTableError(RuntimeError):
    """The rank table cannot be used for this launch; the message lists every problem."""


@dataclass(frozen=True)
class RankEntry:
    rank: int
    server_id: str
    device_id: int
    device_ip: str


@dataclass(frozen=True)
class RankTable:
    path: str
    server_count: int | None
    servers: list[str]  # server_id in table order
    entries: list[RankEntry]  # in table order
    status: str | None

    def by_rank(self) -> dict[int, RankEntry]:
        return {e.rank: e for e in self.entries}

    def members(self) -> list[Member]:
        """The world as the table lays it out, in rank order."""
        return [
            Member(e.rank, e.server_id, e.device_id)
            for e in sorted(self.entries, key=lambda e: e.rank)
        ]


def _int(v: Any) -> int | None:
    if isinstance(v, int) and not isinstance(v, bool) and v >= 0:
        return v
    if isinstance(v, str) and v.isascii() and v.isdigit():
        return int(v)
    return None


def parse(path: str | Path) -> tuple[RankTable | None, list[str]]:
    """Read a rank table; returns it (None when unusable) and the problems found in it."""
    problems: list[str] = []
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        return None, [f"cannot read the rank table {path}: {exc.strerror or exc}"]
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        return None, [f"{path}:{exc.lineno}:{exc.colno}: invalid JSON: {exc.msg} (HCCL301)"]
    if not isinstance(doc, dict) or not isinstance(doc.get("server_list"), list):
        return None, [f"{path}: no server_list array: not a v1.0 rank table (HCCL302)"]
    entries: list[RankEntry] = []
    servers: list[str] = []
    for s_index, server in enumerate(doc["server_list"]):
        if not isinstance(server, dict):
            problems.append(f"server_list[{s_index}] is not an object (HCCL302)")
            continue
        sid = str(server.get("server_id", ""))
        if not sid:
            problems.append(f"server_list[{s_index}] has no server_id (HCCL302)")
        servers.append(sid)
        seen: dict[int, int] = {}
        for d_index, dev in enumerate(server.get("device") or []):
            where = f"server_list[{s_index}].device[{d_index}]"
            if not isinstance(dev, dict):
                problems.append(f"{where} is not an object (HCCL302)")
                continue
            rank, device = _int(dev.get("rank_id")), _int(dev.get("device_id"))
            if rank is None or device is None:
                problems.append(f"{where} needs a non-negative rank_id and device_id (HCCL302)")
                continue
            if device in seen:
                problems.append(
                    f"{where}: device_id {device} is already used by server_list[{s_index}]"
                    f".device[{seen[device]}] on the same server (HCCL304)"
                )
            seen[device] = d_index
            entries.append(RankEntry(rank, sid, device, str(dev.get("device_ip", ""))))
    count = _int(doc.get("server_count"))
    if count is not None and count != len(servers):
        problems.append(
            f"server_count is {count} but server_list has {len(servers)} entries (HCCL305)"
        )
    ranks = sorted(e.rank for e in entries)
    if ranks != list(range(len(ranks))):
        dup = sorted({r for r in ranks if ranks.count(r) > 1})
        missing = sorted(set(range(len(ranks))) - set(ranks))
        detail = "; ".join(
            ([f"repeated: {dup}"] if dup else []) + ([f"missing: {missing}"] if missing else [])
        )
        problems.append(
            f"rank ids must run 0..{len(ranks) - 1} without repeats ({detail}) (HCCL303)"
        )
    status = doc.get("status")
    if status is not None and status != "completed":
        problems.append(f'status is {status!r}, expected "completed" (HCCL307)')
    return RankTable(
        str(path), count, servers, entries, status if isinstance(status, str) else None
    ), problems


@dataclass(frozen=True)
class Launch:
    """What the launcher started, from the torchrun variables."""

    rank: int
    world_size: int
    local_rank: int
    local_world_size: int
    device: int  # the device this rank uses
    nnodes: int | None  # GROUP_WORLD_SIZE, when the launcher set it


def check_against_launch(table: RankTable, launch: Launch) -> list[str]:
    """Where the table and the launch disagree, one sentence each."""
    out: list[str] = []
    n = len(table.entries)
    if n != launch.world_size:
        out.append(f"the rank table lists {n} ranks but the job has WORLD_SIZE={launch.world_size}")
    mine = table.by_rank().get(launch.rank)
    if mine is None:
        out.append(f"rank {launch.rank} is not in the rank table")
    else:
        if mine.device_id != launch.device:
            out.append(
                f"the rank table gives rank {launch.rank} device_id {mine.device_id} on server "
                f"{mine.server_id}, but this process runs on device {launch.device}"
            )
        on_server = sum(1 for e in table.entries if e.server_id == mine.server_id)
        if on_server != launch.local_world_size:
            out.append(
                f"the rank table puts {on_server} ranks on server {mine.server_id}, but "
                f"{launch.local_world_size} were started there (LOCAL_WORLD_SIZE)"
            )
    if launch.nnodes is not None and len(table.servers) != launch.nnodes:
        out.append(
            f"the rank table lists {len(table.servers)} servers but the job runs on {launch.nnodes} nodes"
        )
    return out
