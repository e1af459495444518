"""Where device strings and backend names come from, for the migration rules.

A `"cuda"` in a file is a device only where its value reaches a device position (the first
argument of `torch.device`, `.to(...)`, `device=`, `map_location=`, `set_device`...), and a
`"nccl"` is a backend only where it reaches `backend=`. This module follows values backwards
from those positions, once per file:

- through names (every assignment of the name in its function, then the enclosing ones and
  the module; a parameter's default and the arguments of calls to its function in the file,
  a class's calls for `__init__`; a loop name takes the elements of the literal it iterates),
- through attributes by name (`self.device = ...`, class-level fields and `field(default=...)`,
  argparse options' `default=` and `parser.set_defaults(...)`, so `args.dist_backend` reaches
  `add_argument("--dist-backend", default="nccl")`) and dict keys (`cfg["device"]`,
  `cfg.get("device", ...)` reach `{"device": ...}` and `dict(device=...)`),
- through expressions that build the string: f-strings (`f"cuda:{rank}"`), `+`, `%`,
  `.format`, `str(...)`, `.lower()`, conditional expressions, `or`, `os.environ.get(k, d)`,
  and the return values of functions of the file.

It also finds comparisons of such values against literals (`args.device == "cuda"`,
`x.device.type == "cuda"`, `dist.get_backend() == "nccl"`), whose literals have to move
with them, and argparse `choices=` of an option that carries one.

The result (`Flow.sources`) is the set of literals to rewrite, each with what reached it
and, when a name holding it is also read for something else (a path built from it, an
argument to a call we cannot see into), that read (`Source.escapes`: the fix is unsafe).
Rules report them and fix them as one group per kind, so a file is never left half moved.
What each name, attribute and key is bound to comes from `bindings.py` (one visit).
`resolve`/`qualnames` extend the engine's dotted names with imports made inside functions
and local aliases (`extension = CUDAExtension`); every migration rule resolves through them.
"""

from __future__ import annotations

import ast
import bisect
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from npu_lsp.engine import Context
from npu_lsp.rules.migration.bindings import Bindings, Scope, const_str, merge, remerge
from npu_lsp.rules.migration.dispatch import npu_aware

Kind = Literal["device", "backend"]

#: A device string, or the head of one that is completed later ("cuda:" + str(rank),
#: "cuda:{}".format(rank), "cuda:%d" % rank).
DEVICE_HEAD = re.compile(r"cuda(?::(?:\d*|\{[^{}]*\}|%[ds]))?")
_BACKEND = re.compile(r"nccl", re.IGNORECASE)
_NPU_HEAD = re.compile(r"npu(?::\d*)?")
_HEADS: dict[Kind, re.Pattern[str]] = {"device": DEVICE_HEAD, "backend": _BACKEND}

#: Keyword arguments that take a device anywhere (tensor factories, `.to`, `torch.load`,
#: `DataLoader(pin_memory_device=)`, DDP's `output_device`, Hugging Face's `device_map`).
DEVICE_KEYWORDS = frozenset(
    {"device", "device_type", "map_location", "pin_memory_device", "output_device", "device_map"}
)
#: Keyword arguments that take a collective backend: torch.distributed's `backend=`,
#: DeepSpeed's `init_distributed(dist_backend=)`, Hugging Face's `TrainingArguments(ddp_backend=)`.
BACKEND_KEYWORDS = frozenset({"backend", "dist_backend", "ddp_backend"})
#: Callees whose first positional argument is a device (resolved names; `.to` is any method).
_DEVICE_FIRST_ARG = frozenset(
    {
        "torch.device",
        "torch.autocast",
        "torch.amp.autocast",
        "torch.amp.GradScaler",
        "torch.cuda.set_device",
        "torch.npu.set_device",
        "torch.set_default_device",
        "torch.Generator",
        "torch.get_device_module",
        "torch.cuda.device",
        "torch.npu.device",
    }
)
#: Methods whose first positional argument is a device, on any object.
_DEVICE_METHODS = frozenset({"to", "to_empty"})
_BACKEND_FIRST_ARG = frozenset(
    {"torch.distributed.init_process_group", "torch.distributed.new_group"}
)
_GET_BACKEND = "torch.distributed.get_backend"
#: `getattr(torch, device_type)`: the device's module (`torch.cuda`, `torch.npu` once moved)
_GETATTR = "builtins.getattr"
#: The last names of the callees above (`torch.load` takes a device second)
_SINK_NAMES = frozenset(
    q.rsplit(".", 1)[-1] for q in (*_DEVICE_FIRST_ARG, *_BACKEND_FIRST_ARG, "torch.load", _GETATTR)
)
#: keyword arguments `_sink_args` looks at
_SINK_KEYWORDS = DEVICE_KEYWORDS | BACKEND_KEYWORDS | {"type"}
_ENV_GETTERS = frozenset({"os.environ.get", "os.getenv"})
_FIELD = frozenset({"dataclasses.field"})
_STR_METHODS = frozenset({"lower", "strip", "format"})
_MAX_DEPTH = 40
_NOTHING: set[int] = set()  # shared, never changed
#: str methods that take a device string apart (`"cuda:"` given to one is a device prefix)
_PARSING = frozenset(
    {"replace", "startswith", "removeprefix", "split", "partition", "lstrip", "find", "index"}
)
_FLOW_KEY = ("migration", "flow")
#: unittest's comparisons of two values (`assertEqual(a, b)` is `a == b`, `assertIn(a, b)`
#: is `a in b`)
_ASSERT_MEMBERSHIP = frozenset({"assertIn", "assertNotIn"})
_ASSERT_COMPARE = frozenset(
    {"assertEqual", "assertEquals", "assertNotEqual", "assertNotEquals", "assertIs", "assertIsNot"}
    | _ASSERT_MEMBERSHIP
)
#: Calls whose arguments are only shown to people (a rename changes text, not behaviour).
_MESSAGE_CALLS = frozenset(
    {
        "print",
        "info",
        "debug",
        "warning",
        "warn",
        "error",
        "exception",
        "critical",
        "log",
        "write",
        "set_description",
        "set_postfix",
        "add_text",
    }
)

Carrier = tuple[str, ...]
#: a call `Flow._collect` acts on: (call, its device/backend positions, is it `startswith`,
#: does it parse a device string)
_CallPlan = tuple[ast.Call, list[tuple["Kind", ast.expr]], bool, bool]
_PLAN_KEY = ("migration", "call plan")


@dataclass
class Source:
    """A literal that holds a device string or a backend name, found from a position using it."""

    node: ast.expr  # ast.Constant, or ast.JoinedStr whose first part holds the text
    text: str  # the literal's text (for a JoinedStr, its first constant part)
    kind: Kind
    #: the consuming position (a call, or a comparison) and how the value got there
    sink: ast.AST
    direct: bool  # written right in the position (no name, attribute or key on the way)
    carriers: set[Carrier] = field(default_factory=set)
    #: "use" (reaches a device or backend position), "compare" (compared with such a
    #: value) or "choice" (among an argparse option's `choices=`)
    role: str = "use"
    #: a read of a name or attribute holding this literal that is neither a device use nor
    #: harmless (a file name built from it, an argument to a call we cannot see into):
    #: rewriting the literal changes that use too, so the fix is unsafe
    escapes: ast.expr | None = None
    #: for role "elsewhere": the module of the project using the value as a device
    elsewhere: str = ""


#: While `sharing_bindings` is active: id of a tree -> (the resolver's summary, its bindings)
_SHARED: dict[int, tuple[object, Bindings]] | None = None
#: While `sharing_bindings` is active with chunks: (the tree, its top-level statements in
#: chunks, the document's per-chunk bindings kept between runs)
_CHUNKS: tuple[ast.Module, list[list[ast.stmt]], ChunkBindings] | None = None


