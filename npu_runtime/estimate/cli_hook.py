"""`ascend-lens run --estimate`: run a torch_npu script with shapes and dtypes only.

npu tensors get meta storage (no values, no host memory): every op still allocates from
the device's caching allocator and is charged to the simulated clock, so peak HBM, device
time and the first line that runs out of memory come out for models far larger than the
host. Reading a value back (`.item()`, printing, a data-dependent branch, `.cpu()`) stops
with an error naming the line. The report goes to stderr after the script.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

ENV = "ASCEND_LENS_ESTIMATE"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--estimate",
        action="store_true",
        help="torch_npu scripts: track shapes and dtypes only (meta storage) and report peak "
        "HBM, simulated device time and the first line that would run out of memory",
    )


def check_args(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    if getattr(args, "estimate", False):
        import importlib.util

        if importlib.util.find_spec("torch") is None:
            parser.error("--estimate needs PyTorch: pip install ascend-lens[torch]")


@dataclass
class _Run:
    active: bool

    def exit_code(self, status: int) -> int:
        return status


@contextmanager
def estimating(args: argparse.Namespace) -> Iterator[_Run]:
    if not getattr(args, "estimate", False):
        yield _Run(False)
        return
    os.environ[ENV] = "1"
    try:
        yield _Run(True)
    finally:
        report(sys.stderr)


def report(out: object) -> None:
    """Peak HBM, simulated device time and the out-of-memory line, per device used."""
    mod = sys.modules.get("npu_runtime.torch_npu._backend")
    write = out.write  # type: ignore[attr-defined]
    if mod is None:
        write("ascend-lens estimate: the script did not import torch_npu; nothing to report\n")
        return
    from npu_runtime.core.runtime import get_runtime
    from npu_runtime.torch_npu.allocator import format_size

    rt = get_runtime()
    write(f"ascend-lens estimate ({rt.profile.soc_name}, shapes only):\n")
    for index, alloc in sorted(mod._allocators.items()):
        dev = mod._devices.get(index)
        busy = max((s.ready_us for s in dev.streams.values()), default=0.0) if dev else 0.0
        write(
            f"  npu:{index}: peak allocated {format_size(alloc.stats.peak_allocated)}, "
            f"peak reserved {format_size(alloc.stats.peak_reserved)} of "
            f"{format_size(alloc.capacity)}; simulated device time {busy / 1000:.3f} ms\n"
        )
        site = mod.peak_sites.get(index)
        if site is not None:
            write(f"  npu:{index}: peak reached at {site}\n")
    oom = mod.first_oom
    if oom is not None:
        site, message = oom
        write(f"  out of memory at {site}: {message}\n")
