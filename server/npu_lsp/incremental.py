"""Incremental analysis of one document the editor keeps changing (the language server's worker).

A document is split into top-level chunks: a chunk is a run of top-level statements (with
their decorators) starting at column 0, plus the comments and blank lines up to the next
chunk; the first chunk also holds the file's opening lines. `IncrementalDocument.check(text)`
gives exactly what `engine.check_source` gives for `text`, doing only part of the work:

- **Parsing.** The new text is compared with the last text that parsed (common prefix and
  suffix); only the chunks the edit touches (and the line on either side) are parsed again,
  padded with blank lines so their line numbers are the file's. A chunk starts where the
  tokenizer is at rest (no open string, bracket or block), so parsing it alone gives the
  same tree as parsing the file. Chunks after the edit keep their trees (line numbers
  shifted when the edit added or removed lines). When the touched text does not parse on
  its own (an edit opened a string that closes further down, or a real syntax error) the
  whole file is parsed, exactly as a full run does, and a syntax error is reported as today.
- **Analysis.** Rules are a black box. The file-level work every rule may read (summary,
  graph-scope resolution, dispatch table, rules that run once per module) is redone on the
  whole tree (the migration rules' bindings visit, and what they find per call and per CUDA
  API use, are kept per chunk: `values.ChunkBindings`; their value following stays
  module-wide); the walk that calls node rules visits only the chunks whose result can have
  changed, and reuses the diagnostics of the others (their lines shifted). A chunk is
  walked again when its text changed; when it reads a name (a function, class, constant,
  import) bound by a chunk that changed, or depends on such a chunk through a graph scope
  (a helper's call sites, which decide its level and where its errors are echoed),
  transitively; when the graph scopes inside it changed (a new call from a `construct`
  makes a helper compiled). Two kinds of change stop at the chunk itself (and the helpers
  it calls) without walking the readers of its names: only where its functions are called
  from changed (a caller's chunk was edited), unless a rule read the call context of one
  of them in the runs that made the kept diagnostics (`scope.SiteReads`: what the calls
  pass, whether a result is used); or only the spaces between its tokens changed (the
  same tree but for positions). Also walked: a chunk when one of its diagnostics points
  into another chunk that moved differently or changed; when a message quotes a line number and any line moved;
  and every chunk is walked again when something file-wide changed: the enabled rules,
  the configuration, another module of the workspace, or a module-level statement that
  binds no name (``ms.set_context(...)``, an ``if``/``try`` block, ``from x import *``).

A notebook's joined code cells are a document too (`notebook=True`): Python whatever the
file name, and not indexed as a module of the workspace, as the full run it must equal.

The random-edit test (tests/npu_lsp/test_incremental.py) checks that the result equals a
full run after every edit.
"""

from __future__ import annotations

import ast
import bisect
import gc
import io
import logging
import re
import time
import tokenize
import warnings
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from npu_lsp import engine
from npu_lsp.config import Config
from npu_lsp.diagnostics import Diagnostic, Edit, Fix, Related, Span
from npu_lsp.scope import SITE_READS_PAUSED, GraphScope, ScopeResolver, SiteReads, summarize

log = logging.getLogger("npu_lsp.incremental")

#: Top-level statements that only bind names; any other top-level statement is a
#: "module effect" whose change makes every chunk walked again.
_BINDING = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import)
_LINE_NUMBER = re.compile(r"\bline \d")
_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)
_FUNC_TYPES = frozenset((*_FUNCS, ast.Lambda))


def _function_name(fn: ast.AST) -> str:
    """The name `SiteReads` records a function's call context under."""
    return getattr(fn, "name", "<lambda>")


@dataclass(eq=False)
class Chunk:
    """A run of top-level statements and the lines up to the next one."""

    start: int  # 0-based index of the first line
    text: str
    stmts: list[ast.stmt]
    defines: frozenset[str]
    reads: frozenset[str]
    effect: bool  # holds a module-level statement that binds no name only
    #: every import in it, functions included (fixes add `import torch_npu` after the
    #: first `import torch` unless one exists: imports are file-wide facts)
    imports: tuple[str, ...]
    # ---- the last walk of this chunk (None: never walked)
    diags: list[tuple[Diagnostic, int]] | None = None  # (diagnostic, tag) tag: 0/1 echo/2 crash
    walked_at: int = 0  # `start` when walked
    #: what graph-scope resolution said about its functions when walked: their levels and
    #: kinds (`signature`), and where they are called from (`sites`)
    signature: Any = None
    sites: Any = None
    #: the names of the functions whose call contexts the rules read in the run that last
    #: walked it (`SiteReads`; any chunk's, since a rule may keep what it read for others)
    context_reads: frozenset[str] = frozenset()
    #: (this run only) the chunk it replaced when the edit changed only the spaces between
    #: its tokens (`_same_tokens`): the same tree but for positions
    twin: Chunk | None = None
    anchors: tuple[tuple[Chunk, int], ...] = ()  # other chunks its diagnostics point into
    quotes_lines: bool = False
    layout: int = 0  # the document's layout version when walked

    @property
    def nlines(self) -> int:
        return self.text.count("\n") + (0 if self.text.endswith("\n") or not self.text else 1)

    def function_names(self) -> frozenset[str]:
        """The names of every function defined in it (nested ones too)."""
        names = self.__dict__.get("_function_names")
        if names is None:
            names = frozenset(_function_name(n) for n in _walk(self.stmts) if type(n) in _FUNC_TYPES)
            self.__dict__["_function_names"] = names
        return names


