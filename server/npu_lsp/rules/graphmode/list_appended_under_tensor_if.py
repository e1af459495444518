"""MS155: a list appended to under a tensor condition inside an unrolled `for`, used after it (LAX)."""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator

from npu_lsp.astutil import branch_list
from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.flow import Analyzer, Kind, analyzer
from npu_lsp.rules.graphmode.helpers import GraphRule, leaves_loop, returns_in, terminates
from npu_lsp.rules.graphmode.tensor_filtered_comprehension import runtime_scalar_list
from npu_lsp.rules.graphmode.tensor_names import TENSOR_MAKERS

_GROW = frozenset({"append", "extend", "insert"})


@rule(code="MS155", name="list-appended-under-tensor-if", severity="error", family="graphmode")
class ListAppendedUnderTensorIf(GraphRule):
    """## What it does
    Flags a `for` loop in compiled code whose body appends to a list only on one side of an
    `if` that tests tensor values (the other side leaves the list as it is), when the list is
    read after the loop (at LAX; the CTC-style collapse `if tok != prev: out.append(tok)`),
    or given to `sum`, `max` or `ops.stack` after the loop (at STRICT too: the mean-IoU loop
    `if union > 0: ious.append(inter / union)` then `sum(ious) / len(ious)`). Under STRICT
    also when what is appended is a tuple, list or dict (`pairs.append((i, j))`,
    `segments_info.append({"id": k})`), whatever follows. At both levels, a list of dicts
    grown under such an `if` that also holds a `continue` / `break`, when the function returns
    the list (detectron2's panoptic `segments_info`).

    Also, in such a loop, a list or counter grown only after `if <tensor>: continue` (the
    rest of the body appends, the `if` does not), when it was `[]` or `0` before the loop and
    is read after it by `ops.stack` / `ops.concat` / `sum` / a constant index (a list) or
    as the divisor of a Python number (a counter), at both levels.

    ## Why is this bad?
    The `for` is unrolled, and each tensor `if` joins a list of one length with a list of
    another. Under LAX, MindSpore 2.10 then stops with a framework error (`RuntimeError: The
    pointer[data_abs] is null` or `The pointer[seq_abs] is null`, "Framework Unexpected
    Exception Raised") when the list is returned or measured after the loop. STRICT compiles
    the list returned as it is or given to `len`, but not `sum(lst)` (the same crash),
    `max(lst)` ("dynamic length sequence") or `ops.stack(lst)` (an empty list), and such a
    list may hold only scalars and tensors: appending `(i, j)` fails (`The prim 'ListAppend',
    the input_data must be list and target must be scalar or tensor`). A
    single `if` outside a loop, an `if`/`else` that appends on both sides, or an `if` whose
    body ends in `continue` (`if n == 0: out.append(zero); continue`), compiles at both levels,
    and so, under LAX, does an `if` holding a `break` or `continue` elsewhere (`else: break`,
    `if t2: break` under it; written/heldout38b probes `fix39a_brk_*`).
    Under LAX an `if` reading an item of a local list of Python scalars computed from tensors
    (`areas = [int(m.sum()) for m in masks]`, `if areas[i] >= 2:`) is such a condition too.

    ## Example
    ```python
    def construct(self, ids):
        out = []
        for t in range(ids.shape[0]):
            if ids[t] != 0:
                out.append(ids[t])
        return out
    ```

    ## Use instead
    Keep the data in tensors (a mask: `ids[ids != 0]`, or `ops.masked_select`), or collapse
    the sequence in Python after the network returns.

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 3 (a tensor `if` joins the values of both branches); measured on
      MindSpore 2.10 with probes of a list appended under a tensor `if` (alone, in an
      unrolled loop, with an `else` that appends, returned, measured with `len`, an `if`
      ending in `continue` with and without an append after it); tuples appended: the
      written set `domains` (`sci_particles_neighbor_list_python`) and its `append*` probes;
      run-time scalars: the written set `heldout14` probe `lx_fa_int_areas_for_loop`.
    - The written set heldout17b probes `fe17_ct_*` (cases `imb_per_class_recall_report`,
      `r2_causal_propensity_bins_strata`, `r2_sig_beat_segments_list_shrink`,
      `r2_surv_cindex_in_construct`): after `if n == 0: continue`, the list and counter hold
      the right values at run time (returned, `len`, a tensor divided by them compile), but
      `ops.stack` / `ops.concat` ("got '0'"), `lst[0]`, `sum(lst)` and `k / m` of counters
      that started at 0 ("The divisor could not be zero") are folded with the values from
      before the loop; a list holding an element before the loop, or grown again after it,
      and a counter that started at 1 compile.
    - The written set heldout24b probes `fe24_iou_break_*` (case
      `r2_metric_iou_break_on_first_empty`): such a read reached only when the list is not
      empty (`if len(l) == 0: return ...` before it, `if not l:` / `else`, `if len(l) > 0:`)
      compiles and gives the right value; a guard on another length does not help.
    """

    nodes = (ast.For, ast.While)

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        # not a generator itself: most loops stop at these tests
        assert (type(node) is ast.For or type(node) is ast.While)
        if ctx.scope is None or ctx.function is None:
            return ()
        # only an `if` statement is followed, and its keyword is on the loop's lines: most
        # loops hold none, and are then not walked
        if "if" not in "\n".join(ctx.lines[node.lineno - 1 : node.end_lineno or node.lineno]):
            return ()
        if isinstance(node, ast.While):
            # a `while` MindSpore unrolls (its condition known while compiling: `while
            # len(out) < n`) is followed only for a run-time `break` (a tensor-conditioned
            # `while` is compiled once, MS152's)
            return self._unrolled_while(node, ctx)
        return self._loop(node, ctx)

    def _unrolled_while(self, node: ast.While, ctx: Context) -> Iterator[Diagnostic]:
        a = analyzer(ctx)
        if a.kind(node.test).dynamic:
            return
        reported: set[str] = set()
        for sub in node.body:
            if isinstance(sub, ast.If) and sub.body and isinstance(sub.body[-1], ast.Break) and _runtime_test(sub.test, a, ctx):
                for name, d in _skipped_growth(self, sub, node, ctx):
                    if name not in reported:
                        reported.add(name)
                        yield d

    def _loop(self, node: ast.For, ctx: Context) -> Iterator[Diagnostic]:
        assert ctx.scope is not None and ctx.function is not None
        strict = ctx.scope.strict
        a = analyzer(ctx)
        reported: set[str] = set()
        # `if`s, calls and assignments in `ast.walk`'s order; names and constants left out
        for sub in branch_list(node):
            if not isinstance(sub, ast.If):
                continue
            if not a.kind(sub.test).dynamic and (strict or not _reads_runtime_scalar_item(sub.test, ctx)):
                continue
            if isinstance(sub.body[-1], (ast.Continue, ast.Break)):
                # measured: an append under a tensor `if` that ends in `continue` compiles at
                # both levels (whether or not the rest of the body appends too); what only
                # the rest of the body grows is folded as it was before the loop, and so is
                # what the body grows only after a run-time `break` (written/heldout21a
                # probes `tc22_*break*`: `if tok.item() == eos: break` then
                # `tokens.append(tok)`, `ops.stack(tokens)` fails; growing before the `break`
                # or `len(tokens)` compiles)
                for name, d in _skipped_growth(self, sub, node, ctx):
                    if name not in reported:
                        reported.add(name)
                        yield d
                continue
            if leaves_loop(sub):
                # a `break` / `continue` elsewhere in the `if` (`else: break`, under a nested
                # `if`) makes it a loop exit too: no join of the list's lengths (`leaves_loop`),
                # but a list of dicts grown there is still of run-time length, which the graph
                # cannot hand back to Python
                for name, d in _returned_dicts(self, sub, node, ctx):
                    if name not in reported:
                        reported.add(name)
                        yield d
                continue
            grown = _grown(sub.body) - _grown(sub.orelse)
            for name in sorted(grown - reported):
                if not _bound_before(name, node, ctx.function):
                    continue
                if strict:
                    # measured: STRICT compiles the joined list returned as it is or given
                    # to `len`, but not `sum` / `max` / `ops.stack` of it after the loop
                    measured = _measured_after(name, node, ctx.function, ctx)
                    if measured is None:
                        sequence = _sequence_appended(name, sub.body, ctx)
                        if sequence is not None:
                            # measured: the joined list's elements must be scalars or tensors
                            # under STRICT, whatever follows the loop
                            reported.add(name)
                            yield ctx.diagnostic(
                                self,
                                sub,
                                f"`{name}` is appended to only when this tensor condition holds, inside the "
                                f"unrolled loop on line {node.lineno}, so its length is only known at run "
                                f"time, and under STRICT such a list may hold only scalars and tensors, not "
                                f"`{ctx.segment(sequence)}` (\"The prim 'ListAppend' ... target must be scalar or tensor\")",
                            )
                        continue
                    reported.add(name)
                    yield ctx.diagnostic(
                        self,
                        sub,
                        f"`{name}` is appended to only when this tensor condition holds, inside the "
                        f"unrolled loop on line {node.lineno}, so its length is only known at run "
                        f"time and `{measured[0]}({name})` after the loop fails to compile "
                        f'("{measured[1]}")',
                    )
                elif not _filled_before_join(sub.test, name, a) and _read_after(name, node, ctx.function):
                    reported.add(name)
                    yield ctx.diagnostic(
                        self,
                        sub,
                        f"`{name}` is appended to only when this tensor condition holds, inside the "
                        f"unrolled loop on line {node.lineno}; under LAX, MindSpore crashes when "
                        f'`{name}` is used after the loop ("The pointer[data_abs] is null")',
                    )


