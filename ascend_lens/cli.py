"""The `ascend-lens` console script: a thin dispatcher to each part's own command line.

Subcommands are imported lazily so that `ascend-lens check` never pays for numpy and
`ascend-lens run` never pays for pygls.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Sequence

# subcommand -> (module, function, one-line help). One table; each part owns its parser.
SUBCOMMANDS: dict[str, tuple[str, str, str]] = {
    "check": ("npu_lsp.cli", "main", "lint files for graph-mode and migration problems"),
    "server": ("npu_lsp.server", "main", "start the language server on stdio"),
    "run": ("npu_runtime.launcher", "main", "run a pyACL script on the emulated NPU"),
    "atc": ("npu_runtime.model.atc", "main", "compile an ONNX model into an emulator .om"),
    "debug-adapter": ("npu_debug.adapter", "main", "start the debug adapter on stdio"),
    "kernel": ("npu_kernel.cli", "main", "install, list or bridge the Jupyter kernel"),
}


def _usage() -> str:
    width = max(map(len, SUBCOMMANDS))
    rows = "\n".join(f"  {name:<{width}}  {help_}" for name, (_, _, help_) in SUBCOMMANDS.items())
    return f"usage: ascend-lens <command> [options]\n\ncommands:\n{rows}\n"


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help"):
        sys.stdout.write(_usage())
        return 0 if args else 2
    if args[0] == "--version":
        from importlib.metadata import version

        sys.stdout.write(f"ascend-lens {version('ascend-lens')}\n")
        return 0
    entry = SUBCOMMANDS.get(args[0])
    if entry is None:
        sys.stderr.write(f"ascend-lens: unknown command {args[0]!r}\n\n{_usage()}")
        return 2
    module_name, func_name, _ = entry
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name and module_name.startswith(exc.name):
            sys.stderr.write(f"ascend-lens: `{args[0]}` is not available in this build\n")
            return 2
        raise
    func: Callable[[list[str]], int | None] = getattr(module, func_name)
    return int(func(args[1:]) or 0)


if __name__ == "__main__":
    sys.exit(main())
