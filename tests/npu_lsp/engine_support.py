"""Helpers for the engine tests: fixture expectations and the shared corpus location."""

from __future__ import annotations

import re
from pathlib import Path

FIXTURES = Path(__file__).parent / "fixtures"
REPO = Path(__file__).resolve().parents[2]
SHARED = REPO.parent / "shared"
CORPUS = SHARED / "reference" / "graphmode"
_EXPECT = re.compile(r"#\s*expect:\s*([A-Z]+[0-9]+(?:\s*,\s*[A-Z]+[0-9]+)*)")


def expectations(text: str) -> set[tuple[int, str]]:
    """(line, code) pairs marked with `# expect: CODE` comments in a fixture."""
    out: set[tuple[int, str]] = set()
    for lineno, line in enumerate(text.splitlines(), start=1):
        m = _EXPECT.search(line)
        if m:
            out.update((lineno, c.strip()) for c in m.group(1).split(","))
    return out
