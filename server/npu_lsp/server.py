"""The Ascend Lens language server (pygls 2, stdio): `ascend-lens server`.

Handlers only fetch the document, call the engine (`npu_lsp.engine`, which knows nothing of
LSP), convert (`npu_lsp.convert`) and publish or answer. Features:

- diagnostics pushed on open/change (debounced per document; a run whose document changed
  meanwhile is dropped) or pulled (`textDocument/diagnostic`, result id `uri@version`) when the
  client supports pull diagnostics;
- quick fixes and a `source.fixAll.ascend-lens` action;
- hover on pyACL/AscendCL names and ACL error codes;
- notebooks via notebook document sync: the code cells are analysed as one text and the
  results are mapped back to each cell;
- configuration from `[tool.ascend-lens]` in pyproject.toml, initializationOptions and
  workspace/didChangeConfiguration.

The engine runs in one worker process so the event loop keeps reading messages while a large
file is analysed; workspace files nobody opened are parsed in a separate indexer process. Only protocol goes to stdout; logs go to stderr (or `--log-file`).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import json
import logging
import multiprocessing
import os
import sys
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import Any, TypeVar

from lsprotocol import types as lsp
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path

from npu_lsp import convert, fixing, indexer, notebook, transfer, worker
from npu_lsp.columns import split_lines
from npu_lsp.config import Config, load_config
from npu_lsp.debounce import Debouncer
from npu_lsp.notebook import Located
from npu_lsp.protocol import PARSE_ERROR, AnsweringProtocol
from npu_lsp.publish_cache import DocumentCache
from npu_lsp.rules.hccl.checker import is_rank_table
from npu_lsp.settings_lsp import ServerSettings, parse_settings
from npu_lsp.worker import Job

log = logging.getLogger("npu_lsp.server")
T = TypeVar("T")


@dataclass
class Analysis:
    """The latest published result for one document (a file or a notebook cell)."""

    result_id: str
    located: list[Located]
    lsp_diagnostics: list[lsp.Diagnostic]


class AscendLensServer(LanguageServer):
    """pygls server holding per-document results, settings and the engine's worker process."""

    def __init__(self) -> None:
        from importlib.metadata import PackageNotFoundError, version

        try:
            own_version = version("ascend-lens")
        except PackageNotFoundError:  # running from a source tree
            own_version = "0+unknown"
        super().__init__(
            "ascend-lens",
            own_version,
            protocol_cls=AnsweringProtocol,
            text_document_sync_kind=lsp.TextDocumentSyncKind.Incremental,
            notebook_document_sync=lsp.NotebookDocumentSyncOptions(
                notebook_selector=[
                    lsp.NotebookDocumentFilterWithCells(
                        cells=[lsp.NotebookCellLanguage(language="python")], notebook="*"
                    )
                ]
            ),
        )
        self.settings = ServerSettings()
        self.results: dict[str, Analysis] = {}
        #: per document, the LSP form and JSON of each diagnostic last published
        self._published: dict[str, DocumentCache] = {}
        #: per analysed document (file or notebook), the worker's last result (transfer.py)
        self._mirrors: dict[str, transfer.Mirror] = {}
        self.debouncer = Debouncer(self.settings.debounce_ms / 1000)
        self._pool: ProcessPoolExecutor | None = None
        self._indexer: multiprocessing.process.BaseProcess | None = None
        self._indexing = False
        #: Bumped when the worker is restarted (its workspace index starts empty).
        self._worker_generation = 0
        self._tasks: set[asyncio.Task[None]] = set()
        self.pull_mode = False
        self.related_support = True
        self._configs: dict[str, Config] = {}
        self._warned: set[str] = set()  # each configuration problem is reported once

    # ------------------------------------------------------------------ configuration
    def apply_settings(self, raw: Any) -> None:
        self.settings = parse_settings(raw)
        self.debouncer.delay = self.settings.debounce_ms / 1000
        self._configs.clear()
        self._warned.clear()
        for problem in self.settings.problems:
            self.warn(f"Ascend Lens settings: {problem}")

    def config_for(self, path: str) -> Config:
        """Project config for `path` merged with editor settings (cached per folder)."""
        folder = os.path.dirname(path) or "."
        config = self._configs.get(folder)
        if config is None:
            config = load_config(path if os.path.isabs(path) else os.getcwd())
            config = config.merged(self.settings.lint)
            self._configs[folder] = config
            for problem in config.problems:
                message = f"Ascend Lens configuration: {problem}"
                if message not in self._warned:
                    self._warned.add(message)
                    self.warn(message)
        return config

    def max_file_size(self, root: str | None) -> int:
        """The file size limit of the workspace (from its pyproject and the editor settings)."""
        return self.config_for(os.path.join(root or os.getcwd(), "")).max_file_size

    def log_skipped(self, skipped: list[str] | None) -> None:
        """Say in the log, once each, which workspace files the index did not read."""
        for entry in skipped or ():
            message = f"Ascend Lens: not indexed: {entry}"
            if message not in self._warned:
                self._warned.add(message)
                log.warning("%s", message)
                self.window_log_message(
                    lsp.LogMessageParams(type=lsp.MessageType.Warning, message=message)
                )

    def report_server_error(self, error: Exception, source: Any) -> None:
        """A message body that is not JSON is answered with a parse error (JSON-RPC: id null);
        everything else is reported as pygls does."""
        unparsable = isinstance(error, json.JSONDecodeError | UnicodeDecodeError)
        if unparsable and isinstance(self.protocol, AnsweringProtocol):
            self.protocol.send_error(None, PARSE_ERROR, f"parse error: {error}")
            return
        super().report_server_error(error, source)

    def warn(self, message: str) -> None:
        """Log to stderr and to the client's output channel (call on the event loop only)."""
        log.warning("%s", message)
        with contextlib.suppress(Exception):  # no transport yet: the stderr line remains
            self.window_log_message(
                lsp.LogMessageParams(type=lsp.MessageType.Warning, message=message)
            )

    # ------------------------------------------------------------------ analysis
    def job_for(self, uri: str) -> Job | None:
        """Snapshot the text to analyse for `uri` (a file, a notebook, or a cell of one)."""
        nb = self.workspace.get_notebook_document(
            notebook_uri=uri
        ) or self.workspace.get_notebook_document(cell_uri=uri)
        if nb is not None:
            cells = []
            for cell in nb.cells:
                doc = self.workspace.text_documents.get(cell.document)
                if cell.kind != lsp.NotebookCellKind.Code or doc is None:
                    continue
                if doc.language_id not in (None, "python"):
                    continue
                cells.append((cell.document, doc.source))
            joined = notebook.join_cells(cells)
            return self._job(nb.uri, nb.version, joined.text, joined, tuple(u for u, _ in cells))
        doc = self.workspace.text_documents.get(uri)
        if doc is None or not is_analysable(_path_of(uri), doc.language_id):
            return None
        return self._job(uri, doc.version, doc.source)

    def _job(
        self,
        uri: str,
        version: int | None,
        text: str,
        joined: notebook.JoinedNotebook | None = None,
        cell_uris: tuple[str, ...] = (),
    ) -> Job:
        path = _path_of(uri)
        return Job(
            key=uri,
            version=version,
            path=path,
            text=text,
            notebook=joined,
            cell_uris=cell_uris,
            root=self.workspace.root_path,
            enabled=self.settings.enable,
            config=self.config_for(path),
        )

    def start_worker(self) -> None:
        """Start the engine process now, so the first analysis does not pay for it."""
        if self._pool is None:
            self._pool = ProcessPoolExecutor(
                max_workers=1,
                mp_context=multiprocessing.get_context("spawn"),
                initializer=worker.initialize_process,
                initargs=(os.getpid(),),
            )
            self._pool.submit(worker.ping)

    def background(self, coro: Any) -> None:
        """Run `coro` as a task the server keeps a reference to (asyncio only holds weak ones)."""
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def stop_worker(self) -> None:
        """Stop the engine process without waiting for an analysis in flight."""
        pool, self._pool = self._pool, None
        if pool is None:
            return
        processes = list(getattr(pool, "_processes", {}).values())  # no public handle
        pool.shutdown(wait=False, cancel_futures=True)
        for process in processes:
            with contextlib.suppress(Exception):
                process.terminate()

    def shutdown(self) -> None:
        self.stop_indexer()
        self.stop_worker()
        super().shutdown()

    async def run_worker(self, job: Job) -> dict[str, list[Located]]:
        """Run the engine on `job` in the worker process (restarted once if it died). The
        worker sends only what changed since the result the server holds (transfer.py)."""
        mirror = self._mirrors.setdefault(job.key, transfer.Mirror())
        for have in (mirror.have, None):
            payload = await self.in_worker(worker.analyse_for_server, job, have)
            if payload is None:
                break
            paused = gc.isenabled()
            gc.disable()  # a full result is thousands of small objects: no collector passes
            try:
                result = mirror.apply(payload)
            finally:
                if paused:
                    gc.enable()
            if result is not None:
                return result
            # it built on another result (two runs of this document were in flight): ask
            # for a full one, unless this run's text is stale anyway (then it is dropped)
            if not self.is_current(job):
                break
        return worker.empty(job)

    async def in_worker(self, fn: Callable[..., T], *args: Any) -> T | None:
        """Call `fn(*args)` in the worker process; None if it died twice."""
        loop = asyncio.get_running_loop()
        for attempt in (1, 2):
            self.start_worker()
            assert self._pool is not None
            try:
                return await loop.run_in_executor(self._pool, fn, *args)
            except BrokenProcessPool:
                log.error("engine worker died (attempt %d); restarting it", attempt)
                self._pool = None
                self._worker_generation += 1
                self.background(self.index_workspace())  # its index died with it
        return None

    async def watch_files(self) -> None:
        """Ask the client to report changes to Python files and pyproject.toml made outside it."""
        caps = self.client_capabilities.workspace
        watched = caps.did_change_watched_files if caps else None
        if not (watched and watched.dynamic_registration):
            return
        options = lsp.DidChangeWatchedFilesRegistrationOptions(
            watchers=[
                lsp.FileSystemWatcher(glob_pattern="**/*.py"),
                lsp.FileSystemWatcher(glob_pattern="**/pyproject.toml"),
            ]
        )
        registration = lsp.Registration(
            id="ascend-lens-watch",
            method=lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES,
            register_options=options,
        )
        try:
            await self.client_register_capability_async(
                lsp.RegistrationParams(registrations=[registration])
            )
        except Exception as exc:  # a client that refuses just gets no file watching
            log.info("file watching not registered: %s", exc)

    async def index_workspace(self) -> None:
        """Index the workspace's Python files, then re-analyse what is open.

        Graph scopes cross files (a Cell base class, a helper in another module); until the
        index is complete, diagnostics only know the files the editor has opened. The files
        are read, parsed and summarised by the indexer process (`npu_lsp.indexer`), so no
        parse of a big file stands between an edit and its diagnostics; the worker only adds
        the summaries it sends, between analyses. A worker that died and was restarted lost
        its index: the indexing starts over.
        """
        root = self.workspace.root_path
        if not root or self._indexing:
            return
        self._indexing = True
        try:
            while True:
                generation = self._worker_generation
                cached = await self._index_pass(root, self.max_file_size(root))
                if cached is None:
                    return
                if generation == self._worker_generation:
                    break
        finally:
            self._indexing = False
        ready = f"Ascend Lens: workspace index ready for {root}"
        if cached:
            ready += f" ({cached} files from the check cache)"
        log.info("%s", ready)
        self.window_log_message(lsp.LogMessageParams(type=lsp.MessageType.Info, message=ready))
        self.refresh_all()

    async def _index_pass(self, root: str, limit: int) -> int | None:
        """Run the indexer once, handing its batches to the worker; the number of files
        taken from the check cache, or None when the index cannot be completed."""
        messages: asyncio.Queue[tuple[Any, ...] | None] = asyncio.Queue()
        generation = self._worker_generation
        self.start_indexer(root, limit, messages)
        try:
            while (message := await messages.get()) is not None:
                if message[0] == "done":
                    await self.in_worker(worker.index_done)
                    return int(message[1])
                _, entries, skipped = message
                self.log_skipped(skipped)
                if entries:
                    await self.in_worker(worker.add_summaries, root, entries)
                    if self._pool is None:  # the worker died twice: give up on the index
                        return None
                if generation != self._worker_generation:
                    return 0  # the worker was restarted with an empty index: start over
            code = self._indexer.exitcode if self._indexer is not None else None
            log.error("workspace indexer ended before it was done (exit code %s)", code)
            return None
        except (asyncio.CancelledError, RuntimeError):  # shutting down
            return None
        finally:
            self.stop_indexer()

    def start_indexer(
        self, root: str, limit: int, messages: asyncio.Queue[tuple[Any, ...] | None]
    ) -> None:
        """Start the indexer process on `root`; a daemon thread moves what it sends to
        `messages` (None when the pipe closes), so the event loop never blocks on it."""
        ctx = multiprocessing.get_context("spawn")
        receiver, sender = ctx.Pipe(duplex=False)
        process = ctx.Process(
            target=indexer.run,
            args=(root, limit, sender, os.getpid()),
            name="ascend-lens-indexer",
            daemon=True,
        )
        process.start()
        sender.close()  # the child holds the only writing end: its exit means EOF here
        self._indexer = process
        loop = asyncio.get_running_loop()

        def pump() -> None:
            with receiver:
                while True:
                    try:
                        message = receiver.recv()
                    except (EOFError, OSError):
                        message = None
                    last = message is None or message[0] == "done"
                    if last:  # the indexer exits now: reap it (the only place that does)
                        process.join()
                    with contextlib.suppress(RuntimeError):  # the loop is closed
                        loop.call_soon_threadsafe(messages.put_nowait, message)
                    if last:
                        return

        threading.Thread(target=pump, name="indexer-pipe", daemon=True).start()

    def stop_indexer(self) -> None:
        """Stop the indexer process if it still runs (its pipe thread then reaps it)."""
        process, self._indexer = self._indexer, None
        if process is not None and process.exitcode is None:
            process.terminate()

    def is_current(self, job: Job) -> bool:
        """Is the analysed snapshot still what the client has?"""
        fresh = self.job_for(job.key)
        return fresh is not None and fresh.version == job.version and fresh.text == job.text

    async def analyse(self, uri: str) -> dict[str, Analysis] | None:
        """Analyse `uri` on the worker; None when the document changed meanwhile (dropped)."""
        job = self.job_for(uri)
        if job is None:
            return None
        per_uri = await self.run_worker(job)
        if not self.is_current(job):
            log.debug("dropping stale result for %s@%s", job.key, job.version)
            return None
        out: dict[str, Analysis] = {}
        for doc_uri, located in per_uri.items():
            lsp_diags = self.convert_cached(doc_uri, located)
            out[doc_uri] = Analysis(f"{doc_uri}@{job.version}", located, lsp_diags)
        self.results.update(out)
        return out

    def convert_cached(self, uri: str, located: list[Located]) -> list[lsp.Diagnostic]:
        """The LSP form of `located` (diagnostics of `uri`), reusing the conversion of each
        diagnostic published last time (the same object, on the same line texts): after an
        edit, most of a file's diagnostics are unchanged."""
        cache = self._published.setdefault(uri, DocumentCache())
        codec = self.workspace.position_codec
        return cache.convert(uri, located, self.lines(uri), codec, self.related_support)

    async def publish(self, uri: str) -> None:
        """Analyse and push diagnostics (push mode)."""
        results = await self.analyse(uri)
        if results is None or self.pull_mode:
            return
        for doc_uri, analysis in results.items():
            doc = self.workspace.text_documents.get(doc_uri)
            self.publish_json(
                doc_uri, analysis.lsp_diagnostics, doc.version if doc is not None else None
            )
        await self.recheck_dependents(uri)

    def publish_json(
        self, uri: str, diagnostics: list[lsp.Diagnostic], version: int | None
    ) -> None:
        """publishDiagnostics, encoding only the diagnostics not published last time: the
        JSON of each is kept by identity (`convert_cached` hands back the same object for an
        unchanged diagnostic), so a dense file's unchanged findings are not encoded again."""
        protocol = self.protocol
        cache = self._published.setdefault(uri, DocumentCache())
        if not isinstance(protocol, AnsweringProtocol):  # pragma: no cover - always ours
            self.text_document_publish_diagnostics(
                lsp.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics, version=version)
            )
            return
        params = cache.params_json(uri, diagnostics, version, protocol._converter.unstructure)
        protocol.notify_json(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS, params)

    async def recheck_dependents(self, uri: str) -> None:
        """After an edit of a Python file is published: when what other files see of it (a
        Cell base, a helper, what its compiled code calls) changed, the other open documents
        are analysed again (debounced), since their graph scopes may cross into it."""
        if not uri.endswith(".py") or uri not in self.workspace.text_documents:
            return
        others = {self._analysis_key(u) for u in self.workspace.text_documents} - {uri}
        if not others:
            return  # nothing to re-check: not even worth asking the worker
        changed = await self.in_worker(
            worker.summary_changed, self.workspace.root_path, _path_of(uri)
        )
        if not changed:
            return
        for key in others:
            self.schedule(key)

    def schedule(self, uri: str, *, immediate: bool = False) -> None:
        key = self._analysis_key(uri)
        if immediate:
            # Through the debouncer with no delay: a later change still supersedes this run.
            self.debouncer.schedule(key, lambda: self.publish(key), delay=0)
        else:
            self.debouncer.schedule(key, lambda: self.publish(key))

    async def current(self, uri: str) -> Analysis | None:
        """The analysis of `uri` for the text the client has now (computed if needed)."""
        job = self.job_for(uri)
        if job is None:
            return None
        cached = self.results.get(uri)
        if (
            cached is not None
            and cached.result_id == f"{uri}@{job.version}"
            and self.is_current(job)
        ):
            return cached
        results = await self.analyse(uri)
        return results.get(uri) if results else None

    async def fix_all_action(self, uri: str) -> lsp.CodeAction | None:
        """`source.fixAll.ascend-lens` for `uri`: the text `ascend-lens check --fix` would
        write (`npu_lsp.fixing`, run in the worker), sent as one edit of the changed lines.
        A notebook cell fixes the whole notebook (its cells were analysed together), in one
        round of the same fix selection."""
        codec = self.workspace.position_codec
        key = self._analysis_key(uri)
        nb = self.workspace.get_notebook_document(notebook_uri=key)
        uris = [c.document for c in nb.cells] if nb is not None else [uri]
        located = [item for u in uris if u in self.results for item in self.results[u].located]
        if not any(item.edits and fixing.applicable(item.diagnostic, False) for item in located):
            return None  # nothing to fix: skip the worker round trip
        if nb is not None:
            lines_of = {u: self.lines(u) for u in convert.edit_uris(located)}
            return convert.fix_all(located, lines_of, codec)
        job = self.job_for(uri)
        if job is None:
            return None
        fixed = await self.in_worker(worker.fix_document, job)
        if fixed is None or not self.is_current(job):
            return None
        edit = fixing.minimal_edit(job.text, fixed)
        if edit is None:
            return None
        return convert.fix_all_action(convert.document_edit(uri, edit, self.lines(uri), codec))

    def _analysis_key(self, uri: str) -> str:
        nb = self.workspace.get_notebook_document(cell_uri=uri)
        return nb.uri if nb is not None else uri

    def lines(self, uri: str) -> Sequence[str]:
        """The document's lines as LSP and `ast` number them (pygls' `doc.lines` also splits
        at \f, \u2028 and friends, which would shift every later line)."""
        doc = self.workspace.text_documents.get(uri)
        return split_lines(doc.source) if doc is not None else ()

    def refresh_all(self) -> None:
        """Re-analyse every open document after a configuration change."""
        self.results.clear()
        self._configs.clear()
        if self.pull_mode:
            caps = self.client_capabilities.workspace
            if caps and caps.diagnostics and caps.diagnostics.refresh_support:
                self.workspace_diagnostic_refresh(None)
            return
        keys = {self._analysis_key(uri) for uri in self.workspace.text_documents}
        for key in keys:
            self.schedule(key, immediate=True)

    def clear(self, uri: str) -> None:
        self.debouncer.cancel(uri)
        self.results.pop(uri, None)
        self._published.pop(uri, None)
        self._mirrors.pop(uri, None)
        if not self.pull_mode:
            self.text_document_publish_diagnostics(
                lsp.PublishDiagnosticsParams(uri=uri, diagnostics=[])
            )


