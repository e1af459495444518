"""MS127: calling a `@classmethod` of a Cell from compiled code."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.flow import analyzer
from npu_lsp.rules.graphmode.helpers import GraphRule


@rule(code="MS127", name="classmethod-in-graph", severity="error", family="graphmode")
class ClassmethodInGraph(GraphRule):
    """## What it does
    Flags calls, from compiled code, to a method of the same Cell class that is decorated
    `@classmethod`.

    ## Why is this bad?
    The graph compiler binds `self`, not the class, and miscounts the arguments:
    `TypeError: The parameters number of the function is 3, but the number of provided
    arguments is 2.` at every syntax level.

    ## Example
    ```python
    class Net(nn.Cell):
        @classmethod
        def scale(cls, x, k):
            return x * k

        def construct(self, x):
            return self.scale(x, 2)
    ```

    ## Use instead
    Use a `@staticmethod` or a module-level function:
    ```python
    class Net(nn.Cell):
        @staticmethod
        def scale(x, k):
            return x * k

        def construct(self, x):
            return self.scale(x, 2)
    ```

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 1: `@classmethod` on a Cell, called from construct.
    """

    nodes = (ast.Call,)

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        assert isinstance(node, ast.Call)
        f = node.func
        if not (isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name)):
            return
        cls = analyzer(ctx).owner_class(ctx.function)
        if cls is None or not (f.value.id == "self" or f.value.id == cls.name):
            return
        for item in cls.body:
            if isinstance(item, ast.FunctionDef) and item.name == f.attr:
                if any(
                    isinstance(d, ast.Name) and d.id == "classmethod" for d in item.decorator_list
                ):
                    yield ctx.diagnostic(
                        self, node, f"classmethod `{f.attr}` cannot be called from compiled code"
                    )
                return
