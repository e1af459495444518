"""MS156: `lst.pop()` used as a value inside a larger expression in compiled code."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.flow import analyzer
from npu_lsp.rules.graphmode.helpers import GraphRule
from npu_lsp.scope import COPY_CALLS

# Where the graph parser takes `lst.pop()` apart into the list and the item.
_OWN_STATEMENT = (ast.Assign, ast.AnnAssign, ast.Expr, ast.Return)


@rule(code="MS156", name="list-pop-in-expression", severity="error", family="graphmode")
class ListPopInExpression(GraphRule):
    """## What it does
    Flags `lst.pop()` on a list in compiled code when its result is used inside a larger
    expression (a call argument, a tuple, arithmetic), such as
    `ops.concat((x, skips.pop()), axis=1)` in a U-Net decoder; also on a copy of a list
    (`w = copy.copy(self.weights)`, `self.weights.copy()`, `self.weights[:]`), as in
    `x = layer(x) * w.pop(0)` inside a loop over a CellList.

    ## Why is this bad?
    In a graph, `pop` of a list gives the pair (remaining list, item); the parser unpacks it
    only for a statement of its own (`y = lst.pop()`, `lst.pop()`). Used inside an expression,
    the pair itself is the value: `TypeError: Failed calling Concat with
    "tensors=Tuple[Tensor[Float32],Tuple[List[...],Tensor[Float32]]]"` for a call argument, or
    `The Map operator don't support Closure with free variable yet` for `x + lst.pop()`, at
    every syntax level. PyNative runs the code.

    ## Example
    ```python
    def construct(self, x):
        skips = [x * 2, x * 3]
        return ops.concat((x, skips.pop()), axis=1)
    ```

    ## Use instead
    ```python
    def construct(self, x):
        skips = [x * 2, x * 3]
        skip = skips.pop()
        return ops.concat((x, skip), axis=1)
    ```

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 1 (statements the graph front end rewrites); measured on
      MindSpore 2.10 with probes: `y = lst.pop()` compiles, `ops.concat((x, lst.pop()))`,
      `x + lst.pop()` and the same inside an unrolled `for` are rejected at both levels.
    """

    nodes = (ast.Call,)
    calls = frozenset({"pop"})

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        assert isinstance(node, ast.Call)
        f = node.func
        if not (isinstance(f, ast.Attribute) and f.attr == "pop" and isinstance(f.value, ast.Name)):
            return
        parent = ctx.parent(node)
        if isinstance(parent, _OWN_STATEMENT) or parent is None:
            return
        if analyzer(ctx).type_class(f.value) != "list" and not _copied_list(f.value, ctx):
            return
        yield ctx.diagnostic(
            self,
            node,
            f"`{ctx.segment(node)}` inside an expression: in a graph, `pop` gives the pair "
            f"(remaining list, item), unpacked only when the pop is a statement of its own; "
            f"bind the item first (`item = {ctx.segment(node)}`)",
        )


def _copied_list(name: ast.Name, ctx: Context) -> bool:
    """`name` bound once to a copy of a list: `copy.copy(lst)`, `copy.deepcopy(lst)`,
    `lst.copy()` or `lst[:]` (measured: `w = copy.copy(self.weights)` then
    `x * w.pop(0)` in a loop fails as `list(self.weights)` does, "The Map operator don't
    support Closure with free variable yet")."""
    a = analyzer(ctx)
    bound = a.single_assignment(name.id, ctx.function)
    source: ast.expr | None = None
    if isinstance(bound, ast.Call):
        if len(bound.args) == 1 and not bound.keywords and (ctx.qualname(bound.func) or "") in COPY_CALLS:
            source = bound.args[0]
        elif isinstance(bound.func, ast.Attribute) and bound.func.attr == "copy" and not bound.args:
            source = bound.func.value
    elif isinstance(bound, ast.Subscript) and isinstance(bound.slice, ast.Slice):
        sl = bound.slice
        if sl.lower is None and sl.upper is None and sl.step is None:
            source = bound.value
    if source is None:
        return False
    if isinstance(source, (ast.List, ast.ListComp)):
        return True
    if isinstance(source, ast.Attribute) and isinstance(source.value, ast.Name) and source.value.id == "self":
        return source.attr in a.self_info(a.owner_class(ctx.function)).lists
    return a.type_class(source) == "list"
