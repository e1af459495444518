"""MS152: a list grown inside a tensor-conditioned `while`, then stacked after it."""

from __future__ import annotations

import ast
import re
from collections import deque
from collections.abc import Iterable

from npu_lsp.astutil import BLOCKS_OF, SIMPLE_STATEMENTS, WORD_CHARS, blocks_of
from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.dynamic_shape import (
    declared_dynamic_read,
    declared_dynamic_read_in_method,
    dynamic_shape,
    dynamic_shape_read,
    shape_read_of,
    size_read,
)
from npu_lsp.rules.graphmode.entries import entry_callers
from npu_lsp.rules.graphmode.flow import Analyzer, Kind, analyzer
from npu_lsp.rules.graphmode.helpers import GraphRule, file_mentions
from npu_lsp.rules.graphmode.host_values import host_scalar
from npu_lsp.rules.graphmode.ranks import declared_dynamic_size, run_time_sizes

_GROW = frozenset({"append", "extend", "insert"})
#: the builtins that fold a whole list and fail on an empty one, as MindSpore compiles them
_FOLDS = frozenset({"max", "min", "sum"})
# mindspore.ops functions and primitives that need at least one element
_NEEDS_ELEMENTS = frozenset({"stack", "concat", "cat", "hstack", "vstack", "Stack", "Concat"})