@dataclass
class _State:
    text: str
    lines: list[str]  # with line ends
    chunks: list[Chunk]


@dataclass
class Stats:
    """What the last `check` did (for tests and the benchmark)."""

    parsed_lines: int = 0
    full_parse: bool = False
    walked: int = 0
    reused: int = 0
    fallback: str = ""
    #: milliseconds per stage: parse, summary, resolve, module (rules run once per file),
    #: walk (node rules over the chunks walked), post (noqa, sorting)
    ms: dict[str, float] = field(default_factory=dict)


class IncrementalDocument:
    """The analysis state of one open document; `check(text)` is `engine.check_source`."""

    def __init__(self, path: str, *, notebook: bool = False) -> None:
        self.path = path
        #: the joined code cells of a notebook: Python whatever the file name (no routing
        #: by file type), and not indexed as a module of the workspace (nothing imports it)
        self.notebook = notebook
        self._state: _State | None = None
        self._global: Any = None
        self._layout = 0
        self._site_deps: dict[int, set[int]] = {}  # id(chunk) -> ids of chunks depending on it
        #: names bound by chunks replaced since the last analysis (their readers are walked)
        self._gone: set[str] = set()
        #: the workspace index version after this document's own summary was stored
        self._foreign: int | None = None
        #: graph-scope resolution's callees per function of the last run (`_MemoResolver`)
        self._callees: dict[tuple[int, str | None], _Callees] = {}
        #: function nodes of trees replaced since the last run (memo entries naming one are
        #: stale); held so their ids are not reused meanwhile
        self._stale: dict[int, ast.AST] = {}
        #: (module name, no other module of the workspace imports it), while no other changes
        self._alone: tuple[str, bool] | None = None
        #: name -> ids of the chunks reading it, for one list of chunks (one run)
        self._readers: tuple[list[Chunk], dict[str, list[int]]] | None = None
        #: the migration facts of the last summary, made when first read (`PendingFacts`)
        self._pending: Any = None
        #: the module object every run analyses (its body replaced per run)
        self._module = ast.Module(body=[], type_ignores=[])
        #: the migration rules' bindings per chunk (`values.ChunkBindings`)
        self._bindings: Any = None
        #: what the worker keeps of the last result's located form (`locate_document`)
        self.located: dict[str, Any] = {}
        self.stats = Stats()

    # ------------------------------------------------------------------ entry point
    def check(
        self, text: str, config: Config, workspace: engine.WorkspaceIndex | None = None
    ) -> list[Diagnostic]:
        engine._ensure_rules_loaded()
        self.stats = Stats()
        paused = gc.isenabled()
        gc.disable()
        try:
            t0 = time.perf_counter()
            try:
                chunks = self._update(text)
            except RecursionError:
                chunks = None
            self._lap("parse", t0)
            if chunks is None:  # does not parse (or too deep): the full run says why
                self.stats.fallback = "parse"  # the chunks and their walks stay valid
                return self._full(text, config, workspace)
            try:
                diags = self._analyse(text, chunks, config, workspace)
            except RecursionError:
                self.stats.fallback = "recursion"
                self._forget_analysis()
                return self._full(text, config, workspace)
            except Exception:  # a fault here must never cost the user their diagnostics
                log.exception("incremental analysis failed on %s; full run", self.path)
                self.stats.fallback = "error"
                self._forget_analysis()
                return self._full(text, config, workspace)
        finally:
            if paused:
                gc.enable()
        try:
            t0 = time.perf_counter()
            out = engine.postprocess(diags, text, self.path, config)
            self._lap("post", t0)
            return out
        except Exception:  # as check_source reports it
            self._forget_analysis()
            return self._full(text, config, workspace)

    def _full(
        self, text: str, config: Config, workspace: engine.WorkspaceIndex | None
    ) -> list[Diagnostic]:
        """What a full run gives (the result `check` must equal)."""
        checker = engine.check_python if self.notebook else None
        return engine.check_source(text, self.path, config, workspace, checker=checker)

    def _lap(self, stage: str, since: float) -> float:
        now = time.perf_counter()
        self.stats.ms[stage] = (now - since) * 1000
        return now

    def _forget_analysis(self) -> None:
        self._global = None
        self._bindings = None

    # ------------------------------------------------------------------ parsing
    def _update(self, text: str) -> list[Chunk] | None:
        """The chunks of `text`, re-parsing what changed since the last text that parsed;
        None when `text` does not parse."""
        state = self._state
        if self._pending is not None:  # its tree is about to be reused (and renumbered)
            self._pending.detach()
            self._pending = None
        lines = _split_keepends(text)
        if state is None or not state.chunks:
            return self._rebuild(text, lines, state)
        if state.text == text:
            return state.chunks
        old, new = state.text, text
        p = _common_prefix(old, new)
        q = _common_suffix(old, new, p)
        first = old.count("\n", 0, p)  # 0-based line of the first changed character
        last_old = old.count("\n", 0, len(old) - q)  # line of the last changed character
        delta = len(lines) - len(state.lines)
        chunks = state.chunks
        starts = [c.start for c in chunks]
        # one line of context either side: an edit at a chunk's edge may join it to its neighbour
        lo = max(bisect.bisect_right(starts, max(first - 1, 0)) - 1, 0)
        hi = bisect.bisect_right(starts, last_old + 1) - 1
        hi = max(hi, lo)
        region_start = chunks[lo].start
        old_end = chunks[hi + 1].start if hi + 1 < len(chunks) else len(state.lines)
        new_end = old_end + delta
        if new_end < region_start:
            return self._rebuild(text, lines, state)
        region = "".join(lines[region_start:new_end])
        self.stats.parsed_lines = new_end - region_start
        tree = _parse("\n" * region_start + region, self.path) if region.strip() else None
        if tree is None or not tree.body:
            return self._rebuild(text, lines, state)
        fresh = _chunks_of(tree.body, lines, region_start, new_end)
        if fresh is None:
            return self._rebuild(text, lines, state)
        tail = chunks[hi + 1 :]
        if delta:
            self._layout += 1
            for c in tail:
                c.start += delta
                _shift(c.stmts, delta)
        replaced = chunks[lo : hi + 1]
        for c in replaced:
            self._stale.update((id(n), n) for n in _walk(c.stmts) if isinstance(n, _FUNCS))
        if len(fresh) == len(replaced):
            for made, was in zip(fresh, replaced, strict=True):
                if was.diags is not None and _same_tokens(was.text, made.text):
                    made.twin = was
        fresh, gone = _adopt(fresh, replaced)
        self._gone |= gone
        out = chunks[:lo] + fresh + tail
        self._state = _State(text, lines, out)
        return out

    def _rebuild(self, text: str, lines: list[str], state: _State | None) -> list[Chunk] | None:
        """Parse the whole text (as a full run does); chunks with unchanged text keep what
        their last walk found."""
        self.stats.full_parse = True
        self.stats.parsed_lines = len(lines)
        tree = _parse(text, self.path)
        if tree is None:
            return None
        fresh = _chunks_of(tree.body, lines, 0, len(lines)) or []
        self._callees = {}  # every tree is new
        if state is not None:
            fresh, gone = _adopt(fresh, state.chunks)
            self._gone |= gone
            if any(c.start != c.walked_at for c in fresh if c.diags is not None):
                self._layout += 1
        self._state = _State(text, lines, fresh)
        return fresh

    # ------------------------------------------------------------------ analysis
    def _analyse(
        self,
        text: str,
        chunks: list[Chunk],
        config: Config,
        workspace: engine.WorkspaceIndex | None,
    ) -> list[Diagnostic]:
        from npu_lsp.rules.migration.values import ChunkBindings, sharing_bindings

        # One module object per document (its body is the chunks' statements of this run),
        # so what the migration rules record per chunk (`ChunkBindings`: parents and scopes
        # of top-level statements are the module) stays valid for the chunks kept.
        tree = self._module
        tree.body = [s for c in chunks for s in c.stmts]
        if self._bindings is None:
            self._bindings = ChunkBindings()
        # the summary's device-value facts and the migration rules visit the same tree, and
        # reuse the visit of each chunk left as it was
        with sharing_bindings(tree, [c.stmts for c in chunks], self._bindings):
            return self._analyse_tree(text, chunks, config, workspace, tree)

    def _analyse_tree(
        self,
        text: str,
        chunks: list[Chunk],
        config: Config,
        workspace: engine.WorkspaceIndex | None,
        tree: ast.Module,
    ) -> list[Diagnostic]:
        path = self.path
        info = None
        foreign = None
        t0 = time.perf_counter()
        if workspace is not None:
            foreign = workspace.version
            key = workspace.key(path)
            # the device-value facts are made only if another module reads them
            indexed = summarize(
                tree, key, workspace.module_for(path), text, lazy=True, known=workspace.has_package
            )
            if not self.notebook:
                self._pending = getattr(indexed, "migration", None)
                workspace.add_summary(key, indexed)
                workspace.note_text(key, text)
            info = replace(indexed, path=path) if indexed.path != path else indexed
        t0 = self._lap("summary", t0)
        effects = tuple(c.text for c in chunks if c.effect)
        effects += tuple(i for c in chunks for i in c.imports)
        # another module changed since the last run (not only this file's own summary)
        force = workspace is not None and foreign != self._foreign
        same_facts = not force and self._global is not None and self._global[3] == effects
        memo: dict[tuple[int, str | None], _Callees] = {}
        if same_facts and self._callees:
            moved = self._closure(chunks, {id(c) for c in chunks if c.diags is None}, contexts_read=True)
            stale = self._stale
            for memo_key, entry in self._callees.items():
                if id(entry[3]) in moved or id(entry[0]) in stale:
                    continue
                if any(id(target[2]) in stale for _call, target in entry[2]):
                    continue
                memo[memo_key] = entry
        self._stale = {}
        alone = False
        if workspace is not None and info is not None:
            cached = self._alone
            if not force and cached is not None and cached[0] == info.module:
                alone = cached[1]
            else:
                alone = not _imported_elsewhere(workspace, info.module)
            self._alone = (info.module, alone)
        resolver = _MemoResolver(
            memo, chunks, alone, tree, path, config.syntax_level, workspace, info=info, text=text
        )
        self._callees = resolver.found
        roots = resolver.local_roots()
        t0 = self._lap("resolve", t0)
        forced = frozenset({"graphmode"}) if roots else frozenset()
        table = engine._dispatch_table(config, path, text, forced, tree)
        ctx = _TrackingContext(path, text, tree, config, resolver)
        walker = _TaggingWalker(ctx, table)
        for s in resolver.scopes.values():
            s.call_sites = TrackedSites(s.call_sites, _function_name(s.function))
        SiteReads.seen = set()
        try:
            for r in table.get(ast.Module, ()):
                walker.run(r, tree)
            module_out = walker.take()
            t0 = self._lap("module", t0)
            everywhere = any(
                not r.graph_only for t, rules in table.items() if t is not ast.Module for r in rules
            )
            node_rules = any(t is not ast.Module for t in table)
            glob: Any = (id(table), everywhere, repr(config), effects)
            starts = [c.start for c in chunks]
            with SITE_READS_PAUSED:
                signatures, sites, site_deps = _signatures(resolver, chunks, starts, path)
            walk = self._to_walk(chunks, signatures, sites, site_deps, glob, force)
            self._global = glob
            self._site_deps = site_deps
            if workspace is not None:
                self._foreign = workspace.version
            walked_roots: dict[int, list[tuple[ast.AST, ast.ClassDef | None]]] = {}
            if not everywhere and node_rules:
                for fn, owner in roots:  # parents first: rules ask about callers walked later
                    walker.parents[id(fn)] = owner or tree
                    if owner is not None:
                        walker.parents.setdefault(id(owner), tree)
                    walked_roots.setdefault(_index_of(starts, fn), []).append((fn, owner))
            out: list[tuple[Diagnostic, int]] = [
                (d, t) for d in module_out for t in (walker.tag(d),)
            ]
            walked: list[Chunk] = []
            for i, c in enumerate(chunks):
                if id(c) in walk:
                    walked.append(c)
                    self.stats.walked += 1
                    if everywhere:
                        for st in c.stmts:
                            walker.parents[id(st)] = tree
                            walker.walk(st, None, None)
                    elif node_rules:
                        for root, _owner in walked_roots.get(i, ()):
                            walker.walk(root, None, None)
                    found = walker.take()
                    c.diags = [(d, walker.tag(d)) for d in found]
                    c.walked_at = c.start
                    c.signature = signatures.get(id(c))
                    c.sites = sites.get(id(c))
                    c.layout = self._layout
                    c.quotes_lines = any(_LINE_NUMBER.search(d.message) for d, _ in c.diags)
                    c.anchors = _anchors(c, chunks, starts, path)
                    out.extend(c.diags)
                else:
                    self.stats.reused += 1
                    assert c.diags is not None
                    moves = [(c.walked_at, c.start - c.walked_at)]
                    moves += [(then, a.start - then) for a, then in c.anchors]
                    if any(delta for _, delta in moves):
                        moves.sort()
                        c.diags = [(_moved(d, moves, path), t) for d, t in c.diags]
                        c.walked_at = c.start
                        c.anchors = tuple((a, a.start) for a, _ in c.anchors)
                    out.extend(c.diags)
            reads = frozenset(SiteReads.seen)
            for c in walked:
                c.context_reads = reads
        finally:
            SiteReads.seen = None
            ctx.cache.clear()
            ctx._parents.clear()
            ctx._stmt_parents = None
        self._lap("walk", t0)
        return _dedupe(out)

    def _closure(
        self,
        chunks: list[Chunk],
        changed: set[int],
        called: Iterable[int] = (),
        site_deps: dict[int, set[int]] | None = None,
        *,
        contexts_read: bool = False,
    ) -> set[int]:
        """ids of `changed` and of every chunk depending on one, transitively: reading a
        name bound by it (or by a chunk replaced since the last run), or being a helper its
        compiled code calls (through the call sites of this run and of the last). A chunk
        reached only through call sites (`called`: where its functions are called from
        changed; or a helper's chunk reached from a walked caller's) keeps its text, names
        and levels, and only its functions' call contexts may differ: it is walked, and so
        are the helpers it calls, but the readers of its names are not, unless a rule read
        the call context of a function defined in it in a run that walked the chunks kept
        (`Chunk.context_reads`, `SiteReads`): only then can a reader hold an answer that
        depends on those calls (the join of what they pass, whether a result is used).
        `contexts_read`: count every call context as read (follow readers everywhere)."""
        read: set[str] = set()
        for c in chunks:
            read |= c.context_reads
        by_id = {id(c): c for c in chunks}
        readers = self._readers_of(chunks)
        old_deps, site_deps = self._site_deps, site_deps or {}
        todo = [(cid, True) for cid in changed] + [(cid, False) for cid in called]
        seen_names: set[str] = set(self._gone)
        for name in seen_names:
            todo.extend((r, True) for r in readers.get(name, ()))
        content: set[int] = set()
        through_sites: set[int] = set()
        while todo:
            cid, whole = todo.pop()
            hit = by_id.get(cid)
            if not whole and hit is not None and (contexts_read or not hit.function_names().isdisjoint(read)):
                whole = True  # a reader may hold what it read of its functions' calls
            if whole:
                if cid in content:
                    continue
                content.add(cid)
                if hit is not None:
                    for name in hit.defines - seen_names:
                        seen_names.add(name)
                        todo.extend((r, True) for r in readers.get(name, ()))
            else:
                if cid in through_sites or cid in content:
                    continue
                through_sites.add(cid)
            todo.extend((d, False) for d in old_deps.get(cid, ()))
            todo.extend((d, False) for d in site_deps.get(cid, ()))
        return (content | through_sites) & by_id.keys()

    def _readers_of(self, chunks: list[Chunk]) -> dict[str, list[int]]:
        """name -> ids of the chunks reading it (kept for one list of chunks)."""
        if self._readers is None or self._readers[0] is not chunks:
            readers: dict[str, list[int]] = {}
            for c in chunks:
                for name in c.reads:
                    readers.setdefault(name, []).append(id(c))
            self._readers = (chunks, readers)
        return self._readers[1]

    def _to_walk(
        self,
        chunks: list[Chunk],
        signatures: dict[int, Any],
        sites: dict[int, Any],
        site_deps: dict[int, set[int]],
        glob: Any,
        force: bool,
    ) -> set[int]:
        """ids of the chunks whose walk must be redone."""
        if force or glob != self._global:
            self._gone = set()
            return {id(c) for c in chunks}
        by_id = {id(c): c for c in chunks}
        changed: set[int] = set()
        called: set[int] = set()  # only where its functions are called from changed
        for c in chunks:
            twin, c.twin = c.twin, None
            if twin is not None and c.diags is None and twin.signature == signatures.get(id(c)):
                # the same tree but for positions: walked, its readers not (those whose
                # diagnostics point into it are, below; a message quoting a line number
                # is walked again when lines moved)
                called.add(id(c))
            elif (
                c.diags is None
                or c.signature != signatures.get(id(c))
                or c.quotes_lines
                and c.layout != self._layout
            ) or any(id(anchor) not in by_id for anchor, _ in c.anchors):
                changed.add(id(c))
            elif c.sites != sites.get(id(c)):
                called.add(id(c))
        walk = self._closure(chunks, changed, called, site_deps)
        self._gone = set()
        # anchors into walked chunks: their diagnostics may point at text that changed
        for c in chunks:
            if id(c) not in walk and any(id(a) in walk for a, _ in c.anchors):
                walk.add(id(c))
        return walk


