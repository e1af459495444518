"""`check` over a whole repository: one parse per file, worker processes, the cache.

The run, for files in discovery order:

1. (`warm.look_up`, usually already done by the CLI) stamp every file, read and digest
   those whose stamp the cache cannot vouch for; when the settings and every digest are
   what the cache recorded last time, the recorded diagnostics are the answer (the CLI
   gives it without importing this module: `warm.answer`);
2. *summarise* (here): each Python file whose summary is not cached is parsed once and
   summarised; the tree is kept for step 5 (the portable summary, `summary.portable`,
   is made and pickled only for the cache);
3. *key* (here): each file's diagnostics depend on its content, the settings, the
   checker, the summaries of the modules it can reach through imports (its *closure*,
   digested over the import graph's strongly connected components, so linear even with
   cycles) and on which of its functions other files compile (its *seeds*); when no
   summary changed, files whose key is what the cache recorded are not checked again;
4. *resolve* (here): the project-wide resolution (`project_scopes`), reusing the roots
   and edges of every module whose closure did not change; each file's seeds are then
   known from the names its summary defines, and a file whose key and seeds are what the
   cache recorded is not checked again;
5. *check* (workers, forked now: they inherit the trees, the index and the resolution):
   the others are checked against the index of every summary, on the tree kept from
   step 2 (parsed again only when step 2 did not parse the file, or when keeping every
   tree would pass `TREE_BUDGET`), each batch of files by whichever worker is free.

Whatever the number of workers, the index is built in file order and results are put
back in file order, so the output does not depend on `--jobs`.
"""

from __future__ import annotations

import ast
import gc
import os
import pickle
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from npu_lsp import engine, modes, project_scopes
from npu_lsp.cache import (
    CHECKER_ENTRY,
    Cache,
    CacheCorrupt,
    FileResult,
    FileSummary,
    Results,
    checker_version,
    digest,
)
from npu_lsp.config import Config
from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import WorkspaceIndex
from npu_lsp.locate import Known, folder_of_file, known_of, still_located
from npu_lsp.parallel import Pool, can_fork
from npu_lsp.project_scopes import Resolution, Scopes
from npu_lsp.rules.graphmode.xcalls import incoming_digests, resolve
from npu_lsp.scope import EdgeTable, ModuleInfo, summarize
from npu_lsp.summary import portable
from npu_lsp.warm import (
    Lookup,
    Notebooks,
    Stats,
    look_up,
    module_names,
    python_file,
    read,
    refresh,
)

#: Trees kept between the phases by this process (the workers inherit them), in estimated
#: bytes (a tree takes about 45 bytes per byte of source); past it, files are parsed again
#: to be checked.
TREE_BUDGET = 384 * 1024 * 1024
_TREE_FACTOR = 45
_BATCH = 16
#: After an edit that leaves the project-wide resolution as it was, up to this many new
#: summaries go to a small file beside the cached ones instead of rewriting them all.
_DELTA_MAX = 64
#: Below this many files to check, workers cost more than they save.
_MIN_PARALLEL = 24


@dataclass
class Run:
    """The inputs of one run, shared with forked workers."""

    paths: list[str]
    keys: list[str]
    modules: list[str]
    python: list[bool]
    datas: list[bytes | OSError | None]
    config: Config
    root: str | None
    #: the trees kept between the phases, by file number
    trees: dict[int, tuple[str, ast.Module, ModuleInfo]] = field(default_factory=dict)
    index: WorkspaceIndex | None = None
    #: files parsed to be summarised whose tree did not fit `budget`
    dropped: set[int] = field(default_factory=set)
    budget: int = TREE_BUDGET
    #: the summaries this process made, by file number, pruned when pickled (its index
    #: takes them as they are instead of unpickling their blobs)
    portables: dict[int, ModuleInfo] = field(default_factory=dict)
    #: keep every tree to the end instead of freeing each once checked (`check_files`'s
    #: `keep`: the process exits without freeing them)
    keep: bool = False
    #: whether summaries are pickled and digested: for the cache (the digests key its
    #: entries); neither is read otherwise
    pickled: bool = True
    #: the modules of the run's Python files (and their packages), which absolute
    #: imports resolve against (`locate`)
    known: Known | None = None
    #: the modes libraries take from the scripts importing them (`modes.inherit` over the
    #: run's summaries; None until they are summarised)
    modes: dict[str, bool | None] | None = None

    def located(self, i: int, summary: FileSummary) -> bool:
        """Is `summary` (cached for file `i`) made for this module name, with its imports
        finding the modules they found (`locate.still_located`)?"""
        if summary.module != self.modules[i]:
            return False
        known = self.known
        if known is None:
            return not summary.located
        return still_located(summary.located, folder_of_file(self.modules[i], self.keys[i]), known)


