"""MS108: `yield` (a generator) in compiled code."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.helpers import GraphRule


@rule(code="MS108", name="yield-in-graph", severity="error", family="graphmode")
class YieldInGraph(GraphRule):
    """## What it does
    Flags `yield` and `yield from` in compiled code, including generator functions that
    `construct` calls (the diagnostic sits on the `yield`; the call site is named as related
    information).

    ## Why is this bad?
    Graphs cannot suspend and resume: MindSpore stops with
    `RuntimeError: Unsupported expression 'Yield'.` at every syntax level. Calling a
    generator function from `construct` fails the same way, reported at the call.

    ## Example
    ```python
    def gen(n):
        for i in range(n):
            yield i

    class Net(nn.Cell):
        def construct(self, x):
            for i in gen(3):
                x = x + i
            return x
    ```

    ## Use instead
    Iterate over a tuple, a list or `range` directly:
    ```python
    class Net(nn.Cell):
        def construct(self, x):
            for i in range(3):
                x = x + i
            return x
    ```

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 1: `yield`, including calling a generator function.
    """

    nodes = (ast.Yield, ast.YieldFrom)

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        yield ctx.diagnostic(
            self,
            node,
            "generators are not supported in graph mode (Unsupported expression 'Yield')",
        )
