"""MS202: (LAX) a list grown in a `for` over host data of a run-time tensor, read after the loop."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.astutil import none_compared
from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.fallback_list_max import (
    fallback_iterable,
    maybe_constant,
)
from npu_lsp.rules.graphmode.flow import Kind, analyzer
from npu_lsp.rules.graphmode.helpers import GraphRule, own_nodes
from npu_lsp.rules.graphmode.list_grown_in_tensor_loop import grown_names
from npu_lsp.rules.graphmode.tensor_names import TENSOR_CLASS


def returned_or_printed(n: ast.Name, ctx: Context) -> bool:
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
    return type(parent) is ast.Call and bool(parent.args) and parent.args[0] is n and ctx.qualname(parent.func) in TENSOR_CLASS


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
        if not returned_or_printed(n, ctx) and not _to_tensor(n, ctx) and (first is None or (n.lineno, n.col_offset) < (first.lineno, first.col_offset)):
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
    Also, after such a loop (or one over `range(len(c))`, `range(n)` with `n = len(c)`, or
    `itertools.permutations` / `combinations` / `product` of these), a name the loop
    rebinds whose value from before the loop MindSpore folds into a read: `best = None`
    then `list(best)`, `tuple(best)`, `a, b = best` or a `for` over it; `count = 0` (or
    `0.0`) then a Python number divided by it (`total / count`, `10 // count`).

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
    The graph also keeps the value a name had before such a loop: the loop runs at run
    time (returning `x * count` gives the right number), but `list(best)` with `best =
    None` ("'none' object is not iterable") and `total / count` with `count = 0.0` ("The
    divisor could not be zero") are folded while compiling; a tensor divided by the count,
    a test `best is None` before the read, a start value of the right kind (`best = (0,
    1)`), and a loop over a tensor or a literal `range` (folded) compile.

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
    - Values from before the loop: the written heldout22b probes `lax24b_*_none*`,
      `lax24b_*_div*`, `lax24b_perm_*`, `lax24b_combinations_*` (over `tolist()`, `set(...)`,
      `zip`, `enumerate`, `range(len(c))`, `itertools.permutations(range(n), 2)`: `None`
      iterated or unpacked and a Python number divided by a count fail; a tensor divided,
      a `best is None` test, a tuple start value, a literal range, a tensor loop compile),
      case `r2_match_brute_force_permutations`, and heldout21a `metric_gauc_user_groups`.
    """

    nodes = (ast.For,)
    words = ("tolist", "asnumpy")

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        assert isinstance(node, ast.For)
        if ctx.function is None or not ctx.scope or ctx.scope.level != "lax":
            return
        grown = set(grown_names(node.body))
        changed = _rebound_in(node) - grown
        if not (grown or changed) or not fallback_iterable(node.iter, ctx) or maybe_constant(node.iter, ctx):
            return
        yield from self._folded_starts(node, changed, ctx)
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

    def _folded_starts(self, loop: ast.For, changed: set[str], ctx: Context) -> Iterable[Diagnostic]:
        """Names the loop rebinds whose value from before the loop MindSpore folds into a read
        after it: `None` iterated (`list(best)`), `0` dividing a Python number."""
        func = ctx.function
        assert func is not None
        starts = {name: _start_value(name, loop, func) for name in changed}
        for name in sorted(changed):
            start = starts[name]
            if type(start) is not ast.Constant:
                continue
            if start.value is None:
                read = _iterated_after(loop, name, ctx)
                why, was = "'none' object is not iterable", "None"
            elif type(start.value) in (int, float) and start.value == 0:
                read = _divided_after(loop, name, starts, ctx)
                why, was = "The divisor could not be zero", repr(start.value)
            else:
                continue
            if read is None:
                continue
            yield ctx.diagnostic(
                self,
                read,
                f"`{name}` is changed only in the `for` over `{ctx.segment(loop.iter)}` (line {loop.lineno}), Python data JIT Fallback makes from a tensor at run time: under LAX the graph still sees `{name}` as `{was}` from before the loop, and `{ctx.segment(read)}` fails while compiling (\"{why}\"); give `{name}` a value of the right kind before the loop, or compute it with tensor ops",
            )


#: calls that iterate their argument (`list(best)`): of `None` they fail
_ITERATING = frozenset(
    {"builtins.list", "builtins.tuple", "builtins.set", "builtins.sorted", "builtins.enumerate", "builtins.zip", "builtins.iter", "builtins.frozenset"}
)


