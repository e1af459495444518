"""Which non-Python files a rule family claims, without importing the families.

`check` decides which files of a folder to look at before it knows whether it will run a
single rule (a run answered from the cache runs none), so the names of the file types
the families route to their own checkers live here, in a module that imports nothing.
The families register these very functions with `engine.register_checker`; a test checks
that, once every family is loaded, `engine.LANGUAGES` holds exactly `CLAIMED`.
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Callable

#: File names HCCL rank tables go by (matched against the base name, case-insensitively).
RANK_TABLE_PATTERNS: tuple[str, ...] = ("rank_table*.json", "hccl*.json")


def is_rank_table(path: str) -> bool:
    """True when `path`'s file name marks it as an HCCL rank table."""
    name = os.path.basename(path).lower()
    return any(fnmatch.fnmatchcase(name, pattern) for pattern in RANK_TABLE_PATTERNS)


#: Every matcher a family registers, in registration order (`engine.LANGUAGES`).
CLAIMED: tuple[Callable[[str], bool], ...] = (is_rank_table,)


def claimed(path: str) -> bool:
    """Does a family other than Python's check `path` (`engine.is_python` is its negation
    once the families are loaded)?"""
    return any(matcher(path) for matcher in CLAIMED)
