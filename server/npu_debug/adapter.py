"""`ascend-lens debug-adapter`: the Debug Adapter Protocol server on stdio."""

from __future__ import annotations

import argparse
import logging
import os
import sys
import threading
from collections.abc import Sequence
from typing import IO


def _protocol_streams() -> tuple[IO[bytes], IO[bytes]]:
    """Take stdin/stdout for the protocol and point fd 1 at stderr, so a stray print or a
    library's output can never corrupt the DAP stream."""
    proto_in = os.fdopen(os.dup(0), "rb", buffering=0)
    proto_out = os.fdopen(os.dup(1), "wb", buffering=0)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return proto_in, proto_out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="ascend-lens debug-adapter",
        description="Debug Adapter Protocol server on stdio: debugpy plus the emulated NPU runtime.",
    )
    parser.add_argument(
        "--log-file", help="write the adapter's log here (default: stderr, warnings only)"
    )
    parser.add_argument("--verbose", action="store_true", help="log every relayed decision")
    opts = parser.parse_args(list(argv) if argv is not None else None)
    logging.basicConfig(
        filename=opts.log_file,
        level=logging.DEBUG if opts.verbose else logging.WARNING,
        format="%(asctime)s %(name)s %(levelname)s %(message)s",
    )
    proto_in, proto_out = _protocol_streams()

    from npu_debug.messaging import JsonStream
    from npu_debug.session import Session

    session = Session(JsonStream(proto_in, proto_out, "editor"))
    # The session ends when either the editor or debugpy goes away; whichever comes first.
    threading.Thread(target=session.run, name="npu-debug-client", daemon=True).start()
    session.done.wait()
    session.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
