"""MS262: a gradient built in compiled code of a function the graph specialises more than once."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode import abstract as av
from npu_lsp.rules.graphmode.abstract_eval import values
from npu_lsp.rules.graphmode.differentiated_function_called_again import callee_key
from npu_lsp.rules.graphmode.helpers import GraphRule, own_nodes

#: the grad builders, by their last name (`ms.grad`, `ms.value_and_grad`, `ops.grad`)
_BUILDERS = frozenset({"grad", "value_and_grad"})
#: a scalar constant as the graph sees it: its type and value (`1`, `1.0` and `True` differ)
Const = tuple[type, object]


@rule(code="MS262", name="grad-of-respecialized-function", severity="error", family="graphmode")
class GradOfRespecializedFunction(GraphRule):
    """## What it does
    Flags a gradient built inside a jit function or `construct` (`ms.grad(fn)`,
    `ms.value_and_grad(fn)`, `ops.grad(fn)`, in place or bound to a local) of a function
    that the same compiled function calls with different Python constants at one argument
    position: the gradient applied inside a `for` loop over `range(3)` or a tuple of
    constants with the loop variable as an argument (`ms.grad(logit_k)(x, k)`, DeepFool's
    per-class gradients), two applications with different literals (`g(x, 0)` and
    `g(x, 1)`), or a plain call of the function with another constant next to the
    gradient (`logit_k(x, 0) + ms.grad(logit_k)(x, 1)`).

    ## Why is this bad?
    Python constants are part of what MindSpore specialises a graph on: called with `k = 0`
    and `k = 1`, `fn` becomes two graphs, and the gradient operator built inside the
    compiled code is then applied to a node standing for several graphs, which it cannot
    differentiate. Compiling stops at every syntax level with `RuntimeError: Unexpected meta
    function graph node: ... {[0]: ValueNode<Primitive> J, [1]: ValueNode<ValueProblem>
    PolyNode}`. A gradient built once outside the compiled code (at module level, in
    `__init__`) is specialised per call and compiles.

    ## Example
    ```python
    def logit_k(x, k):
        return net(x)[0, k]

    @ms.jit
    def class_grads(x):
        return ops.stack([ms.grad(logit_k)(x, k) for k in range(3)])
    ```

    ## Use instead
    Build the gradient function once, outside the compiled function:
    ```python
    grad_logit = ms.grad(logit_k)

    @ms.jit
    def class_grads(x):
        return ops.stack([grad_logit(x, k) for k in range(3)])
    ```

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 1 (rejected at every level).
    - Measured on MindSpore 2.10 (CPU), LAX and STRICT, with the written set `heldout39b`
      (`deepfool_per_class_grad_loop`, `r2_deepfool_grad_created_in_jit_no_continue`) and its
      probes `fix39e_gl_*`: in an `@ms.jit` function or a jitted `construct`, `ms.grad`,
      `ops.grad` and `ms.value_and_grad` of a function (or of `self.logit`) applied with the
      loop variable of `range(3)` or of `(0, 2)`, a local `g = ms.grad(fn)` applied in such a
      loop, two applications with `0` and `1` or `1.0` and `2.0`, and a plain call with `0`
      beside the gradient with `1` are rejected ("Unexpected meta function graph node ... J
      ... PolyNode"); one application, two with the same constant, a loop of one iteration, a
      tensor argument that changes, a closure over the loop variable (`def fk(y): ...
      net(y)[0, k]`), two different functions, and the gradient built at module level or in
      `__init__` compile. Two applications on tensors of different shapes fail the same
      way (not reported: shapes are not compared here).
    """

    nodes = (ast.Call,)
    words = ("grad",)

    def wants_call(self, callee: type[ast.AST], called: str, receiver: str) -> bool:
        return called in _BUILDERS

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        assert isinstance(node, ast.Call)
        func = ctx.function
        if func is None or isinstance(func, ast.Lambda) or not node.args or isinstance(node.args[0], ast.Starred):
            return ()
        q = ctx.qualname(node.func) or ""
        if q.split(".")[0] != "mindspore" or q.rsplit(".", 1)[-1] not in _BUILDERS:
            return ()
        key = callee_key(node.args[0])
        if key is None:
            return ()
        builders, sites = _sites(key, func, ctx)
        why = None
        for b in builders:  # one report per function: at the first gradient concerned
            mine = _applications(b, func, ctx)
            if not mine or (len(sites) < 2 and not any(_varies(s, func, ctx) for s in mine)):
                continue
            why = _differing(mine, sites, func, ctx)
            if why is not None:
                if b is not node:
                    return ()
                break
        if why is None:
            return ()
        name = ctx.segment(node.args[0])
        return [
            ctx.diagnostic(
                self,
                node,
                f"this gradient is built inside compiled code, and `{name}` is compiled here for several values of a Python constant argument ({why}): "
                "MindSpore cannot differentiate a function specialised more than once in one graph (`Unexpected meta function graph node ... J ... PolyNode`); "
                f"build the gradient once outside the compiled function (`grad_fn = {ctx.segment(node)}` at module level or in `__init__`) or pass the value as a tensor",
            )
        ]


def _applications(builder: ast.Call, func: ast.AST, ctx: Context) -> list[ast.Call]:
    """The calls taking the gradient `builder` makes: the builder called in place
    (`ms.grad(fn)(x, k)`), or every call of a local bound once to it (`g = ms.grad(fn)`
    ... `g(x, k)`)."""
    parent = ctx.parent(builder)
    if isinstance(parent, ast.Call) and parent.func is builder:
        return [parent]
    if not (isinstance(parent, ast.Assign) and parent.value is builder and len(parent.targets) == 1 and isinstance(parent.targets[0], ast.Name)):
        return []
    name = parent.targets[0].id
    stores = [n for n in own_nodes(func) if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store)]
    if len(stores) != 1:
        return []
    return [n for n in own_nodes(func) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == name]


def _sites(key: tuple[str, str], func: ast.AST, ctx: Context) -> tuple[list[ast.Call], list[ast.Call]]:
    """The gradients of the function `key` names built in `func`, and every call of `func`
    that compiles that function: plain calls of it, and the applications of those
    gradients."""
    builders: list[ast.Call] = []
    out: list[ast.Call] = []
    for n in own_nodes(func):
        if not isinstance(n, ast.Call):
            continue
        if callee_key(n.func) == key:
            out.append(n)
            continue
        last = n.func.attr if isinstance(n.func, ast.Attribute) else n.func.id if isinstance(n.func, ast.Name) else ""
        if last in _BUILDERS and n.args and callee_key(n.args[0]) == key:
            q = ctx.qualname(n.func) or ""
            if q.split(".")[0] == "mindspore" and q.rsplit(".", 1)[-1] in _BUILDERS:
                builders.append(n)
                out += _applications(n, func, ctx)
    builders.sort(key=lambda c: (c.lineno, c.col_offset))
    return builders, out


def _varies(site: ast.Call, func: ast.AST, ctx: Context) -> bool:
    return any(v is not None and len(v) > 1 for v in _argument_values(site, func, ctx))


def _differing(mine: list[ast.Call], sites: list[ast.Call], func: ast.AST, ctx: Context) -> str | None:
    """Where the constants the calls compiling the function give one argument position
    differ (at least one call being `mine`, an application of the gradient in hand): a
    short account, or None."""
    by_site = {id(s): _argument_values(s, func, ctx) for s in [*sites, *mine]}
    for s in mine:
        for i, got in enumerate(by_site[id(s)]):
            if got is None:
                continue
            if len(got) > 1:
                return f"argument {i + 1} takes {_shown(got)} in the loop around it"
            for other in sites:
                if other is s:
                    continue
                theirs = by_site[id(other)]
                if i < len(theirs) and theirs[i] is not None and theirs[i] != got:
                    return f"argument {i + 1} is {_shown(got)} here and {_shown(theirs[i])} on line {other.lineno}"  # type: ignore[arg-type]
    return None


def _shown(got: frozenset[Const]) -> str:
    return ", ".join(sorted(repr(v) for _, v in got))


def _argument_values(site: ast.Call, func: ast.AST, ctx: Context) -> list[frozenset[Const] | None]:
    """The Python constants each positional argument of `site` takes (a loop variable: every
    value of its loop), None where not known or not a constant."""
    out: list[frozenset[Const] | None] = []
    for a in site.args:
        if isinstance(a, ast.Starred):
            break
        out.append(_constants(a, site, func, ctx))
    return out


def _constants(e: ast.expr, site: ast.AST, func: ast.AST, ctx: Context) -> frozenset[Const] | None:
    if isinstance(e, ast.Name):
        loop = _enclosing_loop(e.id, site, func, ctx)
        if loop is not None:
            return _loop_values(loop.iter, func, ctx)
    if isinstance(e, ast.Constant):
        return _const(e.value)
    v = values(ctx).of(e, func)
    if isinstance(v, av.Scalar) and v.value is not None:
        return _const(v.value)
    return None


def _const(value: object) -> frozenset[Const] | None:
    if type(value) in (int, float, bool, str):
        return frozenset({(type(value), value)})
    return None


def _enclosing_loop(name: str, site: ast.AST, func: ast.AST, ctx: Context) -> ast.For | ast.comprehension | None:
    """The `for` statement or comprehension around `site` (within `func`) whose target is
    the plain name `name`."""
    child: ast.AST = site
    parent = ctx.parent(site)
    while parent is not None and parent is not func:
        if isinstance(parent, ast.For) and child in parent.body and isinstance(parent.target, ast.Name) and parent.target.id == name:
            return parent
        if isinstance(parent, (ast.ListComp, ast.GeneratorExp, ast.SetComp)) and child is parent.elt:
            for gen in parent.generators:
                if isinstance(gen.target, ast.Name) and gen.target.id == name:
                    return gen
        child, parent = parent, ctx.parent(parent)
    return None


def _loop_values(it: ast.expr, func: ast.AST, ctx: Context) -> frozenset[Const] | None:
    """The constants a loop over `it` gives its variable: `range` of known ints, or a tuple /
    list display of constants (the graph unrolls such loops)."""
    if isinstance(it, (ast.Tuple, ast.List)):
        got: set[Const] = set()
        for e in it.elts:
            one = _constants(e, it, func, ctx) if not isinstance(e, ast.Starred) else None
            if one is None:
                return None
            got |= one
        return frozenset(got)
    if not (isinstance(it, ast.Call) and ctx.qualname(it.func) == "builtins.range" and it.args and not it.keywords):
        return None
    bounds: list[int] = []
    for a in it.args:
        v = values(ctx).of(a, func)
        if not (isinstance(v, av.Scalar) and type(v.value) is int):
            return None
        bounds.append(v.value)
    try:
        r = range(*bounds)
    except ValueError:  # a zero step
        return None
    return frozenset((int, i) for i in r) if len(r) <= 64 else None
