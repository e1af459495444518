"""MS112: comprehensions with more than one `for` clause in compiled code."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.helpers import GraphRule


@rule(code="MS112", name="nested-comprehension", severity="error", family="graphmode")
class NestedComprehension(GraphRule):
    """## What it does
    Flags list, dict and generator comprehensions with two or more `for` clauses in
    compiled code.

    ## Why is this bad?
    MindSpore supports one generator per comprehension and stops with
    `TypeError: The 'generators' supports 1 'comprehension' in ListComp/GeneratorExp, but got 2 comprehensions.`
    at every syntax level.

    ## Example
    ```python
    def construct(self, x):
        pairs = [a * b for a in (1, 2) for b in (3, 4)]
        return x * len(pairs)
    ```

    ## Use instead
    Nest the comprehensions (or use a loop):
    ```python
    def construct(self, x):
        pairs = [[a * b for b in (3, 4)] for a in (1, 2)]
        return x * len(pairs)
    ```

    ## Fix safety
    No automatic fix: nesting changes the result's structure.

    ## References
    - RULES.md, section 1: comprehension with 2+ `for` clauses.
    """

    nodes = (ast.ListComp, ast.GeneratorExp, ast.DictComp)

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        gens = getattr(node, "generators", [])
        if len(gens) > 1:
            yield ctx.diagnostic(
                self, node, f"graph mode supports one `for` per comprehension, got {len(gens)}"
            )
