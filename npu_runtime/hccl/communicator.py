"""One HCCL communicator of this rank, without torch: set-up checks, layout, signatures, records.

`process_group.py` moves the data with gloo and calls this for everything else:

    comm = Communicator.create(store, group_rank, global_ranks, group_key)   # checks, layout
    entry = comm.enter("allreduce", shapes, dtype, nbytes, reduce_op="sum")  # or raises
    ... gloo moves the data ...
    entry.join()   # when the program waits: the compute stream waits for the collective
"""

from __future__ import annotations

import json
import os
import sys
import time
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from npu_runtime.core.device import Device
from npu_runtime.hccl import record, world
from npu_runtime.hccl.cost import CommCost, collective_cost
from npu_runtime.hccl.env import HcclSettings, check_env, table
from npu_runtime.hccl.layout import GroupLayout, Member
from npu_runtime.hccl.rank_table import Launch, RankTable, check_against_launch, parse
from npu_runtime.hccl.signature import Exchange, Signature, Store, progress, root_store
from npu_runtime.records import CommInfo, SourceSite, TensorInfo


class HcclInitError(RuntimeError):
    """The communicator cannot be created: wrong HCCL variables or a rank table that does not fit."""


_warned: set[str] = set()


def _warn(message: str) -> None:
    if message not in _warned:
        _warned.add(message)
        sys.stderr.write(f"ascend-lens: warning: {message}\n")


def _env_int(name: str, default: int) -> int:
    raw = os.environ.get(name, "")
    return int(raw) if raw.isdigit() else default


def _launch(device: int) -> Launch:
    group_world = os.environ.get("GROUP_WORLD_SIZE", "")
    return Launch(
        rank=_env_int("RANK", 0),
        world_size=_env_int("WORLD_SIZE", 1),
        local_rank=_env_int("LOCAL_RANK", 0),
        local_world_size=_env_int("LOCAL_WORLD_SIZE", _env_int("WORLD_SIZE", 1)),
        device=device,
        nnodes=int(group_world) if group_world.isdigit() else None,
    )


def _settings_and_table(profile_name: str, device: int) -> tuple[HcclSettings, RankTable | None]:
    """Check the HCCL variables and RANK_TABLE_FILE against the launch; raise what is wrong."""
    report = check_env(os.environ, profile_name)
    for w in report.warnings:
        _warn(w)
    errors = list(report.errors)
    table_path = os.environ.get("RANK_TABLE_FILE")
    rank_table: RankTable | None = None
    if table_path:
        rank_table, problems = parse(table_path)
        for p in problems:
            (_warn if "(HCCL307)" in p else errors.append)(f"RANK_TABLE_FILE {table_path}: {p}")
        if rank_table is not None:
            for p in check_against_launch(rank_table, _launch(device)):
                errors.append(f"RANK_TABLE_FILE {table_path}: {p}")
    for ascend, torch_name in (("RANK_SIZE", "WORLD_SIZE"), ("RANK_ID", "RANK")):
        a, t = os.environ.get(ascend), os.environ.get(torch_name)
        if a is not None and t is not None and a.strip() != t.strip():
            errors.append(f"{ascend}={a} disagrees with the launcher's {torch_name}={t}")
    if errors:
        raise HcclInitError(
            "HCCL communicator initialisation failed (EI0001):\n"
            + "\n".join(f"  {e}" for e in errors)
        )
    return report.settings, rank_table


def _wait_json(store: Store, keys: list[str], timeout_s: float) -> list[Any]:
    store.wait(keys, timedelta(seconds=timeout_s))
    return [json.loads(raw) for raw in store.multi_get(keys)]


@dataclass
class Entry:
    """A collective this rank has entered: its record and how to join it."""

    device: Device | None
    end_us: float
    cost: CommCost | None

    def join(self) -> None:
        if self.device is not None:
            record.join(self.device, self.end_us)
            self.device = None  # once


