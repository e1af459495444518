"""Where a Python number read from a run-time tensor comes from.

`t.item()`, `int(t)` and `float(t)` of a tensor known only at run time are graph scalars:
unknown while compiling, so an argument MindSpore needs as a constant (a size, a bound, an
index into a Python list) cannot be one. `runtime_scalar` finds such a read behind an
expression: through arithmetic, names bound once, a helper of the file that returns one, and
a parameter's lazy default (`if n is None: n = int(t.max()) + 1`). MS206, MS208, MS209, MS210
and MS225 share it.
"""

from __future__ import annotations

import ast

from npu_lsp.astutil import none_compared
from npu_lsp.engine import Context
from npu_lsp.rules.graphmode.flow import Kind, analyzer
from npu_lsp.rules.graphmode.host_values import HOST_METHODS, host_scalar
from npu_lsp.rules.graphmode.values import in_dead_branch, instances

_DEPTH = 3


def call_argument(call: ast.Call, at: int, key: str) -> ast.expr | None:
    """The argument `call` gives at position `at` or as keyword `key` (None: left out, or
    behind a starred argument)."""
    for k in call.keywords:
        if k.arg == key:
            return k.value
    if len(call.args) > at and not any(isinstance(a, ast.Starred) for a in call.args[: at + 1]):
        return call.args[at]
    return None


def runtime_scalar(e: ast.expr, ctx: Context, depth: int = 0) -> ast.expr | None:
    """The `t.item()` / `int(t)` / `float(t)` of a run-time tensor that `e` is computed from
    (through arithmetic, `max(1, ...)`, names bound once), not one of host data (LAX runs
    `int(x.asnumpy().sum())` in Python)."""
    for n in ast.walk(e):
        if type(n) is ast.Call or type(n) is ast.Name:
            if host_scalar(n, ctx) and not any(
                type(m) is ast.Attribute and m.attr in HOST_METHODS for m in ast.walk(n)
            ):
                if type(n) is ast.Name:
                    bound = analyzer(ctx).single_assignment(n.id, ctx.function)
                    if bound is not None and any(
                        type(m) is ast.Attribute and m.attr in HOST_METHODS for m in ast.walk(bound)
                    ):
                        continue
                if in_dead_branch(ctx, ctx.function, ctx.span(n)):
                    continue  # the side of `a if num is None else num` never inferred
                return n
            if type(n) is ast.Call and depth < _DEPTH:
                hit = _returned_scalar(n, ctx)
                if hit is not None:
                    return hit
            if type(n) is ast.Name and depth < _DEPTH:
                bound = analyzer(ctx).single_assignment(n.id, ctx.function) or _lazy_default(n.id, ctx)
                if bound is not None and bound is not e:
                    hit = runtime_scalar(bound, ctx, depth + 1)
                    if hit is not None:
                        return hit
    return None


def direct_read(e: ast.expr, ctx: Context, lax: bool, depth: int = 0) -> bool:
    """`e` is the graph scalar `int(t)` / `t.item()` of a tensor `t` itself, with no scalar
    operation after the read (through names bound once, a lazy default, a helper returning
    it, and the `x + 0` / `x * 1` MindSpore's simplifier drops). MindSpore builds `int(t)` as
    `TensorToScalar(Cast(t, int64))` (standard_method.int_func) and `t.item()` as
    `TensorToScalar(t)`; an operator input that takes a tensor gets that tensor back, while
    any scalar op in between (`+ 1`, `- 0`, `int(float(t))`, `int(t.item())`, `n += 1`)
    leaves a graph scalar the kernel refuses (measured, written/heldout41b probes
    `fix41b_seg_*`: `ops.unsorted_segment_sum(h, batch, int(nt.max()))` compiles at both
    levels, `int(nt.max()) + 1` does not). Under LAX a builtin `max(...)` / `min(...)` of
    such numbers runs in Python (JIT Fallback) and its result reaches the kernel too
    (`max(int(nt.max()) + 1, 1)` compiles under LAX; STRICT refuses `max(data)` itself)."""
    while type(e) is ast.BinOp and _identity(e):
        e = e.left if _zero_or_one(e.right, e.op) else e.right
    if type(e) is ast.Name:
        if depth >= _DEPTH:
            return False
        bound = analyzer(ctx).single_assignment(e.id, ctx.function) or _lazy_default(e.id, ctx)
        return bound is not None and direct_read(bound, ctx, lax, depth + 1)
    if type(e) is not ast.Call or e.keywords:
        return False
    f = e.func
    if lax and type(f) is ast.Name and f.id in ("max", "min") and f.id not in ctx.scopes.info.functions:
        return True
    if type(f) is ast.Name and f.id == "int" and len(e.args) == 1:
        return runtime_scalar(e.args[0], ctx) is None
    if type(f) is ast.Attribute and f.attr == "item" and not e.args:
        return runtime_scalar(f.value, ctx) is None
    if type(f) is ast.Name and depth < _DEPTH:
        hit = _returned_scalar(e, ctx)
        callee = ctx.scopes.info.functions.get(f.id)
        if hit is None or not isinstance(callee, ast.FunctionDef):
            return False
        # the helper returns the read itself (`return int(batch.max())`), not arithmetic on it
        return any(type(st) is ast.Return and st.value is hit for st in callee.body)
    return False


