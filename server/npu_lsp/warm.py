"""The first step of every `check` run, and the whole of a run the cache answers.

A run first learns which files changed: it stamps every file, reads the cache's `results`
index once, reads (and hashes) only the files whose stamp it cannot trust (`cache.trusted`)
and digests the run's state (the settings and every file's content). When that state is
the one the cache recorded, the recorded diagnostics are the answer, and nothing else is
needed: no rule, no parser, no worker. This module is that path, kept small and importing
only the cache, the settings and the diagnostic types, so that a warm run pays for little
more than the interpreter. When it cannot answer, `look_up` hands what it read (`Lookup`)
to `workspace.check_files`, which goes on from there without reading any of it again.
The keys computed here (`settings_key`, `resolved`, `module_names`) are the ones the full
run uses: one definition for both.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePath
from typing import TYPE_CHECKING, Any

from npu_lsp.cache import (
    Cache,
    NotebookResult,
    Results,
    Stamp,
    checker_version,
    digest,
    stamp_of,
    trusted,
)
from npu_lsp.config import Config
from npu_lsp.diagnostics import Diagnostic
from npu_lsp.filetypes import claimed
from npu_lsp.locate import known_of

if TYPE_CHECKING:
    from npu_lsp.engine import WorkspaceIndex


@dataclass
class Stats:
    """What a run did (for `--timings`)."""

    files: int = 0
    #: files whose bytes the first step read: their stamp was not trusted (`cache.trusted`)
    read: int = 0
    parsed: int = 0
    reparsed: int = 0
    checked: int = 0
    reused: int = 0
    summaries_cached: int = 0
    jobs: int = 1
    cache: str = "off"
    seconds: float = 0.0
    #: roots and edges the project-wide resolution computed (not reused from the cache)
    resolved: int = 0
    #: notebooks checked, and answered from the cache
    notebooks: int = 0
    notebooks_reused: int = 0
    #: wall-clock seconds per phase: read, summarise, key, prepare, check, save
    phases: dict[str, float] = field(default_factory=dict)

    def lap(self, phase: str, since: float) -> float:
        now = time.perf_counter()
        self.phases[phase] = self.phases.get(phase, 0.0) + now - since
        return now


@dataclass
class Lookup:
    """What the first step read: the run's keys and settings, the cache's index, and per
    file its stamp, its bytes (when read) and the digest of its content."""

    settings: str
    root: str | None
    #: the cache opened for these settings (None: `--no-cache`)
    cache: Cache | None
    keys: list[str]
    stamps: list[Stamp | None]
    #: `time.time_ns()` before the first of `stamps` was taken
    stamped_at: int
    old: Results
    datas: list[bytes | OSError | None]
    contents: list[str]
    #: the digest of the run's state (`old.state` when nothing changed)
    state: str
    #: files read because their stamp was not trusted, whose content was as recorded
    restamped: list[int] = field(default_factory=list)

    @property
    def read(self) -> int:
        """How many files were read (their stamps not trusted)."""
        return sum(d is not None for d in self.datas)

    @property
    def unchanged(self) -> bool:
        """Every file's content, the settings and the checker are as the cache recorded."""
        return self.old.state == self.state and all(k in self.old.files for k in self.keys)


