"""Engine filter: read-before-store findings after a lambda made inside a loop.

Measured on MindSpore 2.10 (written/famc probes `g17_dd_*`): once a compiled function has
run a `for` loop whose body makes a lambda (`x = functools.reduce(lambda a, b: a + b, [x, x])`
or `g = lambda a: a * 2` in `for _ in range(2):`), a `defaultdict` read before its first
store later in that function, or in a helper it calls afterwards, compiles under LAX (MS168),
and so does a comprehension over `x.tolist()` (MS193); the same code without the loop, or
with `functools.reduce(operator.add, ...)` in the loop, is rejected ("The key 0 does not
exist in the dict:{}"). Such findings are dropped (the plain lambda loop compiles under
STRICT as well).

The compiled function then returns None (it prints `None` where PyNative prints a tensor):
what follows the loop is never inferred, so STRICT's refusals of host calls there go too
(measured, written/lax probes `genfresh41_lam_*` and `genfresh41_gg_*`: `ms.Tensor(x.asnumpy())`
or `len(str(x))` after `for _ in range(2): g = lambda a: a * 2; x = g(x)`, or after `for _r0 in
range(2): g0 = ms.grad(lambda t: ms.grad(sq0)(t).sum())(x)`, in the function or a helper it
calls afterwards, compile under STRICT; before the loop, after a loop without a lambda, or
after a lambda outside a loop they are refused; fresh v6 seed 12001805).
"""

from __future__ import annotations

import ast

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import DIAGNOSTIC_FILTERS, Context
from npu_lsp.rules.graphmode.helpers import own_nodes
from npu_lsp.scope import GraphScope

#: findings the measured probes saw disappear after such a loop: read before store (LAX) and
#: STRICT's host calls (`asnumpy()`, numpy on a tensor, `str` of one)
_DROPPED = frozenset({"MS168", "MS193", "MS130", "MS131", "MS164"})


def after_loop_lambda(ctx: Context, scope: GraphScope, d: Diagnostic) -> bool:
    if d.code not in _DROPPED:
        return False
    from npu_lsp.rules.graphmode.values import compiled_callers

    if _loop_lambda_before(ctx, scope.function, d.span.line, True):
        return True
    return any(_loop_lambda_before(ctx, caller, call.lineno, True) for call, caller in compiled_callers(ctx, scope))


def _loop_lambda_before(ctx: Context, func: ast.AST, line: int, graph_only: bool = False) -> bool:
    """Does a `for` of `func` that ends before `line` make a lambda in its body (with
    `graph_only`, one the graph compiles as a function, not a call's keyword argument: a
    `key=` lambda of `sorted` over host rows changes nothing after the loop; fresh v6 seeds
    12001495, 12001509 (STRICT) and 12001884 (LAX, "cannot get item by index from an empty
    sequence") fail after `beams = sorted(cand, key=lambda b: b[0], reverse=True)[:2]` in a
    `for`)?"""
    key = ("loop-lambda-ends", id(func), graph_only)
    ends: list[int] | None = ctx.cache.get(key)
    if ends is None:
        ends = [
            n.end_lineno or n.lineno
            for n in own_nodes(func)
            if type(n) is ast.For and any(_made(s, graph_only) for b in n.body for s in ast.walk(b))
        ]
        ctx.cache[key] = ends
    return any(end < line for end in ends)


def _made(node: ast.AST, graph_only: bool) -> bool:
    """Is `node` a lambda (with `graph_only`, a call holding a lambda other than as a
    keyword argument, or a lambda bound to a name)?"""
    if not graph_only:
        return type(node) is ast.Lambda
    if type(node) is ast.Call:
        return any(type(a) is ast.Lambda for a in node.args)
    return type(node) is ast.Assign and type(node.value) is ast.Lambda


DIAGNOSTIC_FILTERS.append(after_loop_lambda)
