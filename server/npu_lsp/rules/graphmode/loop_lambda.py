"""Engine filter: read-before-store findings after a lambda made inside a loop.

Measured on MindSpore 2.10 (written/famc probes `g17_dd_*`): once a compiled function has
run a `for` loop whose body makes a lambda (`x = functools.reduce(lambda a, b: a + b, [x, x])`
or `g = lambda a: a * 2` in `for _ in range(2):`), a `defaultdict` read before its first
store later in that function, or in a helper it calls afterwards, compiles under LAX (MS168),
and so does a comprehension over `x.tolist()` (MS193); the same code without the loop, or
with `functools.reduce(operator.add, ...)` in the loop, is rejected ("The key 0 does not
exist in the dict:{}"). Such findings are dropped (the plain lambda loop compiles under
STRICT as well).
"""

from __future__ import annotations

import ast

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import DIAGNOSTIC_FILTERS, Context
from npu_lsp.rules.graphmode.helpers import own_nodes
from npu_lsp.scope import GraphScope

#: findings the measured probes saw disappear after such a loop
_DROPPED = frozenset({"MS168", "MS193"})


def after_loop_lambda(ctx: Context, scope: GraphScope, d: Diagnostic) -> bool:
    if d.code not in _DROPPED:
        return False
    from npu_lsp.rules.graphmode.values import compiled_callers

    if _loop_lambda_before(ctx, scope.function, d.span.line):
        return True
    return any(_loop_lambda_before(ctx, caller, call.lineno) for call, caller in compiled_callers(ctx, scope))


def _loop_lambda_before(ctx: Context, func: ast.AST, line: int) -> bool:
    """Does a `for` of `func` that ends before `line` make a lambda in its body?"""
    key = ("loop-lambda-ends", id(func))
    ends: list[int] | None = ctx.cache.get(key)
    if ends is None:
        ends = [
            n.end_lineno or n.lineno
            for n in own_nodes(func)
            if type(n) is ast.For and any(type(s) is ast.Lambda for b in n.body for s in ast.walk(b))
        ]
        ctx.cache[key] = ends
    return any(end < line for end in ends)


DIAGNOSTIC_FILTERS.append(after_loop_lambda)
