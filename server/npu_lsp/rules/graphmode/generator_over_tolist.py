"""MS173: (LAX) a generator expression over `tensor.tolist()`."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.flow import Kind, analyzer
from npu_lsp.rules.graphmode.helpers import GraphRule
from npu_lsp.rules.graphmode.host_values import host_data, runs_only_if_reached
from npu_lsp.rules.graphmode.opaque_value_query import opaque_at_lax

#: consumers that take a generator over host data under LAX (measured, written/heldout14b
#: probes `hv_gen_any_*`, `hv_gen_all_asnumpy`: compile; `join`, `sum`, `max`, `min`,
#: `tuple`, `list` of one fail)
_TAKES_GENERATOR = frozenset({"builtins.any", "builtins.all"})


@rule(code="MS173", name="generator-over-tolist", severity="error", family="graphmode")
class GeneratorOverTolist(GraphRule):
    """## What it does
    Under the default LAX syntax level, flags a generator expression in compiled code that
    iterates over a tensor's values as Python data: `sum(v for v in x.tolist())`,
    `sum(1 for v in x.tolist() if v > 0)`, `"".join(NAMES[int(i)] for i in ids)` with
    `ids = x.argmax(-1).asnumpy()` (any host data: `asnumpy()`, numpy steps, `zip` /
    `enumerate` / `Counter` of them, a row of them such as `x.tolist()[0]` or
    `x.asnumpy()[1].tolist()`), unless it is given to `any` or `all`, or the data is known
    to hold one item. Also a generator or list comprehension over `range(...)` whose bound
    reads the `len` of such data (`range(len(a) - 1)` with `a = idx[0].tolist()`, or a
    helper's parameter every call gives such data: n-gram counting), and a generator over
    a list of scalars read from a tensor LAX holds as a Python object (`[x[0, j].item() for
    j in range(3)]` below `x = ms.Tensor(np.stack(...))`). A generator given to a function
    neither MindSpore nor a builtin (`collections.Counter(...)`) under an `if` or a `while`
    whose test is a run-time tensor value is a warning: it fails only when that body runs.

    ## Why is this bad?
    Under LAX, `x.tolist()` runs as Python (JIT Fallback) and gives a value the graph knows
    only at run time; MindSpore 2.10 cannot build a generator over it and stops with
    `TypeError: unsupported operand type(s) for +: 'float' and 'list'` or `RuntimeError: The
    pointer[seq_abs] is null`; `join` of one stops with `For Tensor, the input_data is ('b',)
    that contain unsupported element` (3 or more items) or `sequence item 0: expected str
    instance, Tensor found` (2), and `max`, `min`, `tuple`, `list` of one fail as `sum`
    does. `any(...)` and `all(...)` of such a generator, and a `join` over one item,
    compile. A plain `for` loop over the same list, `len(x.tolist())` and
    `sum(x.tolist())` compile under LAX. List comprehensions over it are not flagged: one
    (`[v * 2 for v in x.tolist()]`) is rejected, another (`[NAMES[i] for i in ids]`) compiles
    and runs differently, and what separates them is not measured. STRICT refuses `tolist`
    itself (MS130).

    ## Example
    ```python
    class CountPositive(nn.Cell):
        def construct(self, x):
            return sum(1 for v in x.tolist() if v > 0)
    ```

    ## Use instead
    Stay in tensors:
    ```python
    class CountPositive(nn.Cell):
        def construct(self, x):
            return (x > 0).sum()
    ```

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 1 (rejected under LAX); measured on MindSpore 2.10 with the written set `firstweek` (`tensor_tolist_python_sum`)
      and probes in construct: `sum(v for v in x.tolist())` and `sum(1 for v in x.tolist()
      if v > 0)` are rejected under LAX (so is `[v * 2 for v in x.tolist()]`, while the
      written set `vision`'s `[CLASS_NAMES[i] for i in ids]` compiles); a `for` loop over
      `x.tolist()` counting positives, `len(x.tolist())` and `sum(x.tolist())` compile under
      LAX (and are rejected under STRICT, where `tolist` is refused).
    - The written heldout14b probes `hv_gen_*`: generators over `asnumpy()` / `tolist()`
      data given to `join`, `sum`, `max`, `min`, `tuple`, `list` are rejected under LAX
      (2 and 5 items), `any` / `all` and `join` over one item compile.
    - The written gen18 probes `cg_idx_*`, `cg_row_*`, `mm_tolist_gen`: over a row of host
      data (`x.tolist()[0]`, `x.asnumpy()[1]`, `x.asnumpy()[1].tolist()`) `sum`, `max`,
      `tuple` and `collections.Counter` of a generator are rejected under LAX as over the
      whole list; `any`, a `for` loop and `len` compile.
    - Over `range(len(a) - 1)` of host data `a` (`host_values.host_len_bound`): the written
      heldout21a probes `lb23_rl_gen_sum_range_len`, `lb23_rl_gen_tuple_range_len` and
      `hc22_counter_ngrams_host` (`sum`, `tuple`, `Counter` of it) are rejected under LAX as
      over `a` itself ("unsupported operand type(s) for +: 'int' and 'list'", "Expected
      SequenceShape for SetShape, but got: TensorShape").
    - The written fallbackflows probes `la23_gr_*` (and heldout21a `hc22_counter_ngrams_host`,
      heldout15a/17a/19a BLEU cases): over `range(len(host data))` `sum`, `tuple`,
      `Counter` of a generator and a list comprehension fail under LAX; a `for` statement, a
      range over a tensor's or a constant list's length compile.
    - Run-time guards: written/lax probes `genfresh38_wt_gen_*` and `genfresh38_rt_*_gen*`
      (`collections.Counter(round(v) for v in vals)` fails at run time, "unsupported operand
      type(s) for +: 'int' and 'list'", in a loop or not; under `if` / `while` on a tensor
      whose body never runs it compiles and runs); fresh v6 seed 12001340.
    """

    nodes = (ast.GeneratorExp, ast.ListComp)

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        assert isinstance(node, (ast.GeneratorExp, ast.ListComp))
        if not ctx.scope or ctx.scope.level != "lax":
            return  # STRICT refuses the `tolist` call itself (MS130)
        parent = ctx.parent(node)
        if isinstance(parent, ast.Call) and ctx.qualname(parent.func) in _TAKES_GENERATOR:
            return
        for gen in node.generators if type(node) is ast.GeneratorExp else ():
            # a list comprehension over such a range is MS193's, which knows when its length
            # matters (written/heldout21a probes `lb23_rl_comp_*`: two items returned compile)
            it = gen.iter
            if type(it) is ast.Call and type(it.func) is ast.Name and it.func.id == "range" and it.args:
                measured = _host_len_read(it, ctx)
                if measured is not None:
                    yield ctx.diagnostic(
                        self,
                        node,
                        f"under LAX `{ctx.segment(it)}` counts up to `len({ctx.segment(measured)})`, the length of Python data JIT Fallback makes from a tensor at run time: the graph cannot unroll a comprehension over a range whose length it does not know, and this fails to compile; loop with a `for` statement, or compute it with tensor ops",
                    )
                    return
        if type(node) is ast.ListComp:
            return  # a list comprehension directly over host data: not measured (see above)
        for gen in node.generators:
            made: ast.expr | None = tolist_of_tensor(gen.iter, ctx)
            if made is None and (
                host_data(gen.iter, ctx)
                or _host_row(gen.iter, ctx)
                or _python_items(gen.iter, ctx)
            ):
                made = gen.iter
            if made is not None and not _one_item(gen.iter, ctx):
                if runs_only_if_reached(node, ctx):
                    # run as Python under a run-time test: it fails only when it runs
                    # (measured, written/lax probes `genfresh38_rt_if_*`; fresh v6 seed 12001340)
                    yield ctx.diagnostic(
                        self,
                        node,
                        f"under LAX a generator over `{ctx.segment(made)}` (Python data JIT Fallback makes from a tensor at run time) fails when it runs, here under a test decided at run time; compute it with tensor ops (ops.* / Tensor methods), or return the tensor and do this Python post-processing outside construct",
                        severity="warning",
                    )
                    return
                yield ctx.diagnostic(
                    self,
                    node,
                    f"under LAX a generator over `{ctx.segment(made)}` (Python data JIT Fallback makes from a tensor at run time) fails to compile; compute it with tensor ops (ops.* / Tensor methods), or return the tensor and do this Python post-processing outside construct",
                )
                return


def _host_row(it: ast.expr, ctx: Context) -> bool:
    """`x.tolist()[0]`, `x.asnumpy()[i]` (written in place or bound once to the name
    iterated): a row of host data read straight from a tensor (measured, written/gen18 probe
    `mm_tolist_gen`: `max(a * 2 for a in x.tolist()[0])` fails under LAX with "unsupported
    operand type(s) for +: 'float' and 'list'", as over the whole list)."""
    if type(it) is ast.Name:
        bound = analyzer(ctx).single_assignment(it.id, ctx.function)
        if bound is None:
            return False
        it = bound
    return (
        type(it) is ast.Subscript
        and type(it.slice) is not ast.Slice
        and type(it.value) is ast.Call
        and host_data(it.value, ctx)
    )


def _host_len_read(rng: ast.Call, ctx: Context) -> ast.expr | None:
    """The host data whose `len(...)` a `range(...)`'s arguments read (`range(len(a) - 1)`
    with `a = idx[0].tolist()`, also a helper's parameter every call site gives such data).
    Measured (written/fallbackflows probes `la23_gr_*`, written/heldout21a probe
    `hc22_counter_ngrams_host`, heldout15a/17a BLEU cases): `sum`, `tuple`, `Counter` of a
    generator and a list comprehension over such a range fail under LAX ("unsupported
    operand type(s) for +: 'int' and 'list'", "Expected SequenceShape for SetShape"); a
    `for` statement over it, a range over a tensor's or a constant list's length compile."""
    if ctx.qualname(rng.func) != "builtins.range":
        return None
    for arg in rng.args:
        for n in ast.walk(arg):
            if (
                type(n) is ast.Call
                and type(n.func) is ast.Name
                and n.func.id == "len"
                and len(n.args) == 1
                and type(n.args[0]) in (ast.Name, ast.Call, ast.Subscript)
            ):
                measured = n.args[0]
                if _host(measured, ctx) or _host_parameter(measured, ctx):
                    return measured
    return None


def _python_items(it: ast.expr, ctx: Context) -> bool:
    """A name bound once to a list comprehension whose items are Python objects, as host data
    is: scalars read (`.item()`, `float` / `int`) from a tensor LAX holds as a Python object
    (`vals = [x[0, j].item() for j in range(3)]` below `x = ms.Tensor(np.stack(...))`), or
    items of a value JIT Fallback made (`interpreted`: the same comprehension with `x = x +
    len(f"{s:.2f}") * 0.0` before it, or in an earlier pass of an unrolled loop). Measured
    (written/fallbackflows probes `la23_fi_*`, difftest seed 11000022): `sum`, `max` and
    `Counter` of a generator over it fail under LAX ("unsupported operand type(s) for +:
    'float' and 'list'"); `Counter(vals)` and a `for` statement compile; (fresh v5 seed
    11100106; written/gen18 probes `v23_jn_*`) `', '.join(f'{v:.2f}' for v in vals)` fails,
    "For Tensor, the input_data is ('-0.5',) that contain unsupported element"; over a plain
    tensor's items the generator compiles (written/gen18 probe `cg_item_comp_sum`)."""
    if type(it) is not ast.Name or ctx.function is None:
        return False
    bound = analyzer(ctx).single_assignment(it.id, ctx.function)
    if type(bound) is not ast.ListComp:
        return False
    from npu_lsp.rules.graphmode.interpreted import interpreted

    return _item_of_opaque(bound.elt, ctx) or interpreted(bound, ctx, ctx.function)


def _item_of_opaque(e: ast.expr, ctx: Context) -> bool:
    """`v[...].item()`, `float(v[...])` / `int(v[...])` of a name `v` LAX holds as a Python
    object (`opaque_at_lax`)."""
    if type(e) is not ast.Call:
        return False
    if type(e.func) is ast.Attribute and e.func.attr == "item" and not e.args:
        base = e.func.value
    elif type(e.func) is ast.Name and e.func.id in ("float", "int") and len(e.args) == 1:
        base = e.args[0]
    else:
        return False
    while type(base) is ast.Subscript:
        base = base.value
    if type(base) is not ast.Name:
        return False
    return opaque_at_lax(base, ctx.function, ctx)


def _host(e: ast.expr, ctx: Context) -> bool:
    return tolist_of_tensor(e, ctx) is not None or host_data(e, ctx) or _host_row(e, ctx)


def _host_parameter(e: ast.expr, ctx: Context) -> bool:
    """A parameter of the helper being checked that every call site gives host data
    (`self.grams(hyp, n)` with `hyp = ops.argmax(x, -1).tolist()` in `construct`), read
    where each argument is written."""
    fn = ctx.function
    if type(e) is not ast.Name or fn is None:
        return False
    a = analyzer(ctx)
    if a.rebinds(e.id, fn):
        return False
    sites = a.passed_arguments_in(e.id, fn)
    if not sites:
        return False
    saved = ctx.scope, ctx.function
    try:
        for arg, caller in sites:
            if caller is None:
                return False
            ctx.scope, ctx.function = ctx.scopes.scope_for(caller) or saved[0], caller
            if not _host(arg, ctx):
                return False
    finally:
        ctx.scope, ctx.function = saved
    return True


def _one_item(it: ast.expr, ctx: Context) -> bool:
    """Host data of one item (measured: `"-".join(... for i in ids)` over one id compiles)."""
    from npu_lsp.rules.graphmode.host_list_iterated import host_len

    n = host_len(it, ctx, 0)
    return n is not None and n < 2


def tolist_of_tensor(it: ast.expr, ctx: Context) -> ast.Call | None:
    """`x.tolist()` on a tensor, written in place or bound once to the name iterated."""
    if isinstance(it, ast.Name) and isinstance(ctx.function, (ast.FunctionDef, ast.AsyncFunctionDef)):
        values = [
            n.value
            for n in ast.walk(ctx.function)
            if isinstance(n, ast.Assign) and any(isinstance(t, ast.Name) and t.id == it.id for t in n.targets)
        ]
        rebound = any(
            isinstance(n, (ast.AugAssign, ast.AnnAssign, ast.For, ast.NamedExpr))
            and isinstance(n.target, ast.Name)
            and n.target.id == it.id
            for n in ast.walk(ctx.function)
        )
        if len(values) != 1 or rebound:
            return None
        it = values[0]
    if (
        isinstance(it, ast.Call)
        and isinstance(it.func, ast.Attribute)
        and it.func.attr == "tolist"
        and not it.args
        and not it.keywords
        and analyzer(ctx).kind(it.func.value) == Kind.TENSOR
    ):
        return it
    return None