def is_analysable(path: str, language_id: str | None) -> bool:
    """Python sources and HCCL rank tables; other documents the client opens are left alone."""
    if language_id == "python" or path.endswith((".py", ".pyi")):
        return True
    return is_rank_table(path)


def _path_of(uri: str) -> str:
    return to_fs_path(uri) or uri


server = AscendLensServer()


# ---------------------------------------------------------------------- lifecycle
@server.feature(lsp.INITIALIZE)
def on_initialize(ls: AscendLensServer, params: lsp.InitializeParams) -> None:
    ls.apply_settings(params.initialization_options)
    text_caps = params.capabilities.text_document
    ls.pull_mode = bool(text_caps and text_caps.diagnostic)
    publish = text_caps.publish_diagnostics if text_caps else None
    ls.related_support = bool(publish and publish.related_information)
    log.info("initialised: pull diagnostics=%s, settings=%s", ls.pull_mode, ls.settings)
    ls.start_worker()


@server.feature(lsp.INITIALIZED)
def on_initialized(ls: AscendLensServer, params: lsp.InitializedParams) -> None:
    ls.background(ls.index_workspace())
    ls.background(ls.watch_files())


@server.feature(lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES)
async def on_watched_files(ls: AscendLensServer, params: lsp.DidChangeWatchedFilesParams) -> None:
    """Files changed outside the editor: project configuration, or modules others import."""
    if any(change.uri.endswith("pyproject.toml") for change in params.changes):
        ls.refresh_all()
        return
    root = ls.workspace.root_path
    touched = False
    for change in params.changes:
        if change.uri.endswith(".py") and change.uri not in ls.workspace.text_documents:
            deleted = change.type == lsp.FileChangeType.Deleted
            limit = ls.max_file_size(root)
            await ls.in_worker(worker.reindex, root, _path_of(change.uri), deleted, limit)
            touched = True
    if touched and not ls.pull_mode:
        for key in {ls._analysis_key(uri) for uri in ls.workspace.text_documents}:
            ls.schedule(key)
    elif touched:
        ls.refresh_all()


