"""MS263: a gradient function of a `*args` function applied in compiled code."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode import constructed
from npu_lsp.rules.graphmode.helpers import GraphRule

#: the functional builders (`ms.grad`, `ms.value_and_grad`, `ops.grad`), by last name
_BUILDERS = frozenset({"grad", "value_and_grad"})


@rule(code="MS263", name="grad-of-varargs-function", severity="error", family="graphmode")
class GradOfVarargsFunction(GraphRule):
    """## What it does
    Flags, in an `@ms.jit` function or a `construct`, a call of the function
    `ms.grad` / `ms.value_and_grad` (also `ops.grad`) build there (in place, or bound once
    to a local) of a function that takes `*args` (a module-level `def loss(x, y, *p)`, or
    a Cell whose `construct(self, *inputs)`), when the call
    does not give exactly one argument more than the function's named parameters: more
    (`ms.grad(loss, grad_position=(2, 3))(x, y, w, b)`, `(x, y, *fast)` with a tuple of
    several tensors), fewer, or gradient positions past that count.

    ## Why is this bad?
    In compiled code MindSpore builds the gradient graph with one parameter per named
    parameter and a single one for `*args`, so it accepts exactly that many arguments.
    Any other count stops compiling at every syntax level with `TypeError: The parameters
    number of the function is 3, but the number of provided arguments is 4`. The same call
    in PyNative, a gradient function built outside the compiled code (at module level, in
    `__init__`) and `ops.GradOperation(get_all=True)(loss)(...)` compile.

    ## Example
    ```python
    def loss(x, y, *p):
        return ops.mean((ops.matmul(x, p[0]) + p[1] - y) ** 2)

    @ms.jit
    def adapt(w, b, x, y):
        gw, gb = ms.grad(loss, grad_position=(2, 3))(x, y, w, b)
        return w - 0.1 * gw, b - 0.1 * gb
    ```

    ## Use instead
    Name every differentiated input:
    ```python
    def loss(x, y, w, b):
        return ops.mean((ops.matmul(x, w) + b - y) ** 2)

    @ms.jit
    def adapt(w, b, x, y):
        gw, gb = ms.grad(loss, grad_position=(2, 3))(x, y, w, b)
        return w - 0.1 * gw, b - 0.1 * gb
    ```

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md has no row for it (a limit of MindSpore's automatic differentiation in
      compiled code, rejected at every level).
    - Measured on MindSpore 2.10 (CPU), LAX and STRICT, with the written set `heldout40a`
      (`maml_fast_weights_generator_tuple_clean`: `ms.grad(task_loss_flat,
      grad_position=(2, ..., 7))(x, y, *p)` with `def task_loss_flat(x, y, *p)`) and its
      probes `fix40c_vararg_*`: `ms.grad` and `ms.value_and_grad` of `f(x, y, *p)` applied
      to four arguments (separate jit inputs, a starred tuple built in the graph or given by
      Python, a local `grad_fn`), to two, of `f(*a)` to four, and of a Cell whose
      `construct(self, *inputs)` to four are rejected ("The parameters number of the function
      is 3 / 1, but the number of provided arguments is 4 / 2"); `f(x, y, *p)` given three
      arguments, `ops.GradOperation(get_all=True)`, a plain call of `f`, the same gradient
      function built at module level or in `__init__` and applied in compiled code (also
      with weights), and the gradient applied in PyNative compile.
    """

    nodes = (ast.Call,)
    words = ("grad",)

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        assert isinstance(node, ast.Call)
        if ctx.scope is None or node.keywords:
            return ()
        builder = _builder(node.func, ctx)
        if builder is None:
            return ()
        target = _differentiated(builder.args[0], ctx)
        if target is None:
            return ()
        fn, method = target
        named = len(fn.args.posonlyargs) + len(fn.args.args) - (1 if method else 0)
        expected = named + 1  # the named parameters and one for `*args`
        given = sum(1 for a in node.args if not isinstance(a, ast.Starred))
        spread = any(isinstance(a, ast.Starred) for a in node.args)
        if not spread and given == expected:
            return ()
        if spread and given <= expected and max(_positions(builder), default=0) < expected:
            return ()  # the starred part may make the count right
        star = fn.args.vararg.arg if fn.args.vararg is not None else "args"
        count = f"{given}{' or more' if spread else ''}"
        return [
            ctx.diagnostic(
                self,
                node,
                f"`{fn.name}` takes `*{star}`: the gradient function MindSpore builds for it in compiled code has one parameter per named parameter and a single one for `*{star}`, "
                f"so it takes exactly {expected} arguments, but this call gives {count}{' (and its gradient positions go past them)' if spread else ''} "
                f"(The parameters number of the function is {expected}, but the number of provided arguments is {given if not spread else '...'}); name every differentiated input in `{fn.name}`'s signature",
            )
        ]


def _builder(f: ast.expr, ctx: Context) -> ast.Call | None:
    """`ms.grad(fn, ...)` / `ms.value_and_grad(fn, ...)` that `f` is, built in the compiled
    function itself: in place or bound once to a local. (Built at module level or in
    `__init__`, the gradient function is a Python object the graph calls, and it compiles:
    probes fix40c_vararg_module_bound_grad, fix40c_vararg_init_bound_grad_clean.)"""
    func = ctx.function
    if func is None:
        return None
    if isinstance(f, ast.Name):
        bound = constructed.built(f, func, ctx)
        if bound is None or not _inside(bound, func, ctx):
            return None
        f = bound
    if not isinstance(f, ast.Call) or not f.args or isinstance(f.args[0], ast.Starred):
        return None
    q = ctx.qualname(f.func) or ""
    if q.split(".")[0] != "mindspore" or q.rsplit(".", 1)[-1] not in _BUILDERS:
        return None
    if any(k.arg in ("has_aux", "return_ids") for k in f.keywords):
        return None
    return f


def _inside(node: ast.AST, func: ast.AST, ctx: Context) -> bool:
    parent = ctx.parent(node)
    while parent is not None and parent is not func:
        parent = ctx.parent(parent)
    return parent is func


def _differentiated(e: ast.expr, ctx: Context) -> tuple[ast.FunctionDef, bool] | None:
    """The module-level function taking `*args` that `e` names, or the `construct` taking
    `*inputs` of the module-level Cell instance it names (with True: a method)."""
    if not isinstance(e, ast.Name):
        return None
    for st in ctx.tree.body:
        if isinstance(st, ast.FunctionDef) and st.name == e.id:
            return (st, False) if _plain_varargs(st) else None
    qual = ctx.scopes.info.instances.get(e.id)
    if qual is None:
        return None
    cls = next((c for c in ctx.tree.body if isinstance(c, ast.ClassDef) and qual.endswith("." + c.name)), None)
    construct = next((m for m in cls.body if isinstance(m, ast.FunctionDef) and m.name == "construct"), None) if cls is not None else None
    if construct is None or not construct.args.args or not _plain_varargs(construct):
        return None
    return construct, True


def _plain_varargs(fn: ast.FunctionDef) -> bool:
    """`*args` and only positional parameters without defaults besides it."""
    a = fn.args
    return a.vararg is not None and not a.defaults and not a.kwonlyargs and a.kwarg is None and not fn.decorator_list


def _positions(builder: ast.Call) -> list[int]:
    """The gradient positions the builder names (`grad_position`; 0 when left out)."""
    e: ast.expr | None = builder.args[1] if len(builder.args) > 1 else next((k.value for k in builder.keywords if k.arg == "grad_position"), None)
    if e is None:
        return [0]
    items = e.elts if isinstance(e, ast.Tuple) else [e]
    return [x.value for x in items if isinstance(x, ast.Constant) and type(x.value) is int]