@rule(code="MS152", name="list-grown-in-tensor-loop", severity="error", family="graphmode")
class ListGrownInTensorLoop(GraphRule):
    """## What it does
    Flags `ops.stack(lst)` / `ops.concat(lst)` (and the `Stack` / `Concat` primitives) in
    compiled code when `lst` is grown (`append`, `extend`, `insert`, `lst += [...]`) inside a `while` loop
    whose condition depends on tensor values, such as the greedy NMS loop
    `while i < max_det: keep.append(...)` with a tensor `i`, or a condition on the length of
    a tensor the body shrinks by a boolean mask (`while order.shape[0] > 0:` ...
    `order = order[1:][iou < thresh]`, or `order = order[inds + 1]` with `inds =
    ops.nonzero(...).reshape(-1)`), whose shape is then known only at run time; or when
    `lst` starts empty and is grown only in a `for i in range(n)` whose bound is a run-time
    scalar read from a tensor (`n = int((scores > t).sum())`), or in a `for` directly over a
    tensor whose length is known only at run time (`for g in ops.unique(batch)[0]`,
    `for i in ops.nonzero(mask)`), or over the size of a `construct` input whose dimension
    the file declares unknown with `set_inputs` (`range(x.shape[0])`, `ops.unstack(x, 0)`,
    the input itself or `enumerate` of it, also in a method of the cell or of an
    `@ms.jit_class` / plain object the cell holds that `construct` gives the input,
    under `net.set_inputs(Tensor(shape=[None, 3, 4], ...))`, any dimension `None`; or a
    tensor computed from such an input that keeps the unknown dimension, `y = ops.relu(x)`,
    `x = x * 2` before the method is called), or, under LAX, the size of a value JIT
    Fallback made (`range(x.shape[0])` after `x = x + math.floor(x.max()) * 0`): that loop
    is unrolled while compiling, with
    no iterations (a list holding elements before such a loop cannot be stacked either);
    a `while` whose test reads such a size (`while t < x.shape[0]:`) is compiled once, as
    for a tensor condition.
    A tuple or list grown by concatenation (`outs = outs + (r,)`, `outs += (r,)`) in such
    a loop is as empty. `max(lst)` / `min(lst)` / `sum(lst)` of a list left empty that way
    are flagged too ("max() arg is an empty sequence"; `sum`: "Cannot join the return
    values of different branches"), `len(lst)` compiles.
    The same for a list comprehension over such a `range` (`[v[i] for i in
    range(v.shape[0])]` after `masked_select`) or directly over a dynamic-shape result
    (`[r * 2 for r in ops.masked_select(x, m)]`); and `ops.stack` of a comprehension over
    the rows of a `set_inputs` input of unknown size, or over `range(x.shape[0])` of one
    (or a tensor computed from it, or a helper's `return [... for r in t]` given one),
    which MindSpore makes a sequence of
    dynamic length ("'TensorType' object is not subscriptable"; MS243 has its other
    readers). A `for` (or a comprehension) over a parameter
    every module-level call gives `ms.mutable([...], True)`, a sequence of dynamic length, is
    such a loop too, and such a parameter given to `ops.stack` itself (also `list(p)`), or to
    a concatenating op once the function grows it (`p.append(x)`). A constant index (`lst[0]`, `lst[-1]`) of a list left empty by such a
    loop is flagged as well, unless it sits under a test reading the list (`if len(lst) > 0:`).
    So is a reversing slice of such a list (`for idx in bps[::-1]:`, `bps[::-1]` returned
    or measured): MindSpore cannot reverse an empty list.
    Also a list of tensors repeated by a count read from a tensor at run time and stacked
    (`frames += [enc[i]] * int(durations[i])`, `[t] * n.item()`, also a tuple).

    ## Why is this bad?
    A tensor-conditioned `while` is compiled once, not unrolled, so the list seen after the
    loop has the elements it had before it: `ValueError: For 'Stack', the 'len of input_x'
    must be int and must >= 1, but got '0'` for a list that started empty, or `TypeError:
    'TensorType' object is not subscriptable` otherwise, at every syntax level.

    ## Example
    ```python
    def construct(self, x):
        outs = []
        i = ops.zeros((), ms.int32)
        while i < 3:
            outs.append(x * i)
            i = i + 1
        return ops.stack(outs)
    ```

    ## Use instead
    Loop a constant number of times (`for i in range(3):` is unrolled), or write the results
    into a preallocated tensor inside the loop.

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 3 (tensor-dependent `while` is compiled, as long as the values it
      carries keep their types).
    - A sequence of dynamic length given whole: the written set `heldout25a` (case
      `mut_list_dynamic_len_append`, probes `fix25a_mu_*`): `ops.stack(feats)` of
      `ms.mutable([...], True)` (a list or a tuple, copied or not) rejected at both levels
      ("'TensorType' object is not subscriptable"), and `ops.concat(feats)` after
      `feats.append(x)`; `ops.concat(feats)` of it as given, `ops.addn`, `len`, indexing,
      appending then accumulating, and a fixed-length `ms.mutable([...])` appended to then
      stacked compile.
    - Direct iteration of an input `set_inputs` declares `[None, 3]`: written/lax probes
      `genfresh34_dy_*` (`for r in x` then `ops.stack`, `outs[0]`, in `construct`, a
      method, a jit_class or plain object's method: rejected at both levels; accumulating
      a tensor, a declared `[2, 3]` and no `set_inputs` compile).
    - Derived tensors, any `None` dimension, tuples grown by concatenation, `max` / `min` /
      `sum` of the emptied list, comprehensions stacked: written/lax probes `fix35b_dy_*`
      (54 judged; a declared `[2, 3]`, `len(lst)` and a comprehension indexed at `[0]`
      compile), difftest v6 seed 12000541.
    - Under LAX, `range(x.shape[0])` / `range(len(x))` of a JIT Fallback value (`x +
      math.floor(x.max()) * 0`, `ms.Tensor(x.asnumpy())`, `x * self.mask` after `if
      self.mask is None: self.mask = ...`): written/lax probes `genfresh37_ip_*`,
      `genfresh37_mk_*` (rejected; after `.item()` it compiles), fresh v6 seeds 12001101,
      12001001; a `while t < x.shape[0]:` over such a value is compiled once, as for a tensor
      condition: written/lax probes `genfresh38_it_while_shape_stack*`.
    - `ops.unstack(y, 0)` of a tensor computed from such an input (`y = x * 2`, a method's
      or a sub-cell's result, `mint.split` / `mint.cat` under a tensor `if`, `axis=0`),
      `ops.stack(ops.unstack(x, 0))` itself ("'...typing.Tuple' object is not
      subscriptable"), `ops.stack(tuple(r for r in x))` / `list(...)`, in `construct` or a
      closure: written/lax probes `genfresh39_us_*`, `genfresh39_su_*`,
      `genfresh39_si_stack_*` (rejected at both levels; `ops.unstack(y, 1)` of `[None, 3]`,
      a tensor accumulated over the rows, and a size a Parameter's shape fixes by
      broadcasting, `x + self.prev * 0` with a `(2, 3)` Parameter, compile: difftest v6
      seed 12000530); difftest v6 seeds 12001518, 12001215, 12001197.
    - Direct iteration of a dynamic-shape tensor: the written set `domains`
      (`gnn_readout_python_split`) and its `iterate_*` probes (an input tensor iterated, and
      a `masked_select` result accumulated without a list, compile).
    """

    nodes = (ast.Call, ast.Subscript)

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        if type(node) is ast.Subscript:
            return self._indexed(node, ctx)
        assert type(node) is ast.Call
        # not a generator itself: most nodes stop at these tests, for the cost of a call
        # rather than of a generator each
        if not node.args or ctx.function is None:
            return ()
        a0 = node.args[0]
        if type(a0) is ast.Call and type(a0.func) is ast.Attribute and a0.func.attr == "unstack":
            return self._unstacked_stacked(node, a0, ctx)
        if not (type(a0) is ast.Name or type(a0) is ast.ListComp or type(a0) is ast.BinOp) and not _sequence_copy(a0) and not _helper_call(a0):
            return ()
        if not file_mentions(ctx, "while") and not file_mentions(ctx, "range") and not file_mentions(ctx, "for "):
            # no loop anywhere: only a list repeated by a run-time count, or a sequence of
            # dynamic length given whole, to look for
            star = _has_star(ctx)
            if not (star or file_mentions(ctx, "mutable")) or not needs_elements(node.func, ctx):
                return ()
            given = _dynamic_len_given(node.args[0], node, ctx)
            if given is not None:
                return [ctx.diagnostic(self, node, given)]
            repeat = _repeated_by_scalar(node.args[0], node, ctx) if star else None
            return [ctx.diagnostic(self, node, _repeat_message(repeat, ctx))] if repeat is not None else ()
        if type(node.func) is ast.Name and node.func.id in _FOLDS:
            return self._folded(node, ctx)
        if not needs_elements(node.func, ctx):
            return ()
        return self._check(node, node.args[0], ctx)

    def _unstacked_stacked(self, node: ast.Call, arg: ast.Call, ctx: Context) -> Iterable[Diagnostic]:
        """`ops.stack(ops.unstack(x, 0))` of a tensor whose first dimension `set_inputs` leaves
        unknown (`_unstacked_declared_dynamic`): measured at both levels, written/lax probes
        `genfresh39_su_*`, difftest v6 seed 12001197 ("'...typing.Tuple' object is not
        subscriptable")."""
        if not _stacks(node.func, ctx) or not _unstacked_declared_dynamic(arg, ctx):
            return ()
        return [
            ctx.diagnostic(
                self,
                node,
                f"`{ctx.segment(arg)}` splits a tensor whose first dimension is known only at run time (`set_inputs` declares it `None`): MindSpore makes the parts a tuple of dynamic length, which cannot be stacked (\"'...typing.Tuple' object is not subscriptable\"); use the tensor itself",
            )
        ]

    def _folded(self, node: ast.Call, ctx: Context) -> Iterable[Diagnostic]:
        """`max(lst)` / `min(lst)` / `sum(lst)` of a list that starts empty and is grown only
        in a loop of unknown trip count: still empty here. Measured at both levels (written/lax
        probes `genfresh34_dy_for_max`, `fix35b_dy_for_{max,min,sum}_*`: over a `set_inputs`
        input, a tensor derived from one, a `masked_select` result, `range` of a run-time
        scalar): `max` / `min` fail ("max() arg is an empty sequence"), and so does `sum`
        ("Cannot join the return values of different branches"); `len(lst)` compiles."""
        a0 = node.args[0]
        if len(node.args) != 1 or node.keywords or type(a0) is not ast.Name or ctx.function is None:
            return ()
        fold = node.func.id  # type: ignore[attr-defined]
        if ctx.qualname(node.func) != "builtins." + fold:
            return ()
        name = a0.id
        # the loops first: most functions have none of unknown trip count before the call
        loop = _growing_scalar_range_loop(name, node, ctx)
        if loop is None:
            return ()
        start = analyzer(ctx).single_assignment(name, ctx.function)
        if isinstance(start, ast.List) and start.elts:
            return ()
        if _guarded(node, name, ctx):  # type: ignore[arg-type]
            return ()
        said = "Cannot join the return values of different branches" if fold == "sum" else f"{fold}() arg is an empty sequence"
        return [
            ctx.diagnostic(
                self,
                node,
                f"`{name}` starts empty and is grown only inside the `for` on line {loop.lineno}, whose length is known only at run time: the graph unrolls that loop while compiling with no passes, so `{name}` is still empty here and `{fold}({name})` fails (\"{said}\"); reduce a tensor instead (`ops.stack` the rows of a fixed count, or compute on the tensor itself)",
            )
        ]

    def wants_call(self, callee: type[ast.AST], called: str, receiver: str) -> bool:
        # `needs_elements`' name tests: `P.Stack()(...)`, a name resolving to a stacking op,
        # `x.stack(...)`, or any `self.<attr>(...)` (what `__init__` built decides)
        if callee is ast.Call:
            return True
        if callee is ast.Attribute:
            return called in _NEEDS_ELEMENTS or receiver == "self"
        return callee is ast.Name and (called in _NEEDS_ELEMENTS or called in _FOLDS)

    def file_calls(self, ctx: Context) -> frozenset[str] | None:
        # `needs_elements`' names: a stacking op's, a call of a call's (""), or an
        # attribute a class of the module holds on `self` as one (the class of any
        # compiled function's `self`, when no other class is written anywhere)
        classes = [c for c in ctx.tree.body if type(c) is ast.ClassDef]
        # invariant: every `class` statement of the tree is spelled by a `class` word of
        # `ctx.text`, so the count is at least the file's classes, and equals the
        # module-level ones only when no class is nested (test_definition_word_counts.py)
        counts = ctx.text_words()
        if counts is None or counts.get("class", 0) != len(classes):
            return None
        names = set(_NEEDS_ELEMENTS) | _FOLDS | {""}
        a = analyzer(ctx)
        for cls in classes:
            for attr, values in a.self_values(cls).items():
                if len(values) == 1 and type(values[0]) is ast.Call and _needs_elements_name(values[0].func, ctx):
                    names.add(attr)
        return frozenset(names)

    def _indexed(self, node: ast.Subscript, ctx: Context) -> Iterable[Diagnostic]:
        """`lst[0]` / `lst[-1]` of a list that starts empty and is grown only in a loop of
        unknown trip count: still empty here. Measured at both levels (written/famb probes
        `ix_*`, `mu_i`: "cannot get item by index from an empty sequence"); a list holding
        an element before the loop indexed (`ra_d`) and `len` of it (`ix_e`) compile."""
        if (
            type(node.value) is not ast.Name
            or not isinstance(node.ctx, ast.Load)
            or ctx.function is None
        ):
            return
        if _reversing_slice(node.slice):
            yield from self._reversed(node, node.value.id, ctx)
            return
        if not _constant_index(node.slice):
            return
        name = node.value.id
        start = analyzer(ctx).single_assignment(name, ctx.function)
        if not (isinstance(start, ast.List) and not start.elts):
            return
        if _guarded(node, name, ctx):
            return  # `if kept:` / `if len(kept) > 0:` folds to False: the read is not compiled
        loop = _growing_scalar_range_loop(name, node, ctx)
        if loop is not None:
            yield ctx.diagnostic(
                self,
                node,
                f"`{name}` starts empty and is grown only inside the `for` on line {loop.lineno}, whose length is known only at run time: the graph does not unroll that loop over known items, so `{name}` is still empty here and `{ctx.segment(node)}` fails (\"cannot get item by index from an empty sequence\")",
            )

    def _reversed(self, node: ast.Subscript, name: str, ctx: Context) -> Iterable[Diagnostic]:
        """`lst[::-1]` of a list left empty by loops of unknown trip count (as for `lst[0]`).
        Measured at both levels (written/heldout29b case `crf_viterbi_mask_lengths_python_loop`,
        probes `fix30a_rr_*`): MindSpore 2.10 cannot reverse an empty list ("For
        primitive:'list_getitem', cannot get item by index from an empty sequence"), whether
        the slice is iterated, measured or returned, and `[][::-1]` of a literal fails the
        same way; iterating the list itself (`for b in bps`), `len(bps)`, `reversed(bps)`
        under LAX, or the slice of a list the loop grew over a `range` of literals compile
        (other slices of the emptied list crash the process: not counted)."""
        assert ctx.function is not None
        start = analyzer(ctx).single_assignment(name, ctx.function)
        if not (isinstance(start, ast.List) and not start.elts) or _guarded(node, name, ctx):
            return
        loop = _growing_scalar_range_loop(name, node, ctx)
        if loop is not None:
            yield ctx.diagnostic(
                self,
                node,
                f"`{name}` starts empty and is grown only inside the `for` on line {loop.lineno}, whose length is known only at run time: the graph does not unroll that loop over known items, so `{name}` is still empty here, and MindSpore 2.10 cannot reverse an empty list: `{ctx.segment(node)}` fails (\"cannot get item by index from an empty sequence\"); iterate `reversed(...)` of a tensor or keep the steps in a tensor",
            )

    def _check(self, node: ast.Call, arg: ast.expr, ctx: Context) -> Iterable[Diagnostic]:
        comp = scalar_range_comprehension(arg, ctx)
        if comp is not None:
            yield ctx.diagnostic(
                self,
                node,
                f"the list comprehension on line {comp.lineno} runs over a `range` whose bound is a run-time scalar read from a tensor: the graph unrolls it while compiling, when the bound is not known, so the list is empty here",
            )
            return
        comp = _dynamic_len_comprehension(arg, ctx)
        if comp is not None:
            yield ctx.diagnostic(
                self,
                node,
                f"the list comprehension on line {comp.lineno} runs over `{ctx.segment(comp.generators[0].iter)}`, a sequence of dynamic length (`ms.mutable(..., True)`): the graph cannot unroll it over known items, so the list cannot be stacked here",
            )
            return
        stacks = _stacks(node.func, ctx)
        rows = computed_length_rows(arg, ctx) if stacks else None
        if rows is not None:
            yield ctx.diagnostic(
                self,
                node,
                f"the list comprehension on line {rows.lineno} runs over `{ctx.segment(rows.generators[0].iter)}`, a tensor whose length is known only at run time: the graph unrolls it while compiling, when that length is not known, so the list is empty here (\"For 'Stack', the 'len of input_x' must be int and must >= 1, but got '0'\"); stack or slice the tensor itself",
            )
            return
        rows = _declared_range_rows(arg, ctx) if stacks else None
        if rows is not None:
            yield ctx.diagnostic(
                self,
                node,
                f"the list comprehension on line {rows.lineno} runs over `{ctx.segment(rows.generators[0].iter)}`, the size of a tensor known only at run time (`set_inputs` declares a dimension `None`): MindSpore makes the list a sequence of dynamic length, which cannot be stacked (\"'TensorType' object is not subscriptable\"); stack or slice the tensor itself",
            )
            return
        # `tuple(r for r in x)` / `list(...)` of such rows: a copy of the same sequence of
        # dynamic length ("'...typing.Tuple' object is not subscriptable"; written/lax probes
        # `genfresh39_si_stack_*`, difftest v6 seed 12001215)
        copied = arg.args[0] if _sequence_copy(arg) else arg  # type: ignore[attr-defined]
        rows = dynamic_length_rows(copied if type(copied) in (ast.ListComp, ast.GeneratorExp) else arg, ctx) if stacks else None
        if rows is not None:
            yield ctx.diagnostic(
                self,
                node,
                f"the list comprehension on line {rows.lineno} runs over `{ctx.segment(rows.generators[0].iter)}`, a tensor whose shape is known only at run time (`set_inputs` declares a dimension `None`, or `x[:n]` of an `ms.mutable` int): MindSpore makes it a sequence of dynamic length, which cannot be stacked (\"'TensorType' object is not subscriptable\"); stack or slice the tensor itself",
            )
            return
        repeat = _repeated_by_scalar(arg, node, ctx)
        if repeat is not None:
            yield ctx.diagnostic(self, node, _repeat_message(repeat, ctx))
            return
        given = _dynamic_len_given(arg, node, ctx)
        if given is not None:
            yield ctx.diagnostic(self, node, given)
            return
        if type(arg) is not ast.Name:
            return
        name = arg.id
        loop = _growing_tensor_loop(name, node, ctx)
        if loop is not None:
            yield ctx.diagnostic(
                self,
                node,
                f"`{name}` is grown inside the tensor-conditioned `while` on line {loop.lineno}, which is compiled once, not unrolled: after the loop `{name}` still has the elements it had before it",
            )
            return
        scalar_loop = _growing_scalar_range_loop(name, node, ctx)
        if scalar_loop is not None:
            it = scalar_loop.iter
            if isinstance(it, ast.Call) and ctx.qualname(it.func) == "builtins.range" and any(
                _fallback_size_read(arg, ctx) for arg in it.args
            ):
                over = f"whose `range` bound `{ctx.segment(it.args[-1])}` is the size of a value JIT Fallback made (LAX holds it as a Python object)"
            elif isinstance(it, ast.Call) and ctx.qualname(it.func) == "builtins.range":
                over = "whose `range` bound is a run-time scalar read from a tensor"
            elif isinstance(it, ast.Name) and it.id in _dynamic_len_params(ctx):
                over = f"over `{it.id}`, a sequence of dynamic length (`ms.mutable(..., True)`) whose length is known only at run time"
            else:
                over = f"over `{ctx.segment(it)}`, a tensor whose length is known only at run time"
            start = analyzer(ctx).single_assignment(name, ctx.function)
            if isinstance(start, ast.List) and start.elts:
                message = f"`{name}` is grown only inside the `for` on line {scalar_loop.lineno}, {over}: the graph cannot unroll that loop while compiling, when its length is not known, so `{name}` cannot be stacked here (its length is known only at run time)"
            else:
                message = f"`{name}` starts empty and is grown only inside the `for` on line {scalar_loop.lineno}, {over}: the graph unrolls that loop while compiling, when its length is not known, so `{name}` is still empty here"
            yield ctx.diagnostic(self, node, message)


