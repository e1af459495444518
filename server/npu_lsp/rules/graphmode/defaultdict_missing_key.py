"""MS168: reading a key a dict built in compiled code never got (`defaultdict`, `setdefault`)."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.helpers import GraphRule

_DEFAULTDICT = "collections.defaultdict"


@rule(code="MS168", name="defaultdict-missing-key", severity="error", family="graphmode")
class DefaultdictMissingKey(GraphRule):
    """## What it does
    Flags a key read (`d["a"]`, `d["a"] += v`, `d["a"].append(v)`) of a
    `collections.defaultdict` built in compiled code, before any assignment of that key, and
    a read with a key that is not a literal (`d[k].append(x)` in `for k in ...`,
    `d[self.name] += v`) before anything was stored in the dict, unless an `if` on the dict
    guards it (`if k in d:`).
    Under LAX, also a key read (`d["a"]`, `d["a"] += v`) of a dict display (`d = {}`) whose
    key was only given by `d.setdefault("a", v)`, and a call on what `setdefault` returns
    (`groups.setdefault("k", []).append(t)`).

    ## Why is this bad?
    The graph turns the `defaultdict` into a plain dict and drops its default factory:
    MindSpore 2.10 stops with `ValueError: The key a does not exist in the dict:{}` at every
    syntax level. Assigning the key first (`d["a"] = v`, then reading it) compiles.
    `dict.setdefault` is not a graph method: LAX runs it through JIT Fallback on a copy of
    the dict, so the key never reaches the graph's dict (the same "The key a does not exist
    in the dict" error, or a refused call on the returned default); STRICT refuses the
    method itself (MS144). `"a" in d`, `d.get("a", v)` and a key the display already has
    compile.

    ## Example
    ```python
    def construct(self, box_pred, box_gt):
        losses = defaultdict(float)
        losses["box"] += self.l1(box_pred, box_gt)
        return losses["box"]
    ```

    ## Use instead
    ```python
    def construct(self, box_pred, box_gt):
        losses = {"box": 0.0}
        losses["box"] += self.l1(box_pred, box_gt)
        return losses["box"]
    ```

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 1 (containers in graph mode); measured on MindSpore 2.10 with the
      probes of the `python` written set (tests/npu_lsp/fixtures/written/python/README.md).
    """

    nodes = (ast.Assign,)
    # `defaultdict(...)` is called by that name, `.setdefault(` by its attribute: a file
    # spelling neither has nothing for either branch
    words = ("defaultdict", "setdefault")

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        assert isinstance(node, ast.Assign)
        # not a generator itself: most nodes stop at these tests, for the cost of a call
        # rather than of a generator each
        if (
            ctx.function is None
            or len(node.targets) != 1
            or not isinstance(node.targets[0], ast.Name)
            or not isinstance(node.value, (ast.Dict, ast.Call))
        ):
            return ()  # a name bound to a dict display or a `defaultdict(...)` only
        func = ctx.function
        if isinstance(node.value, ast.Dict):
            if (
                ctx.scope is None
                or ctx.scope.strict  # under STRICT, MS144 refuses `setdefault` itself
                or not _calls_setdefault(func, ctx)
            ):
                return ()
            return self._setdefault(node, node.targets[0].id, func, ctx)
        if (
            _last_name(node.value.func) != "defaultdict"  # cheap test before resolving
            or ctx.qualname(node.value.func) != _DEFAULTDICT
        ):
            return ()
        return self._defaultdict(node, func, ctx)

    def wants_assign(self, target: type[ast.AST] | None, value: type[ast.AST]) -> bool:
        # `check`'s shape test: one name bound to a dict display or a call
        return target is ast.Name and (value is ast.Dict or value is ast.Call)

    def _defaultdict(self, node: ast.Assign, func: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        """`name = defaultdict(...)` read at a key before one is assigned."""
        assert isinstance(node.targets[0], ast.Name)
        name = node.targets[0].id
        read = _first_missing_read(func, node, name)
        if read is not None:
            key = ctx.segment(read.slice)
            yield ctx.diagnostic(
                self,
                read,
                f"`{name}` is a `defaultdict` built in compiled code, which the graph makes a plain dict: reading the key {key} before assigning it fails to compile (MindSpore: The key ... does not exist in the dict)",
            )

    def _setdefault(self, made: ast.Assign, name: str, func: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        """A dict display `name = {...}` given keys by `name.setdefault(k, v)`: LAX runs the
        call through JIT Fallback on a copy, so the key never reaches the graph's dict
        (measured: `d = {}; d.setdefault("a", x); return d["a"]` fails with "The key a does
        not exist in the dict:{}", `d.setdefault("k", []).append(t)` fails too; `"a" in d`,
        `d.get("a", v)`, a key of the display and `d["a"] = v` afterwards compile)."""
        assert isinstance(made.value, ast.Dict)
        present = {k.value for k in made.value.keys if isinstance(k, ast.Constant)}
        if None in made.value.keys or any(not isinstance(k, ast.Constant) for k in made.value.keys):
            return  # `{**other}` or computed keys: what it holds is not known here
        events: list[tuple[tuple[int, int], str, ast.AST, object]] = []
        for n in _own_nodes(func):
            if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store) and n is not made.targets[0]:
                return  # rebound: not a straight line we can follow
            if isinstance(n, ast.Subscript) and isinstance(n.value, ast.Name) and n.value.id == name:
                if not isinstance(n.slice, ast.Constant):
                    return
                kind = "store" if isinstance(n.ctx, ast.Store) else "load"
                events.append(((n.lineno, n.col_offset), kind, n, n.slice.value))
            elif (
                isinstance(n, ast.Call)
                and isinstance(n.func, ast.Attribute)
                and n.func.attr == "setdefault"
                and isinstance(n.func.value, ast.Name)
                and n.func.value.id == name
                and n.args
            ):
                if not isinstance(n.args[0], ast.Constant):
                    return
                events.append(((n.lineno, n.col_offset), "setdefault", n, n.args[0].value))
        start = (made.lineno, made.col_offset)
        assigned: set[object] = set(present)
        parents = {id(c): p for p in _own_nodes(func) for c in ast.iter_child_nodes(p)}
        defaulted: set[object] = set()
        for pos, kind, n, key in sorted(events, key=lambda e: e[0]):
            if pos < start:
                continue
            if kind == "setdefault":
                if key in assigned:
                    continue
                outer = parents.get(id(n))
                if isinstance(outer, ast.Attribute) and outer.value is n and isinstance(n, ast.Call):
                    yield ctx.diagnostic(
                        self,
                        n,
                        f"`{ctx.segment(n.func)}(...)` runs as Python on a copy of `{name}` in graph mode (JIT Fallback): the default it returns is not the dict's, so `.{outer.attr}` on it is lost (MindSpore rejects it); assign the key first (`{name}[{key!r}] = ...`)",
                    )
                    return
                defaulted.add(key)
            elif kind == "store":
                if isinstance(parents.get(id(n)), ast.AugAssign) and key in defaulted and key not in assigned:
                    yield self._missing(n, name, key, ctx)
                    return
                assigned.add(key)
            elif key in defaulted and key not in assigned:
                yield self._missing(n, name, key, ctx)
                return

    def _missing(self, read: ast.AST, name: str, key: object, ctx: Context) -> Diagnostic:
        return ctx.diagnostic(
            self,
            read,
            f"`{name}.setdefault({key!r}, ...)` runs as Python on a copy of `{name}` in graph mode (JIT Fallback), so the key {key!r} is never added: reading it fails to compile (MindSpore: The key {key} does not exist in the dict); assign it with `{name}[{key!r}] = ...`",
        )


def _calls_setdefault(func: ast.AST, ctx: Context) -> bool:
    """Does `func`'s own source call `.setdefault(` at all? (once per function)"""
    key = ("MS168.setdefault", id(func))
    hit: bool | None = ctx.cache.get(key)
    if hit is None:
        hit = ctx.cache[key] = any(
            isinstance(n, ast.Attribute) and n.attr == "setdefault" for n in _own_nodes(func)
        )
    return hit


