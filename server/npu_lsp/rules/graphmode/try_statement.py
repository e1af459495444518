"""MS101: `try` in compiled code."""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.helpers import GraphRule


@rule(code="MS101", name="try-statement", severity="error", family="graphmode")
class TryStatement(GraphRule):
    """## What it does
    Flags `try` / `except` / `else` / `finally` inside code MindSpore compiles in graph mode
    (`construct`, `@jit` functions and everything they call).

    ## Why is this bad?
    The graph compiler has no exception handling: compilation stops with
    `RuntimeError: Unsupported statement 'Try'.`, at every syntax level. The same code runs
    fine in PyNative mode, so the problem only shows up once you switch to GRAPH_MODE.

    ## Example
    ```python
    class Net(nn.Cell):
        def construct(self, x):
            try:
                y = x * 2
            except ValueError:
                y = x
            return y
    ```

    ## Use instead
    Validate inputs before calling the network, outside compiled code, and keep `construct`
    free of exception handling:
    ```python
    class Net(nn.Cell):
        def construct(self, x):
            return x * 2
    ```
    Or compile with `@jit(capture_mode="bytecode")`, which runs unsupported code eagerly.

    ## Fix safety
    No automatic fix: removing the handler changes what happens on errors.

    ## References
    - RULES.md, section 1 (Rejected at every level): `try/except/else/finally`.
    """

    # `try ... except*` has its own node from Python 3.11 on.
    if sys.version_info >= (3, 11):
        nodes: tuple[type[ast.AST], ...] = (ast.Try, ast.TryStar)
    else:
        nodes = (ast.Try,)

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        yield ctx.diagnostic(
            self,
            ctx.head_span(node),
            "`try` is not supported in graph mode (Unsupported statement 'Try')",
        )
