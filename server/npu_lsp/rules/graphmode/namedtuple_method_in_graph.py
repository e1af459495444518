"""MS220: a namedtuple's own methods (`_replace`, `_asdict`, `_fields`...) on an instance
compiled code receives."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.flow import analyzer
from npu_lsp.rules.graphmode.helpers import GraphRule
from npu_lsp.rules.graphmode.python_call_on_tensor import python_built_classes

#: what `collections.namedtuple` adds to a tuple (MindSpore's NamedTuple has none of them)
_METHODS = frozenset({"_replace", "_asdict", "_fields", "_make", "_field_defaults"})
_FACTORIES = frozenset({"collections.namedtuple", "typing.NamedTuple"})


@rule(code="MS220", name="namedtuple-method-in-graph", severity="error", family="graphmode")
class NamedtupleMethodInGraph(GraphRule):
    """## What it does
    Flags `_replace`, `_asdict`, `_fields`, `_make` and `_field_defaults` read in compiled
    code on an instance of a `typing.NamedTuple` or `collections.namedtuple` class of the
    module that the graph receives: a parameter of `construct` (or of a compiled helper)
    annotated with the class or given an instance of it wherever plain Python calls it, or an
    attribute `__init__` sets to an instance (`self.init_state = State(...)`).

    ## Why is this bad?
    MindSpore converts such an instance into its own NamedTuple, which keeps the fields but
    none of the methods Python's namedtuple adds: `AttributeError: 'NamedTuple' object has
    no attribute '_replace'`, at every syntax level. An instance the compiled function builds
    itself is a Python object under LAX (its `_replace` compiles there; STRICT refuses to
    build it from graph variables, MS131).

    ## Example
    ```python
    class State(NamedTuple):
        h: Tensor
        steps: int

    class Step(nn.Cell):
        def construct(self, x, state: State):
            return state._replace(h=x + state.h)
    ```

    ## Use instead
    ```python
    class Step(nn.Cell):
        def construct(self, x, state: State):
            return State(h=x + state.h, steps=state.steps)
    ```

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 1 (rejected at every level).
    - Measured on MindSpore 2.10 (CPU), LAX and STRICT: written/heldout26b case
      `typ_namedtuple_replace_in_construct` and probes `fix26b_nt_*`: `_replace` on a
      `typing.NamedTuple` / `collections.namedtuple` argument, on one held on `self`,
      `_asdict()` and `_fields` of an argument are rejected at both levels; `_replace` of an
      instance built in `construct` compiles under LAX.
    """

    nodes = (ast.Attribute,)
    words = ("_replace", "_asdict", "_fields", "_make", "_field_defaults")

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        assert isinstance(node, ast.Attribute)
        if node.attr not in _METHODS or type(node.ctx) is not ast.Load:
            return
        cls = _received_instance(node.value, ctx)
        if cls is None:
            return
        yield ctx.diagnostic(
            self,
            node,
            f"`{ctx.segment(node.value)}` is a `{cls}` namedtuple the graph receives, which compiled code holds as "
            f"MindSpore's NamedTuple, without `{node.attr}` (MindSpore: 'NamedTuple' object has no attribute "
            f"'{node.attr}'); build a new `{cls}(...)` from its fields instead",
        )


def _classes(ctx: Context) -> frozenset[str]:
    return frozenset(n for n, made in python_built_classes(ctx).items() if made in _FACTORIES)


def _instance_of(e: ast.expr | None, classes: frozenset[str], ctx: Context) -> str | None:
    """The namedtuple class `e` builds (`State(...)`), or a module-level name bound once to
    such a call holds."""
    if isinstance(e, ast.Name):
        binds = ctx.module_bindings().get(e.id, ())
        if len(binds) != 1 or not isinstance(binds[0], ast.Assign):
            return None
        e = binds[0].value
    if isinstance(e, ast.Call) and isinstance(e.func, ast.Name) and e.func.id in classes:
        return e.func.id
    return None


def _received_instance(e: ast.expr, ctx: Context) -> str | None:
    """The namedtuple class of what `e` holds when the graph receives it from Python: a
    parameter annotated with the class or given an instance at every (plain-Python) call
    site, or `self.<attr>` that `__init__` sets once to an instance."""
    classes = _classes(ctx)
    func = ctx.function
    if not classes or func is None:
        return None
    a = analyzer(ctx)
    if isinstance(e, ast.Attribute) and isinstance(e.value, ast.Name) and e.value.id == "self":
        cls = a.owner_class(func)
        values = a.self_values(cls).get(e.attr, []) if cls is not None else []
        return _instance_of(values[0], classes, ctx) if len(values) == 1 and isinstance(values[0], ast.Call) else None
    if not isinstance(e, ast.Name) or not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    args = func.args
    param = next((p for p in (*args.posonlyargs, *args.args, *args.kwonlyargs) if p.arg == e.id), None)
    if param is None or any(isinstance(n, ast.Name) and n.id == e.id and not isinstance(n.ctx, ast.Load) for n in ast.walk(func)):
        return None  # not a parameter, or rebound in the function
    if isinstance(param.annotation, ast.Name) and param.annotation.id in classes:
        return param.annotation.id
    passed = a.passed_arguments_in(e.id, func)
    if not passed or any(caller is not None for _, caller in passed):
        return None  # unknown, or given by compiled code (LAX builds it as a Python object there)
    found = {_instance_of(arg, classes, ctx) for arg, _ in passed}
    return found.pop() if len(found) == 1 and None not in found else None