class ChunkBindings:
    """The bindings of each chunk of a document's top-level statements (a list the document
    keeps while the chunk's trees are unchanged), kept between runs: an edit visits only the
    chunks it replaced, and `bindings.merge` joins the parts into exactly the bindings of
    one visit of the whole tree (the value following stays module-wide)."""

    def __init__(self) -> None:
        #: id of a chunk's statement list -> (that list, the tree, its bindings)
        self._parts: dict[int, tuple[list[ast.stmt], ast.Module, Bindings]] = {}
        self.visited = 0  # chunks visited by the last `bindings` (for tests and benchmarks)
        #: what the module-wide work keeps between runs (`Bindings.document`)
        self.document: dict[Any, Any] = {}
        #: the last join of the parts (the next is made from it, `bindings.remerge`)
        self._merged: Bindings | None = None

    def bindings(self, ctx: Context, chunks: list[list[ast.stmt]]) -> Bindings:
        old = self._parts
        parts: dict[int, tuple[list[ast.stmt], ast.Module, Bindings]] = {}
        tree = ctx.tree
        self.visited = 0
        for stmts in chunks:
            hit = old.get(id(stmts))
            if (
                hit is None
                or hit[0] is not stmts
                or hit[1] is not tree
                or any(ctx.qualname(e) != q for e, q in hit[2].asked)
            ):
                hit = (stmts, tree, Bindings(ctx).run(tree, stmts))
                self.visited += 1
            parts[id(stmts)] = hit  # the list kept alive: its id stays unique
        self._parts = parts
        joined = [part for _s, _t, part in parts.values()]
        last = self._merged
        merged = None
        if last is not None and last.ctx.tree is tree:
            merged = remerge(ctx, last, joined)
        if merged is None:
            merged = merge(ctx, joined)
        merged.document = self.document
        self._merged = merged
        return merged


@contextmanager
def sharing_bindings(
    tree: ast.Module | None = None,
    chunks: list[list[ast.stmt]] | None = None,
    cache: ChunkBindings | None = None,
) -> Iterator[None]:
    """Within the block, flows of the same tree share one `Bindings` visit.

    The language server follows the values of a file twice per edit over the same tree: for
    the file's summary (`project.module_facts`, without the project) and for the rules
    (with it). The visit depends only on the tree and on how names resolve (the summary's
    imports and definitions), so the second flow reuses the first visit when both resolve
    through the same summary tables. With `tree`, `chunks` (its top-level statements, in
    runs covering `tree.body` in order) and `cache`, that visit reuses the bindings of the
    chunks left as they were since the last run (`ChunkBindings`).
    """
    global _SHARED, _CHUNKS
    outer, outer_chunks = _SHARED, _CHUNKS
    _SHARED = {} if outer is None else outer
    if tree is not None and chunks is not None and cache is not None:
        _CHUNKS = (tree, chunks, cache)
    try:
        yield
    finally:
        _CHUNKS = outer_chunks
        if outer is None:
            _SHARED = None


def resolution_value(ctx: Context) -> tuple[object, ...]:
    """What `resolve` answers depend on beyond the expression and its own function: the
    module's name, imports, and which names its classes and functions define (by value).
    One object per run, and the last run's while equal (kept by a document's bindings,
    `Bindings.document`): what chunks keep is checked against it by identity first, not
    by comparing the names of the module's definitions once per chunk."""
    hit: tuple[object, ...] | None = ctx.cache.get(_RESOLUTION_KEY)
    if hit is not None:
        return hit
    info = ctx.scopes.info
    made = (info.module, info.imports, frozenset(info.classes), frozenset(info.functions))
    flow: Flow | None = ctx.cache.get(_FLOW_KEY)
    document = flow.b.document if flow is not None else None
    if document is not None:
        last = document.get(_RESOLUTION_KEY)
        if last is not None and last == made:
            made = last
        document[_RESOLUTION_KEY] = made
    ctx.cache[_RESOLUTION_KEY] = made
    return made


_RESOLUTION_KEY = ("migration", "resolution value")


def _resolution(ctx: Context) -> tuple[object, ...] | None:
    """What `Context.qualname` resolves through (compared by identity), or None."""
    info = getattr(ctx.scopes, "info", None)
    if info is None:
        return None
    return (info.module, info.imports, info.classes, info.functions)


def bindings_of(ctx: Context) -> Bindings:
    """The bindings of `ctx.tree`: shared while `sharing_bindings` is active, else new."""
    shared = _SHARED
    key = _resolution(ctx) if shared is not None else None
    if shared is None or key is None:
        return Bindings(ctx).run(ctx.tree)
    hit = shared.get(id(ctx.tree))
    if hit is not None:
        old = hit[0]
        assert isinstance(old, tuple)
        if old[0] == key[0] and all(a is b for a, b in zip(old[1:], key[1:], strict=True)):
            return hit[1]
    chunked = _CHUNKS
    if chunked is not None and chunked[0] is ctx.tree:
        made = chunked[2].bindings(ctx, chunked[1])
    else:
        made = Bindings(ctx).run(ctx.tree)
    shared[id(ctx.tree)] = (key, made)  # the entry keeps the tree alive: its id stays unique
    return made


