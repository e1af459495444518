"""The dtypes a real NPU refuses for an op, from npu_runtime/data/npu_dtypes.json.

torch_npu rejects some dtypes per op (an aclnn API's dtype check, EZ1001, or op-plugin's
own check) and the accepted lists differ between SoC families (bf16 Cube ops only from
Atlas A2 on). The table holds only what a public source shows; each rule is resolved once
per op for the device profile's family, so the per-call cost is a set lookup per tensor.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

import torch

Tensor = torch.Tensor


@dataclass(frozen=True, slots=True)
class DtypeRule:
    name: str  # aten overload packet, in-place '_' removed
    allowed: frozenset[torch.dtype] | None  # None: the family has no published list
    rejected: frozenset[torch.dtype]
    supported_text: str  # the API's list as its message prints it
    tensors: tuple[str, ...]
    api: str
    scalar_api: str
    where: str
    kind: str  # which message: "aclnn" (EZ1001 from the API) or "plugin" (op-plugin's own)

    def check(self, views: list[Tensor], args: tuple[Any, ...], device: int) -> None:
        """Raise torch_npu's RuntimeError for the first npu tensor of a refused dtype."""
        allowed, rejected = self.allowed, self.rejected
        for i, v in enumerate(views):
            dt = v.dtype
            if dt in rejected or (allowed is not None and dt not in allowed):
                raise RuntimeError(self._message(i, dt, args, device))

    def _message(self, i: int, dt: torch.dtype, args: tuple[Any, ...], device: int) -> str:
        raw = _raw()
        tensor = self.tensors[i] if i < len(self.tensors) else "out"
        name = str(dt).removeprefix("torch.")
        now = time.time()
        date = time.strftime("%Y-%m-%d-%H:%M:%S", time.localtime(now))
        micros = int(now * 1e6) % 1_000_000
        fields = {
            "where": self.where,
            "api": self.api,
            "tensor": tensor,
            "dtype": raw["dtype_names"].get(name, name),
            "torch_name": raw["scalar_type_names"].get(name, name),
            "supported": self.supported_text,
            "date": date,
            "date_ms": f"{date}.{micros // 1000:03d}.{micros % 1000:03d}",
            "pid": os.getpid(),
            "device": device,
            "rank": os.environ.get("RANK", "0"),
        }
        if self.scalar_api and (len(args) < 2 or not _is_npu(args[1])):
            fields["api"] = self.scalar_api
        return str(raw["messages"][self.kind]).format(**fields)


def _is_npu(a: Any) -> bool:
    return isinstance(a, Tensor) and a.get_device() >= 0


@cache
def _raw() -> dict[str, Any]:
    path = resources.files("npu_runtime.data").joinpath("npu_dtypes.json")
    with path.open(encoding="utf-8") as f:
        raw: dict[str, Any] = json.load(f)
    return raw


def family(soc_name: str) -> str | None:
    """The SoC family ("A2", "A3", "training", "inference") of a profile's SoC name."""
    best: tuple[int, str] | None = None
    for prefix, fam in _raw()["families"].items():
        if soc_name.startswith(prefix) and (best is None or len(prefix) > best[0]):
            best = (len(prefix), fam)
    return best[1] if best else None


def _dtype(name: str) -> torch.dtype:
    dt = getattr(torch, name, None)
    if not isinstance(dt, torch.dtype):
        raise ValueError(f"npu_dtypes.json: unknown dtype {name!r}")
    return dt


@cache
def rule_for(packet: str, soc_name: str) -> DtypeRule | None:
    """The rule of an overload packet ("mm", "add_") on a SoC, or None when nothing is refused."""
    raw = _raw()
    name = packet
    entry = raw["ops"].get(name)
    if entry is None and packet.endswith("_"):
        name = packet[:-1]
        entry = raw["ops"].get(name)
    if entry is None:
        return None
    by_dt = {v: _dtype(k) for k, v in raw["dtype_names"].items()}
    listed = entry.get("supported", {}).get(family(soc_name) or "")
    rejected = frozenset(_dtype(n) for n in entry.get("rejected", ()))
    if listed is None and not rejected:
        return None
    kind = entry.get("check", "aclnn")
    if kind not in raw["messages"]:
        raise ValueError(f"npu_dtypes.json: {name}: unknown check {kind!r}")
    return DtypeRule(
        name=name,
        allowed=frozenset(by_dt[n] for n in listed) if listed is not None else None,
        rejected=rejected,
        supported_text="".join(f"{n}," for n in listed or ()),
        tensors=tuple(entry.get("tensors", ())),
        api=entry.get("api", ""),
        scalar_api=entry.get("scalar_api", ""),
        where=entry.get("where", f"{packet}:"),
        kind=kind,
    )
