"""Graph-scope resolution: which functions MindSpore compiles, and at which syntax level.

A *graph scope* is a function MindSpore compiles in GRAPH_MODE: `construct` of every
`nn.Cell` subclass (resolved through imports, aliases and base classes defined elsewhere
in the workspace), functions and methods decorated `@jit` / `@ms_function`, functions
passed to `ms.jit(fn)`, the methods of `@jit_class` classes, and every function or method
those reach through calls (transitively, across the workspace). `@jit(capture_mode="bytecode")`
functions are skipped: MindSpore falls back to eager Python for what it cannot compile.

The syntax level follows MindSpore's precedence (RULES.md section 0), highest first:
the configured level (standing where `MS_DEV_JIT_SYNTAX_LEVEL` stands, and that variable
itself when the file sets it), then `@jit(fullgraph=...)` / `set_jit_config(JitConfig(...))`,
then `set_context(jit_syntax_level=...)`, which does not reach plain `@jit` functions.
Rules never work any of this out themselves; they ask `ScopeResolver.scope_for`.
"""

from __future__ import annotations

import ast
import bisect
import builtins
import itertools
import operator
import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import TYPE_CHECKING, Any, Literal

from npu_lsp.astutil import (
    BLOCK_FIELDS,
    checked_words,
    child_nodes,
    fields,
    find_branches,
    self_attr,
)
from npu_lsp.columns import LineColumns
from npu_lsp.locate import Known, folder_of, locate_top
from npu_lsp.modes import compiles_cells, runs_eagerly
from npu_lsp.modes import kind as mode_kind
from npu_lsp.reexports import public_name

if TYPE_CHECKING:
    from npu_lsp.engine import WorkspaceIndex

Level = Literal["strict", "lax"]
FuncDef = ast.FunctionDef | ast.AsyncFunctionDef
_BUILTINS = frozenset(dir(builtins))
_JIT_NAMES = frozenset({"jit", "ms_function"})
_JIT_CLASS = frozenset({"jit_class"})
#: `@constexpr` turns a function into a primitive whose inference runs it as plain Python
#: while compiling (mindspore/ops/primitive.py: `ProxyOp.__infer__` calls `fn`): its body
#: is never compiled, and its result is a compile-time constant.
_CONSTEXPR = frozenset({"constexpr"})
_CELL_FALLBACK = frozenset({"mindspore.nn.Cell", "mindspore.Cell", "mindspore.nn.cell.Cell"})
ENV_VAR = "MS_DEV_JIT_SYNTAX_LEVEL"


@dataclass(frozen=True)
class CallSite:
    """Where a graph function calls a helper (used for related information)."""

    path: str
    line: int
    column: int
    end_line: int
    end_column: int
    caller: str
    #: The call expression and the calling function (same file only; not part of equality).
    call: ast.Call | None = field(default=None, compare=False, repr=False)
    caller_node: ast.AST | None = field(default=None, compare=False, repr=False)


#: Scope kinds compiled because compiled code calls them (a helper, a `@jit_class` method):
#: their call sites are recorded, and MindSpore reports their errors at those call sites.
ECHOED_KINDS = frozenset({"helper", "jit_class"})
#: Kinds whose call sites in compiled code are recorded: also a `construct` called as a
#: sub-cell (`self.inner(x)`), whose errors MindSpore names at that call.
SITED_KINDS = ECHOED_KINDS | {"construct"}


@dataclass
class GraphScope:
    """A compiled function: what made it compiled, at which level, and who calls it."""

    function: FuncDef | ast.Lambda
    qualname: str
    #: "constexpr": a `@constexpr` function compiled code calls; it runs as Python while
    #: compiling (only MS141 reports there)
    kind: Literal["construct", "jit", "jit_class", "helper", "constexpr"]
    level: Level
    #: For helpers: the call sites in compiled code that reach this function.
    call_sites: list[CallSite] = field(default_factory=list)
    #: calls of this function from other modules with their argument facts
    #: (`rules/graphmode/xcalls.attach`; not part of equality)
    incoming: tuple[Any, ...] = field(default=(), repr=False, compare=False)
    _site_keys: set[tuple[str, int, int, str]] = field(
        default_factory=set, repr=False, compare=False
    )

    @property
    def strict(self) -> bool:
        return self.level == "strict"


class SiteReads:
    """Which functions' call contexts (their call sites, the calls of them by name) the
    rules read during one analysis: the language server's incremental path records them
    (`incremental.TrackedSites`), so an edit that only moves or changes the calls of a
    helper nobody asked about does not make every reader of the helper's name analysed
    again. `seen` is None outside such an analysis: the full run pays one test per read.

    A reader whose answer is keyed by the call node it is asked about (a file-wide index of
    call -> callee), not by the helper, reads every helper's sites for everybody: it pauses
    the record (`paused`), since a chunk asking about its own call depends on that call
    and its callee only."""

    seen: set[str] | None = None
    paused: int = 0

    @classmethod
    def note(cls, name: str) -> None:
        """Record that the call context of the function called `name` was read."""
        seen = cls.seen
        if seen is not None and not cls.paused:
            seen.add(name)

    def __enter__(self) -> None:
        SiteReads.paused += 1

    def __exit__(self, *exc: object) -> None:
        SiteReads.paused -= 1


#: `with SITE_READS_PAUSED:` around a file-wide index of calls (`SiteReads`)
SITE_READS_PAUSED = SiteReads()


def _python_only_methods(info: ModuleInfo, cls: ClassInfo) -> frozenset[str]:
    """The methods of a `@jit_class` that only its `__init__` calls, directly or through
    other such methods, and nothing else in the module reads. `__init__` runs in Python,
    so they are never compiled (mindone's ZeRO helper: `set_zero1_allreduce_fusion_comm_list`
    and `update_comm_op_info` build communication primitives and log while it is made); a
    method compiled code may call is read elsewhere."""
    names = {m for m in cls.methods if not m.startswith("__")}
    if "__init__" not in cls.methods or not names:
        return frozenset()
    # method name -> the methods of `cls` calling `self.<name>(...)` (None: read outside the
    # class, or read without being called)
    readers: dict[str, set[str] | None] = {}
    for other in (*(c.node for c in info.classes.values() if c is not cls), *info.functions.values()):
        for node in ast.walk(other):
            if type(node) is ast.Attribute and node.attr in names:
                readers[node.attr] = None
    for owner, fn in cls.methods.items():
        called = {id(n.func) for n in ast.walk(fn) if type(n) is ast.Call}
        for node in ast.walk(fn):
            if type(node) is not ast.Attribute or node.attr not in names or readers.get(node.attr, set()) is None:
                continue
            if id(node) not in called:
                readers[node.attr] = None  # `self.cb = self.m`: may be called from anywhere
            else:
                readers.setdefault(node.attr, set()).add(owner)  # type: ignore[union-attr]
    only: set[str] = set()
    grew = True
    while grew:
        grew = False
        for name, by in readers.items():
            if name not in only and by and by <= only | {"__init__"} and name not in by:
                only.add(name)
                grew = True
    return frozenset(only)


# --------------------------------------------------------------------- module summary
@dataclass
class ClassInfo:
    name: str
    node: ast.ClassDef
    bases: list[str]  # resolved dotted names (local classes as "<module>.<Name>")
    methods: dict[str, FuncDef]
    jit_class: bool
    #: attribute name -> class qualname, for `self.a = SomeClass(...)` in __init__
    attr_types: dict[str, str] = field(default_factory=dict)
    #: `self.g = ms.value_and_grad(self.forward, ...)` in __init__ -> {"g": ["self.forward"]}
    #: (what calling `self.g` in compiled code compiles: methods as "self.<name>")
    attr_wraps: dict[str, list[str]] = field(default_factory=dict)
    #: `self.step = ms.jit(self._step)` in __init__: methods compiled when called through it
    jit_methods: dict[str, dict[str, ast.expr]] = field(default_factory=dict)
    #: `self.net = net` in __init__ -> {"net": "net"}: the attribute holds that argument
    attr_params: dict[str, str] = field(default_factory=dict)
    #: what the statements directly in the body of `methods["__init__"]` hold for readers
    #: that would otherwise go over each of them again (None: no `__init__`)
    init_assigns: InitAssigns | None = None


@dataclass
class InitAssigns:
    """The assignments among an `__init__` body's own statements (not in its blocks), source
    order, set aside in the pass `_note_attr_types` already makes: those of a call whose callee
    starts from a name in `outside` (`np.zeros(...)`, `functools.partial(...)`: the names
    imported from outside MindSpore), and those of a `BoolOp` / `IfExp` value (`self.act =
    act or nn.ReLU()`)."""

    outside: frozenset[str]
    outside_calls: list[ast.Assign] = field(default_factory=list)
    either: list[ast.Assign] = field(default_factory=list)


@dataclass
class ModuleInfo:
    """What scope resolution needs to know about one file (cheap to rebuild per edit)."""

    path: str
    module: str
    imports: dict[str, str]
    classes: dict[str, ClassInfo]
    functions: dict[str, FuncDef]
    #: function name -> keyword arguments of the `ms.jit(fn, ...)` call that wraps it
    jit_wrapped: dict[str, dict[str, ast.expr]]
    context_level: Level | None
    env_level: Level | None
    #: class qualname (or "*" for any Cell) -> level from set_jit_config(JitConfig(...))
    cell_config_levels: dict[str, Level]
    #: the file's context mode, decided once here for every rule (`npu_lsp.modes` says what
    #: it means and asks it): True GRAPH_MODE; False PyNative (PYNATIVE_MODE set, or
    #: MindSpore's default in a script that sets no mode); None unknown (checked as graph)
    graph_mode: bool | None = None
    #: True when `graph_mode` is False only because no literal mode applies (MindSpore's
    #: default, PYNATIVE_MODE, in a script that runs itself)
    default_mode: bool = False
    #: how the file's own decision lets its importers' mode reach it (`modes.kind`); a
    #: module of an inheriting kind has `graph_mode` / `default_mode` set from the
    #: project's scripts by the index it is in (`modes.inherit`, `WorkspaceIndex`)
    mode_kind: str = ""
    #: module-level `name = SomeClass(...)` -> class qualname (to follow `name.method()`)
    instances: dict[str, str] = field(default_factory=dict)
    #: module-level `g = ms.value_and_grad(forward)` / `ops.GradOperation()(net)` /
    #: `nn.WithLossCell(net, loss)` -> the names it wraps: calling `g` in compiled code
    #: compiles them (a function, or a cell's construct)
    wraps: dict[str, list[str]] = field(default_factory=dict)
    #: byte offset -> code-point column conversion (None when summarised without the text)
    columns: LineColumns | None = None
    #: device/backend facts for the migration rules across modules (`rules/migration/
    #: project.py`); None for a module without CUDA device or NCCL strings
    migration: Any = None
    #: calls this module makes into cells and functions it imports, with what is known of
    #: their arguments (`rules/graphmode/xcalls.py`)
    xcalls: tuple[Any, ...] = ()
    #: closures: (line, col) of a nested `def` -> that of the function it is defined in
    enclosing: dict[tuple[int, int], tuple[int, int]] = field(default_factory=dict)
    #: (line, col) of a function defining closures -> its own `grad_fn = ms.value_and_grad(
    #: forward)` bindings (as `wraps`) and `net = Net()` bindings (as `instances`)
    local_wraps: dict[tuple[int, int], dict[str, list[str]]] = field(default_factory=dict)
    local_instances: dict[tuple[int, int], dict[str, str]] = field(default_factory=dict)
    #: module-level `Trainer(Net())` / `t = Trainer(net)` of a class of this file -> the
    #: classes of its arguments (index or keyword -> class qualname); the last call wins
    ctor_args: dict[str, dict[int | str, str]] = field(default_factory=dict)
    #: module-level calls of a compiled entry with an instance of a class of this file
    #: (`attn(x, cache)`, `Net()(x, Cache(4))`, `step(x, cache=cache)`): the entry's
    #: qualname (`<module>.Attn.construct`, `<module>.step`) -> the classes of those
    #: arguments (index or keyword -> class qualname); the last call wins
    call_args: dict[str, dict[int | str, str]] = field(default_factory=dict)
    #: (line, col) of a function or method -> its names bound to a grad builder or `ms.jit`
    #: of `self.<attr>` or a name (`grad_fn = ms.value_and_grad(self.forward, ...)` in a
    #: train step's construct -> {"grad_fn": "self.forward"}), the last binding winning:
    #: calling one there compiles what it wraps (`ScopeResolver._local_grad`)
    local_grads: dict[tuple[int, int], dict[str, str]] = field(default_factory=dict)
    #: module-level function name -> its return kind as a formula of its parameters' kinds
    #: (`rules/graphmode/returns.py`), for calls from other modules
    returns: dict[str, Any] = field(default_factory=dict)
    #: first names of absolute imports looked up in the workspace -> the module each found
    #: (`locate`): the summary holds only while each still finds the same one
    located: tuple[tuple[str, str], ...] = ()
    #: the modules it star-imports (`from .consts import *`), as imported names resolve
    star_imports: tuple[str, ...] = ()
    #: module-level constants and what it imports by name or `*` (`xcalls.Exports`): how a
    #: constant another module passes by name is followed to its value (`xcalls.resolve`)
    exports: Any = ()

    def resolve(self, expr: ast.AST) -> str | None:
        """Dotted name of `expr` through imports and aliases (see `qualname`)."""
        return qualname(expr, self.imports, self.module, self.classes, self.functions)


def dotted(expr: ast.AST) -> list[str] | None:
    """`a.b.c` -> ["a", "b", "c"]; None for anything that is not a plain attribute chain."""
    parts: list[str] = []
    while isinstance(expr, ast.Attribute):
        parts.append(expr.attr)
        expr = expr.value
    if not isinstance(expr, ast.Name):
        return None
    parts.append(expr.id)
    parts.reverse()
    return parts


def qualname(
    expr: ast.AST,
    imports: dict[str, str],
    module: str = "",
    classes: dict[str, ClassInfo] | None = None,
    functions: dict[str, FuncDef] | None = None,
) -> str | None:
    """Resolve a name or attribute chain to a dotted name through imports and aliases.

    `ms.nn.Cell` with `import mindspore as ms` -> "mindspore.nn.Cell"; a name defined at module
    level -> "<module>.<name>"; an unshadowed builtin -> "builtins.<name>"; otherwise None.
    """
    if type(expr) is ast.Attribute and type(expr.value) is ast.Name:  # `nn.Dense`
        base = _head(expr.value.id, imports, module, classes, functions)
        if base is None or (base.startswith("builtins.") and not _builtin_has(expr.value.id, expr.attr)):
            return None
        return public_name(f"{base}.{expr.attr}")
    attrs: list[str] = []  # the chain's attributes, last first
    while type(expr) is ast.Attribute:
        attrs.append(expr.attr)
        expr = expr.value
    if type(expr) is not ast.Name:
        return None
    base = _head(expr.id, imports, module, classes, functions)
    if base is None or not attrs:
        return base
    if base.startswith("builtins.") and not _builtin_has(expr.id, attrs[-1]):
        return None
    attrs.append(base)
    attrs.reverse()
    return public_name(".".join(attrs))


def _builtin_has(name: str, attr: str) -> bool:
    """Is `attr` an attribute of the builtin `name` (`str.join`, `dict.fromkeys`)? When it is
    not, `name.attr` reads a local that shadows the builtin: a parameter named `input`, `type`
    or `filter` holding a tensor (`input.masked_fill(...)` in PyTorch ports) is no builtin."""
    return hasattr(getattr(builtins, name, None), attr)


def _head(
    head: str,
    imports: dict[str, str],
    module: str,
    classes: dict[str, ClassInfo] | None,
    functions: dict[str, FuncDef] | None,
) -> str | None:
    """What the first name of a dotted chain stands for (see `qualname`)."""
    if head in imports:
        return imports[head]
    if (classes and head in classes) or (functions and head in functions):
        return f"{module}.{head}" if module else head
    if head in _BUILTINS:
        return f"builtins.{head}"
    return None


def module_name_for(path: str, root: str | None = None) -> str:
    """Dotted module name of `path` relative to `root` (or just its stem)."""
    p = PurePath(path)
    if root:
        try:
            p = p.relative_to(root)
        except ValueError:
            p = PurePath(p.name)
    else:
        p = PurePath(p.name)
    parts = list(p.with_suffix("").parts)
    if parts and parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts) or "__main__"


def _level_of(value: ast.expr, imports: dict[str, str]) -> Level | None:
    """Level named by `ms.STRICT`, "STRICT", 0, "0", `ms.LAX`..."""
    if isinstance(value, ast.Constant):
        v = str(value.value).strip().upper()
    else:
        parts = dotted(value)
        if not parts:
            return None
        v = parts[-1].upper()
    if v in ("STRICT", "0"):
        return "strict"
    if v in ("COMPATIBLE", "1"):
        return "strict"  # COMPATIBLE has no JIT Fallback for host objects either
    if v in ("LAX", "2"):
        return "lax"
    return None


