"""The project-wide resolution of `check`, kept per module so that an edit redoes only
what depends on it.

Which functions of a project are compiled (a Cell's `construct`, a jitted function, and
every helper they call, transitively, across modules) is a walk over a call graph. The
costly part is finding a function's callees: reading its calls and resolving their names
through imports, base classes and sub-cell attributes. The walk itself is cheap. So this
module splits the two:

- *roots* per module (its constructs and jitted functions, with kind and level) and
  *edges* per (function, owning class) (its resolved callees with the call positions) are
  computed by `ScopeResolver` and kept as compact tuples, each under the import-closure
  digest it was computed in (`workspace._closures`: what resolving a name of a module
  reads lies in the modules it reaches through imports; an edge also depends on its
  owning class's module);
- the walk runs over those tuples, in the order and with the first-come-wins rules of
  `ScopeResolver._resolve`, so the result is exactly `WorkspaceIndex.graph_scopes` in
  portable form (no tree nodes).

After an edit, roots and edges whose closure digest is unchanged are reused; only those of
the edited module and of the modules that import it (transitively) are computed again,
from their summaries.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from npu_lsp.engine import WorkspaceIndex
from npu_lsp.scope import (
    SITED_KINDS,
    CallSite,
    Edge,
    FnKey,
    FuncDef,
    GraphScope,
    Level,
    ModuleInfo,
    Root,
    ScopeResolver,
    call_position,
    callee_treatment,
)

#: A graph scope as the cache keeps it: (qualname, kind, level, call sites as tuples).
Packed = tuple[str, str, str, list[tuple[str, int, int, int, int, str]]]


@dataclass
class Resolution:
    """Roots per module and edges per (function, owner), each with the closure digest it
    was computed under; pickled into the cache between runs."""

    roots: dict[str, tuple[str, list[Root]]] = field(default_factory=dict)
    #: (function, owner) -> (key, file of the function, its calls)
    edges: dict[tuple[FnKey, str | None], tuple[str, str, list[Edge]]] = field(default_factory=dict)
    #: the scopes the walk over them gave (`pack`)
    packed: list[Packed] | None = None
    #: what this run computed (not reused): roots of modules, edges; whether it walked
    computed_roots: int = 0
    computed_edges: int = 0
    walked: bool = False
    #: (function, owner) -> (the function's node, the call nodes of its edges, in order)
    #: for the edges this run computed: a per-file resolver of the same summary follows
    #: them without finding those calls in its tree again (`EdgeTable.nodes`); not pickled
    nodes: dict[tuple[FnKey, str | None], tuple[FuncDef, list[ast.Call]]] = field(
        default_factory=dict, repr=False, compare=False
    )

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["nodes"] = {}  # tree nodes: this run's only
        return state


def _fn_key(info: ModuleInfo, fn: FuncDef) -> FnKey:
    return (info.module, fn.lineno, fn.col_offset)


class _Finder:
    """Functions of a module's summary by position (for edges computed again whose
    function was reached through a reused edge)."""

    def __init__(self, index: WorkspaceIndex) -> None:
        self.index = index
        self.memo: dict[str, dict[tuple[int, int], FuncDef]] = {}

    def find(self, key: FnKey) -> tuple[ModuleInfo, FuncDef] | None:
        info = self.index.module(key[0])
        if info is None:
            return None
        table = self.memo.get(key[0])
        if table is None:
            table = self.memo[key[0]] = {}
            tops: list[Any] = [*info.functions.values()]
            for cls in info.classes.values():
                tops.append(cls.node)
                tops.extend(cls.methods.values())
            for top in tops:
                for node in ast.walk(top):
                    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                        table.setdefault((node.lineno, node.col_offset), node)
        fn = table.get((key[1], key[2]))
        return None if fn is None else (info, fn)


def resolve(
    index: WorkspaceIndex,
    order: Sequence[str],
    closures: Mapping[str, str],
    previous: Resolution | None = None,
    configured: Level | None = None,
) -> tuple[dict[str, GraphScope], Resolution]:
    """The portable project-wide resolution of the modules `order` (index order) and the
    roots and edges it used; `closures` maps each module to its closure digest; what
    `previous` holds under the same digests is reused. When every root and edge computed
    again is what `previous` held, the walk's inputs are unchanged, and so is its result:
    `previous`'s is returned (`Resolution.walked` False)."""
    packed, resolution = resolve_packed(index, order, closures, previous, configured)
    return unpack(packed), resolution


def resolve_packed(
    index: WorkspaceIndex,
    order: Sequence[str],
    closures: Mapping[str, str],
    previous: Resolution | None = None,
    configured: Level | None = None,
) -> tuple[list[Packed], Resolution]:
    """`resolve`, with the scopes as `pack` gives them (for `Scopes`)."""
    run = _Run(index, closures, configured, previous)
    if previous is not None and previous.packed is not None:
        same = run.refresh(order)
        if same is not None:
            return previous.packed, same
    packed = run.walk(order)
    run.new.packed = packed
    run.new.walked = True
    return packed, run.new


