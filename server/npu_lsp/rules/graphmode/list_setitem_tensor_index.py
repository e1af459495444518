"""MS122: assigning to a list element with a tensor index."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.flow import Kind, analyzer
from npu_lsp.rules.graphmode.helpers import GraphRule


@rule(code="MS122", name="list-setitem-tensor-index", severity="error", family="graphmode")
class ListSetitemTensorIndex(GraphRule):
    """## What it does
    Flags `lst[i] = v` in compiled code when `lst` is a Python list and `i` is a tensor.

    ## Why is this bad?
    Graph lists are indexed while compiling; MindSpore stops with `TypeError: list_setitem
    evaluator index should be an int64 number, but got a Int32 number.` at every level.

    ## Example
    ```python
    def construct(self, x, i):          # i is a Tensor
        out = [x, x]
        out[i] = x * 2
        return out[0]
    ```

    ## Use instead
    Index with a Python int, or keep the values in a tensor and use tensor indexing:
    ```python
    def construct(self, x, i):
        out = ops.stack([x, x])
        out[i] = x * 2
        return out[0]
    ```

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 1: `lst[i] = v` with a Tensor index.
    """

    nodes = (ast.Assign, ast.AugAssign)

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        # not a generator itself: most nodes stop at these tests, for the cost of a call
        # rather than of a generator each
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]  # type: ignore[attr-defined]
        stores = [t for t in targets if isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name)]
        return self._check(stores, ctx) if stores else ()

    def wants_assign(self, target: type[ast.AST] | None, value: type[ast.AST]) -> bool:
        return target is ast.Subscript or target is None  # a subscript among the targets

    def _check(self, stores: list[ast.Subscript], ctx: Context) -> Iterable[Diagnostic]:
        for t in stores:
            assert isinstance(t.value, ast.Name)
            # only now the data flow (dear, cached per function): most assignments bind names
            a = analyzer(ctx)
            flow = a.flow(ctx.function)
            if flow.types.get(t.value.id) != {"list"}:
                continue
            if a.kind(t.slice) == Kind.TENSOR:
                yield ctx.diagnostic(
                    self,
                    t,
                    f"list `{t.value.id}` cannot be indexed by tensor `{ctx.segment(t.slice)}` in graph mode",
                )
