"""Launch configuration: validate the editor's `launch` attributes and split ours from debugpy's.

Attributes this adapter owns are removed; everything else (stopOnEntry, showReturnValue,
redirectOutput, ...) is relayed to debugpy unchanged.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

OWN_ATTRIBUTES = frozenset(
    {
        "program",
        "module",
        "args",
        "cwd",
        "env",
        "python",
        "device",
        "devices",
        "profile",
        "sanitizer",
        "stopOnAclError",
        "justMyCode",
        "inject",
        "dump",
        "dumpLevel",
        "numerics",
        "profileAscendPt",
        "nproc",
        "rank",
    }
)


# The runtime's own tuples (npu_runtime.dump.session.LEVELS, npu_runtime.numerics.
# NUMERICS_MODES) import numpy; the adapter stays light, and a unit test keeps these equal.
DUMP_LEVELS = ("statistics", "tensor")
NUMERICS_MODES = ("npu", "float32", "float64")


class ConfigError(ValueError):
    """A launch attribute is missing or has the wrong type; the message is shown to the user."""


@dataclass(frozen=True)
class LaunchConfig:
    program: str | None
    module: str | None
    args: tuple[str, ...] = ()
    cwd: str | None = None
    env: Mapping[str, str | None] = field(default_factory=dict)
    python: tuple[str, ...] = ()
    device: str | None = None  # device profile (SoC) name, e.g. "Ascend910B2"
    devices: int | None = None  # number of emulated devices
    profile: bool | str = True  # True: default directory; str: this directory; False: off
    sanitizer: bool = True
    stop_on_acl_error: bool = True
    just_my_code: bool = True
    inject: tuple[str, ...] = ()  # error-injection specs, e.g. "acl.rt.malloc:3:207001"
    dump: str | None = None  # msprobe-compatible dump directory (absolute)
    dump_level: str = "statistics"  # "statistics" | "tensor"
    numerics: str | None = None  # "npu" | "float32" | "float64"; None leaves the default
    profile_ascend_pt: bool = False  # also write torch_npu-style *_ascend_pt/ dirs
    nproc: int | None = None  # ranks of a distributed job (the others run beside the debuggee)
    rank: int = 0  # the rank being debugged
    passthrough: Mapping[str, Any] = field(default_factory=dict)


def _expect(args: Mapping[str, Any], key: str, types: type | tuple[type, ...], what: str) -> Any:
    value = args.get(key)
    if value is None:
        return None
    # bool is an int in Python; never accept true for a count.
    if isinstance(value, bool) and bool not in (types if isinstance(types, tuple) else (types,)):
        raise ConfigError(f"launch attribute {key!r} must be {what}, got {value!r}")
    if not isinstance(value, types):
        raise ConfigError(f"launch attribute {key!r} must be {what}, got {value!r}")
    return value


def _str_list(args: Mapping[str, Any], key: str) -> tuple[str, ...]:
    value = args.get(key)
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return tuple(value)
    raise ConfigError(f"launch attribute {key!r} must be a string or a list of strings")


def _check_device(name: str) -> None:
    from npu_runtime.devices import get_profile

    try:
        get_profile(name)
    except (KeyError, ValueError) as exc:
        raise ConfigError(
            f"launch attribute 'device': {exc.args[0] if exc.args else exc}"
        ) from None


def _check_injection(spec: str) -> None:
    from npu_runtime.core.faults import parse_known as parse_injection

    try:
        parse_injection(spec)
    except ValueError as exc:
        raise ConfigError(f"launch attribute 'inject': {exc}") from None


def _choice(args: Mapping[str, Any], key: str, choices: tuple[str, ...]) -> str | None:
    value = _expect(args, key, str, f"one of {', '.join(map(repr, choices))}")
    if value is not None and value not in choices:
        raise ConfigError(
            f"launch attribute {key!r} must be one of {', '.join(map(repr, choices))}, "
            f"got {value!r}"
        )
    return value


def _dump_dir(args: Mapping[str, Any], cwd: str | None) -> str | None:
    dump = _expect(args, "dump", str, "a directory")
    if dump is None:
        return None
    if not dump:
        raise ConfigError("launch attribute 'dump' must be a directory, got ''")
    out = os.path.abspath(os.path.join(cwd or os.getcwd(), dump))
    if os.path.exists(out) and not os.path.isdir(out):
        raise ConfigError(f"launch attribute 'dump': {dump} exists and is not a directory")
    return out


def parse(args: Mapping[str, Any]) -> LaunchConfig:
    """Validate `launch` arguments; raise ConfigError naming the first bad attribute."""
    if not isinstance(args, Mapping):
        raise ConfigError("launch arguments must be an object")
    program = _expect(args, "program", str, "a path")
    module = _expect(args, "module", str, "a module name")
    if (program is None) == (module is None):
        raise ConfigError("launch needs exactly one of 'program' or 'module'")
    cwd = _expect(args, "cwd", str, "a directory")
    if cwd is not None and not os.path.isdir(cwd):
        raise ConfigError(f"launch attribute 'cwd' is not a directory: {cwd}")
    if program is not None:
        resolved = program if os.path.isabs(program) else os.path.join(cwd or os.getcwd(), program)
        if not os.path.isfile(resolved):
            raise ConfigError(f"program not found: {program}")
        program = os.path.abspath(resolved)
    env = _expect(args, "env", dict, "an object of strings")
    if env is not None and not all(
        isinstance(k, str) and (v is None or isinstance(v, str)) for k, v in env.items()
    ):
        raise ConfigError("launch attribute 'env' must map names to strings (or null to unset)")
    python = _str_list(args, "python") or (sys.executable,)
    from npu_runtime.core.memory import MAX_DEVICES

    devices = _expect(args, "devices", int, "a positive integer")
    if devices is not None and not 1 <= devices <= MAX_DEVICES:
        raise ConfigError(
            f"launch attribute 'devices' must be an integer from 1 to {MAX_DEVICES} "
            f"(CANN's limit per host), got {devices}"
        )
    device = _expect(args, "device", str, "a device profile name such as 'Ascend910B2'")
    if device is not None:
        _check_device(device)
    inject = _str_list(args, "inject")
    for spec in inject:
        _check_injection(spec)
    profile = _expect(args, "profile", (bool, str), "true, false or a directory")
    flags = {
        key: _expect(args, key, bool, "true or false")
        for key in ("sanitizer", "stopOnAclError", "justMyCode", "profileAscendPt")
    }
    if flags["profileAscendPt"] and profile is False:
        raise ConfigError("launch attribute 'profileAscendPt' needs a profile ('profile' is false)")
    dump = _dump_dir(args, cwd)
    dump_level = _choice(args, "dumpLevel", DUMP_LEVELS)
    if dump_level is not None and dump is None:
        raise ConfigError("launch attribute 'dumpLevel' needs 'dump' (the dump directory)")
    numerics = _choice(args, "numerics", NUMERICS_MODES)
    nproc = _expect(args, "nproc", int, "a positive integer")
    rank = _expect(args, "rank", int, "a rank number")
    if nproc is not None and nproc < 1:
        raise ConfigError(f"launch attribute 'nproc' must be a positive integer, got {nproc}")
    if rank is not None and (nproc is None or not 0 <= rank < nproc):
        raise ConfigError(
            f"launch attribute 'rank' must be in 0..{nproc - 1}, got {rank}"
            if nproc is not None
            else "launch attribute 'rank' needs 'nproc' (the number of ranks)"
        )
    if nproc is not None and program is None:
        raise ConfigError("launch attribute 'nproc' needs 'program' (the script every rank runs)")
    return LaunchConfig(
        program=program,
        module=module,
        args=_str_list(args, "args"),
        cwd=cwd,
        env=dict(env or {}),
        python=python,
        device=device,
        devices=devices,
        profile=True if profile is None else profile,
        sanitizer=flags["sanitizer"] is not False,
        stop_on_acl_error=flags["stopOnAclError"] is not False,
        just_my_code=flags["justMyCode"] is not False,
        inject=inject,
        dump=dump,
        dump_level=dump_level or "statistics",
        numerics=numerics,
        profile_ascend_pt=flags["profileAscendPt"] is True,
        nproc=nproc,
        rank=rank or 0,
        passthrough={k: v for k, v in args.items() if k not in OWN_ATTRIBUTES},
    )
