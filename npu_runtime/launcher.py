"""`ascend-lens run`: run an unmodified pyACL script on the emulated NPU.

    ascend-lens run [--device 910B] [--devices N] [--no-sanitize] [--inject SPEC]...
                    [--profile DIR ...] SCRIPT [ARGS...]

`import acl` resolves to the emulator through npu_runtime/_shim (put on sys.path here,
never installed). The script's stdout is untouched and its exit status is ours; a short
summary (peak memory per device, streams, sanitizer findings) goes to stderr.

Other parts add options through LAUNCH_HOOKS: a module with `add_arguments(parser)`,
`check_args(parser, args)` and a context manager wrapping the script's run whose value may
offer `exit_code(status) -> int` (the profiler's `--profile DIR` works this way).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import runpy
import sys
import traceback
from collections.abc import Iterator, Sequence
from types import ModuleType
from typing import Any

from npu_runtime._shim import SHIM_DIR

# (module, context-manager function) per optional part; missing modules are skipped.
LAUNCH_HOOKS: list[tuple[str, str]] = [
    ("npu_runtime.profiler.cli_hook", "profiling"),
    ("npu_runtime.dump.cli_hook", "dumping"),
    ("npu_runtime.estimate.cli_hook", "estimating"),
]


def _hooks() -> list[tuple[ModuleType, str]]:
    out = []
    for module_name, func in LAUNCH_HOOKS:
        try:
            out.append((importlib.import_module(module_name), func))
        except ModuleNotFoundError as exc:
            if not (exc.name and module_name.startswith(exc.name)):
                _hook_broken(module_name, exc)
        except Exception as exc:  # another part's bug must not stop plain runs
            _hook_broken(module_name, exc)
    return out


def _hook_broken(module_name: str, exc: BaseException) -> None:
    sys.stderr.write(f"ascend-lens: options from {module_name} are unavailable: {exc!r}\n")


class _Formatter(argparse.HelpFormatter):
    """Shows the script's arguments as `[ARGS ...]` (argparse prints a bare `...`)."""

    def _format_args(self, action: argparse.Action, default_metavar: str) -> str:
        if action.nargs == argparse.REMAINDER:
            return f"[{self._metavar_formatter(action, default_metavar)(1)[0]} ...]"
        return super()._format_args(action, default_metavar)


def build_parser(hooks: list[tuple[ModuleType, str]]) -> argparse.ArgumentParser:
    from npu_runtime.devices import profile_names

    p = argparse.ArgumentParser(
        prog="ascend-lens run",
        formatter_class=_Formatter,
        description="Run a pyACL script on the emulated Ascend runtime.",
        epilog="environment: NPU_DEVICE, NPU_DEVICES (or ASCEND_RT_VISIBLE_DEVICES), "
        "NPU_SANITIZE=0, NPU_INJECT=SPEC[,SPEC...], NPU_NUMERICS=float32|float64; flags "
        "override them (--inject adds rules). "
        "See docs/runtime.md.",
    )
    p.add_argument(
        "--device",
        default=None,
        metavar="SOC",
        help=f"device profile (default 910B = 910B2 figures); one of: {', '.join(profile_names())}",
    )
    p.add_argument(
        "--devices",
        type=int,
        default=None,
        metavar="N",
        help="number of devices, 1 to 64 (default 8)",
    )
    p.add_argument("--no-sanitize", action="store_true", help="turn the memory sanitizer off")
    p.add_argument(
        "--inject",
        action="append",
        default=[],
        metavar="SPEC",
        help="make a call fail: API:N:CODE (acl.rt.malloc:3:207001) or op:TYPE:N:CODE (repeatable)",
    )
    p.add_argument(
        "--no-summary", action="store_true", help="do not print the run summary on stderr"
    )
    for module, _ in hooks:
        module.add_arguments(p)
    from npu_runtime import multirun

    multirun.add_arguments(p)
    p.add_argument("script", metavar="SCRIPT", help="the Python script to run")
    rest = p.add_argument(
        "args", nargs=argparse.REMAINDER, metavar="ARGS", help="arguments for the script"
    )
    rest.required = False  # argparse marks a REMAINDER positional required; ARGS may be empty
    return p


def _check(
    p: argparse.ArgumentParser, args: argparse.Namespace, hooks: list[tuple[ModuleType, str]]
) -> None:
    from npu_runtime.core.faults import ENV_VAR, parse_env
    from npu_runtime.core.faults import parse_known as parse_injection
    from npu_runtime.core.memory import MAX_DEVICES
    from npu_runtime.core.runtime import device_count_error
    from npu_runtime.devices import get_profile

    if args.device is not None:
        try:
            get_profile(args.device)
        except ValueError as exc:
            p.error(f"--device: {exc}")
    if args.devices is not None and not 1 <= args.devices <= MAX_DEVICES:
        p.error(f"--devices: {device_count_error(args.devices)}")
    for spec in args.inject:
        try:
            parse_injection(spec)
        except ValueError as exc:
            p.error(f"--inject: {exc}")
    try:
        parse_env(os.environ.get(ENV_VAR, ""))
    except ValueError as exc:
        # Not a command-line mistake: one line, without the usage.
        p.exit(2, f"{p.prog}: error: {ENV_VAR}: {exc}\n")
    if not os.path.isfile(args.script):
        p.error(f"script not found: {args.script}")
    for module, _ in hooks:
        module.check_args(p, args)
    from npu_runtime import multirun

    multirun.check_args(p, args)