class Flow:
    """Device and backend literals of one module, found from the positions that use them."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.b = bindings_of(ctx)
        ctx.cache[_FLOW_KEY] = self  # `resolve` asks for the bindings while we collect
        self.sources: dict[Kind, dict[int, Source]] = {"device": {}, "backend": {}}
        self.carriers: dict[Kind, set[Carrier]] = {"device": set(), "backend": set()}
        self._device_objects: set[Carrier] = set()
        #: every expression passed through while following values back from their uses
        self.visited: set[int] = set()
        self._memo: dict[tuple[Kind, int, bool], set[int]] = {}
        #: parameters compared with a device or backend name (`device_type == "cuda"`) that
        #: nothing in this module shows to be one: (id of the function, name) -> kind
        self.param_compares: dict[tuple[int, str], Kind] = {}
        from npu_lsp.rules.migration.project import links

        #: the project's facts (other modules' device parameters and values passed in)
        self.links = links(getattr(ctx.scopes, "workspace", None))
        #: names bound by imports, anywhere in the module (aliases a callee may hide behind)
        self._imported = set(ctx.scopes.info.imports)
        self._imported.update(n for local in self.b.local_imports.values() for n in local)
        from npu_lsp.astutil import imports_any
        from npu_lsp.registry import FAMILY_IMPORTS

        #: does the module import torch? A module that does not (a yacs or dataclass config
        #: module) holds device values only where another module of the project reads them
        #: as one (`_C.MODEL.DEVICE = "cuda"` for `model.to(cfg.MODEL.DEVICE)`): its own
        #: calls and comparisons are no device positions
        self.torch_module = imports_any(ctx.tree, ctx.text, FAMILY_IMPORTS["migration"])
        #: while a chunked run records what each chunk's work touches (`_PartRecord`)
        self._rec: _PartRecord | None = None
        self._aliases: frozenset[str] | None = None  # `_sink_aliases`, made when first asked
        self.kept = 0  # chunks whose findings a chunked run reused (tests, benchmarks)
        if not self.b.parts or not self._run_by_parts():
            self._collect()
            self._find_escapes()

    @classmethod
    def of(cls, ctx: Context) -> Flow:
        """The module's flow, computed once per run and shared by the rules."""
        flow: Flow | None = ctx.cache.get(_FLOW_KEY)
        return flow if flow is not None else cls(ctx)

    # ---- a chunked run (the language server's incremental analysis)
    def _run_by_parts(self) -> bool:
        """With bindings joined from chunks (`ChunkBindings`): follow the positions of the
        chunks that changed only, reusing what each other chunk found when its work is
        isolated, i.e. touches no node, table entry or carrier of another chunk (a chunk's
        record says what it read and wrote). Whole-module results are made of independent
        parts then, so reused and new parts together equal one run over the whole module;
        when a reused chunk turns out not to be isolated (an edit made something it reads,
        or reads something it made), every chunk is followed again. False: not chunked
        (the project's facts or NPU dispatch code make the work module-wide)."""
        if not self.torch_module or self.links is not None:
            return False
        from npu_lsp.rules.migration.dispatch import regions

        if regions(self.ctx):
            return False
        parts = self.b.parts
        stamp = (resolution_value(self.ctx), id(self.ctx.tree))
        spans = [_extent(p.stmts) for p in parts]
        self._los = [lo for lo, _hi in spans]
        old: list[_PartRecord | None] = [p.memo.get(_REC_KEY) for p in parts]
        same: dict[int, bool] = {}  # per stamp object: equal to this run's
        keep: list[bool] = []
        for rec in old:
            ok = rec is not None and rec.isolated
            if ok:
                assert rec is not None
                known = same.get(id(rec.stamp))
                if known is None:
                    known = same[id(rec.stamp)] = rec.stamp == stamp
                ok = known
            keep.append(ok)
        if any(keep):
            if self._by_parts(parts, spans, old, keep, stamp):
                self.kept = sum(keep)
                return True
            self._reset()
        self._by_parts(parts, spans, old, [False] * len(parts), stamp)
        return True

    def _reset(self) -> None:
        self.sources = {"device": {}, "backend": {}}
        self.carriers = {"device": set(), "backend": set()}
        self._device_objects = set()
        self.visited = set()
        self._memo = {}
        self.param_compares = {}

    def _by_parts(
        self,
        parts: list[Bindings],
        spans: list[tuple[int, int]],
        old: list[_PartRecord | None],
        keep: list[bool],
        stamp: tuple[object, ...],
    ) -> bool:
        """Follow the chunks not kept, then check every kept chunk is still isolated
        (False: not, and nothing was kept)."""
        recs: list[_PartRecord] = []
        units: list[tuple[_PartRecord, Bindings]] = []
        for i, part in enumerate(parts):
            lo, hi = spans[i]
            kept = old[i]
            if keep[i] and kept is not None:
                kept.lo, kept.hi = lo, hi
                recs.append(kept)
                continue
            rec = _PartRecord(part, stamp, lo, hi)
            rec.reads |= self._escape_reads(part)
            recs.append(rec)
            units.append((rec, part))
        self._recs = recs
        self._active = {id(rec) for rec, _part in units}
        self._collect(units)
        self._find_escapes(units)
        self._rec = None
        for kind, table in self.sources.items():
            for source in table.values():
                rec = recs[self._part_index(source.node.lineno)]
                if id(rec) not in self._active:
                    return False  # a kept chunk's literal, reached from a changed one
                rec.sources.append((kind, source))
        if len(recs) > len(parts):
            return False  # a stray record: a kept chunk was reached
        coupled = self._coupling(recs, keep, stamp)
        if coupled is None:
            return False
        for i, rec in enumerate(recs):
            rec.isolated = not coupled[i]
            if not keep[i]:
                parts[i].memo[_REC_KEY] = rec
        self._join_records(recs, keep, stamp)
        return True

    def _join_records(self, recs: list[_PartRecord], keep: list[bool], stamp: object) -> None:
        """The module's results: every record's (the new ones' are this run's). The
        document keeps the last run's join and changes it by the records gone and new."""
        document = self.b.document
        joined: _Joined | None = document.get(_JOINED_KEY) if document is not None else None
        kept = {id(rec) for rec, k in zip(recs, keep, strict=True) if k}
        if joined is None or joined.stamp != stamp or not kept <= joined.recs.keys():
            joined = _Joined(stamp)
            todo = recs
        else:
            for rid in [rid for rid in joined.recs if rid not in kept]:
                joined.remove(joined.recs[rid])
            todo = [rec for rec, k in zip(recs, keep, strict=True) if not k]
        for rec in todo:
            joined.add(rec)
        if document is not None:
            document[_JOINED_KEY] = joined
        self.sources = joined.sources
        self.carriers = {kind: set(found) for kind, found in joined.carriers.items()}
        self._device_objects = set(joined.device_objects)
        self.param_compares = joined.param_compares
        self.visited = set(joined.visited)

    def _coupling(
        self, recs: list[_PartRecord], keep: list[bool], stamp: object
    ) -> list[bool] | None:
        """Per record, is its chunk coupled to another (`_coupled`); None when a kept one
        is. The document keeps an index of every record's keys (`Bindings.document`), so
        an edit looks up the keys of the records made in this run only: a kept record was
        isolated, and only what changed can share a key with it now."""
        document = self.b.document
        fresh = [i for i, k in enumerate(keep) if not k]
        state = document.get(_INDEX_KEY) if document is not None else None
        if document is None or state is None or state[0] != stamp or len(fresh) == len(recs):
            coupled = _coupled(recs)
            if any(k and c for k, c in zip(keep, coupled, strict=True)):
                return None
            if document is not None:
                document[_INDEX_KEY] = _index(stamp, recs)
            return coupled
        _stamp, held, writers, readers = state
        kept = {id(recs[i]) for i, k in enumerate(keep) if k}
        gone = [r for rid, r in held.items() if rid not in kept]
        gone_ids = {id(r) for r in gone}
        out = [False] * len(recs)
        position = {id(rec): i for i, rec in enumerate(recs)}
        new_w: dict[tuple[object, ...], set[int]] = {}
        new_r: dict[tuple[object, ...], set[int]] = {}
        for i in fresh:
            rec = recs[i]
            if rec.visits:
                out[i] = True
                for j in rec.visits:
                    out[j] = True
            for k in _writes_of(rec):
                new_w.setdefault(k, set()).add(id(rec))
            for k in rec.reads:
                new_r.setdefault(k, set()).add(id(rec))
        for k in new_w.keys() | new_r.keys():
            ws = new_w.get(k, set()) | (writers.get(k, set()) - gone_ids)
            if not ws:
                continue
            rs = new_r.get(k, set()) | (readers.get(k, set()) - gone_ids)
            if rs and len(ws | rs) > 1:  # read by one, written by another
                for rid in ws | rs:
                    out[position[rid]] = True
        if any(k and c for k, c in zip(keep, out, strict=True)):
            return None
        for rec in gone:  # the index now: without the records replaced, with the new ones
            del held[id(rec)]
            for k in _writes_of(rec):
                writers[k].discard(id(rec))
            for k in rec.reads:
                readers[k].discard(id(rec))
        for i in fresh:
            rec = recs[i]
            held[id(rec)] = rec
            for k in _writes_of(rec):
                writers.setdefault(k, set()).add(id(rec))
            for k in rec.reads:
                readers.setdefault(k, set()).add(id(rec))
        return out

    def _part_index(self, line: int) -> int:
        return max(bisect.bisect_right(self._los, line) - 1, 0)

    def _record_of(self, node: ast.AST) -> _PartRecord:
        """The record of the chunk holding `node` (a stray one for a kept chunk: whatever
        it touches there makes that chunk not isolated)."""
        rec = self._recs[self._part_index(getattr(node, "lineno", 0))]
        if id(rec) in self._active:
            return rec
        stray = _PartRecord(rec.part, rec.stamp, -1, -1)
        stray.visits.add(self._recs.index(rec))
        self._recs.append(stray)  # seen by `_coupled`
        return stray

    def _add_carrier(self, kind: Kind, carrier: Carrier) -> None:
        self.carriers[kind].add(carrier)
        rec = self._rec
        if rec is not None:
            rec.carriers[kind].add(carrier)
            rec.writes.add(("c", carrier))
            if carrier[0] == "attr":  # the choices of an argparse option named so
                rec.reads.add(("A", carrier[1]))

    def _escape_reads(self, part: Bindings) -> set[tuple[object, ...]]:
        """The carriers `_find_escapes` may find read in a chunk (a name in the scope it
        resolves to, an attribute or a key by name): reads of whoever makes them carriers."""
        key = ("escape reads", id(self.ctx.tree))
        hit = part.memo.get(_ESCAPE_KEY)
        if hit is not None and hit[0] == key:
            found: set[tuple[object, ...]] = hit[1]
            return found
        out: set[tuple[object, ...]] = set()
        for node in part.nodes.get(ast.Name, []):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                scope, _values = self._lookup(node)
                out.add(("c", ("name", str(id(scope)), node.id)))
        for node in part.nodes.get(ast.Attribute, []):
            if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
                out.add(("c", ("attr", node.attr)))
        for node in part.nodes.get(ast.Subscript, []):
            if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load):
                name = const_str(node.slice)
                if name is not None:
                    out.add(("c", ("key", name)))
        part.memo[_ESCAPE_KEY] = (key, out)
        return out

    # ---- positions
    def _collect(self, units: list[tuple[_PartRecord, Bindings]] | None = None) -> None:
        """Follow the module's device and backend positions back to their literals. With
        `units` (a chunked run, `_run_by_parts`): only those chunks' positions, each item
        recorded in its chunk's record; the phases run in the same order as for the whole
        module, so each chunk sees what it would in a whole run."""
        whole: list[tuple[_PartRecord | None, Bindings]] = [(None, self.b)]
        todo: list[tuple[_PartRecord | None, Bindings]] = whole if units is None else list(units)
        if not self.torch_module:
            if self.links is not None:
                self._incoming()
            for rec, part in todo:  # `"cuda" in device.type` of a device another module made
                self._rec = rec
                for cmp in part.nodes.get(ast.Compare, []):
                    if isinstance(cmp, ast.Compare):
                        self._comparison(cmp)
            self._rec = None
            return
        startswith: list[tuple[_PartRecord | None, ast.Call]] = []
        for rec, part in todo:
            self._rec = rec
            plan = self._call_plan() if rec is None else self._part_plan(part)
            for call, sinks, starts, parsing in plan:
                for kind, expr in sinks:
                    self._follow(expr, kind, call, direct=True, carriers=set(), depth=0, seen=set())
                if starts:
                    startswith.append((rec, call))
                if parsing:  # `device.replace("cuda:", "")`: "cuda:" is a device prefix
                    self._literal(
                        call.args[0], "device", call, direct=False, carriers=set(), role="compare"
                    )
        self._rec = None
        if self.links is not None:
            self._incoming()
        for rec, part in todo:
            self._rec = rec
            for node in part.nodes.get(ast.Assign, []):
                if isinstance(node, ast.Assign) and _is_device_object(node.value, self.ctx):
                    for t in node.targets:
                        carrier = self._carrier(t)
                        if carrier:
                            self._device_objects.add(carrier)
                            if rec is not None:
                                rec.device_objects.add(carrier)
                                rec.writes.add(("d", carrier))
        for rec, part in todo:
            self._rec = rec
            for cmp in part.nodes.get(ast.Compare, []):
                if isinstance(cmp, ast.Compare):
                    self._comparison(cmp)
        for rec, call in startswith:
            self._rec = rec
            self._startswith(call)
        for rec, part in todo:  # unittest's comparisons (`assertEqual(a, b)`)
            self._rec = rec
            for node in part.nodes.get(ast.Call, []):
                assert isinstance(node, ast.Call)
                func = node.func
                if (
                    isinstance(func, ast.Attribute)
                    and func.attr in _ASSERT_COMPARE
                    and len(node.args) >= 2
                ):
                    self._assertion(node)
        self._rec = None
        self._displays(units is not None)
        for kind in ("device", "backend"):
            for carrier in list(self.carriers[kind]):
                if carrier[0] == "attr":
                    for choice in self.b.choices.get(carrier[1], []):
                        if units is not None:
                            self._rec = self._record_of(choice)
                        self._literal(
                            choice, kind, choice, direct=False, carriers={carrier}, role="choice"
                        )
        self._rec = None

    def _call_plan(self) -> list[_CallPlan]:
        """The calls of the module that `_collect` acts on, in order: their device and
        backend positions, and whether they are `startswith` or parse a device string. Each
        is found from the call alone and the module's imports and definitions, so with
        bindings joined from chunks each chunk keeps its plan while those are unchanged."""
        if not self.b.parts:
            return self._plan_of(self.b.nodes)
        key = resolution_value(self.ctx)
        out: list[_CallPlan] = []
        for part in self.b.parts:
            hit = part.memo.get(_PLAN_KEY)
            if hit is None or (hit[0] is not key and hit[0] != key):
                hit = part.memo[_PLAN_KEY] = (key, self._plan_of(part.nodes))
            out += hit[1]
        return out

    def _part_plan(self, part: Bindings) -> list[_CallPlan]:
        """`_call_plan` of one chunk's bindings."""
        key = resolution_value(self.ctx)
        hit = part.memo.get(_PLAN_KEY)
        if hit is None or (hit[0] is not key and hit[0] != key):
            hit = part.memo[_PLAN_KEY] = (key, self._plan_of(part.nodes))
        plan: list[_CallPlan] = hit[1]
        return plan

    def _plan_of(self, nodes: dict[type[ast.AST], list[ast.AST]]) -> list[_CallPlan]:
        plan: list[_CallPlan] = []
        imported = self._imported
        for node in nodes.get(ast.Call, []):
            assert isinstance(node, ast.Call)
            func = node.func
            method = func.attr if isinstance(func, ast.Attribute) else None
            # `_sink_args` finds nothing in a call whose callee cannot be a sink (by its
            # last name) and that has no device or backend keyword: most calls of a file
            if method is not None:
                maybe = method in _SINK_NAMES or method in _DEVICE_METHODS
            else:
                maybe = isinstance(func, ast.Name) and (
                    func.id in _SINK_NAMES or func.id in imported or func.id in self._sink_aliases()
                )
            if not maybe:
                for kw in node.keywords:
                    if kw.arg in _SINK_KEYWORDS:
                        maybe = True
                        break
            sinks = list(self._sink_args(node)) if maybe else []
            starts = method == "startswith"
            parsing = method in _PARSING and bool(node.args) and _head_text(node.args[0]) == "cuda:"
            if sinks or starts or parsing:
                plan.append((node, sinks, starts, parsing))
        return plan

    def _displays(self, by_parts: bool = False) -> None:
        """A list, tuple or set display holding a device object (`torch.device("cuda")`)
        holds devices: its `"cuda"` strings are devices too (`["cuda", 0,
        torch.device("cuda")]`, the devices a test runs on), and move with it."""
        found: list[Source] = list(self.sources["device"].values())
        for source in found:
            sink = source.sink
            if not (source.direct and isinstance(sink, ast.Call)):
                continue
            if by_parts:
                self._rec = self._record_of(sink)
            display = self.b.parents.get(id(sink))
            if not isinstance(display, (ast.List, ast.Tuple, ast.Set)):
                continue
            if not _is_device_object(sink, self.ctx):
                continue
            for element in display.elts:
                if element is not sink and isinstance(element, (ast.Constant, ast.JoinedStr)):
                    self._literal(element, "device", sink, direct=False, carriers=set())
        self._rec = None

    def _incoming(self) -> None:
        """Parameters other modules of the project pass device values to are device
        values here: their defaults move with them, and so do their comparisons."""
        from npu_lsp.rules.migration.project import functions_of, incoming_for

        assert self.links is not None
        module = self.ctx.scopes.info.module
        by_id = {id(fn): fn for fns in self.b.functions.values() for fn in fns}
        for fn_id, (qual, method) in functions_of(self.ctx.tree, module).items():
            fn = by_id.get(fn_id)
            if fn is None:
                continue
            params = self.b.params.get(fn_id, {})
            for position, keyword, kind, where in incoming_for(self.links, qual, method):
                name = keyword or next((n for n, (_f, i) in params.items() if i == position), None)
                if name is None or name not in params:
                    continue
                carrier: Carrier = ("name", str(fn_id), name)
                k: Kind = "device" if kind == "device" else "backend"
                self.carriers[k].add(carrier)
                for value in self.b.names.get(fn_id, {}).get(name, []):
                    self._from_elsewhere(value, k, carrier, where)
        module = self.ctx.scopes.info.module
        for name, readers in self.links.attrs.items():
            # a config module without torch also sets them as keys read as attributes
            # (detectron2's LazyConfig `train = dict(device="cuda")` for
            # `model.to(cfg.train.device)`, OmegaConf and EasyDict configs)
            values = self.b.attrs.get(name)
            if values is None and not self.torch_module:
                values = self.b.keys.get(name)
            if values is None:
                continue
            # `args.device` read as a device in another module of the project
            imported = set(self.ctx.scopes.info.imports.values())
            ranked = sorted(  # name a module this one imports, if one reads it
                (not any(_related(q, m) for q in imported), m, k) for k, m in readers if m != module
            )
            if not ranked:
                continue
            _, where, kind = ranked[0]
            k = "device" if kind == "device" else "backend"
            attr: Carrier = ("attr", name)
            self.carriers[k].add(attr)
            for value in values:
                self._from_elsewhere(value, k, attr, where)

    def _from_elsewhere(self, value: ast.expr, kind: Kind, carrier: Carrier, where: str) -> None:
        """Follow `value`, a device value for module `where`; the literals found only so
        say where they are used."""
        before = set(self.sources[kind])
        found = self._follow(
            value, kind, value, direct=False, carriers={carrier}, depth=0, seen=set()
        )
        for found_id in found - before:
            source = self.sources[kind][found_id]
            if source.role == "use" and not source.direct:
                source.role, source.elsewhere = "elsewhere", where

    def kind_of_value(self, expr: ast.AST) -> Kind | None:
        """Is `expr` (an argument) a device or backend value of this module: one of its
        literals, or a name, attribute or key holding them?"""
        kinds: tuple[Kind, ...] = ("device", "backend")
        for kind in kinds:
            if id(expr) in self.sources[kind]:
                return kind
        if not isinstance(expr, (ast.Name, ast.Attribute, ast.Subscript)):
            return None
        carrier = self._carrier(expr)
        if carrier is not None:
            for kind in kinds:
                if carrier in self.carriers[kind]:
                    return kind
        return None

    def _sink_aliases(self) -> frozenset[str]:
        """Names a function binds to a sink's callee, alone or as one side of a conditional
        (`precision_scope = autocast if opt.precision == "autocast" else nullcontext`,
        stable-diffusion's scripts): a call of such a name may be that sink. Function
        scopes only, so a chunk's call plan depends on nothing outside its own `def`."""
        found = self._aliases
        if found is None:
            names: set[str] = set()
            for scope_id, table in self.b.names.items():
                if scope_id == id(self.ctx.tree):
                    continue
                for name, values in table.items():
                    if any(_names_sink(v) for v in values):
                        names.add(name)
            found = self._aliases = frozenset(names)
        return found

    def _aliased_sink(self, func: ast.Name) -> str | None:
        """The sink a local alias stands for (one of its values; None if none is)."""
        scope, _values = self._lookup(func)
        if isinstance(scope, ast.Module):
            return None
        sinks = qualnames(self.ctx, func) & (_DEVICE_FIRST_ARG | _BACKEND_FIRST_ARG)
        return min(sinks) if sinks else None

    def _sink_args(self, call: ast.Call) -> Iterator[tuple[Kind, ast.expr]]:
        func = call.func
        # Resolving every call's callee is most of the cost of a big file: only a callee
        # whose last name is a sink's (or an imported name, an alias) can be one.
        if isinstance(func, ast.Attribute):
            named = func.attr in _SINK_NAMES
        else:
            named = isinstance(func, ast.Name) and (
                func.id in _SINK_NAMES or func.id in self._imported
            )
        qual = resolve(self.ctx, func) if named else None
        if qual is None and isinstance(func, ast.Name) and func.id in self._sink_aliases():
            qual = self._aliased_sink(func)
        for kw in call.keywords:
            if kw.arg in DEVICE_KEYWORDS:
                if isinstance(kw.value, ast.Dict):
                    # `map_location={"cuda:0": "cpu"}`: the keys name where the checkpoint
                    # was saved (they stay as written); the values are devices
                    yield from (("device", v) for v in kw.value.values)
                else:
                    yield "device", kw.value
            elif kw.arg in BACKEND_KEYWORDS:
                yield "backend", kw.value
            elif kw.arg == "type" and qual == "torch.device":
                yield "device", kw.value
        if not call.args:
            return
        first = call.args[0]
        if qual in _DEVICE_FIRST_ARG or (
            qual is None and isinstance(func, ast.Attribute) and func.attr in _DEVICE_METHODS
        ):
            yield "device", first
        elif qual == "torch.load" and len(call.args) > 1:
            yield "device", call.args[1]
        elif qual == _GETATTR and len(call.args) > 1 and resolve(self.ctx, first) == "torch":
            # `getattr(torch, self.device_type, torch.cuda)` (peft's memory tracker): the
            # device type names the device's module, so a "cuda" reaching it moves
            yield "device", call.args[1]
        if qual in _BACKEND_FIRST_ARG:
            yield "backend", first

    # ---- following values backwards
    def _follow(
        self,
        expr: ast.AST | None,
        kind: Kind,
        sink: ast.AST,
        *,
        direct: bool,
        carriers: set[Carrier],
        depth: int,
        seen: set[int],
    ) -> set[int]:
        """Follow `expr` back to its literals; returns their ids. Each expression is followed
        once per kind (memoised: the names of a long file share values in a dense graph), a
        later path only adds its carriers to the literals found the first time."""
        if expr is None or depth > _MAX_DEPTH or id(expr) in seen:
            return _NOTHING
        rec = self._rec
        if rec is not None:
            rec.touch(expr, self)
        key = (kind, id(expr), direct)
        done = self._memo.get(key)
        if done is not None:
            if carriers:
                sources = self.sources[kind]
                for found_id in done:
                    sources[found_id].carriers |= carriers
            return done
        seen.add(id(expr))  # the path's expressions (removed again on the way back)
        self.visited.add(id(expr))
        if rec is not None:
            rec.visited.add(id(expr))
        found: set[int] = set()
        steps: list[tuple[ast.AST | None, Carrier | None]] = []

        def go(e: ast.AST | None, *, hop: Carrier | None = None) -> None:
            steps.append((e, hop))

        if isinstance(expr, (ast.Constant, ast.JoinedStr)):
            if self._literal(expr, kind, sink, direct=direct, carriers=carriers):
                found.add(id(expr))
            if isinstance(expr, ast.JoinedStr) and expr.values:
                head = expr.values[0]
                if isinstance(head, ast.FormattedValue):
                    go(head.value)
        elif isinstance(expr, ast.BinOp) and isinstance(expr.op, (ast.Add, ast.Mod)):
            go(expr.left)
            if isinstance(expr.op, ast.Add) and (_is_display(expr.left) or _is_display(expr.right)):
                go(expr.right)  # `["cpu"] + (["cuda"] if ok else [])`: both lists' elements
        elif isinstance(expr, ast.IfExp):
            go(expr.body)
            go(expr.orelse)
        elif isinstance(expr, ast.BoolOp):
            for v in expr.values:
                go(v)
        elif isinstance(expr, ast.NamedExpr):
            go(expr.value)
        elif isinstance(expr, (ast.List, ast.Tuple, ast.Set)) and not direct:
            for element in expr.elts:  # the elements a loop name takes
                go(element)
        elif isinstance(expr, ast.Name):
            scope, values = self._lookup(expr)
            hop: Carrier = ("name", str(id(scope)), expr.id)
            self._add_carrier(kind, hop)
            for v in values:
                go(v, hop=hop)
            if not direct:  # the elements a list named so is grown with (`.append(...)`)
                if rec is not None:
                    rec.reads.add(("G", expr.id))
                for v in self.b.grown.get(expr.id, ()):
                    go(v, hop=hop)
            self._arguments(scope, expr.id, go, hop)
        elif isinstance(expr, ast.Attribute):
            if resolve(self.ctx, expr.value) is None:  # not a module's attribute
                if rec is not None:
                    rec.reads.update((("A", expr.attr), ("K", expr.attr)))
                for v in self.b.attrs.get(expr.attr, []):
                    go(v, hop=("attr", expr.attr))
                self._add_carrier(kind, ("attr", expr.attr))
                if expr.attr not in self.b.attrs:
                    # attribute-style dicts: EasyDict({...}), OmegaConf.create({...})
                    for v in self.b.keys.get(expr.attr, []):
                        go(v, hop=("key", expr.attr))
        elif isinstance(expr, ast.Subscript):
            key_name = const_str(expr.slice)
            if key_name is not None:
                self._add_carrier(kind, ("key", key_name))
                if rec is not None:
                    rec.reads.add(("K", key_name))
                for v in self.b.keys.get(key_name, []):
                    go(v, hop=("key", key_name))
        elif isinstance(expr, ast.Call):
            self._follow_call(expr, go)
        add_carrier = self.carriers[kind].add
        for e, step_hop in steps:
            if step_hop is None:
                more, through = carriers, direct
            else:
                if rec is None:
                    add_carrier(step_hop)
                else:
                    self._add_carrier(kind, step_hop)
                more, through = carriers | {step_hop}, False
            found |= self._follow(
                e, kind, sink, direct=through, carriers=more, depth=depth + 1, seen=seen
            )
        seen.discard(id(expr))
        self._memo[key] = found
        return found

    def _follow_call(self, call: ast.Call, go: _Go) -> None:
        func = call.func
        qual = resolve(self.ctx, func)
        if qual == "builtins.str" and call.args:
            go(call.args[0])
        elif qual in _ENV_GETTERS and len(call.args) > 1:
            go(call.args[1])
        elif qual in _FIELD:
            go(next((k.value for k in call.keywords if k.arg == "default"), None))
        elif qual == "builtins.getattr" and len(call.args) > 1:
            # `getattr(args, "device", "cuda")`: the attribute, else the default
            name = const_str(call.args[1])
            if name is not None and self._rec is not None:
                self._rec.reads.add(("A", name))
            if name is not None:
                for v in self.b.attrs.get(name, [None]):  # None: still a carrier
                    go(v, hop=("attr", name))
            if len(call.args) > 2:
                go(call.args[2])
        elif isinstance(func, ast.Attribute) and func.attr in _STR_METHODS:
            go(func.value)
        elif isinstance(func, ast.Attribute) and func.attr == "get" and call.args:
            key = const_str(call.args[0])
            if key is not None and self._rec is not None:
                self._rec.reads.add(("K", key))
            if key is not None:
                for v in self.b.keys.get(key, []):
                    go(v, hop=("key", key))
                if len(call.args) > 1:
                    go(call.args[1])
        elif isinstance(func, ast.Name):
            if self._rec is not None:
                self._rec.reads.add(("F", func.id))
            for fn in self.b.functions.get(func.id, []):
                for r in self.b.returns.get(id(fn), []):
                    go(r, hop=("return", fn.name))
        elif (
            isinstance(func, ast.Attribute)
            and isinstance(func.value, ast.Name)
            and func.value.id in ("self", "cls")
        ):  # `self._devices()`: a method of this module's classes
            if self._rec is not None:
                self._rec.reads.add(("F", func.attr))
            for fn in self.b.functions.get(func.attr, []):
                if id(fn) in self.b.methods:
                    for r in self.b.returns.get(id(fn), []):
                        go(r, hop=("return", fn.name))

    def _lookup(self, name: ast.Name) -> tuple[Scope, list[ast.expr]]:
        """The scope binding `name` where it is read, and every value bound to it there."""
        scope: Scope | None = self.b.scope_of.get(id(name))
        tree = self.ctx.tree
        while scope is not None:
            bound = self.b.names.get(id(scope), {})
            if name.id in bound:
                if scope is tree and self._rec is not None:
                    self._rec.reads.add(("N", name.id))
                return scope, bound[name.id]
            scope = self.b.scope_of.get(id(scope))
            if scope is None:
                break
        if self._rec is not None:
            self._rec.reads.add(("N", name.id))
        return tree, self.b.names.get(id(tree), {}).get(name.id, [])

    def _arguments(self, scope: Scope, name: str, go: _Go, hop: Carrier) -> None:
        """Arguments given for parameter `name` of `scope` at the calls in this module."""
        param = self.b.params.get(id(scope), {}).get(name)
        if param is None:
            return
        fn, index = param
        calls = self.b.calls.get(fn.name, [])
        owner = self.b.init_of.get(id(fn))
        if self._rec is not None:
            self._rec.reads.update((("C", fn.name), ("M", fn.name)))
            if owner is not None:
                self._rec.reads.add(("C", owner))
        if owner is not None:  # `Trainer(model, "cuda")` calls `__init__(self, model, device)`
            calls, index = self.b.calls.get(owner, []), index - 1
        elif id(fn) in self.b.methods:  # `trainer.fit(loader, "cuda")`: `fit(self, ...)`
            calls, index = self.b.method_calls.get(fn.name, []), index - 1
        for call in calls:
            for kw in call.keywords:
                if kw.arg == name:
                    go(kw.value, hop=hop)
            if 0 <= index < len(call.args) and not any(
                isinstance(a, ast.Starred) for a in call.args[: index + 1]
            ):
                go(call.args[index], hop=hop)

    def _literal(
        self,
        node: ast.AST,
        kind: Kind,
        sink: ast.AST,
        *,
        direct: bool,
        carriers: set[Carrier],
        role: str = "use",
    ) -> bool:
        """Record `node` as a literal of `kind` if it is one (True)."""
        if self._rec is not None:
            self._rec.touch(node, self)
        text = _head_text(node)
        if text is None or not _HEADS[kind].fullmatch(text):
            return False
        if npu_aware(self.ctx, node):
            return False  # a branch of a dispatch that has an NPU branch: never runs on one
        assert isinstance(node, (ast.Constant, ast.JoinedStr))
        found = self.sources[kind].get(id(node))
        if found is None:
            self.sources[kind][id(node)] = Source(
                node, text, kind, sink, direct, set(carriers), role
            )
        else:
            found.carriers |= carriers
            if direct and not found.direct:  # written in place somewhere: that use names it
                found.direct, found.sink, found.role = True, sink, role
        return True

    # ---- other reads of the same values
    def _find_escapes(self, units: list[tuple[_PartRecord, Bindings]] | None = None) -> None:
        """Reads of the found values that are neither device uses nor harmless. With
        `units`: the reads of those chunks (what each chunk may read is in its record)."""
        wanted = {
            c for kind in self.sources for s in self.sources[kind].values() for c in s.carriers
        }
        if not wanted:
            return
        names = {c[2] for c in wanted if c[0] == "name"}
        attrs = {c[1] for c in wanted if c[0] == "attr"}
        keys = {c[1] for c in wanted if c[0] == "key"}
        escapes: dict[Carrier, ast.expr] = {}
        tables = [self.b.nodes] if units is None else [part.nodes for _rec, part in units]
        reads = [
            *(n for nodes in tables for n in nodes.get(ast.Name, [])),
            *(n for nodes in tables for n in nodes.get(ast.Attribute, [])),
            *(n for nodes in tables for n in nodes.get(ast.Subscript, [])),
        ]
        for node in reads:
            carrier: Carrier | None = None
            if (
                isinstance(node, ast.Name)
                and node.id in names
                and isinstance(node.ctx, ast.Load)
                or (
                    isinstance(node, ast.Attribute)
                    and node.attr in attrs
                    and isinstance(node.ctx, ast.Load)
                )
            ):
                carrier = self._carrier(node)
            elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load):
                key = const_str(node.slice)
                carrier = ("key", key) if key in keys else None
            if carrier is None or carrier not in wanted or carrier in escapes:
                continue
            if isinstance(node, ast.expr) and not self._harmless(node):
                escapes[carrier] = node
        for kind in self.sources:
            for source in self.sources[kind].values():
                hits = [escapes[c] for c in source.carriers if c in escapes]
                if hits:
                    source.escapes = min(hits, key=lambda n: (n.lineno, n.col_offset))

    def _harmless(self, node: ast.AST, *, copy_ok: bool = True) -> bool:
        """Is this read a device use, or one whose behaviour the rename cannot change?
        `copy_ok`: may a copy into another name count as harmless (its reads are checked
        only when that name carries the value, which a `str(device)` copy never does)."""
        if id(node) in self.visited:
            return True
        parent = self.b.parents.get(id(node))
        if isinstance(parent, (ast.Compare, ast.If, ast.While, ast.IfExp, ast.BoolOp, ast.UnaryOp)):
            return True  # comparisons move with it; truthiness does not change
        if isinstance(parent, (ast.Attribute, ast.Expr)):
            return True  # `device.type`, `device.startswith(...)`, a bare expression
        if (
            isinstance(parent, ast.Call)
            and parent.args == [node]
            and not parent.keywords
            and resolve(self.ctx, parent.func) == "builtins.str"
        ):
            # `str(device) == "cpu"` (CLIP's `load`, litgpt's size warning): the text of a
            # device is read as the device is, so judge what reads the text
            return self._harmless(parent, copy_ok=False)
        if (
            copy_ok
            and isinstance(parent, ast.Assign)
            and all(isinstance(t, ast.Name) for t in parent.targets)
        ):
            return True  # a copy into another name: that name's reads are checked
        if (
            isinstance(parent, ast.Call)
            and len(parent.args) > 1
            and parent.args[1] is node
            and resolve(self.ctx, parent.func) == "builtins.getattr"
            and resolve(self.ctx, parent.args[0]) == "torch"
        ):
            return True  # `getattr(torch, device)`: the device's module, torch.npu once moved
        call = self.b.parents.get(id(parent)) if isinstance(parent, ast.keyword) else parent
        if (
            not self.torch_module
            and isinstance(call, ast.Call)
            and any(arg is node for _kind, arg in self._sink_args(call))
        ):
            # a device position in a module that imports no torch, whose positions are not
            # followed (segment-anything's scripts/amg.py: `sam.to(device=args.device)` on
            # a model its own package built): a device use all the same, not an escape
            return True
        # an argument for a device parameter of another module
        if self.links is not None and isinstance(call, ast.Call) and node is not call.func:
            from npu_lsp.rules.migration.project import outgoing_kind

            if outgoing_kind(self.links, self.ctx, call, node) is not None:
                return True
        # messages: print(...), logger.info(...), warnings.warn(...), f-strings inside them
        walker: ast.AST | None = parent
        below: ast.AST = node
        while walker is not None and not isinstance(walker, ast.stmt):
            if isinstance(walker, ast.Call) and self._is_message(walker):
                return True
            below, walker = walker, self.b.parents.get(id(walker))
        # `assert ok, f"... {device}"` and `raise ValueError(f"... {device}")`: messages too
        return isinstance(walker, ast.Raise) or (
            isinstance(walker, ast.Assert) and below is walker.msg
        )

    def _is_message(self, call: ast.Call) -> bool:
        func = call.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        return name in _MESSAGE_CALLS

    # ---- comparisons
    def _kind_of(self, expr: ast.AST) -> Kind | None:
        """Is `expr` a device or a backend value (something a literal is compared with)?"""
        while isinstance(expr, ast.Call) and (
            (isinstance(expr.func, ast.Attribute) and expr.func.attr in ("lower", "strip"))
            or (resolve(self.ctx, expr.func) == "builtins.str" and expr.args)
        ):
            expr = expr.func.value if isinstance(expr.func, ast.Attribute) else expr.args[0]
        if isinstance(expr, ast.Call) and resolve(self.ctx, expr.func) == _GET_BACKEND:
            return "backend"
        if isinstance(expr, ast.Attribute):
            if expr.attr == "device":
                return "device"
            if expr.attr == "type":
                # `device.type`: only a `torch.device` has a `type` attribute that equals
                # "cuda" (a tensor's `.type` is a method), so `model_device.type == "cuda"`
                # compares a device even when nothing here shows where it came from
                return "device"
        carrier = self._carrier(expr)
        if carrier is not None:
            if self._rec is not None:
                self._rec.reads.update((("c", carrier), ("d", carrier)))
            kinds: tuple[Kind, ...] = ("device", "backend")
            for kind in kinds:
                if carrier in self.carriers[kind]:
                    return kind
            if carrier in self._device_objects:
                return "device"
        return None

    def _carrier(self, expr: ast.AST) -> Carrier | None:
        if isinstance(expr, ast.Name):
            scope, _ = self._lookup(expr)
            return ("name", str(id(scope)), expr.id)
        if isinstance(expr, ast.Attribute) and resolve(self.ctx, expr.value) is None:
            return ("attr", expr.attr)
        if isinstance(expr, ast.Subscript):
            key = const_str(expr.slice)
            return ("key", key) if key is not None else None
        return None

    def _comparison(self, cmp: ast.Compare) -> None:
        operands = [cmp.left, *cmp.comparators]
        for op, left, right in zip(cmp.ops, operands, operands[1:], strict=False):
            if isinstance(op, (ast.Eq, ast.NotEq, ast.Is, ast.IsNot)):
                self._compare_pairs(cmp, left, right, membership=False)
            elif isinstance(op, (ast.In, ast.NotIn)):
                self._compare_pairs(cmp, left, right, membership=True)

    def _assertion(self, call: ast.Call) -> None:
        """`self.assertEqual(out.device.type, "cuda")`, `assertIn(device, ("cuda", "cpu"))`:
        unittest's comparisons, as `==` and `in` are."""
        assert isinstance(call.func, ast.Attribute)
        membership = call.func.attr in _ASSERT_MEMBERSHIP
        self._compare_pairs(call, call.args[0], call.args[1], membership=membership)

    def _compare_pairs(
        self, where: ast.AST, left: ast.expr, right: ast.expr, *, membership: bool
    ) -> None:
        if not membership:
            pairs = [(left, right), (right, left)]
        elif isinstance(right, (ast.Tuple, ast.List, ast.Set)):
            pairs = [(left, e) for e in right.elts]
        else:
            pairs = [(right, left)]
        for value, literal in pairs:
            if not isinstance(literal, (ast.Constant, ast.JoinedStr)):
                continue  # an f-string too: litgpt's `str(w.device) == f"cuda:{n - 1}"`
            kind = self._kind_of(value)
            if kind is not None:
                self._compared(value, literal, kind, where)
            elif isinstance(value, ast.Name):
                self._param_compare(value, literal)

    def _param_compare(self, name: ast.Name, literal: ast.AST) -> None:
        """A parameter compared with a device or backend name (`device_type == "cuda"`,
        also `"npu"` after a migration) that nothing here shows to be one: recorded for
        the project's facts (a caller in another module may pass a device)."""
        text = _head_text(literal)
        if text is None:
            return
        kind: Kind | None = None
        if DEVICE_HEAD.fullmatch(text) or _NPU_HEAD.fullmatch(text):
            kind = "device"
        elif text.lower() in ("nccl", "hccl"):
            kind = "backend"
        if kind is None:
            return
        scope, _ = self._lookup(name)
        if name.id in self.b.params.get(id(scope), {}):
            self.param_compares.setdefault((id(scope), name.id), kind)
            if self._rec is not None:
                self._rec.param_compares.setdefault((id(scope), name.id), kind)

    def _compared(self, value: ast.AST, literal: ast.AST, kind: Kind, where: ast.AST) -> None:
        """`literal` is compared with `value`, a device (or backend): the literal has to move
        with it, and so does whatever `value` was set from (`args.device == "cuda"` makes
        `--device`'s default a device string even if nothing else uses it)."""
        self._literal(literal, kind, where, direct=False, carriers=set(), role="compare")
        if _head_text(literal) and _HEADS[kind].fullmatch(_head_text(literal) or ""):
            self._follow(value, kind, where, direct=False, carriers=set(), depth=0, seen=set())

    def _startswith(self, call: ast.Call) -> None:
        assert isinstance(call.func, ast.Attribute)
        kind = self._kind_of(call.func.value)
        if kind is None and isinstance(call.func.value, ast.Name) and call.args:
            self._param_compare(call.func.value, call.args[0])
        if kind is None or not call.args:
            return
        arg = call.args[0]
        for literal in arg.elts if isinstance(arg, ast.Tuple) else [arg]:
            self._compared(call.func.value, literal, kind, call)