def _is_mindspore_cell(qual: str) -> bool:
    """Is `mindspore.<...>` a Cell class (by name: MindSpore's own classes are not indexed)?"""
    last = qual.rsplit(".", 1)[-1]
    return qual in _CELL_FALLBACK or (
        ".nn." in qual + "." and last[:1].isupper() and last not in ("Tensor", "Parameter")
    )


def _is_mindspore(name: str | None, last: frozenset[str]) -> bool:
    return bool(name) and name.split(".")[0] == "mindspore" and name.rsplit(".", 1)[-1] in last  # type: ignore[union-attr]


def collect_imports(
    tree: ast.Module,
    module: str,
    package: bool = False,
    known: Known | None = None,
    located: dict[str, str] | None = None,
    stars: list[str] | None = None,
) -> dict[str, str]:
    """Local name -> dotted name of what it imports. A relative import is relative to the
    module's package: the module itself when it is a package's `__init__` (`package`), so
    `from .shapes import size` there is `<module>.shapes.size`. With `known` (the modules
    of the workspace), an absolute import names the module Python finds from the file's
    folder (`locate`), each first name looked up going to `located` with its answer."""
    imports: dict[str, str] = {}
    pkg = folder_of(module, package)
    where: Callable[[str], str] = (lambda name: name) if known is None or not pkg else (
        lambda name: _located(name, pkg, known, located)
    )

    # A stack, not a nested recursive function: a closure that refers to itself is a
    # reference cycle, left for the cyclic collector on every run.
    stack: list[Iterator[ast.stmt]] = [iter(tree.body)]
    while stack:
        for st in stack[-1]:
            if type(st) is ast.Import:
                for a in st.names:
                    if a.asname:
                        imports[a.asname] = where(a.name)
                    else:
                        imports[a.name.split(".")[0]] = where(a.name.split(".")[0])
            elif type(st) is ast.ImportFrom:
                base = st.module or ""
                if not st.level and base:
                    base = where(base)
                elif st.level:
                    anchor = pkg.split(".") if pkg else []
                    anchor = anchor[: len(anchor) - (st.level - 1)] if st.level > 1 else anchor
                    base = ".".join([*anchor, base] if base else anchor)
                for a in st.names:
                    if a.name != "*":
                        imports[a.asname or a.name] = public_name(f"{base}.{a.name}") if base else a.name
                    elif stars is not None and base:
                        stars.append(base)
            elif (
                type(st) is ast.Assign
                and len(st.targets) == 1
                and isinstance(st.targets[0], ast.Name)
            ):
                # module-level alias: `nn = ms.nn`, `jit = mindspore.jit`
                target = qualname(st.value, imports)
                if target and not target.startswith("builtins."):
                    imports[st.targets[0].id] = target
            elif (type(st) is ast.If or type(st) is ast.Try or type(st) is ast.With):
                # descend now, in the order bindings happen; this block resumes afterwards
                blocks = [getattr(st, b, None) or [] for b in ("body", "orelse", "finalbody")]
                blocks.extend(h.body for h in getattr(st, "handlers", None) or [])
                stack.append(itertools.chain.from_iterable(blocks))
                break
        else:
            stack.pop()
    return imports


def _located(name: str, folder: str, known: Known, located: dict[str, str] | None) -> str:
    """`locate.locate`, noting the first name's answer in `located`."""
    top = name.partition(".")[0]
    found = locate_top(top, folder, known)
    if located is not None:
        located[top] = found
    return name if found == top else found + name[len(top) :]


def _decorator_call(dec: ast.expr) -> tuple[ast.expr, list[ast.keyword]]:
    if isinstance(dec, ast.Call):
        return dec.func, dec.keywords
    return dec, []


def _definition_lines(tree: ast.Module, text: str) -> list[int]:
    """Lines that can start a function or class definition inside a function (a superset).

    Counting first: when the text holds no more `def` (`class`) words than there are
    definitions outside function bodies, no function holds one, and the words need not be
    looked for line by line ("default" and "classmethod" are not keywords). This relies on
    every definition statement of `tree` spelling its keyword in `text` (the text it was
    parsed from), as the call narrowing of MS143 / MS152 / MS182 does
    (test_definition_word_counts.py).
    """
    outer_defs, outer_classes = _outer_definitions(tree)
    words: tuple[str, ...] = ()
    defs = text.count("def")
    if defs > outer_defs and defs - text.count("default") > outer_defs:
        words += ("def", "async")  # `async def` starts its line with `async`
    classes = text.count("class")
    if classes > outer_classes and classes - text.count("classmethod") > outer_classes:
        words += ("class",)
    return _word_lines(text, words, _LINE_START) if words else []


def _outer_definitions(tree: ast.Module) -> tuple[int, int]:
    """How many function and class statements are not inside a function."""
    defs = classes = 0
    stack: list[ast.stmt] = list(tree.body)
    while stack:
        st = stack.pop()
        t = type(st)
        if t is ast.FunctionDef or t is ast.AsyncFunctionDef:
            defs += 1
        elif t is ast.ClassDef:
            classes += 1
            stack.extend(st.body)  # type: ignore[attr-defined]
        elif t in _NESTING:
            stack.extend(_inner_statements(st))
    return defs, classes


_LINE_START, _CALLABLE = 1, 2  # `_word_lines` filters


def _word_lines(text: str, words: tuple[str, ...], only: int = 0) -> list[int]:
    """Sorted 1-based lines (numbered as `ast` numbers them) where one of `words` occurs;
    with `only=_LINE_START`, as its line's first word; with `only=_CALLABLE`, not followed by
    a name character nor the name a `def` gives (`def helper(` calls nothing). Filters err
    towards keeping. `str.find` runs at C speed: much cheaper than a regex over the whole text."""
    present = checked_words(text)  # (asked before `text` is replaced below)
    if "\r" in text and text.count("\r") != text.count("\r\n"):
        text = text.replace("\r\n", "\n").replace("\r", "\n")  # ast ends lines at lone \r too
    found: list[int] = []
    keep = found.append
    find, rfind = text.find, text.rfind
    for word in words:
        if present is not None and word not in present and "\r" not in word and "\n" not in word:
            continue  # absent (the word index says so without a scan of the text)
        size = len(word)
        i = find(word)
        while i >= 0:
            # (`is_name_char` inlined: a call per occurrence, ~1,000 on a 5,000-line file)
            if not only:
                keep(i)
            elif (
                only == _CALLABLE
                and text[i - 4 : i] == "def "
                and not ((c := text[i - 5 : i - 4]).isalnum() or c == "_")
            ):
                pass  # the name a `def` gives
            elif (c := text[i + size : i + size + 1]).isalnum() or c == "_":
                pass  # part of a longer name
            elif only == _CALLABLE or not text[rfind("\n", 0, i) + 1 : i].strip(" \t\f"):
                keep(i)
            i = find(word, i + size)
    found.sort()
    lines: list[int] = []
    line, pos = 1, 0
    count = text.count
    for i in found:
        line += count("\n", pos, i)
        pos = i
        if not lines or lines[-1] != line:
            lines.append(line)
    return lines


def _packages(name: str) -> list[str]:
    """The dotted prefixes of `name`: "a.b.c" -> ["a.b", "a"]."""
    out: list[str] = []
    i = name.rfind(".")
    while i > 0:
        out.append(name[:i])
        i = name.rfind(".", 0, i)
    return out


def _touches(lines: list[int], first: int, last: int) -> bool:
    """Is one of the sorted `lines` within first..last?"""
    i = bisect.bisect_left(lines, first)
    return i < len(lines) and lines[i] <= last


#: Statement types whose blocks can hold other statements, with those blocks.
_BLOCKS: dict[type, tuple[str, ...]] = {
    ast.FunctionDef: ("body",),
    ast.AsyncFunctionDef: ("body",),
    ast.If: ("body", "orelse"),
    ast.For: ("body", "orelse"),
    ast.AsyncFor: ("body", "orelse"),
    ast.While: ("body", "orelse"),
    ast.With: ("body",),
    ast.AsyncWith: ("body",),
    ast.Try: ("body", "orelse", "finalbody"),
}
if hasattr(ast, "TryStar"):
    _BLOCKS[ast.TryStar] = ("body", "orelse", "finalbody")


#: Statement types `statements` looks into (not function or class bodies).
_NESTING = frozenset({*_BLOCKS, ast.Match}) - {ast.FunctionDef, ast.AsyncFunctionDef}


def _inner_statements(st: ast.stmt) -> list[ast.stmt]:
    """The statements directly inside the blocks of `st` (none for a simple statement)."""
    names = _BLOCKS.get(type(st))
    if names is None and not isinstance(st, ast.Match):
        return []
    blocks: list[ast.stmt] = []
    for name in names or ():
        blocks.extend(getattr(st, name))
    for h in getattr(st, "handlers", None) or ():
        blocks.extend(h.body)
    for case in getattr(st, "cases", None) or ():
        blocks.extend(case.body)
    return blocks


def _may_define(fn: FuncDef, def_lines: list[int] | None) -> bool:
    """Can the body of `fn` hold a definition (a `def` / `class` line after its header)?"""
    if not def_lines:
        return def_lines is None
    return _touches(def_lines, fn.lineno + 1, fn.end_lineno or fn.lineno)


def _nested_definitions(tree: ast.Module, def_lines: list[int] | None = None) -> Iterator[ast.stmt]:
    """Function and class statements nested inside functions (statements only, no
    expressions). Methods directly in a class body are skipped. `def_lines` (the lines that
    can start a `def` / `class`; None: unknown) lets the scan skip statements that hold
    none, which on most files is every function body."""
    stack: list[tuple[ast.stmt, bool]] = [(st, False) for st in reversed(tree.body)]
    while stack:
        st, nested = stack.pop()
        if def_lines is not None and not _touches(def_lines, st.lineno, st.end_lineno or st.lineno):
            continue  # no definition can start inside this statement
        t = type(st)
        if t is ast.ClassDef:
            if nested:
                yield st
            # methods belong to their class; look for definitions inside the methods
            for item in reversed(st.body):  # type: ignore[attr-defined]
                if type(item) is ast.FunctionDef or type(item) is ast.AsyncFunctionDef:
                    if _may_define(item, def_lines):
                        stack.extend((b, True) for b in reversed(item.body))
                else:
                    stack.append((item, nested))
            continue
        is_function = t is ast.FunctionDef or t is ast.AsyncFunctionDef
        if is_function and nested:
            yield st
        if is_function and not _may_define(st, def_lines):  # type: ignore[arg-type]
            continue
        inner = nested or is_function
        stack.extend((b, inner) for b in reversed(_inner_statements(st)))


def summarize(
    tree: ast.Module,
    path: str,
    module: str,
    text: str | None = None,
    *,
    lazy: bool = False,
    known: Known | None = None,
) -> ModuleInfo:
    """Build the ModuleInfo of a parsed file (for the project index: with the text, also
    the migration rules' facts about its device values; with `lazy`, those facts are made
    when first read, see `project.PendingFacts`). `known` tells the workspace's modules,
    which absolute imports resolve against (`locate`)."""
    info = _summarize(tree, path, module, text, known)[0]
    from npu_lsp.rules.graphmode.xcalls import exports, outgoing

    info.xcalls = outgoing(tree, info, text)
    info.exports = exports(tree, info, text)
    from npu_lsp.rules.graphmode.returns import summarise

    info.returns = summarise(tree, info, text)
    if text is not None:
        from npu_lsp.rules.migration.project import module_facts, pending_facts

        info.migration = (pending_facts if lazy else module_facts)(tree, info, text)
    return info


def _summarize(
    tree: ast.Module, path: str, module: str, text: str | None, known: Known | None = None
) -> tuple[ModuleInfo, list[int] | None]:
    """`summarize`, plus the lines that can start a definition (None without the text)."""
    located: dict[str, str] = {}
    stars: list[str] = []
    imports = collect_imports(tree, module, PurePath(path).name == "__init__.py", known, located, stars)
    info = ModuleInfo(path, module, imports, {}, {}, {}, None, None, {})
    info.located = tuple(located.items())
    info.star_imports = tuple(stars)
    if text is not None:
        info.columns = LineColumns(text)
    for st in tree.body:
        if (type(st) is ast.FunctionDef or type(st) is ast.AsyncFunctionDef):
            info.functions[st.name] = st
        elif type(st) is ast.ClassDef:
            info.classes[st.name] = ClassInfo(st.name, st, [], {}, False)
    # Classes and functions defined inside functions (test-style code: `def test_x():` holding
    # a Cell and calling it). Top-level names win on clashes; methods stay with their class.
    def_lines = _definition_lines(tree, text) if text is not None else None
    for st in _nested_definitions(tree, def_lines):
        if isinstance(st, ast.ClassDef):
            info.classes.setdefault(st.name, ClassInfo(st.name, st, [], {}, False))
        elif isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef)):
            info.functions.setdefault(st.name, st)
    seen: dict[tuple[str, str], str | None] = {}
    outside = frozenset(name for name, target in info.imports.items() if not target.startswith("mindspore"))
    for cls in info.classes.values():
        node = cls.node
        for e in node.bases:
            if b := info.resolve(e):
                cls.bases.append(b)
        cls.jit_class = bool(node.decorator_list) and any(
            _is_mindspore(info.resolve(_decorator_call(d)[0]), _JIT_CLASS)
            for d in node.decorator_list
        )
        methods = cls.methods
        for st in node.body:
            if type(st) is ast.FunctionDef or type(st) is ast.AsyncFunctionDef:
                methods[st.name] = st
        init = cls.methods.get("__init__")
        if init is not None:
            held: list[ast.Assign] = []
            cls.init_assigns = InitAssigns(outside)
            _note_attr_types(info, init.body, cls.attr_types, seen, held, cls.init_assigns)
            if held:
                _note_init_bindings(info, init, cls, held)
    _scan_module_calls(tree, info, text)
    _note_closure_scopes(tree, info, def_lines)
    module_level = set(info.ctor_args)
    _note_nested_ctor_args(tree, info, text)
    _note_local_bindings(tree, info, text, module_level)
    return info, def_lines


def _note_nested_ctor_args(tree: ast.Module, info: ModuleInfo, text: str | None) -> None:
    """`ctor_args` of calls made inside functions (`def main(): trainer = Trainer(Net())`),
    for the classes whose compiled methods may call an argument kept on `self` (a class
    with a `jit` method or grad builder bound in `__init__`); module-level calls win."""
    wanted = tuple(
        c.name
        for c in info.classes.values()
        if c.attr_params
        and (c.attr_wraps or c.jit_methods or any(m.decorator_list for m in c.methods.values()))
    )
    if not wanted:
        return
    lines = _word_lines(text, wanted, _CALLABLE) if text is not None else None
    module_level = set(info.ctor_args)
    for node, _cls in _nodes_near(tree, lines):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in wanted
            and node.func.id not in module_level
        ):
            _note_ctor_args(node, info)



#: the words `_note_local_bindings` looks for: jit and grad builders by their last name
#: ("grad" also ends "value_and_grad")
_LOCAL_WORDS = ("grad", "jit", "ms_function", "GradOperation")


