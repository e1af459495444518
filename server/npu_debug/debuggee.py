"""Turn a validated launch config into debugpy's launch request for the bootstrap."""

from __future__ import annotations

import json
import os
import tempfile
import time
from typing import Any

from npu_debug.bootstrap import CONFIG_ENV
from npu_debug.config import LaunchConfig
from npu_runtime._shim import SHIM_DIR

_DEBUG_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # server/


def _package_dir(name: str) -> str | None:
    from importlib.util import find_spec

    spec = find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        return None
    return str(list(spec.submodule_search_locations)[0])


# Our packages: their frames never show in "Just My Code" stacks (the user's own files,
# even inside a checkout of this repository, still do).
OUR_PACKAGES = ("npu_runtime", "npu_debug", "npu_kernel")


def profile_dir(config: LaunchConfig) -> str | None:
    if config.profile is False:
        return None
    if isinstance(config.profile, str):
        return os.path.abspath(os.path.join(config.cwd or os.getcwd(), config.profile))
    stamp = time.strftime("%Y%m%d-%H%M%S")
    return os.path.join(tempfile.gettempdir(), "ascend-lens", f"debug-{stamp}-{os.getpid()}")


def debugpy_launch(config: LaunchConfig, channel_endpoint: str) -> dict[str, Any]:
    """debugpy launch arguments that run the user's target under `npu_debug.bootstrap`."""
    target = ["--program", config.program] if config.program else ["--module", str(config.module)]
    packages = [p for p in map(_package_dir, OUR_PACKAGES) if p]
    runtime_dir = _package_dir("npu_runtime")
    # The shim first (so `import acl` is the emulator's), then the roots our packages live in.
    roots = [p for p in (SHIM_DIR, runtime_dir and os.path.dirname(runtime_dir), _DEBUG_ROOT) if p]
    env: dict[str, str | None] = dict(config.env)
    inherited = env.get("PYTHONPATH", os.environ.get("PYTHONPATH"))
    env["PYTHONPATH"] = os.pathsep.join(roots + ([inherited] if inherited else []))
    # The runtime reads these at import (npu_runtime.core.runtime, sanitizer, faults).
    if config.inject:
        env["NPU_INJECT"] = ",".join(config.inject)
    if config.device is not None:
        env["NPU_DEVICE"] = config.device
    if config.devices is not None:
        env["NPU_DEVICES"] = str(config.devices)
    env["NPU_SANITIZE"] = "1" if config.sanitizer else "0"
    if config.numerics is not None:  # read at import, and inherited by child processes
        env["NPU_NUMERICS"] = config.numerics
    settings = {
        "channel": channel_endpoint,
        "stopOnAclError": config.stop_on_acl_error,
        "device": config.device,
        "devices": config.devices,
        "profileDir": profile_dir(config),
        "profileAscendPt": config.profile_ascend_pt,
        "dump": config.dump,
        "dumpLevel": config.dump_level,
        "unset": sorted(k for k, v in env.items() if v is None),
    }
    env[CONFIG_ENV] = json.dumps(settings)
    passthrough = {k: v for k, v in config.passthrough.items() if k not in ("type", "request")}
    rules = list(passthrough.pop("rules", []) or [])
    rules += [{"path": p, "include": False} for p in packages]
    args: dict[str, Any] = {
        "console": "internalConsole",
        **passthrough,
        "request": "launch",
        "module": "npu_debug.bootstrap",
        "args": [*target, "--", *config.args],
        "cwd": config.cwd or os.getcwd(),
        "env": {k: v for k, v in env.items() if v is not None},
        "python": list(config.python),
        "justMyCode": config.just_my_code,
        "rules": rules,
    }
    return args