# ------------------------------------------------------------------ resolution
#: One function's callees as graph-scope resolution found them: (function, owner class,
#: [(call, (module, qualname, target function, target owner))], the chunk holding it).
_Callees = tuple[
    ast.AST, str | None, list[tuple[ast.Call, tuple[Any, str, Any, str | None]]], Chunk
]


class _MemoResolver(ScopeResolver):
    """`ScopeResolver`, reusing what the last run found a function calls when neither the
    function's chunk nor anything it depends on changed (and no tree it names was replaced).
    Resolution itself (levels, call sites, helpers reached) is redone in full."""

    def __init__(
        self,
        memo: dict[tuple[int, str | None], _Callees],
        chunks: list[Chunk],
        alone: bool,
        *args: Any,
        **kw: Any,
    ) -> None:
        self._memo = memo
        self._alone = alone
        self.found: dict[tuple[int, str | None], _Callees] = {}
        self._chunk_starts = [c.start for c in chunks]
        self._chunks = chunks
        super().__init__(*args, **kw)

    def _workspace_seeds(self) -> Any:
        # Seeds are this file's functions that code in *other* files compiles, found by a
        # project-wide resolution (redone whenever this file's summary changes, i.e. per
        # edit). When no other module imports this one, nothing elsewhere can call into it,
        # and every root of its own the project-wide pass finds, the local pass has found.
        if self._alone:
            return []
        return super()._workspace_seeds()

    def project_scopes(self) -> Mapping[str, GraphScope]:
        """The workspace's project-wide graph scopes, which rules read for the calls other
        modules make into this one (`GraphScope.incoming`): none when no other module
        imports this one, so the per-edit project-wide resolution is skipped then."""
        if self._alone or self.workspace is None:
            return {}
        return self.workspace.graph_scopes()

    def _callees(self, info: Any, fn: Any, owner: str | None) -> Any:
        if info is not self.info:
            return super()._callees(info, fn, owner)
        key = (id(fn), owner)
        entry = self._memo.get(key)
        if entry is None or entry[0] is not fn:
            found = list(super()._callees(info, fn, owner))
            home = self._chunks[_index_of(self._chunk_starts, fn)]
            entry = (fn, owner, found, home)
        else:
            # targets in this file name this run's summary, not the last run's
            found = [
                (call, (self.info, *target[1:]) if target[0].path == self.info.path else target)
                for call, target in entry[2]
            ]
            entry = (fn, owner, found, entry[3])
        self.found[key] = entry
        return iter(found)