def _filled_before_join(test: ast.expr, name: str, a: Analyzer) -> bool:
    """Is `test` `len(name) < k or <tensor test>` (also `<=`), `k` a compile-time value? Its
    left side is true, and folded, in the first iterations, so the list is appended to
    unconditionally there and holds items when the first tensor `if` joins it. Measured under
    LAX (written/heldout29b case `r2_beam_hyps_worst_score_min_list`, probes `fix29d_beam_*`,
    `fix29d_kpt_*`): the crash needs a list that was empty at its first join and is appended to
    again after it; `len(l) < k or score > worst` compiles and runs with appends after the
    join, `score > 0.0` alone, `len(l) < k and ...` or the `len` test on the right do not."""
    if not (isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or)):
        return False
    first = test.values[0]
    return (
        isinstance(first, ast.Compare)
        and len(first.ops) == 1
        and isinstance(first.ops[0], (ast.Lt, ast.LtE))
        and _is_len_of(first.left, name)
        and not a.kind(first.comparators[0]).dynamic
    )


def _runtime_test(test: ast.expr, a: Analyzer, ctx: Context) -> bool:
    """Is the `if` test known only at run time: a tensor or run-time scalar, or (LAX) an item
    of a local list of run-time scalars?"""
    return a.kind(test).dynamic or (
        ctx.scope is not None and not ctx.scope.strict and _reads_runtime_scalar_item(test, ctx)
    )


