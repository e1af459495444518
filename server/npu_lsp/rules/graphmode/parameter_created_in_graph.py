"""MS117: creating a Parameter (or MultitypeFuncGraph) inside compiled code."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.helpers import GraphRule

_FORBIDDEN_CLASSES = frozenset({"Parameter", "MultitypeFuncGraph"})


@rule(code="MS117", name="parameter-created-in-graph", severity="error", family="graphmode")
class ParameterCreatedInGraph(GraphRule):
    """## What it does
    Flags `Parameter(...)` and `ops.MultitypeFuncGraph(...)` instantiated inside compiled code.

    ## Why is this bad?
    Parameters are the network's persistent state and must exist before compiling. MindSpore
    stops with `ValueError: Failed to compile in GRAPH_MODE because creating class
    'mindspore.common.parameter.Parameter' instances is not supported` at every level.
    (Creating a Tensor, a Primitive or even an `nn.Dense` inside `construct` is accepted.)

    ## Example
    ```python
    def construct(self, x):
        w = Parameter(Tensor(np.ones(3), ms.float32), name="w")
        return x * w
    ```

    ## Use instead
    ```python
    def __init__(self):
        super().__init__()
        self.w = Parameter(Tensor(np.ones(3), ms.float32), name="w")

    def construct(self, x):
        return x * self.w
    ```

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 1: creating `Parameter(...)` or `ops.MultitypeFuncGraph(...)` inside.
    """

    nodes = (ast.Call,)
    calls = _FORBIDDEN_CLASSES

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        assert isinstance(node, ast.Call)
        q = ctx.qualname(node.func)
        if q and q.startswith("mindspore.") and q.rsplit(".", 1)[-1] in _FORBIDDEN_CLASSES:
            name = q.rsplit(".", 1)[-1]
            yield ctx.diagnostic(
                self,
                node,
                f"`{name}` instances cannot be created in compiled code; create them in `__init__`",
            )