def _note_local_bindings(tree: ast.Module, info: ModuleInfo, text: str | None, module_level: set[str]) -> None:
    """Networks built and compiled inside a function (`def train(): net = Net(); step =
    TrainStep(net, opt); step = ms.jit(step); step(x, y)`, `nn.TrainOneStepCell(
    nn.WithLossCell(net, loss_fn), opt)`, `ms.jit(net.construct)`): the function's own
    `net = Net()` / wrapper bindings (`local_instances` / `local_wraps`, as closures see
    them), `ms.jit` of such a name as a root (`jit_wrapped["name@line:col"]`, resolved in
    that function), the classes of its local instances passed to constructors of this file's
    classes (`ctor_args`; calls made at module level win), and the names bound to a grad
    builder or `ms.jit` in any function or method (`local_grads`)."""
    # constructors that may keep an argument on `self` (`self.net = net`)
    held = tuple(c.name for c in info.classes.values() if c.attr_params)
    lines = _word_lines(text, (*_LOCAL_WORDS, *held), _CALLABLE) if text is not None else None
    if lines is not None and not lines:
        return
    methods = [m for c in info.classes.values() for n, m in c.methods.items() if n != "__init__"]
    for fn in itertools.chain(info.functions.values(), methods):
        if lines is not None and not _touches(lines, fn.lineno, fn.end_lineno or fn.lineno):
            continue
        grads: dict[str, str] = {}
        for st in _statements(fn.body):
            if (
                type(st) is ast.Assign
                and len(st.targets) == 1
                and type(t := st.targets[0]) is ast.Name
                and type(v := st.value) is ast.Call
                and v.args
                and _is_mindspore(info.resolve(v.func), _HELD_WRAPPERS)
            ):
                a0 = v.args[0]
                attr = self_attr(a0)
                wrapped = f"self.{attr}" if attr is not None else a0.id if type(a0) is ast.Name else None
                if wrapped is not None:
                    grads[t.id] = wrapped
                else:
                    grads.pop(t.id, None)
        if grads:
            info.local_grads[(fn.lineno, fn.col_offset)] = grads
    for fn in info.functions.values():
        if lines is not None and not _touches(lines, fn.lineno, fn.end_lineno or fn.lineno):
            continue
        key = (fn.lineno, fn.col_offset)
        instances: dict[str, str] = {}
        wraps: dict[str, list[str]] = {}
        jits: dict[str, dict[str, ast.expr]] = {}
        for st in _statements(fn.body):
            if type(st) not in (ast.Assign, ast.Expr):
                continue
            value = st.value  # type: ignore[attr-defined]
            for call in find_branches(value, _CALL_KIND):
                assert isinstance(call, ast.Call)
                if isinstance(call.func, ast.Name) and call.func.id in info.classes and call.func.id not in module_level:
                    _note_ctor_args(call, info, instances)
                if not (call.args and _is_mindspore(info.resolve(call.func), _JIT_NAMES)):
                    continue
                a0 = call.args[0]
                kws = {k.arg: k.value for k in call.keywords if k.arg}
                if isinstance(a0, ast.Name) and (a0.id in instances or a0.id in wraps):
                    jits[a0.id] = kws
                elif isinstance(a0, ast.Attribute) and isinstance(a0.value, ast.Name) and a0.value.id in instances:
                    jits[a0.value.id if a0.attr == "construct" else f"{a0.value.id}.{a0.attr}"] = kws
                elif (
                    isinstance(a0, ast.Attribute)
                    and a0.attr == "construct"
                    and isinstance(a0.value, ast.Name)
                    and a0.value.id in wraps
                ):
                    # `step = nn.TrainOneStepCell(nn.WithLossCell(net, loss), opt);
                    # ms.jit(step.construct)`: compiles what `step` wraps, as `ms.jit(step)`
                    jits[a0.value.id] = kws
            if type(st) is not ast.Assign or type(value) is not ast.Call:
                continue
            names = [x.id for x in st.targets if isinstance(x, ast.Name)]
            inner = _wrapped_names(value, info)
            callee = None if inner else _copied_builder(info.resolve(value.func), value, instances)
            for n in names:
                if inner and inner != [n]:  # `step = ms.jit(step)` keeps what `step` is
                    wraps[n] = inner
                    instances.pop(n, None)
                elif callee:
                    instances[n] = callee
                    wraps.pop(n, None)
        if not jits:
            continue
        if wraps:
            info.local_wraps.setdefault(key, {}).update(wraps)
        if instances:
            info.local_instances.setdefault(key, {}).update(instances)
        for name, kws in jits.items():
            info.jit_wrapped[f"{name}@{key[0]}:{key[1]}"] = kws


def _note_init_bindings(info: ModuleInfo, init: FuncDef, cls: ClassInfo, held: list[ast.Assign]) -> None:
    """What `__init__` binds on `self` that compiled code may call: a grad builder or
    `ms.jit` of a method or function (`self.grad_fn = ms.value_and_grad(self.forward, ...)`,
    `self.step = ms.jit(self._step)`), or an argument (`self.net = net`). `held`: the
    candidate assignments `_note_attr_types` set aside, in source order."""
    positional, keyword_only = _init_parameters(init)
    for st in held:
        if len(st.targets) != 1:
            continue
        attr = self_attr(st.targets[0])
        if attr is None:
            continue
        value = st.value
        if isinstance(value, ast.Name):
            if value.id in positional or value.id in keyword_only:
                cls.attr_params[attr] = value.id
            continue
        if not isinstance(value, ast.Call) or not value.args:
            continue
        func = value.func
        name = info.resolve(func)
        if not name or name.split(".")[0] != "mindspore":
            continue
        last = name.rsplit(".", 1)[-1]
        first = value.args[0]
        method = self_attr(first)
        if last in _JIT_NAMES and method is not None:
            cls.jit_methods[method] = {k.arg: k.value for k in value.keywords if k.arg}
        elif last in _GRAD_BUILDERS or last in _JIT_NAMES:
            if method is not None:
                cls.attr_wraps[attr] = [f"self.{method}"]
            elif isinstance(first, ast.Name):
                cls.attr_wraps[attr] = [first.id]


def _init_parameters(init: FuncDef) -> tuple[list[str], set[str]]:
    """The positional parameters of `__init__` after `self`, and its keyword-only ones."""
    a = init.args
    return [p.arg for p in (*a.posonlyargs, *a.args)][1:], {p.arg for p in a.kwonlyargs}


def _statements(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """The statements of a body in source order, into compound statements, not into nested
    function or class bodies."""
    stack = list(reversed(body))
    while stack:
        st = stack.pop()
        yield st
        if type(st) in _NESTING:
            stack.extend(reversed(_inner_statements(st)))


def _note_closure_scopes(tree: ast.Module, info: ModuleInfo, def_lines: list[int] | None) -> None:
    """For each function defining closures (`def train(): ... @ms.jit def step():`), the
    function each nested definition is made in (`info.enclosing`) and the function's own
    `grad_fn = ms.value_and_grad(forward)` / `net = Net()` bindings, which those closures
    call by name. Only statements that can hold a `def` are walked (see `_nested_definitions`)."""
    stack: list[tuple[ast.stmt, tuple[int, int] | None]] = [(st, None) for st in reversed(tree.body)]
    while stack:
        st, outer = stack.pop()
        if def_lines is not None and not _touches(def_lines, st.lineno, st.end_lineno or st.lineno):
            continue
        t = type(st)
        if t is ast.ClassDef:
            for item in reversed(st.body):  # type: ignore[attr-defined]
                stack.append((item, outer))
            continue
        if t is not ast.FunctionDef and t is not ast.AsyncFunctionDef:
            stack.extend((b, outer) for b in reversed(_inner_statements(st)))
            continue
        key = (st.lineno, st.col_offset)
        if outer is not None:
            info.enclosing[key] = outer
        if not _may_define(st, def_lines):  # type: ignore[arg-type]
            continue
        wraps: dict[str, list[str]] = {}
        instances: dict[str, str] = {}
        inner: list[ast.stmt] = []
        for sub in _statements(st.body):  # type: ignore[attr-defined]
            if type(sub) in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
                inner.append(sub)
            elif isinstance(sub, ast.Assign) and isinstance(sub.value, ast.Call):
                names = [x.id for x in sub.targets if isinstance(x, ast.Name)]
                wrapped = _wrapped_names(sub.value, info)
                callee = None if wrapped else _copied_builder(info.resolve(sub.value.func), sub.value, instances)
                for n in names:
                    if wrapped:
                        wraps[n] = wrapped
                    elif callee:
                        instances[n] = callee
        if not inner:
            continue
        if wraps:
            info.local_wraps[key] = wraps
        if instances:
            info.local_instances[key] = instances
        stack.extend((b, key) for b in reversed(inner))


def _note_attr_types(
    info: ModuleInfo,
    body: list[ast.stmt],
    attr_types: dict[str, str],
    seen: dict[tuple[str, str], str | None],
    held: list[ast.Assign],
    top: InitAssigns | None = None,
) -> None:
    """`self.a = SomeClass(...)` in an `__init__` body (statements in source order, nested
    function and class bodies left out, as `statements` yields them) -> attr_types["a"].
    `seen` remembers callees such as `nn.Dense` across the classes of a file. Assignments
    of a name or of a grad builder / `jit` call go to `held` (`_note_init_bindings`).
    `top`, given for the body itself (not for its blocks), gets what `InitAssigns` holds."""
    assign_t, call_t, attr_t, name_t = ast.Assign, ast.Call, ast.Attribute, ast.Name
    # (an empty set below `top`: the blocks' calls then fail the one membership test)
    outside = top.outside if top is not None else frozenset()
    for sub in body:
        t = type(sub)
        if t is not assign_t:
            if t in _NESTING:
                _note_attr_types(info, _inner_statements(sub), attr_types, seen, held)
            continue
        value = sub.value  # type: ignore[attr-defined]
        if type(value) is not call_t:
            if type(value) is name_t:
                held.append(sub)  # type: ignore[arg-type]
            elif top is not None and (type(value) is ast.BoolOp or type(value) is ast.IfExp):
                top.either.append(sub)  # type: ignore[arg-type]
            continue
        func = value.func
        # the spelling and the memo key from one test of the callee's type (only a name
        # has an `id`); the import's last part only for a spelling imported at all
        ft = type(func)
        if ft is attr_t:
            spelled = func.attr  # type: ignore[attr-defined]
            if type(func.value) is name_t:  # type: ignore[attr-defined]
                key: tuple[str, str] | None = (func.value.id, spelled)  # type: ignore[attr-defined]
                if key[0] in outside:  # type: ignore[index]
                    top.outside_calls.append(sub)  # type: ignore[union-attr,arg-type]
            else:
                key = None
                if top is not None and _root_name(func) in outside:
                    top.outside_calls.append(sub)  # type: ignore[arg-type]
        elif ft is name_t:
            spelled = func.id  # type: ignore[attr-defined]
            key = (spelled, "")
            if spelled in outside:
                top.outside_calls.append(sub)  # type: ignore[union-attr,arg-type]
        else:
            spelled, key = "", None
        imported = info.imports.get(spelled)
        if spelled in _HELD_WRAPPERS or (imported is not None and imported.rpartition(".")[2] in _HELD_WRAPPERS):
            held.append(sub)  # type: ignore[arg-type]
        if key is None:
            callee = info.resolve(func)
        elif key in seen:
            callee = seen[key]
        else:
            callee = seen[key] = info.resolve(func)
        if not callee:
            continue
        for target in sub.targets:  # type: ignore[attr-defined]
            if (
                type(target) is attr_t
                and type(target.value) is name_t
                and target.value.id == "self"
            ):
                attr_types[target.attr] = callee


def _root_name(e: ast.expr) -> str:
    """The name an attribute chain starts from (`a` of `a.b.c`); "" when it starts elsewhere."""
    while type(e) is ast.Attribute:
        e = e.value
    return e.id if type(e) is ast.Name else ""


#: Words on the lines `_scan_module_calls` looks at ("jit" also finds "set_jit_config").
_KEYWORDS = ("set_context", "jit", "ms_function", ENV_VAR)


def _keyword_lines(text: str | None) -> list[int] | None:
    """Sorted 1-based lines that mention a level/jit keyword (None: scan everything)."""
    return None if text is None else _word_lines(text, _KEYWORDS)


def _nodes_near(
    tree: ast.Module, lines: list[int] | None
) -> Iterator[tuple[ast.AST, ast.ClassDef | None]]:
    """(node, enclosing class) for nodes whose line range touches one of `lines`; all nodes
    when `lines` is None. Skipping untouched subtrees keeps this pass cheap on big files."""
    stack: list[tuple[ast.AST, ast.ClassDef | None]] = [(tree, None)]
    while stack:
        node, cls = stack.pop()
        yield node, cls
        for child in child_nodes(node):
            start = getattr(child, "lineno", None)
            if lines is not None and start is not None:
                i = bisect.bisect_left(lines, start)
                if i == len(lines) or lines[i] > (getattr(child, "end_lineno", None) or start):
                    continue
            stack.append((child, child if isinstance(child, ast.ClassDef) else cls))


def module_statements(tree: ast.Module) -> Iterator[ast.stmt]:
    """Top-level statements, looking into module-level if/try/with blocks."""
    stack: list[ast.stmt] = list(reversed(tree.body))
    while stack:
        st = stack.pop()
        yield st
        if (type(st) is ast.If or type(st) is ast.Try or type(st) is ast.With):
            inner: list[ast.stmt] = [
                *st.body,
                *getattr(st, "orelse", []),
                *getattr(st, "finalbody", []),
            ]
            for h in getattr(st, "handlers", []) or []:
                inner.extend(h.body)
            stack.extend(reversed(inner))


#: MindSpore's grad builders: `ms.grad(fn)`, `ms.value_and_grad(fn)`, `ops.grad(fn)`
_GRAD_BUILDERS = frozenset({"grad", "value_and_grad"})
#: Grad-operation classes called on a function: `ops.GradOperation()(fn)`
_GRAD_OPERATIONS = frozenset({"GradOperation", "_Grad"})
#: the calls `_note_init_bindings` looks for (grad builders and `jit`), by their last name
_HELD_WRAPPERS = _GRAD_BUILDERS | _JIT_NAMES


#: calls whose result is an object of their argument's class (shared by the graph rules)
COPY_CALLS = frozenset({"copy.copy", "copy.deepcopy"})


def _copied_builder(callee: str | None, value: ast.Call, instances: dict[str, str]) -> str | None:
    """What built the object `value` makes: for `copy.deepcopy(net)` (or `copy.copy`) of a
    name the same scope bound to a call, what built `net` (a copy has its original's class: a
    deep-copied Cell is a Cell, and compiled as one; written/heldout22a
    `r2_dqn_deepcopy_target_global`), else `callee`."""
    if callee in COPY_CALLS and len(value.args) == 1 and not value.keywords:
        arg = value.args[0]
        if isinstance(arg, ast.Name) and arg.id in instances:
            return instances[arg.id]
    return callee


def _wrapped_names(value: ast.Call, info: ModuleInfo) -> list[str]:
    """The names a grad builder or a MindSpore cell wrapper call takes as what it runs
    (`ms.value_and_grad(forward, ...)`, `ops.GradOperation()(net)`, `nn.WithLossCell(net,
    loss_fn)`, `ms.jit(step)`); [] for any other call."""
    func = value.func
    name = info.resolve(func)
    inner: str | None = None
    if isinstance(func, ast.Call):
        inner = info.resolve(func.func)
    elif isinstance(func, ast.Name):  # `grad_op = ops.GradOperation()` ... `grad_op(net)`
        inner = info.instances.get(func.id)
    if inner is not None or isinstance(func, ast.Call):
        if inner and inner.split(".")[0] == "mindspore" and inner.rsplit(".", 1)[-1] in _GRAD_OPERATIONS:
            return [a.id for a in value.args[:1] if isinstance(a, ast.Name)]
        return []
    if not name or name.split(".")[0] != "mindspore":
        return []
    last = name.rsplit(".", 1)[-1]
    if last in _GRAD_BUILDERS or last in _JIT_NAMES:
        return [a.id for a in value.args[:1] if isinstance(a, ast.Name)]
    if _is_mindspore_cell(name):  # WithLossCell(net, loss_fn), TrainOneStepCell(wrapped, opt)
        args = [*value.args, *(k.value for k in value.keywords)]
        return [n for a in args for n in _wrapper_argument(a, info)]
    return []


#: prefix of a wrapped "name" that is a user Cell built in the wrapper's own arguments
#: (`TrainOneStepCell(LossNet(net), MySGD(params))`): `_BUILT + qualified class name`
_BUILT = "()"


def _wrapper_argument(arg: ast.expr, info: ModuleInfo) -> list[str]:
    """What one argument of a MindSpore cell wrapper makes it run: a name, a user Cell
    built in place (`MySGD(params)`, as `_BUILT` + its class), or what a wrapper built in
    place wraps (`nn.WithLossCell(net, loss)` inside `TrainOneStepCell(...)`)."""
    if isinstance(arg, ast.Name):
        return [arg.id]
    if not isinstance(arg, ast.Call) or isinstance(arg.func, ast.Call):
        return []
    q = info.resolve(arg.func)
    if not q:
        return []
    if q.split(".")[0] == "mindspore":
        return _wrapped_names(arg, info)
    return [_BUILT + q]


def _scan_module_calls(tree: ast.Module, info: ModuleInfo, text: str | None = None) -> None:
    """Find set_context / set_jit_config / ms.jit(fn) / os.environ level settings anywhere."""
    var_types: dict[str, str] = {}
    modes = _Modes()
    flags: dict[str, object] = {}  # module-level `USE_V2 = True`, in source order
    for st in module_statements(tree):
        if type(st) is ast.Assign and (alias := _class_alias(st.value, info, flags)):
            # `Model = NetV2` / `Net = NetV2` / `Model = NetV2 if USE_V2 else Net` (a class
            # rebound before the network is built): later `Model()` makes the class named
            # last, as an import alias would
            for t in st.targets:
                if isinstance(t, ast.Name) and t.id not in info.functions:
                    info.imports[t.id] = alias
            continue
        if type(st) is ast.Assign:
            for t in st.targets:
                if isinstance(t, ast.Name):
                    if isinstance(st.value, ast.Constant):
                        flags[t.id] = st.value.value
                    else:
                        flags.pop(t.id, None)
        value = st.value if (type(st) is ast.Assign or type(st) is ast.Expr) else None
        if type(value) is ast.Call and type(value.func) is ast.Name and value.func.id in info.classes:
            _note_ctor_args(value, info)
        if type(value) is ast.Call:
            _note_call_args(value, info)
        if type(st) is ast.Assign and type(st.value) is ast.Call:
            callee = _copied_builder(info.resolve(st.value.func), st.value, info.instances)
            wrapped = _wrapped_names(st.value, info)
            for t in st.targets:
                if isinstance(t, ast.Name) and wrapped == [t.id]:
                    continue  # `step = ms.jit(step)` keeps what `step` is
                if isinstance(t, ast.Name) and callee:
                    var_types[t.id] = callee
                    info.instances[t.id] = callee
                if isinstance(t, ast.Name) and wrapped:
                    info.wraps[t.id] = wrapped
        if not isinstance(st, _DEFINITIONS):
            modes.note_statement(st, info)
    # `fast = ms.jit(fn)` whose name is never read again compiles nothing (MindSpore
    # compiles when the wrapper is called); `fn` stays a root when wrapped elsewhere too
    unused: Counter[str] = Counter()
    jit_wraps: Counter[str] = Counter()
    for node, cls in _nodes_near(tree, _keyword_lines(text)):
        if isinstance(node, ast.Assign):
            if (
                text is not None
                and isinstance(node.value, ast.Call)
                and node.value.args
                and isinstance(node.value.args[0], ast.Name)
                and len(node.targets) == 1
                and isinstance(t0 := node.targets[0], ast.Name)
                and _is_mindspore(info.resolve(node.value.func), _JIT_NAMES)
                and _mentions(text, t0.id) == 1
            ):
                unused[node.value.args[0].id] += 1
            for t in node.targets:
                if (
                    isinstance(t, ast.Subscript)
                    and info.resolve(t.value) == "os.environ"
                    and isinstance(t.slice, ast.Constant)
                    and t.slice.value == ENV_VAR
                ):
                    info.env_level = _level_of(node.value, info.imports)
            continue
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = info.resolve(func)
        if name and name.split(".")[0] == "mindspore":
            last = name.rsplit(".", 1)[-1]
            if last == "set_context":
                _scan_set_context(node, info, modes)
            elif last in _JIT_NAMES and node.args and isinstance(node.args[0], ast.Name):
                info.jit_wrapped[node.args[0].id] = {k.arg: k.value for k in node.keywords if k.arg}
                jit_wraps[node.args[0].id] += 1
            elif (
                last in _JIT_NAMES
                and node.args
                and isinstance(a0 := node.args[0], ast.Attribute)
                and a0.attr == "construct"
                and isinstance(a0.value, ast.Name)
            ):  # `ms.jit(net.construct)`: the instance's construct (`_roots`)
                info.jit_wrapped[a0.value.id] = {k.arg: k.value for k in node.keywords if k.arg}
            elif (
                last in _JIT_NAMES
                and node.args
                and isinstance(a0 := node.args[0], ast.Attribute)
                and isinstance(a0.value, ast.Name)
            ):  # `ms.jit(trainer.step)`: that method of the instance's class (`_roots`)
                info.jit_wrapped[f"{a0.value.id}.{a0.attr}"] = {k.arg: k.value for k in node.keywords if k.arg}
            elif last in _JIT_NAMES and node.args and (made := _jit_target(node.args[0], info)):
                # `ms.jit(Net())`: the construct of the Cell made there; `ms.jit(ms.grad(net))`
                # / `ms.jit(ms.grad(Net()))`: what the gradient differentiates (`_roots`)
                info.jit_wrapped[made] = {k.arg: k.value for k in node.keywords if k.arg}
        if not (isinstance(func, ast.Attribute) and func.attr == "set_jit_config" and node.args):
            continue
        level = _jit_config_level(node.args[0], info)
        if level is None:
            continue
        if isinstance(func.value, ast.Name) and func.value.id == "self":
            if cls is not None:  # `self.set_jit_config(...)` inside a class: that class
                info.cell_config_levels[f"{info.module}.{cls.name}"] = level
            continue
        owner = "*"
        if isinstance(func.value, ast.Name) and func.value.id in var_types:
            owner = var_types[func.value.id]
        elif isinstance(func.value, ast.Call):
            owner = info.resolve(func.value.func) or "*"
        info.cell_config_levels[owner] = level
    for name, n in unused.items():
        if jit_wraps[name] == n:
            info.jit_wrapped.pop(name, None)
    info.graph_mode = modes.decide(info)
    info.default_mode = modes.default
    info.mode_kind = mode_kind(info.graph_mode, modes.default, modes.runs, modes.unknown)


_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom)


