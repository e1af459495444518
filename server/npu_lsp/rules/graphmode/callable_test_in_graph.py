"""MS258: `callable(d)` / `inspect.isfunction(d)` in compiled code: of a graph variable it is
not decided while compiling at LAX (so the side that calls `d` compiles too), and of a
function value it fails at every level."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.const_tensor import constant_tensor
from npu_lsp.rules.graphmode.flow import analyzer
from npu_lsp.rules.graphmode.helpers import GraphRule

#: the "is it callable?" tests measured (builtins.callable, inspect.isfunction)
_CALLABLE_TESTS = frozenset({"builtins.callable", "inspect.isfunction"})


@rule(code="MS258", name="callable-test-in-graph", severity="error", family="graphmode")
class CallableTestInGraph(GraphRule):
    """## What it does
    Flags two uses of `callable(d)` / `inspect.isfunction(d)` in compiled code, the
    diffusers / ldm `default(val, d)` idiom (`return d() if callable(d) else d`):
    - at LAX, `d` a graph variable (a tensor handed in) and the side the test selects calling
      `d` (`d() if callable(d) else d`, `if isfunction(d): return d()`);
    - at every level, `d` a function value: a lambda bound in the compiled function
      (`f = lambda: x * 2; f() if callable(f) else f`) or a parameter that call sites bind to
      a lambda or a module-level function (`default(context, lambda: ops.zeros_like(x))`).

    ## Why is this bad?
    The graph does not implement `callable` or `isfunction`: MindSpore runs them as Python.
    At LAX, with a run-time value as input, that happens at run time, so the condition is
    not known while compiling and both sides are compiled: `d()` calls a tensor and the
    compile stops with `ValueError: The object is not callable. Please check code.` (STRICT
    refuses the interpreted call itself; MS131). A function value cannot be handed to the
    interpreted call at all: `KeyError: 'd'` for a parameter, `NameError: name 'f' is not
    defined` for a local lambda, at LAX and STRICT. PyNative runs the code.

    ## Example
    ```python
    def default(val, d):
        if val is not None:
            return val
        return d() if callable(d) else d

    class Attn(nn.Cell):
        def construct(self, x, context=None):
            context = default(context, x)
            ...
    ```

    ## Use instead
    ```python
    def default(val, d):
        return val if val is not None else d
    ```

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 1 (rejected at every level) and section 2 (LAX fallback: interpreted
      calls of run-time values are decided at run time).
    - Written/heldout36b cases `xattn_default_exists_helpers`,
      `r2_xattn_default_callable_ternary_one_line`, `r2_xattn_default_isfunction_check`,
      `r2_xattn_callable_tensor_only_call_path` and probes `fix36e_cl_*`: a tensor `d` called
      on the side `callable(d)` / `isfunction(d)` selects (conditional expression and `if`
      statement, in `construct` and in a helper) is rejected at LAX; the same test with a
      side that does not call `d`, of a constant attribute, of a sub-cell, of a tuple
      argument's item, and a helper whose `val` is never None compile. `callable(d)` of a
      lambda or a module-level function passed in, and of a local lambda, is rejected at
      both levels; a lambda passed in and called without the test compiles. Written/zoo
      probe `zoo32_default_isfunction_context_none`.
    """

    nodes = (ast.Call,)
    calls = frozenset({"callable", "isfunction"})

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        assert isinstance(node, ast.Call)
        if len(node.args) != 1 or node.keywords or type(node.args[0]) is not ast.Name:
            return
        q = ctx.qualname(node.func)
        if q not in _CALLABLE_TESTS:
            return
        d = node.args[0]
        shown = ctx.segment(node.func)
        a = analyzer(ctx)
        if a.type_class(d) == "function" or _passed_module_function(d.id, ctx):
            yield ctx.diagnostic(
                self,
                node,
                f"`{shown}({d.id})` of a function value fails in graph mode: MindSpore runs `{shown}` as Python and cannot hand "
                f"it the function (MindSpore: KeyError '{d.id}' / name '{d.id}' is not defined); call the function directly",
            )
            return
        if ctx.scope is None or ctx.scope.strict:
            return  # STRICT refuses the interpreted call itself (MS131)
        called = _call_on_selected_side(node, d.id, ctx)
        if called is None:
            return
        if not a.kind(d).dynamic or constant_tensor(d, ctx) is not None:
            return
        yield ctx.diagnostic(
            self,
            called,
            f"`{shown}({d.id})` of the graph variable `{d.id}` is run as Python at run time under LAX, so both sides of "
            f"the test compile and `{ctx.segment(called)}` calls a tensor (MindSpore: The object is not callable); "
            f"test `{d.id} is None` or `isinstance({d.id}, ms.Tensor)` instead",
        )


def _call_on_selected_side(test: ast.Call, name: str, ctx: Context) -> ast.Call | None:
    """A call of `name` itself on the side that `test` (or `not test`) selects, when `test` is
    the whole condition of a conditional expression or an `if` statement."""
    cond: ast.AST = test
    parent = ctx.parent(test)
    negated = False
    if type(parent) is ast.UnaryOp and type(parent.op) is ast.Not:
        cond, parent, negated = parent, ctx.parent(parent), True
    if type(parent) is ast.IfExp and parent.test is cond:
        sides: list[ast.AST] = [parent.orelse if negated else parent.body]
    elif type(parent) is ast.If and parent.test is cond:
        sides = list(parent.orelse if negated else parent.body)
    else:
        return None
    for side in sides:
        for n in ast.walk(side):
            if type(n) is ast.Call and type(n.func) is ast.Name and n.func.id == name:
                return n
    return None


def _passed_module_function(name: str, ctx: Context) -> bool:
    """Is `name` a parameter of the compiled helper that a call site gives a module-level
    function of the file by its name (`default(None, zeros)`)? (A lambda passed in is typed
    a function by the flow analysis already.)"""
    passed = analyzer(ctx).passed_arguments_in(name, ctx.function)
    for arg, caller in passed or ():
        if type(arg) is ast.Name and arg.id in _module_functions(ctx) and not _bound_in(arg.id, caller):
            return True
    return False


def _bound_in(name: str, func: ast.AST | None) -> bool:
    """Is `name` a parameter of `func` or assigned in it (then not the module's function)?"""
    if func is None:
        return False
    args = getattr(func, "args", None)
    if isinstance(args, ast.arguments) and any(a.arg == name for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]):
        return True
    return any(type(n) is ast.Name and n.id == name and type(n.ctx) is ast.Store for n in ast.walk(func))


def _module_functions(ctx: Context) -> frozenset[str]:
    """Names of the file's module-level functions (bound once, by `def`)."""
    return frozenset(
        st.name
        for st in ctx.tree.body
        if type(st) is ast.FunctionDef and len(ctx.module_bindings().get(st.name, ())) == 1
    )
