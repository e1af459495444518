"""MS152: a list grown in a `while` loop on a tensor condition, given to stack/concat."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.astutil import statements
from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.flow import analyzer
from npu_lsp.rules.graphmode.helpers import GraphRule

#: mindspore functions that take a sequence of tensors whose length they need while compiling
_SEQUENCE_OPS = frozenset({"stack", "concat", "cat", "hstack", "vstack", "column_stack", "dstack"})
_GROW = frozenset({"append", "extend", "insert"})


@rule(code="MS152", name="tensor-length-list", severity="error", family="graphmode")
class TensorLengthList(GraphRule):
    """## What it does
    Flags `ops.stack(spans)`, `ops.concat(spans)` (and `cat`, `hstack`, `vstack`...) in
    compiled code when `spans` was grown (`append`, `extend`, `insert`) inside a `while`
    loop whose condition is a tensor, so its length is only known at run time.

    ## Why is this bad?
    A loop on a tensor condition is not unrolled: a list it grows becomes a list of run-time
    length. `len()` of it still works, but the stacking operators need the element count
    while compiling and fail: `ValueError: For 'Stack', the 'len of input_x' must be int and
    must >= 1, but got '0'` when the list started empty, `TypeError: 'TensorType' object is
    not subscriptable` otherwise (measured with MindSpore 2.10 at LAX and STRICT; the same
    loop on a constant bound compiles).

    ## Example
    ```python
    def construct(self, hidden, num_spans):
        spans, i = [], 0
        while i < num_spans:
            spans.append(hidden[:, i])
            i = i + 1
        return ops.stack(spans, axis=1)
    ```

    ## Use instead
    Bound the loop by a Python constant (`for i in range(self.max_spans)`) and mask the
    extra entries, or gather the rows with one indexing op (`hidden[:, :num]`).

    ## Fix safety
    No automatic fix.

    ## References
    - MindSpore 2.10, measured at LAX and STRICT; RULES.md has no row for it (found by the
      independently written set `nlp`).
    """

    nodes = (ast.Call,)
    calls = _SEQUENCE_OPS

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        assert isinstance(node, ast.Call)
        q = ctx.qualname(node.func) or ""
        if not q.startswith("mindspore.") or not node.args or not isinstance(node.args[0], ast.Name):
            return
        name = node.args[0].id
        func = ctx.function
        if func is None:
            return
        loops = _while_loops(func, ctx)
        if not loops:
            return
        a = analyzer(ctx)
        for loop in loops:
            if (
                (loop.end_lineno or loop.lineno) < node.lineno
                and _grows(loop.body, name)
                and a.kind(loop.test).dynamic
            ):
                yield ctx.diagnostic(
                    self,
                    node,
                    f"`{name}` grows in a `while` loop on a tensor condition (line {loop.lineno}), so its length is only known at run time; `{ctx.segment(node.func)}` needs it while compiling",
                )
                return


def _while_loops(func: ast.AST, ctx: Context) -> list[ast.While]:
    """The `while` loops of `func`, found once per function (most have none)."""
    key = ("MS152.whiles", id(func))
    hit: list[ast.While] | None = ctx.cache.get(key)
    if hit is None:
        body: list[ast.stmt] = getattr(func, "body", [])
        hit = ctx.cache[key] = [n for n in statements(body) if type(n) is ast.While]
    return hit


def _grows(body: list[ast.stmt], name: str) -> bool:
    for st in body:
        for n in ast.walk(st):
            if (
                isinstance(n, ast.Call)
                and isinstance(n.func, ast.Attribute)
                and n.func.attr in _GROW
                and isinstance(n.func.value, ast.Name)
                and n.func.value.id == name
            ):
                return True
            if (
                isinstance(n, ast.AugAssign)
                and isinstance(n.target, ast.Name)
                and n.target.id == name
                and isinstance(n.op, ast.Add)
            ):
                return True
    return False