def _jit_target(arg: ast.expr, info: ModuleInfo) -> str | None:
    """The `info.jit_wrapped` key of a call `ms.jit` is given: `Net()` -> the Cell made
    there (`pkg.Net()`); a gradient built in place (`ms.grad(net)`, `ms.value_and_grad(
    Net(), ...)`, `ops.GradOperation()(net)`) -> what it differentiates, as a name or a
    Cell made there (the graph compiles the differentiated function with its custom
    `bprop`s: written/heldout30b `bprop_returns_single_tensor_not_tuple`,
    `ms.jit(ms.grad(Net()))(x)`); None for anything else."""
    for _ in range(3):
        if not isinstance(arg, ast.Call):
            return None
        wrapped = _wrapped_names(arg, info)
        made = info.resolve(arg.func)
        inner = info.resolve(arg.func.func) if isinstance(arg.func, ast.Call) else None
        grad = any(
            q is not None and q.split(".")[0] == "mindspore" and q.rsplit(".", 1)[-1] in _GRAD_BUILDERS | _GRAD_OPERATIONS
            for q in (made, inner)
        )
        if not grad:
            return f"{made}()" if made else None
        if wrapped:
            return wrapped[0]
        if not arg.args:
            return None
        arg = arg.args[0]
    return None


def _class_alias(value: ast.expr, info: ModuleInfo, flags: dict[str, object]) -> str | None:
    """The class a module-level `Model = <value>` names: a class of the file or an imported
    name, also through a conditional expression whose test is a constant or a name bound
    to one at module level (`NetV2 if USE_V2 else Net`); None for anything else."""
    if isinstance(value, ast.IfExp):
        test = value.test
        negate = isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not)
        if negate:
            test = test.operand  # type: ignore[attr-defined]
        known: object
        if isinstance(test, ast.Constant):
            known = test.value
        elif isinstance(test, ast.Name) and test.id in flags:
            known = flags[test.id]
        else:
            return None
        return _class_alias(value.body if bool(known) != negate else value.orelse, info, flags)
    if not isinstance(value, (ast.Name, ast.Attribute)):
        return None
    alias = info.resolve(value)
    if alias is None:
        return None
    module, _, name = alias.rpartition(".")
    if alias in info.imports.values() or (module == info.module and name in info.classes):
        return alias
    return None


def _mentions(text: str, name: str) -> int:
    """How many times `name` occurs in `text` as a whole word."""
    return len(re.findall(rf"(?<![\w.]){re.escape(name)}(?!\w)", text))


def _note_ctor_args(call: ast.Call, info: ModuleInfo, local: dict[str, str] | None = None) -> None:
    """`Trainer(Net(), opt=...)` / `Trainer(net)` (net a module-level instance, or one of
    `local`, the instances bound in the function making the call): the classes of the
    arguments, for `self.net = net` in the class's `__init__`."""
    args: dict[int | str, str] = {}
    items: list[tuple[int | str, ast.expr]] = list(enumerate(call.args))
    items.extend((k.arg, k.value) for k in call.keywords if k.arg)
    for key, arg in items:
        if isinstance(arg, ast.Call):
            q = info.resolve(arg.func)
        elif isinstance(arg, ast.Name):
            q = (local.get(arg.id) if local else None) or info.instances.get(arg.id)
        else:
            q = None
        if q:
            args[key] = q
    assert isinstance(call.func, ast.Name)
    info.ctor_args[call.func.id] = args


def _note_call_args(value: ast.Call, info: ModuleInfo) -> None:
    """`call_args` of the calls in a module-level statement's value (`print(attn(x,
    cache).shape)` too): a module-level instance of a class of the file called
    (`attn(...)`, its `construct`), a class of the file instantiated and called at once
    (`Net()(...)`), or a function of the file (`step(...)`), given instances of classes of
    the file, by name or made in the call (`Cache(4)`). Only calls that pass one count."""
    for node in ast.walk(value):
        if type(node) is not ast.Call or not (node.args or node.keywords):
            continue
        f = node.func
        entry: str | None = None
        if type(f) is ast.Name:
            if f.id in info.instances:
                made = info.instances[f.id]
                if made.rpartition(".")[0] == info.module:
                    entry = f"{made}.construct"
            elif f.id in info.functions:
                entry = f"{info.module}.{f.id}"
        elif type(f) is ast.Call and type(f.func) is ast.Name and f.func.id in info.classes:
            entry = f"{info.module}.{f.func.id}.construct"
        if entry is None:
            continue
        args: dict[int | str, str] = {}
        items: list[tuple[int | str, ast.expr]] = list(enumerate(node.args))
        items.extend((k.arg, k.value) for k in node.keywords if k.arg)
        for key, arg in items:
            q: str | None = None
            if type(arg) is ast.Name:
                q = info.instances.get(arg.id)
            elif type(arg) is ast.Call and type(arg.func) is ast.Name and arg.func.id in info.classes:
                q = f"{info.module}.{arg.func.id}"
            if q is not None and q.rpartition(".")[0] == info.module:
                args[key] = q
        if args:
            info.call_args[entry] = args


@dataclass
class _Modes:
    """The `set_context(mode=...)` calls of a file, to decide its mode (`npu_lsp.modes`).

    MindSpore uses the mode set last before a Cell is called: at module level, the mode in
    effect at the first or the last module-level call of a network instance (`net(x)`,
    `Net()(x)`; graph when either is), or the last setting when no such call is visible;
    a setting after the last call applies to none (probes `fix36a_graph_after_call*`). A
    GRAPH_MODE set inside a function (test-style code sets it before calling there) counts
    as graph mode. With no literal mode at all, MindSpore's default (PYNATIVE_MODE) holds
    for a script that runs itself (`if __name__ == "__main__":`, or a module-level call of
    its own functions, classes or instances); a module that runs nothing, or a mode read
    from a variable, is unknown (None)."""

    #: (line, col, graph?) of module-level settings, in any order
    module: list[tuple[int, int, bool]] = field(default_factory=list)
    nested_graph: bool = False
    nested_pynative: bool = False
    #: a `set_context(mode=...)` whose value is not a literal mode (`args.mode`, a variable)
    unknown: bool = False
    #: the file runs its network itself (see the class doc)
    runs: bool = False
    #: own functions whose result a module-level assignment binds (`loss = step(x)`): the
    #: file runs when one of them is a jit function
    assigned_calls: set[str] = field(default_factory=set)
    #: positions of the first and last module-level network calls (None: none seen)
    first_call: tuple[int, int] | None = None
    last_call: tuple[int, int] | None = None
    #: set by `decide`: the mode is MindSpore's default, no literal setting applies
    default: bool = False
    _top_calls: set[int] = field(default_factory=set)

    def note_statement(self, st: ast.stmt, info: ModuleInfo) -> None:
        """Remember a module-level statement's own calls: set_context calls are module-level
        settings; a call of a name bound to an instance (or of `X(...)`) is a network call."""
        if type(st) is ast.Expr and type(st.value) is ast.Call:
            self._top_calls.add(id(st.value))
        if type(st) is ast.If and not self.runs and _is_main_guard(st.test):
            self.runs = True
        running = type(st) in _RUNNING_STATEMENTS
        for part in _statement_expressions(st):
            for node in find_branches(part, _CALL_KIND):
                assert isinstance(node, ast.Call)
                f = node.func
                if not self.runs and running and _runs_own_code(f, info):
                    self.runs = True
                elif not running and type(f) is ast.Name and f.id in info.functions:
                    self.assigned_calls.add(f.id)
                if isinstance(f, ast.Name):
                    cls = info.instances.get(f.id)
                else:
                    cls = info.resolve(f.func) if isinstance(f, ast.Call) else None
                if cls is not None and _may_be_network(cls):
                    self.runs = True
                    pos = _position(node)
                    if self.first_call is None or pos < self.first_call:
                        self.first_call = pos
                    if self.last_call is None or pos > self.last_call:
                        self.last_call = pos

    def note(self, node: ast.Call, graph: bool) -> None:
        if id(node) in self._top_calls:
            self.module.append((node.lineno, node.col_offset, graph))
        elif graph:
            self.nested_graph = True
        else:
            self.nested_pynative = True

    def decide(self, info: ModuleInfo) -> bool | None:
        if self.nested_graph:
            return True
        if self.module and (self.first_call is None or self.last_call is None):
            return max(self.module)[2]
        if self.module:
            assert self.first_call is not None and self.last_call is not None
            at_first = [m for m in self.module if m[:2] < self.first_call]
            at_last = [m for m in self.module if m[:2] < self.last_call]
            if at_first and max(at_first)[2] or at_last and max(at_last)[2]:
                return True
            if at_last:
                return False  # PYNATIVE_MODE in effect at every call
        if self.nested_pynative:
            return False
        # no literal mode applies: a script MindSpore runs stays in its default mode,
        # PYNATIVE_MODE; a module others import, or a mode read from a variable, is unknown
        runs = self.runs or any(
            name in info.jit_wrapped or _jit_decoration(info.functions[name], info) is not None
            for name in self.assigned_calls
        )
        self.default = runs and not self.unknown
        return False if self.default else None


def _is_main_guard(test: ast.expr) -> bool:
    """`__name__ == "__main__"` (either side)."""
    if type(test) is not ast.Compare or len(test.comparators) != 1:
        return False
    sides = (test.left, test.comparators[0])
    return any(type(x) is ast.Name and x.id == "__name__" for x in sides) and any(
        type(x) is ast.Constant and x.value == "__main__" for x in sides
    )


#: module-level statements that run what they call (an assignment may only build a value:
#: `adder = make()`, `cfg = Config()` in a library)
_RUNNING_STATEMENTS = frozenset({ast.Expr, ast.For, ast.AsyncFor, ast.While})
#: methods that run a network held by a module-level object (`model.train(1, data)`)
_RUNNING_METHODS = frozenset({"train", "eval", "predict", "fit"})


def _runs_own_code(f: ast.expr, info: ModuleInfo) -> bool:
    """Does a call of `f` in a running statement run this file's code: one of its functions
    or instances (`main()`, `print(step(x))`, `net(x)`), a class's instance made and called
    (`Net()(x)`), or a module-level model's training (`model.train(...)`)? Configuring an
    instance (`net.set_train()`) or only building one (`Net()`) is not running it."""
    if isinstance(f, ast.Call):
        f = f.func  # `Net()(x)`
    elif isinstance(f, ast.Attribute):
        return f.attr in _RUNNING_METHODS and isinstance(f.value, ast.Name) and f.value.id in info.instances
    if not isinstance(f, ast.Name):
        return False
    name = f.id
    return name in info.functions or name in info.instances or name in info.wraps


def _may_be_network(cls: str) -> bool:
    """Can an instance of the class named `cls` be a Cell? MindSpore's own classes are
    known by name (an eager `ops.ReLU()(x)` is not a network call); a class of the project
    by its capitalised name (the summary cannot follow its bases yet)."""
    if cls.startswith("mindspore."):
        return _is_mindspore_cell(cls)
    return not cls.startswith("builtins.") and cls.rpartition(".")[2][:1].isupper()


def _statement_expressions(st: ast.stmt) -> list[ast.AST]:
    """The parts of a module-level statement that hold its own calls: the header of an
    if/try/with (`module_statements` yields their blocks as statements of their own),
    the whole of any other statement (the body of a module-level loop runs there too)."""
    if not isinstance(st, (ast.If, ast.Try, ast.With)):
        return [st]
    exprs, _ = _PARTS.get(type(st)) or _parts(type(st))
    out: list[ast.AST] = []
    for name in exprs:
        value = getattr(st, name, None)
        for v in value if type(value) is list else (value,):
            if isinstance(v, ast.AST):
                out.append(v)
    return out


