"""MS128: assigning an attribute of a tensor (`x.shape = ...`)."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.flow import Kind, analyzer
from npu_lsp.rules.graphmode.helpers import GraphRule

#: properties of mindspore.Tensor without a setter (MindSpore 2.10)
_READ_ONLY = frozenset(
    {"shape", "dtype", "ndim", "size", "itemsize", "nbytes", "strides", "T", "H", "mT", "mH"}
)


@rule(code="MS128", name="tensor-attribute-assignment", severity="error", family="graphmode")
class TensorAttributeAssignment(GraphRule):
    """## What it does
    Flags assignments to the read-only attributes of a tensor in compiled code, such as
    `x.shape = (3, 1)` or `x.dtype = ms.float16` (its shape, dtype, size and the views
    `T`/`H`/`mT`/`mH`). Attributes a tensor lets Python set (`x.requires_grad = False`,
    a new attribute) compile: measured, MindSpore 2.10 accepts them at both levels.

    ## Why is this bad?
    These attributes are read-only in graph mode and in PyNative alike: compilation stops
    with an `AttributeError`.

    ## Example
    ```python
    def construct(self, x):
        x.shape = (3, 1)
        return x
    ```

    ## Use instead
    ```python
    def construct(self, x):
        return x.reshape((3, 1))
    ```

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 1 (rows that also fail in PyNative): `x.shape = …`.
    """

    nodes = (ast.Assign, ast.AugAssign, ast.AnnAssign)

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        # not a generator itself: most nodes stop at these tests, for the cost of a call
        # rather than of a generator each
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]  # type: ignore[attr-defined]
        stores = [
            t
            for t in targets
            if isinstance(t, ast.Attribute)
            and t.attr in _READ_ONLY
            and isinstance(t.value, ast.Name)
            and t.value.id != "self"
        ]
        return self._check(stores, ctx) if stores else ()

    def _check(self, stores: list[ast.Attribute], ctx: Context) -> Iterable[Diagnostic]:
        a = analyzer(ctx)
        for t in stores:
            if a.kind(t.value) == Kind.TENSOR:
                yield ctx.diagnostic(
                    self,
                    t,
                    f"tensor attribute `{ctx.segment(t)}` cannot be assigned in graph mode",
                )
