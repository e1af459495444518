"""The workspace indexer: a process of its own that reads, parses and summarises the
workspace's Python files, so the engine worker never parses a file nobody opened.

A single `ast.parse` cannot be sliced: a generated file just under the size limit holds
whatever process parses it for seconds. Done in the engine worker, that delays the open
file's diagnostics by as much. Here the indexer does it in parallel and sends the portable,
pickled summaries (`summary.portable`) in batches over a pipe; the worker only adds them to
its index (`WorkspaceIndex.add_summary`, no parse) between analyses.

Messages sent (each a tuple):
- `("batch", [Entry, ...], ["path: reason", ...])`: summaries, and files not indexed;
- `("done", files_from_check_cache)`: every file was sent.

The process dies with the server (`lifeline.tie_to_parent`), like the worker.
"""

from __future__ import annotations

import ast
import os
import pickle
import sys
import time
import warnings
from dataclasses import dataclass
from multiprocessing.connection import Connection

from npu_lsp.cache import FileSummary, digest, project_summaries
from npu_lsp.discovery import report_into
from npu_lsp.engine import WorkspaceIndex, iter_python_files
from npu_lsp.files import NotCheckable, read_checkable
from npu_lsp.lifeline import tie_to_parent
from npu_lsp.locate import Known, folder_of_file, known_of, still_located
from npu_lsp.scope import summarize
from npu_lsp.summary import portable

#: At most this many workspace files are indexed from disk.
MAX_INDEXED_FILES = 5000
#: A batch is sent when it holds this many summaries or is this old, whichever is first
#: (small batches keep each `add_summaries` call in the worker short).
BATCH_FILES = 50
BATCH_S = 0.25


@dataclass(frozen=True)
class Entry:
    """One file's portable summary, pickled, as `WorkspaceIndex.add_summary` takes it."""

    path: str  # as discovered (the worker compares it with the files the editor owns)
    key: str  # the index key (resolved path)
    module: str
    blob: bytes
    cached: bool  # taken from the `ascend-lens check` cache (no parse)


def run(root: str, limit: int, conn: Connection, server_pid: int) -> None:
    """Process entry point: index `root` and send everything over `conn`, then exit."""
    tie_to_parent(server_pid)
    os.dup2(2, 1)  # nothing printed may reach the LSP pipe the process inherited
    sys.stdout = sys.stderr
    try:
        index_workspace(root, limit, conn)
    except (BrokenPipeError, EOFError, OSError):  # the server went away or stopped us
        pass
    finally:
        conn.close()


def index_workspace(root: str, limit: int, conn: Connection) -> None:
    skipped: list[str] = []
    batch: list[Entry] = []
    keys = WorkspaceIndex(root)  # only for its key and module-name rules, holds nothing
    from_cache = project_summaries(root)
    cached = 0
    sent_at = time.monotonic()

    files = iter_python_files([root], **report_into(skipped))
    # every file's module first: imports resolve against all of them (`locate`)
    paths = [str(found) for _, found in zip(range(MAX_INDEXED_FILES), files, strict=False)]
    known = known_of(keys.module_for(path) for path in paths)
    for path in paths:
        entry = _summarise(path, limit, keys, from_cache, skipped, known)
        if entry is not None:
            batch.append(entry)
            cached += entry.cached
        if len(batch) >= BATCH_FILES or (
            (batch or skipped) and time.monotonic() - sent_at >= BATCH_S
        ):
            conn.send(("batch", batch, skipped))
            batch, skipped = [], []
            sent_at = time.monotonic()
    if batch or skipped:
        conn.send(("batch", batch, skipped))
    conn.send(("done", cached))


def _summarise(
    path: str,
    limit: int,
    keys: WorkspaceIndex,
    from_cache: dict[str, FileSummary],
    skipped: list[str],
    known: Known | None = None,
) -> Entry | None:
    """The entry for one file; None when it cannot be indexed (unreadable, not valid
    Python), with a line in `skipped` when the file was refused (special, too large)."""
    try:
        data = read_checkable(path, limit)
        text = data.decode("utf-8-sig")
    except NotCheckable as exc:
        skipped.append(str(exc))
        return None
    except (OSError, UnicodeDecodeError):
        return None
    key = keys.key(path)
    module = keys.module_for(path)
    hit = from_cache.get(key)
    if (
        hit is not None
        and hit.content == digest(data)
        and hit.module == module
        and (known is None or still_located(hit.located, folder_of_file(module, path), known))
    ):
        return Entry(path, key, module, hit.blob, cached=True)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(text, filename=path)
        info = portable(summarize(tree, key, module, text, known=known), text)
        blob = pickle.dumps(info, protocol=pickle.HIGHEST_PROTOCOL)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    return Entry(path, key, module, blob, cached=False)
