"""Entry point inside the debuggee: `python -m debugpy ... -m npu_debug.bootstrap --program P -- ARGS`.

debugpy has already connected and received configurationDone when this runs. It puts the
emulator's `acl` shim on sys.path, configures the runtime from the adapter's settings,
installs the runtime bridge, then runs the user's program or module as `__main__`.
Exceptions are deliberately not caught here, so debugpy still sees them as uncaught (only
SystemExit passes through a handler, and leaves it unchanged). When the program ends on its
own exception or exit status naming the code of the last failing ACL call, what that code
means follows on stderr, as under `ascend-lens run`.
"""

from __future__ import annotations

import json
import os
import runpy
import sys
from types import TracebackType

from npu_runtime._shim import SHIM_DIR  # loads no runtime module

CONFIG_ENV = "ASCEND_LENS_DEBUG"


def _parse_argv(argv: list[str]) -> tuple[str, str, list[str]]:
    if len(argv) < 2 or argv[0] not in ("--program", "--module"):
        raise SystemExit("npu_debug.bootstrap: usage: --program PATH|--module NAME [-- ARGS...]")
    kind, target, rest = argv[0][2:], argv[1], argv[2:]
    if rest and rest[0] == "--":
        rest = rest[1:]
    return kind, target, rest


def _explain_on_stderr(exc: BaseException) -> None:
    from npu_debug import bridge

    text = bridge.explanation(exc)
    if text:
        sys.stderr.write(text)
        sys.stderr.flush()


def _explaining_excepthook() -> None:
    """After the traceback of an uncaught exception, its bare ACL code's meaning."""
    previous = sys.excepthook

    def hook(etype: type[BaseException], value: BaseException, tb: TracebackType | None) -> None:
        previous(etype, value, tb)
        _explain_on_stderr(value)

    sys.excepthook = hook


def main() -> None:
    kind, target, args = _parse_argv(sys.argv[1:])
    settings = json.loads(os.environ.pop(CONFIG_ENV, "{}") or "{}")
    for name in settings.get("unset", []):
        os.environ.pop(name, None)
    if SHIM_DIR not in sys.path:
        sys.path.insert(0, SHIM_DIR)

    from npu_debug import bridge

    bridge.install(settings)
    if "pydevd" in sys.modules:  # under debugpy (not when run by hand)
        from npu_debug import tensor_view

        tensor_view.register()
    _explaining_excepthook()
    try:
        if kind == "program":
            sys.argv = [target, *args]
            # As `python PROGRAM` would: the program's directory first (after the shim).
            sys.path.insert(1, os.path.dirname(target))
            runpy.run_path(target, run_name="__main__")
        else:
            sys.argv = [target, *args]
            runpy.run_module(target, run_name="__main__", alter_sys=True)
    except SystemExit as exc:  # no excepthook for an exit status: explain it here
        _explain_on_stderr(exc)
        raise


if __name__ == "__main__":
    main()
