"""MS209: a list or dict item grown or stored in a loop at an index known only at run time."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.flow import Kind, analyzer
from npu_lsp.rules.graphmode.helpers import GraphRule, store_lines
from npu_lsp.rules.graphmode.host_values import host_iterable, host_scalar
from npu_lsp.rules.graphmode.runtime_scalars import runtime_scalar

_GROW = frozenset({"append", "extend", "insert"})
_LOOPS = (ast.For, ast.While)
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


def _in_loop(node: ast.AST, ctx: Context) -> bool:
    """Is `node` inside a `for` / `while` of the compiled function itself?"""
    p = ctx.parent(node)
    while p is not None and p is not ctx.function:
        if isinstance(p, _LOOPS):
            return True
        if isinstance(p, _SCOPES):
            return False
        p = ctx.parent(p)
    return False


def _list_kind(e: ast.expr, ctx: Context) -> str | None:
    """"list" / "dict" / ... for a local name, "list" for `self.x` set to a list in `__init__`."""
    a = analyzer(ctx)
    if type(e) is ast.Attribute:
        cls = a.owner_class(ctx.function)
        if e.attr in a.self_info(cls).lists:
            return "list"
        values = a.self_values(cls).get(e.attr, ()) if cls is not None else ()
        # `self.counts = [0] * k`: a list repeated
        return "list" if values and all(v is not None and _repeated_list(v) for v in values) else None
    return a.type_class(e)


def _repeated_list(v: ast.AST) -> bool:
    return type(v) is ast.BinOp and type(v.op) is ast.Mult and (type(v.left) is ast.List or type(v.right) is ast.List)


def _container(e: ast.expr) -> bool:
    """A local name or an attribute of `self` (`nb`, `self.counts`)."""
    return type(e) is ast.Name or (type(e) is ast.Attribute and type(e.value) is ast.Name and e.value.id == "self")


def _same(e: ast.AST, base: ast.expr) -> bool:
    if type(base) is ast.Name:
        return type(e) is ast.Name and e.id == base.id
    return type(e) is ast.Attribute and e.attr == base.attr and type(e.value) is ast.Name and e.value.id == "self"  # type: ignore[attr-defined]


def _read(base: ast.expr, ctx: Context) -> bool:
    """Is the container `base` read anywhere in the compiled function other than by the
    stores into its items (`c[k] += 1`, `c[k] = v`, `c[k].append(v)` as statements) and its
    own binding? A list only stored into compiles (measured, written/heldout17a probe
    `lx20_selflist_item_key_unread`: `self.counts[int(t[i])] += 1` in a loop, never read)."""
    for n in ast.walk(ctx.function):  # type: ignore[arg-type]
        if not _same(n, base) or type(getattr(n, "ctx", None)) is not ast.Load:
            continue
        top: ast.AST = n
        p = ctx.parent(n)
        while type(p) is ast.Subscript and p.value is top:
            top, p = p, ctx.parent(p)
        if top is n:
            return True  # the container itself: `len(c)`, `return c`, `for v in c`
        if isinstance(p, ast.Assign) and top in p.targets or isinstance(p, ast.AugAssign) and top is p.target:
            continue
        if isinstance(p, ast.Attribute) and p.attr in _GROW:
            call = ctx.parent(p)
            if call is not None and type(ctx.parent(call)) is ast.Expr:
                continue
        return True
    return False


def _int_of_tensor(k: ast.expr, ctx: Context) -> bool:
    """`int(t)` of a run-time tensor, or a name bound once to one (`j = int(assign[i])`):
    a graph Int64 whose value is unknown while compiling. (`t.item()` is left out for
    stores: LAX hands `m[a.item()][b.item()] += 1.0` to Python, measured `hc22_nested_loop_item_store`.)"""
    if not host_scalar(k, ctx):
        return False
    if type(k) is ast.Name:
        bound = analyzer(ctx).single_assignment(k.id, ctx.function)
        if bound is None:
            return False
        k = bound
    return type(k) is ast.Call and type(k.func) is ast.Name and k.func.id == "int"


def _runtime_index(k: ast.expr, ctx: Context, level: str) -> bool:
    """An index the graph knows only at run time: `int(t)` / `t.item()` of a run-time tensor
    (a name bound once to one), or under LAX the variable of an enclosing `for` over host
    data (`for s, d in zip(src.tolist(), dst.tolist())`)."""
    if host_scalar(k, ctx):
        return True
    return level == "lax" and _host_loop_variable(k, ctx)


def _host_loop_variable(k: ast.expr, ctx: Context) -> bool:
    """`k` is the variable of the enclosing `for` over host data and that loop does not bind
    it again (the function may bind the name elsewhere, in another loop)."""
    if type(k) is not ast.Name or ctx.function is None:
        return False
    p = ctx.parent(k)
    while p is not None and p is not ctx.function:
        if type(p) is ast.For and any(type(n) is ast.Name and n.id == k.id for n in ast.walk(p.target)):
            if not host_iterable(p.iter, ctx, 0):
                return False
            first, last = p.lineno, p.end_lineno or p.lineno
            return all(line == first or not first <= line <= last for line in store_lines(ctx.function, ctx).get(k.id, ()))
        if isinstance(p, _SCOPES):
            return False
        p = ctx.parent(p)
    return False


@rule(code="MS209", name="item-stored-at-runtime-index", severity="error", family="graphmode")
class ItemStoredAtRuntimeIndex(GraphRule):
    """## What it does
    Flags, in a `for` or `while` loop of compiled code, a Python list or dict item grown or
    stored at an index the graph knows only at run time:

    - `buckets[k].append(v)` (also `extend` / `insert`) on a list or dict item, where `k` is
      `int(t)` or `t.item()` of a run-time tensor (or a name bound once to one), and under
      LAX also the variable of a `for` over a tensor's host data (`for s, d in
      zip(src.tolist(), dst.tolist())`);
    - under LAX, `counts[j] += 1`, `counts[j] = v` or `m[i][j] += 1` on a list (local, or held
      on `self`) where the index of the item replaced (`j`) is `int(t)` of a run-time tensor.

    At both levels, in a loop or not, a tensor stored into a list at `int(t)` (`rows[j] =
    rows[j] + x`, `j = int(idx[0, k])`) when `ops.stack` is later given that list (reading
    an item back, `ops.concat` and returning the list compile; a list of numbers stored at
    `int(t)` under STRICT is MS131's when it becomes a `Tensor`).

    At both levels, in a loop or not, a constant stored into a local list of constants at
    `int(t)` / `t.item()` (also through arithmetic, `int(order[b]) % n`) when the list
    holds bools (`suppressed = [False] * n`, then `suppressed[j] = True`: whatever is
    stored), or when the value's type is not the items' type (`[0] * n` given `True` or
    `1.5`, `[0.0] * n` given `1`).

    Only a container read elsewhere in the function is flagged (one only stored into
    compiles), and `m[int(t)][0] += 1.0`, which replaces an item at a constant index of a
    row, compiles.

    The same store outside a loop, or at an index the loop knows while compiling (`nb[k %
    n].append(v)`, `m[i][j] += 1` over `range`s), compiles; so does `counts[t] += 1` in a
    `for` over `labels.tolist()` (LAX runs that loop in Python).

    ## Why is this bad?
    A store at a variable index becomes MindSpore's `list_setitem` / `tuple_setitem` with a
    variable index (`nb[d].append(s)` is `nb[d] = nb[d] + [s]`), which needs every item of
    the list to have one type and shape and the value stored to match them; after one such
    store the list's items are no longer the constants the loop started from, and the next
    iteration fails. MindSpore 2.10 stops with `For list_setitem, when the index is variable
    and the queue is constant length, the element within constant length sequence ...`
    (also `tuple_setitem`), `For 'tuple_setitem', input[0] should be Tuple, but got Int64`,
    `'int' object is not subscriptable`, `list_setitem evaluator index should be an int64
    number, but got a Int32 number` (`t.item()` of an int32 tensor) and, for an item grown
    in a `for` over host data, `'NoneType' object has no attribute 'append'`. STRICT
    rejects the `append` form the same way (a flat list of numbers stored at `int(t)`
    compiles there). The variable-index store is a `tuple_setitem` kernel with no Bool
    version ("Select CPU operator[tuple_setitem] fail! Unsupported data type!"), and it
    needs the value to have the items' type ("For list_setitem, when the index is variable
    and the queue is constant length, the element within constant length sequence ...");
    ints into ints and floats into floats compile.

    ## Example
    ```python
    def construct(self, x, edge_index):
        nb = [[] for _ in range(x.shape[0])]
        for k in range(edge_index.shape[1]):
            nb[int(edge_index[1, k])].append(int(edge_index[0, k]))
        ...
    ```

    ## Use instead
    Keep the data in tensors: scatter with `ops.tensor_scatter_add` / `ops.unsorted_segment_sum`
    (a degree count, a confusion matrix, per-center counts), or a dense adjacency matrix
    (`adj[dst, src] = 1`) and a masked mean; or build the Python lists outside the network.

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 2 (JIT Fallback: values LAX takes from `int(t)` / `.item()` / `tolist()`
      are known only at run time, so a store at such an index is a variable-index store).
    - Measured on MindSpore 2.10 CPU: written/heldout21a probes `hc22_*` (in a loop over
      `range(idx.shape[1])`: nested, flat, `append` and tensor-item stores at `int(t)`
      rejected at LAX; a single or two stores outside a loop, a store at `k % n`, an `append`
      at a constant index and an aug-store in a `for` over `tolist()` compile); written
      trainsteps probes `setitem_*`; cases heldout20a `gnn_adjacency_list_python_loop`,
      heldout19b `ml_minibatch_kmeans_counts_list_self`, heldout19a
      `r2_moe_dispatch_token_lists`; probes `strict24_ix_rows_*` (tensor rows: stacked
      fails at both levels, read, concatenated compile); written/heldout29b case
      `nms_keep_list_python_ints_suppressed` and probes `fix30b_boollist_setitem_*`,
      `fix30b_*list_store*` (typed stores, loop or not, both levels; a bool list never
      read compiles).
    """

    nodes = (ast.Assign, ast.AugAssign, ast.Call)
    calls = _GROW
    #: the index is `int(t)` / `t.item()` (or a name bound to one), or the variable of a
    #: `for` over `tolist()` / `asnumpy()` data
    words = ("int", "item", "tolist", "asnumpy", "numpy")
    callee = (ast.Attribute,)

    def wants_assign(self, target: type[ast.AST] | None, value: type[ast.AST]) -> bool:
        return target is ast.Subscript or target is None

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        t = type(node)
        if t is ast.Call:
            f = node.func  # type: ignore[attr-defined]
            if type(f) is not ast.Attribute or f.attr not in _GROW or type(f.value) is not ast.Subscript:
                return ()
            item = f.value
            if type(item.slice) is ast.Slice or not _container(item.value):
                return ()
            return self._grown(node, item, ctx)  # type: ignore[arg-type]
        targets = node.targets if t is ast.Assign else [node.target]  # type: ignore[attr-defined]
        stores = [s for s in targets if type(s) is ast.Subscript and type(s.slice) is not ast.Slice]
        return self._stored(stores, node.value, ctx) if stores else ()  # type: ignore[attr-defined]

    def _grown(self, call: ast.Call, item: ast.Subscript, ctx: Context) -> Iterable[Diagnostic]:
        if ctx.function is None or not ctx.scope or not _in_loop(call, ctx):
            return
        level = ctx.scope.level
        if not _runtime_index(item.slice, ctx, level):
            return
        kind = _list_kind(item.value, ctx)
        if kind not in ("list", "dict", None) or not _read(item.value, ctx):
            return
        name = ctx.segment(item.value)
        yield ctx.diagnostic(
            self,
            item,
            f"`{name}[{ctx.segment(item.slice)}].{call.func.attr}(...)` grows an item of `{name}` at an index known only at run time, in a loop: MindSpore stores it back with a variable-index `list_setitem`, which fails once the items differ; build it with tensor ops (`ops.tensor_scatter_add`, a dense matrix) or outside the network",  # type: ignore[attr-defined]
        )

    def _stored(self, stores: list[ast.Subscript], value: ast.expr, ctx: Context) -> Iterable[Diagnostic]:
        if ctx.function is None or not ctx.scope:
            return
        # only `c[j]` / `c[int(t)]` can be such a store: the value's kind (a solve) is asked after
        if not any(type(s.slice) is ast.Name or (type(s.slice) is ast.Call and type(s.slice.func) is ast.Name) for s in stores):
            return
        if analyzer(ctx).kind(value) == Kind.TENSOR:
            yield from self._tensor_stored(stores, ctx)
            return
        typed = self._typed_store(stores, value, ctx)
        if typed is not None:
            yield typed
            return
        if ctx.scope.level != "lax":
            return
        for s in stores:
            # the index of the item replaced: `m[int(a)][0] += 1.0` replaces `m[int(a)]`'s
            # item 0, a constant index, and compiles (measured, written/famc probe
            # `nl_rows_floats_loop_store`); `m[i][int(b)] += 1` and `c[int(b)] += 1` fail
            index = s.slice
            if not _int_of_tensor(index, ctx):
                continue
            base: ast.expr = s.value
            while type(base) is ast.Subscript:
                base = base.value
            if not _container(base) or not _in_loop(s, ctx):
                continue
            if _list_kind(base, ctx) != "list" or not _read(base, ctx):
                continue
            name = ctx.segment(base)
            yield ctx.diagnostic(
                self,
                s,
                f"`{ctx.segment(s)}` stores into list `{name}` at `{ctx.segment(index)}`, a number read from a run-time tensor, in a loop: under LAX MindSpore's variable-index `list_setitem` fails on the next iteration; count with tensor ops (`ops.tensor_scatter_add`) or outside the network",
            )
            return

    def _typed_store(self, stores: list[ast.Subscript], value: ast.expr, ctx: Context) -> Diagnostic | None:
        """`flags[j] = True` (every level, in a loop or not) into a local list of constants
        of one type, at an index read from a run-time tensor, the list being read elsewhere:
        a variable-index store is MindSpore's `tuple_setitem` kernel, which has no Bool
        version, and which needs the value to have the items' type (measured, written/heldout29b
        case `nms_keep_list_python_ints_suppressed`, probes `fix30b_*list_store*`,
        `fix30b_boollist_setitem_*`: a bool list fails whatever is stored, "Select CPU
        operator[tuple_setitem] fail! Unsupported data type!", an int stored into a float
        list or a bool into an int list fails with "For list_setitem, when the index is
        variable and the queue is constant length, the element within constant length
        sequence ..."; ints into ints and floats into floats compile, and so does a bool
        list never read)."""
        for s in stores:
            base = s.value
            if type(base) is not ast.Name:
                continue
            items = _constant_items_type(base.id, ctx)
            if items is None:
                continue
            stored = type(value.value) if type(value) is ast.Constant else None
            if items is not bool and (stored is None or stored is items):
                continue
            if runtime_scalar(s.slice, ctx) is None or not _read(base, ctx):
                continue
            why = (
                "MindSpore's variable-index `tuple_setitem` has no kernel for a list of bools (Select CPU operator[tuple_setitem] fail)"
                if items is bool
                else f"MindSpore's variable-index `list_setitem` needs the value to be a `{items.__name__}` like the list's items"
            )
            return ctx.diagnostic(
                self,
                s,
                f"`{ctx.segment(s)}` stores into the list `{base.id}` of `{items.__name__}` constants at `{ctx.segment(s.slice)}`, a number read from a run-time tensor: {why}; keep the flags in a tensor (`ops.zeros(n, ms.bool_)` and `ops.tensor_scatter_update`) or store ints",
            )
        return None

    def _tensor_stored(self, stores: list[ast.Subscript], ctx: Context) -> Iterable[Diagnostic]:
        """A tensor stored into a list at `int(t)`: the list then holds a variable-index item,
        which both levels read back (`rows[1]`), concatenate and return, but `ops.stack`
        of the list fails in the back end, in a loop or not (measured, written/heldout21a
        probes `hc22_tensor_rows_loop_int_store`, `strict24_ix_rows_*`: "Tuple to TupleUnfold
        pattern should have TupleGetItem as user node, but got Default/Stack-op0")."""
        for s in stores:
            if type(s.value) is not ast.Name or not _int_of_tensor(s.slice, ctx):
                continue
            stacked = _stacked(s.value.id, s, ctx)
            if stacked is None:
                continue
            yield ctx.diagnostic(
                self,
                s,
                f"`{ctx.segment(s)}` stores a tensor into list `{s.value.id}` at `{ctx.segment(s.slice)}`, a number read from a run-time tensor, and `{ctx.segment(stacked)}` (line {stacked.lineno}) stacks that list: MindSpore's back end cannot stack a list with a variable-index item (Tuple to TupleUnfold pattern ... Stack); accumulate into a tensor (`ops.tensor_scatter_add`) or pick rows with a one-hot mask",
            )
            return


def _constant_items_type(name: str, ctx: Context) -> type | None:
    """`bool`, `int` or `float` when the local `name` is bound once to a list display of
    constants of that one type (`[False, False]`) or to one repeated (`[False] * n`)."""
    bound = analyzer(ctx).single_assignment(name, ctx.function)
    if type(bound) is ast.BinOp and type(bound.op) is ast.Mult:
        bound = bound.left if type(bound.left) is ast.List else bound.right
    if type(bound) is not ast.List or not bound.elts:
        return None
    kinds = {type(e.value) if type(e) is ast.Constant else None for e in bound.elts}
    if len(kinds) != 1:
        return None
    kind = kinds.pop()
    return kind if kind in (bool, int, float) else None


def _stacked(name: str, after: ast.AST, ctx: Context) -> ast.Call | None:
    """`ops.stack(name)` after `after` in the compiled function."""
    line = getattr(after, "lineno", 0)
    for n in ast.walk(ctx.function):  # type: ignore[arg-type]
        if (
            type(n) is ast.Call
            and n.lineno > line
            and n.args
            and type(n.args[0]) is ast.Name
            and n.args[0].id == name
            and ctx.qualname(n.func) in _STACKS
        ):
            return n
    return None


_STACKS = frozenset({"mindspore.ops.stack", "mindspore.mint.stack"})
