"""The rules engine: a pure function of (text, path, config, workspace) to diagnostics.

    check_source(text, path, config, workspace=None) -> list[Diagnostic]
    check_path(path, config, workspace=None) -> list[Diagnostic]

No pygls here: the language server, the CLI and the tests all call these. Files are routed
by `LANGUAGES` (first matching checker wins; Python is the fallback), so a family that lints
another file type plugs in with::

    register_checker(lambda path: path.endswith(".json"), check_rank_table)

where the checker has the signature of `check_python` below. Whatever a checker returns
then goes through the shared post-processing: select/ignore, per-file ignores, `# noqa`
and sorting. For Python, the file is parsed once, graph scopes are resolved once
(`scope.py`), and one walk calls each enabled rule for the node types it declared:

- rules whose family triggers (`registry.FAMILY_TRIGGERS`) do not occur in the text are
  skipped, so torch migration rules cost nothing on a MindSpore-only file;
- `nodes = (ast.Module,)` rules run once per file and traverse what they need themselves;
- when every remaining rule is graph-only, only compiled functions are walked;
- an error found inside a helper is repeated at the call in the compiled root that reaches
  it (same code, pointing back at the helper line), which is where MindSpore reports it;
- a rule that raises becomes an AL003 diagnostic; the run continues.
"""

from __future__ import annotations

import ast
import fnmatch
import gc
import logging
import os
import pickle
import traceback
import warnings
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from npu_lsp import modes
from npu_lsp.astutil import (
    LEAVES,
    TextWords,
    imports_any,
    module_bindings,
    parent_map,
    set_checked_words,
    statement_parents,
)
from npu_lsp.children import AST_TYPES, PUSHERS
from npu_lsp.columns import LineColumns, split_lines
from npu_lsp.config import Config
from npu_lsp.diagnostics import Diagnostic, Edit, Fix, Related, Severity, Span
from npu_lsp.discovery import discover
from npu_lsp.files import DEFAULT_MAX_FILE_BYTES, NotCheckable, read_checkable, read_checkable_text
from npu_lsp.locate import known_of
from npu_lsp.noqa import filter_suppressed
from npu_lsp.registry import RULES, Rule, load_all
from npu_lsp.scope import (
    ECHOED_KINDS,
    SITED_KINDS,
    CallSite,
    EdgeTable,
    GraphScope,
    ModuleInfo,
    ScopeResolver,
    module_name_for,
    summarize,
)
from npu_lsp.summary import portable

log = logging.getLogger("npu_lsp.engine")

SYNTAX_ERROR = "AL001"
UNREADABLE_FILE = "AL002"
INTERNAL_ERROR = "AL003"

Checker = Callable[[str, str, Config, "WorkspaceIndex | None"], list[Diagnostic]]
Matcher = Callable[[str], bool]

#: (matcher, checker) in registration order; the first match handles the file.
LANGUAGES: list[tuple[Matcher, Checker]] = []
#: Drop a diagnostic found inside a graph scope (registered by rule families; e.g. graph
#: mode drops inference-time findings in branches MindSpore folds away while compiling).
DiagnosticFilter = Callable[["Context", GraphScope, Diagnostic], bool]
DIAGNOSTIC_FILTERS: list[DiagnosticFilter] = []
#: Codes about the values a helper returns (its branches' results joined): not repeated at
#: a call that is a statement of its own, whose result MindSpore never infers.
RESULT_JOIN_CODES: frozenset[str] = frozenset({"MS119", "MS133"})


def register_checker(matcher: Matcher | str, checker: Checker) -> None:
    """Route files whose path matches `matcher` (a predicate or a glob such as "*.json") to `checker`."""
    if isinstance(matcher, str):
        pattern = matcher

        def matcher(path: str) -> bool:
            return fnmatch.fnmatch(os.path.basename(path), pattern)

    LANGUAGES.append((matcher, checker))