def _imported_elsewhere(workspace: engine.WorkspaceIndex, module: str) -> bool:
    """Does any other module of `workspace` import `module`, a module under it, or a package
    above it (through which it may reach it)?"""
    below = module + "."
    for info in workspace.modules():
        if info.module == module:
            continue
        for target in info.imports.values():
            if target == module or target.startswith(below) or module.startswith(target + "."):
                return True
    return False


# ------------------------------------------------------------------ call contexts
class TrackedSites(list[Any]):
    """A graph scope's `call_sites` during an incremental analysis: every read of it is
    recorded under the function's name (`SiteReads`), so the run knows whose call contexts
    its rules asked about. Only the engine's own uses for the function's diagnostics (the
    call sites it names and echoes errors at, `_TrackingContext`, `_TaggingWalker`) are
    not: they make diagnostics of the function's own chunk, which is walked anyway."""

    __slots__ = ("_name",)

    def __init__(self, sites: Iterable[Any], name: str) -> None:
        super().__init__(sites)
        self._name = name

    def __iter__(self) -> Any:
        SiteReads.note(self._name)
        return super().__iter__()

    def __len__(self) -> int:
        SiteReads.note(self._name)
        return super().__len__()

    def __bool__(self) -> bool:
        SiteReads.note(self._name)
        return super().__len__() > 0

    def __getitem__(self, index: Any) -> Any:
        SiteReads.note(self._name)
        return super().__getitem__(index)

    def __contains__(self, item: object) -> bool:
        SiteReads.note(self._name)
        return super().__contains__(item)

    def __reversed__(self) -> Any:
        SiteReads.note(self._name)
        return super().__reversed__()

    def __reduce__(self) -> Any:  # (a copy made by a rule is a tracked list too)
        return (TrackedSites, (list(super().__iter__()), self._name))


