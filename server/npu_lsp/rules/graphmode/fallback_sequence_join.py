"""MS236: (LAX) sequences of different lengths holding a JIT Fallback value, joined at run time."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.flow import analyzer
from npu_lsp.rules.graphmode.helpers import FUNCS, GraphRule
from npu_lsp.rules.graphmode.host_list_iterated import HostListIterated
from npu_lsp.rules.graphmode.interpreted import interpreted, run_time_test

_DISPLAYS = (ast.List, ast.Tuple)


@rule(code="MS236", name="fallback-sequence-join", severity="error", family="graphmode")
class FallbackSequenceJoin(GraphRule):
    """## What it does
    Under the default LAX syntax level, flags a list or tuple display holding a value JIT
    Fallback made (`x = x + math.tanh(x.mean())`, `x + len(str(x.max().asnumpy())) * 0`, a
    NamedTuple...) that compiled code joins, under a condition decided at run time, with a
    display of another length: a function returning `[x]` under `if x[0, 0] < 0:` and `[x,
    x]` otherwise, or `[x] if x[0, 0] < 0 else [x, x]`.

    ## Why is this bad?
    MindSpore compiles both sides and runs the Python object's side by JIT Fallback
    (PyExecute), sizing its output from the other side: the program stops at run time with
    `RuntimeError: Invalid host tensor size:48 and kernel tensor size:24 for pyexecute`.
    The same join of graph tensors compiles (MindSpore joins lists of different lengths),
    so only the fallback value makes it fail. The condition is decided at run time when it
    is a tensor (`x[0, 0] < 0`) or reads the shape of a value JIT Fallback made (`x.shape[0]
    > 1` after `x = x + math.tanh(x.mean())`: its rank is unknown while compiling).

    ## Example
    ```python
    def pick(x):
        if x[0, 0] < 0:
            return [x]
        return [x, x]


    class Net(nn.Cell):
        def construct(self, x):
            x = x + math.tanh(x.mean())
            return pick(x)[0]
    ```

    ## Use instead
    Keep the value in tensor ops (`x + ops.tanh(x.mean())`), or return sequences of one
    length on both sides.

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 2 (JIT Fallback at LAX).
    - Measured on MindSpore 2.10 with the written lax probes `genfresh31_pj_*`: returned
      lists and tuples of 1 and 2 items under `if x[0, 0] < 0:` or `if x.shape[0] > 1:`, and
      a conditional expression, fail under LAX when the items are a JIT Fallback value
      ("Invalid host tensor size ... for pyexecute") and compile for a graph tensor; fresh v5
      seed 11800013.
    """

    nodes = (ast.Return, ast.IfExp)
    words = HostListIterated.words

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        scope, func = ctx.scope, ctx.function
        if scope is None or scope.level != "lax" or func is None:
            return
        if isinstance(node, ast.IfExp):
            yield from self._conditional(node, ctx, func)
            return
        assert isinstance(node, ast.Return)
        if not _display(node.value):
            return
        branch = _run_time_branch(node, func, ctx)
        if branch is None:
            return
        size = len(node.value.elts)  # type: ignore[union-attr]
        other = next(
            (r for r in _display_returns(func) if len(r.value.elts) != size and not _within(r, branch.body)),  # type: ignore[union-attr]
            None,
        )
        if other is None:
            return
        held = _fallback_item([node.value, other.value], ctx, func)  # type: ignore[list-item]
        if held is None:
            return
        yield ctx.diagnostic(
            self,
            node,
            f"this return of {size} item(s) under `{ctx.segment(branch.test)}`, a condition known only at run time, joins with the return of {len(other.value.elts)} on line {other.lineno}, and they hold `{ctx.segment(held)}`, a value JIT Fallback made: under LAX MindSpore runs that side as Python and fails at run time (Invalid host tensor size ... for pyexecute); keep the value in tensor ops, or return as many items on both sides",  # type: ignore[union-attr]
        )

    def _conditional(self, node: ast.IfExp, ctx: Context, func: ast.AST) -> Iterable[Diagnostic]:
        body, orelse = node.body, node.orelse
        if not (_display(body) and _display(orelse)) or len(body.elts) == len(orelse.elts):  # type: ignore[attr-defined]
            return
        if not _run_time(node.test, ctx, func):
            return
        held = _fallback_item([body, orelse], ctx, func)  # type: ignore[list-item]
        if held is None:
            return
        yield ctx.diagnostic(
            self,
            node,
            f"`{ctx.segment(node)}` joins sequences of {len(body.elts)} and {len(orelse.elts)} items under a condition known only at run time, and they hold `{ctx.segment(held)}`, a value JIT Fallback made: under LAX MindSpore runs that side as Python and fails at run time (Invalid host tensor size ... for pyexecute); keep the value in tensor ops, or pick as many items on both sides",  # type: ignore[attr-defined]
        )


def _display(e: ast.expr | None) -> bool:
    return type(e) in _DISPLAYS and not any(type(x) is ast.Starred for x in e.elts)  # type: ignore[union-attr]


def _run_time(test: ast.expr, ctx: Context, func: ast.AST) -> bool:
    """A condition MindSpore decides at run time: a tensor, or one reading a JIT Fallback
    value or the shape of one (`interpreted.run_time_test`)."""
    return analyzer(ctx).kind(test, func).dynamic or run_time_test(test, ctx, func)


def _run_time_branch(node: ast.AST, func: ast.AST, ctx: Context) -> ast.If | None:
    """The innermost `if` of `func` whose body holds `node`, when it is decided at run time."""
    p = ctx.parent(node)
    child: ast.AST = node
    while p is not None and p is not func and not isinstance(p, FUNCS):
        if isinstance(p, ast.If) and child in p.body:
            return p if _run_time(p.test, ctx, func) else None
        child, p = p, ctx.parent(p)
    return None


def _display_returns(func: ast.AST) -> list[ast.Return]:
    """The `return [...]` / `return (...)` statements of `func` itself (nested functions left out)."""
    out: list[ast.Return] = []
    stack: list[ast.AST] = list(getattr(func, "body", []))
    while stack:
        n = stack.pop()
        if isinstance(n, (*FUNCS, ast.ClassDef)):
            continue
        if isinstance(n, ast.Return) and _display(n.value):
            out.append(n)
            continue
        if isinstance(n, ast.stmt):
            stack.extend(ast.iter_child_nodes(n))
    return out


def _within(node: ast.AST, body: list[ast.stmt]) -> bool:
    """Is `node` on the lines of the statements `body`?"""
    first, last = body[0], body[-1]
    return first.lineno <= node.lineno <= (last.end_lineno or last.lineno)  # type: ignore[attr-defined]


def _fallback_item(displays: list[ast.List | ast.Tuple], ctx: Context, func: ast.AST) -> ast.expr | None:
    """The first item of the displays that is a value JIT Fallback made."""
    for d in displays:
        for item in d.elts:
            if interpreted(item, ctx, func):
                return item
    return None
