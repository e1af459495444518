"""MS175: (LAX) lists grown from a tensor's values as Python data: a host list grown in place, or a
list filled in a `for` over one (or over `reversed(...)`), then stacked."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.flow import Kind, analyzer
from npu_lsp.rules.graphmode.helpers import GraphRule
from npu_lsp.rules.graphmode.host_values import HOST_METHODS as _HOST_METHODS
from npu_lsp.rules.graphmode.host_values import host_iterable as _host_iterable
from npu_lsp.rules.graphmode.host_values import numpy_of_host
from npu_lsp.rules.graphmode.list_grown_in_tensor_loop import grown_names, needs_elements
from npu_lsp.rules.graphmode.opaque_value_query import opaque_at_lax

#: list methods that change a list in place (measured: `pop` and `reverse` of a host list fail
#: under LAX as `append` does, `sort` and `remove` compile)
_IN_PLACE = frozenset({"append", "extend", "insert", "pop", "reverse"})
#: of them, those called without arguments
_NO_ARGS = frozenset({"pop", "reverse"})
#: the pair that, both applied to a list display holding a JIT Fallback value, leaves LAX a
#: Python object it cannot read (measured, written/lax probes `genfresh43_fs_*`: `vals = [x.shape[1]
#: * 1.0, 0.5, 2.0]` of a fallback `x`, or `[len(s) * 1.0, ...]` of an f-string, then `insert`
#: and `pop` in either order and any read (`vals[-1]`, `vals[0]`, `sum`, `len`, a `for`, a
#: return) fail: "'float' object is not subscriptable"; `insert` or `pop` alone, no read, a
#: constant list or a graph `x` compile; fresh v5 seed 10700110, v6 seed 12002226)
_SHUFFLE = frozenset({"insert", "pop"})


@rule(code="MS175", name="list-grown-from-host-data", severity="error", family="graphmode")
class ListGrownFromHostData(GraphRule):
    """## What it does
    Under the default LAX syntax level, flags a list made from a tensor's values by JIT
    Fallback (`vals = x.tolist()`, a row of it `x.tolist()[0]`, `list(x.asnumpy())`,
    `list(x.asnumpy().max(axis=0))`) changed in place (`vals.append(v)`,
    `extend`, `insert`, `pop`, `reverse`), and `ops.stack(lst)` / `ops.concat(lst)` /
    `ops.cat(lst)` (and the `Stack` / `Concat` primitives) in compiled code when `lst` is
    filled (`append`, `extend`, `insert`, `lst += [...]`) inside a `for` loop over a tensor's
    values turned into Python data: `for v in x.tolist()`, `for row in x.asnumpy()`,
    `for c in sorted(set(t.asnumpy().flatten().tolist()))`, `for i in range(len(vals))` with
    `vals = x.tolist()`, or a name bound to one of these; also a `for` directly over
    `reversed(range(...))` or `reversed` of graph values (`for h in reversed(hs)`). A list
    bound before a `for` over `reversed` of a local list of tensors (`hs = []` grown with
    tensors, or `[x[0], x[1] * 2]`) and grown in that loop is flagged where the loop grows
    it; so is growing a copy of such a list (`v.copy()`, `copy.copy(v)`) read by index,
    `len` or a `for` afterwards.
    Also a list display holding a value JIT Fallback computes (`vals = [x.shape[1] * 1.0,
    0.5, 2.0]` after `x = x + x.tolist()[0][0] * 0`, or `[len(s) * 1.0, ...]` of an f-string)
    changed by both `insert` and `pop`, in either order, and read afterwards (by index,
    `len`, `sum`, a `for`, a return).

    ## Why is this bad?
    Under LAX, `tolist()` / `asnumpy()` of a tensor computed at run time is run by JIT
    Fallback, and its value is not known while the graph is built: the loop contributes no
    element, and MindSpore 2.10 stops with `ValueError: For 'Stack', the 'len of input_x'
    must be int and must >= 1, but got '0'` (or `For primitive[Concat], the elements size
    must be greater than 0`). Loops that only accumulate a number or count compile. Growing
    the host list itself in place fails when it is read afterwards (`'NoneType' object has no
    attribute '__len__'`, `Resize failed for kernel: Default/PyExecute`); returned as it is or
    printed, it compiles (not flagged), and so does `pop` or
    `reverse` of it (`'float' object is not subscriptable`, `'NoneType' object is not
    subscriptable`), while a new list (`vals + [9.0]`), an item store (`vals[0] = 9.0`),
    slicing, `sorted(vals)`, `vals.sort()` and `vals.remove(v)` compile. The in-place change
    fails only when it runs: under an `if` or in a `while` body (`while len(idx) < n:
    idx.append(idx[0])`, padding that real data may never need) it is a warning.
    STRICT refuses `tolist` / `asnumpy` themselves (MS130). `reversed` of a `range` whose bound reads a tensor or
    list inline (even one of a static size, `range(x.shape[0])`) or of a list of tensors is
    run the same way under LAX,
    so a list filled in a `for` over it is empty too; `reversed` of a constant list or tuple,
    of a `range` whose bounds are Python ints (`reversed(range(4))`, `range(self.n)` with
    `self.n = 4`, `range(n)` with `n = 4` or a module-level `T = 4`, `range(len(xs))` of a
    list or tuple given as an input, a name bound once to `x.shape[0]`, `len(x)` or `x.ndim`
    (`T = rewards.shape[0]`, `B, T = x.shape`), any attribute of `self` set only in
    `__init__` and not a `Parameter` (`self.horizon = horizon`, even a constant tensor), an
    input every call passes a Python int, and arithmetic on these: MindSpore folds the
    interpreted call while compiling; written/heldout18b probes `fe18b_rvc_*`, heldout22a
    probes `rv22_*`, heldout33c probes `fix33f_rv_*`),
    `range(T - 1, -1, -1)`, and a list
    that holds an element before the loop compile. After a `for` over `reversed` of a local
    list of tensors, any read of a list the loop grew fails under LAX, even when it held an
    element before the loop (`'Tensor' object has no attribute 'append'`, "Can not get size
    for dynamic length sequence", "cannot get item by index from an empty sequence"), and
    so does the loop when the list is never read again; a
    tensor accumulated over it, a list of Python ints reversed, a list given as an input
    and `hs[::-1]` compile. A copy of a local list of tensors (`w = v.copy()`,
    `copy.copy(v)`) grown in place is None in the graph afterwards: indexing it, `len` or a
    `for` over it fail under LAX; returning or concatenating it, `v[:]` and `list(v)`
    compile.
    A list display holding a fallback value and changed by both `insert` and `pop` is a
    Python object LAX cannot read back ("'float' object is not subscriptable", "'NoneType'
    object is not subscriptable" when `pop` runs first); `insert` or `pop` alone, a constant
    list, a list of graph values, or no read afterwards compile.

    ## Example
    ```python
    def construct(self, x, labels):
        outs = []
        for c in labels.tolist():
            outs.append((x == c).sum())
        return ops.stack(outs)
    ```

    ## Use instead
    Stay in tensors (`(x[None] == labels[:, None]).sum(axis=-1)`), or loop over a constant
    `range(n)` whose bound is known while compiling.

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 2 (JIT Fallback makes LAX run `tolist` / `asnumpy` as Python).
    - Measured on MindSpore 2.10 with the written probes `lax` (`io_k`, `io_n`, `lp_a`,
      `lp_b`, `lp_e`, `lp_g`, `lp_h`, `lp_i`, `lp_o` rejected under LAX; `lp_d`, `lp_j`,
      `lp_m`, `lp_n`, `lp_f` compile; `ct_a`, `th_f`, `th_h`, `th_i`, `th_j` grow a host list
      in place and are rejected, `th_e`, `th_g`, `th_k` compile) and the written sets `heads`
      (`set_of_unique_labels_python`) and `ported` (`tolist_lengths_loop`); `reversed`: the
      written set `domains` (`rl_gae_list_insert_front`) and its `reversed_*` probes; the
      written set `algorithms` probes `rev_range_*` (`reversed(range(4))` compiles); a local
      list of tensors reversed: the written set `famb` probes `rv_*` and `algorithms`
      (`viterbi_crf_cell`, probes `rev_list_tensors_*`); `pop` / `reverse`: the written set
      `heldout14` probes `lx_fb_*` (`sort`, `remove`, slices compile); guarded changes: the
      written set `heldout18a` (`r2_pc_ball_query_per_center_loop_list`) and its probes
      `fe18a_hl_*` (an `append` / `extend` under `if` or `while` compiles when it never runs,
      is rejected when it does); a list display holding a fallback value changed by both
      `insert` and `pop`: the written set `lax` probes `genfresh43_fs_*` (fresh v5 seeds
      10700110, 10700186, v6 seed 12002226).
    """

    nodes = (ast.Call,)
    #: no host method (or `reversed`) named anywhere: no host data to follow
    words = ("reversed(", ".copy(", ".insert(", *(f".{m}(" for m in sorted(_HOST_METHODS)))

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        assert isinstance(node, ast.Call)
        # not a generator itself: most nodes stop at these tests, for the cost of a call
        # rather than of a generator each
        if not node.args and not (type(node.func) is ast.Attribute and node.func.attr in _NO_ARGS):
            return ()
        if ctx.function is None:
            return ()
        if not ctx.scope or ctx.scope.level != "lax":
            return ()  # STRICT refuses the host call itself (MS130)
        return self._check(node, ctx)

    def _check(self, node: ast.Call, ctx: Context) -> Iterable[Diagnostic]:
        f = node.func
        if isinstance(f, ast.Attribute) and f.attr in _IN_PLACE and isinstance(f.value, ast.Name):
            bound = analyzer(ctx).single_assignment(f.value.id, ctx.function)
            if bound is not None and _host_list(bound, ctx):
                if _only_shown_after(node, f.value.id, ctx):
                    return  # returned as it is or printed: compiles (fallbackflows `ff2_*_tolist_*`)
                guarded = _under_condition(node, ctx, f.value.id, f.attr)
                yield ctx.diagnostic(
                    self,
                    node,
                    f"`{f.value.id}` is `{ctx.segment(bound)}`, a list JIT Fallback makes from a tensor at run time: changing it in place with `{f.attr}` fails under LAX{' when it runs' if guarded else ''}; build a new list (`{f.value.id} + [...]`, `{f.value.id}[1:]`, `{f.value.id}[::-1]`) or stay in tensors",
                    severity="warning" if guarded else None,
                )
                return
            if f.attr in _SHUFFLE and isinstance(bound, ast.List):
                found = list(self._shuffled_display(node, f, bound, ctx))
                if found:
                    yield from found
                    return
            if f.attr in _NO_ARGS:
                return  # measured on host lists only
            if bound is not None and _fallback_copy(bound, ctx):
                read = _read_after(node, f.value.id, ctx)
                if read is not None:
                    assert isinstance(bound, ast.Call)
                    source = bound.args[0] if bound.args else bound.func
                    if isinstance(source, ast.Attribute):
                        source = source.value  # `lst.copy` -> `lst`
                    yield ctx.diagnostic(
                        self,
                        node,
                        f"`{f.value.id}` is `{ctx.segment(bound)}`, a copy of a list of tensors that LAX makes by JIT Fallback: growing it in place with `{f.attr}` leaves None in the graph, so `{ctx.segment(read)}` on line {read.lineno} fails ('NoneType' object ...); copy with a slice (`{ctx.segment(source)}[:]`) or `list({ctx.segment(source)})` instead",
                    )
                return
            loop = _grown_over_reversed_graph_list(node, f.value.id, ctx)
            if loop is not None:
                it = loop.iter
                reversed_list = it.args[0] if isinstance(it, ast.Call) and it.args else it
                yield ctx.diagnostic(
                    self,
                    node,
                    f"`{f.value.id}` is grown inside the `for` over `{ctx.segment(it)}` (line {loop.lineno}), a list of tensors built in the graph: LAX runs `reversed` of it by JIT Fallback, so the loop is not unrolled over known items and growing `{f.value.id}` there fails (\"'Tensor' object has no attribute 'append'\", or an empty list after the loop); loop over `{ctx.segment(reversed_list)}[::-1]` instead",
                )
            return
        if not node.args or not isinstance(node.args[0], ast.Name) or not needs_elements(f, ctx):
            return
        name = node.args[0].id
        start = analyzer(ctx).single_assignment(name, ctx.function)
        if isinstance(start, (ast.List, ast.Tuple)) and start.elts:
            return  # it holds elements before any loop: stacking it compiles
        for loop in _host_loops(ctx):
            if _reversed_graph_list(loop.iter, ctx):
                continue  # reported where the loop grows the list
            if (loop.end_lineno or loop.lineno) < node.lineno and name in set(grown_names(loop.body)):
                what = "run by JIT Fallback" if _is_reversed(loop.iter, ctx) else "a tensor's values run by JIT Fallback"
                yield ctx.diagnostic(
                    self,
                    node,
                    f"`{name}` is filled only inside the `for` over `{ctx.segment(loop.iter)}` (line {loop.lineno}), {what}: they are unknown while the graph is built, so the loop adds nothing and `{name}` is empty here",
                )
                return


    def _shuffled_display(
        self, node: ast.Call, f: ast.Attribute, bound: ast.List, ctx: Context
    ) -> Iterable[Diagnostic]:
        """`vals = [x.shape[1] * 1.0, 0.5, 2.0]` holding a JIT Fallback value, changed by both
        `insert` and `pop` (either order) and read afterwards: reported at the later of the two."""
        assert isinstance(f.value, ast.Name)
        name = f.value.id
        other = "pop" if f.attr == "insert" else "insert"
        start, here = (bound.lineno, bound.col_offset), (node.lineno, node.col_offset)
        if not any(
            not c.nested and c.how == other and start < (c.node.lineno, c.node.col_offset) < here
            for c in analyzer(ctx).changes(name, ctx.function)
        ):
            return
        item = next((e for e in bound.elts if opaque_at_lax(e, ctx.function, ctx)), None)
        if item is None:
            return
        read = _loaded_after(node, name, ctx)
        if read is None:
            return
        guarded = _under_condition(node, ctx, name, f.attr)
        yield ctx.diagnostic(
            self,
            node,
            f"`{name}` holds `{ctx.segment(item)}`, a value JIT Fallback computes at run time, and is changed in place by both `{other}` and `{f.attr}`: LAX then runs the list as a Python object and reading it (line {read.lineno}) fails{' when this runs' if guarded else ''} (\"'float' object is not subscriptable\"); build a new list instead of changing this one in place",
            severity="warning" if guarded else None,
        )


def _loaded_after(call: ast.Call, name: str, ctx: Context) -> ast.Name | None:
    """The first read of `name` after `call` that is not another method call on it (an index,
    `len`, `sum`, a `for`, a return); None when `name` is bound again first."""
    line = call.end_lineno or call.lineno
    reads: list[ast.Name] = []
    stores: list[int] = []
    for n in ast.walk(ctx.function):  # type: ignore[arg-type]
        if type(n) is not ast.Name or n.id != name or n.lineno <= line:
            continue
        if not isinstance(n.ctx, ast.Load):
            stores.append(n.lineno)
        elif type(ctx.parent(n)) is not ast.Attribute:
            reads.append(n)
    read = min(reads, key=lambda r: (r.lineno, r.col_offset), default=None)
    if read is None or (stores and min(stores) <= read.lineno):
        return None
    return read


def _host_loops(ctx: Context) -> list[ast.For]:
    """The `for` loops of the function being checked that iterate over host data of a
    run-time tensor (once per function)."""
    func = ctx.function
    key = ("ms175-host-loops", id(func))
    hit: list[ast.For] | None = ctx.cache.get(key)
    if hit is None:
        # a `for` is a statement: walk statements only, not every expression node
        hit = []
        stack: list[ast.AST] = list(getattr(func, "body", []))
        while stack:
            n = stack.pop()
            if isinstance(n, ast.For) and _host_iterable(n.iter, ctx, 0):
                hit.append(n)
            for name in ("body", "orelse", "finalbody", "handlers"):
                stack.extend(getattr(n, name, ()) or ())
        hit.sort(key=lambda n: n.lineno)
        ctx.cache[key] = hit
    return hit


def _graph_list(e: ast.expr, ctx: Context) -> bool:
    """A local list of tensors computed in the graph: a name bound once, to a list display
    holding a run-time value or to `[]` grown (`append` / `insert`) with one. Measured under
    LAX (written/famb probes `rv_*`, written/algorithms probes `rev_list_tensors_*`, the
    `viterbi_crf_cell` case): a list filled in a `for` over `reversed` of it is empty after
    the loop (`ops.stack` / `ops.concat` fail with no elements, `[0]` / `[-1]` with "cannot
    get item by index from an empty sequence"), and one holding an element before the loop
    is broken too (`'Tensor' object has no attribute 'append'`, "Can not get size for dynamic
    length sequence"), while a tensor accumulated over it compiles. A list of Python ints
    grown the same way, a list given as an input and a slice `feats[::-1]` compile."""
    if not isinstance(e, ast.Name) or ctx.function is None:
        return False
    a = analyzer(ctx)
    bound = a.single_assignment(e.id, ctx.function)
    if not isinstance(bound, ast.List):
        return False
    if any(not isinstance(v, ast.Starred) and a.kind(v) == Kind.TENSOR for v in bound.elts):
        return True
    return any(
        c.how in ("append", "insert") and c.args and a.kind(c.args[-1]) == Kind.TENSOR
        for c in a.changes(e.id, ctx.function)
    )


def _fallback_copy(e: ast.expr, ctx: Context) -> bool:
    """`lst.copy()` or `copy.copy(lst)` of a local list of tensors (`_graph_list`): LAX makes
    the copy by JIT Fallback. Measured (written/famb probes `cy_*`, written/spec probes
    `me_list_copy`, `lc_a` / `lc_g`, `cp_g`): grown in place (`append`, `extend`, `insert`),
    the copy is None afterwards, so indexing it, `len` of it or a `for` over it fail under LAX
    ('NoneType' object is not subscriptable / has no attribute '__len__' / is not
    iterable), while returning it, `ops.concat` / `ops.stack` of it, a copy never grown, a
    copy of a list of Python ints, `lst[:]` and `list(lst)` compile. STRICT refuses
    `lst.copy` itself."""
    if not isinstance(e, ast.Call) or e.keywords:
        return False
    f = e.func
    if isinstance(f, ast.Attribute) and f.attr == "copy" and not e.args:
        return _graph_list(f.value, ctx)
    return len(e.args) == 1 and ctx.qualname(f) == "copy.copy" and _graph_list(e.args[0], ctx)


def _only_shown_after(call: ast.Call, name: str, ctx: Context) -> bool:
    """Is every read of `name` after `call` (and there is one) the list returned as it is
    (`return lst`, `return x, lst`) or printed (`print(lst)`)? Measured (written/fallbackflows
    probes `ff2_append_tolist_{return,print}`, `ff2_extend_tolist`, `ff2_list_of_tolist_append`):
    a host list grown in place and only returned or printed compiles under LAX; `len`, an
    index, `Tensor(lst)` (lax probes `th_*`, `ct_a`) fail."""
    line = call.end_lineno or call.lineno
    seen = False
    for n in ast.walk(ctx.function):  # type: ignore[arg-type]
        if type(n) is not ast.Name or n.id != name or n.lineno <= line:
            continue
        if type(n.ctx) is not ast.Load:
            return False
        parent = ctx.parent(n)
        if type(parent) is ast.Tuple:
            parent = ctx.parent(parent)
            if type(parent) is not ast.Return:
                return False
        elif type(parent) is ast.Call:
            if ctx.qualname(parent.func) != "builtins.print" or n not in parent.args:
                return False
        elif type(parent) is not ast.Return:
            return False
        seen = True
    return seen


def _read_after(call: ast.Call, name: str, ctx: Context) -> ast.expr | None:
    """The first read of `name` after `call` that needs the list's items: `name[i]`,
    `len(name)`, a `for` (or comprehension) over it; None when `name` is bound again first."""
    func = ctx.function
    line = call.end_lineno or call.lineno
    reads: list[ast.expr] = []
    stores: list[int] = []
    for n in ast.walk(func):  # type: ignore[arg-type]
        if not isinstance(n, ast.Name) or n.id != name or n.lineno <= line:
            continue
        if not isinstance(n.ctx, ast.Load):
            stores.append(n.lineno)
            continue
        parent = ctx.parent(n)
        indexed = isinstance(parent, ast.Subscript) and parent.value is n
        measured = isinstance(parent, ast.Call) and parent.args == [n] and ctx.qualname(parent.func) == "builtins.len"
        if indexed or measured:
            reads.append(parent)  # type: ignore[arg-type]
        elif isinstance(parent, (ast.For, ast.comprehension)) and parent.iter is n:
            reads.append(n)
    read = min(reads, key=lambda r: (r.lineno, r.col_offset), default=None)
    if read is None or (stores and min(stores) <= read.lineno):
        return None
    return read


def _grown_over_reversed_graph_list(call: ast.Call, name: str, ctx: Context) -> ast.For | None:
    """The `for` over `reversed(<list of tensors>)` (`_graph_list`) around `call`, which grows
    `name`, a list bound before that loop. Measured under LAX (written/famb probes `rv_*`):
    growing it fails whatever follows, even when the list is never read again (`rv_q`:
    "'Tensor' object has no attribute 'append'")."""
    func = ctx.function
    loop: ast.AST | None = ctx.parent(call)
    while loop is not None and loop is not func and not isinstance(loop, ast.For):
        loop = ctx.parent(loop)
    if not isinstance(loop, ast.For) or not _reversed_graph_list(loop.iter, ctx):
        return None
    first = analyzer(ctx).first_binding_line(name, func)
    if first is None or first >= loop.lineno:
        return None  # bound inside the loop (or not in this function): not carried out of it
    return loop


def _reversed_graph_list(e: ast.expr, ctx: Context) -> bool:
    """`reversed(lst)` with `lst` a local list of tensors (`_graph_list`)."""
    return (
        isinstance(e, ast.Call)
        and len(e.args) == 1
        and ctx.qualname(e.func) == "builtins.reversed"
        and _graph_list(e.args[0], ctx)
    )


def _is_reversed(e: ast.expr, ctx: Context) -> bool:
    return isinstance(e, ast.Call) and ctx.qualname(e.func) == "builtins.reversed"


def _host_list(e: ast.expr, ctx: Context) -> bool:
    """A list JIT Fallback makes from a run-time tensor: `t.tolist()` (also after numpy
    steps, `t.asnumpy().flatten().tolist()`) or `list(<host data>)`."""
    if (
        isinstance(e, ast.Subscript)
        and isinstance(e.slice, (ast.Constant, ast.UnaryOp))
        and isinstance(e.value, ast.Call)
        and isinstance(e.value.func, ast.Attribute)
        and e.value.func.attr == "tolist"
    ):
        # `x.tolist()[0]`, a row of the host list (it is changed in place: a list); measured,
        # fresh v5 seeds 10100034 (`append` then `len`: "'NoneType' object has no attribute
        # '__len__'"), 10800060 (`insert` then `pop`: "'NoneType' object has no attribute 'pop'")
        e = e.value
    if not isinstance(e, ast.Call):
        return False
    f = e.func
    if isinstance(f, ast.Attribute) and f.attr == "tolist" and not e.args:
        return _host_iterable(e, ctx, 0)
    if isinstance(f, ast.Name) and ctx.qualname(f) == "builtins.list" and len(e.args) == 1:
        # (also `list(x.asnumpy().max(axis=0))`: host_values.numpy_of_host)
        return _host_iterable(e.args[0], ctx, 0) or numpy_of_host(e.args[0], ctx)
    return False





def _under_condition(node: ast.AST, ctx: Context, name: str = "", method: str = "") -> bool:
    """Is `node` inside an `if` / `while` body (or a conditional expression) of the function
    being checked? Measured under LAX (written/heldout18a `r2_pc_ball_query_per_center_loop_list`
    and probes `fe18a_hl_*`): growing a host list in place fails only when the statement runs
    (`while len(idx) < n: idx.append(...)` compiles and runs when every list is already long
    enough, and is rejected when the loop body runs), so a guarded change is only a warning.
    Not a guard: a `while` that tests the list `pop` shrinks (`while order: order.pop(0)`,
    `while len(dets) > 0`): its body runs whenever the list starts non-empty (measured,
    written/fallbackflows `ff6_attr_tensor_while_append`, heldout14 `lx_fb_while_pop_tolist`).
    Nor an `if` MindSpore folds while compiling to the side holding `node` (`if x.shape[0] >
    1:` with `x` of shape (2, 3)): that side always runs (fresh v5 seed 11700117, written/lax
    probes `genfresh30_hl_*`)."""
    func = ctx.function
    child: ast.AST = node
    up = ctx.parent(node)
    while up is not None and up is not func:
        if isinstance(up, ast.While) and child is not up.test and method == "pop" and any(
            type(n) is ast.Name and n.id == name for n in ast.walk(up.test)
        ):
            child, up = up, ctx.parent(up)
            continue
        if isinstance(up, ast.If) and child is not up.test and _folded_to(up, child in up.body, func, ctx):
            child, up = up, ctx.parent(up)
            continue
        if isinstance(up, ast.While) and child is not up.test and child not in up.orelse and _first_pass_runs(up, ctx):
            child, up = up, ctx.parent(up)
            continue
        if isinstance(up, (ast.If, ast.While)) and child is not up.test:
            return True
        if isinstance(up, ast.IfExp) and child is not up.test:
            return True
        child, up = up, ctx.parent(up)
    return False


_FIRST_TEST = {ast.Lt: int.__lt__, ast.LtE: int.__le__, ast.Gt: int.__gt__, ast.GtE: int.__ge__, ast.NotEq: int.__ne__}


def _first_pass_runs(loop: ast.While, ctx: Context) -> bool:
    """Does the body of `loop` surely run once: `while True:`, or `while w < 2:` on a counter
    the statement just before the loop's block sets to an int (`w = 0`)? Measured under LAX
    (written/lax probes `genfresh39_hl_while_*`, difftest v6 seed 12001299): `vals.append(0.5)`
    of a host list in such a loop fails as outside it."""
    t = loop.test
    if type(t) is ast.Constant:
        return t.value is True
    if not (type(t) is ast.Compare and len(t.ops) == 1 and type(t.ops[0]) in _FIRST_TEST):
        return False
    left, right = t.left, t.comparators[0]
    if not (type(left) is ast.Name and type(right) is ast.Constant and type(right.value) is int):
        return False
    body = getattr(ctx.parent(loop), "body", None)
    if not isinstance(body, list) or loop not in body:
        return False
    start: int | None = None
    for st in body[: body.index(loop)]:
        if any(type(n) is ast.Name and n.id == left.id and type(n.ctx) is ast.Store for n in ast.walk(st)):
            value = st.value if type(st) is ast.Assign and len(st.targets) == 1 and type(st.targets[0]) is ast.Name else None
            start = value.value if type(value) is ast.Constant and type(value.value) is int else None
    return start is not None and bool(_FIRST_TEST[type(t.ops[0])](start, right.value))


def _folded_to(test_of: ast.If, body: bool, func: ast.AST | None, ctx: Context) -> bool:
    """Is `test_of`'s condition a compile-time constant (a constant this module knows, or the
    shapes the program feeds in: ranks.py) that selects the body (`body`) or the else side?"""
    from npu_lsp.rules.graphmode.shape_folded import fed_shapes_take
    from npu_lsp.rules.graphmode.values import UNKNOWN, instances

    if func is None or analyzer(ctx).kind(test_of.test, func) != Kind.CONST:
        return False
    value = instances(ctx).evaluate(test_of.test, func)
    if value is not UNKNOWN:
        return bool(value) == body
    return fed_shapes_take(test_of.test, body, func, ctx)