# ----------------------------------------------------------------------------- workspace
class WorkspaceIndex:
    """Per-module summaries (imports, classes, functions, jit settings) of a set of files.

    Lets scope resolution follow Cell base classes and helper calls across modules. Holds
    portable summaries (`summary.portable`: what resolution reads, no syntax trees), looked
    up by module name; a summary may be added pickled (`add_summary` with bytes) and is
    then unpickled on first use, so a run that needs a few modules reads only those. Cheap
    to keep current: `update(path, text)` re-summarises one file; unparsable text keeps the
    last good summary.
    """

    def __init__(self, root: str | os.PathLike[str] | None = None) -> None:
        self.root = str(Path(root).resolve()) if root else None
        self._by_path: dict[str, str] = {}  # file key -> its module name
        self._by_module: dict[str, ModuleInfo | bytes | Callable[[], bytes]] = {}
        self._owner: dict[str, str] = {}  # module name -> key of the file defining it
        #: package name -> the modules under it (at any depth), for `import pkg`
        self._under: dict[str, dict[str, None]] = {}
        self.version = 0
        self._scopes: Mapping[str, GraphScope] = {}
        self._scopes_version = -1
        self._edges: EdgeTable | None = None
        self._texts: dict[str, int] = {}
        #: (key, text, tree, summary) of the last file indexed, so checking the text that was
        #: just indexed (the language server does both per change) does not parse it twice
        self._last: tuple[str, str, ast.Module, ModuleInfo] | None = None
        #: while `from_paths` indexes: the modules of every file it will index, so that
        #: imports resolve against all of them whatever the order (`locate`)
        self._expected: Callable[[str], bool] | None = None
        #: the mode each module of an inheriting kind takes from the scripts importing it
        #: (`modes.inherit`), for the index's `version` it was found at
        self._modes: dict[str, bool | None] = {}
        self._modes_version = -1

    @classmethod
    def from_paths(
        cls,
        paths: Iterable[str | os.PathLike[str]],
        root: str | None = None,
        limit: int = DEFAULT_MAX_FILE_BYTES,
    ) -> WorkspaceIndex:
        """Index every readable regular .py file of at most `limit` bytes in `paths`."""
        index = cls(root)
        found = list(iter_python_files(paths))
        index._expected = known_of(index.module_for(str(p)) for p in found)
        for p in found:
            try:
                index.update(str(p), read_checkable_text(p, limit))
            except (OSError, UnicodeDecodeError, NotCheckable):
                continue
        index._expected = None
        index._last = None  # only the file indexed last would use it; its tree is big
        return index

    def module_for(self, path: str) -> str:
        """Dotted module name of `path` within this workspace."""
        try:
            resolved = str(Path(path).resolve())
        except OSError:
            resolved = path
        return module_name_for(resolved, self.root)

    def update(self, path: str, text: str, *, live: bool = False) -> bool:
        """(Re)index one file; returns False when the text does not parse (old summary kept).
        Re-indexing identical text is free and keeps the cached project-wide resolution.
        A `live` file (open in the editor, re-indexed per keystroke) keeps its full summary:
        its tree is alive anyway, and pruning it on every edit would cost time."""
        key = self._key(path)
        digest = hash(text)
        if self._texts.get(key) == digest:
            return True
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                tree = ast.parse(text, filename=path)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return False
        try:
            info = summarize(tree, key, self.module_for(path), text, known=self.has_package)
            stored = info if live else portable(info, text)
        except RecursionError:
            return False
        self.add_summary(key, stored)
        self._texts[key] = digest
        self._last = (key, text, tree, info)
        return True

    def add_summary(
        self, key: str, info: ModuleInfo | bytes | Callable[[], bytes], module: str | None = None
    ) -> None:
        """Store the portable summary of the file `key` (a resolved path, see `key`): a
        `ModuleInfo`, or its pickle (or a function reading it) with the module's name
        (unpickled on first use)."""
        name = info.module if isinstance(info, ModuleInfo) else module
        assert name is not None, "a pickled summary needs its module name"
        old = self._by_module.get(name)
        fresh = self._modes_version == self.version
        self._remove_key(key)
        self._by_path[key] = name
        self._by_module[name] = info
        self._owner[name] = key
        for package in _packages(name):
            self._under.setdefault(package, {})[name] = None
        self.version += 1
        if fresh and type(info) is ModuleInfo and type(old) is ModuleInfo and _same_mode_facts(old, info):
            # an edit that keeps the file's mode and imports (most keystrokes) changes no
            # module's inherited mode: no walk over the whole import graph again
            self._modes_version = self.version
            if info.mode_kind in modes.INHERITING:
                modes.apply(info, self._modes.get(name))

    def note_text(self, key: str, text: str) -> None:
        """`text` is what the summary stored for `key` was made from (indexing the same
        text again is then free)."""
        self._texts[key] = hash(text)

    def parsed(self, path: str, text: str) -> tuple[ast.Module, ModuleInfo] | None:
        """The tree and summary of `text` if it is what was indexed last for `path`."""
        last = self._last
        if last is None or last[1] != text or last[0] != self._key(path):
            return None
        return last[2], last[3]

    def key(self, path: str) -> str:
        """The index's key for `path` (the resolved path; what summaries record as `path`)."""
        return self._key(path)

    def remove(self, path: str) -> None:
        self._remove_key(self._key(path))

    def _remove_key(self, key: str) -> None:
        if self._last is not None and self._last[0] == key:
            self._last = None
        self._texts.pop(key, None)
        name = self._by_path.pop(key, None)
        if name is not None and self._owner.get(name) == key:
            del self._by_module[name], self._owner[name]
            for package in _packages(name):
                self._under.get(package, {}).pop(name, None)
            self.version += 1

    def module(self, name: str) -> ModuleInfo | None:
        info = self._by_module.get(name)
        if info is None or type(info) is ModuleInfo:
            return info
        raw = info if type(info) is bytes else info()  # type: ignore[operator]
        found: ModuleInfo = pickle.loads(raw)
        self._by_module[name] = found
        if self._modes_version == self.version and found.mode_kind in modes.INHERITING:
            modes.apply(found, self._modes.get(name))
        return found

    def set_library_modes(self, found: dict[str, bool | None]) -> None:
        """Use `found` (`modes.inherit` over exactly these summaries, e.g. made from the
        CLI's per-file facts without unpickling them) as the modules' inherited modes until
        the next update."""
        self._modes = found
        self._modes_version = self.version
        for name, info in self._by_module.items():
            if type(info) is ModuleInfo and info.mode_kind in modes.INHERITING:
                modes.apply(info, found.get(name))

    def apply_mode(self, info: ModuleInfo) -> None:
        """Give `info` (a summary of one of the index's modules, maybe a fresh copy) the
        mode its importers give it (`modes.inherit` over the whole index, found again
        after an update)."""
        if info.mode_kind not in modes.INHERITING:
            return
        self.refresh_modes()
        modes.apply(info, self._modes.get(info.module))

    def refresh_modes(self) -> None:
        """Find the inherited modes again when the index changed since they were found."""
        if self._modes_version != self.version:
            infos = self.modules()
            self.set_library_modes(
                modes.inherit((m.module, m.mode_kind, m.imports.values()) for m in infos)
            )

    def has_package(self, name: str) -> bool:
        """Is `name` a module or package of this workspace (a file or a folder of files)?"""
        if name in self._by_module or name in self._under:
            return True
        return self._expected is not None and self._expected(name)

    def modules(self) -> Iterable[ModuleInfo]:
        return [m for name in list(self._by_module) if (m := self.module(name)) is not None]

    def submodules(self, name: str) -> list[ModuleInfo]:
        """The modules under package `name`, at any depth."""
        return [m for sub in self._under.get(name, ()) if (m := self.module(sub)) is not None]

    def __len__(self) -> int:
        return len(self._by_path)

    def graph_scopes(self) -> Mapping[str, GraphScope]:
        """qualname -> graph scope for every compiled function of the workspace, resolved
        across all files at once and cached until the next update (so checking N files
        costs one project-wide resolution, not N)."""
        if self._scopes_version != self.version:
            self.refresh_modes()
            resolver = ScopeResolver.for_workspace(self)
            self._scopes = {s.qualname: s for s in resolver.scopes.values()}
            self._scopes_version = self.version
            from npu_lsp.rules.graphmode.xcalls import attach, resolve

            infos = list(self.modules())
            calls = [c for info in infos for c in info.xcalls]
            attach(self._scopes, resolve(calls, {info.module: info.exports for info in infos}))
        return self._scopes

    def set_graph_scopes(
        self, scopes: Mapping[str, GraphScope], edges: EdgeTable | None = None
    ) -> None:
        """Use `scopes` (what `graph_scopes` gave for exactly these summaries, e.g. from the
        cache) until the next update; with the resolved `edges` they were walked over
        (`project_scopes`), which per-file resolvers then follow instead of resolving the
        calls of other modules' functions again."""
        self._scopes = scopes
        self._scopes_version = self.version
        self._edges = edges

    def edges_for(self, module: str, key: str) -> EdgeTable | None:
        """The project-wide resolved edges, when they were made for these summaries and
        `module`'s summary is the one of the file `key` (else None: resolve locally)."""
        edges = self._edges
        if edges is None or self._scopes_version != self.version or self._owner.get(module) != key:
            return None
        return edges

    def _key(self, path: str) -> str:
        try:
            return str(Path(path).resolve())
        except OSError:
            return path


def _same_mode_facts(old: ModuleInfo, new: ModuleInfo) -> bool:
    """Do two summaries of a module give `modes.inherit` the same facts (kind, imports)?"""
    return (
        old.module == new.module
        and old.mode_kind == new.mode_kind
        and set(old.imports.values()) == set(new.imports.values())
    )


def _packages(module: str) -> list[str]:
    """ "a.b.c" -> ["a.b", "a"]."""
    parts = module.split(".")
    return [".".join(parts[:i]) for i in range(len(parts) - 1, 0, -1)]