_REC_KEY = ("migration", "flow record")
_ESCAPE_KEY = ("migration", "escape reads")


class _PartRecord:
    """What one chunk's share of a chunked `Flow` run read and wrote (table entries and
    carriers, by key), which other chunks' nodes it reached, and what it found."""

    __slots__ = (
        "part",
        "stamp",
        "lo",
        "hi",
        "reads",
        "writes",
        "visits",
        "sources",
        "carriers",
        "device_objects",
        "param_compares",
        "visited",
        "isolated",
    )

    def __init__(self, part: Bindings, stamp: object, lo: int, hi: int) -> None:
        self.part = part
        self.stamp = stamp
        self.lo, self.hi = lo, hi  # the chunk's lines, now
        self.reads: set[tuple[object, ...]] = set()
        self.writes: set[tuple[object, ...]] = set()
        self.visits: set[int] = set()  # indexes of other chunks whose nodes it reached
        self.sources: list[tuple[Kind, Source]] = []
        self.carriers: dict[Kind, set[Carrier]] = {"device": set(), "backend": set()}
        self.device_objects: set[Carrier] = set()
        self.param_compares: dict[tuple[int, str], Kind] = {}
        self.visited: set[int] = set()  # ids of the expressions its follows passed
        self.isolated = False

    def touch(self, node: ast.AST, flow: Flow) -> None:
        """The chunk's work reached `node`: note the chunk holding it if another."""
        line = getattr(node, "lineno", None)
        if line is not None and not self.lo <= line <= self.hi:
            self.visits.add(flow._part_index(line))


