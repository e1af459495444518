"""The engine side of the language server, run in a separate worker process.

`ast.parse` of a 100,000-line file holds the GIL for seconds; in a thread that would freeze
the server's event loop (no hover, no cancellation) for as long. In a process it does not.
Everything crossing the boundary is a plain picklable dataclass: the `Job` snapshot in, and
`Located` diagnostics per document out. The worker keeps the workspace index between runs;
the files nobody opened are parsed by the indexer process (`npu_lsp.indexer`), and the
worker only adds the summaries it sends (`add_summaries`).
"""

from __future__ import annotations

import gc
import os
import sys
from collections import OrderedDict
from dataclasses import dataclass, field, replace
from typing import Any

from npu_lsp.config import Config
from npu_lsp.diagnostics import Diagnostic, Edit, Span
from npu_lsp.engine import WorkspaceIndex
from npu_lsp.files import DEFAULT_MAX_FILE_BYTES, NotCheckable, read_checkable_text
from npu_lsp.idle_gc import COLLECTOR, task
from npu_lsp.incremental import IncrementalDocument
from npu_lsp.indexer import Entry
from npu_lsp.lifeline import tie_to_parent
from npu_lsp.notebook import JoinedNotebook, Located, locate_document, split_diagnostics
from npu_lsp.transfer import Payload, Sender

#: At most this many diagnostics per document are returned; editors show no more anyway.
MAX_DIAGNOSTICS = 2000
UNREADABLE = "AL002"
BOM = "\ufeff"

