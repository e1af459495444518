"""The `--profile DIR` option of `ascend-lens run`: what the launcher calls around the script.

    add_arguments(parser)
    ...
    args = parser.parse_args(argv)
    check_args(parser, args)
    with profiling(args) as run:
        exec_user_script()
    return run.exit_code(script_status)  # 0 -> 1 when the profile could not be written

Tables and progress go to stderr; stdout belongs to the user's script.
"""

from __future__ import annotations

import argparse
import contextlib
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from rich.console import Console

from npu_runtime.hccl.world import env_rank
from npu_runtime.profiler.progress import RunProgress
from npu_runtime.profiler.session import Profiler
from npu_runtime.profiler.tables import print_summary
from npu_runtime.profiler.writer import DEFAULT_EXPORTERS


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add --profile, --profile-stack and --profile-top to the launcher's parser."""
    group = parser.add_argument_group("profiling")
    group.add_argument(
        "--profile",
        metavar="DIR",
        help="profile the run: write DIR/op_summary_<ts>.csv, DIR/trace.json and "
        "DIR/lines.json, and print the top ops and hot lines on stderr",
    )
    group.add_argument(
        "--profile-stack",
        action="store_true",
        help="record the full user call stack of every launch (slower)",
    )
    group.add_argument(
        "--profile-ascend-pt",
        action="store_true",
        help="also write a torch_npu-style DIR/<host>_<pid>_<ts>_ascend_pt/ directory "
        "that msprof-analyze and MindStudio Insight read",
    )
    group.add_argument(
        "--profile-top",
        metavar="N",
        type=int,
        default=10,
        help="rows in each terminal table (default: 10; 0 hides the tables)",
    )


def check_args(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Reject unusable options before the script runs (exits 2 through `parser.error`)."""
    for flag in ("stack", "ascend_pt"):
        if getattr(args, f"profile_{flag}") and not args.profile:
            parser.error(f"--profile-{flag.replace('_', '-')} needs --profile DIR")
    if args.profile_top < 0:
        parser.error("--profile-top must be 0 or more")
    if args.profile:
        out = Path(args.profile)
        if out.exists() and not out.is_dir():
            parser.error(f"--profile {args.profile}: exists and is not a directory")
        parent = out if out.exists() else _existing_parent(out)
        if not os.access(parent, os.W_OK):
            parser.error(f"--profile {args.profile}: {parent} is not writable")


def _existing_parent(path: Path) -> Path:
    path = path.absolute()
    while not path.exists():
        path = path.parent
    return path


@dataclass
class ProfileRun:
    """The outcome of a profiled run, for the launcher's exit code."""

    profiler: Profiler | None
    files: dict[str, list[Path]] = field(default_factory=dict)
    error: str | None = None

    def exit_code(self, script_status: int) -> int:
        """The script's status, or 1 when it succeeded but the profile could not be written."""
        return script_status if script_status or self.error is None else 1


@contextmanager
def profiling(args: argparse.Namespace, console: Console | None = None) -> Iterator[ProfileRun]:
    """Profile the body when `args.profile` is set; then write DIR and print the tables."""
    if not getattr(args, "profile", None):
        yield ProfileRun(None)
        return
    console = console or Console(stderr=True)
    exporters = DEFAULT_EXPORTERS + (("ascend_pt",) if args.profile_ascend_pt else ())
    out_dir = Path(args.profile)
    rank = env_rank()
    if rank is not None:  # one rank of a distributed job: each rank has its own folder
        out_dir = out_dir / f"rank{rank}"
    profiler = Profiler(out_dir, stack=args.profile_stack, exporters=exporters)
    run = ProfileRun(profiler)
    progress = RunProgress(profiler.collector, console)
    profiler.start()
    progress.start()
    try:
        yield run
    finally:
        progress.stop()
        try:
            # Big runs take seconds to write; say so on a terminal (transient, never stdout).
            writing: contextlib.AbstractContextManager[object] = (
                console.status(f"writing profile to {args.profile}")
                if console.is_terminal
                else contextlib.nullcontext()
            )
            with writing:
                run.files = profiler.stop()
        except OSError as exc:
            run.error = f"cannot write profile to {args.profile}: {exc.strerror or exc}"
            console.print(f"[red]ascend-lens: {run.error}[/]")
        else:
            if args.profile_top:
                print_summary(profiler.summary, console, args.profile_top)
            console.print(f"profile written to {profiler.out_dir}")
