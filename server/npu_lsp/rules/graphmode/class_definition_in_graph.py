"""MS105: a `class` statement inside compiled code."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.helpers import GraphRule


@rule(code="MS105", name="class-definition-in-graph", severity="error", family="graphmode")
class ClassDefinitionInGraph(GraphRule):
    """## What it does
    Flags classes defined inside compiled functions.

    ## Why is this bad?
    MindSpore stops with `Unsupported statement 'ClassDef'` at every syntax level. Classes
    defined at module level can be instantiated and used inside `construct`.

    ## Example
    ```python
    def construct(self, x):
        class Local:
            k = 2
        return x * Local.k
    ```

    ## Use instead
    ```python
    class Local:
        k = 2

    class Net(nn.Cell):
        def construct(self, x):
            return x * Local.k
    ```

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 1: `class` defined inside, `async def`, `match`.
    """

    nodes = (ast.ClassDef,)

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        yield ctx.diagnostic(
            self,
            ctx.head_span(node),
            "classes cannot be defined in graph mode (Unsupported statement 'ClassDef')",
        )