_RUN: Run | None = None


def check_files(
    files: Sequence[str | os.PathLike[str]],
    config: Config,
    root: str | None,
    *,
    jobs: int = 1,
    cache_root: str | None = None,
    progress: Callable[[int, int, str], None] | None = None,
    notebooks: Sequence[str | os.PathLike[str]] = (),
    notebook_results: dict[str, list[tuple[str, Diagnostic]]] | None = None,
    keep: list[object] | None = None,
    lookup: Lookup | None = None,
) -> tuple[list[tuple[str, list[Diagnostic]]], Stats]:
    """Diagnostics of every file in `files` (in that order), checked as one workspace
    rooted at `root`; `cache_root` is the folder holding `.ascend-lens_cache/` (None: no
    cache); `progress(done, total, phase)` is called as files are indexed, then checked;
    `notebooks` are checked against the run's index of every summary, with the
    project-wide resolution (their findings, as (where, diagnostic) per notebook, go to
    `notebook_results`), or answered from the cache when neither they nor what they
    import changed. With `keep`, what the run built (trees, summaries, the index) is
    appended to it instead of being freed: a caller about to exit the process saves
    freeing it object by object (about a tenth of a cold run's CPU). `lookup` is what
    `warm.look_up` read for the same files, settings and cache (not read again)."""
    nb_out = notebook_results if notebook_results is not None else {}
    # Everything this run builds (contents, summaries, the index) lives until it ends and
    # holds no cycles: the cyclic collector would only rescan it, more often as it grows.
    paused = gc.isenabled()
    gc.disable()
    try:
        try:
            return _check_files(
                files,
                config,
                root,
                jobs,
                cache_root,
                progress,
                True,
                notebooks,
                nb_out,
                keep,
                lookup,
            )
        except CacheCorrupt:  # a cached summary failed its check: trust nothing cached
            nb_out.clear()
            return _check_files(
                files, config, root, jobs, cache_root, progress, False, notebooks, nb_out, keep
            )
    finally:
        if paused:
            gc.enable()