def look_up(
    files: Sequence[str],
    config: Config,
    root: str | None,
    cache_root: str | None,
    *,
    read_cache: bool = True,
    stats: Sequence[os.stat_result | None] | None = None,
    stamped_at: int | None = None,
) -> Lookup:
    """The first step of a run over `files` (see the module docstring), with the cache
    in `cache_root` (None: no cache; `read_cache` False: what is there is not read).
    `stats` are the files' `os.stat` results when the caller took them (discovery does),
    after `stamped_at` (`time.time_ns()`); without them, both are taken here."""
    if stats is None or stamped_at is None:
        stamped_at = time.time_ns()
        stamps = [stamp(p) for p in files]
    else:
        stamps = [None if st is None else stamp_of(st) for st in stats]
    root_key = resolved_root(root)
    settings = settings_key(config, root_key)
    cache = Cache(cache_root, settings, read=read_cache) if cache_root is not None else None
    old = cache.load_results() if cache is not None else Results()
    keys = resolved(files)
    datas: list[bytes | OSError | None] = []
    contents: list[str] = []
    restamped: list[int] = []
    recorded = old.files
    for i, (path, key, now) in enumerate(zip(files, keys, stamps, strict=True)):
        hit = recorded.get(key)
        if hit is not None and trusted(now, hit.stamp, old.stamped_at):
            datas.append(None)
            contents.append(hit.content)
            continue
        data = read(path)
        datas.append(data)
        if isinstance(data, OSError):
            contents.append(f"error:{data}")
            continue
        content = digest(data)
        contents.append(content)
        if hit is not None and hit.content == content:
            restamped.append(i)
    state = digest(settings, *(f"{k}\0{c}" for k, c in zip(keys, contents, strict=True)))
    return Lookup(
        settings, root_key, cache, keys, stamps, stamped_at, old, datas, contents, state, restamped
    )


class Miss(Exception):
    """The cache cannot answer the run: it must check something."""


def answer(
    lookup: Lookup,
    files: Sequence[str],
    notebooks: Sequence[str],
    config: Config,
    notebook_results: dict[str, list[tuple[str, Diagnostic]]],
    stats: Stats,
) -> list[tuple[str, list[Diagnostic]]]:
    """The diagnostics of every file (in order) and notebook (into `notebook_results`)
    recorded in the cache, when nothing they depend on changed; `Miss` otherwise. Stamps
    that could not be trusted but whose files proved unchanged are recorded again, so
    the next run need not read those files."""
    if not lookup.unchanged:
        raise Miss()
    old = lookup.old
    nbs: Notebooks | None = None
    if notebooks:
        nbs = Notebooks(notebooks, config, lookup.settings, old, lookup.root)
        python = [python_file(p) for p in files]
        modules = module_names(lookup.keys, lookup.root)
        closures = {
            modules[i]: c
            for i, k in enumerate(lookup.keys)
            if python[i] and (c := old.files[k].closure)
        }
        found: dict[str, list[tuple[str, Diagnostic]]] = {}
        scopes_key = digest(lookup.settings, old.whole)
        nbs.check(_no_index, closures, scopes_key, old.moving, found, stats)
        notebook_results.update(found)
    stats.reused = len(files)
    if lookup.cache is not None:
        refresh(lookup, lookup.cache, nbs)
    return [(p, old.files[k].diagnostics) for p, k in zip(files, lookup.keys, strict=True)]


def _no_index() -> WorkspaceIndex:
    raise Miss()


def refresh(lookup: Lookup, cache: Cache, nbs: Notebooks | None) -> None:
    """Record the stamps of files read because their stamp was not trusted (touched,
    copied, or changed too recently) and found unchanged, when the new stamps will be
    trusted, and notebooks' new stamps; the results are otherwise as recorded."""
    old = lookup.old
    moved = [
        i
        for i in lookup.restamped
        if trusted(lookup.stamps[i], lookup.stamps[i], lookup.stamped_at)
    ]
    if not moved and not (nbs is not None and nbs.changed):
        return
    files = dict(old.files)
    for i in moved:
        key = lookup.keys[i]
        files[key] = replace(files[key], stamp=lookup.stamps[i])
    notebooks = nbs.new if nbs is not None else old.notebooks
    # every other stamp was trusted under the old time, so it is under this later one
    cache.save(replace(old, files=files, notebooks=notebooks, stamped_at=lookup.stamped_at), None)


# ----------------------------------------------------------------------------- keys
def project_root(config: Config) -> str:
    """Where `.ascend-lens_cache/` goes: the pyproject's folder, else the current one."""
    return config.root or os.getcwd()


