"""HCCL environment variables: checked as HCCL checks them when a communicator is created.

A value HCCL rejects (HCCL_BUFFSIZE=0, HCCL_ALGO="level0:ring", HCCL_EXEC_TIMEOUT=abc) makes
`init_process_group` fail with the variable, its value and what is allowed, as HCCL's
EI0001 does on a cluster. A name that is one typo away from a real one
(HCCL_BUFFER_SIZE) is only a warning: HCCL ignores unknown variables, silently.

The figures come from npu_runtime/data/hccl.json, one row per variable.
"""

from __future__ import annotations

import difflib
import ipaddress
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any


@cache
def table() -> dict[str, Any]:
    """npu_runtime/data/hccl.json."""
    with resources.files("npu_runtime.data").joinpath("hccl.json").open(encoding="utf-8") as f:
        data: dict[str, Any] = json.load(f)
    return data


@dataclass(frozen=True)
class HcclSettings:
    """What the emulator takes from the HCCL variables."""

    level1: dict[str, str] = field(default_factory=dict)  # op ("" = every op) -> algorithm
    buffsize_bytes: int = 200 * 2**20
    exec_timeout_s: float = 1836.0  # 0 = never
    connect_timeout_s: float = 120.0
    intra_roce: bool = False  # HCCL_INTRA_ROCE_ENABLE=1 (and PCIe not asked for)

    def level1_for(self, algo_key: str) -> str | None:
        return self.level1.get(algo_key) or self.level1.get("")


@dataclass(frozen=True)
class EnvReport:
    """Errors (HCCL would refuse to start) and warnings (likely typos) about the variables."""

    errors: list[str]
    warnings: list[str]
    settings: HcclSettings


def parse_algo(value: str) -> dict[str, str]:
    """HCCL_ALGO -> {op or "": level1 algorithm}; ValueError saying what is wrong."""
    t = table()
    algos, ops = t["level1_algorithms"], t["algo_ops"]
    out: dict[str, str] = {}
    for part in filter(None, (p.strip() for p in value.split("/"))):
        op = ""
        if "=" in part:
            op, part = (s.strip() for s in part.split("=", 1))
            if op not in ops:
                raise ValueError(f"unknown op {op!r} (one of: {', '.join(ops)})")
        levels: dict[str, str] = {}
        for item in filter(None, (s.strip() for s in part.split(";"))):
            name, sep, algo = item.partition(":")
            if not sep or name.strip() not in ("level0", "level1", "level2"):
                raise ValueError(f"{item!r} is not level0:<algo>, level1:<algo> or level2:<algo>")
            levels[name.strip()] = algo.strip()
        if "level0" in levels and levels["level0"] != "NA":
            raise ValueError(f"level0 (inside a server) accepts only NA, not {levels['level0']!r}")
        l1 = levels.get("level1")
        if l1 is None:
            raise ValueError("level1:<algo> is missing")
        if l1 not in algos:
            raise ValueError(f"level1 algorithm {l1!r} is unknown (one of: {', '.join(algos)})")
        if l1 == "pairwise" and op not in ("", "alltoall"):
            raise ValueError(f"pairwise serves only alltoall, not {op}")
        out[op] = l1
    if not out:
        raise ValueError("no algorithm given")
    return out


def _check_int(
    name: str, raw: str, spec: Mapping[str, Any], a1: bool
) -> tuple[int | None, str | None]:
    try:
        v = int(raw.strip())
    except ValueError:
        return None, f"{name}={raw!r} is invalid: an integer is required"
    lo = spec.get("min")
    hi = spec.get("max_a1" if a1 and "max_a1" in spec else "max")
    if name == "HCCL_EXEC_TIMEOUT" and a1:
        lo = 1  # (0, 17340] on the Atlas training series
    if (lo is not None and v < lo) or (hi is not None and v > hi):
        rng = f"[{lo}, {hi}]" if hi is not None else f">= {lo}"
        unit = f" ({spec['unit']})" if "unit" in spec else ""
        return None, f"{name}={raw!r} is out of range: {rng}{unit} is allowed"
    if spec.get("multiple_of") and v % spec["multiple_of"]:
        return None, f"{name}={raw!r} is invalid: it must be a multiple of {spec['multiple_of']}"
    return v, None


def check_env(env: Mapping[str, str], profile_name: str = "910B2") -> EnvReport:
    """Check the HCCL_* variables of `env` for a device profile (910A/310P follow A1 rules)."""
    t = table()
    specs: dict[str, Any] = t["env"]
    a1 = profile_name in ("910A", "310P")
    errors: list[str] = []
    warnings: list[str] = []
    values: dict[str, Any] = {}
    for name, spec in specs.items():
        raw = env.get(name)
        if raw is None or raw == "":
            continue
        kind = spec["kind"]
        if kind == "int":
            v, err = _check_int(name, raw, spec, a1)
            if err:
                errors.append(err)
            values[name] = v
        elif kind == "enum":
            if raw.strip() not in spec["values"]:
                errors.append(f"{name}={raw!r} is invalid: one of {', '.join(spec['values'])}")
        elif kind == "ip":
            try:
                ipaddress.ip_address(raw.strip())
            except ValueError:
                errors.append(f"{name}={raw!r} is not an IP address")
        elif kind == "algo":
            try:
                values[name] = parse_algo(raw)
            except ValueError as exc:
                errors.append(f"HCCL_ALGO={raw!r} is invalid: {exc}")
    known = set(specs) | set(t["known_other_env"])
    for name in sorted(env):
        if name.startswith("HCCL_") and name not in known:
            close = difflib.get_close_matches(name, sorted(known), n=1, cutoff=0.8)
            if close:
                warnings.append(
                    f"{name} is not an HCCL variable (HCCL ignores it); did you mean {close[0]}?"
                )
    timeout = values.get("HCCL_EXEC_TIMEOUT")
    if timeout is not None and a1:
        timeout = max(68, timeout // 68 * 68)  # the Atlas training series rounds to 68 s
    settings = HcclSettings(
        level1=values.get("HCCL_ALGO") or {},
        buffsize_bytes=(values.get("HCCL_BUFFSIZE") or specs["HCCL_BUFFSIZE"]["default"]) * 2**20,
        exec_timeout_s=float(specs["HCCL_EXEC_TIMEOUT"]["default"] if timeout is None else timeout),
        connect_timeout_s=float(
            values.get("HCCL_CONNECT_TIMEOUT") or specs["HCCL_CONNECT_TIMEOUT"]["default"]
        ),
        intra_roce=env.get("HCCL_INTRA_ROCE_ENABLE", "").strip() == "1"
        and env.get("HCCL_INTRA_PCIE_ENABLE", "").strip() != "1",
    )
    return EnvReport(errors, warnings, settings)