def _check_files(
    files: Sequence[str | os.PathLike[str]],
    config: Config,
    root: str | None,
    jobs: int,
    cache_root: str | None,
    progress: Callable[[int, int, str], None] | None,
    read_cache: bool,
    notebooks: Sequence[str | os.PathLike[str]],
    nb_out: dict[str, list[tuple[str, Diagnostic]]],
    keep: list[object] | None = None,
    lookup: Lookup | None = None,
) -> tuple[list[tuple[str, list[Diagnostic]]], Stats]:
    global _RUN
    t0 = time.perf_counter()
    engine._ensure_rules_loaded()
    stats = Stats(files=len(files))
    paths = [str(f) for f in files]
    if lookup is None or not read_cache:
        lookup = look_up(paths, config, root, cache_root, read_cache=read_cache)
    settings, keys, cache = lookup.settings, lookup.keys, lookup.cache
    stats.cache = "on" if cache is not None else "off"
    stats.read = lookup.read
    recorded = lookup.old
    old_whole, old_results, old_moving = recorded.whole, recorded.files, recorded.moving
    nbs = Notebooks(notebooks, config, settings, recorded, lookup.root)
    # what changed was read: a file whose stamp is trusted has the content it recorded
    stamps, datas, contents = lookup.stamps, list(lookup.datas), lookup.contents
    run = Run(
        paths=paths,
        keys=keys,
        modules=module_names(keys, lookup.root),
        python=[python_file(p) for p in paths],
        datas=datas,
        config=config,
        root=root,
        keep=keep is not None,
    )
    run.known = known_of(m for m, py in zip(run.modules, run.python, strict=True) if py)
    state = lookup.state
    out: list[list[Diagnostic] | None] = [None] * len(files)
    if lookup.unchanged:
        for i, k in enumerate(keys):
            out[i] = old_results[k].diagnostics
        stats.reused = len(files)
        if progress:
            progress(len(files), len(files), "checked")
        if notebooks:
            closures = {
                run.modules[i]: c
                for i, k in enumerate(keys)
                if run.python[i] and (c := old_results[k].closure)
            }
            nbs.check(
                lambda: _cached_index(run, cache, contents, digest(settings, old_whole)),
                closures,
                digest(settings, old_whole),
                old_moving,
                nb_out,
                stats,
            )
        if cache is not None:
            refresh(lookup, cache, nbs if notebooks else None)
        stats.seconds = time.perf_counter() - t0
        return [(p, d or []) for p, d in zip(paths, out, strict=True)], stats
    t = stats.lap("read", t0)
    old_summaries = cache.load_summaries() if cache is not None else {}
    old_scopes = cache.load_scopes() if cache is not None else None
    old_summaries.pop(CHECKER_ENTRY, None)
    summaries: dict[int, FileSummary] = {}
    to_parse: list[int] = []
    for i in range(len(files)):
        if not run.python[i] or isinstance(run.datas[i], OSError):
            continue
        hit = old_summaries.get(keys[i])
        if hit is not None and hit.content == contents[i] and run.located(i, hit):
            summaries[i] = hit
            stats.summaries_cached += 1
        else:
            to_parse.append(i)
    del old_summaries

    _RUN = run
    done_count = 0
    final_index: WorkspaceIndex | None = None

    indexed = 0

    def tick(n: int) -> None:
        nonlocal done_count
        done_count += n
        if progress:
            progress(min(done_count, len(files)), len(files), "checked")

    # Files are parsed and summarised here, in this process; the workers are forked for
    # the check, after the resolution, and inherit the trees, the index and the resolution
    # as made (nothing is pruned, pickled, sent or unpickled: with summarising spread over
    # the workers, each summary crossed to every other worker, which cost as much CPU as
    # parsing and summarising it). They pay off when there are many files to check (a
    # cold run, new settings); the few of an edit are checked here.
    try:
        stats.jobs = 1
        run.pickled = cache is not None

        def summarised(batch: list[Any]) -> None:
            for i, kind, value in batch:
                if kind == "final":
                    out[i] = value
                    tick(1)
                else:
                    value.content = contents[i]
                    summaries[i] = value
                    stats.parsed += 1
            nonlocal indexed
            indexed += len(batch)
            if progress:
                progress(indexed, len(to_parse), "indexed")

        for start in range(0, len(to_parse), _BATCH):
            summarised(_handle("summarise", to_parse[start : start + _BATCH]))
        t = stats.lap("summarise", t)

        order = [i for i in range(len(files)) if i in summaries]
        whole = digest(*(f"{run.modules[i]}\0{summaries[i].summary}" for i in order))
        if whole == old_whole and all(keys[i] in old_results for i in order):
            # no summary changed: neither did what any module reaches
            closure = {i: old_results[keys[i]].closure for i in order}
        else:
            closure = _closures(order, summaries, run.modules)
        # the mode a library takes from the scripts importing it (they are not in its
        # closure): part of its key, and of what its roots are computed under
        inherited = modes.inherit(
            (run.modules[i], summaries[i].mode_kind, summaries[i].imports) for i in order
        )
        run.modes = inherited
        closure_mode = {
            i: digest(closure[i], repr(inherited[run.modules[i]]))
            if run.modules[i] in inherited
            else closure[i]
            for i in order
        }
        # what other modules pass to each module's cells and functions: part of its key
        # (its callers import it, so they are not in its closure)
        passed = resolve(
            [c for i in order for c in summaries[i].xcalls],
            {run.modules[i]: summaries[i].exports for i in order},
        )
        passed_into = incoming_digests((run.modules[i] for i in order), passed)
        result_keys: dict[int, str] = {}
        todo: list[int] = []
        for i in range(len(files)):
            if out[i] is not None:
                continue
            if isinstance(run.datas[i], OSError):
                out[i] = [engine.unreadable(cast(OSError, run.datas[i]))]
                tick(1)
                continue
            result_keys[i] = digest(
                settings, contents[i], closure_mode.get(i, ""), passed_into.get(run.modules[i], "")
            )
            todo.append(i)
        scopes_key = digest(settings, whole)
        cached_scopes, previous, made_for = _cached_scopes(old_scopes, scopes_key)
        # Files whose key is unchanged while no summary changed have unchanged seeds too.
        same_world = cached_scopes is not None
        check: list[int] = []
        for i in todo:
            old = old_results.get(keys[i])
            if same_world and old is not None and old.key == result_keys[i]:
                out[i] = old.diagnostics
                stats.reused += 1
                tick(1)
            else:
                check.append(i)
        new_scopes: Scopes | None = None
        resolution = previous
        seeds: dict[int, str] = {}
        t = stats.lap("key", t)
        if check:
            # summaries from the cache are read from its `blobs` file when unpickled
            blobs = [(i, _blob(cache, summaries[i])) for i in order]
            # The project-wide resolution once, here (workers would each redo it), reusing
            # the roots and edges of every module whose import closure did not change; the
            # workers forked for the check inherit it.
            index = _index(run, blobs)
            scopes = cached_scopes
            if scopes is None:
                packed, resolution = project_scopes.resolve_packed(
                    index,
                    [run.modules[i] for i in order],
                    {run.modules[i]: closure_mode[i] for i in order},
                    previous,
                )
                scopes = new_scopes = Scopes(packed)
                stats.resolved = resolution.computed_roots + resolution.computed_edges
            _attach(scopes, passed)
            edges = (
                EdgeTable(resolution.edges, resolution.roots, getattr(resolution, "nodes", None))
                if resolution is not None
                else None
            )
            index.set_graph_scopes(scopes, edges)
            t = stats.lap("resolve", t)
            # A file whose key and seeds are what the cache recorded is not checked again;
            # its seeds come from the names its summary defines (nothing is unpickled).
            again: list[int] = []
            # The same scopes as the last run (whose results were saved with them): a
            # file whose summary did not change has the seeds it had.
            walked = resolution is None or resolution.walked
            if made_for != digest(settings, old_whole):
                walked = True
            parsed = set(to_parse)
            # The migration rules join device facts over every module that has them
            # (rules/migration/project.py), importer or not: a file with such facts
            # depends on all of their summaries.
            moving = _moving(summaries)
            for i in check:
                own = summaries.get(i)
                old = old_results.get(keys[i])
                if cache is None:
                    seed = ""  # seeds are kept for the next run only, in the cache
                elif not walked and old and i not in parsed and not (own and own.migrates):
                    seed = old.seeds
                else:
                    seed = _seeds(own.quals, own.made, scopes) if own else ""
                    if own and own.migrates:
                        seed = digest(seed, moving)
                seeds[i] = seed
                if own and old and (old.key, old.seeds) == (result_keys[i], seed):
                    out[i] = old.diagnostics
                    stats.reused += 1
                    tick(1)
                else:
                    again.append(i)
            if again:
                # this process's index, as it is (no copy); the workers inherit it
                run.index = index
                t = stats.lap("prepare", t)
            final_index = index

            def checked(batch: list[Any]) -> None:
                for i, diags, how in batch:
                    out[i] = diags
                    stats.checked += 1
                    stats.parsed += how == "parsed"
                    stats.reparsed += how == "reparsed"
                tick(len(batch))

            if again:
                workers = jobs if len(again) >= _MIN_PARALLEL and can_fork() else 1
                if workers > 1:
                    # a cached summary is checked against its digest when first read: read
                    # them all here, where a corrupt one restarts the run without the cache
                    for _i, blob in blobs:
                        if not isinstance(blob, bytes):
                            blob()
                with Pool(workers, _handle) as pool:
                    stats.jobs = pool.jobs
                    pool.share("check", again, _BATCH, checked)
                t = stats.lap("check", t)
    finally:
        _RUN = None
        gc.unfreeze()

    moving = _moving(summaries)
    if notebooks:

        def notebook_index() -> WorkspaceIndex:
            if final_index is not None:
                return final_index
            # nothing was checked: the index of the summaries
            index = _index(run, [(i, _blob(cache, summaries[i])) for i in order])
            if cached_scopes is not None:
                _attach(cached_scopes, passed)
                index.set_graph_scopes(cached_scopes)
            return index

        nbs.check(
            notebook_index,
            {run.modules[i]: closure[i] for i in order},
            scopes_key,
            moving,
            nb_out,
            stats,
        )
    results = [(p, d if d is not None else []) for p, d in zip(paths, out, strict=True)]
    if cache is not None:
        new_results: dict[str, FileResult] = {}
        for i, (k, (_p, diags)) in enumerate(zip(keys, results, strict=True)):
            if isinstance(run.datas[i], OSError) or contents[i].startswith("error:"):
                continue
            old = old_results.get(k)
            seed = seeds.get(i, old.seeds if old is not None else "")
            new_results[k] = FileResult(
                contents[i], result_keys.get(i, ""), seed, diags, stamps[i], closure.get(i, "")
            )
        stored: dict[str, FileSummary] | None = None
        changed = {keys[i]: summaries[i] for i in to_parse if i in summaries}
        if not cache.has_summaries or len(changed) + cache.delta_size > _DELTA_MAX:
            stored = {keys[i]: s for i, s in summaries.items()}
            stored[CHECKER_ENTRY] = FileSummary(checker_version(), "", b"", "", ())
        entry = (scopes_key, resolution) if new_scopes is not None else None
        new = Results(state, whole, new_results, nbs.new, moving, lookup.stamped_at)
        cache.save(new, stored, changed, entry)
        stats.lap("save", t)
    stats.seconds = time.perf_counter() - t0
    if keep is not None:
        keep.append(locals())  # everything this run built: see `check_files`
    return results, stats