def _scan_set_context(node: ast.Call, info: ModuleInfo, modes: _Modes) -> None:
    for kw in node.keywords:
        if kw.arg == "jit_syntax_level":
            info.context_level = _level_of(kw.value, info.imports)
        elif kw.arg == "mode":
            mode = dotted(kw.value) or []
            text = mode[-1] if mode else str(getattr(kw.value, "value", ""))
            if text in ("GRAPH_MODE", "0"):
                modes.note(node, True)
            elif text in ("PYNATIVE_MODE", "1"):
                modes.note(node, False)
            else:
                modes.unknown = True


def _jit_config_level(arg: ast.expr, info: ModuleInfo) -> Level | None:
    if isinstance(arg, ast.Call) and (n := info.resolve(arg.func)) and n.endswith("JitConfig"):
        for kw in arg.keywords:
            if kw.arg == "jit_syntax_level":
                return _level_of(kw.value, info.imports)
    return None


# --------------------------------------------------------------------- resolution
#: A function, by where it is defined: (module, line, column of its `def`).
FnKey = tuple[str, int, int]
#: A resolved call: (line, column, end line, end column, callee, callee qualname, owner,
#: how it is treated: "follow", "constexpr" (a `@constexpr` function: a scope of its own,
#: never walked into) or "mapped" (an overload of a `MultitypeFuncGraph` the call hands to a
#: mapper: followed, but the call is no call site of it, its arguments are not the overload's).
Edge = tuple[int, int, int, int, FnKey, str, "str | None", str]
#: A compiled root: (qualname, function, kind, level, owning class or None).
Root = tuple[str, FnKey, str, Level, "str | None"]


class EdgeTable:
    """The project-wide resolution's edges (`project_scopes`): per (function, owning class),
    its resolved callees in the order `ScopeResolver._callees` yields them, with the call
    positions as call sites record them. A per-file resolver follows them instead of
    resolving the calls of every function it reaches again; it finds the functions they
    name in the index's summaries (by position, each module's table built once)."""

    def __init__(
        self,
        edges: dict[tuple[FnKey, str | None], tuple[str, str, list[Edge]]],
        roots: dict[str, tuple[str, list[Root]]] | None = None,
        nodes: dict[tuple[FnKey, str | None], tuple[FuncDef, list[ast.Call]]] | None = None,
    ) -> None:
        self.edges = edges
        #: module -> (its closure digest, its roots, as resolved with no configured level)
        self.roots = roots or {}
        #: (function, owner) -> (the function node, the call nodes of its edges in order),
        #: for edges resolved in this process (`project_scopes.Resolution.nodes`): when a
        #: file's resolver has the very summary they were resolved on (one process or its
        #: forks, no cache copy), its calls are these nodes, not found again by position
        self.nodes = nodes or {}
        self._tables: dict[str, tuple[dict[tuple[int, int], FuncDef], bool]] = {}

    def calls(self, fk: FnKey, owner: str | None) -> list[Edge] | None:
        entry = self.edges.get((fk, owner))
        return None if entry is None else entry[2]

    def function(self, workspace: WorkspaceIndex, fk: FnKey) -> tuple[ModuleInfo, FuncDef] | None:
        """The summary's function defined at `fk` (None: no such module or function)."""
        info = workspace.module(fk[0])
        fn = None if info is None else _function_at(info, self._tables, fk[1], fk[2])
        return None if fn is None else (info, fn)  # type: ignore[return-value]


def _function_at(
    info: ModuleInfo, tables: dict[str, tuple[dict[tuple[int, int], FuncDef], bool]], line: int, col: int
) -> FuncDef | None:
    """The function of `info` whose `def` is at line, col. `tables` (per module name:
    functions by position, whether nested ones are in) holds its module-level functions
    and methods first; every function once one is asked for that is not among those."""
    hit = tables.get(info.module)
    if hit is None:
        table = {(fn.lineno, fn.col_offset): fn for fn in info.functions.values()}
        for cls in info.classes.values():
            table.update(((fn.lineno, fn.col_offset), fn) for fn in cls.methods.values())
        hit = tables[info.module] = (table, False)
    fn = hit[0].get((line, col))
    if fn is None and not hit[1]:
        hit = tables[info.module] = (_function_table(info), True)
        fn = hit[0].get((line, col))
    return fn


def _function_table(info: ModuleInfo) -> dict[tuple[int, int], FuncDef]:
    """Every function of a summary (nested ones too) by the position of its `def`."""
    table: dict[tuple[int, int], FuncDef] = {}
    stack: list[ast.AST] = [*info.functions.values()]
    for cls in info.classes.values():
        stack.append(cls.node)
        stack.extend(cls.methods.values())
    stack.reverse()
    while stack:
        node = stack.pop()
        t = type(node)
        if t is ast.FunctionDef or t is ast.AsyncFunctionDef:
            table.setdefault((node.lineno, node.col_offset), node)  # type: ignore[attr-defined,arg-type]
        elif t is not ast.ClassDef and not _is_container(node):
            continue  # definitions are statements: expressions hold none
        stack.extend(reversed([c for c in child_nodes(node) if _is_container(c)]))
    return table