def _repeated_by_scalar(arg: ast.expr, call: ast.Call, ctx: Context) -> ast.BinOp | None:
    """`[t] * int(n)` (`(t,) * x.item()`) given to the call, or bound to / added into the name
    given to it before the call (`frames += [enc[i]] * int(durations[i])`): a display holding
    a graph variable times a run-time scalar. Measured (written/heldout16b probes `ls17_lm_*`):
    `ops.stack` of such a list fails at LAX and STRICT ("'TensorType' object is not
    subscriptable"); times a constant or a shape it compiles, and `[1.0] * int(n)` (constants)
    given to `len` compiles."""
    if not _may_repeat_display(ctx):
        return None
    if isinstance(arg, ast.BinOp):
        return arg if _display_times_scalar(arg, ctx) else None
    if not isinstance(arg, ast.Name) or ctx.function is None:
        return None
    at = (call.lineno, call.col_offset)
    for value in analyzer(ctx).assigned_values(arg.id, ctx.function):
        if not isinstance(value, ast.BinOp):
            continue
        if isinstance(value.op, ast.Add) and isinstance(value.right, ast.BinOp):
            value = value.right  # `frames += [t] * n`, indexed as `frames + [t] * n`
        line: int | None = getattr(value, "lineno", None)  # None: `x += v` indexed as a new `x + v`
        if line is not None and (line, value.col_offset) < at and _display_times_scalar(value, ctx):
            return value
    return None