class _Joined:
    """The results of a set of records (`Flow._join_records`), with counts where records
    may share an entry, so a record's share can be taken out again."""

    def __init__(self, stamp: object) -> None:
        self.stamp = stamp
        self.recs: dict[int, _PartRecord] = {}
        self.sources: dict[Kind, dict[int, Source]] = {"device": {}, "backend": {}}
        self.carriers: dict[Kind, dict[Carrier, int]] = {"device": {}, "backend": {}}
        self.device_objects: dict[Carrier, int] = {}
        self.param_compares: dict[tuple[int, str], Kind] = {}
        self.visited: dict[int, int] = {}

    def add(self, rec: _PartRecord) -> None:
        self.recs[id(rec)] = rec
        for kind, source in rec.sources:
            self.sources[kind][id(source.node)] = source
        for kind, found in rec.carriers.items():
            _count(self.carriers[kind], found, 1)
        _count(self.device_objects, rec.device_objects, 1)
        self.param_compares.update(rec.param_compares)
        _count(self.visited, rec.visited, 1)

    def remove(self, rec: _PartRecord) -> None:
        del self.recs[id(rec)]
        for kind, source in rec.sources:
            self.sources[kind].pop(id(source.node), None)
        for kind, found in rec.carriers.items():
            _count(self.carriers[kind], found, -1)
        _count(self.device_objects, rec.device_objects, -1)
        for key in rec.param_compares:
            self.param_compares.pop(key, None)
        _count(self.visited, rec.visited, -1)