class _TrackingContext(engine.Context):
    """`engine.Context`; the call sites it attaches to a diagnostic are not a read of the
    function's call context for other chunks (`TrackedSites`)."""

    def diagnostic(self, *args: Any, **kw: Any) -> Diagnostic:
        with SITE_READS_PAUSED:
            return super().diagnostic(*args, **kw)


# ------------------------------------------------------------------ walker
class _TaggingWalker(engine._Walker):
    """The engine's walker, remembering which diagnostics are echoes at call sites and
    which report a crashed rule (both are de-duplicated file-wide, as in one walk)."""

    def __init__(self, ctx: engine.Context, table: Any) -> None:
        super().__init__(ctx, table)
        self._echo_ids: set[int] = set()

    def _echo_errors(self, found: list[Diagnostic], scope: GraphScope) -> None:
        with SITE_READS_PAUSED:  # diagnostics of the function's own chunk (`TrackedSites`)
            super()._echo_errors(found, scope)

    def _echo_at_call_sites(self, d: Diagnostic, scope: GraphScope) -> list[Diagnostic]:
        # per chunk: echoes found in other chunks are merged later (`_dedupe`)
        self.echoed = set()
        found = super()._echo_at_call_sites(d, scope)
        self._echo_ids.update(map(id, found))
        return found

    def take(self) -> list[Diagnostic]:
        found, self.out = self.out, []
        self.crashed = set()
        return found

    def tag(self, d: Diagnostic) -> int:
        if id(d) in self._echo_ids:
            return 1
        if d.code == engine.INTERNAL_ERROR and d.message.startswith("internal error in rule "):
            return 2
        return 0