class Communicator:
    def __init__(
        self,
        store: Store,
        group_rank: int,
        global_ranks: Sequence[int],
        layout: GroupLayout,
        group_id: str,
        name: Callable[[], str],
        settings: HcclSettings,
    ) -> None:
        self.store = store
        self.group_rank = group_rank
        self.global_ranks = tuple(global_ranks)
        self.layout = layout
        self.group_id = group_id
        self._name = name
        self.settings = settings
        span = (
            f"{global_ranks[0]}-{global_ranks[-1]}"
            if len(global_ranks) > 1
            else str(global_ranks[0])
        )
        contiguous = list(global_ranks) == list(range(global_ranks[0], global_ranks[-1] + 1))
        ranks = span if contiguous else ",".join(map(str, global_ranks))
        self.exchange = Exchange(
            store, group_rank, global_ranks, f"group {name()} (ranks {ranks})", self._timeout
        )
        self.calls = 0
        self._costs: dict[tuple[str, int, int | None], CommCost] = {}
        from npu_runtime.core.runtime import get_runtime

        self.profile = get_runtime().profile

    @property
    def name(self) -> str:
        return self._name()

    def _timeout(self) -> float:
        return self.settings.exec_timeout_s

    # -- creation ----------------------------------------------------------------------
    @staticmethod
    def create(
        store: Store,
        group_rank: int,
        global_ranks: Sequence[int],
        group_key: str,
        name: Callable[[], str],
        init_timeout_s: float,
    ) -> Communicator:
        from npu_runtime.core.runtime import get_runtime

        rt = get_runtime()
        dev = record.device(record.default_device_id())
        device_id = dev.id if dev is not None else _env_int("LOCAL_RANK", 0)
        settings, rank_table = _settings_and_table(rt.profile.name, device_id)
        me_global = global_ranks[group_rank]
        server = world.server_id()
        if rank_table is not None and me_global in rank_table.by_rank():
            server = rank_table.by_rank()[me_global].server_id
        w = world.join(
            world.World(
                rank=_env_int("RANK", me_global),
                world_size=_env_int("WORLD_SIZE", len(global_ranks)),
                local_rank=_env_int("LOCAL_RANK", 0),
                server=server,
                device=device_id,
            )
        )
        progress.attach(root_store(store), w.rank, w.world_size)
        timeout = min(init_timeout_s, settings.connect_timeout_s + 20)  # HCCL adds 20 s
        store.set(f"hccl/member/{group_rank}", json.dumps([me_global, server, device_id]))
        if group_rank == 0:
            # HCCL's group id: "<ip>%<nic>_<port>_<n>_<ms>", the same string on every rank.
            addr = os.environ.get("MASTER_ADDR", "127.0.0.1")
            port = os.environ.get("MASTER_PORT", "0")
            now_ms = int(time.time() * 1000)
            store.set("hccl/group_id", f"{addr}%eth0_{port}_{group_key}_{now_ms}")
            store.set("hccl/epoch_us", str(now_ms * 1000))
        keys = [f"hccl/member/{r}" for r in range(len(global_ranks))]
        members = [Member(int(g), str(s), int(d)) for g, s, d in _wait_json(store, keys, timeout)]
        store.wait(["hccl/group_id"], timedelta(seconds=timeout))
        group_id = store.get("hccl/group_id").decode()
        if w.epoch_us is None:
            w.epoch_us = int(store.get("hccl/epoch_us").decode())
        layout = GroupLayout(tuple(members), group_rank, rt.profile.hccs_mesh_size)
        comm = Communicator(store, group_rank, global_ranks, layout, group_id, name, settings)
        world.add_group(world.GroupInfo(group_id, name(), tuple(global_ranks), group_rank))
        return comm

    # -- collectives -------------------------------------------------------------------
    def enter(
        self,
        op: str,
        shapes: list[list[int]],
        dtype: str,
        nbytes: int,
        *,
        device_id: int | None = None,
        root: int | None = None,
        reduce_op: str | None = None,
        splits: tuple[list[int], list[int]] | None = None,
        site: SourceSite | None = None,
        inputs: tuple[TensorInfo, ...] = (),
    ) -> Entry:
        """Check this collective against the other ranks and charge it; raises on mismatch."""
        dev = record.device(device_id)
        arrival = record.arrival_us(dev) if dev is not None else 0.0
        sig = Signature(
            op=op, rank=self.global_ranks[self.group_rank], shapes=shapes, dtype=dtype,
            site=_site_text(site), arrival_us=arrival, root=root, reduce_op=reduce_op,
            in_splits=splits[0] if splits else None, out_splits=splits[1] if splits else None,
        )  # fmt: skip
        sigs = self.exchange.collective(sig)
        start = max(s.arrival_us for s in sigs)
        return self._charge(op, nbytes, dev, arrival, start, site, inputs, peer=None)

    def _charge(
        self,
        op: str,
        nbytes: int,
        dev: Device | None,
        arrival: float,
        start: float,
        site: SourceSite | None,
        inputs: tuple[TensorInfo, ...],
        peer: int | None,
    ) -> Entry:
        self.calls += 1
        if dev is None:
            return Entry(None, 0.0, None)
        spec = table()["ops"][op]
        key = (op, nbytes, peer)
        cost = self._costs.get(key)
        if cost is None:  # training repeats the same sizes every step
            cost = self._costs[key] = collective_cost(
                op, nbytes, self.layout, self.profile,
                level1=self.settings.level1_for(spec["algo_key"]),
                buffsize_bytes=self.settings.buffsize_bytes, peer=peer,
                intra_roce=self.settings.intra_roce,
            )  # fmt: skip
        # torch_npu's op names: hcom_<op>__<last 3 digits of the group hash>_<call>_1
        name = f"hcom_{spec['name']}__{zlib.crc32(self.group_id.encode()) % 1000:03d}_{self.calls - 1}_1"
        info = CommInfo(
            group=self.group_id,
            group_name=self.name,
            global_ranks=self.global_ranks,
            group_rank=self.group_rank,
            algorithm=cost.algorithm,
            transit=tuple((t, b, us) for t, (b, us) in cost.transit.items()),
            links=tuple((r, t, b, us) for r, (t, b, us) in sorted(cost.to_peer.items())),
            p2p=op in ("send", "recv"),
        )
        rec = record.place(
            dev, start, arrival, cost.duration_us, name, spec["op_type"], inputs, site, info,
            int(cost.bytes_sent),
        )  # fmt: skip
        return Entry(dev, rec.end_us, cost)

    # -- point to point ----------------------------------------------------------------
    def post_p2p(
        self, role: str, peer: int, shapes: list[list[int]], dtype: str, device_id: int | None,
        site: SourceSite | None,
    ) -> tuple[Signature, int, float]:  # fmt: skip
        dev = record.device(device_id)
        arrival = record.arrival_us(dev) if dev is not None else 0.0
        sig = Signature(op=role, rank=self.global_ranks[self.group_rank], shapes=shapes,
                        dtype=dtype, site=_site_text(site), arrival_us=arrival)  # fmt: skip
        progress.note(
            f"{role} with rank {self.global_ranks[peer]} on {self.exchange.label} at {sig.site}"
        )
        n = self.exchange.post_p2p(sig, peer, role)
        return sig, n, arrival

    def finish_p2p(
        self, role: str, peer: int, sig: Signature, n: int, arrival: float, nbytes: int,
        device_id: int | None, site: SourceSite | None, inputs: tuple[TensorInfo, ...],
    ) -> Entry:  # fmt: skip
        theirs = self.exchange.await_p2p(sig, peer, role, n)
        start = max(arrival, theirs.arrival_us)
        return self._charge(
            role, nbytes, record.device(device_id), arrival, start, site, inputs, peer
        )


def _site_text(site: SourceSite | None) -> str:
    if site is None:
        return ""
    return f"{os.path.basename(site.file)}:{site.line}"