#: how `[t] * n` / `(t,) * n` / `n * [t]` are spelled: without one in the text, no display
#: is repeated (a substring test, once per file)
_REPEAT_SPELLINGS = ("] *", "]*", ",) *", ",)*", "* [", "*[")
#: a `*` with one of `_REPEAT_SPELLINGS` around it: one search for the six (it starts at a
#: literal `*`, which `sre` skips to; six substring searches of a text without any scanned
#: the text six times, 4 M instructions on a 5,000-line file against 1 M)
_REPEAT_SPELLED = re.compile(r"\*(?:(?<=\]\*)|(?<=\] \*)|(?<=,\)\*)|(?<=,\) \*)| ?\[)")


def _may_repeat_display(ctx: Context) -> bool:
    hit = ctx.cache.get("ms152.repeats")
    if hit is None:
        text = ctx.text
        hit = ctx.cache["ms152.repeats"] = _REPEAT_SPELLED.search(text) is not None
    return bool(hit)


def _repeat_message(repeat: ast.BinOp, ctx: Context) -> str:
    return (
        f"`{ctx.segment(repeat)}` repeats a list of tensors a number of times read from a tensor at run time:"
        " the graph cannot build a list whose length is unknown while compiling, so it cannot be stacked here;"
        " repeat with tensors instead (`ops.gather` of repeated indices)"
    )


def _display_times_scalar(e: ast.BinOp, ctx: Context) -> bool:
    if not isinstance(e.op, ast.Mult):
        return False
    for seq, n in ((e.left, e.right), (e.right, e.left)):
        if (
            isinstance(seq, (ast.List, ast.Tuple))
            and host_scalar(n, ctx)
            and any(analyzer(ctx).kind(v) == Kind.TENSOR for v in seq.elts)
        ):
            return True
    return False


def needs_elements(func: ast.expr, ctx: Context) -> bool:
    """`ops.stack`, `P.Stack()`, or `self.concat` built in `__init__` as `P.Concat(...)`."""
    if type(func) is ast.Call:
        func = func.func
    elif type(func) is ast.Attribute and func.attr not in _NEEDS_ELEMENTS and not (
        type(func.value) is ast.Name and func.value.id == "self"
    ):
        return False  # an attribute chain's dotted name ends with its attribute
    elif type(func) is ast.Attribute and type(func.value) is ast.Name and func.value.id == "self":
        # once per held attribute of the function's class: most are sub-cells
        key = ("ms152-held", id(ctx.function))
        held: dict[str, bool] | None = ctx.cache.get(key)
        if held is None:
            held = ctx.cache[key] = {}
        hit = held.get(func.attr)
        if hit is None:
            a = analyzer(ctx)
            cls = a.owner_class(ctx.function)
            values = a.self_values(cls).get(func.attr, []) if cls is not None else []
            hit = held[func.attr] = (
                len(values) == 1 and isinstance(values[0], ast.Call) and _needs_elements_name(values[0].func, ctx)
            )
        return hit
    return _needs_elements_name(func, ctx)


def _needs_elements_name(func: ast.expr, ctx: Context) -> bool:
    if type(func) is ast.Attribute and func.attr not in _NEEDS_ELEMENTS:
        return False  # an attribute chain's dotted name ends with its attribute
    q = ctx.qualname(func) or ""
    return q.startswith("mindspore.") and q.rsplit(".", 1)[-1] in _NEEDS_ELEMENTS


def _growing_tensor_loop(name: str, call: ast.Call, ctx: Context) -> ast.While | None:
    """A `while` with a tensor-dependent condition that grows `name`, ends before `call`,
    and does not contain it."""
    for loop, grown in _while_loops(ctx):
        ended_before = (loop.end_lineno or loop.lineno) < call.lineno
        if name in grown and ended_before and (
            analyzer(ctx).kind(loop.test).dynamic or _shape_made_dynamic(loop, ctx) or _fallback_size_test(loop.test, ctx)
        ):
            return loop
    return None


def _fallback_size_test(test: ast.expr, ctx: Context) -> bool:
    """Under LAX, does the condition read the size of a value JIT Fallback made (`while t <
    x.shape[0]:` after `x = x + math.floor(x.max()) * 0`)? That size is a run-time value, so
    the loop is compiled once, as for a tensor condition (measured, written/lax probes
    `genfresh38_it_while_shape_stack*`: stacking what it appended fails, "For 'Stack', the
    'len of input_x' ... got '0'"; over a graph tensor it compiles; fresh v6 seed 12001318)."""
    return any(_fallback_size_read(n, ctx) for n in ast.walk(test) if isinstance(n, (ast.Subscript, ast.Call)))


def _shape_made_dynamic(loop: ast.While, ctx: Context) -> bool:
    """Does the condition read the length of a tensor (`order.shape[0] > 0`, `len(order)`,
    `order.size`) that the body rebinds to one whose shape is known only at run time (a
    boolean mask, `masked_select` / `nonzero` / `argwhere`...: `order = order[1:][iou < t]`)?
    The loop is then compiled once, as for a tensor condition (measured: the greedy NMS
    loops of the `vision` and `python` written sets, the `spec` probes wl_* and the `shapes`
    probes dw_*); a body that only slices (`order = order[1:]`) is unrolled per shape."""
    measured: set[str] = set()
    for n in ast.walk(loop.test):
        t = shape_read_of(n)  # type: ignore[arg-type]
        if isinstance(t, ast.Name):
            measured.add(t.id)
    if not measured:
        return False
    for st in loop.body:
        for n in ast.walk(st):
            if (
                isinstance(n, ast.Assign)
                and len(n.targets) == 1
                and isinstance(n.targets[0], ast.Name)
                and n.targets[0].id in measured
                and dynamic_shape(n.value, ctx)
            ):
                return True
    return False


def _guarded(node: ast.Subscript, name: str, ctx: Context) -> bool:
    """Is `node` under a test that reads `name` (`if kept:`, `if len(kept) > 0:`, `kept[0] if
    kept else x`, `kept and kept[0]`)?"""
    child: ast.AST = node
    parent = ctx.parent(node)
    while parent is not None and parent is not ctx.function:
        if isinstance(parent, (ast.If, ast.IfExp, ast.While)) and child is not parent.test:
            tests: list[ast.AST] = [parent.test]
        elif isinstance(parent, ast.BoolOp):
            tests = [v for v in parent.values if v is not child]
        else:
            tests = []
        if any(isinstance(n, ast.Name) and n.id == name for t in tests for n in ast.walk(t)):
            return True
        child, parent = parent, ctx.parent(parent)
    return False


def _reversing_slice(e: ast.expr) -> bool:
    """`[::-1]` (`[::-2]`): a slice with a negative step written in the source."""
    if type(e) is not ast.Slice:
        return False
    step = e.step
    return (
        isinstance(step, ast.UnaryOp)
        and isinstance(step.op, ast.USub)
        and isinstance(step.operand, ast.Constant)
        and type(step.operand.value) is int
        and step.operand.value > 0
    )


def _constant_index(e: ast.expr) -> bool:
    """`0`, `-1`: an int written in the source."""
    if isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.USub):
        e = e.operand
    return isinstance(e, ast.Constant) and type(e.value) is int


