"""MS109: set displays and set comprehensions in compiled code."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.diagnostics import Diagnostic, Fix
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.helpers import GraphRule


@rule(code="MS109", name="set-literal", severity="error", family="graphmode", fix="sometimes")
class SetLiteral(GraphRule):
    """## What it does
    Flags set displays (`{1, 2, 3}`) and set comprehensions inside compiled code.

    ## Why is this bad?
    The graph compiler has no `Set` expression: it stops with
    `RuntimeError: Unsupported expression 'Set'` (or `'SetComp'`) at every syntax level.
    Calling `set(...)` on constants is evaluated while compiling and is accepted.

    ## Example
    ```python
    def construct(self, x):
        s = {1, 2, 3}
        if 2 in s:
            return x + 1
        return x
    ```

    ## Use instead
    ```python
    def construct(self, x):
        s = set([1, 2, 3])
        if 2 in s:
            return x + 1
        return x
    ```
    For membership tests a tuple works as well: `if 2 in (1, 2, 3):`.

    ## Fix safety
    For a display of constants the fix rewrites `{a, b}` as `set([a, b])`, which builds the
    same set; it is offered only when every element is a literal constant.

    ## References
    - RULES.md, section 1: set literal / set comprehension.
    """

    nodes = (ast.Set, ast.SetComp)

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        fix = None
        if isinstance(node, ast.Set) and all(isinstance(e, ast.Constant) for e in node.elts):
            items = ", ".join(ctx.segment(e) for e in node.elts)
            fix = Fix("Rewrite as `set([...])`", (ctx.edit(node, f"set([{items}])"),), safe=True)
        what = "Set" if isinstance(node, ast.Set) else "SetComp"
        yield ctx.diagnostic(
            self,
            node,
            f"set displays are not supported in graph mode (Unsupported expression '{what}')",
            fix=fix,
        )
