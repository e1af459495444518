"""`ascend-lens kernel {install,list,uninstall,bridge}`: the kernel's command line."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from npu_kernel import KERNEL_NAME
from npu_kernel.kernelspec import (
    DEFAULT_DEVICE,
    DEFAULT_DEVICES,
    DeviceOptions,
    KernelSpecError,
    install,
    jupyter_kernel_dirs,
    list_installed,
    on_jupyter_path,
    prefix_kernel_dir,
    uninstall,
)


def _add_location(p: argparse.ArgumentParser) -> None:
    where = p.add_mutually_exclusive_group()
    where.add_argument("--user", action="store_true", help="the user's Jupyter dir (default)")
    where.add_argument("--sys-prefix", action="store_true", help="this environment (sys.prefix)")
    where.add_argument("--prefix", metavar="DIR", help="DIR/share/jupyter/kernels")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ascend-lens kernel", description="The Ascend NPU (emulated) Jupyter kernel."
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    p = sub.add_parser("install", help="install the kernelspec for Jupyter and editors")
    _add_location(p)
    p.add_argument("--device", default=DEFAULT_DEVICE, help="device profile (default 910B)")
    p.add_argument(
        "--devices", type=int, default=DEFAULT_DEVICES, metavar="N", help="number of devices (8)"
    )
    p = sub.add_parser("list", help="list installed Ascend NPU kernelspecs")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument(
        "--prefix", metavar="DIR", help="also look in DIR/share/jupyter/kernels (install --prefix)"
    )
    p = sub.add_parser("uninstall", help="remove the kernelspec")
    _add_location(p)
    p.add_argument("--name", default=KERNEL_NAME, help=f"kernelspec name (default {KERNEL_NAME})")
    p = sub.add_parser("bridge", help="run the kernel behind newline-delimited JSON on stdio")
    p.add_argument("--kernel", default=KERNEL_NAME, help="kernelspec to start")
    p.add_argument("--cwd", default=None, help="working directory of the kernel")
    return parser


def _check_device(name: str) -> None:
    """Refuse unknown device profiles at install time rather than at kernel start."""
    try:
        from npu_runtime.devices import get_profile
    except ImportError:  # runtime without device profiles: the kernel reports it at start
        return
    try:
        get_profile(name)
    except (KeyError, ValueError, LookupError) as exc:
        raise KernelSpecError(f"unknown device {name!r}: {exc}") from None


def _not_on_path_hint(spec_dir: Path) -> str:
    data_dir = spec_dir.parent.parent  # DIR/share/jupyter
    return (
        f"Jupyter does not look in {data_dir} by itself: run Jupyter (or the editor) with\n"
        f"  JUPYTER_PATH={data_dir}\n"
        f"and `jupyter kernelspec list` and `ascend-lens kernel list` find it.\n"
    )


def _nothing_found(prefix: str | None) -> str:
    searched = [prefix_kernel_dir(prefix)] if prefix is not None else []
    searched += jupyter_kernel_dirs()
    lines = "".join(f"  {d}\n" for d in searched)
    return (
        f"No Ascend NPU kernelspec found. Looked in:\n{lines}"
        "Install one with `ascend-lens kernel install`; one installed with --prefix DIR is "
        "listed by `ascend-lens kernel list --prefix DIR`, and found by Jupyter when "
        "JUPYTER_PATH includes DIR/share/jupyter.\n"
    )


def _run(args: argparse.Namespace) -> int:
    out = sys.stdout
    if args.command == "install":
        _check_device(args.device)
        options = DeviceOptions(args.device, args.devices)
        dest = install(options, user=args.user, sys_prefix=args.sys_prefix, prefix=args.prefix)
        out.write(f"Installed kernelspec {KERNEL_NAME} in {dest}\n")
        if not on_jupyter_path(dest):
            out.write(_not_on_path_hint(dest))
        return 0
    if args.command == "list":
        specs = list_installed(args.prefix)
        if args.json:
            rows = [
                {
                    "name": s.name,
                    "path": str(s.path),
                    "executable": s.executable,
                    "device": s.device,
                    "devices": s.devices,
                    "executable_exists": s.executable_exists,
                    "on_jupyter_path": on_jupyter_path(s.path),
                }
                for s in specs
            ]
            out.write(json.dumps(rows, indent=1) + "\n")
            return 0
        if not specs:
            out.write(_nothing_found(args.prefix))
            return 0
        for s in specs:
            missing = "" if s.executable_exists else "  [interpreter missing]"
            hidden = "" if on_jupyter_path(s.path) else "  [not on the Jupyter path]"
            out.write(
                f"{s.name}  {s.device} x{s.devices}  {s.path}  ({s.executable}){missing}{hidden}\n"
            )
        if any(not on_jupyter_path(s.path) for s in specs):
            out.write(_not_on_path_hint(next(s.path for s in specs if not on_jupyter_path(s.path))))
        return 0
    if args.command == "uninstall":
        path = uninstall(args.name, user=args.user, sys_prefix=args.sys_prefix, prefix=args.prefix)
        out.write(f"Removed {path}\n")
        return 0
    from npu_kernel.bridge import main as bridge_main

    return bridge_main(kernel_name=args.kernel, cwd=args.cwd)


def main(argv: Sequence[str] | None = None) -> int:
    try:
        args = _parser().parse_args(argv)
    except SystemExit as exc:  # argparse already printed the usage error
        return int(exc.code or 0)
    try:
        return _run(args)
    except KernelSpecError as exc:
        sys.stderr.write(f"ascend-lens kernel: {exc}\n")
        return 1


if __name__ == "__main__":
    sys.exit(main())