# ----------------------------------------------------------------------------- workers
def _handle(command: str, payload: Any) -> Any:
    run = _RUN
    assert run is not None
    # Trees and summaries are large acyclic allocations that live for the whole run: the
    # cyclic collector would only rescan them over and over.
    paused = gc.isenabled()
    gc.disable()
    try:
        if command == "summarise":
            out = [_summarise(run, i) for i in payload]
            gc.freeze()  # what was kept is long-lived: later collections skip it
            return out
        if command == "check":
            return [_check(run, i) for i in payload]
        raise ValueError(f"unknown command {command!r}")
    finally:
        if paused:
            gc.enable()


def _data(run: Run, i: int) -> bytes | OSError:
    """The bytes of file `i`, read now if the cache said they had not changed."""
    data = run.datas[i]
    if data is None:
        data = run.datas[i] = read(run.paths[i])
    return data


def _summarise(run: Run, i: int) -> tuple[int, str, Any]:
    data = _data(run, i)
    path = run.paths[i]
    if isinstance(data, OSError):
        return i, "final", [engine.unreadable(data)]
    text = engine.decode_source(data)
    if isinstance(text, Diagnostic):
        return i, "final", [text]
    tree = engine.parse_python(text, path)
    if tree is None:  # the checker reports the syntax error
        return i, "final", engine.check_source(text, path, run.config)
    cost = len(data) * _TREE_FACTOR
    fits = cost <= run.budget
    try:
        info = summarize(tree, run.keys[i], run.modules[i], text, known=run.known)
        if run.pickled or not fits:
            kept = portable(info, text)
            blob = pickle.dumps(kept, protocol=pickle.HIGHEST_PROTOCOL) if run.pickled else b""
        else:
            # Nothing crosses to another process or goes to a cache, and the tree is kept
            # to be checked: the index takes the summary as it is (resolution over it
            # gives the scopes it gives over the pruned copy, see summary.py), no copy.
            kept, blob = info, b""
    except RecursionError:
        return i, "final", engine.check_source(text, path, run.config)
    if fits:
        run.budget -= cost
        run.trees[i] = (text, tree, info)
    else:
        run.dropped.add(i)
    run.portables[i] = kept
    imports = tuple(sorted(set(info.imports.values())))
    quals, made = _seed_names(info)
    migrates = getattr(info, "migration", None) is not None
    return (
        i,
        "summary",
        FileSummary(
            "",
            run.modules[i],
            blob,
            digest(blob) if run.pickled else "",
            imports,
            quals,
            made,
            migrates=migrates,
            xcalls=info.xcalls,
            located=info.located,
            exports=info.exports,
            mode_kind=info.mode_kind,
        ),
    )


