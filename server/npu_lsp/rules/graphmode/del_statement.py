"""MS102: `del` in compiled code."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.diagnostics import Diagnostic, Edit, Fix, Span
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.helpers import GraphRule


@rule(code="MS102", name="del-statement", severity="error", family="graphmode", fix="sometimes")
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
    For `del` of plain local names on a line of its own, the fix removes the statement. It
    is marked unsafe: when the same function also runs as plain Python, the name then stays
    bound (and its value alive) until the function returns. Deleting items or attributes
    has no mechanical replacement.

    ## References
    - RULES.md, section 1: `del x`, `del d[k]`, `del self.a`.
    """

    nodes = (ast.Delete,)

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        assert isinstance(node, ast.Delete)
        fix = None
        if all(isinstance(t, ast.Name) for t in node.targets):
            line = ctx.lines[node.lineno - 1] if node.lineno - 1 < len(ctx.lines) else ""
            span = ctx.span(node)  # code-point columns: `line` is text, not bytes
            rest = line[span.end_column - 1 :].strip()
            alone = not line[: span.column - 1].strip() and (not rest or rest.startswith("#"))
            if node.end_lineno == node.lineno and alone:
                span = Span(node.lineno, 1, node.lineno + 1, 1)
                fix = Fix("Remove the `del` statement", (Edit(span, ""),), safe=False)
        yield ctx.diagnostic(
            self,
            node,
            "`del` is not supported in graph mode (Unsupported statement 'Delete')",
            fix=fix,
        )