def _growing_scalar_range_loop(name: str, call: ast.expr, ctx: Context) -> ast.For | None:
    """A `for ... in range(n)` with `n` a run-time scalar (`int(t.sum())`, `t.item()`) that
    grows `name`, a list bound once to a list display (`[]` or one holding elements), and
    ends before `call`. Measured at both levels:
    `for i in range(int((s > t).sum())): kept.append(x[i])` then `ops.stack(kept)` fails
    ("For 'Stack', the 'len of input_x' must be int and must >= 1, but got '0'"), and
    `ops.stack(kept) if kept else ...` with "'TensorType' object is not subscriptable"; the
    same loop accumulating a tensor or counting with `len(kept)` compiles (silently
    running no iterations). A size read of a tensor whose shape is known only at run time
    (`range(v.shape[0])` after `masked_select`, `unique`, `argwhere`, a boolean mask) is
    such a bound too (measured: the `shapes` probes rl_*). A list holding elements before
    such a loop is no better: stacking or concatenating it fails at both levels ("'TensorType'
    object is not subscriptable", "For 'Stack', the 'len of input_x' ... got '0'"), while
    `len`, `[0]` and returning it compile (measured: the `famb` probes ra_*, the `shapes`
    probe rl_masked_select_prefilled_stack)."""
    func = ctx.function
    if func is None:
        return None
    # loops over `range` of literals have a known trip count: when every loop before the
    # call is one, the name's binding (the function's binding index) is never needed
    loops = [
        n for n in _range_loops(func, ctx) if (n.end_lineno or n.lineno) < call.lineno and not _literal_range(n.iter, ctx)
    ]
    if not loops:
        return None
    a = analyzer(ctx)
    start = a.single_assignment(name, func)
    rebound = not isinstance(start, ast.List)
    if rebound and not _starts_empty_then_concatenated(name, func, a):
        return None
    grown_in = _rebound_growth if rebound else grown_names
    for n in loops:
        if (
            _unknown_trip_count(n.iter, ctx, a)
            and name in set(grown_in(n.body))
        ):
            everywhere = list(grown_in(getattr(func, "body", [])))
            return n if everywhere.count(name) == list(grown_in(n.body)).count(name) else None
    return None


def _starts_empty_then_concatenated(name: str, func: ast.AST, a: Analyzer) -> bool:
    """Is `name` bound first to `()` / `[]` and otherwise only to itself plus a display
    (`outs = outs + (r * 2,)`, `outs += (r,)`, `outs = outs + [r]`)? Grown that way only in a
    `for` of unknown trip count, it is as empty after the loop as a list appended to there
    (measured at both levels: written/lax probes `genfresh34_dy_for_tuple`,
    `fix35b_dy_for_tuple_*`, `fix35b_dy_for_list_concat_op`)."""
    values = a.assigned_values(name, func)
    if len(values) < 2 or len(values) != len(a.bindings_of(name, func)):
        return False
    first = values[0]
    if not (type(first) in (ast.List, ast.Tuple) and not first.elts):  # type: ignore[attr-defined]
        return False
    return all(_concatenated_to(v, name) for v in values[1:])


def _concatenated_to(v: ast.expr, name: str) -> bool:
    """`name + (item,)` / `name + [item]`: the sequence `name` with a display added."""
    return (
        type(v) is ast.BinOp
        and type(v.op) is ast.Add
        and type(v.left) is ast.Name
        and v.left.id == name
        and type(v.right) in (ast.List, ast.Tuple)
    )


def _rebound_growth(body: list[ast.stmt]) -> Iterable[str]:
    """Names a loop body grows by binding them to themselves plus a display (`outs = outs +
    (r,)`, `outs += (r,)`)."""
    for st in body:
        for s in ast.walk(st):
            if type(s) is ast.Assign and len(s.targets) == 1 and type(s.targets[0]) is ast.Name:
                if _concatenated_to(s.value, s.targets[0].id):
                    yield s.targets[0].id
            elif (
                type(s) is ast.AugAssign
                and type(s.op) is ast.Add
                and type(s.target) is ast.Name
                and type(s.value) in (ast.List, ast.Tuple)
            ):
                yield s.target.id


def scalar_range_comprehension(arg: ast.expr, ctx: Context) -> ast.ListComp | None:
    """`[... for i in range(n)]` (given inline, or a name bound once to it) with `n` a
    run-time scalar, as for `_growing_scalar_range_loop`: a comprehension is unrolled the
    same way (measured: the `shapes` probe rl_comp_masked_select_stack and the `reach2`
    probes lc_*: `range(v.shape[0])` after `masked_select`, `range(len(ops.nonzero(x)))`,
    `range(int(x.sum()))` then `ops.stack` fail at LAX and STRICT; over an input's shape
    they compile)."""
    a = analyzer(ctx)
    if type(arg) is ast.Name:
        func = ctx.function
        if func is None:
            return None
        # the function's text first: a name bound to a comprehension needs one in the
        # function, and most hold none; the binding index (`single_assignment`) is then
        # not built for this question (MS185's `_comprehended` asks the same way)
        if not may_comprehend(func, ctx):
            return None
        value = a.single_assignment(arg.id, func)
        if not isinstance(value, ast.ListComp):
            return None
        arg = value
    if not isinstance(arg, ast.ListComp) or len(arg.generators) != 1:
        return None
    it = arg.generators[0].iter
    if not (
        isinstance(it, ast.Call)
        and isinstance(it.func, ast.Name)
        and ctx.qualname(it.func) == "builtins.range"
        and it.args
    ):
        return None
    if any(a.kind(b) == Kind.VAR or dynamic_shape_read(b, ctx) for b in it.args):
        return arg
    return None


def _dynamic_len_comprehension(arg: ast.expr, ctx: Context) -> ast.ListComp | None:
    """`[... for t in items]` (inline, or a name bound once to it) with `items` a parameter
    given a sequence of dynamic length (`_dynamic_len_params`; measured: the famb probe
    `mu_h`, rejected at both levels once stacked)."""
    if not file_mentions(ctx, "mutable"):
        return None  # `_dynamic_len_params` finds none without an `ms.mutable` call
    if isinstance(arg, ast.Name) and ctx.function is not None:
        value = analyzer(ctx).single_assignment(arg.id, ctx.function)
        arg = value if isinstance(value, ast.ListComp) else arg
    if not isinstance(arg, ast.ListComp) or len(arg.generators) != 1:
        return None
    it = arg.generators[0].iter
    return arg if isinstance(it, ast.Name) and it.id in _dynamic_len_params(ctx) else None


def dynamic_length_rows(arg: ast.expr, ctx: Context) -> ast.ListComp | ast.GeneratorExp | None:
    """`[f(r) for r in x]` (inline, or a name bound once to it; also a generator expression)
    over a tensor whose first dimension is known only at run time (`set_inputs` declares it
    `None`; also a tensor computed from such an input that keeps the dimension, or
    `enumerate` of one): MindSpore makes it a sequence of dynamic length, not an unrolled
    list. Measured at both levels (written/lax probes `genfresh34_dy_comp_*`,
    `fix35b_dy_comp_*`; difftest v6 seed 12000541): `ops.stack` of it fails ("'TensorType'
    object is not subscriptable"), what else does is MS243's; indexing it from the front
    and returning it compile."""
    func = ctx.function
    if not run_time_sizes(ctx) or func is None:
        return None
    if type(arg) is ast.Name:
        value = analyzer(ctx).single_assignment(arg.id, func)
        if not (isinstance(value, ast.ListComp) and may_comprehend(func, ctx)) and not _helper_call(value):
            return None
        arg = value  # type: ignore[assignment]
    elif type(arg) is not ast.ListComp and type(arg) is not ast.GeneratorExp and not _helper_call(arg):
        return None
    if _helper_call(arg):
        # `ops.stack(rows(x))` of a module-level `def rows(t): return [r * 2 for r in t]`:
        # its comprehension, in its own call contexts (probes genfresh34_dy_helper_comp_stack,
        # fix35b_dy_helper_comp_*)
        call = arg
        got = _returned_comprehension(call, ctx)  # type: ignore[arg-type]
        if got is None:
            return None
        helper, arg = got
        gen = arg.generators[0]
        params = [p.arg for p in (*helper.args.posonlyargs, *helper.args.args)]
        if type(gen.iter) is ast.Name and gen.iter.id in params:
            # over a parameter: the tensor the call gives it, here
            at = params.index(gen.iter.id)
            given = call.args[at] if at < len(call.args) else None  # type: ignore[attr-defined]
            if given is None or type(given) is ast.Starred or len(arg.generators) != 1 or gen.ifs or gen.is_async:
                return None
            return arg if iterated_declared_dynamic(given, ctx) else None
        func = helper
    if not isinstance(arg, (ast.ListComp, ast.GeneratorExp)) or len(arg.generators) != 1:
        return None
    gen = arg.generators[0]
    if gen.ifs or gen.is_async:
        return None
    return arg if iterated_declared_dynamic(gen.iter, ctx, comprehension=True, func=func) else None


