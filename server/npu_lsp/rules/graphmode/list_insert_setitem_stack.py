"""MS244: (LAX) a local list grown by `insert`, then given an item, then stacked."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.helpers import GraphRule, own_nodes

#: the stacking functions measured to fail on such a list (`ops.cat` of it compiles)
_STACKS = frozenset({"mindspore.ops.stack"})


@rule(code="MS244", name="list-insert-setitem-stack", severity="error", family="graphmode")
class ListInsertSetitemStack(GraphRule):
    """## What it does
    Under the default LAX syntax level, flags `ops.stack(feats)` of a local list that
    compiled code grew with `feats.insert(...)` and then stored an item into (`feats[i] =
    ...`), as BasicVSR's bidirectional propagation does (`out_l.insert(0, feat)` going
    backward, `out_l[i] = self.fusion(...)` going forward, `ops.stack(out_l, axis=1)`).

    ## Why is this bad?
    MindSpore 2.10 fails at LAX: `Tuple to TupleUnfold pattern should have TupleGetItem as
    user node, but got Default/Stack-op0` (or, with the items read back in the loop that
    stores them, `For tuple_setitem, when the queue is dynamic length, the element within
    dynamic length sequence abstract ...`). STRICT compiles it, and so does the same list
    grown by `append`, or inserted into without an item stored afterwards, or an item
    stored before the `insert`; the stored list given to `ops.cat`, summed in a loop or
    read by index compiles too.

    ## Example
    ```python
    def construct(self, x):
        feats = []
        for i in range(3):
            feats.insert(0, self.conv(x) * i)
        for i in range(3):
            feats[i] = feats[i] + 1
        return ops.stack(feats, axis=1)
    ```

    ## Use instead
    Grow the list with `append` and read it in the order you need (`feats[::-1]`), or build
    a new list instead of storing items:
    ```python
    def construct(self, x):
        feats = []
        for i in range(3):
            feats.append(self.conv(x) * i)
        feats = [f + 1 for f in feats[::-1]]
        return ops.stack(feats, axis=1)
    ```

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 1 (list mutation in compiled code: what LAX keeps as a dynamic-length
      sequence).
    - Measured on MindSpore 2.10 (written/heldout32a cases
      `r2_list_insert_front_then_setitem_min`, `video_basicvsr_bidirectional_insert_front`,
      probes `fix32d_ins_*`: `insert(0, ...)` or `insert(i, ...)`, in a loop or unrolled, on
      an empty or prefilled list, then a store by a constant or loop index, then `ops.stack`:
      rejected at LAX, accepted at STRICT; `append`, no store, a store before the insert,
      `ops.cat`, a loop sum or an item returned: accepted).
    """

    nodes = (ast.Call,)
    calls = frozenset({"stack"})

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        assert type(node) is ast.Call
        if not node.args or type(node.args[0]) is not ast.Name or not ctx.mentions("insert"):
            return  # most files: no insert at all (the word index)
        func = ctx.function
        if func is None or not ctx.scope or ctx.scope.level != "lax" or ctx.qualname(node.func) not in _STACKS:
            return
        seq = node.args[0]
        assert isinstance(seq, ast.Name)
        store = _stored_after_insert(seq.id, func, node.lineno)
        if store is None:
            return
        yield ctx.diagnostic(
            self,
            node,
            f"`{seq.id}` was grown by `insert` and then given an item (line {store}); under LAX MindSpore cannot stack such a list (Tuple to TupleUnfold pattern should have TupleGetItem as user node, but got Stack): grow it with `append`, or build a new list instead of storing items",
        )


def _stored_after_insert(name: str, func: ast.AST, before: int) -> int | None:
    """The line of a store `name[...] = ...` in `func` after its first `name.insert(...)`
    and before line `before`, when `name` is bound only to list displays (a local list)."""
    first_insert: int | None = None
    stores: list[int] = []
    for n in own_nodes(func):
        if isinstance(n, ast.Call):
            f = n.func
            if type(f) is ast.Attribute and f.attr == "insert" and type(f.value) is ast.Name and f.value.id == name:
                first_insert = n.lineno if first_insert is None else min(first_insert, n.lineno)
        elif isinstance(n, ast.Assign):
            for target in n.targets:
                if type(target) is ast.Name and target.id == name and type(n.value) is not ast.List:
                    return None  # bound to something other than a list display
                if type(target) is ast.Subscript and type(target.value) is ast.Name and target.value.id == name:
                    stores.append(n.lineno)
    if first_insert is None:
        return None
    after = [line for line in stores if first_insert < line < before]
    return min(after) if after else None
