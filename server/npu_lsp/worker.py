"""The engine side of the language server, run in a separate worker process.

`ast.parse` of a 100,000-line file holds the GIL for seconds; in a thread that would freeze
the server's event loop (no hover, no cancellation) for as long. In a process it does not.
Everything crossing the boundary is a plain picklable dataclass: the `Job` snapshot in, and
`Located` diagnostics per document out. The worker keeps the workspace index between runs.
"""

from __future__ import annotations

import os
import sys
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

from npu_lsp.cache import FileSummary, digest, project_summaries
from npu_lsp.config import Config
from npu_lsp.diagnostics import Diagnostic, Edit, Span
from npu_lsp.engine import WorkspaceIndex, iter_python_files
from npu_lsp.files import (
    DEFAULT_MAX_FILE_BYTES,
    NotCheckable,
    read_checkable,
    read_checkable_text,
)
from npu_lsp.lifeline import tie_to_parent
from npu_lsp.notebook import JoinedNotebook, Located, locate_document, split_diagnostics

#: At most this many diagnostics per document are returned; editors show no more anyway.
MAX_DIAGNOSTICS = 2000
UNREADABLE = "AL002"
BOM = "\ufeff"

_index: WorkspaceIndex | None = None  # kept between runs, created on first use
#: Files of the workspace not indexed yet (None: not listed yet).
_unindexed: list[str] | None = None
#: Files whose index entry comes from the editor's text, which is newer than the disk's.
_live: set[str] = set()
#: Workspace files the index refused ("path: reason"), until the server logs them.
skipped: list[str] = []
#: At most this many workspace files are indexed from disk.
MAX_INDEXED_FILES = 5000


@dataclass
class Job:
    """A snapshot of one document (or a whole notebook) to analyse."""

    key: str  # the document or notebook uri
    version: int | None
    path: str
    text: str
    notebook: JoinedNotebook | None = None
    cell_uris: tuple[str, ...] = ()
    root: str | None = None
    enabled: bool = True
    config: Config = field(default_factory=Config)


def empty(job: Job) -> dict[str, list[Located]]:
    return {uri: [] for uri in (job.cell_uris or (job.key,))}


def initialize_process(server_pid: int | None = None) -> None:
    """Pool initializer: die with the server (even a `kill -9`ed one: see lifeline.py), point
    fd 1 at stderr (the worker inherits the LSP pipe as stdout, and nothing the engine might
    print may corrupt the protocol), then load every rule family."""
    tie_to_parent(server_pid)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    from npu_lsp.registry import load_all

    load_all()


def ping() -> bool:
    """A no-op used to start the worker ahead of the first real analysis."""
    return True


def analyse(job: Job) -> dict[str, list[Located]]:
    """Run the engine on a snapshot; results per document uri, spans local to that document."""
    if job.notebook is None and job.text.startswith(BOM):
        # Python rejects a BOM inside text (files are read with utf-8-sig); analyse without it
        # and move line-1 columns back to where the client sees them.
        shifted = analyse(replace(job, text=job.text[1:]))
        return {uri: [_after_bom(item) for item in items] for uri, items in shifted.items()}
    if not job.enabled:
        return empty(job)
    limit = job.config.max_file_size
    if "\x00" in job.text or 0 < limit < len(job.text):
        reason = (
            "binary content (NUL bytes)"
            if "\x00" in job.text
            else f"larger than the max-file-size limit of {limit:,} characters"
        )
        diag = Diagnostic(UNREADABLE, f"file not checked: {reason}", "error", Span(1, 1, 1, 2))
        first = job.cell_uris[0] if job.cell_uris else job.key
        return {**empty(job), first: locate_document(first, [diag])}
    from npu_lsp import engine
    from npu_lsp.registry import load_all

    load_all()
    index = _workspace_index(job.root)
    if job.notebook is None:
        if job.path.endswith(".py"):
            index.update(job.path, job.text, live=True)
            _live.add(os.path.realpath(job.path))
        diagnostics = engine.check_source(job.text, job.path, job.config, index)
        return {job.key: locate_document(job.key, diagnostics[:MAX_DIAGNOSTICS])}
    # Notebooks are Python whatever their file name: bypass the file-type routing.
    raw = engine.check_python(job.text, job.path, job.config, index)
    diagnostics = engine.postprocess(raw, job.text, job.path, job.config)
    per_cell = split_diagnostics(job.notebook, diagnostics, job.path)
    return {uri: located[:MAX_DIAGNOSTICS] for uri, located in per_cell.items()}


def fix_document(job: Job, unsafe: bool = False) -> str:
    """Fix-all for a plain document: its text after every applicable fix, exactly as
    `ascend-lens check --fix` would write it (`npu_lsp.fixing.fix_source`)."""
    limit = job.config.max_file_size
    if not job.enabled or "\x00" in job.text or 0 < limit < len(job.text):
        return job.text
    if job.text.startswith(BOM):
        return BOM + fix_document(replace(job, text=job.text[1:]), unsafe)
    from npu_lsp.fixing import fix_source
    from npu_lsp.registry import load_all

    load_all()
    index = _workspace_index(job.root)
    return fix_source(job.text, job.path, job.config, index, unsafe=unsafe).text