def _declared_range_rows(arg: ast.expr, ctx: Context) -> ast.ListComp | ast.GeneratorExp | None:
    """`[x[i] for i in range(x.shape[0])]` (inline, or a name bound once to it; also
    `range(len(x))`, a generator expression) with `x` a tensor whose first dimension the file
    declares unknown (`set_inputs`), or one computed from it that keeps the dimension, in
    `construct`, a sub-cell, a helper. Measured at both levels (written/lax probes
    `fix37a_dy_comp_range_*`, difftest v6 seeds 12000551, 12000783): `ops.stack` of it
    fails with "'TensorType' object is not subscriptable", as over the rows themselves; over
    a declared size (`[2, 3]`) or the known second dimension it compiles."""
    func = ctx.function
    if not ctx.mentions("set_inputs") or func is None:
        return None
    if type(arg) is ast.Name:
        if not may_comprehend(func, ctx):
            return None
        arg = analyzer(ctx).single_assignment(arg.id, func)  # type: ignore[assignment]
    if not isinstance(arg, (ast.ListComp, ast.GeneratorExp)) or len(arg.generators) != 1:
        return None
    gen = arg.generators[0]
    it = gen.iter
    if gen.ifs or gen.is_async or not (type(it) is ast.Call and len(it.args) == 1 and not it.keywords):
        return None
    if type(it.func) is not ast.Name or ctx.qualname(it.func) != "builtins.range":
        return None
    bound = it.args[0]
    if declared_dynamic_read(bound, ctx):
        return arg
    read = size_read(bound)
    if read is None:
        return None
    t, dim = read
    return arg if declared_dynamic_size(t, dim if isinstance(dim, int) else None, func, ctx, comprehension=True) else None


def computed_length_rows(arg: ast.expr, ctx: Context) -> ast.ListComp | ast.GeneratorExp | None:
    """`[f(r) for r in v]` (inline, or a name bound once to it; also a generator expression)
    over a tensor a dynamic-shape operator made (`v = ops.masked_select(x, x > 0)`,
    `ops.nonzero(m)`: `dynamic_shape`). Measured at both levels (written/lax probes
    `fix35b_dy_comp_{masked_stack,len_masked,sum_masked}`): `ops.stack` of it fails as of an
    empty list ("got '0'"), `len` and `sum` with "The pointer[seq_abs] is null"."""
    func = ctx.function
    if func is None or not may_comprehend(func, ctx):
        return None
    if type(arg) is ast.Name:
        value = analyzer(ctx).single_assignment(arg.id, func)
        if not isinstance(value, ast.ListComp):
            return None
        arg = value
    if not isinstance(arg, (ast.ListComp, ast.GeneratorExp)) or len(arg.generators) != 1:
        return None
    gen = arg.generators[0]
    if gen.ifs or gen.is_async:
        return None
    return arg if dynamic_shape(gen.iter, ctx) else None


def _helper_call(e: ast.expr | None) -> bool:
    """`rows(x)`: a call of a plain name."""
    return type(e) is ast.Call and type(e.func) is ast.Name


def _returned_comprehension(call: ast.Call, ctx: Context) -> tuple[ast.FunctionDef, ast.ListComp] | None:
    """(the function, its comprehension) when `call` calls a module-level function whose
    body is one `return [...]` of a list comprehension."""
    assert type(call.func) is ast.Name
    bound = ctx.module_bindings().get(call.func.id, [])
    if len(bound) != 1 or type(bound[0]) is not ast.FunctionDef:
        return None
    helper = bound[0]
    body = [st for st in helper.body if not (type(st) is ast.Expr and type(st.value) is ast.Constant)]
    if len(body) != 1 or type(body[0]) is not ast.Return or type(body[0].value) is not ast.ListComp:
        return None
    return helper, body[0].value


def _literal_range(it: ast.expr, ctx: Context) -> bool:
    """`range(3)`, `range(0, 8, 2)`: a `range` of literals (`_unknown_trip_count` says no)."""
    return (
        type(it) is ast.Call
        and type(it.func) is ast.Name
        and all(type(x) is ast.Constant for x in it.args)
        and not it.keywords
        and ctx.qualname(it.func) == "builtins.range"
    )


def may_comprehend(func: ast.AST, ctx: Context) -> bool:
    """May `func` hold a comprehension? Its text has more `for` words than it has `for`
    statements (every comprehension adds one; a `for` in a string or a comment only makes
    the answer a cautious yes). Once per function, from its text and `_range_loops`' walk.
    MS152 and MS185 ask it before a name's binding (`single_assignment`): without a
    comprehension no name is bound to one, and the function's binding index is not built."""
    key = ("ms152-comprehends", id(func))
    hit: bool | None = ctx.cache.get(key)
    if hit is None:
        first, last = getattr(func, "lineno", None), getattr(func, "end_lineno", None)
        if first is None or last is None or not ctx.text.isascii():
            hit = True
        else:
            first = min((d.lineno for d in getattr(func, "decorator_list", ())), default=first)
            _range_loops(func, ctx)
            text = "\n".join(ctx.lines[first - 1 : last])
            # the `for` words (what `ascii_words(text).count("for")` counts) found where
            # "for" occurs, not by a translate and split of the whole text: every compiled
            # function asks, and holds a few
            fors = spelled = 0
            find = text.find
            i = find("for")
            while i >= 0:
                spelled += 1
                j = i + 3
                if (i == 0 or text[i - 1] not in WORD_CHARS) and text[j : j + 1] not in WORD_CHARS:
                    fors += 1
                i = find("for", j)
            # a `for` glued to a number (`[1for x in y]` parses) is no word of its own: when
            # the text spells `for` inside a word, such a number is looked for (cautious yes)
            hit = fors > ctx.cache[("ms152-for-statements", id(func))] or (
                spelled > fors and _GLUED_FOR.search(text) is not None
            )
        ctx.cache[key] = hit
    return hit


#: a number glued to a `for` keyword (`1for`, `1jfor`): a word starting with a digit
_GLUED_FOR = re.compile(r"\b\d\w*for\b")


def _unknown_trip_count(it: ast.expr, ctx: Context, a: Analyzer) -> bool:
    """`range(n)` with `n` a run-time scalar or a size read of a dynamic-shape tensor, or a
    dynamic-shape tensor iterated directly (`for g in ops.unique(batch)[0]`, `for i in
    ops.nonzero(mask)`: measured at both levels, the loop is unrolled with no iterations and
    stacking what it appended fails; iterating an input tensor of a static shape compiles)."""
    if isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and ctx.qualname(it.func) == "builtins.range":
        return any(
            a.kind(arg) == Kind.VAR
            or dynamic_shape_read(arg, ctx)
            or declared_dynamic_read(arg, ctx)
            or _kept_declared_dynamic_read(arg, ctx)
            or _fallback_size_read(arg, ctx)
            for arg in it.args
        )
    if isinstance(it, ast.Name) and it.id in _dynamic_len_params(ctx):
        return True
    return (
        dynamic_shape(it, ctx)
        or _unstacked_declared_dynamic(it, ctx, mutable=True)
        or iterated_declared_dynamic(it, ctx, loop=True)
    )


