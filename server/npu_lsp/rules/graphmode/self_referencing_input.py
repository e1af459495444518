"""MS129: a list or dict that contains itself passed into a compiled network."""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator

from npu_lsp.astutil import walk
from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import Rule, rule
from npu_lsp.scope import module_statements


@rule(code="MS129", name="self-referencing-input", severity="error", family="graphmode")
class SelfReferencingInput(Rule):
    """## What it does
    Flags calls of a Cell instance or a `@jit` function, at module level or in a plain-Python
    function's body, that pass a list or dict which contains itself, directly or through
    other lists and dicts (after `a.append(a)`, `a += [a]`, `a.extend([a])`, `d["k"] = d`,
    or `a[0] = b; b[0] = a`). Only straight-line code is followed, and a container used any
    other way before the call (popped, aliased, passed elsewhere, changed in a branch or a
    loop) is no longer judged.

    ## Why is this bad?
    MindSpore converts graph inputs recursively and stops with
    `RuntimeError: Detect recursion when converting python object.` at every syntax level.

    ## Example
    ```python
    a = [1, 2]
    a.append(a)
    net(a)
    ```

    ## Use instead
    Pass flat data (a tuple of tensors, or the values you need):
    ```python
    a = [1, 2]
    net(tuple(a))
    ```

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 1: self-referencing list or dict passed as a graph input.
    """

    nodes = (ast.Module,)

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        assert isinstance(node, ast.Module)
        info = ctx.scopes.info
        module = list(module_statements(node))
        # the blocks `_block` may be given: the module's, and every function's body (the
        # compiled ones are left out below, after the cheap test)
        if not _may_cycle([module, *(fn.body for fn in info.functions.values())]):
            return
        compiled = {n for n, q in info.instances.items() if ctx.scopes.is_cell_class(q)}
        compiled |= {n for n, f in info.functions.items() if ctx.scopes.scope_for(f) is not None}
        yield from self._block(module, compiled, ctx)
        # test-style code: `def test_x(): net = Net(); a = [1]; a.append(a); net(a)`
        for fn in info.functions.values():
            if ctx.scopes.scope_for(fn) is not None:
                continue
            local = set(compiled)
            for st in fn.body:
                if (
                    isinstance(st, ast.Assign)
                    and isinstance(st.value, ast.Call)
                    and (q := info.resolve(st.value.func)) is not None
                    and ctx.scopes.is_cell_class(q)
                ):
                    local |= {t.id for t in st.targets if isinstance(t, ast.Name)}
            yield from self._block(fn.body, local, ctx)

    def _block(
        self, statements: list[ast.stmt], compiled: set[str], ctx: Context
    ) -> Iterator[Diagnostic]:
        """Straight-line statements of one block: which container names hold which (`edges`),
        and calls of compiled callables given a name from which a cycle is reachable.

        Only what is certain counts: a name is tracked from its binding to a list or dict
        display; any statement using it other than as an edge or a graph input (an alias,
        `pop`, `del`, a call, a compound statement, a nested function reading it) stops
        tracking it, so a cycle this sees is one the program really builds."""
        nested = _names_in_nested_bodies(statements)
        containers: set[str] = set()
        edges: dict[str, set[str]] = {}
        for st in statements:
            inputs: set[int] = set()
            # calls inside compound statements may run after changes this does not order
            simple = isinstance(
                st, (ast.Expr, ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Return)
            )
            for sub in walk(st) if simple else ():
                if not (
                    isinstance(sub, ast.Call)
                    and isinstance(sub.func, ast.Name)
                    and sub.func.id in compiled
                ):
                    continue
                for arg in [*sub.args, *(k.value for k in sub.keywords)]:
                    if not (isinstance(arg, ast.Name) and arg.id in containers):
                        continue
                    inputs.add(id(arg))
                    if _reaches_cycle(arg.id, edges):
                        yield ctx.diagnostic(
                            self,
                            arg,
                            f"`{arg.id}` contains itself; MindSpore cannot convert it into a graph input",
                        )
            edge = _edge(st)
            if edge is not None and edge[0] in containers:
                holder, held, replaces = edge
                if replaces:
                    edges[holder] = set()
                # a held name that is not a tracked container adds no edge (fewer cycles)
                edges.setdefault(holder, set()).update(held & containers)
                continue
            bound = _container_binding(st)
            for sub in walk(st):
                if isinstance(sub, ast.Name) and sub.id in containers and id(sub) not in inputs:
                    _forget(sub.id, containers, edges)
            if bound is not None and bound not in nested:
                _forget(bound, containers, edges)
                containers.add(bound)


def _may_cycle(blocks: list[list[ast.stmt]]) -> bool:
    """Cheap pre-filter: can the edges of one of `blocks` close a cycle? Every name on a
    cycle both holds a name and is held by one, and a block's edges are statements directly
    in it (`_block` looks into no nested statement), all seen here; most files that grow
    containers (`outs.append(y)`) have no such name, and the per-block analysis (several
    walks of every class) is left out for them. Methods and nested blocks are no block, so
    most of a file's statements are never looked at."""
    holders: set[str] = set()
    held: set[str] = set()
    expr, call, attribute, assign = ast.Expr, ast.Call, ast.Attribute, ast.Assign
    methods = _EDGE_METHODS
    for st in [st for block in blocks for st in block]:
        # `_edge`'s first tests inlined: most statements are calls of other methods,
        # plain assignments or compound statements, none of them an edge
        t = type(st)
        if t is expr:
            v = st.value  # type: ignore[attr-defined]
            if type(v) is not call or type(v.func) is not attribute or v.func.attr not in methods:
                continue
        elif t is assign:
            if type(st.targets[0]) is not ast.Subscript:  # type: ignore[attr-defined]
                continue
        elif t is not ast.AugAssign:
            continue
        edge = _edge(st)
        if edge is not None:
            holders.add(edge[0])
            held |= edge[1]
    return not holders.isdisjoint(held)


