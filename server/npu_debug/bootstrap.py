"""Entry point inside the debuggee: `python -m debugpy ... -m npu_debug.bootstrap --program P -- ARGS`.

debugpy has already connected and received configurationDone when this runs. It puts the
emulator's `acl` shim on sys.path, configures the runtime from the adapter's settings,
installs the runtime bridge, then runs the user's program or module as `__main__`.
Exceptions are deliberately not caught here, so debugpy still sees them as uncaught.
"""

from __future__ import annotations

import json
import os
import runpy
import sys
from importlib.util import find_spec

CONFIG_ENV = "ASCEND_LENS_DEBUG"


def shim_dir() -> str | None:
    """npu_runtime/_shim, located without importing the runtime."""
    spec = find_spec("npu_runtime")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = os.path.join(list(spec.submodule_search_locations)[0], "_shim")
    return path if os.path.isdir(path) else None


def _parse_argv(argv: list[str]) -> tuple[str, str, list[str]]:
    if len(argv) < 2 or argv[0] not in ("--program", "--module"):
        raise SystemExit("npu_debug.bootstrap: usage: --program PATH|--module NAME [-- ARGS...]")
    kind, target, rest = argv[0][2:], argv[1], argv[2:]
    if rest and rest[0] == "--":
        rest = rest[1:]
    return kind, target, rest


def main() -> None:
    kind, target, args = _parse_argv(sys.argv[1:])
    settings = json.loads(os.environ.pop(CONFIG_ENV, "{}") or "{}")
    for name in settings.get("unset", []):
        os.environ.pop(name, None)
    shim = shim_dir()
    if shim is not None and shim not in sys.path:
        sys.path.insert(0, shim)

    from npu_debug import bridge

    bridge.install(settings)
    if "pydevd" in sys.modules:  # under debugpy (not when run by hand)
        from npu_debug import tensor_view

        tensor_view.register()
    if kind == "program":
        sys.argv = [target, *args]
        # As `python PROGRAM` would: the program's directory first (after the shim).
        sys.path.insert(1 if shim is not None else 0, os.path.dirname(target))
        runpy.run_path(target, run_name="__main__")
    else:
        sys.argv = [target, *args]
        runpy.run_module(target, run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