def _reads_runtime_scalar_item(test: ast.expr, ctx: Context) -> bool:
    """Does the test read an item (`areas[i]`) of a local list of Python scalars known only at
    run time (`areas = [int(m.sum()) for m in masks]`)? Measured under LAX (written/heldout14
    probe `lx_fa_int_areas_for_loop`): it is a run-time condition like a tensor's."""
    return any(
        isinstance(n, ast.Subscript) and isinstance(n.ctx, ast.Load) and runtime_scalar_list(n.value, ctx)
        for n in ast.walk(test)
    )


def _grown(body: list[ast.stmt]) -> set[str]:
    out: set[str] = set()
    for st in body:
        for n in branch_list(st):
            if (
                isinstance(n, ast.Call)
                and isinstance(n.func, ast.Attribute)
                and n.func.attr in _GROW
                and isinstance(n.func.value, ast.Name)
            ):
                out.add(n.func.value.id)
    return out


def _sequence_appended(name: str, body: list[ast.stmt], ctx: Context) -> ast.expr | None:
    """A tuple, list or dict given to `name.append(...)` in `body`: a display, a dict
    comprehension or a `dict(...)` call. Measured for dicts (written/heldout43c case
    `r2_segments_info_dicts_under_tensor_if`, probes `h43c_dapp_*`: detectron2's
    `segments_info.append({"id": k, ...})` under a tensor or `.item()` `if` in a loop is
    refused under STRICT whether the list is returned or given to `len`, "'int' object has no
    attribute 'append'"; appending on both sides of the `if` compiles)."""
    for st in body:
        for n in branch_list(st):
            if (
                isinstance(n, ast.Call)
                and isinstance(n.func, ast.Attribute)
                and n.func.attr == "append"
                and isinstance(n.func.value, ast.Name)
                and n.func.value.id == name
                and len(n.args) == 1
                and _is_container(n.args[0], ctx)
            ):
                return n.args[0]
    return None