class _Run:
    """One resolution: the roots and edges it reuses or computes, and the walk."""

    def __init__(
        self,
        index: WorkspaceIndex,
        closures: Mapping[str, str],
        configured: Level | None,
        previous: Resolution | None,
    ) -> None:
        self.index = index
        self.closures = closures
        self.resolver = ScopeResolver.for_workspace(index, configured, resolve=False)
        self.finder = _Finder(index)
        self.old = previous if previous is not None else Resolution()
        self.new = Resolution()
        self.objects: dict[FnKey, tuple[ModuleInfo, FuncDef]] = {}
        self.pairs: dict[tuple[str, str], str] = {}  # one string per pair: pickled once

    def edge_key(self, fk: FnKey, owner: str | None) -> str:
        own = self.closures.get(fk[0], "")
        if owner is None:
            return own
        pair = (own, self.closures.get(owner.rpartition(".")[0], ""))
        hit = self.pairs.get(pair)
        if hit is None:
            hit = self.pairs[pair] = f"{pair[0]}|{pair[1]}"
        return hit

    def roots(self, module: str) -> list[Root]:
        self.new.computed_roots += 1
        info = self.index.module(module)
        out: list[Root] = []
        if info is not None:
            for r_info, qual, fn, kind, level, owner in self.resolver._roots([info]):
                fk = _fn_key(r_info, fn)
                self.objects[fk] = (r_info, fn)
                out.append((qual, fk, kind, level, owner))
        return out

    def edges(self, fk: FnKey, owner: str | None, key: str) -> tuple[str, str, list[Edge]]:
        self.new.computed_edges += 1
        return _edges(self.resolver, self.finder, self.objects, fk, owner, key, self.new.nodes)

    def refresh(self, order: Sequence[str]) -> Resolution | None:
        """`previous` under the current digests, its stale roots and edges computed again,
        if they all came out as they were (else None: the walk must run)."""
        old, new = self.old, self.new
        if list(old.roots) != list(order):
            return None
        for module in order:
            key, roots = old.roots[module]
            current = self.closures.get(module, "")
            if key != current and self.roots(module) != roots:
                return None
            new.roots[module] = (current, roots)
        for ekey, entry in old.edges.items():
            current = self.edge_key(*ekey)
            if entry[0] != current:
                again = self.edges(ekey[0], ekey[1], current)
                if again[1:] != entry[1:]:
                    return None
                entry = again
            new.edges[ekey] = entry
        new.packed = old.packed
        return new

    def walk(self, order: Sequence[str]) -> list[Packed]:
        """`ScopeResolver._resolve` over every module (same order, same rules), on the
        roots and edges; the scopes as `pack` gives them."""
        old, new, closures = self.old, self.new, self.closures
        # per function: [qualname, kind, level, call sites, their keys]
        scopes: dict[FnKey, list[Any]] = {}
        work: list[tuple[FnKey, Level, str | None, str]] = []
        for module in order:
            key = closures.get(module, "")
            hit = old.roots.get(module)
            roots = hit[1] if hit is not None and hit[0] == key else self.roots(module)
            new.roots[module] = (key, roots)
            for qual, fk, kind, level, owner in roots:
                known = scopes.get(fk)
                if known is None:
                    scopes[fk] = [qual, kind, level, [], set()]
                elif level == "strict":
                    known[2] = "strict"  # the strictest level that reaches it wins
                work.append((fk, level, owner, qual))
        # per owning class too, as `_resolve` does: a base's method reached from a
        # subclass's instance resolves `self.<method>` through that subclass
        seen: set[tuple[FnKey, Level, str | None]] = set()
        while work:
            fk, level, owner, qual = work.pop()
            if (fk, level, owner) in seen:
                continue
            seen.add((fk, level, owner))
            ekey = (fk, owner)
            entry = new.edges.get(ekey)
            if entry is None:
                key = self.edge_key(fk, owner)
                entry = old.edges.get(ekey)
                if entry is None or entry[0] != key:
                    entry = self.edges(fk, owner, key)
                new.edges[ekey] = entry
            _key, path, calls = entry
            for line, col, end_line, end_col, t_fk, t_qual, t_owner, how in calls:
                if how == "constexpr":
                    known = scopes.get(t_fk)
                    if known is None:
                        scopes[t_fk] = [t_qual, "constexpr", level, [], set()]
                    elif level == "strict":
                        known[2] = "strict"
                    continue
                known = scopes.get(t_fk)
                if known is None:
                    known = scopes[t_fk] = [t_qual, "helper", level, [], set()]
                elif level == "strict":
                    known[2] = "strict"
                if known[1] in SITED_KINDS and how != "mapped":
                    skey = (path, line, col, qual)
                    if skey not in known[4]:
                        known[4].add(skey)
                        known[3].append((path, line, col, end_line, end_col, qual))
                work.append((t_fk, level, t_owner, t_qual))
        by_name = {q: (q, kind, level, sites) for q, kind, level, sites, _keys in scopes.values()}
        return list(by_name.values())


