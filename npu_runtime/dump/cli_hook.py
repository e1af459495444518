"""`ascend-lens run` options for precision work: `--dump DIR [--dump-level L]`, `--numerics M`.

A launcher hook (LAUNCH_HOOKS in npu_runtime/launcher.py): `add_arguments`, `check_args`
and the `dumping(args)` context manager around the script. `--numerics` also reaches
child processes through NPU_NUMERICS.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from npu_runtime.dump.session import LEVELS, Dumper
from npu_runtime.numerics import NUMERICS_MODES


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add --dump, --dump-level and --numerics to the launcher's parser."""
    group = parser.add_argument_group("precision")
    group.add_argument(
        "--dump",
        metavar="DIR",
        help="write msprobe-compatible dumps of every op's inputs and outputs: "
        "DIR/step<k>/rank<device>/dump.json",
    )
    group.add_argument(
        "--dump-level",
        choices=LEVELS,
        default=None,
        help="statistics: Max/Min/Mean/Norm only (default); tensor: also every tensor as .pt",
    )
    group.add_argument(
        "--numerics",
        choices=NUMERICS_MODES,
        default=None,
        help="npu: device numerics (default); float32/float64: a reference run that stores "
        "the Tensor API's half-precision (float32) or all float tensors (float64) wider",
    )


def check_args(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Reject unusable options before the script runs (exits 2 through `parser.error`)."""
    if args.dump_level and not args.dump:
        parser.error("--dump-level needs --dump DIR")
    if args.dump:
        out = Path(args.dump)
        if out.exists() and not out.is_dir():
            parser.error(f"--dump {args.dump}: exists and is not a directory")
        parent = out.absolute()
        while not parent.exists():
            parent = parent.parent
        if not os.access(parent, os.W_OK):
            parser.error(f"--dump {args.dump}: {parent} is not writable")


@dataclass
class DumpRun:
    """The outcome of a dumped run, for the launcher's exit code."""

    dumper: Dumper | None
    files: list[Path] = field(default_factory=list)
    error: str | None = None

    def exit_code(self, script_status: int) -> int:
        """The script's status, or 1 when it succeeded but the dump could not be written."""
        return script_status if script_status or self.error is None else 1


@contextmanager
def dumping(args: argparse.Namespace) -> Iterator[DumpRun]:
    """Set the numerics mode; dump the body when `args.dump` is set."""
    if getattr(args, "numerics", None):
        from npu_runtime import numerics

        numerics.set_numerics(args.numerics)
        os.environ["NPU_NUMERICS"] = args.numerics
    if not getattr(args, "dump", None):
        yield DumpRun(None)
        return
    dumper = Dumper(args.dump, args.dump_level or "statistics")
    run = DumpRun(dumper)
    dumper.start()
    try:
        yield run
    finally:
        try:
            run.files = dumper.stop()
        except OSError as exc:
            run.error = f"cannot write dump to {args.dump}: {exc.strerror or exc}"
            sys.stderr.write(f"ascend-lens: {run.error}\n")
        else:
            written = "written to" if run.files else "empty (no op ran): nothing written to"
            sys.stderr.write(f"dump {written} {dumper.out_dir}\n")