def _dedupe(out: list[tuple[Diagnostic, int]]) -> list[Diagnostic]:
    """Drop what one walk over the whole file would not have repeated: an echo at a call
    site already echoed with that code, a second crash report of one rule."""
    echoed: set[tuple[str, int, int]] = set()
    crashed: set[str] = set()
    kept: list[Diagnostic] = []
    for d, tag in out:
        if tag == 1:
            key = (d.code, d.span.line, d.span.column)
            if key in echoed:
                continue
            echoed.add(key)
        elif tag == 2:
            rule = d.message[len("internal error in rule ") :].split(" ", 1)[0]
            if rule in crashed:
                continue
            crashed.add(rule)
        kept.append(d)
    return kept


# ------------------------------------------------------------------ chunks
def _parse(text: str, path: str) -> ast.Module | None:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return ast.parse(text, filename=path)
    except (SyntaxError, ValueError, MemoryError):
        return None


def _split_keepends(text: str) -> list[str]:
    """Lines with their ends, numbered as `ast` numbers them."""
    if "\r" in text:
        from npu_lsp.diagnostics import split_keepends

        return split_keepends(text)
    parts = text.split("\n")
    out = [p + "\n" for p in parts[:-1]]
    if parts[-1]:
        out.append(parts[-1])
    return out