def _seed_names(info: ModuleInfo) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The qualnames of the module's functions and methods, and the `<locals>.` prefixes
    of the closures its module-level `x = make()` bind (what `_seeds` looks up)."""
    mod = info.module
    quals = [f"{mod}.{n}" for n in info.functions]
    for cname, cls in info.classes.items():
        quals.extend(f"{mod}.{cname}.{m}" for m in cls.methods)
    return tuple(quals), tuple(f"{q}.<locals>." for q in info.instances.values())


Blob = bytes | Callable[[], bytes]


def _blob(cache: Cache | None, summary: FileSummary) -> Blob:
    """The pickled summary, or (from the cache) a function reading it when first used."""
    return cache.blob(summary) if cache is not None else summary.blob


def _cached_index(
    run: Run, cache: Cache | None, contents: list[str], scopes_key: str
) -> WorkspaceIndex:
    """The index of the cached summaries of the run's files, with the cached project-wide
    resolution (for a run answered from the cache)."""
    cached = cache.load_summaries() if cache is not None else {}
    blobs: list[tuple[int, Blob]] = []
    passed: list[Any] = []
    exported: dict[str, Any] = {}
    for i, key in enumerate(run.keys):
        hit = cached.get(key)
        if hit is not None and hit.content == contents[i] and run.located(i, hit):
            blobs.append((i, _blob(cache, hit)))
            passed.extend(hit.xcalls)
            exported[run.modules[i]] = hit.exports
    passed = resolve(passed, exported)
    index = _index(run, blobs)
    if cache is not None:
        scopes = _cached_scopes(cache.load_scopes(), scopes_key)[0]
        if scopes is not None:
            _attach(scopes, passed)
            index.set_graph_scopes(scopes)
    return index


def _index(run: Run, blobs: list[tuple[int, Blob]]) -> WorkspaceIndex:
    """The index of every summary, in file order (so every process builds the same one),
    each unpickled when first used; the summaries this process made are taken as made
    (unpickling their blobs would give equal copies)."""
    index = WorkspaceIndex(run.root)
    made = run.portables
    for i, blob in blobs:
        index.add_summary(run.keys[i], made.get(i) or blob, run.modules[i])
    if run.modes is not None:
        index.set_library_modes(run.modes)
    return index


def _check(run: Run, i: int) -> tuple[int, list[Diagnostic], str]:
    """The diagnostics of file `i`, on its kept tree (else parsed here), and how it went."""
    index = run.index
    assert index is not None
    path = run.paths[i]
    # a tree freed here costs as much as it is worth keeping to the end with `keep`
    kept = run.trees.get(i) if run.keep else run.trees.pop(i, None)
    if not run.python[i]:
        data = _data(run, i)
        if isinstance(data, OSError):
            return i, [engine.unreadable(data)], "checked"
        text = engine.decode_source(data)
        if isinstance(text, Diagnostic):
            return i, [text], "checked"
        return i, engine.check_source(text, path, run.config, index), "checked"
    if kept is None:
        data = _data(run, i)
        if isinstance(data, OSError):  # gone since the cache saw it
            return i, [engine.unreadable(data)], "parsed"
        text = engine.decode_source(data)
        if isinstance(text, Diagnostic):
            return i, [text], "parsed"
        tree = engine.parse_python(text, path)
        if tree is None:
            return i, engine.check_source(text, path, run.config, index), "parsed"
        info = summarize(tree, run.keys[i], run.modules[i], text, known=run.known)
        how = "reparsed" if i in run.dropped else "parsed"
    else:
        text, tree, info = kept
        how = "checked"
    own = info if info.path == path else _with_path(info, path)
    return i, engine.check_parsed(text, path, run.config, index, tree, own, run.keys[i]), how


def _with_path(info: ModuleInfo, path: str) -> ModuleInfo:
    from dataclasses import replace

    return replace(info, path=path)


def _moving(summaries: dict[int, FileSummary]) -> str:
    """Digest of the summaries with device facts the migration rules join across the
    project (`rules/migration/project.py`)."""
    return digest(*sorted(f.summary for f in summaries.values() if f.migrates))


# ----------------------------------------------------------------------------- keys
def _seeds(quals: tuple[str, ...], made: tuple[str, ...], scopes: Scopes) -> str:
    """Digest of what the project-wide resolution says about a module's functions (what
    `ScopeResolver._workspace_seeds` reads): which are compiled, how, from where. `quals`
    and `made` are the module's (`_seed_names`). Read from the packed scopes: none is
    made for this."""
    names = list(quals)
    if made:
        names.extend(q for q in scopes.closures() if q.startswith(made))
    parts: list[str] = []
    for q in names:
        s = scopes.packed(q)
        if s is not None:
            # (path, line, column, end_line, end_column, caller) of each call site
            sites = ";".join(f"{c[0]}:{c[1]}:{c[2]}:{c[3]}:{c[4]}:{c[5]}" for c in s[3])
            parts.append(f"{q}|{s[1]}|{s[2]}|{sites}")
    return digest(*parts)


def _attach(scopes: Scopes, calls: list[Any]) -> None:
    """`xcalls.attach` on scopes made as they are looked up: each call goes to the scope
    of the function it calls, as `GraphScope.incoming`."""
    by_target: dict[str, list[Any]] = {}
    for c in calls:
        if c[0] in scopes:
            by_target.setdefault(c[0], []).append(c)
    scopes.attach({q: tuple(v) for q, v in by_target.items()})


def _closures(
    order: list[int], summaries: dict[int, FileSummary], modules: list[str]
) -> dict[int, str]:
    """Per file, a digest of its own summary and those of every module it can reach
    through imports (transitively): Tarjan's strongly connected components, iteratively,
    each component digested once after the components it reaches."""
    by_module = {modules[i]: i for i in order}
    under: dict[str, list[int]] = {}
    for i in order:
        parts = modules[i].split(".")
        for k in range(1, len(parts)):
            under.setdefault(".".join(parts[:k]), []).append(i)

    memo: dict[int, list[int]] = {}
    #: imported name -> the modules it reaches (many modules import the same names)
    reach: dict[str, list[int]] = {}
    builtins = by_module.get("builtins")

    def reach_of(name: str) -> list[int]:
        found: list[int] = []
        parts = name.split(".")
        for k in range(len(parts), 0, -1):
            j = by_module.get(".".join(parts[:k]))
            if j is not None:
                found.append(j)
        found.extend(under.get(name, ()))
        reach[name] = found
        return found

    def deps(i: int) -> list[int]:
        hit = memo.get(i)
        if hit is not None:
            return hit
        out: set[int] = set()
        for name in summaries[i].imports:
            hit = reach.get(name)
            out.update(reach_of(name) if hit is None else hit)
        if builtins is not None:
            out.add(builtins)
        out.discard(i)
        memo[i] = sorted(out)
        return memo[i]

    index_of: dict[int, int] = {}
    low: dict[int, int] = {}
    on_stack: set[int] = set()
    stack: list[int] = []
    comp_of: dict[int, int] = {}
    comp_digest: list[str] = []
    counter = 0
    for start in order:
        if start in index_of:
            continue
        work: list[tuple[int, list[int], int]] = [(start, deps(start), 0)]
        index_of[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            v, succ, k = work[-1]
            if k < len(succ):
                work[-1] = (v, succ, k + 1)
                w = succ[k]
                if w not in index_of:
                    index_of[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, deps(w), 0))
                elif w in on_stack:
                    low[v] = min(low[v], index_of[w])
                continue
            work.pop()
            if work:
                u = work[-1][0]
                low[u] = min(low[u], low[v])
            if low[v] == index_of[v]:
                members: list[int] = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    members.append(w)
                    if w == v:
                        break
                c = len(comp_digest)
                for m in members:
                    comp_of[m] = c
                reached = sorted(
                    {
                        comp_digest[comp_of[d]]
                        for m in members
                        for d in deps(m)
                        if comp_of.get(d, c) != c
                    }
                )
                own = sorted(f"{modules[m]}\0{summaries[m].summary}" for m in members)
                comp_digest.append(digest(*own, "->", *reached))
    return {i: comp_digest[comp_of[i]] for i in order}


def _cached_scopes(entry: Any, key: str) -> tuple[Scopes | None, Resolution | None, str]:
    """(the cached resolution when every summary is as it was, else None; the roots and
    edges it was made of, for `project_scopes.resolve` to reuse; the key it was made for)."""
    try:
        made_for, resolution = entry
        if not isinstance(resolution, Resolution) or resolution.packed is None:
            return None, None, ""
        same = made_for == key
        return (Scopes(resolution.packed) if same else None), resolution, made_for
    except Exception:  # nothing stored, or not what this build stores
        return None, None, ""