#: the key of a subscript that is not a literal (`d[k]` with a loop variable, `d[self.name]`)
_ANY_KEY = object()


def _first_missing_read(func: ast.AST, made: ast.Assign, name: str) -> ast.Subscript | None:
    """The first `name[key]` read after `made` (in source order, in `func`'s own body) whose
    key no earlier store assigned; None when `name` is rebound. A key that is not a literal
    (`d[k]` in `for k in ...`, `d[self.name]`) is missing when nothing was stored in the dict
    before it (measured at both levels: `d[k].append(x)` over a constant tuple, `d[i] += 1`
    over `range(3)`, `d[self.name] += v` fail with "The key ... does not exist"), unless an
    `if` on the dict guards the read (`if k in d: d[k].append(x) else: d[k] = [x]` compiles)."""
    events: list[tuple[tuple[int, int], str, ast.Subscript | None, object]] = []
    for n in _own_nodes(func):
        if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store) and n is not made.targets[0]:
            return None  # rebound: the flow is not a straight line we can follow
        if isinstance(n, ast.Subscript) and isinstance(n.value, ast.Name) and n.value.id == name:
            key = n.slice.value if isinstance(n.slice, ast.Constant) else _ANY_KEY
            kind = "store" if isinstance(n.ctx, ast.Store) else "load"
            events.append(((n.lineno, n.col_offset), kind, n, key))
        elif (
            isinstance(n, ast.Call)
            and isinstance(n.func, ast.Attribute)
            and isinstance(n.func.value, ast.Name)
            and n.func.value.id == name
        ):
            events.append(((n.lineno, n.col_offset), "store", None, _ANY_KEY))  # `d.update(...)`
    start = (made.lineno, made.col_offset)
    assigned: set[object] = set()
    parents = {id(c): p for p in _own_nodes(func) for c in ast.iter_child_nodes(p)}
    for pos, kind, sub, key in sorted(events, key=lambda e: e[0]):
        if pos < start:
            continue
        if kind == "store" and (sub is None or not isinstance(parents.get(id(sub)), ast.AugAssign)):
            if key is _ANY_KEY:
                return None  # any key may hold a value from here on
            assigned.add(key)
            continue
        # a read (`d[k] += v` reads `d[k]` first)
        if key is _ANY_KEY:
            if assigned:
                return None  # the key may be one of those assigned
            if sub is not None and not _guarded(sub, name, parents):
                return sub
            return None
        if key not in assigned:
            return sub
    return None


def _guarded(sub: ast.AST, name: str, parents: dict[int, ast.AST]) -> bool:
    """Is `sub` inside an `if` (or conditional expression) whose test reads the dict?"""
    child, node = sub, parents.get(id(sub))
    while node is not None:
        if (
            isinstance(node, (ast.If, ast.IfExp, ast.While))
            and child is not node.test
            and any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(node.test))
        ):
            return True
        child, node = node, parents.get(id(node))
    return False


def _last_name(f: ast.expr) -> str:
    return f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""


def _own_nodes(func: ast.AST) -> list[ast.AST]:
    """Nodes of `func` outside nested functions, classes and lambdas."""
    out: list[ast.AST] = []
    stack: list[ast.AST] = list(getattr(func, "body", []))
    while stack:
        n = stack.pop()
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        out.append(n)
        stack.extend(ast.iter_child_nodes(n))
    return out