@server.feature(lsp.WORKSPACE_DID_CHANGE_CONFIGURATION)
def on_configuration(ls: AscendLensServer, params: lsp.DidChangeConfigurationParams) -> None:
    if params.settings is not None:
        ls.apply_settings(params.settings)
    ls.refresh_all()


# ---------------------------------------------------------------------- text documents
@server.feature(lsp.TEXT_DOCUMENT_DID_OPEN)
def on_open(ls: AscendLensServer, params: lsp.DidOpenTextDocumentParams) -> None:
    ls.schedule(params.text_document.uri, immediate=True)


@server.feature(lsp.TEXT_DOCUMENT_DID_CHANGE)
def on_change(ls: AscendLensServer, params: lsp.DidChangeTextDocumentParams) -> None:
    ls.schedule(params.text_document.uri)


@server.feature(lsp.TEXT_DOCUMENT_DID_SAVE)
def on_save(ls: AscendLensServer, params: lsp.DidSaveTextDocumentParams) -> None:
    saved = params.text_document.uri
    if saved.endswith("pyproject.toml"):
        ls.refresh_all()
    elif saved.endswith(".py") and not ls.pull_mode:
        # Other open files may depend on this one (a Cell base, a helper): analyse them again.
        for key in {ls._analysis_key(uri) for uri in ls.workspace.text_documents} - {saved}:
            ls.schedule(key)