class ScopeResolver:
    """Answers "is this function compiled, at which level?" for one file.

    Given the file's `text` (which must be what `tree` was parsed from), the resolver uses it
    to skip work, never to decide: only statements on lines that name a function or method
    a call could reach are scanned for calls, only functions with a `def`/`class` line in
    their body are searched for nested definitions, only lines with a level keyword for
    level settings. Without the text everything is scanned; the results are the same.
    """

    def __init__(
        self,
        tree: ast.Module,
        path: str,
        configured_level: Level | None = None,
        workspace: WorkspaceIndex | None = None,
        info: ModuleInfo | None = None,
        text: str | None = None,
        key: str | None = None,
    ) -> None:
        self.path = path
        self.workspace = workspace
        def_lines: list[int] | None = None
        if info is None:
            module = workspace.module_for(path) if workspace else module_name_for(path)
            known = workspace.has_package if workspace else None
            info, def_lines = _summarize(tree, path, module, text, known)
        if workspace is not None:
            # a library's mode is its importing scripts' (`modes.inherit`)
            workspace.apply_mode(info)
        self.info = info
        self.configured = configured_level or self.info.env_level
        self.scopes: dict[int, GraphScope] = {}
        self._cell_memo: dict[str, bool] = {}
        self._method_memo: dict[tuple[str, str], tuple[ModuleInfo, ClassInfo, FuncDef] | None] = {}
        self._def_lines: list[int] | None = None
        self._call_lines: list[int] | None = None
        #: the project-wide edges, when `key` (the index's key of this file) says they
        #: hold for this summary: calls are then followed along them
        self._edges = workspace.edges_for(info.module, key) if key and workspace else None
        self._key = key
        self._tree, self._text = tree, text
        self._local_tables: dict[str, tuple[dict[tuple[int, int], FuncDef], bool]] = {}
        #: per module (by id of its summary), `multitype_overloads` of it
        self._overloads: dict[int, tuple[ModuleInfo, dict[str, list[str]]]] = {}
        #: (id of a call, id of an overload) pairs `_callees` reached by a mapper call
        self.mapped: set[tuple[int, int]] = set()
        if text is not None and self._edges is None:
            self._find_call_lines(tree, text, def_lines)
        self._resolve([self.info])

    @classmethod
    def for_workspace(
        cls,
        workspace: WorkspaceIndex,
        configured_level: Level | None = None,
        *,
        resolve: bool = True,
    ) -> ScopeResolver:
        """Resolve every module of the workspace at once (what other files compile here);
        with `resolve=False`, only set up to answer lookups (`project_scopes` walks)."""
        self = cls.__new__(cls)
        self.path = "<workspace>"
        self.workspace = None  # modules are looked up through `_modules` below
        self.info = ModuleInfo("<workspace>", "<workspace>", {}, {}, {}, {}, None, None, {})
        self.configured = configured_level
        self.scopes = {}
        self._cell_memo = {}
        self._method_memo = {}
        self._def_lines = self._call_lines = None  # no texts: every function is scanned whole
        self._edges = None
        self._key = None
        self._local_tables = {}
        self._overloads = {}
        self.mapped = set()
        self.workspace = workspace
        if resolve:
            self._resolve(list(workspace.modules()), seeds=False)
        return self

    # ---- public
    def scope_for(self, func: ast.AST) -> GraphScope | None:
        """The graph scope rooted at this function definition, or None if it runs eagerly."""
        return self.scopes.get(id(func))

    def is_constexpr_function(self, qual: str) -> bool:
        """Is `qual` (dotted) a module-level function decorated `@constexpr` (run as Python
        while compiling, so its result is a constant and its body is never compiled)?"""
        hit = self._function(qual)
        return hit is not None and bool(hit[1].decorator_list) and is_constexpr(hit[1], hit[0])

    def classmethod_of(self, cls_qual: str, name: str) -> bool:
        """Is `name`, looked up on the class `cls_qual` (dotted) and its bases, a
        `@classmethod`?"""
        hit = self._method(cls_qual, name)
        return hit is not None and is_classmethod(hit[2])

    def attribute_class(self, cls_qual: str, attr: str) -> str | None:
        """The class `self.<attr> = SomeClass(...)` binds in `__init__` of `cls_qual` or of
        the first base class (depth first, in declaration order) that binds it that way
        (dotted; None when none does). A call's result is what `attr_types` records, the
        last one in source order."""
        visited: set[str] = set()
        stack = [cls_qual]
        while stack:
            qual = stack.pop()
            if qual in visited:
                continue
            visited.add(qual)
            found = self.class_info(qual)
            if found is None:
                continue
            cls = found[1]
            if attr in cls.attr_types:
                return cls.attr_types[attr]
            stack.extend(reversed(cls.bases))
        return None

    def is_cell_class(self, qual: str, _seen: frozenset[str] = frozenset()) -> bool:
        """Is the class named `qual` (dotted) an nn.Cell subclass, via any chain of bases?

        A walk over the base-class graph with one visited set (no recursion, each class
        looked at once): linear in the length of a chain of Cells subclassing Cells across
        modules, and cycles end. `_seen` names classes not to go through."""
        memo = self._cell_memo
        if qual in _seen:
            return False
        if not _seen and qual in memo:
            return memo[qual]
        if qual.startswith("mindspore."):
            return self._mindspore_cell(qual)
        visited = {qual} | _seen
        path: list[tuple[str, Iterator[str]]] = [(qual, iter(self._bases(qual)))]
        while path:
            _node, bases = path[-1]
            for base in bases:
                if base.startswith("mindspore."):
                    found = self._mindspore_cell(base)
                elif base in memo and not _seen:
                    found = memo[base]
                elif base in visited:
                    continue
                else:
                    visited.add(base)
                    path.append((base, iter(self._bases(base))))
                    break
                if found:
                    if not _seen:  # every class on the path reaches a Cell
                        memo.update((n, True) for n, _ in path)
                    return True
            else:
                path.pop()
        if not _seen:  # nothing reachable from `qual` is a Cell
            memo.update((n, False) for n in visited)
        return False

    def _mindspore_cell(self, qual: str) -> bool:
        known = self._cell_memo.get(qual)
        if known is None:
            known = self._cell_memo[qual] = _is_mindspore_cell(qual)
        return known

    def _bases(self, qual: str) -> list[str]:
        cls = self.class_info(qual)
        return cls[1].bases if cls is not None else []

    def local_roots(self) -> list[tuple[FuncDef, ast.ClassDef | None]]:
        """Compiled functions defined in this file (functions and methods of classes, also
        when defined inside other functions), with their class, in source order; a compiled
        function nested inside another is left out (it is walked as part of the outer one)."""
        owner: dict[int, ast.ClassDef | None] = dict.fromkeys(map(id, self.info.functions.values()))
        for cls in self.info.classes.values():
            owner.update(dict.fromkeys(map(id, cls.methods.values()), cls.node))
        roots = [
            (s.function, owner[id(s.function)])
            for s in self.scopes.values()
            if id(s.function) in owner
        ]
        roots.sort(key=_root_position)
        # a compiled function nested in another one is visited as part of it
        out: list[tuple[FuncDef, ast.ClassDef | None]] = []
        end = 0
        for fn, owner_cls in roots:
            if out and fn.lineno <= end:
                continue
            out.append((fn, owner_cls))  # type: ignore[arg-type]
            end = fn.end_lineno or fn.lineno
        return out

    # ---- internals
    def _find_call_lines(self, tree: ast.Module, text: str, def_lines: list[int] | None) -> None:
        """Lines of this file where a call could reach a function of the project: those
        naming one (the callee scan of this file's functions skips statements elsewhere).
        Left None (scan everything) when there are too many names to look for, or short
        names that occur all over the text (`f`, `fn`: each occurrence costs a check)."""
        names = self._target_names()
        if names is None:
            return
        if sum(text.count(n) for n in names if len(n) <= 3) > len(text) // 64 + 256:
            return
        self._def_lines = def_lines if def_lines is not None else _definition_lines(tree, text)
        if not text.isascii() and not unicodedata.is_normalized("NFKC", text):
            text = unicodedata.normalize("NFKC", text)  # identifiers are compared as NFKC
        self._call_lines = _word_lines(text, tuple(names), _CALLABLE)

    def _target_names(self) -> set[str] | None:
        """Every name a followed call of this file can end in: the functions of the modules
        its names lead to (`_reachable_modules`), the methods of their classes and of all
        the base classes of those, and import aliases of them; None when there are more than
        `_MAX_TARGET_NAMES` (each costs one search through the text)."""
        names: set[str] = set()
        pending: list[tuple[ModuleInfo, ClassInfo]] = []
        for info in self._reachable_modules():
            names.update(info.functions)
            names.update(self._overloads_of(info))  # `ops.partial(_opt, lr)`: reaches `_opt`'s overload
            pending.extend((info, cls) for cls in info.classes.values())
            # `adder = make()`: a call of `adder` may reach the function `make` returns
            names.update(a for a in info.instances if self._bound_closure(info, a))
            # `net(x)`, `grad_fn(x)`: a Cell instance or grad builder made at module level,
            # or in a function that defines closures
            names.update(info.wraps)
            for grads in info.local_grads.values():
                names.update(grads)
            for local in info.local_wraps.values():
                names.update(local)
            for held in info.local_instances.values():
                names.update(a for a, t in held.items() if self.class_info(t) and self.is_cell_class(t))
            names.update(
                a for a, t in info.instances.items() if self.class_info(t) and self.is_cell_class(t)
            )
            # `stopper(loss)`: a module-level plain object with `__call__` (`_plain_call_method`)
            names.update(a for a, t in info.instances.items() if self._plain_call_method(t) is not None)
            if len(names) > _MAX_TARGET_NAMES:
                return None  # more modules only add names
        done: set[str] = set()
        while pending and len(names) <= _MAX_TARGET_NAMES:
            info, cls = pending.pop()
            qual = f"{info.module}.{cls.name}"
            if qual in done:
                continue
            done.add(qual)
            names.update(cls.methods)
            names.update(cls.attr_wraps)  # `self.grad_fn(x)`, `self.net(x)` held on self
            names.update(cls.attr_params)
            # `self.inner(x)` reaches the construct of the sub-cell held there
            # (and `self.stopper(v)` reaches `__call__` of the plain object held there)
            for a, t in cls.attr_types.items():
                found = self.class_info(t)
                if found and (self.is_cell_class(t) or "__call__" in found[1].methods):
                    names.add(a)
            pending.extend(found for base in cls.bases if (found := self.class_info(base)))
        names.update(a for a, q in self.info.imports.items() if q.rpartition(".")[2] in names)
        return names if len(names) <= _MAX_TARGET_NAMES else None

    def _reachable_modules(self) -> Iterator[ModuleInfo]:
        """This module and the workspace modules a name of it can resolve into: what it
        imports, with their packages and submodules (`import pkg` reaches `pkg.sub.f`).
        Looked up by module name in the index (never a scan of every module), lazily: the
        caller stops once it has more names than it can use."""
        yield self.info
        if self.workspace is None:
            return
        ws = self.workspace
        seen: set[str] = set()
        imported = dict.fromkeys(self.info.imports.values())
        own = [(self.info.module,), ("builtins",)]
        for candidates in (*own, *((n, *_packages(n)) for n in imported)):
            for candidate in candidates:
                if candidate not in seen:
                    seen.add(candidate)
                    if (info := ws.module(candidate)) is not None:
                        yield info
        for name in imported:
            for info in ws.submodules(name):
                if info.module not in seen:
                    seen.add(info.module)
                    yield info

    def class_info(self, qual: str) -> tuple[ModuleInfo, ClassInfo] | None:
        # memoised like `_method`: base-chain walks ask for the same classes again and again
        memo = self.__dict__.setdefault("_class_memo", {})
        if qual in memo:
            return memo[qual]
        found = memo[qual] = self._find_class(qual)
        return found

    def _find_class(self, qual: str) -> tuple[ModuleInfo, ClassInfo] | None:
        mod, _, name = qual.rpartition(".")
        if mod == self.info.module and name in self.info.classes:
            return self.info, self.info.classes[name]
        if self.workspace is not None:
            other = self.workspace.module(mod)
            if other is not None and name in other.classes:
                return other, other.classes[name]
        return None

    def _function(self, qual: str) -> tuple[ModuleInfo, FuncDef] | None:
        mod, _, name = qual.rpartition(".")
        if mod == self.info.module and name in self.info.functions:
            return self.info, self.info.functions[name]
        if self.workspace is not None:
            other = self.workspace.module(mod)
            if other is not None and name in other.functions:
                return other, other.functions[name]
        return None

    def _method(self, cls_qual: str, name: str) -> tuple[ModuleInfo, ClassInfo, FuncDef] | None:
        """Find `name` on the class or its bases (method resolution in declaration order);
        memoised: every `self.layer(x)` of a file asks again."""
        key = (cls_qual, name)
        memo = self._method_memo
        if key in memo:
            return memo[key]
        found = memo[key] = self._find_method(cls_qual, name, frozenset())
        return found

    def _find_method(
        self, cls_qual: str, name: str, _seen: frozenset[str]
    ) -> tuple[ModuleInfo, ClassInfo, FuncDef] | None:
        """Depth-first through the bases in declaration order, each class once (a stack, not
        recursion: a chain of a thousand subclasses must not overflow)."""
        visited = set(_seen)
        stack = [cls_qual]
        memo = self._method_memo
        while stack:
            qual = stack.pop()
            if qual in visited:
                continue
            visited.add(qual)
            if qual != cls_qual and memo.get((qual, name), 0) is None:
                continue  # known: nothing from there on defines it
            found = self.class_info(qual)
            if found is None:
                continue
            info, cls = found
            if name in cls.methods:
                return info, cls, cls.methods[name]
            stack.extend(reversed(cls.bases))
        if not _seen:
            # a miss: no class reachable from `cls_qual` defines `name`, so none reachable
            # from any class visited does either (a chain of N subclasses costs N, not N^2)
            for qual in visited:
                memo.setdefault((qual, name), None)
        return None

    def _cell_level(self, cls_qual: str, construct: FuncDef, info: ModuleInfo) -> Level:
        # `@jit(fullgraph=True)` on `construct` does not change the level when the Cell is
        # compiled in GRAPH_MODE: MindSpore 2.10 accepted a STRICT-only error there under
        # the default level (corpus case orig_jit_fullgraph_cell_method).
        if self.configured:
            return self.configured
        if cls_qual in info.cell_config_levels:
            return info.cell_config_levels[cls_qual]
        if "*" in info.cell_config_levels:
            return info.cell_config_levels["*"]
        # a level set on a base class's instances does not matter; the context level does
        return self.info.context_level or info.context_level or "lax"

    def _roots(
        self, infos: list[ModuleInfo]
    ) -> Iterator[tuple[ModuleInfo, str, FuncDef, str, Level, str | None]]:
        """(module, qualname, function, kind, level, owning class qualname) for each root."""
        for info in infos:
            for cname, cls in info.classes.items():
                cq = f"{info.module}.{cname}"
                is_cell = self.is_cell_class(cq)
                python_only = _python_only_methods(info, cls) if cls.jit_class else frozenset()
                for mname, meth in cls.methods.items():
                    jd = _jit_decoration(meth, info) if meth.decorator_list else None
                    if jd == "bytecode":
                        continue
                    if is_cell and mname == "construct" and compiles_cells(info):
                        yield (
                            info,
                            f"{cq}.construct",
                            meth,
                            "construct",
                            self._cell_level(cq, meth, info),
                            cq,
                        )
                    elif jd is None and mname in cls.jit_methods:  # `self.step = ms.jit(self._step)`
                        jd = _fullgraph(cls.jit_methods[mname], info)
                        if jd != "bytecode":
                            yield info, f"{cq}.{mname}", meth, "jit", self.configured or jd, cq
                    elif jd is not None:
                        yield info, f"{cq}.{mname}", meth, "jit", self.configured or jd, cq
                    elif (
                        cls.jit_class
                        and mname != "__init__"
                        and not mname.startswith("__")
                        and mname not in python_only
                    ):
                        level = self.configured or info.context_level or "lax"
                        yield info, f"{cq}.{mname}", meth, "jit_class", level, cq
                if is_cell and "construct" not in cls.methods and compiles_cells(info):
                    # `class Net(Mixin, nn.Cell)`: a construct inherited from a non-Cell base
                    hit = self._method(cq, "construct")
                    if hit is not None and not self.is_cell_class(f"{hit[0].module}.{hit[1].name}"):
                        m_info, m_cls, m_fn = hit
                        m_q = f"{m_info.module}.{m_cls.name}"
                        level = self._cell_level(cq, m_fn, info)
                        yield m_info, f"{m_q}.construct", m_fn, "construct", level, m_q
                    elif hit is not None and any(m != "__init__" for m in cls.methods):
                        # a Cell base's construct compiled for this subclass's instances:
                        # `self.<method>` there is this class's override
                        m_info, m_cls, m_fn = hit
                        level = self._cell_level(cq, m_fn, info)
                        yield m_info, f"{m_info.module}.{m_cls.name}.construct", m_fn, "construct", level, cq
            for fname, fn in info.functions.items():
                jd = _jit_decoration(fn, info) if fn.decorator_list else None
                if jd is None and fname in info.jit_wrapped:
                    jd = _fullgraph(info.jit_wrapped[fname], info)
                if jd is None or jd == "bytecode":
                    continue
                yield info, f"{info.module}.{fname}", fn, "jit", self.configured or jd, None
            for wname, kws in info.jit_wrapped.items():  # `ms.jit(net)`: its construct
                if wname in info.functions:
                    continue
                jd = _fullgraph(kws, info)
                if jd == "bytecode":
                    continue
                for w_info, w_qual, w_fn, w_owner in self._jit_wrapped(info, wname):
                    yield w_info, w_qual, w_fn, "jit", self.configured or jd, w_owner

    def _jit_wrapped(
        self, info: ModuleInfo, wname: str
    ) -> Iterator[tuple[ModuleInfo, str, FuncDef, str | None]]:
        """What `ms.jit(...)` compiles, by its `info.jit_wrapped` key: `name` (an instance or
        grad builder, `_compiled_through`), `inst.method` (a method of the instance's class)
        or `pkg.Net()` (the construct of the Cell made in the call)."""
        if "@" in wname:  # `ms.jit(net)` of a name bound in the function at line:col
            name, _, at = wname.partition("@")
            line, _, col = at.partition(":")
            key = (int(line), int(col))
            inst, dot, method = name.partition(".")
            if not dot:
                yield from self._scoped_through(info, key, name, set())
                return
            found = info.local_instances.get(key, {}).get(inst)
            if found is None:
                return
            cls_q = found
        elif wname.endswith("()"):
            cls_q = wname[:-2]
            method = "construct"
            if not (self.class_info(cls_q) and self.is_cell_class(cls_q)):
                return
        elif "." in wname:
            inst, _, method = wname.partition(".")
            found = info.instances.get(inst)
            if found is None:
                return
            cls_q = found
        else:
            yield from self._compiled_through(info, wname, set())
            return
        m = self._method(cls_q, method)
        if m is not None:
            yield m[0], f"{m[0].module}.{m[1].name}.{method}", m[2], cls_q

    def _resolve(self, infos: list[ModuleInfo], seeds: bool = True) -> None:
        work: list[tuple[ModuleInfo, FuncDef, Level, str | None, str]] = []
        roots = self._known_roots(infos)
        for info, qual, fn, kind, level, owner in roots if roots is not None else self._roots(infos):
            self._add(fn, qual, kind, level, None)
            work.append((info, fn, level, owner, qual))
        if seeds and self.workspace is not None:
            work.extend(self._workspace_seeds())
        self._walk(work)

    def admit(self, fn: FuncDef, level: Level, site: tuple[ast.Call, FuncDef, str] | None) -> bool:
        """Compile `fn`, a function of this file, at `level`, and what it calls: a
        `MultitypeFuncGraph` registration a call of compiled code selects, which only the
        rules' value model tells (`rules/graphmode/overload_choice.py`). `site` is the call,
        its function and that function's qualname when the call gives `fn` its arguments.
        True when `fn` was not compiled before."""
        new = id(fn) not in self.scopes
        qual = f"{self.info.module}.{fn.name}"
        found = None
        if site is not None:
            call, caller, caller_qual = site
            found = CallSite(self.info.path, *call_position(call, self.info), caller_qual, call, caller)
        self._add(fn, qual, "helper", level, found)
        self._walk([(self.info, fn, level, None, qual)])
        return new

    def _walk(self, work: list[tuple[ModuleInfo, FuncDef, Level, str | None, str]]) -> None:
        """Compile what the functions of `work` call, transitively."""
        seen: set[tuple[int, Level, str | None]] = set()
        while work:
            info, fn, level, owner, qual = work.pop()
            # per owning class too: a base's method reached from a subclass's instance
            # resolves `self.<method>` through that subclass
            if (id(fn), level, owner) in seen:
                continue
            seen.add((id(fn), level, owner))
            for call, pos, t_info, t_qual, t_fn, t_owner, how in self._targets(info, fn, owner):
                if how == "constexpr":
                    self._add(t_fn, t_qual, "constexpr", level, None)
                    continue
                site = None if how == "mapped" else CallSite(info.path, *pos, qual, call, fn)
                self._add(t_fn, t_qual, "helper", level, site)
                work.append((t_info, t_fn, level, t_owner, t_qual))

    def _known_roots(
        self, infos: list[ModuleInfo]
    ) -> list[tuple[ModuleInfo, str, FuncDef, str, Level, str | None]] | None:
        """`_roots` of this file from the project-wide resolution (made with no configured
        level: a configured one replaces every root's level, as `_roots` gives it); None
        when it does not hold them."""
        if self._edges is None or infos != [self.info]:
            return None
        hit = self._edges.roots.get(self.info.module)
        if hit is None:
            return None
        out: list[tuple[ModuleInfo, str, FuncDef, str, Level, str | None]] = []
        for qual, fk, kind, level, owner in hit[1]:
            if fk[0] == self.info.module:
                found = self._local_function(fk)
            else:
                found = self._edges.function(self.workspace, fk)  # type: ignore[arg-type]
            if found is None:
                return None
            out.append((found[0], qual, found[1], kind, self.configured or level, owner))
        return out

    def _targets(
        self, info: ModuleInfo, fn: FuncDef, owner: str | None
    ) -> list[tuple[ast.Call | None, tuple[int, int, int, int], ModuleInfo, str, FuncDef, str | None, str]]:
        """The calls of `fn` that compiled code follows (`_callees` less the skipped ones):
        (call, its position, callee module, qualname, function, owner, treatment). Along the
        project-wide edges when they are known (the call node is then found only for calls
        made in this file: sites elsewhere are never read for their node), else resolved here."""
        if self._edges is not None:
            found = self._along_edges(info, fn, owner)
            if found is not None:
                return found
        out: list[Any] = []
        for call, (t_info, t_qual, t_fn, t_owner) in self._callees(info, fn, owner):
            how: str = callee_treatment(t_fn, t_info)
            if how == "follow" and (id(call), id(t_fn)) in self.mapped:
                how = "mapped"
            if how != "skip":
                out.append((call, call_position(call, info), t_info, t_qual, t_fn, t_owner, how))
        return out

    def _along_edges(
        self, info: ModuleInfo, fn: FuncDef, owner: str | None
    ) -> list[Any] | None:
        """`_targets` from the project-wide edges; None when they do not cover `fn` (an
        owner the project-wide walk did not reach it with) or do not match this file."""
        assert self._edges is not None and self.workspace is not None
        calls = self._edges.calls((info.module, fn.lineno, fn.col_offset), owner)
        if calls is None:
            return None
        if not calls:
            return []
        local = info is self.info
        nodes: dict[tuple[int, int, int, int], ast.Call] | None = None
        made: list[ast.Call] | None = None
        if local:
            hit = self._edges.nodes.get(((info.module, fn.lineno, fn.col_offset), owner))
            if hit is not None and hit[0] is fn:  # resolved on this very summary
                made = hit[1]
            else:
                nodes = self._calls_at(fn, calls)
                if nodes is None:
                    return None
        out: list[Any] = []
        for n, (line, col, end_line, end_col, t_fk, t_qual, t_owner, how) in enumerate(calls):
            pos = (line, col, end_line, end_col)
            target = self._local_function(t_fk) if t_fk[0] == self.info.module else (
                self._edges.function(self.workspace, t_fk)
            )
            if target is None:
                return None
            if made is not None:
                call: ast.Call | None = made[n]
            else:
                call = nodes.get(pos) if nodes is not None else None
            if local and call is None:
                return None
            out.append((call, pos, target[0], t_qual, target[1], t_owner, how))
        return out

    def _calls_at(self, fn: FuncDef, calls: list[Edge]) -> dict[tuple[int, int, int, int], ast.Call] | None:
        """This file's call nodes in `fn` at the edges' positions (by position)."""
        if self._text is None:
            return None
        if self._def_lines is None:
            self._def_lines = _definition_lines(self._tree, self._text)
        if _may_define(fn, self._def_lines):
            found: list[ast.Call] = find_branches(fn, _CALL_KIND)  # type: ignore[assignment]
        else:
            found = _calls_near(fn, sorted({c[0] for c in calls}))
        info = self.info
        return {call_position(c, info): c for c in found}

    def _local_function(self, fk: FnKey) -> tuple[ModuleInfo, FuncDef] | None:
        """This file's function defined at `fk` (a tree node, not the summary's copy)."""
        fn = _function_at(self.info, self._local_tables, fk[1], fk[2])
        return None if fn is None else (self.info, fn)

    def _workspace_seeds(self) -> list[tuple[ModuleInfo, FuncDef, Level, str | None, str]]:
        """Functions of this file that code in other files compiles (from the workspace's
        cached whole-project resolution), with those call sites."""
        assert self.workspace is not None
        reached = self.workspace.graph_scopes()
        # workspace summaries record resolved paths; this file's own sites are found locally
        own = self._key or self.workspace.key(self.info.path)
        out: list[tuple[ModuleInfo, FuncDef, Level, str | None, str]] = []
        mod = self.info.module
        candidates: list[tuple[str, FuncDef, str | None]] = [
            (f"{mod}.{name}", fn, None) for name, fn in self.info.functions.items()
        ]
        for cname, cls in self.info.classes.items():
            candidates.extend(
                (f"{mod}.{cname}.{m}", fn, f"{mod}.{cname}") for m, fn in cls.methods.items()
            )
        for name in self.info.instances:  # closures other files call through `adder = make()`
            if made := self._bound_closure(self.info, name):
                candidates.append((made[1], made[2], None))
        for qual, fn, owner in candidates:
            ws = reached.get(qual)
            if ws is None or id(fn) in self.scopes:
                continue
            sites = [c for c in ws.call_sites if c.path != own]
            if not sites and ws.kind == "helper":
                continue
            # the project-wide resolution has no configured level: a configured one replaces
            # the level it found, as it does for this file's own roots (`_known_roots`)
            level = self.configured or ws.level
            for site in sites or [None]:  # type: ignore[list-item]
                self._add(fn, qual, ws.kind, level, site)
            out.append((self.info, fn, level, owner, qual))
        return out

    def _add(self, fn: FuncDef, qual: str, kind: str, level: Level, site: CallSite | None) -> None:
        existing = self.scopes.get(id(fn))
        if existing is None:
            existing = GraphScope(fn, qual, kind, level)  # type: ignore[arg-type]
            self.scopes[id(fn)] = existing
        elif level == "strict":
            existing.level = "strict"  # reached from a strict root: the strictest level wins
        if site is not None and existing.kind in SITED_KINDS:
            key = (site.path, site.line, site.column, site.caller)
            if key not in existing._site_keys:  # a set: popular helpers have many callers
                existing._site_keys.add(key)
                existing.call_sites.append(site)

    def _closure_named(
        self, info: ModuleInfo, name: str, qual: str | None
    ) -> tuple[ModuleInfo, str, FuncDef] | None:
        """`_bound_closure` for a called name: bound in this module (`qual` None) or
        imported from another (`from helpers import adder`)."""
        if qual is None:
            return self._bound_closure(info, name)
        mod, _, attr = qual.rpartition(".")
        if mod == self.info.module:
            return self._bound_closure(self.info, attr)
        other = self.workspace.module(mod) if self.workspace is not None else None
        return None if other is None else self._bound_closure(other, attr)

    def _bound_closure(self, info: ModuleInfo, name: str) -> tuple[ModuleInfo, str, FuncDef] | None:
        """`adder = make()` at module level, `make` returning a function it defines: calling
        `adder` calls that nested function."""
        q = info.instances.get(name)
        hit = self._function(q) if q else None
        if hit is None:
            return None
        inner = _returned_function(hit[1])
        return None if inner is None else (hit[0], f"{q}.<locals>.{inner.name}", inner)

    def _compiled_through(
        self, info: ModuleInfo, name: str, seen: set[str]
    ) -> Iterator[tuple[ModuleInfo, str, FuncDef, str | None]]:
        """What calling the module-level `name` of `info` in compiled code compiles: the
        function it names, the construct of the user Cell instance it names, or, for a grad
        builder / MindSpore cell wrapper (`info.wraps`), those of what it wraps."""
        if name in seen:
            return
        seen.add(name)
        if name in info.functions:
            yield info, f"{info.module}.{name}", info.functions[name], None
            return
        cls_q = name[len(_BUILT) :] if name.startswith(_BUILT) else info.instances.get(name)
        if cls_q and self.class_info(cls_q) and self.is_cell_class(cls_q):
            m = self._method(cls_q, "construct")
            if m is not None:
                m_info, m_cls, m_fn = m
                yield m_info, f"{m_info.module}.{m_cls.name}.construct", m_fn, cls_q
            return
        for wrapped in info.wraps.get(name, ()):
            yield from self._compiled_through(info, wrapped, seen)

    def _scoped_through(
        self, info: ModuleInfo, key: tuple[int, int], name: str, seen: set[str]
    ) -> Iterator[tuple[ModuleInfo, str, FuncDef, str | None]]:
        """`_compiled_through` for a name bound in the function at `key` or in one it is
        nested in (`info.local_wraps` / `local_instances`, innermost first); nothing when no
        enclosing function binds it (the caller then looks at module level)."""
        at: tuple[int, int] | None = key
        while at is not None:
            wraps = info.local_wraps.get(at)
            if wraps and name in wraps:
                if name in seen:
                    return
                seen.add(name)
                for wrapped in wraps[name]:
                    inner = list(self._scoped_through(info, at, wrapped, seen))
                    yield from inner or self._compiled_through(info, wrapped, seen)
                return
            cls_q = info.local_instances.get(at, {}).get(name)
            if cls_q is not None:
                if self.class_info(cls_q) and self.is_cell_class(cls_q):
                    m = self._method(cls_q, "construct")
                    if m is not None:
                        yield m[0], f"{m[0].module}.{m[1].name}.construct", m[2], cls_q
                return
            at = info.enclosing.get(at)

    def _local_grad(
        self, info: ModuleInfo, fn: FuncDef, name: str, owner: str | None
    ) -> Iterator[tuple[ModuleInfo, str, FuncDef, str | None]]:
        """What calling `name` in `fn` compiles when `fn` binds it to a grad builder or `ms.jit`
        of a method, a Cell held on `self` or a function (`grad_fn = ms.value_and_grad(
        self.forward, None, self.weights)`, `info.local_grads`)."""
        wrapped = info.local_grads[(fn.lineno, fn.col_offset)][name]
        attr = wrapped[5:] if wrapped.startswith("self.") else None
        if attr is not None and owner:
            m = self._method(owner, attr)
            if m is not None:
                yield m[0], f"{m[0].module}.{m[1].name}.{attr}", m[2], owner
                return
            held = list(self._held_on_self(owner, attr))
            if held:
                yield from held
                return
            owner_cls = self._owner_class(owner)
            sub_q = owner_cls.attr_types.get(attr) if owner_cls else None
            if sub_q and self.is_cell_class(sub_q) and (m := self._method(sub_q, "construct")) is not None:
                yield m[0], f"{m[0].module}.{m[1].name}.construct", m[2], f"{m[0].module}.{m[1].name}"
        elif attr is None and not _is_parameter(fn, wrapped):
            yield from self._compiled_through(info, wrapped, set())

    def _held_on_self(
        self, owner: str, attr: str
    ) -> Iterator[tuple[ModuleInfo, str, FuncDef, str | None]]:
        """What calling `self.<attr>` compiles when `__init__` bound it to a grad builder or
        `ms.jit` of a method (`self.grad_fn = ms.value_and_grad(self.forward)`), or to an
        argument the module passes a Cell for (`self.net = net`, `Trainer(Net())`)."""
        found = self.class_info(owner)
        if found is None:
            return
        info, cls = found
        for wrapped in cls.attr_wraps.get(attr, ()):
            if wrapped.startswith("self."):
                m = self._method(owner, wrapped[5:])
                if m is not None:
                    yield m[0], f"{m[0].module}.{m[1].name}.{wrapped[5:]}", m[2], owner
            else:
                yield from self._compiled_through(info, wrapped, set())
        arg_q = self._argument_class(owner, attr)
        if arg_q and self.class_info(arg_q) and self.is_cell_class(arg_q):
            m = self._method(arg_q, "construct")
            if m is not None:
                yield m[0], f"{m[0].module}.{m[1].name}.construct", m[2], arg_q

    def _plain_call_method(self, cls_q: str | None) -> tuple[ModuleInfo, str, FuncDef, str | None] | None:
        """The `__call__` of the workspace class `cls_q` when it is no Cell (a Cell's call
        compiles its `construct`, `_compiled_through`)."""
        if not cls_q or self.class_info(cls_q) is None or self.is_cell_class(cls_q):
            return None
        m = self._method(cls_q, "__call__")
        if m is None:
            return None
        m_info, m_cls, m_fn = m
        return m_info, f"{m_info.module}.{m_cls.name}.__call__", m_fn, f"{m_info.module}.{m_cls.name}"

    def _argument_class(self, owner: str | None, attr: str) -> str | None:
        """The class of the object the module's construction of `owner` gives the `__init__`
        argument kept as `self.<attr>` (`self.scheduler = scheduler` with
        `Opt(params, CosineScheduler(0.1, 10))`): calling its methods compiles them as
        methods of that class (measured, written/heldout15b probes `ls17b_obj_*`)."""
        found = self.class_info(owner) if owner else None
        if found is None:
            return None
        info, cls = found
        param = cls.attr_params.get(attr)
        init = cls.methods.get("__init__")
        if param is None or init is None:
            return None
        given = info.ctor_args.get(cls.name, {})
        arg_q = given.get(param)
        positional = _init_parameters(init)[0]
        if arg_q is None and param in positional:
            arg_q = given.get(positional.index(param))
        return arg_q

    def _imported_held(self, info: ModuleInfo, qual: str) -> ModuleInfo | None:
        """The workspace module whose module-level Cell instance or grad builder `qual`
        names (imported into `info`), if any."""
        mod, _, attr = qual.rpartition(".")
        if not mod or mod == info.module or self.workspace is None:
            return None
        other = self.workspace.module(mod)
        if other is None or not (attr in other.wraps or attr in other.instances):
            return None
        return other

    def _without_unwrapped_decorators(self, info: ModuleInfo, fn: FuncDef, calls: list[ast.Call]) -> list[ast.Call]:
        """`calls` less those of `fn`'s decorators that wrap it with `functools.wraps`
        (`wrapping_decorator`): a decorator runs in Python when `fn` is defined, and
        MindSpore compiles what it made as `fn`'s own body (below), so neither the
        decorator nor its wrapper is compiled code."""
        skipped: set[int] = set()
        for dec in fn.decorator_list:
            if isinstance(dec, ast.Call) and self.wrapping_decorator(info, dec):
                skipped.update(id(n) for n in ast.walk(dec) if type(n) is ast.Call)
        return [c for c in calls if id(c) not in skipped] if skipped else calls

    def compiled_as_itself(self, info: ModuleInfo, fn: FuncDef) -> bool:
        """Does MindSpore compile `fn`'s own body when the name it is bound to is called,
        every decorator of it being a `wrapping_decorator`?"""
        return bool(fn.decorator_list) and all(self.wrapping_decorator(info, d) for d in fn.decorator_list)

    def wrapping_decorator(self, info: ModuleInfo, dec: ast.expr) -> bool:
        """Is `dec` (a decorator of a function of `info`) a project function returning a
        wrapper made with `@functools.wraps(func)` of the function it is given (`@logged`),
        or a call of one returning such a decorator (`@tensor_func(mindspore.Tensor)`)?
        MindSpore reads a compiled function's source through `inspect`, which follows the
        `__wrapped__` that `functools.wraps` sets: it compiles the decorated function's own
        body, never the wrapper (measured, written/crossmod probes `fix34a_wraps_*` /
        `fix34a_nowraps_*`: a wrapper scaling the result by 10 is not applied in graph mode,
        a STRICT-refused `str.replace` in it compiles; without `wraps` both are compiled)."""
        target = dec.func if isinstance(dec, ast.Call) else dec
        q = info.resolve(target)
        hit = self._function(q) if q else None
        decorator = hit[1] if hit is not None else None
        if isinstance(dec, ast.Call) and decorator is not None:
            decorator = _returned_function(decorator)  # the factory's result
        wrapper = _returned_function(decorator) if decorator is not None else None
        if hit is None or decorator is None or wrapper is None:
            return False
        return _wraps_its_argument(decorator, wrapper, hit[0])

    def _owner_class(self, owner: str | None) -> ClassInfo | None:
        found = self.class_info(owner) if owner else None
        return found[1] if found else None

    def _callees(
        self, info: ModuleInfo, fn: FuncDef, owner: str | None
    ) -> Iterator[tuple[ast.Call, tuple[ModuleInfo, str, FuncDef, str | None]]]:
        lines = self._call_lines if info is self.info else None
        if lines is not None and _may_define(fn, self._def_lines):
            lines = None  # closures: a call may name one; scan the whole function
        calls, local_defs, local_types = _body_facts(info, fn, lines, owner)
        if fn.decorator_list:
            calls = self._without_unwrapped_decorators(info, fn, calls)
        closure = bool(info.enclosing or info.local_wraps) and (fn.lineno, fn.col_offset)
        overloads = self._overloads_of(info)
        for node in calls:
            if overloads:
                yield from self._overloads_reached(info, fn, node, overloads)
            f = node.func
            if type(f) is ast.Name and f.id in local_defs:
                yield node, (info, f"{info.module}.<locals>.{f.id}", local_defs[f.id], owner)
                continue
            if closure and isinstance(f, ast.Name) and not _is_parameter(fn, f.id):
                # `grad_fn(x, y)` / `net(x)` bound in the function this closure is made in
                found = list(self._scoped_through(info, closure, f.id, set()))
                if found:
                    for hit3 in found:
                        yield node, hit3
                    continue
            if (
                type(f) is ast.Name
                and info.local_grads
                and f.id in info.local_grads.get((fn.lineno, fn.col_offset), ())
            ):
                found = list(self._local_grad(info, fn, f.id, owner))
                if found:  # `grad_fn = ms.value_and_grad(self.forward, ...)` ... `grad_fn(x, y)`
                    for hit3 in found:
                        yield node, hit3
                    continue
            if type(f) is ast.Name:
                q = info.resolve(f)
                if q and (hit := self._function(q)):
                    yield node, (hit[0], q, hit[1], None)
                elif made := self._closure_named(info, f.id, q):
                    yield node, (*made, None)
                elif (f.id in info.wraps or f.id in info.instances) and not _is_parameter(fn, f.id):
                    # `net(x)`, `grad_fn(x, y)`: a module-level Cell instance or grad builder
                    for hit3 in self._compiled_through(info, f.id, set()):
                        yield node, hit3
                    if (called := self._plain_call_method(info.instances.get(f.id))) is not None:
                        # `stopper(loss)`, `stopper` a module-level plain object with
                        # `__call__`: MindSpore compiles that method with it as `self`
                        # (written/heldout37c `r2_train_def_forward_early_stopping_object`,
                        # probes `fix37g_obj_*`: its `self.best = v` is refused under STRICT)
                        yield node, called
                elif q and (held := self._imported_held(info, q)) and not _is_parameter(fn, f.id):
                    # `from model import net` / `from steps import grad_fn`
                    for hit3 in self._compiled_through(held, q.rpartition(".")[2], set()):
                        yield node, hit3
                # Instantiating a custom class runs its __init__ as plain Python (accepted at
                # every level), so __init__ is not followed; its other methods are, when called.
            elif type(f) is ast.Call:  # `ms.grad(forward)(x)`, `ops.GradOperation()(net)(x)`
                for name in _wrapped_names(f, info):
                    if not _is_parameter(fn, name):
                        for hit3 in self._compiled_through(info, name, set()):
                            yield node, hit3
            elif type(f) is ast.Attribute:
                recv = f.value
                cls_q: str | None = None
                if type(recv) is ast.Name and recv.id == "self" and owner:
                    cls_q = owner
                elif (
                    isinstance(recv, ast.Call)
                    and isinstance(recv.func, ast.Name)
                    and recv.func.id == "super"
                    and (owner_cls := self._owner_class(owner)) is not None
                ):
                    for base in owner_cls.bases:
                        m = self._method(base, f.attr)
                        # a base's construct is a root of its own unless the file compiles
                        # Cells only through `ms.jit` (PYNATIVE_MODE): then it is reached here
                        if m and (f.attr != "construct" or runs_eagerly(m[0])):
                            yield node, (m[0], f"{base}.{f.attr}", m[2], base)
                            break
                    continue
                elif isinstance(recv, ast.Name) and recv.id in local_types:
                    cls_q = local_types[recv.id]
                elif isinstance(recv, ast.Name) and recv.id in info.instances:
                    cls_q = info.instances[recv.id]
                elif isinstance(recv, ast.Name) and info.call_args:
                    cls_q = _argument_instance(info, fn, owner, recv.id)
                elif (recv_q := info.resolve(recv)) and self.class_info(recv_q):
                    cls_q = recv_q  # `Net.safe(x)`: a method through its class name
                elif (
                    isinstance(recv, ast.Attribute)
                    and isinstance(recv.value, ast.Name)
                    and recv.value.id == "self"
                    and (owner_cls := self._owner_class(owner)) is not None
                ):
                    cls_q = owner_cls.attr_types.get(recv.attr) or self._argument_class(owner, recv.attr)
                if cls_q is not None:
                    m = self._method(cls_q, f.attr)
                    if m is None and cls_q == owner:
                        on_self = list(self._held_on_self(owner, f.attr))
                        if on_self:
                            for hit3 in on_self:
                                yield node, hit3
                            continue
                    if (
                        m is None
                        and cls_q == owner
                        and (owner_cls := self._owner_class(owner)) is not None
                        and (sub_q := owner_cls.attr_types.get(f.attr))
                        and self.is_cell_class(sub_q)
                    ):
                        # `self.inner(x)`, `self.inner` a sub-cell: calling it compiles its
                        # construct, and MindSpore names this call when that fails
                        m = self._method(sub_q, "construct")
                        if m is not None:
                            m_info, m_cls, m_fn = m
                            yield (
                                node,
                                (m_info, f"{m_info.module}.{m_cls.name}.construct", m_fn, f"{m_info.module}.{m_cls.name}"),
                            )
                        continue
                    if (
                        m is None
                        and cls_q == owner
                        and (owner_cls := self._owner_class(owner)) is not None
                        and (sub_q := owner_cls.attr_types.get(f.attr))
                        and (m := self._method(sub_q, "__call__")) is not None
                    ):
                        # `self.stopper(v)`, `self.stopper` a plain object of this workspace
                        # with `__call__`: MindSpore compiles that method (written/heldout18b
                        # case `r2_train_callback_object_in_cell`: its `self.best = val` is
                        # refused under STRICT at the call)
                        m_info, m_cls, m_fn = m
                        yield (
                            node,
                            (m_info, f"{m_info.module}.{m_cls.name}.__call__", m_fn, f"{m_info.module}.{m_cls.name}"),
                        )
                        continue
                    if m is not None:
                        m_info, m_cls, m_fn = m
                        yield (
                            node,
                            (
                                m_info,
                                f"{m_info.module}.{m_cls.name}.{f.attr}",
                                m_fn,
                                f"{m_info.module}.{m_cls.name}",
                            ),
                        )
                    continue
                q = info.resolve(f)
                if q and (hit := self._function(q)):
                    yield node, (hit[0], q, hit[1], None)


    def _overloads_of(self, info: ModuleInfo) -> dict[str, list[str]]:
        hit = self._overloads.get(id(info))
        if hit is None or hit[0] is not info:  # (the summary kept: its id is not reused)
            hit = self._overloads[id(info)] = (info, multitype_overloads(info))
        return hit[1]

    def _overloads_reached(
        self, info: ModuleInfo, fn: FuncDef, node: ast.Call, overloads: dict[str, list[str]]
    ) -> Iterator[tuple[ast.Call, tuple[ModuleInfo, str, FuncDef, str | None]]]:
        """The overloads of the module's `MultitypeFuncGraph`s `node` calls (`_opt(lr, p, g)`)
        or hands to a mapper (`self.hyper_map(ops.partial(_opt, lr), params, grads)`,
        `ops.Map()(_opt, xs)`): compiled code compiles them (measured, written/heldout36d
        probes `fix36c_hm_*`: `param.name` in the overload fails as in `construct`). A mapped
        call is no call site of the overload (its arguments are not the overload's)."""
        f = node.func
        for name in multitype_references(node):
            if name not in overloads or _is_parameter(fn, name):
                continue
            direct = type(f) is ast.Name and f.id == name
            for fname in overloads[name]:
                t_fn = info.functions[fname]
                if not direct:
                    self.mapped.add((id(node), id(t_fn)))
                yield node, (info, f"{info.module}.{fname}", t_fn, None)