# ----------------------------------------------------------------------------- context
@dataclass
class Context:
    """What a rule may ask while checking one node. Set up by the engine; read-only for rules."""

    path: str
    text: str
    tree: ast.Module
    config: Config
    scopes: ScopeResolver
    #: The graph scope of the node being checked (None when it runs as plain Python).
    scope: GraphScope | None = None
    #: The innermost function (def or lambda) around the node being checked, if any.
    function: ast.AST | None = None
    #: Per-run memo for rule families (e.g. a data-flow analysis per function).
    cache: dict[Any, Any] = field(default_factory=dict)
    _parents: dict[int, ast.AST] = field(default_factory=dict)
    _lines: list[str] | None = None
    _parents_complete: bool = False
    _stmt_parents: dict[int, ast.AST] | None = None
    _qualnames: dict[object, str | None] = field(default_factory=dict)
    _columns: LineColumns | None = None
    _words: TextWords | None = None
    _bindings: dict[str, list[ast.AST]] | None = None

    def mentions(self, s: str) -> bool:
        """`s in self.text`, answered from the text's distinct words when they decide it
        (`TextWords`, built once per file and shared with the dispatch's trigger tests)."""
        if self._words is None:
            self._words = TextWords(self.text)
        return s in self._words

    def text_words(self) -> Mapping[str, int] | None:
        """How often each word (`astutil.ascii_words`) occurs in the file's text, counted
        once per file; None for a text that is not ASCII."""
        if self._words is None:
            self._words = TextWords(self.text)
        return self._words.counts()

    def module_bindings(self) -> Mapping[str, list[ast.AST]]:
        """The module namespace: name -> the nodes binding it at module level, in source
        order (`astutil.module_bindings`: definitions, imports, assignments, loop / `with`
        / `except` / `case` targets, `:=`), built once per file. Read-only."""
        if self._bindings is None:
            self._bindings = module_bindings(self.tree.body, walrus=":=" in self.text)
        return self._bindings

    # ---- scope and names
    @property
    def in_graph(self) -> bool:
        """Is the current node compiled by MindSpore (inside a graph scope)?"""
        return self.scope is not None

    @property
    def syntax_level(self) -> str | None:
        """ "strict" / "lax" for nodes in a graph scope, else None."""
        return self.scope.level if self.scope else None

    def qualname(self, expr: ast.AST) -> str | None:
        """Dotted name through imports and aliases: `th.cuda.is_available` -> "torch.cuda.is_available".

        Names defined at module level resolve to "<module>.<name>", unshadowed builtins to
        "builtins.<name>"; local variables and anything else give None.
        """
        # The answer depends on the spelling only (imports and module-level names, no
        # local scopes): a name or `name.attr` is resolved once per file, whichever node
        # spells it; other expressions once per node.
        t = type(expr)
        if t is ast.Name:
            key: object = expr.id  # type: ignore[attr-defined]
        elif t is ast.Attribute and type(expr.value) is ast.Name:  # type: ignore[attr-defined]
            key = (expr.value.id, expr.attr)  # type: ignore[attr-defined]
        else:
            key = id(expr)
        memo = self._qualnames
        if key in memo:
            return memo[key]
        name = memo[key] = self.scopes.info.resolve(expr)
        return name

    def parent(self, node: ast.AST) -> ast.AST | None:
        """The syntactic parent of `node` (None for the module)."""
        hit = self._parents.get(id(node))
        if hit is None and not self._parents_complete and node is not self.tree:
            if isinstance(node, ast.stmt):
                # A statement's parent is a statement, a handler, a `case` or the module:
                # the statement skeleton (a tenth of the nodes) answers, also for
                # definitions of other files ("is it in this tree?": None).
                if self._stmt_parents is None:
                    self._stmt_parents = statement_parents(self.tree)
                return self._stmt_parents.get(id(node))
            # The walk records parents as it goes; a question about a node not reached yet
            # (e.g. a caller defined further down) completes the map once. The module has
            # no parent: asking about it (flow analysis of module-level code) needs no map.
            self._parents_complete = True
            self._parents.update(parent_map(self.tree))
            hit = self._parents.get(id(node))
        return hit

    def enclosing_function(
        self, node: ast.AST, *, lambdas: bool = True, through_classes: bool = False
    ) -> ast.AST | None:
        """The nearest `def` (or `lambda`, unless `lambdas` is false) around `node`, by its
        syntactic parents. A class on the way ends the search (None: a method's body is
        not the scope of the class's own names) unless `through_classes`. The one
        definition of this walk up for the shared models (flow, values, constructed)."""
        kinds = _FUNC_TYPES if lambdas else _DEF_TYPES
        p = self.parent(node)
        while p is not None:
            if isinstance(p, kinds):
                return p
            if not through_classes and isinstance(p, ast.ClassDef):
                return None
            p = self.parent(p)
        return None

    def statement_of(self, node: ast.AST) -> ast.stmt | None:
        """The innermost statement holding `node` (`node` itself when it is one)."""
        p: ast.AST | None = node
        while p is not None and not isinstance(p, ast.stmt):
            p = self.parent(p)
        return p

    def ancestors(self, node: ast.AST, within: ast.AST | None) -> list[ast.AST]:
        """The syntactic parents of `node`, innermost first, up to but not including
        `within` (a function around it; all of them when `within` is not one)."""
        out: list[ast.AST] = []
        p = self.parent(node)
        while p is not None and p is not within:
            out.append(p)
            p = self.parent(p)
        return out

    def statement_parent(self, node: ast.AST) -> ast.AST | None:
        """The parent of a statement, `except` clause or `case` in the file's statement
        skeleton (a statement, a clause or the module; None for a node of no statement
        block of this tree). Unlike `parent`, right for a compiled function the walk starts
        at too: the walk of compiled functions only records the module (or the class) as
        the parent of such a root, also when it is nested in a function."""
        if self._stmt_parents is None:
            self._stmt_parents = statement_parents(self.tree)
        return self._stmt_parents.get(id(node))

    # ---- text and spans
    @property
    def lines(self) -> list[str]:
        """The source lines, numbered as `ast` numbers them (index = line - 1)."""
        if self._lines is None:
            self._lines = split_lines(self.text)
        return self._lines

    @property
    def columns(self) -> LineColumns:
        """Byte offset -> code-point column conversion for this file."""
        if self._columns is None:
            self._columns = self.scopes.info.columns or LineColumns(self.text, self._lines)
        return self._columns

    def column(self, line: int, byte_offset: int) -> int:
        """1-based code-point column of an `ast` byte offset (`col_offset`) on `line`."""
        return self.columns.column(line, byte_offset)

    def span(self, node: ast.AST) -> Span:
        """1-based span of a node (columns in code points, end exclusive)."""
        return node_span(node, self.columns)

    def head_span(self, node: ast.AST) -> Span:
        """The span of the first line of a (compound) statement only, e.g. `try:`."""
        s = self.span(node)
        if s.end_line == s.line:
            return s
        line = self.lines[s.line - 1] if s.line - 1 < len(self.lines) else ""
        return Span(s.line, s.column, s.line, max(len(line.rstrip()) + 1, s.column + 1))

    def segment(self, node: ast.AST) -> str:
        """Source text of `node`."""
        return ast.get_source_segment(self.text, node) or ""

    def edit(self, node: ast.AST, new_text: str) -> Edit:
        return Edit(self.span(node), new_text)

    def diagnostic(
        self,
        rule: Rule | type[Rule],
        node: ast.AST | Span,
        message: str,
        *,
        fix: Fix | None = None,
        related: Iterable[Related] = (),
        severity: Severity | None = None,
    ) -> Diagnostic:
        """A diagnostic of `rule` on `node`. Inside a helper reached from compiled code, the
        call sites that reach it are attached as related information automatically."""
        span = node if isinstance(node, Span) else self.span(node)
        rel = list(related)
        if self.scope is not None and self.scope.kind in ECHOED_KINDS:
            for site in self.scope.call_sites[:5]:
                rel.append(
                    Related(
                        site.path,
                        Span(site.line, site.column, site.end_line, site.end_column),
                        f"compiled because `{site.caller}` calls it here",
                    )
                )
        return Diagnostic(rule.code, message, severity or rule.severity, span, fix, tuple(rel))


