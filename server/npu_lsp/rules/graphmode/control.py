"""Control-flow questions shared by the branch rules: continuations, bindings, first uses."""

from __future__ import annotations

import ast
import bisect
from collections.abc import Iterator

from npu_lsp.astutil import COMPREHENSION_TYPES, NO_BLOCKS, STATEMENT_BLOCKS, store_names, walk
from npu_lsp.engine import Context
from npu_lsp.rules.graphmode.helpers import returns_in, terminates


def block_of(node: ast.stmt, ctx: Context) -> tuple[ast.AST | None, list[ast.stmt], int]:
    """(parent, the statement list holding `node`, its index)."""
    parent = ctx.parent(node)
    if parent is None:
        return None, [], -1
    for name in ("body", "orelse", "finalbody"):
        block = getattr(parent, name, None)
        if type(block) is list and node in block:
            # an AST node equals only itself: `index` finds it by identity, at C speed
            return parent, block, block.index(node)
    for h in getattr(parent, "handlers", []) or []:
        for i, st in enumerate(h.body):
            if st is node:
                return h, h.body, i
    return parent, [], -1


def continuation_returns(node: ast.If, ctx: Context) -> tuple[list[ast.Return], bool] | None:
    """Returns reached when `node`'s test is false and there is no `else`, plus whether the
    path can fall off the end of the function (an implicit `return None`). None if unknown."""
    parent, block, i = block_of(node, ctx)
    if i < 0:
        return None
    rest = block[i + 1 :]
    rets = returns_in(rest)
    if terminates(rest):
        return rets, False
    if parent is ctx.function:
        return rets, True
    return None


def bindings(stmts: list[ast.stmt]) -> set[str]:
    """Names bound by the statements in `stmts` (assignment, `for` and `with` targets, nested
    `def`/`class` names), not looking into nested functions, classes or comprehensions.
    Only statements are scanned: a `:=` inside an expression is rejected in graph code on
    its own (MS110), so it need not count here."""
    out: set[str] = set()
    # the statements `astutil.statements` yields, in any order (a set is built), without a
    # generator: most blocks asked about are one or two simple statements
    stack = list(stmts)
    pop, extend = stack.pop, stack.extend
    while stack:
        st = pop()
        t = type(st)
        if t is ast.Assign:
            for target in st.targets:  # type: ignore[attr-defined]
                store_names(target, out)
            continue
        if t in NO_BLOCKS:
            if t is ast.AugAssign or t is ast.AnnAssign:
                store_names(st.target, out)  # type: ignore[attr-defined]
            elif t in _DEFINITIONS:
                out.add(st.name)  # type: ignore[attr-defined]
            continue
        if t in _TARGET_STATEMENTS:
            store_names(st.target, out)  # type: ignore[attr-defined]
        elif t is ast.With or t is ast.AsyncWith:
            for item in st.items:  # type: ignore[attr-defined]
                if item.optional_vars is not None:
                    store_names(item.optional_vars, out)
        # the blocks by the statement's type (`except` clauses and `case`s are pushed and
        # give their bodies in turn): the same statements, in another order (a set is built)
        blocks = STATEMENT_BLOCKS.get(t)
        if blocks is not None:
            for name in blocks:
                extend(getattr(st, name))
    return out


_TARGET_STATEMENTS = frozenset({ast.AugAssign, ast.AnnAssign, ast.For, ast.AsyncFor})
_DEFINITIONS = frozenset({ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef})




def _comprehension_names(
    comp: ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp,
) -> Iterator[int]:
    """ids of the Name nodes of `comp` naming its own loop variables: its targets, and their
    reads in the element, the conditions and every iterable but the first (which Python
    evaluates in the enclosing scope). Python 3 and MindSpore's parser give a comprehension
    a scope of its own, so these are not the enclosing function's names (measured: a
    comprehension over `i` after a branch binding `i` in a loop compiles)."""
    local: set[str] = set()
    for g in comp.generators:
        store_names(g.target, local)
    parts: list[ast.AST] = (
        [comp.key, comp.value] if isinstance(comp, ast.DictComp) else [comp.elt]
    )
    for k, g in enumerate(comp.generators):
        parts.append(g.target)
        parts.extend(g.ifs)
        if k:
            parts.append(g.iter)
    for part in parts:
        for sub in ast.walk(part):
            if type(sub) is ast.Name and sub.id in local:
                yield id(sub)


def param_names(func: ast.AST) -> set[str]:
    """Every parameter name of a function or lambda (empty for anything else)."""
    out: set[str] = set()
    args = getattr(func, "args", None)
    if type(args) is ast.arguments:
        for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]:
            out.add(a.arg)
        for extra in (args.vararg, args.kwarg):
            if extra is not None:
                out.add(extra.arg)
    return out


class NameEvents:
    """Every load/store of a plain name in one function (nested functions included, since
    closures read the same names), sorted by position; built once per function."""

    def __init__(self, func: ast.AST) -> None:
        self.params: set[str] = param_names(func)
        # (line, order, col, name, is_store); on one line a read precedes a store (`y = y + 1`)
        events: list[tuple[int, int, int, str, bool]] = []
        names_at: dict[tuple[str, int], ast.Name] = {}
        own: set[int] = set()  # names a comprehension binds for itself (never the function's)
        for n in walk(func):  # a parent comes before its children
            if type(n) in COMPREHENSION_TYPES:
                own.update(_comprehension_names(n))  # type: ignore[arg-type]
            elif type(n) is ast.Name and id(n) in own:
                continue
            if type(n) is ast.Name:
                store = type(n.ctx) is not ast.Load
                events.append((n.lineno, 1 if store else 0, n.col_offset, n.id, store))
                names_at[(n.id, n.lineno * 100_000 + n.col_offset)] = n
            elif (
                isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                and n is not func
            ):
                events.append((n.lineno, 1, n.col_offset, n.name, True))
            elif isinstance(n, (ast.Global, ast.Nonlocal)):
                events.extend((n.lineno, 1, n.col_offset, name, True) for name in n.names)
        events.sort()
        self.events = events
        self.names_at = names_at

    def bound_before(self, line: int) -> set[str]:
        """Parameters plus names stored on lines before `line`."""
        out = set(self.params)
        for ln, _o, _c, name, store in self.events:
            if ln >= line:
                break
            if store:
                out.add(name)
        return out

    def first_use_after(self, name: str, line: int) -> ast.Name | None:
        """The first occurrence of `name` after `line`, if it is a read (else None)."""
        i = bisect.bisect_right(self.events, (line, 2, 0, "", False))
        for ln, _o, col, n, store in self.events[i:]:
            if n == name:
                return None if store else self.names_at.get((name, ln * 100_000 + col))
        return None


def name_events(ctx: Context, func: ast.AST) -> NameEvents:
    key = (NameEvents, id(func))
    ev = ctx.cache.get(key)
    if ev is None:
        ev = ctx.cache[key] = NameEvents(func)
    return ev


def is_function(node: ast.AST) -> bool:
    t = type(node)  # (exact types: a parsed node is never of a subclass)
    return t is ast.FunctionDef or t is ast.AsyncFunctionDef or t is ast.Lambda