def _common_prefix(a: str, b: str) -> int:
    """Length of the common prefix of `a` and `b` (binary search over C comparisons)."""
    lo, hi = 0, min(len(a), len(b))
    if a[:hi] == b[:hi]:
        return hi
    while lo < hi:  # a[:lo] == b[:lo], a[:hi] != b[:hi]
        mid = (lo + hi + 1) // 2
        if a[lo:mid] == b[lo:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _common_suffix(a: str, b: str, prefix: int) -> int:
    """Length of the common suffix of `a` and `b` not overlapping their common prefix."""
    lo, hi = 0, min(len(a), len(b)) - prefix
    la, lb = len(a), len(b)
    if a[la - hi :] == b[lb - hi :]:
        return hi
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[la - mid : la - lo] == b[lb - mid : lb - lo]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _first_line(st: ast.stmt, lines: list[str]) -> int:
    """0-based first line of a top-level statement, its decorators included."""
    line = st.lineno
    decorators = getattr(st, "decorator_list", None)
    if decorators:
        line = min(line, *(d.lineno for d in decorators))
        while line > 1 and not lines[line - 1].startswith("@"):
            line -= 1  # `@(` on a line before the decorator's expression
    return line - 1


def _chunks_of(
    body: list[ast.stmt], lines: list[str], region_start: int, region_end: int
) -> list[Chunk] | None:
    """Chunks of the statements `body` covering lines [region_start, region_end); None if
    the statements do not fit that region (then the caller parses the whole file)."""
    groups: list[tuple[int, list[ast.stmt]]] = []
    last_end = -1
    for st in body:
        first = _first_line(st, lines)
        if groups and first <= last_end:
            groups[-1][1].append(st)
        else:
            groups.append((first, [st]))
        last_end = max(last_end, (st.end_lineno or st.lineno) - 1)
    if not groups or last_end >= region_end:
        return None
    out: list[Chunk] = []
    for i, (first, stmts) in enumerate(groups):
        start = region_start if i == 0 else first
        end = groups[i + 1][0] if i + 1 < len(groups) else region_end
        out.append(_chunk(start, "".join(lines[start:end]), stmts))
    return out


def _chunk(start: int, text: str, stmts: list[ast.stmt]) -> Chunk:
    defines: set[str] = set()
    reads: set[str] = set()
    effect = False
    imports: list[str] = []
    for st in stmts:
        if isinstance(st, _BINDING):
            if isinstance(st, ast.Import):
                defines.update((a.asname or a.name).split(".")[0] for a in st.names)
            else:
                defines.add(st.name)
        elif isinstance(st, ast.ImportFrom) and all(a.name != "*" for a in st.names):
            defines.update(a.asname or a.name for a in st.names)
        elif isinstance(st, ast.Assign | ast.AnnAssign | ast.AugAssign) and not _calls(st.value):
            # (a module-level call may run anything, e.g. call a Cell whose arguments
            # decide what its `construct` compiles: an effect, not only a binding)
            targets = st.targets if isinstance(st, ast.Assign) else [st.target]
            names = [_bound_names(t) for t in targets]
            if any(n is None for n in names):
                effect = True  # `obj.attr = ...`, `d[k] = ...`: changes something else
            for n in names:
                defines.update(n or ())
        else:
            effect = True
    for node in _walk(stmts):
        t = type(node)
        if t is ast.Name:
            reads.add(node.id)  # type: ignore[attr-defined]
        elif t is ast.Global or t is ast.Nonlocal:
            defines.update(node.names)  # type: ignore[attr-defined]
        elif t is ast.Attribute:
            reads.add(node.attr)  # type: ignore[attr-defined]
        elif t is ast.Import or t is ast.ImportFrom:
            imports.append(ast.dump(node))
    return Chunk(start, text, stmts, frozenset(defines), frozenset(reads), effect, tuple(imports))


def _same_tokens(old: str, new: str) -> bool:
    """Do two texts of a chunk hold the same tokens (comments included), only the spaces
    and line breaks between them differing? Then they parse to the same tree but for
    positions, and name the same words."""
    if "".join(old.split()) != "".join(new.split()):
        return False  # (a quick test first: most edits change more than spaces)
    try:
        a = [(t.type, t.string) for t in tokenize.generate_tokens(io.StringIO(old).readline) if t.type != tokenize.NL]
        b = [(t.type, t.string) for t in tokenize.generate_tokens(io.StringIO(new).readline) if t.type != tokenize.NL]
    except (tokenize.TokenError, SyntaxError):
        return False
    return a == b


def _calls(value: ast.AST | None) -> bool:
    return value is not None and any(isinstance(n, ast.Call) for n in ast.walk(value))


def _bound_names(target: ast.expr) -> list[str] | None:
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, ast.Tuple | ast.List):
        out: list[str] = []
        for elt in target.elts:
            inner = _bound_names(elt.value if isinstance(elt, ast.Starred) else elt)
            if inner is None:
                return None
            out.extend(inner)
        return out
    return None


def _walk(stmts: Iterable[ast.AST]) -> Iterable[ast.AST]:
    todo = list(stmts)
    while todo:
        node = todo.pop()
        yield node
        todo.extend(ast.iter_child_nodes(node))