def _identity(e: ast.BinOp) -> bool:
    """`x + 0`, `0 + x`, `x * 1`, `1 * x`: folded away before the kernels are chosen."""
    return _zero_or_one(e.right, e.op) or _zero_or_one(e.left, e.op)


def _zero_or_one(side: ast.expr, op: ast.operator) -> bool:
    if type(side) is not ast.Constant or type(side.value) is not int:
        return False
    return (type(op) is ast.Add and side.value == 0) or (type(op) is ast.Mult and side.value == 1)


def _returned_scalar(call: ast.Call, ctx: Context) -> ast.expr | None:
    """The `int(t)` / `float(t)` / `t.item()` of a run-time tensor that a helper function of
    the file returns, the first `return` its compiled body reaches (`if num_nodes is not
    None: return num_nodes` folded false when the call leaves the default None, then
    `return int(edge_index.max()) + 1`). MindSpore inlines the helper: the caller gets the
    same graph scalar (measured, written/heldout33a case `gnn_num_nodes_from_edge_max_int`
    and probes `fix33e_nn_*`: as `num_segments` it fails at both levels, "Invalid kernel
    object type ... ScalarAdd ... UnsortedSegmentSum"; `edge_index.max() + 1`, a tensor,
    compiles). Top-level statements only: a `return` under an `if` MindSpore cannot fold
    stops the search."""
    if type(call.func) is not ast.Name:
        return None
    callee = ctx.scopes.info.functions.get(call.func.id)
    if not isinstance(callee, ast.FunctionDef):
        return None
    evaluate = instances(ctx).evaluate
    for st in callee.body:
        if type(st) is ast.If:
            if any(type(b) is ast.Return for b in ast.walk(st)) and evaluate(st.test, callee) is not False:
                return None
            continue
        if type(st) is not ast.Return:
            continue
        if st.value is None:
            return None
        for m in ast.walk(st.value):
            if type(m) is ast.Call and _tensor_read(m, callee, ctx):
                return m
        return None
    return None


def _tensor_read(e: ast.Call, func: ast.FunctionDef, ctx: Context) -> bool:
    """`int(t)`, `float(t)`, `t.item()` of a run-time value of `func`, not of host data."""
    f = e.func
    if type(f) is ast.Name:
        if f.id not in ("int", "float") or len(e.args) != 1 or e.keywords:
            return False
    elif not (type(f) is ast.Attribute and f.attr == "item" and not e.args and not e.keywords):
        return False
    if any(type(m) is ast.Attribute and m.attr in HOST_METHODS for m in ast.walk(e)):
        return False
    return analyzer(ctx).kind(e, func) is Kind.VAR


def _lazy_default(name: str, ctx: Context) -> ast.expr | None:
    """The value a parameter gets from its lazy default when MindSpore compiles that side:
    `if dim_size is None: dim_size = int(index.max()) + 1`, or `size = int(batch.max()) + 1
    if size is None else size`, with the test folded true (every call leaves the default
    None; measured, written/heldout23a `mp_scatter_helper_reduce_kw`,
    `pool_num_graphs_from_batch_max`: "Invalid kernel object type ... ScalarAdd ...
    UnsortedSegmentSum"; given `x.shape[0]` instead, the side is never compiled)."""
    func = ctx.function
    if func is None:
        return None
    evaluate = instances(ctx).evaluate
    for st in ast.walk(func):
        test: ast.expr | None = None
        value: ast.expr | None = None
        if type(st) is ast.If:
            test = st.test
            value = next(
                (b.value for b in st.body if type(b) is ast.Assign and _binds(b, name)), None
            )
        elif type(st) is ast.Assign and _binds(st, name) and type(st.value) is ast.IfExp:
            test, value = st.value.test, st.value.body
        if value is not None and test is not None and _is_none(test, name) and evaluate(test, func) is True:
            return value
    return None


def _binds(st: ast.Assign, name: str) -> bool:
    return len(st.targets) == 1 and type(st.targets[0]) is ast.Name and st.targets[0].id == name


def _is_none(test: ast.expr, name: str) -> bool:
    """`name is None`."""
    compared = none_compared(test)
    return compared is not None and not compared[1] and type(compared[0]) is ast.Name and compared[0].id == name