def node_span(node: ast.AST, columns: LineColumns | None = None) -> Span:
    """The node's span. `ast` offsets are UTF-8 bytes; with `columns` (the file's converter)
    they become code-point columns, which is what a Span holds. Without it the offsets are
    used as they are, which is only right for ASCII lines."""
    line = getattr(node, "lineno", 1)
    end_line = getattr(node, "end_lineno", None) or line
    start = getattr(node, "col_offset", 0)
    end = getattr(node, "end_col_offset", None)
    if columns is None:
        col = start + 1
        return Span(line, col, end_line, (end + 1) if end is not None else col + 1)
    col = columns.column(line, start)
    end_col = columns.column(end_line, end) if end is not None else col + 1
    return Span(line, col, end_line, end_col)


# ----------------------------------------------------------------------------- dispatch
_FUNC_TYPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
_DEF_TYPES = (ast.FunctionDef, ast.AsyncFunctionDef)
_dispatch_cache: dict[tuple[Any, ...], dict[type[ast.AST], list[Rule]]] = {}
#: What decides whether a rule runs in a file: (family, keeps the family's triggers,
#: triggers, required imports, `Rule.words`).
_Group = tuple[str, bool, tuple[str, ...], tuple[str, ...], tuple[str, ...]]
_enabled_cache: dict[
    tuple[Any, ...],
    tuple[list[_Group], list[tuple[str, int]]],
] = {}


def _dispatch_table(
    config: Config,
    path: str,
    text: str = "",
    forced: frozenset[str] = frozenset(),
    tree: ast.Module | None = None,
    index: TextWords | None = None,
) -> dict[type[ast.AST], list[Rule]]:
    """{node type: enabled rule instances}, built once per (config, per-file ignores, triggers).

    Families in `forced` run even when the text lacks their trigger substrings (e.g. graph
    rules for a file whose Cells derive from a base class defined elsewhere). Rules that
    require imports (`Rule.active_imports`) run only when `tree` imports one of them.
    `index` answers the substring tests (`TextWords` of `text`, shared with the rules)."""
    _ensure_rules_loaded()
    ignored = config.ignored_for(path)
    # the rules these settings enable, once per settings (a repository run asks per file),
    # grouped by what decides whether they run in a file: each group is decided once
    settings = (config.select, config.ignore, config.preview, ignored, len(RULES))
    enabled = _enabled_cache.get(settings)
    if enabled is None:
        enabled = _enabled_cache[settings] = _enabled_groups(config, ignored)
    groups, codes = enabled
    if index is None:
        index = TextWords(text)
    present: dict[str, bool] = {}  # one test per distinct trigger word
    imported: dict[tuple[str, ...], bool] = {}
    runs: list[bool] = []
    for family, family_triggers, own_triggers, required, words in groups:
        # Required imports first: the answer is shared by the groups requiring the same
        # packages, and a file importing none of them (most MindSpore files for the torch
        # groups) then scans for no trigger of theirs. A package spelled nowhere in the
        # text is imported nowhere (`imports_any`'s own first test, with the scans shared).
        if required and tree is not None:
            if required not in imported:
                spelled = False
                for word in required:
                    hit = present.get(word)
                    if hit is None:
                        hit = present[word] = word in index
                    if hit:
                        spelled = True
                        break
                imported[required] = spelled and imports_any(tree, text, required)
            if not imported[required]:
                runs.append(False)
                continue
        # A forced family drops its default trigger, never a rule's own (a substring the
        # rule cannot fire without, e.g. "classmethod").
        triggers = () if family_triggers and family in forced else own_triggers
        ok = not triggers
        for word in triggers:  # once per word (an absent one scans the whole text)
            hit = present.get(word)
            if hit is None:
                hit = present[word] = word in index
            if hit:
                ok = True
                break
        if ok and words:  # `Rule.words`: one of them too, forced or not
            ok = False
            for word in words:
                hit = present.get(word)
                if hit is None:
                    hit = present[word] = word in index
                if hit:
                    ok = True
                    break
        runs.append(ok)
    key = (settings, tuple(runs))
    table = _dispatch_cache.get(key)
    if table is None:
        table = {}
        for code, group in codes:  # in code order: the order rules see a node in
            if runs[group]:
                inst = RULES[code]()
                for t in inst.nodes:
                    table.setdefault(t, []).append(inst)
        _dispatch_cache[key] = table
    return table


def _gated_table(
    table: dict[type[ast.AST], list[Rule]], ctx: Context
) -> dict[type[ast.AST], list[Rule]]:
    """`table` without the rules whose `Rule.applies` says False for this file (a rule
    whose test raises stays in: its checks report the error as before). The table left is
    one per (table, rules left out), kept with the dispatch tables, so what is compiled
    from a table once serves every file that leaves out the same rules."""
    gated = _gated_rules.get(id(table))
    if gated is None or gated[0] is not table:
        seen: dict[int, Rule] = {}
        for rules in table.values():
            for r in rules:
                if type(r).applies is not Rule.applies:
                    seen.setdefault(id(r), r)
        gated = (table, list(seen.values()))
        if any(table is t for t in _dispatch_cache.values()):
            _gated_rules[id(table)] = gated  # kept alive by the cache: id stays
    if not gated[1]:
        return table
    off: list[Rule] = []
    for r in gated[1]:
        try:
            if not r.applies(ctx):
                off.append(r)
        except Exception:
            continue
    if not off:
        return table
    key = ("gated", id(table), tuple(id(r) for r in off))
    hit = _dispatch_cache.get(key)
    if hit is None or _gated_from.get(id(hit)) is not table:
        dropped = {id(r) for r in off}
        hit = {}
        for t, rules in table.items():
            kept = [r for r in rules if id(r) not in dropped]
            if kept:
                hit[t] = kept
        _dispatch_cache[key] = hit
        _gated_from[id(hit)] = table
    return hit


#: id(dispatch table) -> (the table, its rules that override `Rule.applies`)
_gated_rules: dict[int, tuple[dict[type[ast.AST], list[Rule]], list[Rule]]] = {}
#: id(gated table) -> the dispatch table it was made from (`_gated_table`'s cache check)
_gated_from: dict[int, dict[type[ast.AST], list[Rule]]] = {}


def _enabled_groups(
    config: Config, ignored: tuple[str, ...]
) -> tuple[list[_Group], list[tuple[str, int]]]:
    """The enabled rules with node types, as (groups, [(code, group index)] in code order):
    a group is what decides whether a rule runs in a file (family, whether it keeps the
    family's triggers, its triggers, its required imports, its words)."""
    from npu_lsp.registry import matches

    groups: dict[_Group, int] = {}
    codes: list[tuple[str, int]] = []
    for code, cls in sorted(RULES.items()):
        if cls.nodes and config.enabled(code, cls.group) and not matches(code, ignored):
            g = (
                cls.family,
                cls.triggers is None,
                cls.active_triggers(),
                cls.active_imports(),
                cls.words,
            )
            codes.append((code, groups.setdefault(g, len(groups))))
    return list(groups), codes


def _internal(code: str, message: str, span: Span, severity: Severity = "error") -> Diagnostic:
    return Diagnostic(code, message, severity, span)


def check_python(
    text: str, path: str, config: Config, workspace: WorkspaceIndex | None = None
) -> list[Diagnostic]:
    """Parse, resolve graph scopes and run every enabled Python rule in one walk."""
    # The AST is a large acyclic allocation burst; pausing the cyclic collector while we
    # build and read it avoids repeated full-heap scans (a big share of time on big files).
    paused = gc.isenabled()
    gc.disable()
    try:
        return _check_python(text, path, config, workspace)
    finally:
        if paused:
            gc.enable()


