"""MS103: `import` inside compiled code."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.helpers import GraphRule


@rule(code="MS103", name="import-in-graph", severity="error", family="graphmode")
class ImportInGraph(GraphRule):
    """## What it does
    Flags `import` and `from ... import` statements inside compiled functions.

    ## Why is this bad?
    MindSpore cannot compile an import: it stops with
    `RuntimeError: Unsupported statement 'Import'` (or `'ImportFrom'`) at every syntax level.
    Modules imported at module level can be used freely inside `construct`.

    ## Example
    ```python
    class Net(nn.Cell):
        def construct(self, x):
            from math import pi
            return x * pi
    ```

    ## Use instead
    ```python
    from math import pi

    class Net(nn.Cell):
        def construct(self, x):
            return x * pi
    ```

    ## Fix safety
    No automatic fix: moving an import to module level can change import order.

    ## References
    - RULES.md, section 1: `import` / `from … import` inside compiled code.
    """

    nodes = (ast.Import, ast.ImportFrom)

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        kind = "Import" if isinstance(node, ast.Import) else "ImportFrom"
        yield ctx.diagnostic(
            self,
            node,
            f"imports are not supported in graph mode (Unsupported statement '{kind}'); import at module level",
        )
