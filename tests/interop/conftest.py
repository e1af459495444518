"""Fixtures for the interop suite; the helpers live in interop_support (no package __init__,
so that `tests/` never lands on sys.path and shadows our real packages)."""

from interop_support import tools

__all__ = ["tools"]