def _edges(
    resolver: ScopeResolver,
    finder: _Finder,
    objects: dict[FnKey, tuple[ModuleInfo, FuncDef]],
    fk: FnKey,
    owner: str | None,
    key: str,
    nodes: dict[tuple[FnKey, str | None], tuple[FuncDef, list[ast.Call]]] | None = None,
) -> tuple[str, str, list[Edge]]:
    """The resolved callees of the function `fk` (as `ScopeResolver._resolve` follows them),
    with the call positions as its call sites record them; `nodes` gets the function and
    the call nodes of those edges."""
    found = objects.get(fk) or finder.find(fk)
    if found is None:  # the module or function is gone: nothing to follow
        return key, "", []
    info, fn = found
    out: list[Edge] = []
    calls: list[ast.Call] = []
    for call, (t_info, t_qual, t_fn, t_owner) in resolver._callees(info, fn, owner):
        how: str = callee_treatment(t_fn, t_info)
        if how == "skip":
            continue
        if how == "follow" and (id(call), id(t_fn)) in resolver.mapped:
            how = "mapped"
        t_fk = _fn_key(t_info, t_fn)
        objects.setdefault(t_fk, (t_info, t_fn))
        out.append((*call_position(call, info), t_fk, t_qual, t_owner, how))
        calls.append(call)
    if nodes is not None:
        nodes[(fk, owner)] = (fn, calls)
    return key, info.path, out


def portable(scopes: Mapping[str, GraphScope]) -> dict[str, GraphScope]:
    """`scopes` (as `WorkspaceIndex.graph_scopes` gives them) without tree nodes: what
    `resolve` returns for the same summaries."""
    out: dict[str, GraphScope] = {}
    for q, s in scopes.items():
        sites = [
            CallSite(c.path, c.line, c.column, c.end_line, c.end_column, c.caller)
            for c in s.call_sites
        ]
        out[q] = GraphScope(cast(Any, None), q, s.kind, s.level, sites)
    return out


def pack(scopes: Mapping[str, GraphScope]) -> list[Packed]:
    """Portable `scopes` as plain tuples (small and quick to pickle)."""
    return [
        (
            q,
            s.kind,
            s.level,
            [(c.path, c.line, c.column, c.end_line, c.end_column, c.caller) for c in s.call_sites],
        )
        for q, s in scopes.items()
    ]


def unpack(packed: list[Packed]) -> dict[str, GraphScope]:
    """What `pack` was given."""
    return {
        q: GraphScope(
            cast(Any, None), q, cast(Any, kind), cast(Level, level), [CallSite(*c) for c in sites]
        )
        for q, kind, level, sites in packed
    }


class Scopes(Mapping[str, GraphScope]):
    """What `unpack` gives, made scope by scope as they are looked up: an edit's run
    checks a file or a few, which look up their own functions' scopes, not the tens of
    thousands of a large project. The same qualname gives the same object every time, and
    `attach` gives each (made now or later) the calls other modules make into it."""

    def __init__(self, packed: list[Packed]) -> None:
        self._packed = {p[0]: p for p in packed}  # (the last of a qualname wins, as in `unpack`)
        self._made: dict[str, GraphScope] = {}
        self._incoming: dict[str, tuple[Any, ...]] = {}
        self._locals: list[str] | None = None

    def __getitem__(self, qualname: str) -> GraphScope:
        made = self._made.get(qualname)
        if made is None:
            q, kind, level, sites = self._packed[qualname]
            made = GraphScope(
                cast(Any, None),
                q,
                cast(Any, kind),
                cast(Level, level),
                [CallSite(*c) for c in sites],
            )
            made.incoming = self._incoming.get(qualname, ())
            self._made[qualname] = made
        return made

    def __contains__(self, qualname: object) -> bool:
        return qualname in self._packed

    def get(self, qualname: str, default: Any = None) -> Any:  # (Mapping's raises KeyError inside)
        return self[qualname] if qualname in self._packed else default

    def __iter__(self) -> Iterator[str]:
        return iter(self._packed)

    def __len__(self) -> int:
        return len(self._packed)

    def packed(self, qualname: str) -> Packed | None:
        """The scope of `qualname` as the cache keeps it (nothing made)."""
        return self._packed.get(qualname)

    def closures(self) -> list[str]:
        """The qualnames of nested functions (`<locals>` in them), in order."""
        if self._locals is None:
            self._locals = [q for q in self._packed if "<locals>" in q]
        return self._locals

    def attach(self, incoming: dict[str, tuple[Any, ...]]) -> None:
        """`GraphScope.incoming` of each scope (`xcalls.attach`'s result, by qualname)."""
        self._incoming = incoming
        for q, made in self._made.items():
            made.incoming = incoming.get(q, ())
