"""MS121: a run-time tensor used as a dict key."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.flow import Kind, analyzer
from npu_lsp.rules.graphmode.helpers import GraphRule


@rule(code="MS121", name="tensor-dict-key", severity="error", family="graphmode")
class TensorDictKey(GraphRule):
    """## What it does
    Flags dict displays in compiled code whose key is a tensor computed at run time.

    ## Why is this bad?
    Graph dicts are resolved while compiling, so keys must be constants: strings, numbers,
    types, `None`, constant tensors or tuples of those. MindSpore stops with
    `RuntimeError: make_dict evaluator key only supports string, number, type, none, constant
    tensor and tuple, but got ValueAny` at every syntax level.

    ## Example
    ```python
    def construct(self, x):
        d = {x: 1}
        return d
    ```

    ## Use instead
    Key by a constant name and keep the tensor as the value:
    ```python
    def construct(self, x):
        d = {"x": x}
        return d
    ```

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 1: dict key that is a variable tensor.
    """

    nodes = (ast.Dict,)

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        assert isinstance(node, ast.Dict)
        a = analyzer(ctx)
        for key in node.keys:
            if key is not None and a.kind(key) == Kind.TENSOR:
                yield ctx.diagnostic(
                    self,
                    key,
                    f"dict key `{ctx.segment(key)}` is a run-time tensor; graph dict keys must be constants",
                )
                return