def _check_python(
    text: str, path: str, config: Config, workspace: WorkspaceIndex | None
) -> list[Diagnostic]:
    reused = workspace.parsed(path, text) if workspace is not None else None
    if reused is not None:
        # Just indexed: same tree, same summary (recorded under this caller's path name).
        tree, indexed = reused
        info = replace(indexed, path=path) if indexed.path != path else indexed
        return _check_tree(text, path, config, workspace, tree, info)
    try:
        with warnings.catch_warnings():
            # e.g. "invalid escape sequence": Python's own warnings must not reach the
            # server's stderr once per keystroke
            warnings.simplefilter("ignore")
            tree = ast.parse(text, filename=path)
    except SyntaxError as exc:
        line = exc.lineno or 1
        col = exc.offset or 1
        end_line = exc.end_lineno or line
        end_col = (
            exc.end_offset if exc.end_lineno and exc.end_offset and exc.end_offset > 0 else col + 1
        )
        if (end_line, end_col) <= (line, col):
            end_line, end_col = line, col + 1
        return [
            _internal(SYNTAX_ERROR, f"SyntaxError: {exc.msg}", Span(line, col, end_line, end_col))
        ]
    except (ValueError, RecursionError, MemoryError) as exc:
        return [_internal(SYNTAX_ERROR, f"cannot parse: {exc}", Span(1, 1, 1, 2))]
    return _check_tree(text, path, config, workspace, tree, None)


def _check_tree(
    text: str,
    path: str,
    config: Config,
    workspace: WorkspaceIndex | None,
    tree: ast.Module,
    info: ModuleInfo | None,
    key: str | None = None,
) -> list[Diagnostic]:
    # the text's word index, built once (lazily) and shared: scope resolution's word
    # searches, the dispatch's trigger tests, the rules' `ctx.mentions`
    words = TextWords(text)
    set_checked_words(words)
    try:
        resolver = ScopeResolver(
            tree, path, config.syntax_level, workspace, info=info, text=text, key=key
        )
    except RecursionError:
        return [
            _internal(
                INTERNAL_ERROR, "file too deeply nested to analyse", Span(1, 1, 1, 2), "warning"
            )
        ]
    finally:
        set_checked_words(None)
    ctx = Context(path, text, tree, config, resolver, _words=words)
    if _admit_overloads(ctx):
        ctx.cache.clear()  # what the choice cached was computed without those functions compiled
    roots = resolver.local_roots()
    forced = frozenset({"graphmode"}) if roots else frozenset()
    table = _dispatch_table(config, path, text, forced, tree, words)
    table = _gated_table(table, ctx)
    walker = _Walker(ctx, table)
    try:
        _run_rules(ctx, walker, table, roots, tree)
    finally:
        # Rule caches point back at the context (a reference cycle holding the whole AST);
        # clearing them lets reference counting free the tree at once instead of the GC.
        ctx.cache.clear()
        ctx._parents.clear()
        ctx._stmt_parents = None
    return walker.out


def _admit_overloads(ctx: Context) -> bool:
    """Compile the `MultitypeFuncGraph` registrations compiled calls select, which takes the
    rules' value model (`rules/graphmode/overload_choice.py`); only in a file naming one."""
    if not ctx.mentions("register"):
        return False
    from npu_lsp.rules.graphmode.overload_choice import admit_chosen_overloads

    return admit_chosen_overloads(ctx)


def _run_rules(
    ctx: Context,
    walker: _Walker,
    table: dict[type[ast.AST], list[Rule]],
    roots: list[tuple[ast.FunctionDef | ast.AsyncFunctionDef, ast.ClassDef | None]],
    tree: ast.Module,
) -> None:
    """Module-level rules once, then the walk (whole file, or compiled functions only)."""
    for r in table.get(ast.Module, ()):
        walker.run(r, tree)
    # When every node rule is graph-only, only compiled functions need visiting.
    if _walks_everywhere(table):
        walker.narrow_calls()
        walker.walk(tree, None, None)
    elif any(t is not ast.Module for t in table):
        for fn, owner in roots:  # parents first: rules ask about callers walked later
            walker.parents[id(fn)] = owner or tree
            if owner is not None:
                walker.parents.setdefault(id(owner), tree)
        if roots:
            walker.narrow_calls()
        for fn, _owner in roots:
            walker.walk(fn, None, None)


def _walks_everywhere(table: dict[type[ast.AST], list[Rule]]) -> bool:
    """Does a node rule of `table` run outside compiled code (so the whole tree is walked)?
    Once per table (`_dispatch_table` hands the same table to every file with its rules)."""
    hit = _everywhere.get(id(table))
    if hit is not None and hit[0] is table:
        return hit[1]
    answer = any(
        not r.graph_only for t, rules in table.items() if t is not ast.Module for r in rules
    )
    if any(table is t for t in _dispatch_cache.values()):
        _everywhere[id(table)] = (table, answer)  # kept alive by the cache: id stays
    return answer


#: id(dispatch table) -> (the table, `_walks_everywhere` of it), for cached tables
_everywhere: dict[int, tuple[dict[type[ast.AST], list[Rule]], bool]] = {}


def _root_call_sites(scope: GraphScope, resolver: ScopeResolver) -> list[CallSite]:
    """Call sites in compiled roots that (transitively) reach the helper `scope`."""
    out: list[CallSite] = []
    seen: set[int] = {id(scope.function)}
    todo = list(scope.call_sites)
    while todo:
        site = todo.pop()
        if site.caller_node is not None:
            caller = resolver.scope_for(site.caller_node)
        else:  # a site from a portable (cached or sent) resolution: no node, its name
            caller = _scope_named(resolver, site.caller)
        if caller is None or caller.kind not in SITED_KINDS or not caller.call_sites:
            out.append(site)  # a root: nothing compiled calls its function
        elif id(caller.function) not in seen:
            seen.add(id(caller.function))
            todo.extend(caller.call_sites)
    return out


def _scope_named(resolver: ScopeResolver, qual: str) -> GraphScope | None:
    """The scope of `resolver` named `qual` (first added wins, as for nodes)."""
    cached: tuple[int, dict[str, GraphScope]] | None = getattr(resolver, "_by_qualname", None)
    if cached is None or cached[0] != len(resolver.scopes):
        table: dict[str, GraphScope] = {}
        for s in resolver.scopes.values():
            table.setdefault(s.qualname, s)
        cached = (len(resolver.scopes), table)
        resolver._by_qualname = cached  # type: ignore[attr-defined]
    return cached[1].get(qual)