def _returned_dicts(rule: GraphRule, sub: ast.If, loop: ast.For, ctx: Context) -> Iterator[tuple[str, Diagnostic]]:
    """A list bound to `[]` before the loop, given a dict (`_is_dict`) in `sub`'s body and
    returned by the function (as it is or in a returned tuple). Measured at both levels
    (written/heldout43c case `postproc_panoptic_keep_nonzero_loop`, detectron2's panoptic
    `segments_info.append({...})` under `.item()` tests holding a `continue`, and probes
    `h43c_dcont_*`): returned, "DynamicSequence does not support dictionary type as element type
    now" / "RealTupleGetItem ... does not support this kernel data type"; `len` of it, tensors or
    tuples appended instead, and an `if` that only ends in `continue` compile."""
    func = ctx.function
    assert func is not None
    for name in sorted(_grown(sub.body)):
        appended = _sequence_appended(name, sub.body, ctx)
        if appended is None or not _is_dict(appended, ctx) or not _bound_before(name, loop, func):
            continue
        if not _returned(name, func):
            continue
        yield name, ctx.diagnostic(
            rule,
            sub,
            f"`{name}` gets the dict `{ctx.segment(appended)}` only when this tensor condition holds, "
            f"inside the unrolled loop on line {loop.lineno}, so it is a list of dicts of run-time "
            f"length, which MindSpore cannot return from the graph (\"DynamicSequence does not "
            f'support dictionary type as element type now")',
        )


def _returned(name: str, func: ast.AST) -> bool:
    """Is `name` returned by `func` (its own `return`s), as it is or in a returned tuple?"""
    for r in returns_in(getattr(func, "body", [])):
        vals = r.value.elts if isinstance(r.value, ast.Tuple) else [r.value]
        if any(isinstance(v, ast.Name) and v.id == name for v in vals):
            return True
    return False


def _is_dict(e: ast.expr, ctx: Context) -> bool:
    if isinstance(e, (ast.Dict, ast.DictComp)):
        return True
    return isinstance(e, ast.Call) and ctx.qualname(e.func) == "builtins.dict"


def _is_container(e: ast.expr, ctx: Context) -> bool:
    return isinstance(e, (ast.Tuple, ast.List)) or _is_dict(e, ctx)


