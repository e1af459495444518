"""MS212: a loop function MindSpore's loop primitives cannot take in compiled code."""

from __future__ import annotations

import ast
import functools
import json
from collections.abc import Iterable
from importlib import resources
from typing import Any

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.control import param_names
from npu_lsp.rules.graphmode.flow import analyzer
from npu_lsp.rules.graphmode.helpers import GraphRule
from npu_lsp.rules.graphmode.map_closure_free_variable import (
    free_names,
    function_bindings,
    local_constant,
    local_function,
)

_PARTIAL = frozenset({"functools.partial"})
#: how deep calls of other local functions are followed from a loop function
_MAX_DEPTH = 3


@rule(code="MS212", name="loop-function-made-in-graph", severity="error", family="graphmode")
class LoopFunctionMadeInGraph(GraphRule):
    """## What it does
    Flags the function given to `ops.WhileLoop()`, `ops.ForiLoop()` or `ops.Scan()` in
    compiled code (`construct`, a method it calls, an `@ms.jit` function) when MindSpore
    cannot use it as the loop function:
    - a nested `def` or a lambda written in the compiled function that reads a parameter of
      that function, or a local computed from one (`def body(i, h): return h * w`), for all
      three;
    - one that reads a module-level name or a builtin (`ops.tanh`, `ms.float32`, a module
      constant or function, `abs`), also through another local function it calls, for
      `WhileLoop` and `ForiLoop`;
    - one, or a method given as `self.step`, that calls a sub-cell of `self`
      (`self.fc(h)`), for `ForiLoop` and `Scan`;
    - a function a helper called in the graph makes from its own parameters
      (`make_body(0.5)` returning a closure over `scale`);
    - a function given by keyword (`loop_func=body`), or a `functools.partial`.

    ## Why is this bad?
    Compiling stops at every syntax level, with messages that do not name the cause:
    `ValueError: The object is not callable` or `Exceed function call depth limit`
    (`WhileLoop`), `TypeError: For 'scan', input[0] should be Function, but got unknown`
    (`ForiLoop`), `For `Scan` op, loop_func expects two arguments, but got: 3` (a sub-cell
    call), `Illegal AnfNode for evaluating, node: @run:param_w` (a closure over a graph
    value), `input[2] should be Function, but got Keyword[key : loop_func ...]`.

    ## Example
    ```python
    while_loop = ops.WhileLoop()

    @ms.jit
    def bisection(lo, hi):
        def cond(state):
            return state[2] < 20

        def body(state):
            lo, hi, i = state
            mid = (lo + hi) / 2
            left = mid ** 3 - 2 > 0
            return ops.where(left, lo, mid), ops.where(left, mid, hi), i + 1

        lo, hi, _ = while_loop(cond, body, (lo, hi, 0))
        return (lo + hi) / 2
    ```

    ## Use instead
    Define the loop functions at module level (they may read globals and call `ops`), and
    carry every run-time value in the loop state:
    ```python
    def cond(state):
        return state[2] < 20

    def body(state):
        lo, hi, i = state
        mid = (lo + hi) / 2
        left = mid ** 3 - 2 > 0
        return ops.where(left, lo, mid), ops.where(left, mid, hi), i + 1

    @ms.jit
    def bisection(lo, hi):
        lo, hi, _ = while_loop(cond, body, (lo, hi, 0))
        return (lo + hi) / 2
    ```

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 1 (rejected at every level).
    - Measured on MindSpore 2.10 (CPU), LAX and STRICT: written/heldout25a cases
      `ctrl_while_loop_op_tuple_state` (`WhileLoop`, nested functions calling `ops.where`)
      and `r2_ctrl_fori_loop_body_in_construct` (`ForiLoop`, a nested body calling
      `self.fc` and `ops.tanh`), and probes `fix25a_lp_*`: nested functions and lambdas
      reading only their arguments, tensor methods, `self.scale`, a local constant
      (`scale = 0.5`) or another nested function compile with all three; `Scan` also takes
      one reading `ops`, `abs` or a module constant; `WhileLoop` one calling `self.fc`;
      module-level functions and lambdas, methods not calling sub-cells, and a Cell given
      as the loop function compile. The table: `ms_loop_primitives.json`.
    """

    nodes = (ast.Call,)
    words = ("WhileLoop", "ForiLoop", "Scan")

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        assert isinstance(node, ast.Call)
        if not node.args and not node.keywords:
            return ()
        prim = _loop_primitive(node.func, ctx)
        if prim is None:
            return ()
        spec = _table()[prim]
        names: dict[str, str] = spec["functions"]
        for kw in node.keywords:
            if kw.arg in names.values():
                return [
                    ctx.diagnostic(
                        self,
                        kw,
                        f"`{prim}` takes its function by position only: given as `{kw.arg}=` it is not a function there (MindSpore: input should be Function, but got Keyword[key : {kw.arg} ...])",
                    )
                ]
        for at in names:
            i = int(at)
            if i < len(node.args):
                said = _why(node.args[i], spec, ctx)
                if said is not None:
                    return [ctx.diagnostic(self, node.args[i], f"`{prim}` cannot take `{ctx.segment(node.args[i])}` as its loop function: {said}")]
        return ()


