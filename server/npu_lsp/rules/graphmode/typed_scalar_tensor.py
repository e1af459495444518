"""`Tensor(i, ms.int32)` of a run-time number (`i = int(scores.argmax())`) in compiled LAX
code, and a number read back from a tensor computed from it (`int(scores.argmax())` after
`scores = scores - ops.one_hot(Tensor(i, ms.int32), ...)`): MS145's question, asked only by
`int(...)`, `float(...)` and `.item()` calls."""

from __future__ import annotations

import ast

from npu_lsp.engine import Context
from npu_lsp.rules.graphmode.fallback_calls import typed_tensor_call
from npu_lsp.rules.graphmode.flow import Kind, analyzer
from npu_lsp.rules.graphmode.host_values import HOST_METHODS

_DEPTH = 8


def number_read(call: ast.Call) -> ast.expr | None:
    """The tensor `int(t)` / `float(t)` / `t.item()` reads a number from, else None."""
    f = call.func
    if type(f) is ast.Name and f.id in ("int", "float") and len(call.args) == 1 and not call.keywords:
        return call.args[0]
    if type(f) is ast.Attribute and f.attr == "item" and not call.args and not call.keywords:
        return f.value
    return None


def typed_scalar_tensor(call: ast.Call, func: ast.AST, ctx: Context) -> bool:
    """`Tensor(i, ms.int32)` (bare name, constant dtype) of a number read from a run-time
    tensor (`int(t)`, `float(t)`, `t.item()`, or a name bound once to one; not of host data):
    LAX builds it by JIT Fallback, a typed tensor whose shape MindSpore does not know."""
    if not typed_tensor_call(call, ctx):
        return False
    v = call.args[0]
    a = analyzer(ctx)
    if type(v) is ast.Name:
        v = a.single_assignment(v.id, func) or v
    if type(v) is not ast.Call or number_read(v) is None:
        return False
    if any(type(m) is ast.Attribute and m.attr in HOST_METHODS for m in ast.walk(v)):
        return False
    return a.kind(v, func) == Kind.VAR


def from_typed_scalar_tensor(e: ast.expr, func: ast.AST, ctx: Context, depth: int = 0) -> ast.Call | None:
    """The `typed_scalar_tensor` call the tensor `e` is computed from, through names (their
    assignments before the read, or anywhere in a loop around it: the next pass reads them),
    arithmetic, Tensor methods and `mindspore` functions (not sub-cells or helpers)."""
    if depth > _DEPTH:
        return None
    t = type(e)
    if t is ast.Call:
        assert isinstance(e, ast.Call)
        if typed_scalar_tensor(e, func, ctx):
            return e
        f = e.func
        q = ctx.qualname(f) or ""
        if q.startswith("mindspore."):
            args: list[ast.expr] = [*e.args, *(k.value for k in e.keywords)]
        elif type(f) is ast.Attribute and analyzer(ctx).kind(f.value, func) == Kind.TENSOR:
            args = [f.value]  # a Tensor method (`scores.argmax()`)
        else:
            return None
        for arg in args:
            if type(arg) is not ast.Starred:
                hit = from_typed_scalar_tensor(arg, func, ctx, depth + 1)
                if hit is not None:
                    return hit
        return None
    if t is ast.BinOp:
        assert isinstance(e, ast.BinOp)
        return from_typed_scalar_tensor(e.left, func, ctx, depth + 1) or from_typed_scalar_tensor(e.right, func, ctx, depth + 1)
    if t is ast.UnaryOp:
        assert isinstance(e, ast.UnaryOp)
        return from_typed_scalar_tensor(e.operand, func, ctx, depth + 1)
    if t is ast.Name:
        assert isinstance(e, ast.Name)
        loops = _loops_around(e, func)
        at = (e.lineno, e.col_offset)
        for v in analyzer(ctx).assigned_values(e.id, func):
            if v is e:
                continue
            # bound once the whole value is computed: `x = x + Tensor(float(x.sum()), ...)`
            # reads the `x` before it (measured, written/fallbackflows probe
            # `ld23_bt_graphscalar_sum_then_zeros_like` compiles)
            done = (getattr(v, "end_lineno", 0) or 0, getattr(v, "end_col_offset", 0) or 0)
            if done <= at or any(_inside(v, loop) for loop in loops):
                hit = from_typed_scalar_tensor(v, func, ctx, depth + 1)
                if hit is not None:
                    return hit
    return None


def _inside(node: ast.AST, outer: ast.AST) -> bool:
    start = (getattr(node, "lineno", 0), getattr(node, "col_offset", 0))
    return (outer.lineno, outer.col_offset) <= start <= (outer.end_lineno or 0, outer.end_col_offset or 0)  # type: ignore[attr-defined]


def _loops_around(e: ast.expr, func: ast.AST) -> list[ast.stmt]:
    """The `for` / `while` statements of `func` whose body holds `e`."""
    out: list[ast.stmt] = []
    stack: list[ast.AST] = list(getattr(func, "body", ()))
    while stack:
        n = stack.pop()
        if not isinstance(n, ast.stmt) or isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        if not _inside(e, n):
            continue
        if isinstance(n, (ast.For, ast.AsyncFor, ast.While)):
            out.append(n)
        stack.extend(c for c in ast.iter_child_nodes(n) if isinstance(c, ast.stmt))
    return out


#: the in-place updates of a Parameter measured refusing a Float64 value
IN_PLACE_UPDATES = frozenset({"assign", "assign_add", "assign_sub"})


def float64_tensor_of_number(call: ast.Call, func: ast.AST, ctx: Context) -> ast.Call | None:
    """The number read `ms.Tensor(v, dtype)` is built from, when `call` is that constructor
    spelled as a module attribute (the bare `Tensor(v, ms.int32)` is typed by the parser:
    `typed_tensor_call`) and `v` is computed from a number read from a run-time tensor
    (`int(p)`, `float(t)`, `t.item()`; through arithmetic and names bound once): LAX builds
    it by JIT Fallback as a Float64 tensor whatever dtype it is given (measured, written/
    heldout34b probes `fix34d_rt_*`, `fix34d_int_ptr_*`)."""
    if type(call.func) is not ast.Attribute or not call.args or ctx.qualname(call.func) != "mindspore.Tensor":
        return None
    return number_read_in(call.args[0], func, ctx, 0)


def number_read_in(e: ast.expr, func: ast.AST, ctx: Context, depth: int = 0) -> ast.Call | None:
    """The read of a number from a run-time tensor (`int(p)`, `float(t)`, `t.item()`) `e` is
    computed from, through arithmetic and names bound once; None if there is none."""
    if depth > _DEPTH:
        return None
    t = type(e)
    if t is ast.BinOp:
        assert isinstance(e, ast.BinOp)
        return number_read_in(e.left, func, ctx, depth + 1) or number_read_in(e.right, func, ctx, depth + 1)
    if t is ast.UnaryOp:
        assert isinstance(e, ast.UnaryOp)
        return number_read_in(e.operand, func, ctx, depth + 1)
    a = analyzer(ctx)
    if t is ast.Name:
        assert isinstance(e, ast.Name)
        bound = a.single_assignment(e.id, func)
        return number_read_in(bound, func, ctx, depth + 1) if bound is not None else None
    if t is not ast.Call:
        return None
    assert isinstance(e, ast.Call)
    if number_read(e) is None or any(type(m) is ast.Attribute and m.attr in HOST_METHODS for m in ast.walk(e)):
        return None
    return e if a.kind(e, func) == Kind.VAR else None