def _bound_before(name: str, loop: ast.For, func: ast.AST) -> bool:
    """`name = []` (a list display) before the loop, outside it; also unpacked from a tuple
    of displays (`tcls, tbox, indices = [], [], []`: written/heldout18b case
    `det_yolo_build_targets_lists`, probes `fe18b_tu_*`)."""
    for n in branch_list(func):
        if not isinstance(n, ast.Assign) or n.lineno >= loop.lineno:
            continue
        if isinstance(n.value, ast.List) and any(isinstance(t, ast.Name) and t.id == name for t in n.targets):
            return True
        if isinstance(n.value, ast.Tuple):
            for t in n.targets:
                if isinstance(t, (ast.Tuple, ast.List)) and len(t.elts) == len(n.value.elts):
                    for target, value in zip(t.elts, n.value.elts, strict=True):
                        if isinstance(target, ast.Name) and target.id == name and isinstance(value, ast.List):
                            return True
    return False


def _read_after(name: str, loop: ast.For, func: ast.AST) -> bool:
    end = loop.end_lineno or loop.lineno
    return any(
        isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load) and n.lineno > end
        for n in ast.walk(func)
    )


# calls that fail at STRICT as at LAX on a list joined under a tensor `if`, with MindSpore
# 2.10's words (measured: `len(lst)` and the list returned as it is compile at STRICT)
_MEASURES = {
    "builtins.sum": "The pointer[seq_abs] is null",
    "builtins.max": "When the input to max() is dynamic length sequence, only support scalar type",
    "mindspore.ops.stack": "For 'Stack', the 'len of input_x' must be int and must >= 1, but got '0'",
    # measured (written/heldout21a probes `tc22_*ms_tensor*`, case heldout19a
    # `r2_moe_capacity_python_counts`): a tensor made from the joined list, at both levels
    **dict.fromkeys(TENSOR_MAKERS, "The pointer[data_abs] is null"),
}
#: of `_MEASURES`, the calls that may also take a dtype after the list


def _measured_after(name: str, loop: ast.For, func: ast.AST, ctx: Context) -> tuple[str, str] | None:
    """(the call as written, MindSpore's words) for a call of `_MEASURES` given `name` after
    the loop, if any."""
    end = loop.end_lineno or loop.lineno
    for n in ast.walk(func):
        if (
            isinstance(n, ast.Call)
            and n.lineno > end
            and n.args
            and isinstance(n.args[0], ast.Name)
            and n.args[0].id == name
        ):
            q = ctx.qualname(n.func)
            if q in _MEASURES and (len(n.args) == 1 or len(n.args) == 2 and q in TENSOR_MAKERS):
                return ctx.segment(n.func), _MEASURES[q]
    return None


#: reads after the loop that MindSpore folds with a list's value from before it, with its
#: words for an empty list
_FOLDED_READS = {
    "mindspore.ops.stack": "For 'Stack', the 'len of input_x' must be int and must >= 1, but got '0'",
    "mindspore.ops.concat": "For primitive[Concat], the elements size must be greater than 0, but got 0",
    "mindspore.ops.cat": "For primitive[Concat], the elements size must be greater than 0, but got 0",
    "builtins.sum": "Cannot join the return values of different branches",
}
_EMPTY_INDEX = "For primitive:'list_getitem', cannot get item by index from an empty sequence"
_ZERO_DIVISOR = "The divisor could not be zero. But the divisor is zero now"


