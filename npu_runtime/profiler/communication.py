"""The communication files of a rank's `*_ascend_pt/` directory, from its collective records.

`communication.json` (per step: each collective's time split into wait, transfer and idle,
and its bandwidth per link type) and `communication_matrix.json` (per step and op type:
bytes and time on each src-dst link of the communicator) are written as torch_npu writes
them and msprof-analyze 26.2.0 reads them (../shared/reference/interop/msprof-analyze.md
§3.4-3.5): op keys `<op name>@<double hash of the HCCL group id>`, times in ms, sizes in
MB, a `Total Op Info` in every step, links in group-local ranks with the self link kept.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

from npu_runtime.records import WorkRecord

MB = 2**20
LARGE_PACKET_MB = 1.0  # transfers of at least this size count as large packets
TRANSPORTS = ("RDMA", "HCCS", "PCIE", "SDMA")


def double_hash(text: str) -> str:
    """msprof-analyze's group key: two 32-bit polynomial hashes (29 and 131), joined."""
    h0 = h1 = 0
    for c in text:
        h0 = (h0 * 29 + ord(c)) % 2**32
        h1 = (h1 * 131 + ord(c)) % 2**32
    return str((h0 << 32) | h1)


def comm_records(records: Iterable[WorkRecord]) -> list[WorkRecord]:
    return [r for r in records if r.kind == "comm" and r.comm is not None]


def _r(x: float, nd: int = 4) -> float:
    return round(x, nd)


def _bandwidth(size_mb: float, time_ms: float) -> float:
    return _r(size_mb / time_ms) if time_ms > 0 else 0.0


def _link_stats(transfers: Sequence[tuple[float, float]]) -> dict[str, Any]:
    """(bytes, µs) transfers on one link type -> msprof's bandwidth entry."""
    size = sum(b for b, _ in transfers) / MB
    time_ms = sum(t for _, t in transfers) / 1000
    dist: dict[str, list[float]] = {}
    for b, t in transfers:
        key = repr(round(b / MB, 6))
        n, tt = dist.get(key, [0, 0.0])
        dist[key] = [n + 1, _r(tt + t / 1000)]
    large = sum(1 for b, _ in transfers if b / MB >= LARGE_PACKET_MB)
    return {
        "Transit Size(MB)": _r(size, 6),
        "Transit Time(ms)": _r(time_ms),
        "Bandwidth(GB/s)": _bandwidth(size, time_ms),
        "Large Packet Ratio": _r(large / len(transfers)) if transfers else 0,
        "Size Distribution": dist,
    }


def _bandwidth_info(recs: Sequence[WorkRecord]) -> dict[str, Any]:
    by_link: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for r in recs:
        assert r.comm is not None
        for transport, nbytes, us in r.comm.transit:
            if nbytes > 0:
                by_link[transport].append((nbytes, us))
                if transport in ("HCCS", "PCIE"):  # SDMA = the on-server copy engines
                    by_link["SDMA"].append((nbytes, us))
    return {t: _link_stats(by_link.get(t, [])) for t in TRANSPORTS}


def _time_info(recs: Sequence[WorkRecord], epoch_us: int) -> dict[str, Any]:
    start = min(r.start_us - r.wait_us for r in recs)
    elapse = sum(r.wait_us + r.duration_us for r in recs) / 1000
    wait = sum(r.wait_us for r in recs) / 1000
    transit = sum(sum(us for _, _, us in r.comm.transit) for r in recs if r.comm) / 1000
    idle = max(0.0, elapse - wait - transit)
    return {
        "Start Timestamp(us)": round(epoch_us + start, 3),
        "Elapse Time(ms)": _r(elapse),
        "Transit Time(ms)": _r(transit),
        "Wait Time(ms)": _r(wait),
        "Synchronization Time(ms)": _r(wait),
        "Idle Time(ms)": _r(idle),
        "Wait Time Ratio": _r(wait / (wait + transit)) if wait + transit > 0 else 0,
        "Synchronization Time Ratio": _r(wait / (wait + transit)) if wait + transit > 0 else 0,
    }


def _op_entry(recs: Sequence[WorkRecord], epoch_us: int) -> dict[str, Any]:
    return {
        "Communication Time Info": _time_info(recs, epoch_us),
        "Communication Bandwidth Info": _bandwidth_info(recs),
    }


def _by_step(recs: Sequence[WorkRecord]) -> dict[int, list[WorkRecord]]:
    out: dict[int, list[WorkRecord]] = defaultdict(list)
    for r in recs:
        out[r.step + 1].append(r)
    return dict(sorted(out.items()))