class _Walker:
    """One pass over (parts of) a tree, dispatching nodes to rules by type."""

    def __init__(self, ctx: Context, table: dict[type[ast.AST], list[Rule]]) -> None:
        self.ctx = ctx
        self.table = table
        #: per level (`_level`), node type -> the entries that run there, and the node
        #: types visited there; the types any level visits
        self.levels, self.walked = _compile_table(table)
        self.out: list[Diagnostic] = []
        self.crashed: set[str] = set()
        self.echoed: set[tuple[str, int, int]] = set()
        self.parents = ctx._parents

    def narrow_calls(self) -> None:
        """This file's `Rule.file_calls`: the call rules that name the calls they can
        report on here get those names as their `calls` in this walker's levels (with call
        tables of its own, filled as the walk meets the names); the shared levels stay as
        they are. A rule whose test raises keeps every call (its checks report the error)."""
        narrowed: dict[int, frozenset[str]] = {}
        for r in self.table.get(ast.Call, ()):
            if type(r).file_calls is Rule.file_calls:
                continue
            try:
                names = r.file_calls(self.ctx)
            except Exception:
                continue
            if names is not None:
                narrowed[id(r)] = names
        if narrowed:
            self.levels = tuple(_narrowed_level(level, narrowed) for level in self.levels)

    def run(self, r: Rule, node: ast.AST) -> None:
        try:
            found = list(r.check(node, self.ctx))
            if found:
                self._emit(found)
        except Exception as exc:  # a broken rule must never take the run down
            self._crashed(r, node, exc)

    def _emit(self, found: list[Diagnostic]) -> None:
        scope = self.ctx.scope  # as set by the walk (module-level rules run with None)
        if scope is not None and DIAGNOSTIC_FILTERS:
            found = [d for d in found if not any(f(self.ctx, scope, d) for f in DIAGNOSTIC_FILTERS)]
        self.out.extend(found)
        if scope is not None and scope.kind in SITED_KINDS:
            self._echo_errors(found, scope)

    def _echo_errors(self, found: list[Diagnostic], scope: GraphScope) -> None:
        """Repeat each error found in a function compiled through calls at those calls."""
        if scope.call_sites:
            for d in found:
                if d.severity == "error":
                    self.out.extend(self._echo_at_call_sites(d, scope))

    def _crashed(self, r: Rule, node: ast.AST, exc: Exception) -> None:
        """Report a rule that raised, once per rule (called from inside the `except`)."""
        if r.code not in self.crashed:
            self.crashed.add(r.code)
            log.error("rule %s crashed on %s: %s", r.code, self.ctx.path, traceback.format_exc())
            msg = f"internal error in rule {r.code} ({r.name}): {type(exc).__name__}: {exc}"
            self.out.append(_internal(INTERNAL_ERROR, msg, self.ctx.span(node), "warning"))

    def _statement_call(self, call: ast.Call | None) -> bool:
        st = self.ctx.parent(call) if call is not None else None
        return isinstance(st, ast.Expr) and st.value is call

    def _echo_at_call_sites(self, d: Diagnostic, scope: GraphScope) -> list[Diagnostic]:
        """MindSpore reports an error inside a helper at the call in the compiled root
        (`construct` / the `@jit` function). Repeat the diagnostic there (same code), once per
        call site of this file, pointing back at the helper line."""
        out: list[Diagnostic] = []
        for site in _root_call_sites(scope, self.ctx.scopes):
            if site.path != self.ctx.path or (d.code, site.line, site.column) in self.echoed:
                continue
            if d.code in RESULT_JOIN_CODES and self._statement_call(site.call):
                continue  # `helper(x)` as a statement: its returns are never joined
            self.echoed.add((d.code, site.line, site.column))
            span = Span(site.line, site.column, site.end_line, site.end_column)
            here = Related(self.ctx.path, d.span, d.message)
            msg = f"this call compiles `{scope.qualname.rsplit('.', 1)[-1]}`, which is rejected in graph mode (line {d.span.line}): {d.message}"
            out.append(Diagnostic(d.code, msg, d.severity, span, None, (here,)))
        return out

    def walk(self, root: ast.AST, scope: GraphScope | None, func: ast.AST | None) -> None:
        ctx, parents, levels = self.ctx, self.parents, self.levels
        pushers = PUSHERS
        scope_for = ctx.scopes.scope_for
        qualname = ctx.qualname
        # the node types visited at the level in force (no leaf or `arg` no rule there asks
        # for, no string or None; without a rule on `Attribute` or `Name`, `a.b` is not
        # visited either): part of `level`, set with it below
        attribute, name, call, assign = ast.Attribute, ast.Name, ast.Call, ast.Assign
        restore, nothing, special = tuple, _NOTHING, _SPECIAL
        # node type -> the bound `check`s of the rules that run at the level of the scope in
        # force, or `_SPECIAL` for the types handled below (`_steps`); the same for calls by
        # (callee type, called name) (`_for_call`), and the entries of the calls' rules at
        # that level
        level = levels[_level(scope)]
        steps, here, here_calls, call_entries, here_assigns, assign_entries, walked = level
        # Explicit stack instead of recursion: deeply nested input must not overflow ours.
        # It holds nodes, plus one (scope, function, level) tuple under the children of
        # each function definition: popping it restores what was in force around that
        # function (no tuple per node).
        stack: list[Any] = [root]
        pop, push = stack.pop, stack.append
        # The rules read the scope and function in force from `ctx`: set when they change
        # (entering a function, leaving it), not per node. A rule that changes them for a
        # while puts them back (MS119's per-call specialisation).
        ctx.scope, ctx.function = scope, func
        while stack:
            node = pop()
            nt = type(node)
            # one lookup per node: most nodes are of a type no rule at this level asks
            # for (None), or have the rules' checks; the rest are `_SPECIAL`
            entries = steps.get(nt)
            is_func = False
            if entries is special:
                if nt is restore:
                    scope, func, level = node
                    steps, here, here_calls, call_entries, here_assigns, assign_entries, walked = level
                    ctx.scope, ctx.function = scope, func
                    continue
                if nt is call:
                    # the rules for this callee (`Rule.callee`) and called name
                    # (`Rule.calls`; `called_name` inlined), once per table, level and name
                    f = node.func
                    ft = type(f)
                    receiver = ""
                    if ft is attribute:
                        called = f.attr
                        v = f.value  # the receiver's shape (`Rule.wants_call`)
                        vt = type(v)
                        if vt is name:
                            receiver = "self" if v.id == "self" else "name"
                        elif vt is attribute and type(v.value) is name and v.value.id == "self":
                            receiver = "self."
                    elif ft is name:
                        q = qualname(f)
                        called = q[q.rfind(".") + 1 :] if q else f.id
                    else:
                        called = ""
                    key = (ft, called, receiver)
                    entries = here_calls.get(key)
                    if entries is None:
                        entries = here_calls[key] = _for_call(call_entries, ft, called, receiver)
                elif nt is assign:
                    # the rules for this shape (`Rule.wants_assign`): one target's type (None
                    # for several), the value's type and, for a call, its callee's
                    # (`Rule.wants_assigned_call`), once per table and level
                    targets = node.targets
                    value = node.value
                    vt = type(value)
                    akey = (type(targets[0]) if len(targets) == 1 else None, vt, type(value.func) if vt is call else None)
                    entries = here_assigns.get(akey)
                    if entries is None:
                        entries = here_assigns[akey] = _for_assign(assign_entries, *akey)
                else:
                    # a function: its own definition belongs to the scope it compiles to
                    is_func = True
                    push((scope, func, level))
                    inner = scope_for(node)
                    if inner is not None:
                        ctx.scope = scope = inner
                        level = levels[_level(inner)]
                        steps, here, here_calls, call_entries, here_assigns, assign_entries, walked = level
                    entries = here.get(nt)
            if entries:
                for check in entries:
                    # `run` inlined: ~12k rule calls on a 5,000-line file, most finding nothing
                    try:
                        found = check(node, ctx)
                        if found is nothing:
                            continue  # `return ()`: no list to build
                        found = list(found)
                        if found:
                            self._emit(found)
                    except Exception as exc:  # a broken rule must never take the run down
                        self._crashed(_rule_of(check), node, exc)
            if is_func:
                ctx.function = func = node
            # Children pushed in reverse so they are visited in source order, each recorded
            # with its parent; leaves (or `a.b`) no rule asked for are left out. The loop
            # over the type's fields is written out per type (`children.pusher`).
            pushers[nt](node, push, parents, walked)


