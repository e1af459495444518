"""MS218: Python gives a compiled entry a list or ParameterTuple of Parameters as an argument."""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.entries import entry_callers
from npu_lsp.rules.graphmode.helpers import GraphRule

#: Cell methods whose result is a list of the network's Parameter objects
_LIST_METHODS = frozenset({"trainable_params", "untrainable_params"})
_MAX_DEPTH = 4


@rule(code="MS218", name="parameter-list-entry-argument", severity="error", family="graphmode")
class ParameterListEntryArgument(GraphRule):
    """## What it does
    Flags a call from Python code of an `@ms.jit` function, or of a network whose
    `construct` is compiled, that gives it a list or a `ParameterTuple` of Parameters as an
    argument: `net.trainable_params()`, `ParameterTuple(...)`, its `.clone(...)`, `list(...)`
    of one, or a module-level name bound to one (the EMA idiom `ema_update(ema_params,
    params)`).

    ## Why is this bad?
    MindSpore turns a top graph's arguments into graph inputs; Parameters handed over in a
    list or a `ParameterTuple` become inputs without a value, and compiling fails at every
    syntax level, whether the function only reads them or assigns them: `RuntimeError:
    Parameter[0] has no default param`. A plain `tuple(net.trainable_params())`, a single
    Parameter read, and Parameters the function reads as globals compile.

    ## Example
    ```python
    params = ParameterTuple(net.trainable_params())
    ema_params = params.clone(prefix="ema", init="same")

    @ms.jit
    def ema_update(ema_params, params, decay):
        for e, p in zip(ema_params, params):
            ops.assign(e, e * decay + p * (1 - decay))
        return decay

    ema_update(ema_params, params, Tensor(0.9, ms.float32))
    ```

    ## Use instead
    Read the Parameters as globals (or hold them on a Cell as `self` attributes):
    ```python
    @ms.jit
    def ema_update(decay):
        for e, p in zip(ema_params, params):
            ops.assign(e, e * decay + p * (1 - decay))
        return decay

    ema_update(Tensor(0.9, ms.float32))
    ```

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 1 (rejected at every level).
    - Measured on MindSpore 2.10 with the written set `heldout24a`
      (`ema_jit_function_parametertuple_args`, `r2_ema_jit_param_list_args_python_decay`)
      and its probes `miss24_jp_*`: a list from `trainable_params()` or a `ParameterTuple`
      given to an `@ms.jit` function (PyNative or GRAPH_MODE) or to a Cell's `construct` is
      refused, read-only too; `tuple(net.trainable_params())`, a single Parameter read, and
      the same tuples read as globals compile.
    """

    nodes = (ast.FunctionDef,)
    #: every list `_parameter_list` knows is spelled with one of these: in a file without,
    #: the rule is left out of the walk
    words = ("trainable_params", "untrainable_params", "ParameterTuple")

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        assert isinstance(node, ast.FunctionDef)
        scope = ctx.scope
        if scope is None or scope.kind not in ("jit", "construct") or scope.function is not node:
            return
        callers = entry_callers(node, scope.kind, ctx)
        if callers is None:
            return
        for call in module_calls(ctx):
            if not callers.calls(call):
                continue
            for arg in (*call.args, *(k.value for k in call.keywords)):
                if _parameter_list(arg, ctx, 0):
                    yield ctx.diagnostic(
                        self,
                        arg,
                        f"`{ctx.segment(arg)}` is a list or ParameterTuple of Parameters given to the compiled `{node.name}`: MindSpore makes them graph inputs without a value (RuntimeError: Parameter[0] has no default param); read them as globals or from `self`, or pass `tuple(...)`",
                    )


def module_calls(ctx: Context) -> list[ast.Call]:
    """Calls module-level code makes (in its `if` / `for` / `while` / `with` / `try` blocks
    too, not in functions or classes), cached for the run."""
    key = "parameter-list-entry-argument:calls"
    hit: list[ast.Call] | None = ctx.cache.get(key)
    if hit is None:
        hit = list(_calls_in(ctx.tree.body))
        ctx.cache[key] = hit
    return hit


def _calls_in(body: list[ast.stmt]) -> Iterator[ast.Call]:
    for st in body:
        if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        if isinstance(st, (ast.If, ast.For, ast.While, ast.With, ast.Try)):
            for field in ("body", "orelse", "finalbody"):
                yield from _calls_in(getattr(st, field, []))
            for h in getattr(st, "handlers", []):
                yield from _calls_in(h.body)
            continue
        for n in ast.walk(st):
            if isinstance(n, ast.Call):
                yield n


def _parameter_list(e: ast.expr, ctx: Context, depth: int) -> bool:
    """Is `e`, evaluated at module level, a list or a ParameterTuple of Parameters?"""
    if depth > _MAX_DEPTH:
        return False
    if isinstance(e, ast.Name):
        value = _module_binding(e.id, ctx)
        return value is not None and _parameter_list(value, ctx, depth + 1)
    if not isinstance(e, ast.Call):
        return False
    f = e.func
    if isinstance(f, ast.Attribute):
        if f.attr in _LIST_METHODS:
            return True
        # `params.clone(prefix="ema")` of a ParameterTuple is one
        return f.attr == "clone" and _parameter_list(f.value, ctx, depth + 1)
    if isinstance(f, ast.Name) and f.id == "list" and len(e.args) == 1:
        return _parameter_list(e.args[0], ctx, depth + 1)
    q = ctx.qualname(f) or ""
    return q.rsplit(".", 1)[-1] == "ParameterTuple"


def _module_binding(name: str, ctx: Context) -> ast.expr | None:
    """The value of the only module-level `name = value` (None when bound otherwise or more
    than once)."""
    key = "parameter-list-entry-argument:bindings"
    table: dict[str, ast.expr | None] | None = ctx.cache.get(key)
    if table is None:
        table = {}
        for st in ctx.tree.body:
            if isinstance(st, ast.Assign):
                for t in st.targets:
                    for n in ast.walk(t):
                        if isinstance(n, ast.Name):
                            single = isinstance(t, ast.Name) and n.id not in table
                            table[n.id] = st.value if single else None
            elif isinstance(st, (ast.AugAssign, ast.AnnAssign, ast.For, ast.With, ast.Import, ast.ImportFrom)):
                for n in ast.walk(st):
                    if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                        table[n.id] = None
        ctx.cache[key] = table
    return table.get(name)