def _skipped_growth(rule: GraphRule, sub: ast.If, loop: ast.For | ast.While, ctx: Context) -> Iterable[tuple[str, Diagnostic]]:
    """`if <tensor>: continue` in an unrolled `for`, then `lst.append(v)` / `k += 1` in the rest
    of the loop's body (not in the `if`): at run time the list and the counter are right, but
    MindSpore folds some reads after the loop with the value from before it. Measured
    (written/heldout17b probes `fe17_ct_*`, cases `imb_per_class_recall_report`,
    `r2_causal_propensity_bins_strata`, `r2_surv_cindex_in_construct`): with `lst = []`,
    `ops.stack(lst)`, `lst[0]`, `sum(lst)` and `sum(lst) / len(lst)` fail at LAX and STRICT;
    with `k = 0`, a Python number divided by `k` fails ("The divisor could not be zero");
    returning them, `len(lst)`, a tensor divided by `len(lst)` or `k`, or a list holding an
    element before the loop compile."""
    func = ctx.function
    if func is None or sub not in loop.body:
        return
    rest = loop.body[loop.body.index(sub) + 1 :]
    lists = _grown(rest) - _grown(sub.body)
    counters = _counted(rest) - _counted(sub.body)
    if not lists and not counters:
        return
    end = loop.end_lineno or loop.lineno
    for n in ast.walk(func):
        if getattr(n, "lineno", 0) <= end:
            continue
        name, why = _folded_read(n, lists, counters, ctx)
        if name is None or not _before_loop(name, loop, func, empty=name in lists):
            continue
        if _changed_between(name, end, n.lineno, func):  # type: ignore[attr-defined]
            continue  # grown again after the loop: measured, `ops.stack` then compiles
        if name in lists and _guarded_nonempty(name, n, func, ctx):
            continue
        jump = "break" if isinstance(sub.body[-1], ast.Break) else "continue"
        yield name, ctx.diagnostic(
            rule,
            n,
            f"`{name}` is grown only after the tensor-dependent `{jump}` on line {sub.lineno}, inside the "
            f"unrolled loop on line {loop.lineno}: MindSpore folds `{ctx.segment(n)}` with the value `{name}` "
            f'had before the loop, and it fails ("{why}"); return `{name}` or keep the values in tensors '
            "(a mask and a masked sum) instead",
        )


