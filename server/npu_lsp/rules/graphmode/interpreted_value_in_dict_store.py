"""MS186: (LAX) `max` / `min` run by JIT Fallback (or a dict comprehension, or a key), stored where the graph cannot take it: in a
dict display stored into a dict item, on `self` of a sub-cell, or into a dict under an `if`."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.flow import Kind, analyzer, is_self_attr
from npu_lsp.rules.graphmode.helpers import GraphRule, own_nodes
from npu_lsp.rules.graphmode.interpreted import interpreted

#: methods that read a dict as a dict (a tuple has none of them)
_DICT_READS = frozenset({"values", "items", "keys", "get"})
#: builtins LAX runs by JIT Fallback (PyExecute) when given a run-time scalar
_INTERPRETED = frozenset({"builtins.max", "builtins.min"})


@rule(code="MS186", name="interpreted-min-max-stored", severity="error", family="graphmode")
class InterpretedMinMaxStored(GraphRule):
    """## What it does
    Under the default LAX syntax level, flags a store into a dict item in compiled code
    (`report[name] = {...}`) whose value is a dict display holding `max(...)` or `min(...)`
    of a Python number read from a run-time tensor (`t.item()`, `int(t)`, `float(t)`):
    `report[name] = {"precision": tp.item() / max(1, (tp + fp).item())}`. Also
    `self.lo = min(self.lo, ...)` (or `max`) in the `construct` of a cell that another
    cell of the file holds as a sub-cell next to layers with parameters (a min/max
    observer for calibration), and in a method of a plain Python object such a cell
    holds, compiled when `construct` calls it, with a value known only at run time
    (`self.worst_score = min(self.worst_score, score)` in HF's `BeamHypotheses.add`). Also `self.d = {k: ... for k in ...}` (a dict
    comprehension, directly or through a local bound to one) read afterwards in the same
    function as a dict (`self.d["a"]`, `d[k]`, `.values()`, `.items()`, `.get`): LAX
    builds the comprehension by JIT Fallback and the stored object becomes a tuple. Also
    `d[k] = v` under `if k not in d:` (or a tensor `if`), outside loops, with `k` a JIT
    Fallback value (a number attribute the function increments, `self.step += 1`, or
    `int(x.asnumpy().argmax())`) and `d` a local dict display or one on `self`, when `d` is
    read after the `if` (`d[k]`, `d.get(...)`): the teacher-logits cache keyed by a step
    counter.

    ## Why is this bad?
    Under LAX, `max` / `min` of a run-time scalar is run by JIT Fallback (PyExecute), and a
    dict built around that result is a Python object the graph knows only at run time.
    Storing it into a dict item makes MindSpore 2.10 treat the outer dict as a tuple:
    compiling stops with `TypeError: 'tuple' object does not support item assignment`, in a
    loop or once. The same dict display returned or appended to a list, a store of
    `t.item()` (or of `a.item() / b.item()`) without `max` / `min`, and `max` of constants
    compile. STRICT refuses `max` of a run-time scalar itself (MS131).
    `self.lo = min(self.lo, x.min().item())` in a sub-cell fails too (`RuntimeError:
    Illegal AnfNode for evaluating, node: ...param_fc.weight`, or `Found not specialized
    node ... PyExecute`), even with a constant (`min(self.lo, 3.0)`); the same line in the
    network called at top level, under a parent with no parameters, a local `lo =
    min(self.lo, ...)` and `self.lo = self.lo + x.max().item()` compile. A plain object's
    method behaves as a sub-cell's `construct` (written/heldout26a case
    `beam_hypotheses_object_add_in_construct`, probes `fix27a_beam_*`: a tensor or
    `float(...)` of one, either order, rejected; `min(1e9, t)`, `self.worst + t`, `min` not
    stored back compile).

    ## Example
    ```python
    def construct(self, logits, labels):
        pred = logits.argmax(-1)
        report = {}
        for i, name in enumerate(CLASSES):
            tp = ((pred == i) & (labels == i)).sum()
            fp = ((pred == i) & (labels != i)).sum()
            report[name] = {"precision": tp.item() / max(1, (tp + fp).item())}
        return report
    ```

    ## Use instead
    Keep the numbers in tensors (`ops.maximum`), and build the Python report outside
    `construct`:
    ```python
    def construct(self, logits, labels):
        ...
        return tp / ops.maximum(tp + fp, 1)
    ```

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 2 (JIT Fallback runs `max` / `min` of a run-time scalar as Python).
    - Measured on MindSpore 2.10 with the written heldout14 case `r2_metric_per_class_report_dict`
      and the heldout14b probes `hv_dict_nested_*`, `hv_dict_setitem_loop_nested_*`,
      `hv_dict_display_max_item`, `hv_list_nested_max_item_loop`, `hv_max_one_item*`;
      on `self`: the heldout14b case `quant_observer_minmax_state` and the probes
      `hv_self_min_*`, `hv_selfsub_*`, `hv_self_top_min_const_param`.
    - A dict comprehension stored on `self`: the written heldout17a case
      `r2_ema_shadow_dict_by_name` and probes `fe17a_sd_*` (read by key or `.values()`
      afterwards, also through the local it was built in: rejected under LAX; a dict
      display, a list or tuple, or no read back compile).
    - A store under a key JIT Fallback made, in an `if`, read after it: the written heldout38d
      case `kd_teacher_logits_cache_dict_step_counter` and probes `fix38d_ck_*`, `fix39a_ck_*`
      ("'tuple' object does not support item assignment" at LAX; a constant key, a key the
      function does not change, a test on the counter itself (`self.step >= 0`), the read only
      inside the `if`, no read after it, compile).
    """

    nodes = (ast.Assign,)

    def wants_assign(self, target: type[ast.AST] | None, value: type[ast.AST]) -> bool:
        # (any value stored into an item: `_fallback_key_under_if`'s `d[k] = v`)
        return target is ast.Subscript or (target is ast.Attribute and value in (ast.Call, ast.DictComp, ast.Name))

    def wants_assigned_call(self, target: type[ast.AST] | None, callee: type[ast.AST]) -> bool:
        return callee is ast.Name or target is ast.Subscript

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        assert isinstance(node, ast.Assign)
        scope = ctx.scope
        if scope is None or scope.level != "lax" or len(node.targets) != 1:
            return
        target, value = node.targets[0], node.value
        if isinstance(target, ast.Attribute) and isinstance(value, ast.Call):
            yield from self._self_min_max(node, target, value, ctx)
            return
        if isinstance(target, ast.Attribute) and isinstance(value, (ast.DictComp, ast.Name)):
            yield from self._self_dict_comp(node, target, value, ctx)
            return
        if not isinstance(target, ast.Subscript):
            return
        if type(ctx.parent(node)) is ast.If:
            said = _fallback_key_under_if(node, target, ctx)
            if said is not None:
                yield ctx.diagnostic(self, said[0], said[1])
                return
        if not isinstance(value, ast.Dict):
            return
        for v in value.values:
            call = _interpreted(v, ctx)
            if call is not None:
                yield ctx.diagnostic(
                    self,
                    node,
                    f"`{ctx.segment(call)}` of a Python number read from a run-time tensor is run by JIT Fallback under LAX, and storing a dict holding it into `{ctx.segment(target)}` fails to compile ('tuple' object does not support item assignment); keep the numbers in tensors (`ops.maximum` / `ops.minimum`) and build the dict outside construct",
                )
                return


    def _self_dict_comp(self, node: ast.Assign, target: ast.Attribute, value: ast.expr, ctx: Context) -> Iterable[Diagnostic]:
        """`self.d = {k: ... for k in ...}` (or `self.d = d`, `d` bound once to one) in
        compiled code, then a read of it as a dict below: by key, `.values()`, `.items()`,
        `.keys()`, `.get`. LAX builds a dict comprehension by JIT Fallback, and storing that
        object on `self` leaves a tuple in `self.d` and in `d` (measured, written/heldout17a
        probes `fe17a_sd_*`, case `r2_ema_shadow_dict_by_name`: "tuple indices must be
        integers or slices, not str", "'tuple' object has no attribute 'values'"); a dict
        display stored the same way, a comprehension never read back, and lists and tuples
        compile."""
        fn = ctx.function
        if not (isinstance(target.value, ast.Name) and target.value.id == "self") or fn is None:
            return
        local = value.id if isinstance(value, ast.Name) else None
        if local is not None and not isinstance(analyzer(ctx).single_assignment(local, fn), ast.DictComp):
            return
        end = (node.end_lineno or node.lineno, node.end_col_offset or 0)
        for n in own_nodes(fn):
            if (getattr(n, "lineno", 0), getattr(n, "col_offset", 0)) <= end:
                continue
            if isinstance(n, ast.Subscript) and isinstance(n.ctx, ast.Load):
                held = n.value
                if isinstance(n.slice, ast.Constant) and type(n.slice.value) is int:
                    continue
            elif isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in _DICT_READS:
                held = n.func.value
            else:
                continue
            if (local is not None and isinstance(held, ast.Name) and held.id == local) or (
                isinstance(held, ast.Attribute) and isinstance(held.value, ast.Name) and held.value.id == "self" and held.attr == target.attr
            ):
                yield ctx.diagnostic(
                    self,
                    n,
                    f"`{ctx.segment(target)}` holds a dict comprehension built by JIT Fallback under LAX (line {node.lineno}); stored on `self`, it becomes a tuple, and reading it as a dict fails ('tuple indices must be integers or slices, not str'); keep the dict in a local (or build it as a dict display) and store it on `self` outside construct",
                )
                return

    def _self_min_max(self, node: ast.Assign, target: ast.Attribute, call: ast.Call, ctx: Context) -> Iterable[Diagnostic]:
        if not (isinstance(target.value, ast.Name) and target.value.id == "self") or ctx.qualname(call.func) not in _INTERPRETED:
            return
        if not any(isinstance(x, ast.Attribute) and isinstance(x.value, ast.Name) and x.value.id == "self" and x.attr == target.attr for x in call.args):
            return
        func = ctx.function
        if not isinstance(func, ast.FunctionDef):
            return
        a = analyzer(ctx)
        cls = a.owner_class(func)
        if cls is None:
            return
        if func.name != "construct":
            # a method of a plain object held on `self` (HF's `BeamHypotheses.add` updating
            # `self.worst_score = min(self.worst_score, score)`), compiled as part of the
            # holder's graph: measured with a run-time value only (written/heldout26a case
            # `beam_hypotheses_object_add_in_construct`, probes `fix27a_beam_*`: `min` / `max`
            # of a tensor or `float(...)` of one, either order, rejected at LAX with "Illegal
            # AnfNode for evaluating"; `min(1e9, t)`, `self.worst + t` and `min` not stored
            # back compile)
            if ctx.scopes.is_cell_class(f"{ctx.scopes.info.module}.{cls.name}"):
                return
            if not any(
                not is_self_attr(x, target.attr) and a.kind(x) in (Kind.TENSOR, Kind.VAR) for x in call.args
            ):
                return
        holder = _holder_with_parameters(cls, ctx)
        if holder is not None:
            where = "in a sub-cell" if func.name == "construct" else f"in `{cls.name}.{func.name}`, a method of an object"
            yield ctx.diagnostic(
                self,
                node,
                f"`{ctx.segment(call)}` on `self` is run by JIT Fallback under LAX, and storing it on `self.{target.attr}` {where} (held by `{holder.name}`, which has parameters) fails to compile; keep the running min/max in a `Parameter` updated with `ops.assign` / `ops.minimum`, or do the bookkeeping outside construct",
            )


def _holder_with_parameters(cls: ast.ClassDef, ctx: Context) -> ast.ClassDef | None:
    """A class of the file whose `__init__` makes an instance of `cls` and a `mindspore.nn`
    layer with parameters (`nn.Dense`, `nn.Conv2d`...)."""
    for other in ctx.tree.body:
        if not isinstance(other, ast.ClassDef) or other is cls:
            continue
        init = next((st for st in other.body if isinstance(st, ast.FunctionDef) and st.name == "__init__"), None)
        if init is None:
            continue
        made = [n for n in ast.walk(init) if isinstance(n, ast.Call)]
        if not any(isinstance(n.func, ast.Name) and n.func.id == cls.name for n in made):
            continue
        if any((ctx.qualname(n.func) or "").rpartition(".")[2] in _LAYERS for n in made):
            return other
    return None


#: `mindspore.nn` layers holding parameters
_LAYERS = frozenset({"Dense", "Conv1d", "Conv2d", "Conv3d", "Embedding", "BatchNorm1d", "BatchNorm2d", "LayerNorm", "LSTM", "GRU", "Conv2dTranspose"})


def _interpreted(e: ast.expr, ctx: Context) -> ast.Call | None:
    """`max(...)` / `min(...)` with a host scalar among its arguments, in `e`."""
    a = analyzer(ctx)
    for n in ast.walk(e):
        if (
            isinstance(n, ast.Call)
            and ctx.qualname(n.func) in _INTERPRETED
            and len(n.args) > 1
            and any(a.kind(x) == Kind.VAR for x in n.args)
        ):
            return n
    return None


def _fallback_key_under_if(node: ast.Assign, target: ast.Subscript, ctx: Context) -> tuple[ast.AST, str] | None:
    """`if k not in d: d[k] = v` (or under a tensor `if`), `k` a JIT Fallback value (a number
    attribute the function increments, `self.step += 1`; `int(x.asnumpy().argmax())`), then
    `d` read after the `if` (`d[k]`, `d.get(...)`): LAX stores the item in Python, the dicts
    of the two sides do not join, and compiling stops with "'tuple' object does not support
    item assignment" (measured, written/heldout38d case
    `kd_teacher_logits_cache_dict_step_counter` and probes `fix38d_ck_*`, `fix39a_ck_*`: a
    local dict or one on `self`, the increment before or after, `not in` or a tensor
    condition, read by key or `.get`; a constant key, a key the function does not change, a
    test on the counter itself (`self.step >= 0`), the read only inside the `if`, no read,
    compile)."""
    fn = ctx.function
    test_if = ctx.parent(node)
    if fn is None or type(test_if) is not ast.If or not any(s is node for s in test_if.body):
        return None
    box = target.value
    if not _dict_container(box, ctx):
        return None
    key = target.slice
    if not interpreted(key, ctx, fn):
        return None
    if any(type(p) in (ast.For, ast.While, ast.AsyncFor) for p in ctx.ancestors(test_if, fn)):
        return None  # in a loop: not measured (a `for` over host data is MS204's)
    test = test_if.test
    membership = (
        type(test) is ast.Compare
        and len(test.ops) == 1
        and type(test.ops[0]) in (ast.In, ast.NotIn)
        and _same_container(test.comparators[0], box)
        and interpreted(test.left, ctx, fn)
    )
    if not membership and not (analyzer(ctx).kind(test) == Kind.TENSOR and not interpreted(test, ctx, fn)):
        return None
    end = test_if.end_lineno or test_if.lineno
    for n in own_nodes(fn):
        if getattr(n, "lineno", 0) <= end:
            continue
        held = None
        if isinstance(n, ast.Subscript) and isinstance(n.ctx, ast.Load):
            held = n.value
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in _DICT_READS:
            held = n.func.value
        if held is not None and _same_container(held, box):
            return n, (
                f"`{ctx.segment(box)}` gets the item `{ctx.segment(key)}`, a JIT Fallback value under LAX, only when "
                f"the condition on line {test_if.lineno} holds: the item is stored by Python and the two sides' dicts "
                f"do not join, so reading `{ctx.segment(box)}` after the `if` fails to compile ('tuple' object does "
                "not support item assignment); use a key known while compiling, or keep the cache outside construct"
            )
    return None


def _dict_container(box: ast.expr, ctx: Context) -> bool:
    """A local bound once to a dict display, or `self.<attr>` bound only to dict displays."""
    a = analyzer(ctx)
    if isinstance(box, ast.Name):
        return isinstance(a.single_assignment(box.id, ctx.function), ast.Dict)
    if not (isinstance(box, ast.Attribute) and isinstance(box.value, ast.Name) and box.value.id == "self"):
        return False
    cls = a.owner_class(ctx.function)
    values = a.self_values(cls).get(box.attr, []) if cls is not None else []
    return bool(values) and all(isinstance(v, ast.Dict) for v in values)


def _same_container(e: ast.expr, box: ast.expr) -> bool:
    if isinstance(box, ast.Name):
        return isinstance(e, ast.Name) and e.id == box.id
    assert isinstance(box, ast.Attribute)
    return isinstance(e, ast.Attribute) and isinstance(e.value, ast.Name) and e.value.id == "self" and e.attr == box.attr