def _rule_of(check: _Run) -> Rule:
    """The rule whose bound `check` the walk called (to name it when it crashed)."""
    owner = getattr(check, "__self__", None)
    assert isinstance(owner, Rule), "a rule's check is a method of the rule"
    return owner


#: what a rule returns when it finds nothing without a generator (`return ()`)
_NOTHING: tuple[()] = ()
#: in the walk's table of a level (`_steps`), the node types it handles on their own:
#: functions (scope changes), calls and assignments with rules (entries by shape), and
#: the tuple restoring the scope around a function
_SPECIAL: list[_Run] = []


def _level(scope: GraphScope | None) -> int:
    """0 outside compiled code (no graph-only rule runs), 1 in a LAX scope (no STRICT-only
    rule), 2 in a STRICT scope (every rule)."""
    return 0 if scope is None else 2 if scope.level == "strict" else 1


def _at_level(rules: list[Rule], level: int) -> list[_LevelEntry]:
    """The entries of `rules` that run at `level` (`_level`), in order."""
    return [
        (r, r.check, r.calls, r.callee, r.wants_call if type(r).wants_call is not Rule.wants_call else None)
        for r in rules
        if not (r.graph_only if level == 0 else r.strict_only and level == 1)
    ]


def _narrowed_level(level: _Level, narrowed: dict[int, frozenset[str]]) -> _Level:
    """`level` with the `calls` of the rules in `narrowed` (by id) cut down to the names
    given, and an empty table of call entries by name (`_Walker.narrow_calls`)."""
    steps, here, _calls, call_entries, here_assigns, assign_entries, walked = level
    entries: list[_LevelEntry] = []
    for r, check, calls, callee, wants in call_entries:
        names = narrowed.get(id(r))
        if names is not None:
            calls = names if calls is None else calls & names
        entries.append((r, check, calls, callee, wants))
    return steps, here, {}, entries, here_assigns, assign_entries, walked


def _for_call(entries: list[_LevelEntry], callee: type, called: str, receiver: str = "") -> list[_Run]:
    """The bound `check`s of a call's rules that run for a call of a `callee`
    expression type whose called name (`called_name`) is `called` (`Rule.calls`,
    `Rule.callee`, `Rule.wants_call`), in order."""
    return [
        check
        for _r, check, calls, types, wants in entries
        if (calls is None or called in calls)
        and (types is None or callee in types)
        and (wants is None or wants(callee, called, receiver))
    ]


def _assign_level(rules: list[Rule], level: int) -> list[_AssignEntry]:
    """The assignment rules of `rules` that run at `level`, with their bound
    `Rule.wants_assign` and `Rule.wants_assigned_call` when they have their own, in order."""
    return [
        (
            r,
            r.check,
            r.wants_assign if type(r).wants_assign is not Rule.wants_assign else None,
            r.wants_assigned_call if type(r).wants_assigned_call is not Rule.wants_assigned_call else None,
        )
        for r in rules
        if not (r.graph_only if level == 0 else r.strict_only and level == 1)
    ]


def _for_assign(
    entries: list[_AssignEntry], target: type | None, value: type, callee: type | None = None
) -> list[_Run]:
    """The bound `check`s of the assignment rules that run for an assignment of this
    shape (`Rule.wants_assign`; for a call, `Rule.wants_assigned_call` of its callee's
    type), in order."""
    return [
        check
        for _r, check, wants, wants_call in entries
        if (wants is None or wants(target, value))
        and (callee is None or wants_call is None or wants_call(target, callee))
    ]


def called_name(node: ast.AST, ctx: Context) -> str:
    """The name `Rule.calls` is matched against: the last part of the callee's resolved
    dotted name (an import alias resolves to the real name), else of the expression.
    (The walk inlines this.)"""
    f = node.func  # type: ignore[attr-defined]
    ft = type(f)
    if ft is ast.Attribute:
        return f.attr  # resolution keeps the last attribute
    if ft is ast.Name:
        q = ctx.qualname(f)
        return q[q.rfind(".") + 1 :] if q else f.id
    return ""


#: One dispatch entry at a level (`_at_level`): the rule, its bound `check`, calls, callee,
#: its bound `wants_call` when it has its own.
_LevelEntry = tuple[
    Rule,
    Callable[..., Iterable[Diagnostic]],
    frozenset[str] | None,
    tuple[type[ast.AST], ...] | None,
    Callable[[type[ast.AST], str, str], bool] | None,
]
#: An assignment rule at a level (`_assign_level`): the rule, `check`, its `wants_assign`,
#: its `wants_assigned_call`.
_AssignEntry = tuple[
    Rule,
    Callable[..., Iterable[Diagnostic]],
    Callable[[type[ast.AST] | None, type[ast.AST]], bool] | None,
    Callable[[type[ast.AST] | None, type[ast.AST]], bool] | None,
]
#: What the walk calls: a rule's bound `check` (its `__self__` is the rule, named if it
#: crashes; no (rule, check) pair to unpack per call)
_Run = Callable[..., Iterable[Diagnostic]]
#: Per level (`_level`): the walk's table (`_steps`), node type -> the rules that run
#: there (types without any left out), (callee type, called name) -> the rules for such a call (`_for_call`, filled by
#: the walk as it meets the names), and the entries of the call rules to pick them from;
#: the same for assignments by (target type, value type, callee type) (`_for_assign`)
#: and the node types the walk visits at that level (`_walked`)
_Level = tuple[
    dict[type, list[_Run]],
    dict[type, list[_Run]],
    dict[tuple[type, str, str], list[_Run]],
    list[_LevelEntry],
    dict[tuple[type | None, type, type | None], list[_Run]],
    list[_AssignEntry],
    frozenset[type],
]
_Levels = tuple[_Level, ...]


def _compile_table(table: dict[type[ast.AST], list[Rule]]) -> tuple[_Levels, frozenset[type]]:
    """The walk's form of a dispatch table: per level, node type -> the rules as plain
    tuples (no attribute lookups per node in the walk; the module node is left out: module
    rules run once, before the walk), and the node types the walk visits (leaves, `arg`
    and `Attribute` only when a rule asks for them or for `Name`). Once per table
    (`_dispatch_table` hands the same table to every file with the same rules)."""
    hit = _compiled_tables.get(id(table))
    if hit is not None and hit[0] is table:
        return hit[1]
    levels: list[_Level] = []
    for level in (0, 1, 2):
        here = {
            t: [check for _r, check, _calls, _callee, _wants in entries]
            for t, rules in table.items()
            if t is not ast.Module and (entries := _at_level(rules, level))
        }
        levels.append(
            (
                _steps(here),
                here,
                {},
                _at_level(table.get(ast.Call, []), level),
                {},
                _assign_level(table.get(ast.Assign, []), level),
                _walked(here.keys()),
            )
        )
    compiled = (tuple(levels), _walked(table.keys()))
    if any(table is t for t in _dispatch_cache.values()):
        _compiled_tables[id(table)] = (table, compiled)  # kept alive by the cache: id stays
    return compiled