def index_slice(
    root: str | None, budget_s: float = 0.2, limit: int = DEFAULT_MAX_FILE_BYTES
) -> bool:
    """Index workspace files from disk for up to `budget_s` seconds; True once all are done.

    Cross-file graph scopes (a `Cell` base class or a helper in another module) need the
    whole workspace, but indexing it in one go would hold the single worker for seconds, so
    the server feeds it in slices between analyses.
    """
    global _unindexed, _from_cache
    if root is None:
        return True
    index = _workspace_index(root)
    if _unindexed is None:
        files = iter_python_files([root], on_error=_unlistable, on_skip=_special)
        _unindexed = [str(p) for _, p in zip(range(MAX_INDEXED_FILES), files, strict=False)]
        _unindexed.reverse()  # pop() from the end keeps walk order
        _from_cache = project_summaries(root)
    deadline = time.perf_counter() + budget_s
    while _unindexed and time.perf_counter() < deadline:
        path = _unindexed.pop()
        if os.path.realpath(path) in _live:
            continue
        try:
            data = read_checkable(path, limit)
            text = data.decode("utf-8-sig")
        except NotCheckable as exc:
            skipped.append(str(exc))
            continue
        except (OSError, UnicodeDecodeError):
            continue
        if not _index_from_cache(index, path, data, text):
            index.update(path, text)
    if _unindexed:
        return False
    _from_cache = {}
    return True


def _index_from_cache(index: WorkspaceIndex, path: str, data: bytes, text: str) -> bool:
    """Index `path` from the summary `ascend-lens check` cached for this content, if any
    (no parse); the count shows in the "index ready" message."""
    global cached_count
    key = index.key(path)
    hit = _from_cache.get(key)
    if hit is None or hit.content != digest(data) or hit.module != index.module_for(path):
        return False
    index.add_summary(key, hit.blob, hit.module)
    index.note_text(key, text)
    cached_count += 1
    return True


def index_report() -> int:
    """How many files the index took from the check cache."""
    return cached_count


#: Summaries `check` cached for the workspace, while indexing (see `cache.project_summaries`).
_from_cache: dict[str, FileSummary] = {}
cached_count = 0


def _special(path: Path, reason: str) -> None:
    skipped.append(f"{path}: {reason}")


def _unlistable(exc: OSError) -> None:
    skipped.append(f"{exc.filename}: cannot read folder: {exc.strerror or exc}")


def take_skipped() -> list[str]:
    """Workspace files the index refused since the last call ("path: reason"), for the log."""
    out = skipped[:]
    skipped.clear()
    return out


def reindex(
    root: str | None, path: str, deleted: bool, limit: int = DEFAULT_MAX_FILE_BYTES
) -> None:
    """A workspace file changed on disk: update its index entry (unless the editor owns it)."""
    if root is None or os.path.realpath(path) in _live:
        return
    index = _workspace_index(root)
    if deleted:
        index.remove(path)
        return
    try:
        index.update(path, read_checkable_text(path, limit))
    except (OSError, UnicodeDecodeError, NotCheckable):
        index.remove(path)


def editor_closed(root: str | None, path: str, limit: int = DEFAULT_MAX_FILE_BYTES) -> None:
    """The editor closed `path`: from now on the disk's text is the one to index."""
    _live.discard(os.path.realpath(path))
    reindex(root, path, deleted=not os.path.exists(path), limit=limit)


def summary_changed(root: str | None, path: str) -> bool:
    """Did the summary other files see of `path` (what cross-file resolution reads) change
    since the last time this was asked? Asked after an edit is published, so the open
    files that depend on it are checked again only when that can change their results."""
    index = _workspace_index(root)
    info = index.module(index.module_for(path))
    if info is None or info.path != index.key(path):
        return False
    import pickle

    from npu_lsp.summary import portable

    try:
        blob = pickle.dumps(portable(info), protocol=pickle.HIGHEST_PROTOCOL)
    except RecursionError:
        return True
    key = os.path.realpath(path)
    changed = _interfaces.get(key, blob) != blob
    _interfaces[key] = blob
    return changed


#: The last summary `summary_changed` saw per file.
_interfaces: dict[str, bytes] = {}


def _after_bom(item: Located) -> Located:
    def move(span: Span) -> Span:
        return Span(
            span.line,
            span.column + (span.line == 1),
            span.end_line,
            span.end_column + (span.end_line == 1),
        )

    diag = item.diagnostic
    fix = diag.fix
    if fix is not None:
        fix = replace(fix, edits=tuple(Edit(move(e.span), e.new_text) for e in fix.edits))
    edits = tuple((uri, Edit(move(e.span), e.new_text)) for uri, e in item.edits)
    return replace(item, diagnostic=replace(diag, span=move(diag.span), fix=fix), edits=edits)


def _workspace_index(root: str | None) -> WorkspaceIndex:
    global _index, _unindexed, cached_count
    if _index is None or _index.root != WorkspaceIndex(root).root:
        _index = WorkspaceIndex(root)
        _unindexed = None
        cached_count = 0
        _live.clear()
    return _index