#: the list methods `_edge` reads as making a container hold a name
_EDGE_METHODS = frozenset({"append", "insert", "extend"})


def _names_in_nested_bodies(statements: list[ast.stmt]) -> set[str]:
    """Names a function or lambda defined in the block (methods of its classes too) may
    reach outside itself: calling it later may change a container behind this block's back.
    A function's parameters and the names it binds (without `global` / `nonlocal`) are its
    own. (A class body runs where the class is defined, a statement the block sees.)"""
    out: set[str] = set()
    for st in statements:
        for sub in walk(st):
            if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                a = sub.args
                own = {x.arg for x in [*a.posonlyargs, *a.args, *a.kwonlyargs]}
                own |= {x.arg for x in (a.vararg, a.kwarg) if x is not None}
                names = [n for n in walk(sub) if isinstance(n, ast.Name)]
                declared = {
                    d
                    for n in walk(sub)
                    if isinstance(n, (ast.Global, ast.Nonlocal))
                    for d in n.names
                }
                own |= {n.id for n in names if isinstance(n.ctx, ast.Store)}
                own -= declared
                out |= {n.id for n in names if n.id not in own}
    return out


def _forget(name: str, containers: set[str], edges: dict[str, set[str]]) -> None:
    containers.discard(name)
    edges.pop(name, None)
    for held in edges.values():
        held.discard(name)


def _container_binding(st: ast.stmt) -> str | None:
    """`a = [..]` / `d = {..}` / `a = list(..)` (a fresh list or dict) -> "a", else None."""
    if (
        isinstance(st, ast.Assign)
        and len(st.targets) == 1
        and isinstance(st.targets[0], ast.Name)
        and (
            isinstance(st.value, (ast.List, ast.Dict, ast.ListComp, ast.DictComp))
            or (
                isinstance(st.value, ast.Call)
                and isinstance(st.value.func, ast.Name)
                and st.value.func.id in ("list", "dict")
            )
        )
    ):
        return st.targets[0].id
    return None


def _edge(st: ast.stmt) -> tuple[str, set[str], bool] | None:
    """A statement making container `a` hold names: `a.append(b)`, `a.insert(i, b)`,
    `a.extend([b, ..])`, `a += [b, ..]` -> ("a", {"b"}, False); `a[k] = b` -> ("a", {"b"}, True)
    (a store may replace what `a` held, so earlier edges of `a` are dropped: fewer cycles,
    never a made-up one). None for anything else."""
    if isinstance(st, ast.Expr) and isinstance(st.value, ast.Call):
        f = st.value.func
        args = st.value.args
        if (
            not (isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name))
            or st.value.keywords
        ):
            return None
        if f.attr == "append" and len(args) == 1 and isinstance(args[0], ast.Name):
            return f.value.id, {args[0].id}, False
        if f.attr == "insert" and len(args) == 2 and isinstance(args[1], ast.Name):
            if any(isinstance(n, ast.Name) for n in walk(args[0])):
                return None
            return f.value.id, {args[1].id}, False
        if f.attr == "extend" and len(args) == 1:
            held = _display_names(args[0])
            return (f.value.id, held, False) if held else None
        return None
    if (
        isinstance(st, ast.AugAssign)
        and isinstance(st.op, ast.Add)
        and isinstance(st.target, ast.Name)
    ):
        held = _display_names(st.value)
        return (st.target.id, held, False) if held else None
    if (
        isinstance(st, ast.Assign)
        and len(st.targets) == 1
        and isinstance(t := st.targets[0], ast.Subscript)
        and isinstance(t.value, ast.Name)
        and isinstance(st.value, ast.Name)
        and not any(isinstance(n, ast.Name) for n in walk(t.slice))
    ):
        return t.value.id, {st.value.id}, True
    return None


def _display_names(expr: ast.expr) -> set[str]:
    """`[b, 1, c]` / `(b,)` -> {"b", "c"}; empty unless every name element is a bare name."""
    if not isinstance(expr, (ast.List, ast.Tuple)):
        return set()
    if any(isinstance(e, ast.Starred) for e in expr.elts):
        return set()
    names = {e.id for e in expr.elts if isinstance(e, ast.Name)}
    if any(not isinstance(e, (ast.Name, ast.Constant)) for e in expr.elts):
        return set()
    return names


def _reaches_cycle(start: str, edges: dict[str, set[str]]) -> bool:
    """Does some container reachable from `start` (itself included) hold itself, directly
    or through others? Depth-first with an explicit stack (no recursion)."""
    state: dict[str, int] = {}  # 1 on the current path, 2 done
    stack: list[tuple[str, Iterator[str]]] = [(start, iter(sorted(edges.get(start, ()))))]
    state[start] = 1
    while stack:
        name, it = stack[-1]
        nxt = next(it, None)
        if nxt is None:
            state[name] = 2
            stack.pop()
            continue
        s = state.get(nxt)
        if s == 1:
            return True
        if s is None:
            state[nxt] = 1
            stack.append((nxt, iter(sorted(edges.get(nxt, ())))))
    return False