def settings_key(config: Config, root_key: str | None) -> str:
    """The cache's key for the settings, the checker and the project root."""
    return digest(checker_version(), repr(settings_view(config)), str(root_key))


def settings_view(config: Config) -> tuple[Any, ...]:
    """The settings that change diagnostics (not the problems found loading them)."""
    return (
        config.select,
        config.ignore,
        config.syntax_level,
        sorted(config.per_file_ignores.items()),
        config.preview,
        config.root,
        sys.version_info[:2],
    )


def resolved_root(root: str | os.PathLike[str] | None) -> str | None:
    """The project root as the index keeps it (`WorkspaceIndex.root`)."""
    return str(Path(root).resolve()) if root else None


def python_file(path: str) -> bool:
    """Whether `path` is a Python file the Python checker reads (its `PurePath.suffix` is
    .py or .pyi, and `engine.is_python`)."""
    name = os.path.basename(path)
    dot = name.rfind(".")
    return 0 < dot < len(name) - 1 and name[dot:] in (".py", ".pyi") and not claimed(path)


def stamp(path: str) -> Stamp | None:
    try:
        return stamp_of(os.stat(path))
    except OSError:
        return None


def read(path: str | os.PathLike[str]) -> bytes | OSError:
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as exc:
        return exc


def resolved(paths: Sequence[str]) -> list[str]:
    """`Path.resolve` of each path (the index's keys), resolving each folder once."""
    folders: dict[str, str] = {}
    out: list[str] = []
    for p in paths:
        absolute = os.path.abspath(p)
        folder, name = os.path.split(absolute)
        real = folders.get(folder)
        if real is None:
            real = folders[folder] = os.path.realpath(folder)
        out.append(
            os.path.realpath(absolute) if os.path.islink(absolute) else os.path.join(real, name)
        )
    return out


def module_names(keys: list[str], root: str | None) -> list[str]:
    """`scope.module_name_for` of each key, each folder made relative to `root` once."""
    folders: dict[str, tuple[str, ...] | None] = {}
    out: list[str] = []
    for key in keys:
        folder, name = os.path.split(key)
        if folder not in folders:
            try:
                folders[folder] = PurePath(folder).relative_to(root).parts if root else None
            except ValueError:
                folders[folder] = None
        rel = folders[folder]
        if rel is None:
            from npu_lsp.scope import module_name_for

            out.append(module_name_for(key, root))
            continue
        dot = name.rfind(".")  # `PurePath.with_suffix("")`'s rule for a suffix
        stem = name[:dot] if 0 < dot < len(name) - 1 else name
        if stem.strip(".") == "":  # ("..py": left to `PurePath` itself)
            out.append(".".join([*rel, *PurePath(name).with_suffix("").parts]) or "__main__")
            continue
        parts = [*rel, stem] if stem != "__init__" else [*rel]
        out.append(".".join(parts) or "__main__")
    return out