def _rebound_in(loop: ast.For) -> set[str]:
    """Names the loop's body binds by assignment (`best = v`, `a, b = v, i`, `n += 1`)."""
    out: set[str] = set()
    for st in loop.body:
        for s in ast.walk(st):
            t = type(s)
            targets = s.targets if t is ast.Assign else [s.target] if t in (ast.AugAssign, ast.AnnAssign) else ()  # type: ignore[attr-defined]
            for tg in targets:
                out.update(n.id for n in ast.walk(tg) if type(n) is ast.Name)
    return out


def _start_value(name: str, loop: ast.For, func: ast.AST) -> ast.expr | None:
    """The value `name` is last bound to before `loop` (`best = None`, `a, b = 0.0, None`),
    when every other binding of it is inside the loop; None otherwise."""
    end = loop.end_lineno or loop.lineno
    value: ast.expr | None = None
    for n in own_nodes(func):
        t = type(n)
        if t is ast.Name and type(n.ctx) is ast.Store and n.id == name and not loop.lineno <= n.lineno <= end:  # type: ignore[attr-defined]
            if n.lineno > loop.lineno:  # type: ignore[attr-defined]
                return None  # bound again after the loop
            continue
        if t is not ast.Assign or n.lineno >= loop.lineno:  # type: ignore[attr-defined]
            continue
        for tg in n.targets:  # type: ignore[attr-defined]
            if type(tg) is ast.Name and tg.id == name:
                value = n.value  # type: ignore[attr-defined]
            elif type(tg) is ast.Tuple and type(n.value) is ast.Tuple and len(tg.elts) == len(n.value.elts):  # type: ignore[attr-defined]
                for x, v in zip(tg.elts, n.value.elts, strict=True):  # type: ignore[attr-defined]
                    if type(x) is ast.Name and x.id == name:
                        value = v
    if value is None or _nested_in_loop(loop, func):
        return None
    bound = [n for n in own_nodes(func) if type(n) is ast.Name and type(n.ctx) is ast.Store and n.id == name and n.lineno < loop.lineno]
    return value if len(bound) == 1 else None


def _nested_in_loop(loop: ast.For, func: ast.AST) -> bool:
    """Is `loop` inside another loop of `func` (whose later passes start from other values)?"""
    return any(
        type(n) in (ast.For, ast.While) and n is not loop and n.lineno < loop.lineno <= (n.end_lineno or n.lineno)  # type: ignore[attr-defined]
        for n in own_nodes(func)
    )


def _loads_after(loop: ast.For, name: str, ctx: Context) -> list[ast.Name]:
    """Reads of `name` after `loop`, in order; none when a test `name is None` reads it (MindSpore
    folds that test too, and the branch it takes may never read the value)."""
    end = loop.end_lineno or loop.lineno
    out = [
        n
        for n in own_nodes(ctx.function)  # type: ignore[arg-type]
        if type(n) is ast.Name and n.id == name and n.lineno > end and type(n.ctx) is ast.Load
    ]
    if any(none_compared(p) for p in map(ctx.parent, out) if p is not None):
        return []
    return sorted(out, key=lambda n: (n.lineno, n.col_offset))


def _iterated_after(loop: ast.For, name: str, ctx: Context) -> ast.expr | None:
    """The first read after `loop` that iterates `name`: `list(name)`, `for v in name`,
    `a, b = name`, `*name`."""
    for n in _loads_after(loop, name, ctx):
        p = ctx.parent(n)
        if isinstance(p, ast.Call) and n in p.args and (ctx.qualname(p.func) or "") in _ITERATING:
            return p
        if isinstance(p, (ast.For, ast.comprehension)) and p.iter is n:
            return n
        if isinstance(p, ast.Assign) and p.value is n and any(type(x) in (ast.Tuple, ast.List) for x in p.targets):
            return n
        if isinstance(p, ast.Starred):
            return n
    return None


def _divided_after(loop: ast.For, name: str, starts: dict[str, ast.expr | None], ctx: Context) -> ast.expr | None:
    """The first read after `loop` dividing a Python number by `name` (`total / count`, `10
    // n`): a number the flow knows as one, or a name the same loop changes from a number."""
    a = analyzer(ctx)
    for n in _loads_after(loop, name, ctx):
        p = ctx.parent(n)
        if type(p) is not ast.BinOp or p.right is not n or type(p.op) not in (ast.Div, ast.FloorDiv, ast.Mod):
            continue
        left = p.left
        if type(left) is ast.Name and left.id in starts:
            s = starts[left.id]
            if type(s) is ast.Constant and type(s.value) in (int, float):
                return p
            continue
        if a.kind(left) in (Kind.CONST, Kind.VAR):
            return p
    return None
