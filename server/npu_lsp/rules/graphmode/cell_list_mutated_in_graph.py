"""MS165: growing an `nn.CellList` / `nn.SequentialCell` inside compiled code."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.flow import analyzer
from npu_lsp.rules.graphmode.helpers import GraphRule

#: the container methods measured to fail on a CellList / SequentialCell in compiled code
_GROWERS = frozenset({"append", "extend", "insert"})
#: cell containers the graph holds as a tuple of cells
_CELL_CONTAINERS = frozenset({"CellList", "SequentialCell"})


@rule(code="MS165", name="cell-list-mutated-in-graph", severity="error", family="graphmode")
class CellListMutatedInGraph(GraphRule):
    """## What it does
    Flags `self.layers.append(...)`, `.extend(...)` and `.insert(...)` in `construct` (or a
    method it calls) when `self.layers` is an `nn.CellList` or `nn.SequentialCell` built in
    `__init__`.

    ## Why is this bad?
    Compiled code sees a CellList or SequentialCell as a fixed tuple of its cells, so growing
    it there fails at every syntax level (`AttributeError: 'Tuple' object has no attribute
    'append'`; for a SequentialCell, `NameError: name 'cell' is not defined`). PyTorch lets a
    `forward` grow an `nn.ModuleList` lazily; MindSpore does not. Appending in `__init__` (or a
    builder method it calls) is fine, and so is collecting the cells in a local list.

    ## Example
    ```python
    def construct(self, x):
        if len(self.blocks) < 3:
            self.blocks.append(self.extra)
        for blk in self.blocks:
            x = blk(x)
        return x
    ```

    ## Use instead
    Build every cell in `__init__` and choose with a constant flag:
    ```python
    def __init__(self, use_extra=True):
        super().__init__()
        self.blocks = nn.CellList([nn.Dense(4, 4)])
        if use_extra:
            self.blocks.append(nn.Dense(4, 4))
    ```

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 1 (rejected at every level).
    - Measured on MindSpore 2.10 with the written set `structure`
      (`celllist_append_in_construct_grow`, `celllist_insert_in_construct`) and its probes:
      `append` / `extend` / `insert` on a CellList in `construct` or in a helper it calls, and
      `append` on a SequentialCell, are rejected at LAX and STRICT; appending in a builder
      called by `__init__` and appending the cells to a local list compile.
    """

    nodes = (ast.Call,)
    calls = _GROWERS

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        assert type(node) is ast.Call
        f = node.func
        if not (type(f) is ast.Attribute and f.attr in _GROWERS):
            return
        recv = f.value
        if not (type(recv) is ast.Attribute and type(recv.value) is ast.Name and recv.value.id == "self"):
            return
        kind = _cell_container(recv.attr, ctx)
        if kind is None:
            return
        yield ctx.diagnostic(
            self,
            node,
            f"`self.{recv.attr}.{f.attr}(...)` in compiled code fails: the graph holds the {kind} as a fixed tuple of cells; build every cell in `__init__`",
        )


def _cell_container(attr: str, ctx: Context) -> str | None:
    """`CellList` / `SequentialCell` when `__init__` of the owning class builds `self.attr` so."""
    cls = analyzer(ctx).owner_class(ctx.function)
    if cls is None:
        return None
    info = ctx.scopes.info.classes.get(cls.name)
    qual = info.attr_types.get(attr) if info is not None else None
    kind = qual.rpartition(".")[2] if qual is not None else None
    return kind if kind in _CELL_CONTAINERS else None
