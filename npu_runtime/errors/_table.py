"""Load the error-code table and the knowledge base (json only: no numpy, cheap to import)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

# Which name to prefer when several constants share a value.
_PREFERRED = {0: "ACL_SUCCESS"}


@dataclass(frozen=True, slots=True)
class ErrorInfo:
    """One error code with its name and what to do about it."""

    code: int
    name: str
    meaning: str
    cause: str
    fix: str
    family: str = ""  # "ACL", "RT" or "GE"
    aliases: tuple[str, ...] = ()  # every constant name with this value


def _load(name: str) -> Any:
    with resources.files("npu_runtime.data").joinpath(name).open("r", encoding="utf-8") as f:
        return json.load(f)


@cache
def constants() -> dict[str, int]:
    """Every constant name -> value, in header order."""
    return {row["name"]: int(row["value"]) for row in _load("error_codes.json")["codes"]}


@cache
def table() -> dict[int, ErrorInfo]:
    """Code -> ErrorInfo, joining the constants with the knowledge base."""
    rows = _load("error_codes.json")["codes"]
    kb: dict[str, dict[str, str]] = _load("error_knowledge.json")["entries"]
    names: dict[int, list[str]] = {}
    family: dict[int, str] = {}
    for row in rows:
        names.setdefault(int(row["value"]), []).append(row["name"])
        family.setdefault(int(row["value"]), row["family"])
    out: dict[int, ErrorInfo] = {}
    for code, aliases in names.items():
        entry = kb.get(str(code), {})
        out[code] = ErrorInfo(
            code=code,
            name=_PREFERRED.get(code, aliases[0]),
            meaning=entry.get("meaning", ""),
            cause=entry.get("cause", ""),
            fix=entry.get("fix", ""),
            family=family[code],
            aliases=tuple(aliases),
        )
    return out