@server.feature(lsp.TEXT_DOCUMENT_DID_CLOSE)
def on_close(ls: AscendLensServer, params: lsp.DidCloseTextDocumentParams) -> None:
    uri = params.text_document.uri
    ls.clear(uri)
    if uri.endswith(".py"):  # unsaved edits are gone: index the file as it is on disk
        root = ls.workspace.root_path
        limit = ls.max_file_size(root)
        ls.background(ls.in_worker(worker.editor_closed, root, _path_of(uri), limit))


# ---------------------------------------------------------------------- notebooks
@server.feature(lsp.NOTEBOOK_DOCUMENT_DID_OPEN)
def on_notebook_open(ls: AscendLensServer, params: lsp.DidOpenNotebookDocumentParams) -> None:
    ls.schedule(params.notebook_document.uri, immediate=True)


@server.feature(lsp.NOTEBOOK_DOCUMENT_DID_CHANGE)
def on_notebook_change(ls: AscendLensServer, params: lsp.DidChangeNotebookDocumentParams) -> None:
    structure = params.change.cells.structure if params.change.cells else None
    for closed in (structure.did_close or []) if structure else []:
        ls.clear(closed.uri)
    ls.schedule(params.notebook_document.uri)


@server.feature(lsp.NOTEBOOK_DOCUMENT_DID_CLOSE)
def on_notebook_close(ls: AscendLensServer, params: lsp.DidCloseNotebookDocumentParams) -> None:
    ls.debouncer.cancel(params.notebook_document.uri)
    ls._mirrors.pop(params.notebook_document.uri, None)
    for cell in params.cell_text_documents:
        ls.clear(cell.uri)