def _fallback_size_read(e: ast.expr, ctx: Context) -> bool:
    """Under LAX, `range(x.shape[0])` / `range(len(x))` of a value JIT Fallback made
    (`x = x + math.floor(x.max()) * 0`, `x + ms.Tensor(x.asnumpy())`, `x * self.mask` with
    `self.mask` stored under `if self.mask is None:`): its size is unknown while compiling,
    so the loop is unrolled with no turn (measured, written/lax probes `genfresh37_ip_*`,
    `genfresh37_mk_*`: stacking what it appended fails, "For 'Stack', the 'len of input_x'
    ... got '0'"; after `x + x.max().item() * 0` or `len(str(x.shape))` it compiles; fresh
    v6 seed 12001101). A name joined with None under a tensor condition is not counted
    (its `ops.shape(v)[0]` compiles: `OpaqueValues`'s `none_joins`)."""
    if ctx.scope is None or ctx.scope.level != "lax" or ctx.function is None:
        return False
    read = size_read(e)
    if read is None:
        return False
    from npu_lsp.rules.graphmode.opaque_value_query import OpaqueValues, has_fallback

    if not has_fallback(ctx):
        return False
    o = OpaqueValues(ctx, none_joins=False)
    return o.value(read[0], ctx.function, o.opaque_params(ctx.function))


def _kept_declared_dynamic_read(e: ast.expr, ctx: Context) -> bool:
    """`range(x.shape[0])` / `range(len(x))` where `x` is not the `construct` input itself but
    a tensor that keeps its declared unknown dimension (`declared_dynamic_size`: the input
    given to a helper, an `@ms.jit` function or a sub-cell, `x = x * 2` first), read in
    any branch. The loop runs no turn while compiling, as over the input itself (measured,
    difftest v6 seed 12000684, written/lax probes `fix36b_dr_*`)."""
    if not run_time_sizes(ctx) or ctx.function is None:
        return False
    read = size_read(e)
    if read is None:
        return False
    t, dim = read
    return declared_dynamic_size(t, dim if isinstance(dim, int) else None, ctx.function, ctx)


def iterated_declared_dynamic(
    it: ast.expr, ctx: Context, comprehension: bool = False, func: ast.AST | None = None, loop: bool = False
) -> bool:
    """An input of `construct` (or a method's parameter every call gives one) whose first
    dimension the file declares unknown (`net.set_inputs(Tensor(shape=[None, 3]))`),
    iterated directly (`for r in x`, `for i, r in enumerate(x)`). Measured (written/lax
    probes `genfresh34_dy_*`, difftest v6 seed 12000528): unrolled with no iterations as
    `range(x.shape[0])` is, at both levels: stacking what it appended fails ("For 'Stack',
    the 'len of input_x' must be int and must >= 1, but got '0'"), so do `outs[0]` and
    `max(outs)`; accumulating a tensor over it compiles (`dy_for_acc`). `loop`: `it` is the
    iterable of a `for` statement (MS152), which over a size of an `ms.mutable` int is of
    run-time length too."""
    if isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "enumerate" and len(it.args) == 1:
        it = it.args[0]
    if not ctx.mentions("set_inputs"):
        # a comprehension over `x[:n]` of an `ms.mutable` int is one of run-time length too
        # (written/lax probes `genfresh42_sl_*`), and so is a `for` statement over it or over
        # `ops.tile(x[:1], (n, 1))` (probes `fix43b_st_*`: appending rows then `ops.stack`
        # fails, "got '0'"; accumulating a tensor compiles; difftest v6 seed 12001214)
        func = func if func is not None else ctx.function
        return (comprehension or loop) and func is not None and ctx.mentions("mutable") and declared_dynamic_size(it, None, func, ctx, comprehension=True)
    if isinstance(it, ast.Name):
        # any dimension: iterating `[2, None]` is of dynamic length too (probes
        # genfresh34_dy_for_stack_col, fix35b_dy_col_*: "got '0'", "empty sequence", "'TensorType'")
        read = ast.Attribute(value=it, attr="shape", ctx=ast.Load())
        read.lineno = getattr(it, "lineno", 0)
        if declared_dynamic_read_in_method(read, ctx, func):
            return True
    # a tensor computed from such an input that keeps the unknown dimension (`y =
    # ops.relu(x) * 2`, `x = x * 2` before a jit_class method is given it, a closure's
    # result): the shapes model, run with two sizes for the declared `None`, sees that
    # dimension change (probes genfresh34_dy_for_stack_derived, dy_jitclass_rebound_first,
    # dy_jitclass_two_callers)
    func = func if func is not None else ctx.function
    return func is not None and declared_dynamic_size(it, None, func, ctx, comprehension=comprehension)


def _unstacked_declared_dynamic(it: ast.expr, ctx: Context, mutable: bool = False) -> bool:
    """`ops.unstack(x)` / `ops.unstack(x, 0)` of a `construct` input whose first dimension
    the file declares unknown (`net.set_inputs(Tensor(shape=[None, ...]))`). Measured (written/
    heldout29b cases `dyn_set_inputs_python_loop_over_batch`, `r2_dyn_set_inputs_unstack_batch`,
    probes `fix29d_dyn_*`): a `for` over it, as over `range(x.shape[0])`, is unrolled with no
    iterations, and stacking what it appended fails ("For 'Stack', the 'len of input_x' must
    be int and must >= 1, but got '0'")."""
    if not (isinstance(it, ast.Call) and it.args and isinstance(it.args[0], ast.Name)):
        return False
    if ctx.qualname(it.func) != "mindspore.ops.unstack":
        return False
    axis = it.args[1] if len(it.args) > 1 else next((k.value for k in it.keywords if k.arg == "axis"), None)
    if axis is not None and not (isinstance(axis, ast.Constant) and axis.value == 0):
        return False
    # the first dimension's size read, as `declared_dynamic_read` reads it
    read = ast.Subscript(value=ast.Attribute(value=it.args[0], attr="shape", ctx=ast.Load()), slice=ast.Constant(0), ctx=ast.Load())
    if declared_dynamic_read(read, ctx):
        return True
    # a tensor computed from such an input that keeps the unknown first dimension (`y = x *
    # 2`, `x = self.stage0(x)` through a method or a sub-cell, `mint.split` / `mint.cat` under
    # a tensor `if`): measured, written/lax probes `genfresh39_us_*`, difftest v6 seed 12001518;
    # `mutable` (a `for` over it): or one an `ms.mutable` int sizes (`ops.tile(x[:1], (n, 1))`,
    # probe `fix43b_st_tile_unstack`)
    sized = ctx.mentions("set_inputs") or (mutable and ctx.mentions("mutable"))
    return ctx.function is not None and sized and declared_dynamic_size(it.args[0], 0, ctx.function, ctx)


def _dynamic_len_params(ctx: Context) -> frozenset[str]:
    """The parameters of the compiled entry being checked (a jit function or a `construct`)
    that every module-level call gives a sequence of dynamic length: `ms.mutable([...], True)`
    or `ms.mutable(seq, dynamic_len=True)`, inline or a name bound once at module level to
    it. A `for` over one has a length known only at run time: measured at both levels (the
    written/famb probes `mu_*`, the `functional` case `mutable_list_append_in_jit`), a list
    grown in it is empty after it (`ops.stack` / `ops.concat` fail), while accumulating a
    tensor over it, `ms.mutable(seq)` of a fixed length and a plain list compile."""
    func = ctx.function
    scope = ctx.scope
    if scope is None or func is None or scope.function is not func or not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return frozenset()
    key = ("ms152-dynamic-len-params", id(func))
    hit: frozenset[str] | None = ctx.cache.get(key)
    if hit is not None:
        return hit
    names = [p.arg for p in (*func.args.posonlyargs, *func.args.args)]
    if scope.kind == "construct":
        names = names[1:]
    callers = entry_callers(func, scope.kind, ctx) if names else None
    seen: dict[str, bool] = {}
    if callers is not None and ctx.mentions("mutable"):
        for node in ast.walk(ctx.tree):
            if not isinstance(node, ast.Call) or not callers.calls(node):
                continue
            if any(isinstance(v, ast.Starred) for v in node.args):
                seen.clear()
                break
            given = {k.arg: k.value for k in node.keywords if k.arg is not None}
            for i, name in enumerate(names):
                arg = node.args[i] if i < len(node.args) else given.get(name)
                seen[name] = seen.get(name, True) and arg is not None and _dynamic_len_sequence(arg, ctx)
    hit = frozenset(n for n, ok in seen.items() if ok)
    ctx.cache[key] = hit
    return hit