def _shift(stmts: list[ast.stmt], delta: int) -> None:
    for node in _walk(stmts):
        if "lineno" in node._attributes:
            node.lineno += delta  # type: ignore[attr-defined]
            end = getattr(node, "end_lineno", None)
            if end is not None:
                node.end_lineno = end + delta  # type: ignore[attr-defined]


def _adopt(fresh: list[Chunk], old: list[Chunk]) -> tuple[list[Chunk], set[str]]:
    """Give each fresh chunk whose text equals an old one's that chunk's walk (and identity),
    with the fresh trees; the names bound by old chunks without a match are remembered
    (their readers must be walked again)."""
    pool: dict[str, list[Chunk]] = {}
    for c in old:
        pool.setdefault(c.text, []).append(c)
    out: list[Chunk] = []
    for c in fresh:
        same = pool.get(c.text)
        if same:
            kept = same.pop(0)
            kept.start, kept.stmts = c.start, c.stmts
            out.append(kept)
        else:
            out.append(c)
    twins = {id(c.twin) for c in out if c.twin is not None}
    gone: set[str] = set()
    for rest in pool.values():
        for c in rest:
            if id(c) not in twins:  # (a twin binds the same names)
                gone.update(c.defines)
    return out, gone


def _index_of(starts: list[int], node: ast.AST) -> int:
    line = getattr(node, "lineno", 1) - 1
    decorators = getattr(node, "decorator_list", None)
    if decorators:
        line = min(line, *(d.lineno - 1 for d in decorators))
    return max(bisect.bisect_right(starts, line) - 1, 0)


def _signatures(
    resolver: ScopeResolver, chunks: list[Chunk], starts: list[int], path: str
) -> tuple[dict[int, Any], dict[int, Any], dict[int, set[int]]]:
    """Per chunk, what graph-scope resolution says about the functions in it: their names,
    kinds, levels and places (lines relative to the chunk), and apart, where each is called
    from (lines relative to the chunks the calls fall in); and which chunks depend on which
    through call sites (a helper's chunk depends on its callers' chunks)."""
    per: dict[int, list[Any]] = {}
    called: dict[int, list[Any]] = {}
    deps: dict[int, set[int]] = {}
    for s in resolver.scopes.values():
        i = _index_of(starts, s.function)
        home = chunks[i]
        sites: list[tuple[Any, ...]] = []
        for site in s.call_sites:
            if site.path == path:
                j = bisect.bisect_right(starts, site.line - 1) - 1
                if 0 <= j < len(chunks):
                    other = chunks[j]
                    base = other.start + 1
                    sites.append(
                        (id(other), site.line - base, site.column, site.end_line - base)
                        + (site.end_column, site.caller)
                    )
                    deps.setdefault(id(other), set()).add(id(home))
                    continue
            sites.append((site.path, site.line, site.column, site.end_line, site.end_column))
        line = getattr(s.function, "lineno", 0) - home.start
        col = getattr(s.function, "col_offset", 0)
        per.setdefault(id(home), []).append((s.qualname, s.kind, s.level, line, col))
        called.setdefault(id(home), []).append((s.qualname, line, col, tuple(sites)))
    return (
        {k: sorted(v, key=repr) for k, v in per.items()},
        {k: sorted(v, key=repr) for k, v in called.items()},
        deps,
    )


def _anchors(
    c: Chunk, chunks: list[Chunk], starts: list[int], path: str
) -> tuple[tuple[Chunk, int], ...]:
    """Other chunks of this file that `c`'s diagnostics point into."""
    lo, hi = c.start + 1, c.start + max(c.nlines, 1)
    found: dict[int, Chunk] = {}

    def note(span: Span) -> None:
        for line in (span.line, span.end_line):
            if not lo <= line <= hi:
                j = max(bisect.bisect_right(starts, line - 1) - 1, 0)
                found[id(chunks[j])] = chunks[j]

    assert c.diags is not None
    for d, _ in c.diags:
        note(d.span)
        for r in d.related:
            if r.path == path:
                note(r.span)
        if d.fix is not None:
            for e in d.fix.edits:
                note(e.span)
    return tuple((a, a.start) for a in found.values())


def _moved(d: Diagnostic, moves: list[tuple[int, int]], path: str) -> Diagnostic:
    """`d` with every position in this file moved as the chunk it points into moved:
    `moves` is (0-based first line when walked, lines moved since) per chunk, sorted."""
    firsts = [first for first, _ in moves]

    def mv(s: Span) -> Span:
        a = moves[max(bisect.bisect_right(firsts, s.line - 1) - 1, 0)][1]
        b = moves[max(bisect.bisect_right(firsts, s.end_line - 1) - 1, 0)][1]
        return Span(s.line + a, s.column, s.end_line + b, s.end_column)

    fix = d.fix
    if fix is not None:
        fix = Fix(fix.title, tuple(Edit(mv(e.span), e.new_text) for e in fix.edits), fix.safe)
    related = tuple(
        Related(r.path, mv(r.span), r.message) if r.path == path else r for r in d.related
    )
    return Diagnostic(d.code, d.message, d.severity, mv(d.span), fix, related, d.source)


__all__ = ["IncrementalDocument", "Stats"]
