"""MS202: (LAX) a list grown in a `for` over host data of a run-time tensor, read after the loop."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.fallback_list_max import (
    fallback_iterable,
    maybe_constant,
)
from npu_lsp.rules.graphmode.flow import Kind, analyzer
from npu_lsp.rules.graphmode.helpers import GraphRule
from npu_lsp.rules.graphmode.list_grown_in_tensor_loop import _grown_names

_TENSOR = frozenset({"mindspore.Tensor", "mindspore.common.tensor.Tensor"})


def _shown(n: ast.Name, ctx: Context) -> bool:
    """Is this read of a list the list returned as it is (`return lst`, `return x, lst`) or
    printed (`print(lst)`)?"""
    parent = ctx.parent(n)
    while parent is not None and type(parent) in (ast.Tuple, ast.List):
        parent = ctx.parent(parent)  # `return x, lst`, `return [lst]`
        if type(parent) not in (ast.Tuple, ast.List, ast.Return):
            return False
    if type(parent) is ast.Call:
        return ctx.qualname(parent.func) == "builtins.print" and n in parent.args
    return type(parent) is ast.Return


def _to_tensor(n: ast.Name, ctx: Context) -> bool:
    """Is this read `ms.Tensor(lst, ...)`? Such a tensor compiles (written/heldout15b probes
    `ls_hl_items1_append_tensor`, `ls_hl_zip2_append_float_tensor_mean`,
    `ls_sq_seqcell_rows_append_n2`); what fails after it is a shape that differs from the
    list's (fallbackflows `ff_looplist__list_tensor`), not told from here."""
    parent = ctx.parent(n)
    return type(parent) is ast.Call and bool(parent.args) and parent.args[0] is n and ctx.qualname(parent.func) in _TENSOR


def first_read_after(loop: ast.For, name: str, ctx: Context) -> ast.Name | None:
    """The first read of `name` after `loop` that needs the list's items (anything but
    returning it as it is or printing it); None when there is none or `name` is bound again
    after the loop."""
    end = loop.end_lineno or loop.lineno
    first: ast.Name | None = None
    for n in ast.walk(ctx.function):  # type: ignore[arg-type]
        if type(n) is not ast.Name or n.id != name or n.lineno <= end:
            continue
        if type(n.ctx) is not ast.Load:
            return None  # bound again: what is read may be another list
        if not _shown(n, ctx) and not _to_tensor(n, ctx) and (first is None or (n.lineno, n.col_offset) < (first.lineno, first.col_offset)):
            first = n
    return first


def _appends_tensor_container(loop: ast.For, name: str, ctx: Context) -> bool:
    """Does `loop` append to `name` a list, tuple or comprehension holding tensors
    (`recs.append([x[r] for r in row])`)? Measured (written/heldout14 probe
    `lx_tr_row_comp_tensor_items`): such a list compiles when its `len` is read, where the
    same loop appending ints fails (`lx_tr_row_comp_len`); not flagged."""
    a = analyzer(ctx)
    for st in loop.body:
        for s in ast.walk(st):
            if not (
                type(s) is ast.Call
                and type(s.func) is ast.Attribute
                and type(s.func.value) is ast.Name
                and s.func.value.id == name
                and s.args
            ):
                continue
            item = s.args[-1]
            if type(item) is ast.ListComp:
                elts = [item.elt]
            elif type(item) in (ast.List, ast.Tuple):
                elts = item.elts  # type: ignore[attr-defined]
            else:
                continue
            if any(a.kind(e) == Kind.TENSOR for e in elts):
                return True
    return False