_index: WorkspaceIndex | None = None  # kept between runs, created on first use
#: Files whose index entry comes from the editor's text, which is newer than the disk's.
_live: set[str] = set()


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
    print may corrupt the protocol), then load every rule family. Cyclic garbage is
    collected between tasks, not during them (idle_gc.py)."""
    tie_to_parent(server_pid)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    COLLECTOR.start()
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
        memo: dict[int, Any] = {}
        return {uri: [_after_bom(item, memo) for item in items] for uri, items in shifted.items()}
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
        if job.path.endswith(".py") and engine.is_python(job.path):
            # re-parses and re-walks only what the edit can have changed (incremental.py);
            # indexes the text as it goes
            _go_live(index, job.path)
            # The document's trees stay alive between edits, so a cyclic collection scans
            # them all: none while a result of many small objects is built.
            paused = gc.isenabled()
            gc.disable()
            try:
                doc = _document(job.path)
                diagnostics = doc.check(job.text, job.config, index)
                located = locate_document(job.key, diagnostics[:MAX_DIAGNOSTICS], doc.located)
                return {job.key: located}
            finally:
                if paused:
                    gc.enable()
        if job.path.endswith(".py"):
            _go_live(index, job.path)
            index.update(job.path, job.text, live=True)
        diagnostics = engine.check_source(job.text, job.path, job.config, index)
        return {job.key: locate_document(job.key, diagnostics[:MAX_DIAGNOSTICS])}
    # Notebooks are Python whatever their file name (no routing by file type). The result
    # depends only on the joined code, the cells' layout, the settings and the workspace
    # index: unchanged, it is reused (a markdown cell edited, outputs, another file saved).
    stamp = (job.text, job.notebook.cells, job.config, index.version)
    cached = _notebooks.get(job.key)
    if cached is not None and cached[0] == stamp:
        return cached[1]
    paused = gc.isenabled()
    gc.disable()
    try:
        # an edit in one cell re-analyses the chunks it touched (incremental.py)
        diagnostics = _document(job.path, notebook=True).check(job.text, job.config, index)
        per_cell = split_diagnostics(job.notebook, diagnostics, job.path)
        result = {uri: located[:MAX_DIAGNOSTICS] for uri, located in per_cell.items()}
    finally:
        if paused:
            gc.enable()
    _notebooks[job.key] = (stamp, result)
    _notebooks.move_to_end(job.key)
    while len(_notebooks) > MAX_DOCUMENTS:
        _notebooks.popitem(last=False)
    return result


#: Per notebook (most recent last): what its last result was computed from, and the result.
_notebooks: OrderedDict[str, tuple[tuple[Any, ...], dict[str, list[Located]]]] = OrderedDict()


@task
def analyse_for_server(job: Job, have: tuple[str, int] | None) -> Payload:
    """`analyse(job)` as the server receives it: the entries of the result the server does
    not hold yet (`have`: what it holds of this document's last result), see transfer.py."""
    result = analyse(job)
    sender = _senders.pop(job.key, None)
    if sender is None:
        sender = Sender()
    _senders[job.key] = sender
    while len(_senders) > MAX_DOCUMENTS:
        _senders.popitem(last=False)
    return sender.encode(result, have)


#: Per analysed document (most recent last), what the server holds of its last result.
_senders: OrderedDict[str, Sender] = OrderedDict()


@task
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


@task
def add_summaries(root: str | None, entries: list[Entry]) -> None:
    """Add a batch of summaries from the indexer process (`npu_lsp.indexer`): no parse, so
    it never holds an analysis up. Files the editor owns, and files re-indexed since the
    indexer read them, keep the newer entry they have."""
    if root is None:
        return
    index = _workspace_index(root)
    for entry in entries:
        real = os.path.realpath(entry.path)
        if real in _live or real in _reindexed:
            continue
        index.add_summary(entry.key, entry.blob, entry.module)


def index_done() -> None:
    """The indexer sent every file: from now on only edits and file events change the index."""
    _reindexed.clear()


#: Files re-indexed from a file event while the indexer runs (its copy may be older).
_reindexed: set[str] = set()


@task
def reindex(
    root: str | None, path: str, deleted: bool, limit: int = DEFAULT_MAX_FILE_BYTES
) -> None:
    """A workspace file changed on disk: update its index entry (unless the editor owns it)."""
    if root is None or os.path.realpath(path) in _live:
        return
    index = _workspace_index(root)
    _reindexed.add(os.path.realpath(path))
    if deleted:
        index.remove(path)
        return
    try:
        index.update(path, read_checkable_text(path, limit))
    except (OSError, UnicodeDecodeError, NotCheckable):
        index.remove(path)


@task
def editor_closed(root: str | None, path: str, limit: int = DEFAULT_MAX_FILE_BYTES) -> None:
    """The editor closed `path`: from now on the disk's text is the one to index."""
    _live.discard(os.path.realpath(path))
    _interfaces.pop(os.path.realpath(path), None)
    _documents.pop(os.path.realpath(path), None)
    reindex(root, path, deleted=not os.path.exists(path), limit=limit)


@task
def summary_changed(root: str | None, path: str) -> bool:
    """Did the summary other files see of `path` (what cross-file resolution reads) change
    since the last time this was asked? Asked after an edit is published, so the open
    files that depend on it are checked again only when that can change their results."""
    blob = _interface(_workspace_index(root), path)
    if blob is None:
        return False
    key = os.path.realpath(path)
    changed = not blob or _interfaces.get(key, blob) != blob
    _interfaces[key] = blob
    return changed


def _interface(index: WorkspaceIndex, path: str) -> bytes | None:
    """What other files see of `path` in the index, as bytes to compare: None when it is not
    in the index, b"" when its summary cannot be pickled (then it counts as changed)."""
    info = index.module(index.module_for(path))
    if info is None or info.path != index.key(path):
        return None
    import pickle

    from npu_lsp.summary import portable

    try:
        return pickle.dumps(portable(info), protocol=pickle.HIGHEST_PROTOCOL)
    except RecursionError:
        return b""


def _go_live(index: WorkspaceIndex, path: str) -> None:
    """The editor's text of `path` is about to replace the disk's in the index. Remember what
    other files saw of it until now, so the first `summary_changed` after an edit compares
    against that, not against an edit that may already have changed it (edits arrive faster
    than analyses, and `summary_changed` runs only after one is published)."""
    real = os.path.realpath(path)
    if real not in _live:
        _interfaces[real] = _interface(index, path) or b""
        _live.add(real)


#: Per file the editor owns: the summary other open files were last checked against.
_interfaces: dict[str, bytes] = {}


def _after_bom(item: Located, memo: dict[int, Any]) -> Located:
    """`item` with line-1 columns moved past the BOM. `memo` (one per result) maps the id of
    an edit tuple to its moved copy: the diagnostics of a fix group share one tuple, and
    keep sharing it."""

    def move(span: Span) -> Span:
        return Span(
            span.line,
            span.column + (span.line == 1),
            span.end_line,
            span.end_column + (span.end_line == 1),
        )

    def moved(edits: tuple[Any, ...], tagged: bool) -> Any:
        hit = memo.get(id(edits))
        if hit is None:
            new: tuple[Any, ...]
            if tagged:
                new = tuple((uri, Edit(move(e.span), e.new_text)) for uri, e in edits)
            else:
                new = tuple(Edit(move(e.span), e.new_text) for e in edits)
            hit = memo[id(edits)] = (edits, new)  # the key's tuple kept alive: ids stay unique
        return hit[1]

    diag = item.diagnostic
    fix = diag.fix
    if fix is not None:
        fix = replace(fix, edits=moved(fix.edits, False))
    edits = moved(item.edits, True)
    return replace(item, diagnostic=replace(diag, span=move(diag.span), fix=fix), edits=edits)


def _workspace_index(root: str | None) -> WorkspaceIndex:
    global _index
    if _index is None or _index.root != WorkspaceIndex(root).root:
        _index = WorkspaceIndex(root)
        _live.clear()
        _interfaces.clear()
        _reindexed.clear()
        _documents.clear()
        _notebooks.clear()
    return _index


#: The incremental analysis state of the documents analysed last (most recent last).
_documents: OrderedDict[str, IncrementalDocument] = OrderedDict()
#: Open documents beyond this many give up their state (a tree per document is kept).
MAX_DOCUMENTS = 16


def _document(path: str, notebook: bool = False) -> IncrementalDocument:
    key = os.path.realpath(path)
    doc = _documents.pop(key, None)
    if doc is None or doc.path != path or doc.notebook != notebook:
        doc = IncrementalDocument(path, notebook=notebook)
    _documents[key] = doc
    while len(_documents) > MAX_DOCUMENTS:
        _documents.popitem(last=False)
    return doc