# ----------------------------------------------------------------------------- notebooks
class Notebooks:
    """The run's notebooks: each is checked against the run's index, or answered from the
    cache when its content is what the cache recorded and so is everything its check read
    of the project. That is: the summaries of the modules its imports reach (their import
    closures, `workspace._closures`), the device facts the migration rules join across the
    project, and, when a module of the project has the notebook's module name, the
    project-wide resolution (which may compile its functions). Nothing depends on a
    notebook."""

    def __init__(
        self,
        paths: Sequence[str | os.PathLike[str]],
        config: Config,
        settings: str,
        old: Results,
        root: str | None,
    ) -> None:
        self.paths = [str(p) for p in paths]
        self.keys = resolved(self.paths)
        self.config, self.settings = config, settings
        self.old, self.stamped_at = old.notebooks, old.stamped_at
        self.modules = module_names(self.keys, root)
        self.new: dict[str, NotebookResult] = {}
        self.changed = False

    def check(
        self,
        index: Callable[[], WorkspaceIndex],
        closures: dict[str, str],
        scopes_key: str,
        moving: str,
        out: dict[str, list[tuple[str, Diagnostic]]],
        stats: Stats,
    ) -> None:
        """Findings of every notebook into `out`; `index` makes the run's index (called
        when one is checked); `closures`: each module's closure digest; `scopes_key`: the
        digest of the project-wide resolution; `moving`: of the migration facts."""
        under: dict[str, list[str]] | None = None
        made: WorkspaceIndex | None = None
        for name, key, module in zip(self.paths, self.keys, self.modules, strict=True):
            now = stamp(name)
            old = self.old.get(key)
            if old is not None and trusted(now, old.stamp, self.stamped_at):
                content: str | None = old.content
            else:
                data = read(name)
                content = None if isinstance(data, OSError) else digest(data)
            if under is None:
                under = packages_of(closures)
            if old is not None and content == old.content:
                deps = notebook_deps(old.imports, module, closures, under, scopes_key, moving)
                if old.key == digest(self.settings, content, deps):
                    out[name] = [(name + where, d) for where, d in old.found]
                    self.new[key] = old if old.stamp == now else replace(old, stamp=now)
                    self.changed |= old.stamp != now
                    stats.notebooks_reused += 1
                    continue
            if made is None:
                made = index()
            from npu_lsp.notebook_file import check_notebook_file

            found = check_notebook_file(name, self.config, made)
            out[name] = found
            stats.notebooks += 1
            self.changed = True
            if content is None or not all(w.startswith(name) for w, _d in found):
                continue
            imports = notebook_imports(name, module, known_of(closures))
            deps = notebook_deps(imports, module, closures, under, scopes_key, moving)
            self.new[key] = NotebookResult(
                content,
                digest(self.settings, content, deps),
                imports,
                [(w[len(name) :], d) for w, d in found],
                now,
            )


def notebook_imports(
    path: str, module: str, known: Callable[[str], bool] | None = None
) -> tuple[str, ...]:
    """What the module-level code of the notebook at `path` imports (as a summary's
    `imports` records them, resolved against the modules `known` tells, see `locate`);
    () when it cannot be read or parsed (its check then reads nothing of the project
    either)."""
    from npu_lsp import engine
    from npu_lsp.notebook import join_cells
    from npu_lsp.notebook_file import code_cells
    from npu_lsp.scope import collect_imports

    try:
        cells = code_cells(Path(path).read_bytes().decode("utf-8-sig"))
        tree = engine.parse_python(join_cells(cells).text, path) if cells else None
    except (OSError, UnicodeDecodeError, ValueError):
        return ()
    if tree is None:
        return ()
    return tuple(sorted(set(collect_imports(tree, module, known=known).values())))


def packages_of(closures: dict[str, str]) -> dict[str, list[str]]:
    """Package name -> the modules under it (at any depth)."""
    under: dict[str, list[str]] = {}
    for m in closures:
        parts = m.split(".")
        for k in range(1, len(parts)):
            under.setdefault(".".join(parts[:k]), []).append(m)
    return under


def notebook_deps(
    imports: tuple[str, ...],
    module: str,
    closures: dict[str, str],
    under: dict[str, list[str]],
    scopes_key: str,
    moving: str,
) -> str:
    """Digest of what a notebook's check reads of the project (see `Notebooks`): the
    closures of the modules its imports reach, as `workspace._closures` finds them."""
    reached: set[str] = set()
    for name in imports:
        parts = name.split(".")
        reached.update(
            m for k in range(len(parts), 0, -1) if (m := ".".join(parts[:k])) in closures
        )
        reached.update(under.get(name, ()))
    if "builtins" in closures:
        reached.add("builtins")
    own = scopes_key if module in closures else ""
    return digest(*sorted(f"{m}\0{closures[m]}" for m in reached), "|", own, moving)
