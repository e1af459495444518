"""MS124: `with` on a context manager that is not a `@jit_class` instance."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.helpers import GraphRule


@rule(code="MS124", name="with-non-jit-class", severity="error", family="graphmode")
class WithNonJitClass(GraphRule):
    """## What it does
    Flags `with` statements in compiled code whose context manager is known not to be a
    `@ms.jit_class` instance: standard-library or third-party managers such as
    `contextlib.nullcontext()` or `open(...)`, and classes of this project that lack the
    `@jit_class` decorator.

    ## Why is this bad?
    The graph compiler can only run `__enter__`/`__exit__` of jit classes. Anything else stops
    with `TypeError: Only support jit_class instance, but got PythonObject(...)` at every level.

    ## Example
    ```python
    @ms.jit
    def f(x):
        with contextlib.nullcontext():
            return x * 2
    ```

    ## Use instead
    Drop the manager from compiled code, or decorate your own manager class with
    `@ms.jit_class`:
    ```python
    @ms.jit
    def f(x):
        return x * 2
    ```

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 1: `with` on a context manager that is not a `@ms.jit_class` instance.
    """

    nodes = (ast.With,)

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        assert isinstance(node, ast.With)
        info = ctx.scopes.info
        for item in node.items:
            expr = item.context_expr
            target = expr.func if isinstance(expr, ast.Call) else None
            if target is None:
                continue
            q = ctx.qualname(target)
            if q is None or q.startswith("mindspore."):
                continue
            mod, _, name = q.rpartition(".")
            if mod == info.module:
                cls = info.classes.get(name)
                if cls is None or cls.jit_class:
                    continue
            yield ctx.diagnostic(
                self,
                ctx.head_span(node),
                f"`{ctx.segment(target)}` is not a @jit_class; graph mode only supports `with` on jit_class instances",
            )
            return
