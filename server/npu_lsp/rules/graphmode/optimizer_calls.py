"""Which built-in optimizer of `mindspore.nn` a call in compiled code steps, and what it returns.

The optimizer is found where it is built: a module-level `opt = nn.Adam(...)`,
`self.opt = nn.SGD(...)` in `__init__`, `self.optimizer` given to the Cell's constructor
where the Cell is built (`TrainStep(net, loss_fn, opt)` with `opt = nn.Momentum(...)`, also
as `optimizer=...`), or the second argument of a `TrainOneStepCell` subclass, whose base
keeps it as `self.optimizer` (MindSpore's nn/wrap/cell_wrapper.py).
"""

from __future__ import annotations

import ast
import functools
import json
from collections.abc import Set as AbstractSet
from importlib import resources

from npu_lsp.engine import Context
from npu_lsp.rules.graphmode import abstract as av
from npu_lsp.rules.graphmode import constructed
from npu_lsp.rules.graphmode.flow import analyzer

#: the classes whose `__init__` stores the optimizer they are given as `self.optimizer`
STEP_CELLS = frozenset({"TrainOneStepCell", "TrainOneStepWithLossScaleCell"})
#: what else `TrainOneStepCell.__init__` keeps that holds Parameters: `self.weights =
#: self.optimizer.parameters`, a ParameterTuple (MindSpore 2.10, nn/wrap/cell_wrapper.py)
STEP_CELL_PARAMETERS = frozenset({"weights"})


@functools.cache
def construct_results() -> dict[str, str]:
    """Per built-in optimizer (class name), what calling it returns in compiled code:
    "tuple" or "True" (measured, ms_optimizer_state.json `construct_results`)."""
    text = resources.files(__package__).joinpath("ms_optimizer_state.json").read_text("utf-8")
    results: dict[str, str] = json.loads(text)["construct_results"]
    return results


def result_value(name: str) -> av.Value:
    """The abstract value a call of the built-in optimizer `name` gives: the tuple of one
    Bool per parameter its hyper_map builds, or the constant True of a Python loop."""
    kind = construct_results().get(name)
    if kind == "tuple":
        return av.Sequence("tuple", item=av.Scalar("bool"))
    if kind == "True":
        return av.Scalar("bool", True)
    return av.UNKNOWN


def called_optimizer(func: ast.expr, fn: ast.AST | None, ctx: Context, classes: AbstractSet[str]) -> str | None:
    """The class name (one of `classes`) of the built-in optimizer that calling `func` inside
    the compiled function `fn` steps, or None when it is not known to be one."""
    a = analyzer(ctx)
    if isinstance(func, ast.Name):
        if fn is None or a.rebinds(func.id, fn):
            return None
        return _optimizer_name(_module_value(func.id, ctx), ctx, classes)
    if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self"):
        return None
    cls = a.owner_class(fn)
    if cls is None:
        return None
    if a.self_values(cls).get(func.attr):
        # `self.opt = nn.SGD(...)`, or `self.optimizer = optimizer` given where the Cell is
        # built (`TrainStep(net, loss_fn, opt)` with `opt = nn.Momentum(...)` in `run()`)
        return _one_optimizer(constructed.sources(cls, func.attr, ctx), ctx, classes)
    if func.attr != "optimizer" or not is_step_cell(cls, ctx):
        return None
    # a TrainOneStepCell subclass keeping `__init__`'s second argument as `self.optimizer`
    return _one_optimizer(constructed.argument(cls, 1, "optimizer", ctx), ctx, classes)


def is_step_cell(cls: ast.ClassDef, ctx: Context) -> bool:
    """Does `cls` derive directly from `nn.TrainOneStepCell` (or its loss-scale subclass)?"""
    for base in cls.bases:
        q = ctx.qualname(base) or ""
        if q.startswith("mindspore.") and q.rsplit(".", 1)[-1] in STEP_CELLS:
            return True
    return False


def derives_step_cell(cls: ast.ClassDef, ctx: Context, depth: int = 0) -> bool:
    """Does `cls` derive from `nn.TrainOneStepCell` (or its loss-scale subclass), directly or
    through classes of this file?"""
    if depth > 4:
        return False
    for base in cls.bases:
        q = ctx.qualname(base) or ""
        if q.startswith("mindspore.") and q.rsplit(".", 1)[-1] in STEP_CELLS:
            return True
        if isinstance(base, ast.Name):
            local = next((c for c in ctx.tree.body if isinstance(c, ast.ClassDef) and c.name == base.id), None)
            if local is not None and local is not cls and derives_step_cell(local, ctx, depth + 1):
                return True
    return False


def _optimizer_name(value: ast.expr | None, ctx: Context, classes: AbstractSet[str]) -> str | None:
    """`nn.Adam(...)` -> "Adam" (a built-in optimizer of `classes` being built), else None."""
    if not isinstance(value, ast.Call):
        return None
    q = ctx.qualname(value.func) or ""
    last = q.rsplit(".", 1)[-1]
    return last if q.startswith("mindspore.nn.") and last in classes else None


def _one_optimizer(found: list[constructed.Source] | None, ctx: Context, classes: AbstractSet[str]) -> str | None:
    """The built-in optimizer every one of these expressions builds, or None."""
    if not found:
        return None
    names = {_optimizer_name(constructed.built(e, where, ctx), ctx, classes) for e, where in found}
    return names.pop() if len(names) == 1 else None


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