# ---------------------------------------------------------------------- pull diagnostics
@server.feature(
    lsp.TEXT_DOCUMENT_DIAGNOSTIC,
    lsp.DiagnosticOptions(
        identifier="ascend-lens", inter_file_dependencies=True, workspace_diagnostics=False
    ),
)
async def on_pull(
    ls: AscendLensServer, params: lsp.DocumentDiagnosticParams
) -> lsp.DocumentDiagnosticReport:
    uri = params.text_document.uri
    analysis = await ls.current(uri)
    if analysis is None:
        return lsp.RelatedFullDocumentDiagnosticReport(items=[])
    if params.previous_result_id == analysis.result_id:
        return lsp.RelatedUnchangedDocumentDiagnosticReport(result_id=analysis.result_id)
    return lsp.RelatedFullDocumentDiagnosticReport(
        items=analysis.lsp_diagnostics, result_id=analysis.result_id
    )


# ---------------------------------------------------------------------- code actions
@server.feature(
    lsp.TEXT_DOCUMENT_CODE_ACTION,
    lsp.CodeActionOptions(
        code_action_kinds=[lsp.CodeActionKind.QuickFix, convert.FIX_ALL_KIND],
        resolve_provider=False,
    ),
)
async def on_code_action(
    ls: AscendLensServer, params: lsp.CodeActionParams
) -> list[lsp.CodeAction] | None:
    uri = params.text_document.uri
    analysis = await ls.current(uri)
    if analysis is None:
        return None
    only = params.context.only
    codec = ls.workspace.position_codec
    actions: list[lsp.CodeAction] = []
    want_quick = not only or any(str(k).startswith(lsp.CodeActionKind.QuickFix) for k in only)
    want_all = not only or any(
        convert.FIX_ALL_KIND.startswith(str(k)) or str(k).startswith(convert.FIX_ALL_KIND)
        for k in only
    )
    if want_quick:
        pairs = list(zip(analysis.located, analysis.lsp_diagnostics, strict=True))
        lines_of = {u: ls.lines(u) for u in convert.edit_uris(analysis.located)}
        actions.extend(convert.quick_fixes(pairs, params.range, lines_of, codec))
    if want_all:
        action = await ls.fix_all_action(uri)
        if action is not None:
            actions.append(action)
    return actions