@functools.cache
def _table() -> dict[str, dict[str, Any]]:
    """Loop primitive class name -> what it refuses (`ms_loop_primitives.json`)."""
    text = resources.files(__package__).joinpath("ms_loop_primitives.json").read_text("utf-8")
    out: dict[str, dict[str, Any]] = json.loads(text)["primitives"]
    return out


def _loop_primitive(f: ast.expr, ctx: Context) -> str | None:
    """The loop primitive class `f` is an instance of: built inline (`ops.WhileLoop()(...)`),
    a local or module-level name bound to one, or `self.<attr>` built in `__init__`."""
    q: str | None = None
    if isinstance(f, ast.Call):
        q = ctx.qualname(f.func) if not f.args and not f.keywords else None
    elif isinstance(f, ast.Name):
        func = ctx.function
        a = analyzer(ctx)
        if func is not None and a.rebinds(f.id, func):
            bound = a.single_assignment(f.id, func)
            q = ctx.qualname(bound.func) if isinstance(bound, ast.Call) and not bound.args else None
        else:
            q = ctx.scopes.info.instances.get(f.id)
    elif isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == "self":
        cls = analyzer(ctx).owner_class(ctx.function)
        if cls is not None:
            q = ctx.scopes.attribute_class(f"{ctx.scopes.info.module}.{cls.name}", f.attr)
    if not q or not q.startswith("mindspore."):
        return None
    last = q.rsplit(".", 1)[-1]
    return last if last in _table() else None


def _why(arg: ast.expr, spec: dict[str, Any], ctx: Context) -> str | None:
    """Why the loop primitive described by `spec` cannot take `arg`, or None."""
    if _partial(arg, ctx):
        return "a `functools.partial` is not a function to it (MindSpore: input should be Function, but got External); define a function at module level"
    func = ctx.function
    fn = local_function(arg, ctx)
    if fn is not None and isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return _closure_problem(fn, func, spec, ctx, 0)
    if isinstance(arg, ast.Attribute) and isinstance(arg.value, ast.Name) and arg.value.id == "self":
        method = _method(arg.attr, ctx)
        if method is not None and spec["cell_calls"]:
            called = _sub_cell_call(method, ctx)
            if called is not None:
                return f"the method calls the sub-cell `self.{called}` ({spec['message']}); give it a function that takes every value it needs in its arguments"
        return None
    if isinstance(arg, ast.Call) and isinstance(arg.func, ast.Name):
        return _helper_closure(arg.func.id, ctx)
    return None


