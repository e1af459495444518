"""MS201: (LAX) `max(...)` / `min(...)` of a Python list JIT Fallback made from a tensor at run time."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.flow import Kind, analyzer
from npu_lsp.rules.graphmode.helpers import GraphRule, own_nodes
from npu_lsp.rules.graphmode.host_values import host_iterable, host_len_bound
from npu_lsp.rules.graphmode.interpreted import interpreted
from npu_lsp.rules.graphmode.python_call_on_tensor import reduced_input_items

_DEPTH = 6
_HOST_READS = frozenset({"tolist", "asnumpy", "numpy"})
_WRAPPERS = frozenset({"builtins.enumerate", "builtins.zip", "builtins.sorted", "builtins.list", "builtins.reversed"})
#: `itertools` functions whose result iterates its arguments' items
_ITERTOOLS = frozenset(
    {
        "itertools.permutations",
        "itertools.combinations",
        "itertools.combinations_with_replacement",
        "itertools.product",
        "itertools.chain",
        "itertools.islice",
        "itertools.pairwise",
    }
)


def maybe_constant(e: ast.expr, ctx: Context, depth: int = 0) -> bool:
    """Could the tensor some `.tolist()` / `.asnumpy()` in `e` reads be known while
    compiling? True when it is an attribute of `self` (`self.c.tolist()`) or a tensor
    MindSpore folds from constants (`ms.Tensor(np.array(...)).tolist()`), also through names
    bound once: LAX folds such a call while compiling, and `max(self.c.tolist())`, a loop or
    a dict over it compile (measured, written/fallbackflows probes `ff6_*`). A rule of this
    family leaves such data alone."""
    if depth > 4:
        return True
    a = analyzer(ctx)
    for n in ast.walk(e):
        t = type(n)
        if t is ast.Call and type(n.func) is ast.Attribute and n.func.attr in _HOST_READS and not n.args:  # type: ignore[attr-defined]
            recv = n.func.value  # type: ignore[attr-defined]
            while type(recv) is ast.Subscript:
                recv = recv.value
            if type(recv) is ast.Attribute and type(recv.value) is ast.Name and recv.value.id == "self":
                return True
            if a.folded_tensor(recv, ctx.function):
                return True
        elif t is ast.Name and type(n.ctx) is ast.Load:  # type: ignore[attr-defined]
            bound = a.single_assignment(n.id, ctx.function)  # type: ignore[attr-defined]
            if bound is not None and maybe_constant(bound, ctx, depth + 1):
                return True
    return False


def fallback_iterable(e: ast.expr, ctx: Context, depth: int = 0) -> bool:
    """`host_iterable`, and also `.tolist()` of a numpy result on host data
    (`np.nonzero(t.asnumpy())[0].tolist()`, which `interpreted` follows), the builtins
    wrapping one (`enumerate`, `zip`, `sorted`, `list`, `reversed`) and a name bound once
    to one."""
    if depth > _DEPTH:
        return False
    if host_iterable(e, ctx):
        return True
    t = type(e)
    if t is ast.Name:
        bound = analyzer(ctx).single_assignment(e.id, ctx.function)  # type: ignore[attr-defined]
        return bound is not None and fallback_iterable(bound, ctx, depth + 1)
    if t is not ast.Call:
        return False
    f = e.func  # type: ignore[attr-defined]
    q = ctx.qualname(f)
    if q in _ITERTOOLS or q == "builtins.range":
        # `itertools.permutations(range(n), k)` with `n = len(c)`, `c` host data: LAX runs
        # it by JIT Fallback as it does `c` (measured, written/heldout22b probes
        # `lax24b_perm_*`, `lax24b_combinations_*`; over a literal `range` it is folded)
        return any(fallback_iterable(a, ctx, depth + 1) or _host_len_name(a, ctx) for a in e.args)  # type: ignore[attr-defined]
    if type(f) is ast.Attribute:
        return f.attr == "tolist" and not e.args and interpreted(f.value, ctx, ctx.function)  # type: ignore[attr-defined,arg-type]
    return q in _WRAPPERS and any(fallback_iterable(a, ctx, depth + 1) for a in e.args)  # type: ignore[attr-defined]


def _host_len_name(e: ast.expr, ctx: Context) -> bool:
    """A name bound once, before anything else binds it, to the `len` of host data (`n =
    len(c)`, `n_q, n_t = len(c), len(c[0])` with `c = x.asnumpy().tolist()`)."""
    if type(e) is not ast.Name or ctx.function is None:
        return False
    stores = [
        n for n in own_nodes(ctx.function) if type(n) in (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.For, ast.NamedExpr)
    ]
    value: ast.expr | None = None
    for st in stores:
        for tg in st.targets if type(st) is ast.Assign else [st.target]:  # type: ignore[attr-defined]
            if type(tg) is ast.Name and tg.id == e.id:
                if value is not None or type(st) is not ast.Assign:
                    return False
                value = st.value
            elif type(tg) is ast.Tuple and any(type(x) is ast.Name and x.id == e.id for x in tg.elts):
                v = st.value if type(st) is ast.Assign else None
                if value is not None or type(v) is not ast.Tuple or len(v.elts) != len(tg.elts):
                    return False
                value = v.elts[[type(x) is ast.Name and x.id == e.id for x in tg.elts].index(True)]
    return value is not None and host_len_bound(value, ctx) is not None


def fallback_list(e: ast.expr, ctx: Context, depth: int = 0) -> bool:
    """Is `e` a Python list JIT Fallback makes from a tensor at run time under LAX: `.tolist()`
    of a tensor or of host data (`x.asnumpy().tolist()`, `np.nonzero(...)[0].tolist()`),
    `sorted` / `list` / `reversed` of one, a comprehension over host data, a list display
    of items of one, or a name bound once to one of these? A numpy array (`x.asnumpy()`) is
    not one: measured, `max(n.asnumpy())` compiles."""
    if depth > _DEPTH:
        return False
    t = type(e)
    if t is ast.Name:
        a = analyzer(ctx)
        bound = a.single_assignment(e.id, ctx.function)  # type: ignore[attr-defined]
        if bound is None:
            # `dists = sorted(dists)`: the value straight-line code last bound
            bound = a.bound_value(e, ctx.function)  # type: ignore[arg-type]
        if bound is not None and fallback_list(bound, ctx, depth + 1):
            return True
        return isinstance(bound, ast.List) and not bound.elts and _appended_fallback_items(e, ctx, depth)  # type: ignore[arg-type]
    if t is ast.Call:
        f = e.func  # type: ignore[attr-defined]
        if type(f) is ast.Attribute:
            if f.attr != "tolist" or e.args:  # type: ignore[attr-defined]
                return False
            # `t.tolist()`, `x.asnumpy().tolist()`, or of a numpy result on host data
            # (`np.nonzero(a)[0].tolist()`, which `interpreted` follows)
            return host_iterable(e, ctx) or interpreted(f.value, ctx, ctx.function)  # type: ignore[arg-type]
        args = e.args  # type: ignore[attr-defined]
        if len(args) != 1:
            return False
        q = ctx.qualname(f)
        if q in ("builtins.list", "builtins.sorted"):
            # `list(t.asnumpy())`: a list of numpy scalars (measured, `ff3_max_helper_list`);
            # also of a numpy result on host data (`list(x.asnumpy().max(axis=0))`, measured
            # written/gen18 `mm_nplist_max`)
            arg = args[0]
            if q == "builtins.sorted" and _built_tensor_list(arg, ctx):
                return True
            return fallback_iterable(arg, ctx, depth + 1) or (
                type(arg) is ast.Call and interpreted(arg, ctx, ctx.function)  # type: ignore[arg-type]
            )
        return q == "builtins.reversed" and fallback_list(args[0], ctx, depth + 1)
    if t is ast.Subscript:
        # a row of a 2-D list (`t.tolist()[0]`, measured `ff3_max_2d_row`) or a slice of one
        return fallback_list(e.value, ctx, depth + 1)  # type: ignore[attr-defined]
    if t in (ast.ListComp, ast.GeneratorExp):
        gens = e.generators  # type: ignore[attr-defined]
        return len(gens) == 1 and fallback_iterable(gens[0].iter, ctx)
    if t is ast.List:
        elts = e.elts  # type: ignore[attr-defined]
        return bool(elts) and all(
            type(x) is ast.Subscript and not isinstance(x.slice, ast.Slice) and fallback_list(x.value, ctx, depth + 1)
            for x in elts
        )
    return False


def _built_tensor_list(e: ast.expr, ctx: Context) -> bool:
    """A list of tensors the compiled function builds by a comprehension (`[((u0 - u) ** 2).sum()
    for u in updates]`), in place or bound to a name: `sorted` of it runs by JIT Fallback under
    LAX and gives a list of unknown length (measured, written/heldout40b
    `robust_krum_scores_sorted_python`, probes `fix40d_ks_*`: `min(sorted(dists))` fails with
    "Unsupported op [IsDimUnKnown]"; `ds[0]`, `sum(ds[:2])` and `ds.index(...)` compile)."""
    a = analyzer(ctx)
    func = ctx.function
    if type(e) is ast.Name:
        e = a.bound_value(e, func) or e
    if type(e) is not ast.ListComp:
        return False
    elt = e.elt
    return a.kind(elt, func) == Kind.TENSOR or reduced_input_items(elt, ctx)


def _appended_fallback_items(e: ast.Name, ctx: Context, depth: int) -> bool:
    """A list bound to `[]` that only ever gets items of a fallback list appended (`ds[0]`, or
    `sum(ds[:k])`): each item is a value JIT Fallback made, and `min` of the list fails as of
    the fallback list itself (measured, written/heldout40b `robust_krum_scores_sorted_python`,
    probe `fix40d_ks_sorted_sum_scores_min_clean`: `scores.append(sum(dists[:2]))` in a loop,
    then `min(scores)`)."""
    items: list[ast.expr] = []
    for c in analyzer(ctx).changes(e.id, ctx.function):
        if c.how in _READS:
            continue
        if c.how != "append" or len(c.args) != 1:
            return False  # another change (`scores.insert(0, v)`, `scores += ...`) adds other items
        items.append(c.args[0])
    return bool(items) and all(_fallback_item(i, ctx, depth + 1) for i in items)


#: list methods that read a list without changing it
_READS = frozenset({"index", "count", "copy"})


def _fallback_item(e: ast.expr, ctx: Context, depth: int) -> bool:
    if type(e) is ast.Call and ctx.qualname(e.func) == "builtins.sum" and len(e.args) == 1:
        e = e.args[0]
    return type(e) is ast.Subscript and fallback_list(e.value, ctx, depth + 1)


@rule(code="MS201", name="max-of-fallback-list", severity="error", family="graphmode")
class MaxOfFallbackList(GraphRule):
    """## What it does
    Under the default LAX syntax level, flags `max(lst)` / `min(lst)` in compiled code when
    `lst` is a Python list JIT Fallback makes from a tensor at run time: `t.tolist()`,
    `t.asnumpy().tolist()`, `np.nonzero(t.asnumpy())[0].tolist()`, `sorted(...)` or `list(...)`
    of one, a comprehension or generator over one, a list display of its items
    (`[v[0], v[1]]`), or a name bound to one of these. `sorted(...)` of a list of tensors
    the function builds by a comprehension (Krum's `dists = sorted([((u0 - u) ** 2).sum() for
    u in updates])`) is one too, and so is a list that only ever gets items of such a list
    appended (`scores.append(sum(dists[:k]))`).

    ## Why is this bad?
    Under LAX such a list is a sequence whose length the graph does not know, and MindSpore
    2.10 compiles `max` / `min` of it to a dynamic-length reduction it cannot run on the CPU
    backend: `Kernel select failed: Unsupported op [IsDimUnKnown] on CPU`, whatever the
    result is used for (a slice bound, a shape, a product, or only printed or returned);
    with `key=` it fails with `Got an unexpected keyword argument 'key'`, and over a
    comprehension with `The object is not iterable`. `max(a, b)` of two numbers (also two
    items of such a list), `max` of a numpy array (`max(t.asnumpy())`), `np.max(lst)`,
    `int(t.max())`, `max(len(lst), 1)` and `max` of a list of tensors or of constants
    compile, and so does `tolist()` of a tensor MindSpore knows while compiling (an
    attribute of `self`, `ms.Tensor` of constants), which LAX folds: not flagged. STRICT
    refuses `tolist` / `asnumpy` themselves (MS130).

    ## Example
    ```python
    class Trim(nn.Cell):
        def construct(self, tokens, lengths):
            max_len = max(lengths.tolist())
            return tokens[:, :max_len]
    ```

    ## Use instead
    Reduce the tensor, and read one number from it:
    ```python
    class Trim(nn.Cell):
        def construct(self, tokens, lengths):
            max_len = int(lengths.max())
            return tokens[:, :max_len]
    ```

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 2 (JIT Fallback makes LAX run `tolist` / `asnumpy` as Python).
    - Measured on MindSpore 2.10 CPU with the written set `fallbackflows` (generated by
      tests/npu_lsp/difftest/gen_fallback_flows.py): `ff_maxtolist__*` (`max(n.tolist())`
      then 14 uses, every one rejected), `ff2_max_*` / `ff2_min_*` / `ff3_max_*` /
      `ff3_min_*` (float and int lists, lengths 1 to 6, `asnumpy().tolist()`, `np.nonzero`
      lists, comprehensions, `key=`: rejected; two items, numpy arrays, `np.max`, `len`,
      tensors and constants: compile), and the held-out cases
      `heldout17a/cap_sort_by_length_tolist` and `heldout16b/r2_bucket_pad_to_max_tolist`;
      `sorted` of a built tensor list: written/heldout40b `robust_krum_scores_sorted_python`,
      probes `fix40d_ks_*` (`min(sorted(dists))`, `min(scores)` of appended `sum(ds[:2])`:
      rejected; `ds[0]`, `sum(ds[:2])`, `ds.index(ds[0])`, `sorted` of an input: compile).
    """

    nodes = (ast.Call,)
    calls = frozenset({"max", "min"})
    callee = (ast.Name,)
    # every list this rule follows is made by one of them
    words = ("tolist", "asnumpy", "sorted")

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        assert isinstance(node, ast.Call)
        if len(node.args) != 1 or ctx.function is None or not ctx.scope or ctx.scope.level != "lax":
            return
        q = ctx.qualname(node.func)
        if q not in ("builtins.max", "builtins.min"):
            return
        arg = node.args[0]
        if isinstance(arg, ast.Starred) or not fallback_list(arg, ctx) or maybe_constant(arg, ctx):
            return
        name = q[9:]
        yield ctx.diagnostic(
            self,
            node,
            f"`{ctx.segment(arg)}` is a Python list JIT Fallback makes from a tensor at run time; MindSpore compiles `{name}` of it to a dynamic-length reduction the CPU backend cannot run (\"Unsupported op [IsDimUnKnown]\"): take `{name}` of the tensor (`int(t.{name}())`)",
        )
