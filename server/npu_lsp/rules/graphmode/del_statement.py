"""MS102: `del` in compiled code."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.helpers import GraphRule


@rule(code="MS102", name="del-statement", severity="error", family="graphmode")
class DelStatement(GraphRule):
    """## What it does
    Flags `del` statements (`del x`, `del d[k]`, `del self.a`) in compiled code.

    ## Why is this bad?
    The graph compiler has no `Delete` statement and stops with
    `RuntimeError: Unsupported statement 'Delete'.` at every syntax level. Names in a graph
    are values, not slots, so there is nothing to free anyway.

    ## Example
    ```python
    def construct(self, x):
        d = {"a": x, "b": x * 2}
        del d["a"]
        return d["b"]
    ```

    ## Use instead
    Build the value you need instead of removing parts of it (`d.pop("a")` on a local dict,
    or a new dict without the key), and simply stop using local names:
    ```python
    def construct(self, x):
        d = {"b": x * 2}
        return d["b"]
    ```

    ## Fix safety
    No automatic fix: what replaces the deletion depends on what the code meant.

    ## References
    - RULES.md, section 1: `del x`, `del d[k]`, `del self.a`.
    """

    nodes = (ast.Delete,)

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        yield ctx.diagnostic(
            self, node, "`del` is not supported in graph mode (Unsupported statement 'Delete')"
        )
