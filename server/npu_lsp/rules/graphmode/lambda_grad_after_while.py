"""MS255: (STRICT) a gradient of an inline lambda taken in an unrolled `for` loop that follows
a `while` on a tensor condition."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.flow import Kind, analyzer
from npu_lsp.rules.graphmode.helpers import GraphRule

#: the grad builders measured (written/lax probes `fix35h_lg_*`, `fix36b_lg_*`): `ms.grad`,
#: `ops.grad` and `ms.value_and_grad` all fail the same way
_GRADS = frozenset({"mindspore.grad", "mindspore.ops.grad", "mindspore.value_and_grad", "mindspore.ops.value_and_grad"})
_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


@rule(code="MS255", name="lambda-grad-loop-after-tensor-while", severity="error", family="graphmode")
class LambdaGradLoopAfterTensorWhile(GraphRule):
    """## What it does
    Under the STRICT syntax level, flags `ms.grad(lambda t: ...)(x)` (also `ops.grad`,
    `ms.value_and_grad`; first or second order) written inline in the body of a `for` loop
    over a `range` or a tuple, when an earlier statement of the same block is a `while` whose
    condition is a tensor (`while x.abs().max() > 1000: x = x * 0.5`), or when the loop is
    in a function defined in that block after the `while` (a closure of `construct`).

    ## Why is this bad?
    MindSpore 2.10 unrolls the `for` loop and makes one graph of the lambda per turn inside
    the graph it builds for the code after the `while`; under STRICT this stops with
    `Invalid abstract;AbstractNone(Value: None) for node:ValueNode<None> None`. LAX
    compiles it, and so does STRICT without the `while`, with a Python `while` (a counter),
    a tensor `if` instead, the `while` inside the loop body or in a helper called first,
    the loop before the `while`, a named function, or a lambda bound to a name before the
    loop.

    ## Example
    ```python
    def construct(self, x):
        while x.abs().max() > 1000:
            x = x * 0.5
        for _ in range(2):
            x = x + ms.grad(lambda t: (t * t).sum())(x) * 0
        return x
    ```

    ## Use instead
    ```python
    def construct(self, x):
        while x.abs().max() > 1000:
            x = x * 0.5
        energy = lambda t: (t * t).sum()
        for _ in range(2):
            x = x + ms.grad(energy)(x) * 0
        return x
    ```

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 3 (control flow on tensors: what follows a tensor `while` is a
      separate graph).
    - Measured on MindSpore 2.10 CPU, STRICT (LAX compiles all of them): v6 seed 12000385;
      written/lax probes `fix35h_lg_*` (second-order lambda in `construct` or in a closure
      defined after the `while`, first order in a closure: rejected; named function, no
      `while`, outside the loop: compile) and `fix36b_lg_*` (`ops.grad`,
      `ms.value_and_grad`, a loop over a tuple, a sub-cell's `construct`, an `@ms.jit`
      function: rejected; a Python `while`, a tensor `if`, the loop before the `while`,
      the `while` in the loop body or in a helper called first, a lambda bound before the
      loop: compile).
    """

    nodes = (ast.Lambda,)
    words = ("while",)

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        # not a generator itself: most lambdas are no grad's argument
        assert isinstance(node, ast.Lambda)
        builder = ctx.parent(node)
        if type(builder) is not ast.Call or not builder.args or builder.args[0] is not node:
            return ()
        applied = ctx.parent(builder)
        if type(applied) is not ast.Call or applied.func is not builder:
            return ()
        if ctx.scope is None or ctx.scope.level != "strict" or ctx.qualname(builder.func) not in _GRADS:
            return ()
        loop = _enclosing_unrolled_for(applied, ctx)
        if loop is None:
            return ()
        before = _tensor_while_before(loop, ctx)
        if before is None:
            return ()
        return [
            ctx.diagnostic(
                self,
                applied,
                f"under STRICT, a gradient of an inline lambda taken in this `for` loop after the tensor `while` on line {before.lineno} fails (MindSpore: Invalid abstract;AbstractNone(Value: None) for node:ValueNode<None>); bind the lambda to a name before the loop, or use a named function",
            )
        ]


def _enclosing_unrolled_for(node: ast.AST, ctx: Context) -> ast.For | None:
    """The `for` loop over a `range(...)` or a tuple / list display whose body holds `node`
    (within the same function), else None."""
    child, parent = node, ctx.parent(node)
    while parent is not None and not isinstance(parent, _FUNCS):
        if type(parent) is ast.For and child in parent.body:
            it = parent.iter
            if isinstance(it, (ast.Tuple, ast.List)) or (
                type(it) is ast.Call and ctx.qualname(it.func) == "builtins.range"
            ):
                return parent
            return None
        child, parent = parent, ctx.parent(parent)
    return None


def _tensor_while_before(stmt: ast.stmt, ctx: Context) -> ast.While | None:
    """A `while` on a tensor condition that is an earlier statement of the block holding
    `stmt`, or of the block holding the `def` around `stmt` (a closure defined after it)."""
    child: ast.AST = stmt
    parent = ctx.parent(stmt)
    for _ in range(2):  # the loop's own block, then its closure's
        found = _earlier_tensor_while(parent, child, ctx)
        if found is not None:
            return found
        while parent is not None and not isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef)):
            child, parent = parent, ctx.parent(parent)
        if parent is None:
            return None
        child, parent = parent, ctx.parent(parent)
    return None


def _earlier_tensor_while(parent: ast.AST | None, child: ast.AST, ctx: Context) -> ast.While | None:
    if parent is None:
        return None
    for field in ("body", "orelse", "finalbody"):
        block = getattr(parent, field, None)
        if isinstance(block, list) and child in block:
            func = parent if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef)) else _function_of(parent, ctx)
            for st in block[: block.index(child)]:
                if type(st) is ast.While and analyzer(ctx).kind(st.test, func) == Kind.TENSOR:
                    return st
    return None


def _function_of(node: ast.AST, ctx: Context) -> ast.AST | None:
    p = ctx.parent(node)
    while p is not None and not isinstance(p, (ast.FunctionDef, ast.AsyncFunctionDef)):
        p = ctx.parent(p)
    return p
