"""MS217: a keyword argument given to a gradient function in compiled code."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.modes import sets_graph_mode
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode import constructed
from npu_lsp.rules.graphmode.differentiated_function_called_again import (
    grad_operation,
    reads_parameters,
)
from npu_lsp.rules.graphmode.flow import Kind, analyzer
from npu_lsp.rules.graphmode.helpers import GraphRule

#: the functional builders (`ms.grad`, `ms.value_and_grad`, `ops.grad`, ...), by last name:
#: in GRAPH_MODE the function they return takes positional arguments only
_BUILDERS = frozenset({"grad", "value_and_grad"})
_DEPTH = 4


@rule(code="MS217", name="grad-function-keyword-argument", severity="error", family="graphmode")
class GradFunctionKeywordArgument(GraphRule):
    """## What it does
    Flags a keyword argument given, in compiled code (an `@ms.jit` function, `construct`), to
    a function built by `ms.grad` / `ms.value_and_grad` (also `ops.grad`,
    `ops.value_and_grad`) or by `ops.GradOperation(...)(fn)`: under the default LAX syntax
    level when the keyword's value is a constant of the graph (`grad_fn(x, y, scale=0.5)`,
    `reduction="sum"`, `**{"scale": 0.5}`, a number the jit function was given, a
    module-level tensor) and the differentiated function reads Parameters (a cell with
    weights, or a function or method calling one), and at every level when the file runs in GRAPH_MODE and the
    function comes from `ms.grad` / `ms.value_and_grad` (any keyword). The gradient function
    may be built in place, bound to a local, to a module-level name or to `self.<attr>` in
    `__init__`.

    ## Why is this bad?
    Under LAX, MindSpore 2.10 cannot specialise the differentiated function with a constant
    given by keyword, and compiling stops with `RuntimeError: Multiply values for specific
    argument: scale` (with `has_aux=True`: `Got an unexpected keyword argument
    'scale'`). A keyword whose value is a tensor computed in the graph (`y=y`,
    `scale=y.sum()`), a function of its inputs alone (no Parameters), and STRICT, compile. In GRAPH_MODE the function `ms.grad` /
    `ms.value_and_grad` return is an `@jit` function of `*args` alone, so any keyword fails
    at every level (`Got an unexpected keyword argument 'scale'`).

    ## Example
    ```python
    grad_fn = ms.value_and_grad(loss_fn, None, net.trainable_params())

    @ms.jit
    def step(x, y):
        return grad_fn(x, y, scale=0.5)
    ```

    ## Use instead
    Pass the value positionally (`grad_fn(x, y, 0.5)`), or fix it before differentiating
    (`functools.partial(loss_fn, scale=0.5)`, a default argument).

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md has no row for it (a rejection under LAX only, where JIT Fallback usually
      helps; the GRAPH_MODE form is one of section 1).
    - Measured on MindSpore 2.10 (CPU), written set `heldout25a` (`grad_kwargs_call`,
      `r2_grad_one_kwarg`) and its probes `fix25c_gkw_*`: a constant keyword to `ms.grad`
      (also with `grad_position=(0, 1)`), `ms.value_and_grad` (with and without weights,
      with `has_aux=True`), `ops.GradOperation()` (also `get_by_list`), built in the jit
      function or over a Cell, called in a jit function or in a `construct` it calls, is
      rejected under LAX and compiles under STRICT, also for an argument without a default,
      a value equal to the default and `**{...}`; a tensor computed in the graph as the
      keyword's value, the same value passed positionally, only defaults, the function
      called directly with the keyword, and the gradient of a function reading no Parameter
      (probes `fix25c_gkw_pure_*`, written/functional `ms_grad_keyword_scale`) compile. In GRAPH_MODE, `self.grad_fn(x, y,
      scale=0.5)` in `construct` fails at every level.
    """

    nodes = (ast.Call,)
    words = ("grad", "GradOperation")

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        assert isinstance(node, ast.Call)
        if not node.keywords:
            return ()
        func = ctx.function
        if func is None or isinstance(func, ast.Lambda):
            return ()
        found = _builder(node.func, func, ctx, 0)
        if found is None:
            return ()
        built, differentiated, where = found
        if built in _BUILDERS and sets_graph_mode(ctx.scopes.info):
            k = node.keywords[0]
            shown = f"`{k.arg}=`" if k.arg else f"`**{ctx.segment(k.value)}`"
            return [
                ctx.diagnostic(
                    self,
                    node,
                    f"in GRAPH_MODE the function `ms.{built}` returns takes positional arguments only: the keyword {shown} fails to compile (unexpected keyword argument); pass it positionally",
                )
            ]
        if ctx.scope is None or ctx.scope.strict or not _reads_parameters(differentiated, where, func, ctx):
            return ()
        constant = _constant_keyword(node, func, ctx)
        if constant is None:
            return ()
        return [
            ctx.diagnostic(
                self,
                node,
                f"the keyword `{constant}=` gives a constant to a gradient function, which MindSpore 2.10 cannot compile under LAX (Multiply values for specific argument: {constant}); pass it positionally or bind it before differentiating (`functools.partial`)",
            )
        ]


def _builder(f: ast.expr, func: ast.AST, ctx: Context, depth: int) -> tuple[str, ast.expr, ast.AST] | None:
    """What built the gradient function `f` calls: "grad" / "value_and_grad" (the
    functional builders) or "GradOperation", with the function it differentiates and the
    function that names it; None when `f` is no gradient function (or not known to be one)."""
    if depth > _DEPTH:
        return None
    if isinstance(f, ast.Call):
        q = ctx.qualname(f.func) or ""
        last = q.rsplit(".", 1)[-1]
        if q.split(".")[0] == "mindspore" and last in _BUILDERS and f.args:
            return last, f.args[0], func
        if isinstance(f.func, (ast.Call, ast.Name, ast.Attribute)) and f.args and grad_operation(f.func, func, ctx) is not None:
            return "GradOperation", f.args[0], func
        return None
    value: ast.expr | None = None
    where: ast.AST | None = func
    if isinstance(f, ast.Name):
        value = constructed.built(f, func, ctx)
        if value is not None and f.id not in _local_names(func, ctx):
            where = ctx.tree  # bound at module level: it names module-level functions and cells
    elif isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == "self":
        a = analyzer(ctx)
        cls = a.owner_class(func)
        held = a.self_values(cls).get(f.attr, []) if cls is not None else []
        value = held[0] if len(held) == 1 else None
        where = constructed.init_of(cls) if cls is not None else None
    if not isinstance(value, ast.Call) or where is None:
        return None
    return _builder(value, where, ctx, depth + 1)


def _reads_parameters(differentiated: ast.expr, where: ast.AST, func: ast.AST, ctx: Context) -> bool:
    """Does the differentiated function read Parameters (a cell with weights, a function or
    method calling one)? Measured: only then does a constant keyword fail (probes
    `fix25c_gkw_pure_*`: `ms.grad(f)(x, y, scale=0.5)` of a function of its inputs alone,
    or of a module-level tensor, compiles under LAX; written/functional
    `ms_grad_keyword_scale` too)."""
    if isinstance(differentiated, ast.Name):
        key = ("", differentiated.id)
    elif isinstance(differentiated, ast.Attribute) and isinstance(differentiated.value, ast.Name) and differentiated.value.id == "self":
        key = ("self", differentiated.attr)
    else:
        return False
    # `self.<method>` is looked up in the class of the function that names it
    inside = where if isinstance(where, (ast.FunctionDef, ast.AsyncFunctionDef)) else func
    return reads_parameters(key, inside, ctx)


def _constant_keyword(node: ast.Call, func: ast.AST, ctx: Context) -> str | None:
    """The name of the first keyword of `node` whose value is a constant of the graph: a
    Python value, or a name bound only at module level (a tensor there is a constant of
    the graph too: measured, `scale=SCALE` with `SCALE = Tensor(0.5)`); `**{...}` counts
    by its items."""
    for k in node.keywords:
        if k.arg is not None:
            if _constant(k.value, func, ctx):
                return k.arg
        elif isinstance(k.value, ast.Dict):
            for key, v in zip(k.value.keys, k.value.values, strict=True):
                if isinstance(key, ast.Constant) and isinstance(key.value, str) and _constant(v, func, ctx):
                    return key.value
    return None


def _constant(e: ast.expr, func: ast.AST, ctx: Context) -> bool:
    kind = analyzer(ctx).kind(e, func)
    if kind == Kind.CONST:
        return True
    if isinstance(e, ast.Name) and kind == Kind.TENSOR:
        # a module-level tensor read by the graph: a constant of it
        return e.id not in _local_names(func, ctx) and e.id in _module_names(ctx)
    return False


def _local_names(func: ast.AST, ctx: Context) -> set[str]:
    key = ("MS217-locals", id(func))
    hit: set[str] | None = ctx.cache.get(key)
    if hit is None:
        hit = set()
        args = getattr(func, "args", None)
        if isinstance(args, ast.arguments):
            hit.update(p.arg for p in (*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg) if p is not None)
        hit.update(n.id for n in ast.walk(func) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store))
        ctx.cache[key] = hit
    return hit


def _module_names(ctx: Context) -> set[str]:
    hit: set[str] | None = ctx.cache.get("MS217-module")
    if hit is None:
        hit = {t.id for st in ctx.tree.body if isinstance(st, ast.Assign) for t in st.targets if isinstance(t, ast.Name)}
        ctx.cache["MS217-module"] = hit
    return hit
