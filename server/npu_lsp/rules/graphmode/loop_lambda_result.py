"""MS221: the result of a compiled call whose function makes a lambda in a `for` loop."""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.abstract_eval import values
from npu_lsp.rules.graphmode.helpers import GraphRule, own_nodes


@rule(code="MS221", name="loop-lambda-result", severity="error", family="graphmode")
class LoopLambdaResult(GraphRule):
    """## What it does
    Flags a call in compiled code of a user function (a helper, a nested function, a method,
    a sub-cell's `construct`, a `@jit_class` method, a module-level `@ms.jit` function) whose
    own body makes a lambda inside a `for` loop (`x = (lambda t, s=2.0: t * s)(x)`, `x =
    sorted([x, x * 2], key=lambda t: float(t.sum()))[0]`, `functools.reduce(lambda a, b: a +
    b, ...)`, `list(map(lambda r: r * 2, x))`), when the caller goes on to use the result:
    reads the name it is bound to in an expression other than the value it returns, or
    operates on the call directly.

    ## Why is this bad?
    MindSpore 2.10 compiles such a function as a graph call that returns `None` at run time,
    whatever its `return` says (at both syntax levels; measured, written/gen18 probes
    `genfresh27_ll_*`). The caller then fails with `TypeError: unsupported operand type(s)
    for *: 'NoneType' and 'int'` or `'NoneType' object has no attribute 'shape'`. The same
    loop written in the compiled entry itself (`construct` of the network called, the
    `@ms.jit` function) works, as does a lambda made outside the loop; a result only returned
    as the output prints `None`. A loop nested in the body ahead of the lambda (a beam
    search's `for score, seq in beams:` before `sorted(cand, key=lambda b: b[0])`) makes
    the function compile as written (written/lax probes `gen6_ll_*`).

    ## Example
    ```python
    def scale_twice(x):
        for _ in range(2):
            x = (lambda t, s=2.0: t * s)(x)
        return x

    class Net(nn.Cell):
        def construct(self, x):
            x = scale_twice(x)
            return x * 2
    ```

    ## Use instead
    Make the function once, outside the loop:
    ```python
    def scale_twice(x):
        scale = lambda t, s=2.0: t * s
        for _ in range(2):
            x = scale(x)
        return x
    ```

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 1 (rejected at every level).
    - Measured on MindSpore 2.10 (written/gen18 probes `genfresh27_ll_*`, `genfresh27_nn_*`;
      fresh v5 seeds 10000024, 10500052, 10500084, 10800119, 10800134, 11200091, 11300157,
      11400153 fail so, 10800052 and 11100097 return the result and compile).
    """

    nodes = (ast.Call,)
    words = ("lambda",)

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        assert isinstance(node, ast.Call)
        func = ctx.function
        if func is None or not result_used(node, func, ctx):
            return ()
        callee = values(ctx).callee(node, func)
        if callee is None or callee is func or not _makes_lambda_in_loop(callee, ctx):
            return ()
        return [
            ctx.diagnostic(
                self,
                node,
                f"`{callee.name}` makes a lambda inside a `for` loop: MindSpore compiles this call as "
                "one that returns None at run time, and the result is used here (e.g. \"unsupported "
                "operand type(s) for *: 'NoneType' and 'int'\"); make the lambda once, before the loop",
            )
        ]


def _makes_lambda_in_loop(fn: ast.FunctionDef, ctx: Context) -> bool:
    key = ("loop-lambda-in", id(fn))
    got: bool | None = ctx.cache.get(key)
    if got is None:
        got = any(type(n) is ast.For and _lambda_before_inner_loop(n) for n in own_nodes(fn))
        ctx.cache[key] = got
    return got


def _lambda_before_inner_loop(loop: ast.For) -> bool:
    """Does the body of `loop` make a lambda before any loop of its own starts? Measured
    (written/lax probes `gen6_ll_*`): a `for` or `while` nested in the body ahead of the lambda
    (a beam search's `for score, seq in beams:` before `sorted(cand, key=lambda b: b[0])`)
    makes the function compile as written; a comprehension there does not, and a nested loop
    after the lambda fails too ("have return node!")."""
    first: tuple[int, int] | None = None
    loops: list[tuple[int, int]] = []
    for stmt in loop.body:
        for n in ast.walk(stmt):
            if isinstance(n, ast.Lambda):
                at = (n.lineno, n.col_offset)
                first = at if first is None or at < first else first
            elif isinstance(n, (ast.For, ast.While)):
                loops.append((n.lineno, n.col_offset))
    return first is not None and not any(at < first for at in loops)


def result_used(
    call: ast.Call, func: ast.AST, ctx: Context, harmless: Callable[[ast.expr], bool] | None = None
) -> bool:
    """Is the call's result operated on: directly (`f(x) * 2`, `f(x).sum()`), or through the
    name a plain `y = f(x)` binds, read later other than as (part of) the returned value?
    `harmless(e)` (the call or a read of the name): an operation the caller's rule knows the
    wrong result survives (MS229: a tuple repeated by an int)."""
    parent = ctx.parent(call)
    if harmless is not None and harmless(call):
        return False
    if isinstance(parent, (ast.BinOp, ast.UnaryOp, ast.Compare)):
        return True
    if isinstance(parent, (ast.Attribute, ast.Subscript)) and parent.value is call:
        return True
    if not (isinstance(parent, ast.Assign) and len(parent.targets) == 1 and isinstance(parent.targets[0], ast.Name)):
        return False
    name = parent.targets[0].id
    after = (parent.end_lineno or parent.lineno, parent.end_col_offset or 0)
    reads: list[ast.Name] = []
    stores: list[tuple[int, int]] = []
    for n in own_nodes(func):
        if type(n) is ast.Name and n.id == name and (n.lineno, n.col_offset) > after:
            if isinstance(n.ctx, ast.Load):
                reads.append(n)
            else:  # a store takes effect after the statement's value is read (`y = y * 2`)
                st = ctx.parent(n)
                at = st if isinstance(st, (ast.Assign, ast.AnnAssign)) else n
                stores.append((at.end_lineno or at.lineno, at.end_col_offset or 0))
    end = min(stores, default=None)
    return any(
        not _returned(r, ctx) and not (harmless is not None and harmless(r))
        for r in reads
        if end is None or (r.lineno, r.col_offset) < end
    )


def _returned(name: ast.Name, ctx: Context) -> bool:
    """`return y` or `return y, ...`: the value leaves the graph as it is."""
    parent = ctx.parent(name)
    if isinstance(parent, ast.Tuple):
        parent = ctx.parent(parent)
    return isinstance(parent, ast.Return)
