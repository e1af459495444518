"""Which files the checker and the workspace index may read: regular files up to a size.

A FIFO named `x.py` blocks a read forever and `/dev/zero` never ends; a 10 MB generated
module costs the engine half a minute and gigabytes. `check`, the workspace index and the
language server all ask `is_checkable` first and read through `read_checkable`, which
re-checks the opened descriptor (a path can change between the two) and never reads more
than the limit. A refused file is skipped with one message saying why.
"""

from __future__ import annotations

import os
import stat

#: Files larger than this (bytes) are not analysed; `max-file-size` in [tool.ascend-lens]
#: or the editor settings changes it (0 turns the limit off).
DEFAULT_MAX_FILE_BYTES = 2_000_000

_KINDS = (
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISDIR, "a directory"),
)


class NotCheckable(Exception):
    """A path the checker will not read; `reason` says why, in a phrase."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


def is_checkable(path: str | os.PathLike[str], limit: int = DEFAULT_MAX_FILE_BYTES) -> str | None:
    """None when `path` is a regular file of at most `limit` bytes; otherwise why not."""
    try:
        st = os.stat(path)
    except OSError as exc:
        return f"cannot read: {exc.strerror or exc}"
    return refusal(st, limit)


def refusal(st: os.stat_result, limit: int) -> str | None:
    """Why a file with `st` is not read (special, or over `limit` bytes when > 0); None if it is."""
    if not stat.S_ISREG(st.st_mode):
        kind = next((name for test, name in _KINDS if test(st.st_mode)), "a special file")
        return f"{kind}, not a regular file"
    if limit > 0 and st.st_size > limit:
        return f"{st.st_size:,} bytes, larger than the max-file-size limit of {limit:,} bytes"
    return None


def read_checkable(path: str | os.PathLike[str], limit: int = DEFAULT_MAX_FILE_BYTES) -> bytes:
    """The bytes of a checkable file; NotCheckable (or OSError) when it is not one.

    Opened non-blocking, so a FIFO put in the file's place after `is_checkable` cannot block,
    and read at most `limit` + 1 bytes, so a file that grew meanwhile cannot blow memory up."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        reason = refusal(os.fstat(fd), limit)
        if reason is not None:
            raise NotCheckable(str(path), reason)
        with open(fd, "rb", closefd=False) as f:
            data = f.read(limit + 1) if limit > 0 else f.read()
    finally:
        os.close(fd)
    if limit > 0 and len(data) > limit:
        raise NotCheckable(str(path), f"larger than the max-file-size limit of {limit:,} bytes")
    return data


def read_checkable_text(path: str | os.PathLike[str], limit: int = DEFAULT_MAX_FILE_BYTES) -> str:
    """`read_checkable` decoded as UTF-8 (a BOM dropped): what the index stores."""
    return read_checkable(path, limit).decode("utf-8-sig")