@rule(code="MS202", name="fallback-loop-list-read", severity="error", family="graphmode")
class FallbackLoopListRead(GraphRule):
    """## What it does
    Under the default LAX syntax level, flags the read of a list that compiled code starts
    empty (`out = []`) and grows (`append`, `extend`, `insert`, `+= [...]`) in a `for` over a
    tensor's values turned into Python data (`for v in t.tolist()`, `for v in t.asnumpy()`,
    `for i, v in enumerate(np.nonzero(a)[0].tolist())`, `for i in range(len(t.tolist()))`,
    or a name bound to one), when the list is read after the loop other than by returning it
    as it is (also inside a tuple or list display) or printing it: `len(out)`, `out[0]`, a
    `for` or comprehension over it, `sum(out)`, `max(out)`, `ops.stack(out)`, growing it
    again. `ms.Tensor(out)` is left alone (it compiles; what fails after it is a shape
    other than the list's, measured `ls_hl_*_tensor*`, `ff_looplist__list_tensor`). A loop
    appending lists of tensors (`recs.append([x[r] for r in row])`) is left alone: its
    `len` compiles (measured, written/heldout14 probe `lx_tr_row_comp_tensor_items`).

    ## Why is this bad?
    Under LAX MindSpore 2.10 runs such a loop by JIT Fallback over a sequence whose items the
    graph does not know, so the list the loop builds is not a list the graph can use: reading
    it fails whatever the number of items (2 already), with messages that depend on the
    read: `'int' object has no attribute '__len__'`, `For primitive:'list_getitem', cannot
    get item by index from an empty sequence`, `'int' object is not iterable`, `max() arg is
    an empty sequence`, `For 'enumerate', the 'first input' should be tuple or list or
    tensor, but got <class 'int'>`, a broadcast error for `Tensor(out)`. Returning the list
    as it is, or printing it, compiles; so does a loop that accumulates a number or a tensor
    (`s = s + v`), and a list grown in a `for` over a literal `range`. MS193 flags such
    loops over 3 or more items whatever follows. Data of a tensor MindSpore knows while
    compiling (`self.c.tolist()` of a tensor attribute, `ms.Tensor` of constants) is folded
    and compiles: not flagged. STRICT refuses `tolist` / `asnumpy` themselves (MS130).

    ## Example
    ```python
    class Pick(nn.Cell):
        def construct(self, x, idx):
            rows = []
            for i in idx.tolist():
                rows.append(x[i])
            return rows[0]
    ```

    ## Use instead
    Index with the tensor itself (`x[idx]`, `ops.gather(x, idx, 0)`), or loop over a
    `range` the graph knows.

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 2 (JIT Fallback makes LAX run `tolist` / `asnumpy` as Python).
    - Measured on MindSpore 2.10 CPU with the written set `fallbackflows` (generated by
      tests/npu_lsp/difftest/gen_fallback_flows.py): `ff_looplist__*` (a list grown over
      `n.tolist()` of 2 items, then 13 reads: rejected; returned or printed: compile),
      `ff2_loop_append_*` (over `asnumpy()`, `np.nonzero(...)[0].tolist()`,
      `range(len(n.tolist()))`, tensor items appended: rejected when read; over a literal
      `range`, or accumulating a number: compile) and `ff3_loop_append_*` (1 and 3 items).
    """

    nodes = (ast.For,)
    words = ("tolist", "asnumpy")

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        assert isinstance(node, ast.For)
        if ctx.function is None or not ctx.scope or ctx.scope.level != "lax":
            return
        grown = set(_grown_names(node.body))
        if not grown or not fallback_iterable(node.iter, ctx) or maybe_constant(node.iter, ctx):
            return
        a = analyzer(ctx)
        for name in sorted(grown):
            start = a.single_assignment(name, ctx.function)
            if type(start) is not ast.List or start.elts or start.lineno >= node.lineno:
                continue
            if _appends_tensor_container(node, name, ctx):
                continue
            read = first_read_after(node, name, ctx)
            if read is None:
                continue
            yield ctx.diagnostic(
                self,
                read,
                f"`{name}` is grown in the `for` over `{ctx.segment(node.iter)}` (line {node.lineno}), a tensor's values JIT Fallback runs as Python under LAX: the graph cannot read the list it builds (only return it as it is or print it); stay in tensors (`x[idx]`, `ops.gather`) or loop over a `range` the graph knows",
            )