def _closure_problem(
    fn: ast.Lambda | ast.FunctionDef,
    func: ast.FunctionDef | ast.AsyncFunctionDef,
    spec: dict[str, Any],
    ctx: Context,
    depth: int,
) -> str | None:
    """What in a function made inside `func` (or in a local function it calls) the loop
    primitive cannot take: a read of a graph value of `func`, of a module-level name or a
    builtin, a call of a sub-cell (per `spec`)."""
    a = analyzer(ctx)
    params = param_names(func) - {"self"}
    bound = function_bindings(ctx)
    for name, use in free_names(fn).items():
        if name in params:
            return f"the function made inside `{func.name}` reads its parameter `{name}` (MindSpore: Illegal AnfNode for evaluating, node: @{func.name}:param_{name}); carry `{name}` in the loop state, or define the function at module level and pass `{name}` through the state"
        if a.rebinds(name, func):
            values = bound.get(name, [])
            if values and all(isinstance(v, (ast.FunctionDef, ast.Lambda)) for v in values):
                if depth < _MAX_DEPTH:
                    for v in values:
                        said = _closure_problem(v, func, spec, ctx, depth + 1)  # type: ignore[arg-type]
                        if said is not None:
                            return said
                continue
            if local_constant(name, func, bound, set()) and not a.kind(use, func).dynamic:
                continue  # a Python constant folds into the function
            return f"the function made inside `{func.name}` reads `{name}`, a graph value computed there (MindSpore: Illegal AnfNode for evaluating); carry `{name}` in the loop state"
        if spec["module_names"]:
            return f"the function made inside `{func.name}` reads the module-level name `{name}` ({spec['message']}); define the function at module level, where it may read globals"
    if spec["cell_calls"]:
        called = _sub_cell_call(fn, ctx)
        if called is not None:
            return f"the function made inside `{func.name}` calls the sub-cell `self.{called}` ({spec['message']}); give it a function that takes every value it needs in its arguments"
    return None


def _partial(arg: ast.expr, ctx: Context) -> bool:
    """`functools.partial(...)` given inline, or a name bound once (locally or at module
    level) to one (measured with `ForiLoop`: rejected at both levels, also by PyNative)."""
    e: ast.expr | None = arg
    if isinstance(arg, ast.Name):
        func = ctx.function
        a = analyzer(ctx)
        e = a.single_assignment(arg.id, func) if func is not None and a.rebinds(arg.id, func) else a._module_assignments().get(arg.id)
    return isinstance(e, ast.Call) and ctx.qualname(e.func) in _PARTIAL


def _method(name: str, ctx: Context) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    """The method `name` of the class whose method is being checked."""
    cls = analyzer(ctx).owner_class(ctx.function)
    info = ctx.scopes.info.classes.get(cls.name) if cls is not None else None
    return info.methods.get(name) if info is not None else None


def _sub_cell_call(fn: ast.AST, ctx: Context) -> str | None:
    """The attribute of the first `self.<attr>(...)` call in `fn` whose attribute `__init__`
    binds to a Cell (`self.fc = nn.Dense(...)`)."""
    cls = analyzer(ctx).owner_class(ctx.function)
    if cls is None:
        return None
    owner = f"{ctx.scopes.info.module}.{cls.name}"
    for n in ast.walk(fn):
        f = n.func if isinstance(n, ast.Call) else None
        if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == "self":
            made = ctx.scopes.attribute_class(owner, f.attr)
            if made is not None and ctx.scopes.is_cell_class(made):
                return f.attr
    return None


def _helper_closure(helper: str, ctx: Context) -> str | None:
    """A module-level function called in the graph that returns a function it makes, which
    reads one of the helper's parameters (measured, probe `fix25a_lp_i`: `make_body(0.5)`
    returning `body` reading `scale`: "Illegal AnfNode for evaluating, node:
    @make_body:param_scale")."""
    func = ctx.scopes.info.functions.get(helper)
    if func is None or ctx.function is not None and analyzer(ctx).rebinds(helper, ctx.function):
        return None
    params = param_names(func)
    made: dict[str, ast.AST] = {
        st.name: st for st in func.body if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef))
    }
    for st in func.body:
        if not isinstance(st, ast.Return) or st.value is None:
            continue
        v = st.value
        fn = v if isinstance(v, ast.Lambda) else made.get(v.id) if isinstance(v, ast.Name) else None
        if fn is None:
            continue
        read = [n for n in free_names(fn) if n in params]  # type: ignore[arg-type]
        if read:
            return f"`{helper}` returns a function made from its own parameter `{read[0]}`, a closure over a graph value when called in compiled code (MindSpore: Illegal AnfNode for evaluating, node: @{helper}:param_{read[0]}); define the loop function at module level and carry `{read[0]}` in the loop state"
    return None
