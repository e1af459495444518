"""MS177: a Python list of gradients given to a built-in optimizer in compiled code."""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode import abstract as av
from npu_lsp.rules.graphmode import constructed
from npu_lsp.rules.graphmode.abstract_eval import values
from npu_lsp.rules.graphmode.flow import analyzer
from npu_lsp.rules.graphmode.helpers import GraphRule
from npu_lsp.rules.graphmode.optimizer_facts import optimizer_facts
from npu_lsp.rules.graphmode.parameter_receivers import builds_optimizer

#: the classes whose `__init__` stores the optimizer they are given as `self.optimizer`
_STEP_CELLS = frozenset({"TrainOneStepCell", "TrainOneStepWithLossScaleCell"})


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
        name = _optimizer_class(node.func, ctx)
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


def _optimizer_name(value: ast.expr | None, ctx: Context) -> str | None:
    """`nn.Adam(...)` -> "Adam" (a built-in optimizer being built), else None."""
    if not isinstance(value, ast.Call):
        return None
    q = ctx.qualname(value.func) or ""
    last = q.rsplit(".", 1)[-1]
    return last if q.startswith("mindspore.nn.") and last in _refusing() else None


def _module_value(name: str, ctx: Context) -> ast.expr | None:
    value: ast.expr | None = None
    for st in ctx.tree.body:
        if (
            isinstance(st, ast.Assign)
            and len(st.targets) == 1
            and isinstance(st.targets[0], ast.Name)
            and st.targets[0].id == name
        ):
            value = st.value
    return value


def _optimizer_class(func: ast.expr, ctx: Context) -> str | None:
    fn = ctx.function
    a = analyzer(ctx)
    if isinstance(func, ast.Name):
        if fn is None or a.rebinds(func.id, fn):
            return None
        return _optimizer_name(_module_value(func.id, ctx), ctx)
    if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self"):
        return None
    cls = a.owner_class(fn)
    if cls is None:
        return None
    if a._self_values(cls).get(func.attr):
        # `self.opt = nn.SGD(...)`, or `self.optimizer = optimizer` given where the Cell is
        # built (`TrainStep(net, loss_fn, opt)` with `opt = nn.Momentum(...)` in `run()`)
        return _one_optimizer(constructed.sources(cls, func.attr, ctx), ctx)
    if func.attr != "optimizer" or not _is_step_cell(cls, ctx):
        return None
    # a TrainOneStepCell subclass keeping `__init__`'s second argument as `self.optimizer`
    return _one_optimizer(constructed.argument(cls, 1, "optimizer", ctx), ctx)


def _one_optimizer(found: list[constructed.Source] | None, ctx: Context) -> str | None:
    """The built-in optimizer every one of these expressions builds, or None."""
    if not found:
        return None
    names = {_optimizer_name(constructed.built(e, where, ctx), ctx) for e, where in found}
    return names.pop() if len(names) == 1 else None


def _is_step_cell(cls: ast.ClassDef, ctx: Context) -> bool:
    for base in cls.bases:
        q = ctx.qualname(base) or ""
        if q.startswith("mindspore.") and q.rsplit(".", 1)[-1] in _STEP_CELLS:
            return True
    return False


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
