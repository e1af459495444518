"""MS140: `global` assignments in compiled code are silently lost."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.control import bindings
from npu_lsp.rules.graphmode.helpers import GraphRule


@rule(code="MS140", name="global-statement-in-graph", severity="warning", family="graphmode")
class GlobalStatementInGraph(GraphRule):
    """## What it does
    Warns about `global` declarations in compiled code for names the function assigns.

    ## Why is this bad?
    MindSpore accepts the statement but the assignment never reaches the module: with
    `global counter; counter = counter + 1; return x + counter` the graph returns `x + 0`
    and the module's `counter` stays 0. Reading a global without `global` is fine.

    ## Example
    ```python
    counter = 0

    class Net(nn.Cell):
        def construct(self, x):
            global counter
            counter = counter + 1
            return x + counter
    ```

    ## Use instead
    Keep the state in a Parameter of the Cell, or update it in Python outside the network:
    ```python
    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.counter = Parameter(Tensor(0, ms.int32), name="counter", requires_grad=False)

        def construct(self, x):
            ops.assign_add(self.counter, Tensor(1, ms.int32))
            return x + self.counter
    ```

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 4: the `global` statement is accepted but silently wrong.
    """

    nodes = (ast.Global,)

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        assert isinstance(node, ast.Global)
        body = getattr(ctx.function, "body", [])
        assigned = bindings(body) if isinstance(body, list) else set()
        names = [n for n in node.names if n in assigned]
        if names:
            yield ctx.diagnostic(
                self,
                node,
                f"assignments to global {', '.join(f'`{n}`' for n in names)} inside a graph do not update the module",
            )
