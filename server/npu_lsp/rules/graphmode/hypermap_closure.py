"""MS162: a function given to `HyperMap` / `Map` in compiled code closes over a graph variable."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.flow import Analyzer, analyzer
from npu_lsp.rules.graphmode.helpers import GraphRule

#: MindSpore's mapping operators, by the last part of their qualified name
_MAPPERS = frozenset({"HyperMap", "Map"})


@rule(code="MS162", name="hypermap-closure-free-variable", severity="error", family="graphmode")
class HyperMapClosure(GraphRule):
    """## What it does
    Flags a call of `ops.HyperMap()` or `ops.Map()` in compiled code whose function is a
    lambda or a nested `def` that reads a graph variable of the enclosing function: a
    parameter of `construct` or of the `@ms.jit` function, or a local computed from one
    (`d = self.decay * (1 - ops.exp(-step))`, then `lambda e, w: e * d + w * (1 - d)`).

    ## Why is this bad?
    MindSpore's mapping operators take only functions without free graph variables:
    compiling stops with `RuntimeError: HyperMap don't support Closure with free variable
    yet.` (`The Map operator don't support Closure with free variable yet.`), at every
    syntax level. Free names holding Python constants (`d = 0.25`) and `self` attributes
    fold into the function and compile.

    ## Example
    ```python
    def construct(self, step):
        d = self.decay * (1 - ops.exp(-step / 20.0))
        return self.hyper_map(lambda e, w: ops.assign(e, e * d + w * (1 - d)), self.ema, self.weights)
    ```

    ## Use instead
    Pass the variable as an argument through `ops.partial` and a `MultitypeFuncGraph`:
    ```python
    _ema_update = ops.MultitypeFuncGraph("ema_update")

    @_ema_update.register("Tensor", "Tensor", "Tensor")
    def _update(d, e, w):
        return ops.assign(e, e * d + w * (1 - d))

    def construct(self, step):
        d = self.decay * (1 - ops.exp(-step / 20.0))
        return self.hyper_map(ops.partial(_ema_update, d), self.ema, self.weights)
    ```

    ## Fix safety
    No automatic fix.

    ## References
    - MindSpore 2.10, measured: a lambda reading a tensor local or a `construct` parameter,
      and a nested `def` reading a tensor local of a jit function, given to `HyperMap` or
      `Map`, are rejected at LAX and STRICT; a lambda reading only its parameters, a Python
      float local or `self.<attr>`, and `ops.partial(fn, d)`, compile.
    - RULES.md has no row for it (found by the independently written set `zoo`).
    """

    nodes = (ast.Call,)

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        assert isinstance(node, ast.Call)
        if not node.args:
            return
        func = ctx.function
        if func is None or not _mentions_mapper(ctx):
            return
        mapper = _mapper(node.func, ctx)
        if mapper is None:
            return
        closure = _closure(node.args[0], func, ctx)
        if closure is None:
            return
        a = analyzer(ctx)
        free = _free_variable(closure, func, a)
        if free is None:
            return
        yield ctx.diagnostic(
            self,
            node,
            f"the function given to `{mapper}` reads `{free}`, a graph variable of `{getattr(func, 'name', 'lambda')}`; "
            f"MindSpore's {mapper} does not support a closure with free variables: pass it through `ops.partial`",
        )


def _mentions_mapper(ctx: Context) -> bool:
    """Does the file build a `HyperMap` / `Map` at all (`HyperMap(`, `Map(`)? A text test, so
    files without one cost nothing."""
    hit = ctx.cache.get("ms162.text")
    if hit is None:
        hit = ctx.cache["ms162.text"] = "Map(" in ctx.text
    return bool(hit)


def _mapper(f: ast.expr, ctx: Context) -> str | None:
    """`HyperMap` / `Map` when `f` is one: built inline (`ops.HyperMap()(...)`) or held on
    `self` from `__init__` (`self.hyper_map = ops.HyperMap()`)."""
    made: ast.expr | None = None
    if isinstance(f, ast.Call):
        made = f
    elif isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == "self":
        a = analyzer(ctx)
        cls = a.owner_class(ctx.function)
        values = a._self_values(cls).get(f.attr, []) if cls is not None else []
        if len(values) == 1:
            made = values[0]
    if not isinstance(made, ast.Call) or made.args:  # `HyperMap(fn)` fixes its function in __init__
        return None
    q = ctx.qualname(made.func)
    if q is None or not q.startswith("mindspore."):
        return None
    name = q.rsplit(".", 1)[-1]
    return name if name in _MAPPERS else None


def _closure(arg: ast.expr, func: ast.AST, ctx: Context) -> ast.Lambda | ast.FunctionDef | None:
    """The lambda written in place or bound to the name the argument is, or the function
    defined in the body of `func` that the argument names."""
    if isinstance(arg, ast.Lambda):
        return arg
    if isinstance(arg, ast.Name):
        bound = analyzer(ctx).single_assignment(arg.id, func)
        if isinstance(bound, ast.Lambda):  # `f = lambda u, v: ...`, then `hyper_map(f, ...)`
            return bound
        for st in ast.walk(func):
            if isinstance(st, ast.FunctionDef) and st.name == arg.id and st is not func and ctx.parent(st) is not None:
                return st
    return None


def _free_variable(closure: ast.Lambda | ast.FunctionDef, func: ast.AST, a: Analyzer) -> str | None:
    """The first name the closure reads from `func` that holds a graph variable."""
    args = closure.args
    own = {p.arg for p in [*args.posonlyargs, *args.args, *args.kwonlyargs]}
    own |= {p.arg for p in (args.vararg, args.kwarg) if p is not None}
    body: list[ast.AST] = [closure.body] if isinstance(closure, ast.Lambda) else list(closure.body)
    for part in body:
        for sub in ast.walk(part):
            if isinstance(sub, ast.Name) and not isinstance(sub.ctx, ast.Load):
                own.add(sub.id)
    outer = _bound_names(func)
    for part in body:
        for sub in ast.walk(part):
            if (
                isinstance(sub, ast.Name)
                and isinstance(sub.ctx, ast.Load)
                and sub.id not in own
                and sub.id in outer
                and sub.id != "self"
                and a.kind(sub, func).dynamic
            ):
                return sub.id
    return None


def _bound_names(func: ast.AST) -> set[str]:
    """Parameters of `func` and the names its body assigns."""
    out: set[str] = set()
    if isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        args = func.args
        out |= {p.arg for p in [*args.posonlyargs, *args.args, *args.kwonlyargs]}
        out |= {p.arg for p in (args.vararg, args.kwarg) if p is not None}
    for sub in ast.walk(func):
        if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store):
            out.add(sub.id)
    return out