# ---------------------------------------------------------------------- hover
@server.feature(lsp.TEXT_DOCUMENT_HOVER)
def on_hover(ls: AscendLensServer, params: lsp.HoverParams) -> lsp.Hover | None:
    if not ls.settings.hover:
        return None
    doc = ls.workspace.text_documents.get(params.text_document.uri)
    if doc is None:
        return None
    from npu_lsp.hover import hover

    lines = ls.lines(params.text_document.uri)
    line, column = convert.from_position(params.position, lines, ls.workspace.position_codec)
    # In a notebook, `import acl as x` may sit in another cell.
    in_notebook = ls.workspace.get_notebook_document(cell_uri=params.text_document.uri)
    job = ls.job_for(params.text_document.uri) if in_notebook else None
    try:
        result = hover(doc.source, line, column, imports=job.text if job else None)
    except Exception:  # hover must never break the session
        log.exception("hover failed at %s:%s", params.text_document.uri, params.position)
        return None
    if result is None:
        return None
    return lsp.Hover(
        contents=lsp.MarkupContent(kind=lsp.MarkupKind.Markdown, value=result.markdown),
        range=convert.to_range(result.span, lines, ls.workspace.position_codec),
    )


# ---------------------------------------------------------------------- entry point
def main(argv: Sequence[str] | None = None) -> int:
    """`ascend-lens server [--stdio] [--log-level LEVEL] [--log-file PATH]`."""
    parser = argparse.ArgumentParser(
        prog="ascend-lens server", description="Ascend Lens language server (stdio)"
    )
    parser.add_argument(
        "--stdio", action="store_true", help="talk LSP over stdin/stdout (the default)"
    )
    parser.add_argument(
        "--log-level", default="WARNING", choices=["DEBUG", "INFO", "WARNING", "ERROR"]
    )
    parser.add_argument("--log-file", help="write logs here instead of stderr")
    args = parser.parse_args(list(argv or []))
    try:
        handler: logging.Handler = (
            logging.FileHandler(args.log_file, encoding="utf-8")
            if args.log_file
            else logging.StreamHandler(sys.stderr)
        )
    except OSError as exc:
        sys.stderr.write(f"ascend-lens server: cannot open log file: {exc}\n")
        return 2
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.addHandler(handler)
    root.setLevel(args.log_level)
    from npu_lsp.registry import load_all

    load_all()  # registers rule families and their file-type checkers (rank tables)
    server.start_io()
    return 0