def communication(records: Sequence[WorkRecord], epoch_us: int) -> dict[str, Any]:
    """communication.json for one rank."""
    doc: dict[str, Any] = {}
    for step, recs in _by_step(comm_records(records)).items():
        sections: dict[str, dict[str, Any]] = {"collective": {}, "p2p": {}}
        for r in recs:
            assert r.comm is not None
            section = sections["p2p" if r.comm.p2p else "collective"]
            section[f"{r.name}@{double_hash(r.comm.group)}"] = _op_entry([r], epoch_us)
        for kind in ("collective", "p2p"):
            mine = [r for r in recs if r.comm is not None and r.comm.p2p == (kind == "p2p")]
            if mine:
                sections[kind]["Total Op Info"] = _op_entry(mine, epoch_us)
        if not sections["collective"]:
            # compare reads Total Op Info of every collective section (msprof-analyze.md §0.4)
            sections["collective"]["Total Op Info"] = _op_entry_empty()
        doc[f"step{step}"] = sections
    return doc


def _op_entry_empty() -> dict[str, Any]:
    zero = {"Transit Size(MB)": 0, "Transit Time(ms)": 0, "Bandwidth(GB/s)": 0,
            "Large Packet Ratio": 0, "Size Distribution": {}}  # fmt: skip
    return {
        "Communication Time Info": {
            "Start Timestamp(us)": 0,
            "Elapse Time(ms)": 0,
            "Transit Time(ms)": 0,
            "Wait Time(ms)": 0,
            "Synchronization Time(ms)": 0,
            "Idle Time(ms)": 0,
            "Wait Time Ratio": 0,
            "Synchronization Time Ratio": 0,
        },  # fmt: skip
        "Communication Bandwidth Info": {t: dict(zero) for t in TRANSPORTS},
    }


def _links(recs: Sequence[WorkRecord]) -> dict[str, dict[str, Any]]:
    """Summed src-dst links (group-local ranks) of `recs`, the self link included."""
    acc: dict[str, list[Any]] = {}
    for r in recs:
        assert r.comm is not None
        me = r.comm.group_rank
        self_key = f"{me}-{me}"
        acc.setdefault(self_key, ["LOCAL", 0.0, 0.0, r.name])
        for peer, transport, nbytes, us in r.comm.links:
            entry = acc.setdefault(f"{me}-{peer}", [transport, 0.0, 0.0, r.name])
            entry[1] += nbytes
            entry[2] += us
    out = {}
    for key, (transport, nbytes, us, name) in acc.items():
        size, ms = nbytes / MB, us / 1000
        out[key] = {
            "Transport Type": transport,
            "Transit Size(MB)": _r(size, 6),
            "Transit Time(ms)": _r(ms),
            "Bandwidth(GB/s)": _bandwidth(size, ms),
            "Op Name": name,
        }
    return out


def communication_matrix(
    records: Sequence[WorkRecord], matrix_names: dict[str, str]
) -> dict[str, Any]:
    """communication_matrix.json for one rank; `matrix_names` maps op types to msprof's words."""
    doc: dict[str, Any] = {}
    for step, recs in _by_step(comm_records(records)).items():
        sections: dict[str, dict[str, Any]] = {"collective": {}, "p2p": {}}
        groups: dict[tuple[bool, str, str], list[WorkRecord]] = defaultdict(list)
        for r in recs:
            assert r.comm is not None
            word = matrix_names.get(r.op_type, r.op_type.lower())
            groups[(r.comm.p2p, word, double_hash(r.comm.group))].append(r)
        for (p2p, word, group), ops in groups.items():
            section = sections["p2p" if p2p else "collective"]
            by_time = sorted(ops, key=lambda r: (r.duration_us, r.task_id))
            section[f"{word}-top1@{group}"] = _links([by_time[-1]])
            section[f"{word}-middle@{group}"] = _links([by_time[len(by_time) // 2]])
            section[f"{word}-bottom1@{group}"] = _links([by_time[0]])
            section[f"{word}-total@{group}"] = _links(ops)
        doc[f"step{step}"] = sections
    return doc


def parallel_group_info(records: Iterable[WorkRecord]) -> dict[str, Any]:
    """profiler_metadata.json's communicators: group id -> name, this rank's place, members."""
    out: dict[str, Any] = {}
    for r in comm_records(records):
        assert r.comm is not None
        out.setdefault(
            r.comm.group,
            {
                "group_name": r.comm.group_name,
                "group_rank": r.comm.group_rank,
                "global_ranks": list(r.comm.global_ranks),
            },
        )
    return out