def _emptiness(test: ast.expr, name: str) -> bool | None:
    """True when `test` says the list `name` is empty (`len(l) == 0`, `not l`, `len(l) < 1`),
    False when it says it is not (`l`, `len(l)`, `len(l) > 0`, `len(l) != 0`, `len(l) >= 1`),
    None otherwise."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = _emptiness(test.operand, name)
        return None if inner is None else not inner
    if isinstance(test, ast.Name):
        return False if test.id == name else None
    if _is_len_of(test, name):
        return False
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        left, op, right = test.left, test.ops[0], test.comparators[0]
        if _is_len_of(right, name) and isinstance(left, ast.Constant):
            left, right = right, left
            flipped = {ast.Lt: ast.Gt, ast.Gt: ast.Lt, ast.LtE: ast.GtE, ast.GtE: ast.LtE}
            op = flipped.get(type(op), type(op))()
        if not (_is_len_of(left, name) and isinstance(right, ast.Constant) and type(right.value) is int):
            return None
        k, t = right.value, type(op)
        if (t is ast.Eq and k == 0) or (t is ast.Lt and k == 1) or (t is ast.LtE and k == 0):
            return True
        if (t is ast.NotEq and k == 0) or (t is ast.Gt and k == 0) or (t is ast.GtE and k == 1):
            return False
    return None


def _is_len_of(e: ast.expr, name: str) -> bool:
    return (
        isinstance(e, ast.Call)
        and isinstance(e.func, ast.Name)
        and e.func.id == "len"
        and len(e.args) == 1
        and isinstance(e.args[0], ast.Name)
        and e.args[0].id == name
    )


def _guarded_nonempty(name: str, read: ast.AST, func: ast.AST, ctx: Context) -> bool:
    """Is `read` reached only when the list `name` is not empty: in the body of `if
    len(name) > 0:` / `if name:`, in the `else` of `if len(name) == 0:` / `if not name:`, or
    after such an `if` whose body leaves (`return`)? Measured (written/heldout24b case
    `r2_metric_iou_break_on_first_empty` and probes `fe24_iou_break_*`): with such a guard
    `ops.stack(lst)` of the list grown after a tensor-dependent `break` compiles and returns
    the right mean at LAX and STRICT; a guard on another length (`len(lst) == 5`) does not
    help."""
    child: ast.AST = read
    parent = ctx.parent(read)
    while parent is not None and child is not func:
        if isinstance(parent, ast.If) and child is not parent.test:
            says = _emptiness(parent.test, name)
            if says is not None and (says is False) == (child in parent.body):
                return True
        body = next(
            (b for f in ("body", "orelse") if isinstance(b := getattr(parent, f, None), list) and child in b),
            None,
        )
        if body is not None:
            for st in body[: body.index(child)]:
                if isinstance(st, ast.If) and _emptiness(st.test, name) is True and terminates(st.body):
                    return True
        child, parent = parent, ctx.parent(parent)
    return False


def _folded_read(n: ast.AST, lists: set[str], counters: set[str], ctx: Context) -> tuple[str | None, str]:
    """(name, MindSpore's words) when `n` is a read `_skipped_growth` reports."""
    if isinstance(n, ast.Call) and len(n.args) == 1 and isinstance(n.args[0], ast.Name) and n.args[0].id in lists:
        why = _FOLDED_READS.get(ctx.qualname(n.func) or "")
        return (n.args[0].id, why) if why else (None, "")
    if (
        isinstance(n, ast.Subscript)
        and isinstance(n.ctx, ast.Load)
        and isinstance(n.value, ast.Name)
        and n.value.id in lists
        and isinstance(n.slice, ast.Constant)
        and type(n.slice.value) is int
    ):
        return n.value.id, _EMPTY_INDEX
    if (
        isinstance(n, ast.BinOp)
        and isinstance(n.op, (ast.Div, ast.FloorDiv, ast.Mod))
        and isinstance(n.right, ast.Name)
        and n.right.id in counters
        and analyzer(ctx).kind(n.left) in (Kind.CONST, Kind.VAR)
    ):
        return n.right.id, _ZERO_DIVISOR
    return None, ""


def _counted(body: list[ast.stmt]) -> set[str]:
    """Names `body` grows by a positive literal (`k += 1`)."""
    out: set[str] = set()
    for st in body:
        for n in branch_list(st):
            if (
                isinstance(n, ast.AugAssign)
                and isinstance(n.op, ast.Add)
                and isinstance(n.target, ast.Name)
                and isinstance(n.value, ast.Constant)
                and isinstance(n.value.value, (int, float))
                and not isinstance(n.value.value, bool)
                and n.value.value > 0
            ):
                out.add(n.target.id)
    return out


def _before_loop(name: str, loop: ast.For | ast.While, func: ast.AST, empty: bool) -> bool:
    """Is `name` last bound before the loop (outside it) to `[]` (`empty`) or to the literal 0
    (also as an item of `a, b = 0, 0`), and bound nowhere else but in the loop?"""
    value: ast.expr | None = None
    for n in branch_list(func):
        if not isinstance(n, ast.Assign) or not (n.lineno < loop.lineno or n.lineno > (loop.end_lineno or 0)):
            continue
        for t in n.targets:
            if isinstance(t, ast.Name) and t.id == name:
                value = n.value
            elif isinstance(t, ast.Tuple) and isinstance(n.value, ast.Tuple) and len(t.elts) == len(n.value.elts):
                for x, v in zip(t.elts, n.value.elts, strict=True):
                    if isinstance(x, ast.Name) and x.id == name:
                        value = v
        if value is not None and n.lineno > loop.lineno:
            return False  # rebound after the loop
    if empty:
        return isinstance(value, ast.List) and not value.elts
    return isinstance(value, ast.Constant) and value.value == 0 and type(value.value) is not bool


def _changed_between(name: str, start: int, stop: int, func: ast.AST) -> bool:
    """Is `name` grown or rebound on a line after `start` and before `stop`?"""
    for n in branch_list(func):
        line = getattr(n, "lineno", 0)
        if not start < line < stop:
            continue
        f = n.func if isinstance(n, ast.Call) else None
        if isinstance(f, ast.Attribute) and f.attr in _GROW and isinstance(f.value, ast.Name) and f.value.id == name:
            return True
        if isinstance(n, (ast.Assign, ast.AugAssign)):
            targets = n.targets if isinstance(n, ast.Assign) else [n.target]
            if any(isinstance(x, ast.Name) and x.id == name for t in targets for x in ast.walk(t)):
                return True
    return False
