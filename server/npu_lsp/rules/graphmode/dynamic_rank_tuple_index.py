"""MS253: a store through a tuple index holding the result of `topk` with a run-time `k`."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.flow import ASSIGN, UNPACK_AT, Kind, analyzer
from npu_lsp.rules.graphmode.helpers import GraphRule
from npu_lsp.rules.graphmode.host_values import reads


@rule(code="MS253", name="dynamic-rank-tuple-index", severity="error", family="graphmode")
class DynamicRankTupleIndex(GraphRule):
    """## What it does
    Flags a subscript store in compiled code (`m[g, idx] = 1.0`, also `+=`) whose tuple
    index holds a tensor `ops.topk` (or `Tensor.topk`) returned for a `k` known only at run
    time: a number read from a tensor (`int(ks[g])`, `ks[g].item()`), as YOLOX's SimOTA
    assigner does with its dynamic k (`_, idx = ops.topk(-cost[g], int(dynamic_ks[g]))`).
    Both outputs of `topk` count, bound by unpacking or as `ops.topk(...)[1]`.

    ## Why is this bad?
    With a `k` the compiler does not know, `topk`'s outputs have an unknown rank, and a
    tensor of unknown rank cannot sit inside a tuple index of a store: compiling stops at
    every syntax level with `IndexError: Tensor index in tuple can not be dynamic rank.`
    PyNative runs it. Reading `cost[g, idx]`, a store with the tensor alone as the index
    (`row[idx] = 1.0`) or through a chained index (`m[g][idx] = 1.0`), and a `k` known while
    compiling (a literal, `cost.shape[1] // 2`) compile.

    ## Example
    ```python
    def construct(self, cost, dynamic_ks):
        matching = ops.zeros_like(cost)
        for g in range(cost.shape[0]):
            _, idx = ops.topk(-cost[g], int(dynamic_ks[g]))
            matching[g, idx] = 1.0
        return matching
    ```

    ## Use instead
    ```python
            row = matching[g]
            row[idx] = 1.0
            matching[g] = row
    ```

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md has no row for it (rejected at every level).
    - Measured on MindSpore 2.10 (CPU), LAX and STRICT: written sets `heldout38a`
      (`r2_simota_int_of_tensor_topk_k`) and `heldout18b` (`det_yolox_simota_dynamic_k`),
      and the probes `fix38e_dk_*` of `heldout38a` (`int(...)` and `.item()` k, `ops.topk`
      and the method, `[1]` and unpacking, `[g, idx]`, `[:, idx]`, `[idx, 0]` and `+=`
      refused; `[g][idx]`, `row[idx]`, a read and a constant k compile).
    """

    nodes = (ast.Assign, ast.AugAssign)

    def wants_assign(self, target: type[ast.AST] | None, value: type[ast.AST]) -> bool:
        return target is ast.Subscript

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        assert isinstance(node, (ast.Assign, ast.AugAssign))
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        func = ctx.function
        if func is None or len(targets) != 1:
            return
        target = targets[0]
        # the cheap test first: a tuple index with a bare name in it
        if not isinstance(target, ast.Subscript) or not isinstance(target.slice, ast.Tuple):
            return
        for item in target.slice.elts:
            k = _unknown_rank_k(item, func, ctx, 0)
            if k is None:
                continue
            given = "" if isinstance(k, ast.Name) and k.id == "k" else f" (`{ctx.segment(k)}`)"
            shown = ctx.segment(item)
            yield ctx.diagnostic(
                self,
                node,
                f"`{shown}` comes from `topk` whose `k`{given} is known only at run time, so its rank is unknown while "
                f"compiling, and a tuple index of a store cannot hold it (MindSpore: Tensor index in tuple can not be dynamic rank); "
                f"store into the row alone (`row = {ctx.segment(target.value)}[...]; row[{shown}] = ...`) and put the row back",
            )
            return


#: tensor methods that keep the rank of their receiver (a dtype cast)
_CASTS = frozenset({"astype", "to", "int", "long", "float", "half", "bool", "double"})


def _unknown_rank_k(e: ast.expr, func: ast.AST, ctx: Context, depth: int) -> ast.expr | None:
    """The run-time `k` of the `topk` whose output `e` is, itself or through what keeps its
    unknown rank (arithmetic, a dtype cast, a name every binding of which is such); else
    None. Measured (probes `fix38e_dk_*`): `idx + 0`, `idx.astype(ms.int64)` are refused
    as `idx` is."""
    if depth > 4:
        return None
    if isinstance(e, ast.BinOp):
        return _unknown_rank_k(e.left, func, ctx, depth + 1) or _unknown_rank_k(e.right, func, ctx, depth + 1)
    if isinstance(e, ast.UnaryOp):
        return _unknown_rank_k(e.operand, func, ctx, depth + 1)
    if isinstance(e, ast.Call) and isinstance(e.func, ast.Attribute) and e.func.attr in _CASTS:
        if not (ctx.qualname(e.func) or "").startswith("mindspore."):
            return _unknown_rank_k(e.func.value, func, ctx, depth + 1)
        return None
    if isinstance(e, ast.Subscript) and isinstance(e.slice, ast.Constant) and isinstance(e.value, ast.Call):
        return _run_time_k(e.value, func, ctx)  # `ops.topk(x, k)[1]`
    if not isinstance(e, ast.Name):
        return None
    binds = analyzer(ctx).bindings_of(e.id, func)
    if not binds:
        return None
    found: ast.expr | None = None
    for how, value in binds:
        if how == UNPACK_AT and isinstance(value, tuple) and len(value[1]) == 1 and isinstance(value[0], ast.Call):
            k = _run_time_k(value[0], func, ctx)  # `_, idx = ops.topk(x, k)`
        elif how == ASSIGN and isinstance(value, ast.expr) and reads(value, {e.id}):
            if _keeps_rank_of(value, e.id, ctx):
                continue  # `idx = idx.astype(ms.int64)`: what the other bindings give
            return None
        elif how == ASSIGN and isinstance(value, ast.expr):
            k = _unknown_rank_k(value, func, ctx, depth + 1)
        else:
            k = None
        if k is None:
            return None  # every binding must give such a tensor
        found = k
    return found


def _keeps_rank_of(e: ast.expr, name: str, ctx: Context) -> bool:
    """Is `e` the name `name` itself, through arithmetic with constants or a dtype cast?"""
    if isinstance(e, ast.Name):
        return e.id == name
    if isinstance(e, ast.BinOp):
        sides = (e.left, e.right)
        return any(_keeps_rank_of(x, name, ctx) for x in sides) and all(
            isinstance(x, ast.Constant) or _keeps_rank_of(x, name, ctx) for x in sides
        )
    if isinstance(e, ast.UnaryOp):
        return _keeps_rank_of(e.operand, name, ctx)
    return (
        isinstance(e, ast.Call)
        and isinstance(e.func, ast.Attribute)
        and e.func.attr in _CASTS
        and not (ctx.qualname(e.func) or "").startswith("mindspore.")
        and _keeps_rank_of(e.func.value, name, ctx)
    )


def _run_time_k(call: ast.Call, func: ast.AST, ctx: Context) -> ast.expr | None:
    """The `k` of a `topk` call when it is known only at run time (a number read from a
    tensor, `int(t)`, `t.item()`, or a tensor the graph computes: measured, `ops.topk(x,
    ks[0])` is refused as `int(ks[0])` is); else None."""
    k = _topk_k(call, func, ctx)
    if k is None:
        return None
    a = analyzer(ctx)
    if not a.kind(k, func).dynamic or a.folded_tensor(k, func):
        return None
    return k


def _topk_k(call: ast.Call, func: ast.AST, ctx: Context) -> ast.expr | None:
    """The `k` argument of `ops.topk(x, k)` / `x.topk(k)` (a tensor method), else None."""
    f = call.func
    if not isinstance(f, ast.Attribute) or f.attr != "topk":
        return None
    q = ctx.qualname(f) or ""
    if q.startswith("mindspore."):
        index = 1  # `ops.topk(input, k, ...)`
    elif analyzer(ctx).kind(f.value, func) == Kind.TENSOR:
        index = 0  # `x.topk(k, ...)`
    else:
        return None
    if len(call.args) > index and not any(isinstance(x, ast.Starred) for x in call.args[: index + 1]):
        return call.args[index]
    return next((kw.value for kw in call.keywords if kw.arg == "k"), None)