def _steps(here: dict[type, list[_Run]]) -> dict[type, list[_Run]]:
    """The walk's table of a level: `here`, with `_SPECIAL` for the types the walk handles
    on their own (functions, the scope-restoring tuple, and calls and assignments when
    rules at this level ask for them), so that a node costs one lookup before its rules."""
    steps = dict(here)
    special: list[type] = [*_FUNC_TYPES, tuple]
    special += [t for t in (ast.Call, ast.Assign) if t in here]
    for t in special:
        steps[t] = _SPECIAL
    return steps


def _walked(types: Iterable[type]) -> frozenset[type]:
    """The node types a walk visits when rules ask for `types`: every type but leaves, `arg`
    and `Attribute` no rule asks for (nor for `Name`). Per level, so that a leaf only rules
    of another level ask for (`x.y` for a STRICT-only rule, in LAX code) is not visited."""
    asked = set(types)
    skipped = (LEAVES | {ast.arg}) - asked
    if ast.Attribute not in asked and ast.Name not in asked:
        skipped |= {ast.Attribute}  # still visited when its value is not a name (`f(x).y`)
    return AST_TYPES - skipped


#: id(dispatch table) -> (the table, its compiled form), for tables `_dispatch_cache` holds
_compiled_tables: dict[
    int, tuple[dict[type[ast.AST], list[Rule]], tuple[_Levels, frozenset[type]]]
] = {}


_rules_loaded = False


def _ensure_rules_loaded() -> None:
    """Import every rule family once (they register rules and file-type checkers)."""
    global _rules_loaded
    if not _rules_loaded:
        load_all()
        _rules_loaded = True


def check_source(
    text: str,
    path: str,
    config: Config | None = None,
    workspace: WorkspaceIndex | None = None,
    *,
    checker: Checker | None = None,
) -> list[Diagnostic]:
    """Diagnostics for `text` as the content of `path` (routed by `LANGUAGES`), filtered and sorted.

    Self-sufficient: the rule families (and the file-type checkers they register) are
    imported on the first call, so a library caller needs no setup."""
    _ensure_rules_loaded()
    config = config or Config()
    if checker is None:
        checker = check_python
        for matcher, fn in LANGUAGES:
            try:
                hit = matcher(path)
            except Exception:
                hit = False
            if hit:
                checker = fn
                break
    try:
        diags = checker(text, path, config, workspace)
    except Exception as exc:  # a broken checker is reported, never raised
        log.error("checker crashed on %s: %s", path, traceback.format_exc())
        diags = [
            _internal(
                INTERNAL_ERROR,
                f"internal error: {type(exc).__name__}: {exc}",
                Span(1, 1, 1, 2),
                "warning",
            )
        ]
    try:
        return postprocess(diags, text, path, config)
    except Exception as exc:  # e.g. a malformed configuration value slipping through
        log.error("post-processing failed on %s: %s", path, traceback.format_exc())
        internal = _internal(
            INTERNAL_ERROR,
            f"internal error: {type(exc).__name__}: {exc}",
            Span(1, 1, 1, 2),
            "warning",
        )
        return [internal, *sorted(diags, key=Diagnostic.sort_key)]


def postprocess(diags: list[Diagnostic], text: str, path: str, config: Config) -> list[Diagnostic]:
    """Apply select/ignore, per-file ignores and `# noqa`, then sort by position."""
    from npu_lsp.registry import matches

    ignored = config.ignored_for(path)
    reported: dict[str, bool] = {}  # per code (a dense file has thousands of one code)
    kept = []
    for d in diags:
        code = d.code
        keep = reported.get(code)
        if keep is None:
            keep = reported[code] = code.startswith("AL") or (
                config.enabled(code, _group(code)) and not matches(code, ignored)
            )
        if keep:
            kept.append(d)
    kept = filter_suppressed(kept, text)
    kept.sort(key=Diagnostic.sort_key)
    return kept


def _group(code: str) -> str:
    cls = RULES.get(code)
    return cls.group if cls else "stable"


def check_path(
    path: str | os.PathLike[str],
    config: Config | None = None,
    workspace: WorkspaceIndex | None = None,
) -> list[Diagnostic]:
    """Read `path` and check it; binary, non-UTF-8 and unreadable files get one AL002 diagnostic."""
    p = str(path)
    try:
        data = read_checkable(p, (config or Config()).max_file_size)
    except NotCheckable as exc:
        return [_internal(UNREADABLE_FILE, f"file not checked: {exc.reason}", Span(1, 1, 1, 2))]
    except OSError as exc:
        return [unreadable(exc)]
    text = decode_source(data)
    if isinstance(text, Diagnostic):
        return [text]
    return check_source(text, p, config, workspace)


def unreadable(exc: OSError) -> Diagnostic:
    """The AL002 diagnostic of a file that cannot be read."""
    return _internal(UNREADABLE_FILE, f"cannot read file: {exc.strerror or exc}", Span(1, 1, 1, 2))


def decode_source(data: bytes) -> str | Diagnostic:
    """The text of a file's bytes, or the AL002 diagnostic saying why it is not checked."""
    if b"\x00" in data[:8192]:
        return _internal(
            UNREADABLE_FILE, "binary file (contains NUL bytes); not checked", Span(1, 1, 1, 2)
        )
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        return _internal(
            UNREADABLE_FILE,
            f"file is not valid UTF-8 (byte 0x{data[exc.start]:02x} at offset {exc.start}); not checked",
            Span(line, 1, line, 2),
        )


def parse_python(text: str, path: str) -> ast.Module | None:
    """The tree of `text`, or None when it does not parse (`check_source` reports why)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return ast.parse(text, filename=path)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def is_python(path: str) -> bool:
    """Does `check_source` route `path` to the Python checker?"""
    _ensure_rules_loaded()
    for matcher, _fn in LANGUAGES:
        try:
            if matcher(path):
                return False
        except Exception:
            continue
    return True


def check_parsed(
    text: str,
    path: str,
    config: Config,
    workspace: WorkspaceIndex | None,
    tree: ast.Module,
    info: ModuleInfo,
    key: str | None = None,
) -> list[Diagnostic]:
    """`check_source` for a Python file the caller has parsed and summarised already
    (`parse_python`, `scope.summarize`): the same diagnostics, without a second parse.
    `key`: the index's key of the file, when `workspace` was built with its summary (the
    project-wide edges then apply to it)."""

    def checker(
        text: str, path: str, config: Config, workspace: WorkspaceIndex | None
    ) -> list[Diagnostic]:
        paused = gc.isenabled()
        gc.disable()
        try:
            return _check_tree(text, path, config, workspace, tree, info, key)
        finally:
            if paused:
                gc.enable()

    return check_source(text, path, config, workspace, checker=checker)


def iter_python_files(
    paths: Iterable[str | os.PathLike[str]],
    exclude: Iterable[str] = (),
    suffixes: tuple[str, ...] = (".py", ".pyi"),
    on_error: Callable[[OSError], None] | None = None,
    on_skip: Callable[[Path, str], None] | None = None,
    limit: int = 0,
    is_target: Callable[[Path], bool] | None = None,
) -> Iterable[Path]:
    """Files named directly, plus files with `suffixes` under folders (skipping hidden dirs
    and venvs); regular files only (see `discovery.discover`). A folder that cannot be listed
    goes to `on_error`, a special (or, with `limit` > 0, oversize) file inside a folder to
    `on_skip` (default: both silently skipped)."""
    return discover(
        paths, exclude, suffixes, is_target, on_error=on_error, on_skip=on_skip, limit=limit
    )