def _count(counts: dict[Any, int], keys: set[Any], step: int) -> None:
    for key in keys:
        n = counts.get(key, 0) + step
        if n > 0:
            counts[key] = n
        else:
            counts.pop(key, None)


_JOINED_KEY = ("migration", "flow joined")


def _extent(stmts: list[ast.stmt]) -> tuple[int, int]:
    """First and last line of a chunk's statements (decorators included)."""
    if not stmts:
        return (0, -1)
    first = stmts[0]
    lo = first.lineno
    for d in getattr(first, "decorator_list", ()):
        lo = min(lo, d.lineno)
    hi = max((s.end_lineno or s.lineno) for s in stmts)
    return lo, hi


def _table_writes(part: Bindings, tree_id: int) -> frozenset[tuple[object, ...]]:
    """The entries of the module-wide tables a chunk's bindings add to (kept per chunk)."""
    hit = part.memo.get(_WRITES_KEY)
    if hit is not None and hit[0] == tree_id:
        found: frozenset[tuple[object, ...]] = hit[1]
        return found
    out: set[tuple[object, ...]] = {("N", n) for n in part.names.get(tree_id, {})}
    for tag, table in (
        ("A", part.attrs),
        ("A", part.choices),
        ("K", part.keys),
        ("F", part.functions),
        ("C", part.calls),
        ("M", part.method_calls),
        ("G", part.grown),
    ):
        out.update((tag, k) for k in table)
    made = frozenset(out)
    part.memo[_WRITES_KEY] = (tree_id, made)
    return made


