"""MS232: (LAX) a sub-cell picked from a `CellList` / `CellDict` by a JIT Fallback value, then called."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.flow import analyzer
from npu_lsp.rules.graphmode.helpers import GraphRule
from npu_lsp.rules.graphmode.opaque_value_query import opaque_at_lax

#: the cell containers measured (`self.blocks = nn.CellList([...])`, `nn.CellDict({...})`)
_CONTAINERS = frozenset(
    {
        "mindspore.nn.CellList",
        "mindspore.nn.CellDict",
        "mindspore.nn.layer.container.CellList",
        "mindspore.nn.layer.container.CellDict",
    }
)


@rule(code="MS232", name="fallback-cell-pick", severity="error", family="graphmode")
class FallbackCellPick(GraphRule):
    """## What it does
    Under the default LAX syntax level, flags a call of a sub-cell picked from an
    `nn.CellList` or `nn.CellDict` on `self` by an index or key that is a JIT Fallback
    value: a number read from a tensor JIT Fallback made (`self.blocks[int(x.asnumpy().sum()
    > 0)](x)`), or from a tensor that went through a fallback value first (`x = x +
    len(str(x.mean())) * 0`, also in a sub-cell that returns it), or a name of a constant
    list picked by such a number (`self.heads[self.names[int(x.sum() > 0)]](x)`).

    ## Why is this bad?
    MindSpore 2.10 hands such a pick to Python (the index is a Python object), gets the
    `Cell` back as a Python object and cannot run it: the call fails at run time with
    `RuntimeError: Unsupported element type[unknown] to set element data type for
    KernelTensor`. Without the fallback value the same pick behaves as in a graph: a
    `CellList` indexed by `int(x.sum() > 0)` or `(x.sum() > 0).item()` compiles, and a
    `CellDict` key read from a run-time tensor fails while compiling (MS121). STRICT has
    no JIT Fallback and rejects the fallback value itself.

    ## Example
    ```python
    def construct(self, x):
        x = x + len(str(x.mean())) * 0
        return self.blocks[int(x.sum() > 0)](x)
    ```

    ## Use instead
    Keep the index in the graph (compute it from the tensor, not from a JIT Fallback
    value), or run every branch and select with a mask:
    ```python
    def construct(self, x):
        return self.blocks[int(x.sum() > 0)](x)
    ```

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 1 (JIT Fallback values in compiled code).
    - Measured on MindSpore 2.10 (written/lax probes `fix32e_cl_*`, `fix32e_cd_*`: a
      `CellList` index or `CellDict` key from `x.asnumpy()` or from `x` after `len(str(...))`
      fails at LAX with "Unsupported element type[unknown] ... KernelTensor"; `int(x.sum() >
      0)`, a local bound to it and `.item()` on a graph `x` compile for a `CellList`), and
      difftest seeds 12000023, 12000047.
    """

    nodes = (ast.Call,)
    callee = (ast.Subscript,)
    words = ("CellList", "CellDict")

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        assert isinstance(node, ast.Call)
        pick = node.func
        assert isinstance(pick, ast.Subscript)
        holder = pick.value
        if type(holder) is not ast.Attribute or type(holder.value) is not ast.Name or holder.value.id != "self":
            return
        if type(pick.slice) in (ast.Constant, ast.Slice) or not ctx.scope or ctx.scope.level != "lax":
            return
        if not _cell_container(holder, ctx) or not opaque_at_lax(pick.slice, ctx.function, ctx):
            return
        yield ctx.diagnostic(
            self,
            pick.slice,
            f"`{ctx.segment(pick.slice)}` is a JIT Fallback value: under LAX Python picks the sub-cell from `self.{holder.attr}` and MindSpore cannot call the Python object it gets back (\"Unsupported element type[unknown] to set element data type for KernelTensor\"); compute the index from a graph tensor, not from a JIT Fallback value",
        )


def _cell_container(holder: ast.Attribute, ctx: Context) -> bool:
    """Is `self.<attr>` bound in `__init__` only to `nn.CellList(...)` / `nn.CellDict(...)`?"""
    a = analyzer(ctx)
    cls = a.owner_class(ctx.function)
    if cls is None:
        return False
    values = a._self_values(cls).get(holder.attr, [])
    return bool(values) and all(
        isinstance(v, ast.Call) and ctx.qualname(v.func) in _CONTAINERS for v in values
    )
