"""MS188: the function a graph differentiates, called again in it after the gradient."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.helpers import GraphRule, bound_names, own_nodes, store_lines

#: the grad builders, by their last name (`ms.grad`, `ms.value_and_grad`, `ops.grad`, ...)
_BUILDERS = frozenset({"grad", "value_and_grad"})


@rule(code="MS188", name="differentiated-function-called-again", severity="error", family="graphmode")
class DifferentiatedFunctionCalledAgain(GraphRule):
    """## What it does
    Flags a call, in a jit function or `construct`, of the function that the same compiled
    function differentiates (`loss_fn` of `ms.value_and_grad(loss_fn, ...)` or `ms.grad`,
    `self.forward`) when the call comes after the gradient was taken there: the gradient
    built in place (`ms.value_and_grad(loss_fn, None, params)(x, y)`), through a local
    (`grad_fn = ...` then `grad_fn(x, y)`) or through a module-level `grad_fn`, with the
    parameters' gradient (`weights` given), and called again with the very arguments the
    gradient was taken on (none of them rebound in between). Typically
    "the loss after the step": `opt(grads)` then `return loss, loss_fn(x, y)`.

    ## Why is this bad?
    MindSpore 2.10 compiles the differentiated function as one graph shared by the gradient
    and by the later call, and the later call's order after the gradient makes it a cycle:
    compiling stops at every syntax level with `RuntimeError: Graph cycle exists, size: ...`,
    with or without a parameter update in between.

    ## Example
    ```python
    @ms.jit
    def step(x, y):
        loss, grads = ms.value_and_grad(loss_fn, None, opt.parameters)(x, y)
        opt(grads)
        return loss, loss_fn(x, y)
    ```

    ## Use instead
    Call the network itself (not the differentiated function), or take the loss after the
    step in the next call:
    ```python
    @ms.jit
    def step(x, y):
        loss, grads = ms.value_and_grad(loss_fn, None, opt.parameters)(x, y)
        opt(grads)
        return loss, ops.mse_loss(net(x), y)
    ```

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 1 (rejected at every level).
    - Measured on MindSpore 2.10 (CPU), LAX and STRICT, with the written set `trainsteps`
      (`ms_grad_function_in_jit`: `ms.grad(loss_fn, weights=params)`, an `ops.assign` loop,
      then `return loss_fn(x, y)`) and its probes: `value_and_grad` with an `ops.assign`
      loop, with `opt(grads)`, with `ops.depend(loss, opt(grads))`, with only
      `ops.clip_by_global_norm` or nothing in between, with a module-level `grad_fn`, and
      `self.forward` in a `construct` are rejected; calling the network directly after the
      gradient, calling the function before the gradient (also between building `grad_fn`
      and calling it) and an `ops.assign` loop without a gradient compile; so do a
      gradient over inputs only (`ms.grad(f)(w, x)` then `f(w, x)`) and the function called
      again on other arguments (`loss_fn(x * 2, y)`) or after an argument was rebound
      (probes `cycle_lead_*`).
    """

    nodes = (ast.Call,)
    # every builder (`_BUILDERS`) is spelled with "grad" where it is called or imported
    words = ("grad",)

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        # a list or `()`, not a generator: every call of compiled code comes here
        assert isinstance(node, ast.Call)
        f = node.func
        func = ctx.function
        if func is None or isinstance(func, ast.Lambda):
            return ()
        if isinstance(f, ast.Name) and f.id not in _BUILDERS:
            # `grad_fn(x, y)` of a module-level `grad_fn = ms.value_and_grad(loss_fn, ...)`
            info = ctx.scopes.info
            built = info.instances.get(f.id)
            if not built or built.split(".")[0] != "mindspore" or built.rsplit(".", 1)[-1] not in _BUILDERS:
                return ()
            wrapped = info.wraps.get(f.id)
            if not wrapped or f.id in bound_names(func, ctx):
                return ()
            builder = _module_builder(f.id, ctx)
            if builder is None or not _with_weights(builder):
                return ()
            return self._again(node, ("", wrapped[0]), node, func, ctx)
        last = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
        if last not in _BUILDERS or not node.args:
            return ()
        q = ctx.qualname(f) or ""
        if q.split(".")[0] != "mindspore" or q.rsplit(".", 1)[-1] not in _BUILDERS:
            return ()
        key = _callee_key(node.args[0])
        if key is None or not _with_weights(node):
            return ()
        applied = _applied_at(node, func, ctx)
        return () if applied is None else self._again(node, key, applied, func, ctx)

    def wants_call(self, callee: type[ast.AST], called: str, receiver: str) -> bool:
        # `check`'s first tests: any call by name, of the attribute calls `x.grad(...)` and
        # `x.value_and_grad(...)` only
        return callee is ast.Name or (callee is ast.Attribute and called in _BUILDERS)

    def _again(
        self, node: ast.Call, key: tuple[str, str], applied: ast.Call, func: ast.AST, ctx: Context
    ) -> list[Diagnostic]:
        # measured (probes `cycle_*`, written/trainsteps): the cycle needs the very call the
        # gradient made: `loss_fn(x * 2, y)`, or `x` rebound in between, compiles
        after = applied.lineno
        same = _arguments(applied)
        rebound = _stores_from(func, after, ctx)
        calls = sorted(
            (n for n in own_nodes(func) if isinstance(n, ast.Call) and n.lineno > after),
            key=lambda c: (c.lineno, c.col_offset),
        )
        for c in calls:
            if _callee_key(c.func) != key or _arguments(c) != same:
                continue
            used = {n.id for a in [*c.args, *(k.value for k in c.keywords)] for n in ast.walk(a) if isinstance(n, ast.Name)}
            if any(after <= line < c.lineno for name in used for line in rebound.get(name, ())):
                continue
            return [
                ctx.diagnostic(
                    self,
                    c,
                    f"`{ctx.segment(c.func)}` is differentiated in this graph and called again after its gradient: MindSpore stops with 'Graph cycle exists'; call the network directly, or take this loss before the gradient",
                )
            ]
        return []


def _callee_key(e: ast.expr) -> tuple[str, str] | None:
    """`loss_fn` -> ("", "loss_fn"); `self.forward` -> ("self", "forward"); else None."""
    if isinstance(e, ast.Name):
        return ("", e.id)
    if isinstance(e, ast.Attribute) and isinstance(e.value, ast.Name) and e.value.id == "self":
        return ("self", e.attr)
    return None


def _applied_at(builder: ast.Call, func: ast.AST, ctx: Context) -> ast.Call | None:
    """The call that takes the gradient `builder` makes: the builder called in place
    (`ms.grad(fn, None, params)(x)`), else the first call of a local bound to it
    (`grad_fn = ms.value_and_grad(fn, None, params)` ... `grad_fn(x, y)`); None when the
    gradient is never taken."""
    parent = ctx.parent(builder)
    if isinstance(parent, ast.Call) and parent.func is builder:
        return parent
    if not isinstance(parent, ast.Assign) or parent.value is not builder:
        return None
    bound = {t.id for t in parent.targets if isinstance(t, ast.Name)}
    calls = [
        n
        for n in own_nodes(func)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in bound and n.lineno > builder.lineno
    ]
    return min(calls, key=lambda c: (c.lineno, c.col_offset)) if calls else None


def _with_weights(builder: ast.Call) -> bool:
    """`ms.grad` / `ms.value_and_grad` given `weights` (third argument or keyword), not
    None. Measured: a gradient over inputs only (`ms.grad(f)(w, x)` then `f(w, x)`)
    compiles; the cycle comes with the parameters' gradient."""
    weights = builder.args[2] if len(builder.args) > 2 else next((k.value for k in builder.keywords if k.arg == "weights"), None)
    return weights is not None and not (isinstance(weights, ast.Constant) and weights.value is None)


def _module_builder(name: str, ctx: Context) -> ast.Call | None:
    """The builder call of a module-level `name = ms.value_and_grad(...)` (the first one),
    from one table of the module's `name = call(...)` statements per file."""
    table: dict[str, ast.Call] | None = ctx.cache.get(_BUILDERS_KEY)
    if table is None:
        table = {}
        for st in ctx.tree.body:
            if isinstance(st, ast.Assign) and isinstance(st.value, ast.Call):
                for t in st.targets:
                    if isinstance(t, ast.Name):
                        table.setdefault(t.id, st.value)
        ctx.cache[_BUILDERS_KEY] = table
    return table.get(name)


_BUILDERS_KEY = "MS188-module-builders"


def _arguments(call: ast.Call) -> tuple[str, ...]:
    """The call's arguments as text-independent dumps, to compare two calls."""
    return (*(ast.dump(a) for a in call.args), *(f"{k.arg}={ast.dump(k.value)}" for k in call.keywords))


def _stores_from(func: ast.AST, line: int, ctx: Context) -> dict[str, list[int]]:
    """Lines at or after `line` where the function binds each name."""
    return {
        name: after
        for name, lines in store_lines(func, ctx).items()
        if (after := [n for n in lines if n >= line])
    }