_WRITES_KEY = ("migration", "table writes")
_INDEX_KEY = ("migration", "flow index")


def _writes_of(rec: _PartRecord) -> set[tuple[object, ...]]:
    tree_id = rec.stamp[1] if isinstance(rec.stamp, tuple) else 0
    return rec.writes | _table_writes(rec.part, tree_id)


def _index(stamp: object, recs: list[_PartRecord]) -> tuple[Any, ...]:
    """(stamp, records by id, key -> ids of the records writing it, ... reading it)."""
    held = {id(rec): rec for rec in recs}
    writers: dict[tuple[object, ...], set[int]] = {}
    readers: dict[tuple[object, ...], set[int]] = {}
    for rec in recs:
        for k in _writes_of(rec):
            writers.setdefault(k, set()).add(id(rec))
        for k in rec.reads:
            readers.setdefault(k, set()).add(id(rec))
    return (stamp, held, writers, readers)


def _coupled(recs: list[_PartRecord]) -> list[bool]:
    """Per record, does its chunk share anything with another (reached another's nodes,
    or read what another wrote, or wrote what another read)? Records past the chunks'
    (strays) only mark the chunks they reached."""
    n = len(recs)
    out = [False] * n
    writers: dict[tuple[object, ...], set[int]] = {}
    readers: dict[tuple[object, ...], set[int]] = {}
    for i, rec in enumerate(recs):
        if rec.visits:
            out[i] = True
            for j in rec.visits:
                out[j] = True
        tree_id = rec.stamp[1] if isinstance(rec.stamp, tuple) else 0
        for k in _table_writes(rec.part, tree_id) if rec.lo >= 0 else ():
            writers.setdefault(k, set()).add(i)
        for k in rec.writes:
            writers.setdefault(k, set()).add(i)
        for k in rec.reads:
            readers.setdefault(k, set()).add(i)
    for k, rs in readers.items():
        ws = writers.get(k)
        if ws and len(ws | rs) > 1:  # read by one, written by another
            for i in ws | rs:
                out[i] = True
    return out


