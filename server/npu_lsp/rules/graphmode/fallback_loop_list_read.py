"""MS202: (LAX) a list grown in a `for` over host data of a run-time tensor, read after the loop."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.fallback_list_max import fallback_iterable, maybe_constant
from npu_lsp.rules.graphmode.flow import Kind, analyzer
from npu_lsp.rules.graphmode.helpers import GraphRule
from npu_lsp.rules.graphmode.interpreted import interpreted
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


def _dict_stores(loop: ast.For) -> set[str]:
    """Names a loop body stores an item into under a key that reads the loop's own
    variables (`d[c] = v`, `d[i] += v`, `d['k' + str(i)] = v`). A constant key (`m['n'] =
    m['n'] + v`) compiles (written/heldout15b probe `ls_hl_dict_const_key_accum`)."""
    own = {n.id for n in ast.walk(loop.target) if type(n) is ast.Name}
    out: set[str] = set()
    for st in loop.body:
        for s in ast.walk(st):
            t = type(s)
            targets = s.targets if t is ast.Assign else [s.target] if t is ast.AugAssign else ()  # type: ignore[attr-defined]
            for tg in targets:
                if (
                    type(tg) is ast.Subscript
                    and type(tg.value) is ast.Name
                    and any(type(k) is ast.Name and k.id in own for k in ast.walk(tg.slice))
                ):
                    out.add(tg.value.id)
    return out


def _dict_read_after(loop: ast.For, name: str, ctx: Context) -> ast.Name | None:
    """The first read of `name` after `loop` that returns it (as it is or in a tuple), prints
    it or indexes it; None when there is none or `name` is bound again after the loop."""
    end = loop.end_lineno or loop.lineno
    first: ast.Name | None = None
    for n in ast.walk(ctx.function):  # type: ignore[arg-type]
        if type(n) is not ast.Name or n.id != name or n.lineno <= end:
            continue
        if type(n.ctx) is not ast.Load:
            return None
        parent = ctx.parent(n)
        indexed = type(parent) is ast.Subscript and parent.value is n and type(parent.ctx) is ast.Load
        if (indexed or _shown(n, ctx)) and (first is None or (n.lineno, n.col_offset) < (first.lineno, first.col_offset)):
            first = n
    return first


@rule(code="MS204", name="fallback-loop-dict-read", severity="error", family="graphmode")
class FallbackLoopDictRead(GraphRule):
    """## What it does
    Under the default LAX syntax level, flags the read of a local dict (`d = {}`, or a
    display with items) that compiled code fills (`d[k] = v`, `d[k] += v`) in a `for` over a
    tensor's values turned into Python data (`for c in labels.tolist()`, `for i, v in
    enumerate(t.asnumpy())`, a name bound to one), when the dict is then returned (as it is
    or in a tuple), printed or indexed (`d[k]`), when the key stored reads the loop's own
    variables (`d[c] = v`); a constant key (`m['n'] = m['n'] + v`) compiles (written/heldout15b
    probe `ls_hl_dict_const_key_accum`).

    ## Why is this bad?
    Under LAX MindSpore 2.10 runs such a loop by JIT Fallback, and the dict it fills is not
    one the graph can hand on: returning or printing it fails with `'tuple' object does not
    support item assignment`, and indexing it with `The key 1 does not exist in the
    dict:{}` (the graph's dict is still empty), whatever the number of items (1 already) and
    whatever the keys (numbers or strings). A dict never read after the loop, or only
    measured (`len(d)`), compiles, and so does one filled in a `for` over a literal `range`
    or over `self.c.tolist()` of a tensor attribute (folded while compiling). STRICT
    refuses `tolist` / `asnumpy` themselves (MS130).

    ## Example
    ```python
    class Count(nn.Cell):
        def construct(self, x, labels):
            counts = {}
            for c in labels.tolist():
                counts[c] = counts.get(c, 0) + 1
            return x, counts
    ```

    ## Use instead
    Count with tensor operations (`ops.bincount`, `ops.one_hot(labels, n).sum(0)`) and return
    the tensor; build the dict outside the network.

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 2 (JIT Fallback makes LAX run `tolist` / `asnumpy` as Python).
    - Measured on MindSpore 2.10 CPU with the written set `fallbackflows` (generated by
      tests/npu_lsp/difftest/gen_fallback_flows.py): `ff_*__dict_fill`, `ff2_dict_fill_print`,
      `ff2_dict_fill_tensor_loop`, `ff3_dict_fill_len1`, `ff3_dict_fill_len3`,
      `ff3_dict_fill_str_keys`, `ff3_dict_update_loop` (rejected); `ff2_dict_fill_len`,
      `ff2_dict_fill_key_value`, `ff2_dict_fill_const_loop`, `ff2_dict_setitem_no_loop` (compile).
    """

    nodes = (ast.For,)
    words = ("tolist", "asnumpy")

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        assert isinstance(node, ast.For)
        if ctx.function is None or not ctx.scope or ctx.scope.level != "lax":
            return
        stored = _dict_stores(node)
        if not stored or not fallback_iterable(node.iter, ctx) or maybe_constant(node.iter, ctx):
            return
        a = analyzer(ctx)
        for name in sorted(stored):
            start = a.single_assignment(name, ctx.function)
            if type(start) is not ast.Dict or start.lineno >= node.lineno:
                continue
            read = _dict_read_after(node, name, ctx)
            if read is None:
                continue
            yield ctx.diagnostic(
                self,
                read,
                f"`{name}` is filled in the `for` over `{ctx.segment(node.iter)}` (line {node.lineno}), a tensor's values JIT Fallback runs as Python under LAX: the graph cannot return, print or index the dict it fills ('tuple' object does not support item assignment); count with tensor operations, or build the dict outside the network",
            )


def _grown_in(body: list[ast.stmt]) -> ast.AST | None:
    """The first list growth (`lst.append(...)`, `extend`, `insert`, `lst += [...]`) in a loop
    body, or a comprehension over a name rebound to it (`order = [j for j in order[1:] ...]`)."""
    for st in body:
        for s in ast.walk(st):
            t = type(s)
            if t is ast.Call and type(s.func) is ast.Attribute and s.func.attr in ("append", "extend", "insert"):  # type: ignore[attr-defined]
                if type(s.func.value) is ast.Name:  # type: ignore[attr-defined]
                    return s
            elif t is ast.AugAssign and type(s.op) is ast.Add and type(s.value) in (ast.List, ast.ListComp):  # type: ignore[attr-defined]
                return s
            elif t is ast.Assign and type(s.value) is ast.ListComp:  # type: ignore[attr-defined]
                names = {n.id for n in ast.walk(s.value.generators[0].iter) if type(n) is ast.Name}  # type: ignore[attr-defined]
                if any(type(tg) is ast.Name and tg.id in names for tg in s.targets):  # type: ignore[attr-defined]
                    return s
    return None


def _changes_tested(loop: ast.While, ctx: Context) -> bool:
    """Does the loop body rebind or change in place (`pop`, `remove`, `del`) a name its test
    reads (`while order:` ... `order = order[1:]`)? A `while i < len(a)` over host data `a`
    the loop leaves alone compiles (written/heldout14b probe `hv_while_numpy_len_cond_append`)."""
    tested = {n.id for n in ast.walk(loop.test) if type(n) is ast.Name and interpreted(n, ctx, ctx.function)}  # type: ignore[arg-type]
    if not tested:
        return False
    for st in loop.body:
        for s in ast.walk(st):
            t = type(s)
            if t is ast.Name and type(s.ctx) in (ast.Store, ast.Del) and s.id in tested:  # type: ignore[attr-defined]
                return True
            if (
                t is ast.Call
                and type(s.func) is ast.Attribute  # type: ignore[attr-defined]
                and s.func.attr in ("pop", "remove", "clear")  # type: ignore[attr-defined]
                and type(s.func.value) is ast.Name  # type: ignore[attr-defined]
                and s.func.value.id in tested  # type: ignore[attr-defined]
            ):
                return True
    return False


@rule(code="MS205", name="fallback-while-list", severity="error", family="graphmode")
class FallbackWhileList(GraphRule):
    """## What it does
    Under the default LAX syntax level, flags a `while` loop in compiled code whose test
    reads host data of a run-time tensor (`while order:` / `while len(order) > 0:` with
    `order = scores.asnumpy().argsort().tolist()`, `while order.size > 0:` with a numpy
    array from `asnumpy()`, also in a helper every call of which passes such data) and whose
    body grows a list (`keep.append(i)`, `extend`, `insert`, `+= [...]`) or rebinds the tested
    list to a comprehension over it (`order = [j for j in order[1:] if ...]`), when the body
    also changes the tested host data (rebinds it, `pop`, `remove`): the greedy NMS loop
    written in numpy. `while i < len(a)` with a graph counter `i` and `a` left alone
    compiles (written/heldout14b probe `hv_while_numpy_len_cond_append`).

    ## Why is this bad?
    Under LAX MindSpore 2.10 cannot unroll a `while` loop whose test is known only at run
    time, and the host list the loop works on is a sequence of unknown length: compiling
    stops with `'float' object has no attribute 'append'` (or `'int' object ...`), or
    `Getitem can not get element from an empty dynamic length sequence`, even when the list
    is only returned. The same loop counting a number (`k = k + 1`, `t = t + 5.0`) compiles,
    and so does a `while` over a list the graph builds itself (`stack = [(0, 0)]`, `while
    stack: a, b = stack.pop()`). STRICT refuses `tolist` / `asnumpy` themselves (MS130).

    ## Example
    ```python
    class NMS(nn.Cell):
        def construct(self, boxes, scores):
            order = scores.asnumpy().argsort()[::-1]
            keep = []
            while order.size > 0:
                keep.append(int(order[0]))
                order = order[1:]
            return boxes[ms.Tensor(keep)]
    ```

    ## Use instead
    Use the graph's NMS (`ops.NMSWithMask`) or run the numpy NMS outside the network, on
    the tensors it returns.

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 2 (JIT Fallback makes LAX run `tolist` / `asnumpy` as Python).
    - Measured on MindSpore 2.10 CPU with the written set `fallbackflows` (generated by
      tests/npu_lsp/difftest/gen_fallback_flows.py): `ff5_while_*` (a list grown, or the
      tested list rebound to a comprehension, in a `while` over host data: rejected, also
      when only returned; a counter, a float accumulator, a `while` over a graph list and a
      `while` on graph numbers: compile).
    """

    nodes = (ast.While,)
    words = ("tolist", "asnumpy")

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        assert isinstance(node, ast.While)
        if ctx.function is None or not ctx.scope or ctx.scope.level != "lax":
            return
        grown = _grown_in(node.body)
        if grown is None or not _changes_tested(node, ctx) or not interpreted(node.test, ctx, ctx.function) or maybe_constant(node.test, ctx):
            return
        yield ctx.diagnostic(
            self,
            grown,
            f"this `while` (line {node.lineno}) runs on `{ctx.segment(node.test)}`, host data JIT Fallback makes from a tensor at run time: MindSpore cannot unroll it, and growing a list in it fails under LAX ('float' object has no attribute 'append'), even when the list is only returned; use the graph's NMS (`ops.NMSWithMask`) or loop outside the network",
        )