def _dynamic_len_given(arg: ast.expr, call: ast.Call, ctx: Context) -> str | None:
    """The message when `arg` is a parameter given a sequence of dynamic length
    (`_dynamic_len_params`, never rebound; also `list(p)` / `tuple(p)` of one) and the call
    cannot take it: `ops.stack` at all, the concatenating ops once the function grows it.
    Measured at both levels (written/heldout25a probes `fix25a_mu_*`, case
    `mut_list_dynamic_len_append`): `ops.stack(feats)` of `ms.mutable([...], True)` (a list
    or a tuple, also copied with `list(feats)`) fails ("'TensorType' object is not
    subscriptable"); `ops.concat(feats)` of it compiles, but not after `feats.append(x)`
    ("Shapes number and types number must be equal"); `ops.addn`, `len`, indexing and a
    `for` accumulating a tensor over it compile."""
    if not file_mentions(ctx, "mutable") or ctx.function is None:
        return None
    if _sequence_copy(arg):
        arg = arg.args[0]  # type: ignore[attr-defined]
    if not isinstance(arg, ast.Name) or arg.id not in _dynamic_len_params(ctx):
        return None
    func = ctx.function
    if analyzer(ctx).rebinds(arg.id, func):
        return None
    grown = arg.id in set(grown_names(getattr(func, "body", [])))
    if not grown and not _stacks(call.func, ctx):
        return None
    how = "grown in this function " if grown else ""
    return (
        f"`{arg.id}` is a sequence of dynamic length (`ms.mutable(..., True)`) {how}whose length is known only at run time:"
        " the graph cannot stack or concatenate it (\"'TensorType' object is not subscriptable\"); give `ms.mutable` a"
        " list of fixed length (no `dynamic_len`), or stack the tensors before the call"
    )


def _sequence_copy(e: ast.expr) -> bool:
    """`list(x)` / `tuple(x)`: a copy of one sequence."""
    return type(e) is ast.Call and type(e.func) is ast.Name and e.func.id in ("list", "tuple") and len(e.args) == 1


def _stacks(func: ast.expr, ctx: Context) -> bool:
    """Is the stacking op `ops.stack` / `P.Stack()` (not a concatenating one)?"""
    if isinstance(func, ast.Call):
        func = func.func
    elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self":
        a = analyzer(ctx)
        cls = a.owner_class(ctx.function)
        values = a.self_values(cls).get(func.attr, []) if cls is not None else []
        if len(values) != 1 or not isinstance(values[0], ast.Call):
            return False
        func = values[0].func
    q = ctx.qualname(func) or ""
    return q.startswith("mindspore.") and q.rsplit(".", 1)[-1] in ("stack", "Stack")


def _dynamic_len_sequence(e: ast.expr, ctx: Context) -> bool:
    """`ms.mutable(seq, True)` / `ms.mutable(seq, dynamic_len=True)`, or a name bound once at
    module level to it."""
    if isinstance(e, ast.Name):
        e = analyzer(ctx)._module_assignments().get(e.id)  # type: ignore[assignment]
    if not isinstance(e, ast.Call) or not (ctx.qualname(e.func) or "").startswith("mindspore.") or not (ctx.qualname(e.func) or "").endswith(".mutable"):
        return False
    flag = e.args[1] if len(e.args) > 1 else next((k.value for k in e.keywords if k.arg == "dynamic_len"), None)
    return isinstance(flag, ast.Constant) and flag.value is True


def _has_star(ctx: Context) -> bool:
    """Does the text spell `*` at all (once per file: every call of compiled code asks)?"""
    hit: bool | None = ctx.cache.get("ms152.star")
    if hit is None:
        hit = ctx.cache["ms152.star"] = "*" in ctx.text
    return hit


def _range_loops(func: ast.AST, ctx: Context) -> list[ast.For]:
    """The `for ... in range(...)` loops of `func`, and the `for` loops directly over a call
    or subscript (a tensor expression that may have a dynamic shape), in `ast.walk` order (breadth first),
    found once per function over its statements only: a `for` is a statement, and a
    statement's ancestors are statements, handlers and cases, so the statements' own
    breadth-first order is the one `ast.walk` gives them among every node."""
    key = ("ms152-range-loops", id(func))
    hit: list[ast.For] | None = ctx.cache.get(key)
    if hit is None:
        fors = _for_statements(func)
        hit = [
            n
            for n in fors
            if type(n) is ast.For
            and (
                (
                    type(n.iter) is ast.Call
                    and type(n.iter.func) is ast.Name
                    and ctx.qualname(n.iter.func) == "builtins.range"
                )
                or (type(n.iter) is ast.Call or type(n.iter) is ast.Subscript or type(n.iter) is ast.Name)
            )
        ]
        ctx.cache[key] = hit
        ctx.cache[("ms152-for-statements", id(func))] = len(fors)  # (`may_comprehend`)
    return hit


def _for_statements(func: ast.AST) -> list[ast.stmt]:
    """Every `for` / `async for` statement under `func` (nested functions' too), in the
    order `ast.walk` (breadth first) meets them. The walk goes block by block (a block's
    statements, then the blocks they open, first in first out): the same order as a walk
    node by node, without a queue step per statement; most statements hold no block and
    cost one type test."""
    out: list[ast.stmt] = []
    body = getattr(func, "body", None)
    if type(body) is not list:
        return out  # (a lambda: an expression body)
    blocks = deque([body])
    popleft, push, block_fields = blocks.popleft, blocks.append, BLOCKS_OF.get
    simple, for_t, async_for_t = SIMPLE_STATEMENTS, ast.For, ast.AsyncFor
    while blocks:
        for st in popleft():
            t = type(st)
            if t in simple:
                continue
            if t is for_t or t is async_for_t:
                out.append(st)
            names = block_fields(t)
            if names is None:
                names = blocks_of(t)  # in field order: the breadth-first order is kept
            for name in names:
                value = getattr(st, name, None)
                if type(value) is list and value:
                    push(value)
    return out


def _while_loops(ctx: Context) -> list[tuple[ast.While, frozenset[str]]]:
    """The `while` loops of the function being checked, each with the names of the lists
    its body grows (computed once per function)."""
    func = ctx.function
    key = ("ms152-while-loops", id(func))
    hit: list[tuple[ast.While, frozenset[str]]] | None = ctx.cache.get(key)
    if hit is None:
        hit = []
        lines = ctx.lines
        first, last = getattr(func, "lineno", 1), getattr(func, "end_lineno", None) or len(lines)
        # (no "while" in the file: in no line either, without a look at each)
        if not file_mentions(ctx, "while") or not any("while" in line for line in lines[first - 1 : last]):
            ctx.cache[key] = hit
            return hit  # most functions have no `while`: no walk needed
        for n in ast.walk(func):  # type: ignore[arg-type]
            if isinstance(n, ast.While):
                grown = frozenset(grown_names(n.body))
                if grown:
                    hit.append((n, grown))
        ctx.cache[key] = hit
    return hit


def grown_names(body: list[ast.stmt]) -> Iterable[str]:
    """Names a loop body grows: `lst.append(...)` / `extend` / `insert`, or `lst += [...]`."""
    for st in body:
        for s in ast.walk(st):
            if (
                isinstance(s, ast.Call)
                and isinstance(s.func, ast.Attribute)
                and s.func.attr in _GROW
                and isinstance(s.func.value, ast.Name)
            ):
                yield s.func.value.id
            elif (
                isinstance(s, ast.AugAssign)
                and isinstance(s.op, ast.Add)
                and isinstance(s.target, ast.Name)
                and isinstance(s.value, (ast.List, ast.ListComp))
            ):
                yield s.target.id
