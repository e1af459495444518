"""MS177: a Python list of gradients given to a built-in optimizer in compiled code."""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode import abstract as av
from npu_lsp.rules.graphmode.abstract_eval import values
from npu_lsp.rules.graphmode.helpers import GraphRule
from npu_lsp.rules.graphmode.optimizer_calls import called_optimizer
from npu_lsp.rules.graphmode.optimizer_facts import optimizer_facts
from npu_lsp.rules.graphmode.parameter_receivers import builds_optimizer


@functools.cache
def _refusing() -> frozenset[str]:
    """The optimizers measured to refuse a list of gradients in compiled code (`nn.ASGD` and
    `nn.Rprop` loop in Python and accept one)."""
    return frozenset(n for n, f in optimizer_facts().items() if f.list_of_gradients == "fails")


@rule(code="MS177", name="list-gradients-to-optimizer", severity="error", family="graphmode")
class ListGradientsToOptimizer(GraphRule):
    """## What it does
    Flags a call of a built-in optimizer of `mindspore.nn` (`nn.SGD`, `nn.Adam`,
    `nn.Momentum`, `nn.AdamWeightDecay`, ...) inside compiled code whose gradients are a
    Python list: a list display, a list comprehension, `list(grads)`, or a name whose
    last binding before the call is one of these (also through an `if` MindSpore folds,
    `if self.clip:`, and through `ops.clip_by_global_norm`, which keeps a list a list).
    The optimizer is found where it is built: a module-level `opt = nn.Adam(...)`,
    `self.opt = nn.SGD(...)` in `__init__`, or `self.optimizer` given to the Cell's
    constructor where the Cell is built (`TrainStep(net, loss_fn, opt)` with
    `opt = nn.Momentum(...)`, at module level or in a function such as `run()`, also as
    `optimizer=...`, and the second argument of a `TrainOneStepCell` subclass).

    ## Why is this bad?
    A built-in optimizer maps its update over the gradients and its parameters (a
    `ParameterTuple`) together. MindSpore requires the mapped sequences to be of one type
    and stops, at every syntax level, with `RuntimeError: In a nonleaf situation, the types
    of arguments in HyperMap must be consistent` (or `The types of arguments in Map must be
    consistent` for `Adam`, `Adagrad`, `FTRL`...). PyNative accepts the list. `nn.ASGD` and
    `nn.Rprop`, which loop over the gradients in Python, compile it. Gradients that come straight from
    `value_and_grad`/`GradOperation` are a tuple; the list appears when they are clipped or
    scaled with a list comprehension, PyTorch-style.

    ## Example
    ```python
    @ms.jit
    def train_step(x, y):
        loss, grads = grad_fn(x, y)
        grads = [ops.clip_by_value(g, -1.0, 1.0) for g in grads]
        optimizer(grads)
        return loss
    ```

    ## Use instead
    ```python
        grads = tuple(ops.clip_by_value(g, -1.0, 1.0) for g in grads)
        optimizer(grads)
    ```

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 0 (what compiled code reaches: the optimizer's own `construct`).
    - Measured on MindSpore 2.10 (written set `train`: `clip_by_value_list_comprehension`
      and the `optimizer_*` probes; a hand-written optimizer that zips its parameters with a
      list compiles, and so does `tuple(...)` of the list; written set `trainsteps`, probes
      `mh_step_*`: optimizers given to a train step's constructor, clipped lists).
    - A user optimizer mapping over its parameters and a list: MS187.
    """

    nodes = (ast.Call,)

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        assert isinstance(node, ast.Call)
        # not a generator itself: most nodes stop at these tests, for the cost of a call
        # rather than of a generator each
        if len(node.args) != 1 or node.keywords or ctx.function is None:
            return ()
        if not builds_optimizer(ctx, _refusing()):
            return ()  # most files build no built-in optimizer
        return self._check(node, ctx)

    def applies(self, ctx: Context) -> bool:
        return builds_optimizer(ctx, _refusing())  # `check`'s per-file test, once

    def _check(self, node: ast.Call, ctx: Context) -> Iterable[Diagnostic]:
        name = called_optimizer(node.func, ctx.function, ctx, _refusing())
        if name is None:
            return
        arg = node.args[0]
        if (
            _is_list(arg, ctx)
            or (isinstance(arg, ast.Name) and _last_bound_to_list(arg.id, node, ctx))
            or _list_value(arg, ctx)
        ):
            yield ctx.diagnostic(
                self,
                arg,
                f"`nn.{name}` maps over the gradients and its parameter tuple together: a list of gradients fails to compile (HyperMap argument types must be consistent); pass a tuple",
            )


def _is_list(e: ast.expr, ctx: Context) -> bool:
    if isinstance(e, (ast.List, ast.ListComp)):
        return True
    return (
        isinstance(e, ast.Call)
        and isinstance(e.func, ast.Name)
        and e.func.id == "list"
        and ctx.qualname(e.func) == "builtins.list"
    )


def _list_value(e: ast.expr, ctx: Context) -> bool:
    """Is `e` a list in the shared value model (a name bound to a list on every path that
    reaches it, `ops.clip_by_global_norm` of a list, which maps over it and keeps its kind)?"""
    v = values(ctx).reaching(e, ctx.function)
    return isinstance(v, av.Sequence) and v.kind == "list"


def _last_bound_to_list(name: str, call: ast.Call, ctx: Context) -> bool:
    """Is the last binding of `name` before the statement holding `call`, in the same block,
    a plain `name = <list>`? Any other binding first (a loop, a branch, unpacking) says no."""
    stmt: ast.AST | None = call
    while stmt is not None and not isinstance(stmt, ast.stmt):
        stmt = ctx.parent(stmt)
    if stmt is None:
        return False
    block = ctx.parent(stmt)
    body = None
    for field in ("body", "orelse", "finalbody"):
        seq = getattr(block, field, None)
        if isinstance(seq, list) and stmt in seq:
            body = seq
    if body is None:
        return False
    for prev in reversed(body[: body.index(stmt)]):
        if not any(
            isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store)
            for n in ast.walk(prev)
        ):
            continue
        return (
            isinstance(prev, ast.Assign)
            and len(prev.targets) == 1
            and isinstance(prev.targets[0], ast.Name)
            and _is_list(prev.value, ctx)
        )
    return False