class _Go(Protocol):
    """The continuation `Flow._follow` hands to its helpers: follow `e` one step further."""

    def __call__(self, e: ast.AST | None, *, hop: Carrier | None = None) -> None: ...


def _is_device_object(expr: ast.AST, ctx: Context) -> bool:
    """`torch.device(...)` or `<x>.device`: a device object whose `.type` is a device type."""
    if isinstance(expr, ast.Call):
        return is_torch_device(ctx, expr.func)
    return isinstance(expr, ast.Attribute) and expr.attr == "device"


def is_torch_device(ctx: Context, func: ast.AST) -> bool:
    """Does `func` resolve to `torch.device`? (An attribute chain resolves to a name ending
    in its own last attribute: `x.to` never does, and needs no resolving.)"""
    if isinstance(func, ast.Attribute) and func.attr != "device":
        return False
    return resolve(ctx, func) == "torch.device"


def _names_sink(value: ast.expr) -> bool:
    """Is `value` a sink's callee spelled as a name or attribute, or a conditional choosing
    one (by the last name: `autocast`, `torch.autocast`)?"""
    if isinstance(value, ast.IfExp):
        return _names_sink(value.body) or _names_sink(value.orelse)
    if isinstance(value, ast.Name):
        return value.id in _SINK_NAMES
    return isinstance(value, ast.Attribute) and value.attr in _SINK_NAMES


def _is_display(node: ast.AST) -> bool:
    """A list or tuple display, or a conditional choosing between such displays."""
    if isinstance(node, ast.IfExp):
        return _is_display(node.body) or _is_display(node.orelse)
    return isinstance(node, (ast.List, ast.Tuple))


def _head_text(node: ast.AST) -> str | None:
    """The text a literal starts with: a str constant's value, an f-string's first part."""
    if isinstance(node, ast.Constant):
        return node.value if isinstance(node.value, str) else None
    if isinstance(node, ast.JoinedStr) and node.values:
        head = node.values[0]
        if isinstance(head, ast.Constant) and isinstance(head.value, str):
            # "cuda:" of f"cuda:{rank}"; a whole f"cuda" has only that part
            return head.value
    return None


def resolve(ctx: Context, expr: ast.AST) -> str | None:
    """`ctx.qualname`, also through imports made inside functions
    (`def main(): import torch.distributed as dist` makes `dist.init_process_group` resolve)."""
    direct = ctx.qualname(expr)
    if direct is not None:
        return direct
    parts: list[str] = []
    head = expr
    while isinstance(head, ast.Attribute):
        parts.append(head.attr)
        head = head.value
    if not isinstance(head, ast.Name):
        return None
    flow = Flow.of(ctx)
    scope: Scope | None = flow.b.scope_of.get(id(head))
    while scope is not None and not isinstance(scope, ast.Module):
        found = flow.b.local_imports.get(id(scope), {}).get(head.id)
        if found is not None:
            return ".".join([found, *reversed(parts)])
        if head.id in flow.b.names.get(id(scope), {}):
            return None  # a local variable of that name
        scope = flow.b.scope_of.get(id(scope))
    return None


def qualnames(ctx: Context, expr: ast.AST, depth: int = 0) -> set[str]:
    """The dotted names `expr` may stand for, also through local aliases that `qualname`
    does not follow: `ext = CUDAExtension`, `ext = CUDAExtension if cuda else CppExtension`,
    `backends = torch.backends` then `backends.cuda`."""
    direct = resolve(ctx, expr)
    if direct is not None:
        return {direct}
    if depth > 8:
        return set()
    if isinstance(expr, ast.Attribute):
        return {f"{q}.{expr.attr}" for q in qualnames(ctx, expr.value, depth + 1)}
    if isinstance(expr, ast.IfExp):
        return qualnames(ctx, expr.body, depth + 1) | qualnames(ctx, expr.orelse, depth + 1)
    if isinstance(expr, ast.Name):
        _scope, values = Flow.of(ctx)._lookup(expr)
        out: set[str] = set()
        for v in values:
            out |= qualnames(ctx, v, depth + 1)
        return out
    return set()


def string_values(ctx: Context, expr: ast.AST) -> list[str]:
    """The string literals `expr` may evaluate to (through names, lists, `+` of lists,
    `os.path.join(...)`'s last part, `glob`'s pattern), for telling CUDA sources apart."""
    flow = Flow.of(ctx)
    out: list[str] = []
    todo: list[tuple[ast.AST, int]] = [(expr, 0)]
    seen: set[int] = set()
    while todo:
        node, depth = todo.pop()
        if id(node) in seen or depth > 12:
            continue
        seen.add(id(node))
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            out.append(node.value)
        elif isinstance(node, ast.JoinedStr):
            out.extend(const_str(v) or "" for v in node.values[-1:])
        elif isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            todo.extend((e, depth + 1) for e in node.elts)
        elif isinstance(node, ast.Starred):
            todo.append((node.value, depth + 1))
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            todo.extend([(node.left, depth + 1), (node.right, depth + 1)])
        elif isinstance(node, ast.ListComp):
            todo.append((node.elt, depth + 1))
            todo.extend((g.iter, depth + 1) for g in node.generators)
        elif isinstance(node, ast.Call):
            qual = ctx.qualname(node.func) or ""
            if qual.startswith(("os.path.", "glob.")) or qual in (
                "builtins.list",
                "builtins.sorted",
            ):
                todo.extend((a, depth + 1) for a in node.args[-1:])
            elif isinstance(node.func, ast.Attribute) and node.func.attr in ("glob", "rglob"):
                todo.extend((a, depth + 1) for a in node.args[:1])
        elif isinstance(node, ast.Name):
            _scope, values = flow._lookup(node)
            todo.extend((v, depth + 1) for v in values)
            # `sources += [...]` / `sources.append(...)` / `.extend(...)` in the same module
            todo.extend((v, depth + 1) for v in flow.b.grown.get(node.id, []))
    return out


def _related(imported: str, module: str) -> bool:
    """Is `module` what `imported` names, a package under it, or the module it comes from?"""
    return (
        imported == module or module.startswith(imported + ".") or imported.startswith(module + ".")
    )