def multitype_overloads(info: ModuleInfo) -> dict[str, list[str]]:
    """The module's functions registered on a `MultitypeFuncGraph` of it (`@_opt.register(
    "Tensor", "Tensor")` on `def _update(...)`), by the graph's name, for a graph with one
    registration: MindSpore compiles only the overload whose types match the call (probe
    `fix36c_hm_unused_overload_clean`: a "Number" overload refusing `param.name`, never
    matched, compiles), which is told for certain only when there is one."""
    found: dict[str, list[str]] = {}
    for fname, fn in info.functions.items():
        for dec in fn.decorator_list:
            if (
                type(dec) is ast.Call
                and type(dec.func) is ast.Attribute
                and dec.func.attr == "register"
                and type(dec.func.value) is ast.Name
                and dec.args
                and all(type(a) is ast.Constant and isinstance(a.value, str) for a in dec.args)
            ):
                found.setdefault(dec.func.value.id, []).append(fname)
    return {g: fs for g, fs in found.items() if len(fs) == 1}


def multitype_references(node: ast.Call) -> Iterator[str]:
    """The names `node` calls or hands over as a function: `g(...)`, `m(g, ...)`,
    `m(ops.partial(g, ...), ...)`."""
    if type(node.func) is ast.Name:
        yield node.func.id
    for arg in node.args:
        if type(arg) is ast.Name:
            yield arg.id
        elif (
            type(arg) is ast.Call
            and arg.args
            and type(arg.args[0]) is ast.Name
            and (type(arg.func) is ast.Attribute and arg.func.attr == "partial" or type(arg.func) is ast.Name and arg.func.id == "partial")
        ):
            yield arg.args[0].id