def _configure(args: argparse.Namespace) -> None:
    """Apply the options to this process and to child processes the script may start."""
    from npu_runtime.core.faults import injector
    from npu_runtime.core.runtime import get_runtime

    rt = get_runtime()
    rt.configure(device=args.device, devices=args.devices)
    rt.sanitizer.enabled = not args.no_sanitize
    for spec in args.inject:
        injector.add(spec)
    env = os.environ
    if args.device:
        env["NPU_DEVICE"] = args.device
    if args.devices:
        env["NPU_DEVICES"] = str(args.devices)
    env["NPU_SANITIZE"] = "0" if args.no_sanitize else "1"
    if args.inject:
        env["NPU_INJECT"] = ",".join([*filter(None, [env.get("NPU_INJECT", "")]), *args.inject])
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [SHIM_DIR, env.get("PYTHONPATH", "")]))


def run_script(script: str, script_args: Sequence[str]) -> int:
    """Run `script` as __main__ with `import acl` resolving to the emulator; its exit status.

    When the script stops on its own exception (or exit status) naming the code of the last
    failing ACL call, what that code means is added on stderr."""
    from npu_runtime.core import hooks
    from npu_runtime.errors.explain import LastError, explain

    path = os.path.abspath(script)
    saved_argv, saved_path = sys.argv[:], sys.path[:]
    sys.argv = [script, *script_args]
    sys.path[:0] = [os.path.dirname(path), SHIM_DIR]
    last = LastError()
    hooks.add_error_listener(last)
    try:
        runpy.run_path(path, run_name="__main__")
    except SystemExit as exc:
        status = _exit_status(exc.code)
        sys.stderr.write(explain(exc, last.error))
        return status
    except KeyboardInterrupt:
        traceback.print_exc()
        return 130
    except BaseException as exc:
        _print_user_traceback()
        sys.stderr.write(explain(exc, last.error))
        return 1
    finally:
        hooks.remove_error_listener(last)
        sys.argv, sys.path[:] = saved_argv, saved_path
        sys.stdout.flush()
    return 0


def _exit_status(code: Any) -> int:
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    sys.stderr.write(f"{code}\n")
    return 1


def _print_user_traceback() -> None:
    """The script's traceback without our own launcher frames on top."""
    etype, value, tb = sys.exc_info()
    from npu_runtime.sites import _is_ours

    while tb is not None and _is_ours(tb.tb_frame.f_code.co_filename):
        tb = tb.tb_next
    # Nor the emulator's own frames below the user's line (an error raised by a front end
    # such as torch_npu's op fallback ends at the line that called it).
    last_user, t = None, tb
    while t is not None:
        # (torch's own frames count as ours once torch_npu marked them: a collective's
        # error ends at the user's dist.all_reduce line, not inside torch.distributed)
        if not _is_ours(t.tb_frame.f_code.co_filename):
            last_user = t
        t = t.tb_next
    if last_user is not None:
        last_user.tb_next = None
    traceback.print_exception(etype, value, tb)


def main(argv: Sequence[str] | None = None) -> int:
    hooks = _hooks()
    parser = build_parser(hooks)
    arg_list = list(sys.argv[1:] if argv is None else argv)
    args = parser.parse_args(arg_list)
    _check(parser, args, hooks)
    if args.nproc is not None:
        from npu_runtime import multirun

        return multirun.launch(args, multirun.child_argv(parser, arg_list, args.script))
    _configure(args)
    status = 0
    with contextlib.ExitStack() as stack:
        results = [stack.enter_context(getattr(m, f)(args)) for m, f in hooks]
        status = run_script(args.script, args.args)
        _report_leaks_at_exit()
        if not args.no_summary:
            from npu_runtime.core.summary import print_summary

            print_summary()
    for r in results:
        if hasattr(r, "exit_code"):
            status = r.exit_code(status)
    if _is_distributed_rank():
        _exit_now(status)
    return status


def _is_distributed_rank() -> bool:
    """Whether this process took part in a torch.distributed job (gloo threads are running)."""
    dist = sys.modules.get("torch.distributed")
    from npu_runtime.hccl import world

    return world.current() is not None or bool(
        dist and dist.is_available() and dist.is_initialized()
    )


def _exit_now(status: int) -> None:
    """End a rank without tearing gloo down: its destructors can abort a finished process
    ("terminate called without an active exception") when the peers have already gone."""
    import atexit
    import gc
    import io

    atexit._run_exitfuncs()
    # What interpreter shutdown would still do for the script: flush files it left open.
    writers = (io.TextIOWrapper, io.BufferedWriter, io.BufferedRandom)  # concrete: no ABC hooks
    for obj in gc.get_objects():
        if issubclass(type(obj), writers):
            with contextlib.suppress(Exception):
                if not obj.closed:
                    obj.flush()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)


def _report_leaks_at_exit() -> None:
    """Devices still open at exit: their live allocations are leaks (the script never freed them)."""
    from npu_runtime.core.runtime import get_runtime

    rt = get_runtime()
    if not rt.sanitizer.enabled:
        return
    rt.report_host_leaks("exit", None)
    for dev in list(rt.devices.values()):
        for block in list(dev.memory.live.values()):
            if block.owner:
                continue
            rt.sanitizer.report(
                "leak",
                "exit",
                f"{block.size} bytes at 0x{block.addr:x} on device {dev.id} were never freed",
                site=None,
                alloc_site=block.site,
            )


@contextlib.contextmanager
def shim_on_path() -> Iterator[None]:
    """For in-process users (tests, kernel): make `import acl` resolve to the emulator."""
    sys.path.insert(0, SHIM_DIR)
    try:
        yield
    finally:
        with contextlib.suppress(ValueError):
            sys.path.remove(SHIM_DIR)


if __name__ == "__main__":
    sys.exit(main())
