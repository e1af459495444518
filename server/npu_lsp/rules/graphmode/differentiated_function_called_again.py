"""MS188: the function a graph differentiates, called again in it after the gradient."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.helpers import GraphRule, own_nodes

#: the grad builders, by their last name (`ms.grad`, `ms.value_and_grad`, `ops.grad`, ...)
_BUILDERS = frozenset({"grad", "value_and_grad"})


@rule(code="MS188", name="differentiated-function-called-again", severity="error", family="graphmode")
class DifferentiatedFunctionCalledAgain(GraphRule):
    """## What it does
    Flags a call, in a jit function or `construct`, of the function that the same compiled
    function differentiates (`loss_fn` of `ms.value_and_grad(loss_fn, ...)` or `ms.grad`,
    `self.forward`) when the call comes after the gradient was taken there: the gradient
    built in place (`ms.value_and_grad(loss_fn, None, params)(x, y)`), through a local
    (`grad_fn = ...` then `grad_fn(x, y)`) or through a module-level `grad_fn`. Typically
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
      and calling it) and an `ops.assign` loop without a gradient compile.
    """

    nodes = (ast.Call,)

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
            if not wrapped or f.id in _local_names(func, ctx):
                return ()
            return self._again(node, ("", wrapped[0]), node.lineno, func, ctx)
        last = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
        if last not in _BUILDERS or not node.args:
            return ()
        q = ctx.qualname(f) or ""
        if q.split(".")[0] != "mindspore" or q.rsplit(".", 1)[-1] not in _BUILDERS:
            return ()
        key = _callee_key(node.args[0])
        if key is None:
            return ()
        applied = _applied_at(node, func, ctx)
        return () if applied is None else self._again(node, key, applied, func, ctx)

    def _again(
        self, node: ast.Call, key: tuple[str, str], after: int, func: ast.AST, ctx: Context
    ) -> list[Diagnostic]:
        calls = sorted(
            (n for n in own_nodes(func) if isinstance(n, ast.Call) and n.lineno > after),
            key=lambda c: (c.lineno, c.col_offset),
        )
        for c in calls:
            if _callee_key(c.func) == key:
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


def _applied_at(builder: ast.Call, func: ast.AST, ctx: Context) -> int | None:
    """The line where the gradient `builder` makes is taken: its own line when it is called
    in place (`ms.grad(fn)(x)`), else the first call of a local bound to it
    (`grad_fn = ms.value_and_grad(fn)` ... `grad_fn(x, y)`); None when it is never taken."""
    parent = ctx.parent(builder)
    if isinstance(parent, ast.Call) and parent.func is builder:
        return builder.lineno
    if not isinstance(parent, ast.Assign) or parent.value is not builder:
        return None
    bound = {t.id for t in parent.targets if isinstance(t, ast.Name)}
    lines = [
        n.lineno
        for n in own_nodes(func)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in bound and n.lineno > builder.lineno
    ]
    return min(lines) if lines else None


def _local_names(func: ast.AST, ctx: Context) -> set[str]:
    """Names the compiled function binds (its parameters and assignment targets)."""
    key = ("ms188-locals", id(func))
    hit: set[str] | None = ctx.cache.get(key)
    if hit is None:
        hit = set()
        if isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
            a = func.args
            hit.update(x.arg for x in (*a.posonlyargs, *a.args, *a.kwonlyargs))
        for n in own_nodes(func):
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                hit.add(n.id)
        ctx.cache[key] = hit
    return hit