def _argument_instance(info: ModuleInfo, fn: FuncDef, owner: str | None, name: str) -> str | None:
    """The class of the object the module's calls of `fn` (a `construct` or a module-level
    function) give its parameter `name` (`call_args`): calling its methods in `fn`
    compiles them with that object as `self`, as for one held on `self` (measured,
    written/heldout26a cases `kv_dynamic_cache_object_update_method`,
    `r2_kv_dynamic_cache_prefilled_before_call` and probes `fix27a_argobj_*`)."""
    if owner is not None:
        if fn.name != "construct":
            return None
        given = info.call_args.get(f"{owner}.construct")
        skip = 1
    else:
        given = info.call_args.get(f"{info.module}.{fn.name}")
        skip = 0
    if not given:
        return None
    a = fn.args
    positional = [p.arg for p in (*a.posonlyargs, *a.args)][skip:]
    if name in given:
        return given[name]
    if name in positional:
        return given.get(positional.index(name))
    return None


def _is_parameter(fn: FuncDef, name: str) -> bool:
    """Does `fn` take `name` as a parameter (shadowing a module-level name)?"""
    a = fn.args
    params = [*a.posonlyargs, *a.args, *a.kwonlyargs, *(x for x in (a.vararg, a.kwarg) if x)]
    return any(p.arg == name for p in params)


def _returned_function(fn: FuncDef) -> FuncDef | None:
    """The function `fn` defines in its body and returns by name (`return add`), if any."""
    defined = {
        st.name: st for st in fn.body if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef))
    }
    if not defined:
        return None
    for st in reversed(fn.body):
        if isinstance(st, ast.Return) and isinstance(st.value, ast.Name):
            return defined.get(st.value.id)
    return None


def _wraps_its_argument(decorator: FuncDef, wrapper: FuncDef, info: ModuleInfo) -> bool:
    """Is `wrapper`, returned by the one-parameter `decorator`, decorated
    `@functools.wraps(p)` with `p` that parameter (the function it wraps)?"""
    params = decorator.args
    if len(params.args) != 1 or params.posonlyargs or params.vararg or params.kwonlyargs or params.kwarg:
        return False
    wrapped = params.args[0].arg
    return any(
        isinstance(d, ast.Call)
        and len(d.args) == 1
        and not d.keywords
        and isinstance(d.args[0], ast.Name)
        and d.args[0].id == wrapped
        and info.resolve(d.func) == "functools.wraps"
        for d in wrapper.decorator_list
    )


_BODY_KINDS = frozenset({ast.Call, ast.FunctionDef, ast.AsyncFunctionDef, ast.Assign})
_CALL_KIND = frozenset({ast.Call})
#: Most names a file's callee scans look for in its text (one `str.find` pass each).
_MAX_TARGET_NAMES = 32


def _body_facts(
    info: ModuleInfo, fn: FuncDef, lines: list[int] | None = None, owner: str | None = None
) -> tuple[list[ast.Call], dict[str, FuncDef], dict[str, str]]:
    """What `_callees` needs from a function: its calls in source order, the functions it
    defines (closures: lexical scope beats module names) and `h = Holder(x)` variable types
    (to follow `h.dump()`). One scan that skips names, constants and `a.b` chains.

    With `lines` (where a followed call can be; see `_find_call_lines`), only the calls on
    those lines, found without walking the other statements' expressions; the variable
    types are then collected only when such a call needs them.
    """
    if lines is not None:
        calls = _calls_near(fn, lines)
        local_types: dict[str, str] = {}
        for c in calls:
            if _needs_local_types(c, owner):
                local_types = _local_types(info, fn)
                break
        if len(calls) > 1:
            calls.sort(key=_position)
        return calls, {}, local_types  # `fn` defines no function (`_may_define`)
    calls = []
    local_defs: dict[str, FuncDef] = {}
    local_types = {}
    call_t, assign_t = ast.Call, ast.Assign
    for node in find_branches(fn, _BODY_KINDS):
        t = type(node)
        if t is call_t:
            calls.append(node)  # type: ignore[arg-type]
        elif t is assign_t:
            _note_local_type(info, node, local_types)  # type: ignore[arg-type]
        elif node is not fn:
            local_defs[node.name] = node  # type: ignore[attr-defined,assignment]
    calls.sort(key=_position)
    return calls, local_defs, local_types


def _note_local_type(info: ModuleInfo, node: ast.Assign, local_types: dict[str, str]) -> None:
    value = node.value
    if isinstance(value, ast.Call) and (callee := info.resolve(value.func)):
        for target in node.targets:
            if isinstance(target, ast.Name):
                local_types[target.id] = callee


def _is_container(node: ast.AST) -> bool:
    """Does `node` hold statements (a statement, an `except` clause, a `case`)?"""
    return isinstance(node, (ast.stmt, ast.ExceptHandler, ast.match_case))


_PARTS: dict[type, tuple[tuple[str, ...], tuple[str, ...]]] = {}


def _parts(node_type: type) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(expression fields, statement-block fields) of a statement, `except` or `case` type;
    a simple statement has no blocks."""
    parts = _PARTS.get(node_type)
    if parts is None:
        names = fields(node_type)
        parts = _PARTS[node_type] = (
            tuple(n for n in names if n not in BLOCK_FIELDS),
            tuple(n for n in names if n in BLOCK_FIELDS),
        )
    return parts


def _header_end(node: ast.AST, block: str) -> int:
    """The line where the first block of compound `node` starts (its header ends there)."""
    items = getattr(node, block)
    if items:
        first = items[0]
        if type(first) is ast.match_case:
            first = first.pattern
        return int(first.lineno)
    return int(getattr(node, "end_lineno", None) or 1 << 30)


def _calls_near(fn: FuncDef, lines: list[int]) -> list[ast.Call]:
    """The calls of `fn` in statements and expressions that touch `lines` (the others are
    skipped whole). Calls of one expression keep their `find_branches` order; calls of
    different expressions never share a position, so sorting gives what sorting every call
    of `fn` would, minus the skipped ones. `fn` holds no def/class (`_may_define`), so its
    statements start where their lines do (no decorators above them)."""
    first = fn.decorator_list[0].lineno if fn.decorator_list else fn.lineno
    lo = bisect.bisect_left(lines, first)
    own = lines[lo : bisect.bisect_right(lines, fn.end_lineno or fn.lineno, lo)]
    if len(own) == 1:
        found = _calls_on_line(fn, own[0])
        if found is not None:
            return found
    calls: list[ast.Call] = []
    if not own:
        return calls
    get_parts = _PARTS.get
    stack: list[tuple[ast.AST, list[int]]] = [(fn, own)]
    while stack:
        node, here = stack.pop()
        exprs, blocks = get_parts(type(node)) or _parts(type(node))
        if not blocks:  # a simple statement: all of it is one expression
            calls.extend(find_branches(node, _CALL_KIND))  # type: ignore[arg-type]
            continue
        # the header (condition, iterable, decorators, arguments...) ends where the first
        # block starts: most compound statements hold their call lines in their blocks only
        header_end = _header_end(node, blocks[0])
        if here[0] <= header_end:
            _header_calls(node, exprs, here, header_end, calls)
        for name in blocks:
            items = getattr(node, name)
            if name == "cases":  # `case` clauses have no position of their own
                stack.extend((c, here) for c in items)
            elif items:
                _push_touched(items, here, stack)
    return calls


def _calls_on_line(fn: FuncDef, line: int) -> list[ast.Call] | None:
    """`_calls_near` for a single line, the common case: straight down to the one statement
    holding it. None when that is not so simple (the line is in a header, `case` clauses,
    two statements share the line): the caller then takes the general way."""
    node: ast.AST = fn
    while True:
        exprs, blocks = _PARTS.get(type(node)) or _parts(type(node))
        if not blocks:
            return find_branches(node, _CALL_KIND)  # type: ignore[return-value]
        if line <= _header_end(node, blocks[0]):
            return None
        inner: ast.AST | None = None
        for name in blocks:
            items = getattr(node, name)
            if not items:
                continue
            if name == "cases":
                return None
            k = bisect.bisect_right(items, line, key=_START) - 1
            if k >= 0 and items[k].end_lineno >= line:
                if k and items[k - 1].end_lineno >= line:
                    return None  # `a(); b()`
                inner = items[k]
                break
        if inner is None:
            return []  # a blank or comment line between statements
        node = inner


def _header_calls(
    node: ast.AST, exprs: tuple[str, ...], lines: list[int], header_end: int, calls: list[ast.Call]
) -> None:
    """The calls in the header parts of compound `node` that touch `lines`; parts with no
    position of their own (arguments, `with` items) count as touched when the lines of the
    header (from the statement's own line to `header_end`) are."""
    n = len(lines)
    find = bisect.bisect_left
    i = find(lines, getattr(node, "lineno", 1))
    header = i < n and lines[i] <= header_end
    for name in exprs:
        value = getattr(node, name, None)
        for v in value if type(value) is list else (value,):
            if not isinstance(v, ast.AST):
                continue
            start = getattr(v, "lineno", None)
            if start is None:
                touched = header
            else:
                i = find(lines, start)
                touched = i < n and lines[i] <= (v.end_lineno or start)  # type: ignore[attr-defined]
            if touched:
                calls.extend(find_branches(v, _CALL_KIND))  # type: ignore[arg-type]


_START, _END = operator.attrgetter("lineno"), operator.attrgetter("end_lineno")


def _push_touched(
    items: list[ast.stmt], lines: list[int], stack: list[tuple[ast.AST, list[int]]]
) -> None:
    """Push the statements of a block (in order, not overlapping) that touch one of the
    sorted `lines`, each with the lines it holds: two binary searches per line."""
    if len(lines) == 1:  # the common case: find the statement(s) on that line
        line = lines[0]
        k = bisect.bisect_right(items, line, key=_START) - 1
        while k >= 0 and (items[k].end_lineno or 0) >= line:  # `a(); b()` share a line
            stack.append((items[k], lines))
            k -= 1
        return
    last = -1
    for line in lines:
        k = bisect.bisect_right(items, line, key=_START) - 1  # last one starting by `line`
        if k <= last:
            continue
        j = max(bisect.bisect_left(items, line, key=_END), last + 1)  # first one ending at/after
        for item in items[j : k + 1]:
            lo = bisect.bisect_left(lines, item.lineno)
            stack.append((item, lines[lo : bisect.bisect_right(lines, item.end_lineno or 0, lo)]))
        last = k


def _local_types(info: ModuleInfo, fn: FuncDef) -> dict[str, str]:
    """`h = Holder(x)` variable types in `fn`, later assignments (in `find_branches` order)
    winning as in the full scan; statements only."""
    local_types: dict[str, str] = {}
    stack: list[ast.AST] = [fn]
    while stack:
        node = stack.pop()
        if type(node) is ast.Assign:
            _note_local_type(info, node, local_types)
        stack.extend(c for c in child_nodes(node) if _is_container(c))
    return local_types


def _needs_local_types(call: ast.Call, owner: str | None) -> bool:
    """Can `_callees` look the receiver of `call` up among the function's variables?"""
    f = call.func
    if type(f) is not ast.Attribute or type(f.value) is not ast.Name:
        return False
    return f.value.id != "self" or not owner


def _position(node: ast.Call) -> tuple[int, int]:
    return node.lineno, node.col_offset


def _root_position(root: tuple[FuncDef | ast.Lambda, ast.ClassDef | None]) -> tuple[int, int]:
    return root[0].lineno, root[0].col_offset


def _fullgraph(keywords: dict[str, ast.expr], info: ModuleInfo) -> Level | Literal["bytecode"]:
    mode = keywords.get("capture_mode")
    if isinstance(mode, ast.Constant) and mode.value == "bytecode":
        return "bytecode"
    fg = keywords.get("fullgraph")
    if isinstance(fg, ast.Constant) and fg.value is True:
        return "strict"
    return "lax"  # fullgraph=False (the default) is an explicit LAX


def call_position(call: ast.Call, info: ModuleInfo) -> tuple[int, int, int, int]:
    """Where a call site is (line, column, end line, end column; 1-based columns in the
    file's own column unit), as call sites record it."""
    end_line = call.end_lineno or call.lineno
    cols = info.columns
    if cols:
        return call.lineno, cols.column(call.lineno, call.col_offset), end_line, cols.column(end_line, call.end_col_offset or 0)
    return call.lineno, call.col_offset + 1, end_line, (call.end_col_offset or 0) + 1


def callee_treatment(fn: FuncDef, info: ModuleInfo) -> Literal["skip", "constexpr", "follow"]:
    """How the graph-scope resolution treats a function compiled code calls (one answer for
    `ScopeResolver._resolve` and the project-wide walk in project_scopes.py):
    - "skip": `@jit(capture_mode="bytecode")` runs eagerly; a `@classmethod` call itself
      fails (`cls` is never bound, MS127), so MindSpore never compiles the body;
    - "constexpr": run as Python while compiling, never compiled: a scope of its own kind,
      where only what is frozen into the graph is reported (MS141); what it calls is Python
      too, so resolution stops there;
    - "follow": compiled as a helper."""
    if not fn.decorator_list:
        return "follow"
    if _jit_decoration(fn, info) == "bytecode" or is_classmethod(fn):
        return "skip"
    if is_constexpr(fn, info):
        return "constexpr"
    return "follow"


def is_classmethod(fn: FuncDef) -> bool:
    """Is `fn` decorated `@classmethod` (the builtin)?"""
    return any(isinstance(d, ast.Name) and d.id == "classmethod" for d in fn.decorator_list)


def is_constexpr(fn: FuncDef, info: ModuleInfo) -> bool:
    """Is `fn` decorated `@constexpr` / `@ops.constexpr(...)` (MindSpore's)?"""
    return any(
        _is_mindspore(info.resolve(_decorator_call(dec)[0]), _CONSTEXPR) for dec in fn.decorator_list
    )


def _jit_decoration(fn: FuncDef, info: ModuleInfo) -> Level | Literal["bytecode"] | None:
    """Level from a `@jit(...)` / `@ms_function` decorator, "bytecode", or None if undecorated."""
    for dec in fn.decorator_list:
        func, keywords = _decorator_call(dec)
        if _is_mindspore(info.resolve(func), _JIT_NAMES):
            return _fullgraph({k.arg: k.value for k in keywords if k.arg}, info)
    return None
