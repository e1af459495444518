"""MS247: a tensor bound under a tensor `if` and never read, with a nested function defined after."""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.flow import Kind, analyzer
from npu_lsp.rules.graphmode.helpers import GraphRule


@rule(code="MS247", name="dead-branch-value-before-def", severity="error", family="graphmode")
class DeadBranchValueBeforeDef(GraphRule):
    """## What it does
    Flags a name bound to a tensor inside an `if` on a tensor and never read anywhere in
    the function, when a nested function (`def`) is defined after that `if` in the same
    function body.

    ## Why is this bad?
    A nested function makes MindSpore keep every local of the enclosing function alive
    (the closure may capture it), so the dead value becomes one more output of the branch
    that binds it, and the two sides of the `if` no longer have the same outputs. MindSpore
    2.10 stops at both syntax levels with `TypeError: Cannot join the return values of
    different branches, perhaps you need to make them equal. Type Join Failed: Abstract
    type AbstractTuple cannot join with AbstractTensor`. Without the nested function, with
    the function defined before the `if`, with the value read (in the branch or after it),
    or bound to a constant, the same code compiles.

    ## Example
    ```python
    def construct(self, x):
        if x.max() > 0:
            unused = x * 2
            x = x + 1
        def step(t):
            return t + 1
        return step(x)
    ```

    ## Use instead
    Drop the dead assignment, or define the nested function before the `if` (or at module
    level):
    ```python
    def construct(self, x):
        def step(t):
            return t + 1
        if x.max() > 0:
            x = x + 1
        return step(x)
    ```

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md has no row for it (rejected at every level).
    - Measured on MindSpore 2.10 (CPU), LAX and STRICT: the generated store
      (`fixtures/difftest` seed 12000446) and written/lax probes `fix35c_join*`: a dead
      `y2 = x * 2`, `y2 = helper(x)` (bound on one or both sides) before a nested `def`
      (called or not) fail; no `def`, the `def` before the `if`, `y2` read, `y2 = 2`, or a
      bare `helper(x)` compile.
    """

    nodes = (ast.If,)

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        assert isinstance(node, ast.If)
        outer = ctx.parent(node)
        if not isinstance(outer, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return ()
        if not _defines_functions(outer, ctx):
            return ()  # most functions: no nested `def` at all, so none after this `if`
        body = outer.body
        at = next((i for i, st in enumerate(body) if st is node), None)
        nested = next((st for st in body[at + 1 :] if type(st) is ast.FunctionDef), None) if at is not None else None
        if nested is None:
            return ()
        return [
            ctx.diagnostic(
                self,
                value,
                f"`{name}` is bound to a tensor under this tensor `if` (line {node.lineno}) and never read, and "
                f"`{nested.name}` is defined after it: the nested function keeps the dead value as an output of the "
                "branch, and MindSpore cannot join the branches (\"Cannot join the return values of different "
                "branches ... AbstractTuple cannot join with AbstractTensor\"); drop the assignment or define "
                f"`{nested.name}` before the `if`",
            )
            for name, value in _dead_tensor_bindings(outer, node, ctx)
        ]


def _defines_functions(outer: ast.FunctionDef | ast.AsyncFunctionDef, ctx: Context) -> bool:
    """Is a `def` among the statements of `outer`'s body? Once per function (its `if`s ask
    in turn)."""
    memo: dict[int, bool] = ctx.cache.setdefault(_defines_functions, {})
    hit = memo.get(id(outer))
    if hit is None:
        hit = False
        for st in outer.body:  # (a loop, not a generator: once per function)
            if type(st) is ast.FunctionDef:
                hit = True
                break
        memo[id(outer)] = hit
    return hit


def _dead_tensor_bindings(
    outer: ast.FunctionDef | ast.AsyncFunctionDef, branch: ast.If, ctx: Context
) -> Iterator[tuple[str, ast.expr]]:
    """(name, value) for each plain `name = <tensor>` directly in a side of `branch`, an `if`
    on a tensor, the name read nowhere in `outer` (nested functions included)."""
    candidates = [
        (b.targets[0].id, b.value)
        for b in (*branch.body, *branch.orelse)
        if type(b) is ast.Assign and len(b.targets) == 1 and type(b.targets[0]) is ast.Name
    ]
    if not candidates:
        return
    read = {n.id for n in ast.walk(outer) if type(n) is ast.Name and type(n.ctx) is ast.Load}
    candidates = [(name, value) for name, value in candidates if name not in read]
    a = analyzer(ctx)
    if not candidates or a.kind(branch.test, outer) != Kind.TENSOR:
        return
    for name, value in candidates:
        if a.kind(value, outer) == Kind.TENSOR:
            yield name, value
