"""`python -m npu_kernel -f CONNECTION_FILE [--device NAME] [--devices N]`: start the kernel."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m npu_kernel", add_help=False)
    parser.add_argument("--device", default=None)
    parser.add_argument("--devices", type=int, default=None)
    ours, rest = parser.parse_known_args(sys.argv[1:] if argv is None else argv)
    # Our options become kernel traits; everything else is IPKernelApp's.
    if ours.device is not None:
        rest.append(f"--NpuKernel.device={ours.device}")
    if ours.devices is not None:
        rest.append(f"--NpuKernel.devices={ours.devices}")

    from ipykernel.kernelapp import IPKernelApp

    from npu_kernel.kernel import NpuKernel

    IPKernelApp.launch_instance(argv=rest, kernel_class=NpuKernel)


if __name__ == "__main__":
    main()
