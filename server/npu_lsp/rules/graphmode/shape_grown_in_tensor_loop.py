"""MS179: a tensor grown by `concat` around a tensor-dependent `while` with no shape-based exit."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.flow import Kind, analyzer
from npu_lsp.rules.graphmode.helpers import GraphRule

#: mindspore.ops functions whose result is longer than each input (joined along an axis)
_JOINING = frozenset({"concat", "cat", "concatenate", "hstack", "vstack", "stack"})

# the outcomes a loop test can have while compiling: a folded bool, or a run-time tensor
_RUN_TIME = "tensor"
_Outcomes = frozenset[bool | str]


@rule(code="MS179", name="shape-grown-in-tensor-loop", severity="error", family="graphmode")
class ShapeGrownInTensorLoop(GraphRule):
    """## What it does
    Flags `seq = ops.concat((seq, x))` (also `ops.cat`, `ops.stack`, `hstack`, `vstack`,
    the grown tensor anywhere in the sequence) directly in the body of a `while` whose test
    depends on tensor values (`while seq.sum() < target:`), when nothing folded while
    compiling can end the loop: neither the test (`while seq.shape[0] < 4 and seq.sum() <
    target:` can, `... or ...` cannot) nor a `break` / `return` under a test of a shape.

    ## Why is this bad?
    MindSpore compiles a tensor-dependent `while` as a function that calls itself once per
    turn, specialised on the shapes of the values it carries. A tensor that grows each turn
    makes a new specialisation each time, without end: `RuntimeError: Exceed function call
    depth limit 1000` at every syntax level. A test or `break` on the grown tensor's shape
    folds while compiling and ends the chain (measured on 2.10).

    ## Example
    ```python
    def construct(self, x, target):
        seq = x
        while seq.sum() < target:
            seq = ops.concat((seq, x))
        return seq
    ```

    ## Use instead
    Bound the length with a test of the shape, which is folded while compiling:
    ```python
    def construct(self, x, target):
        seq = x
        while seq.shape[0] < 8 and seq.sum() < target:
            seq = ops.concat((seq, x))
        return seq
    ```
    or preallocate the result and write into it.

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 3 (a tensor-dependent `while` is compiled, as long as the values it
      carries keep their types; here the shapes it carries never settle).
    - Measured on MindSpore 2.10 (CPU): tests/npu_lsp/fixtures/written/shapes (probes `wd_*`,
      `gr_*`, `wa_*`) and the `runtime` set's `while_concat_growing_shape`.
    """

    nodes = (ast.While,)

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        assert isinstance(node, ast.While)
        for st in node.body:
            name = _grown(st, ctx)
            if name is None or not isinstance(st, ast.Assign) or _bound_elsewhere(name, st, node):
                continue
            outcomes = _outcomes(node.test, ctx)
            if _RUN_TIME not in outcomes or False in outcomes or _may_leave(node, ctx):
                continue
            yield ctx.diagnostic(
                self,
                st,
                f"`{name}` grows on every turn of this tensor-dependent `while` and no test of its shape ends the loop while compiling: "
                "MindSpore specialises the loop per shape without end (Exceed function call depth limit); bound it with "
                f"`{name}.shape[0] < N and ...` or preallocate the result",
            )
            return


def _grown(st: ast.stmt, ctx: Context) -> str | None:
    """`name = ops.concat((name, x))`: the name a joining op lengthens with itself in it."""
    if not (isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name)):
        return None
    call = st.value
    if not isinstance(call, ast.Call) or not call.args or not isinstance(call.args[0], (ast.Tuple, ast.List)):
        return None
    q = ctx.qualname(call.func) or ""
    if not (q.startswith("mindspore.") and q.rsplit(".", 1)[-1] in _JOINING):
        return None
    name = st.targets[0].id
    items = call.args[0].elts
    if len(items) < 2 or not any(isinstance(e, ast.Name) and e.id == name for e in items):
        return None
    return name


def _bound_elsewhere(name: str, grow: ast.Assign, loop: ast.While) -> bool:
    """Is `name` bound anywhere else in the loop (then it need not grow on every turn)?"""
    target = grow.targets[0]
    return any(
        isinstance(n, ast.Name) and n.id == name and not isinstance(n.ctx, ast.Load) and n is not target
        for n in ast.walk(loop)
    )


def _outcomes(e: ast.expr, ctx: Context) -> _Outcomes:
    """What a test can give while compiling: a folded True / False (a shape read, which
    changes as the tensor grows, or another Python constant: either), or a run-time tensor. `a and b` is `b if a else a`: a run-time `a`
    makes the whole a run-time value; a folded False ends it there."""
    if isinstance(e, ast.BoolOp):
        stop = isinstance(e.op, ast.Or)  # the folded value that decides `or` (True) / `and` (False)
        out: set[bool | str] = set()
        for operand in e.values:
            got = _outcomes(operand, ctx)
            if _RUN_TIME in got:
                out.add(_RUN_TIME)
            if stop in got:
                out.add(stop)
            if (not stop) not in got:
                return frozenset(out)
        out.add(not stop)
        return frozenset(out)
    if isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.Not):
        return frozenset(x if x == _RUN_TIME else not x for x in _outcomes(e.operand, ctx))
    if isinstance(e, ast.Constant):
        return frozenset({bool(e.value)})
    kind = analyzer(ctx).kind(e)
    if kind == Kind.CONST:
        return frozenset({True, False})  # folded, to a value not modelled here
    if kind in (Kind.TENSOR, Kind.VAR):
        return frozenset({_RUN_TIME})
    return frozenset({True, False, _RUN_TIME})


def _may_leave(loop: ast.While, ctx: Context) -> bool:
    """A `break` / `return` of the loop under a test that may fold to True (a shape read, a
    Python constant): the chain of specialisations may end there."""
    def walk(block: list[ast.stmt], guards: list[ast.expr], inner_loop: bool) -> bool:
        for st in block:
            if isinstance(st, ast.Return) or (isinstance(st, ast.Break) and not inner_loop):
                if not guards or any(True in _outcomes(g, ctx) for g in guards):
                    return True
            elif isinstance(st, ast.If):
                if walk(st.body, [*guards, st.test], inner_loop) or walk(
                    st.orelse, [*guards, ast.UnaryOp(op=ast.Not(), operand=st.test)], inner_loop
                ):
                    return True
            elif isinstance(st, (ast.For, ast.While, ast.AsyncFor)):
                if walk(st.body, guards, True) or walk(st.orelse, guards, inner_loop):
                    return True
            elif isinstance(st, (ast.With, ast.AsyncWith, ast.Try)):
                inner = [*st.body, *getattr(st, "orelse", []), *getattr(st, "finalbody", [])]
                inner += [s for h in getattr(st, "handlers", []) for s in h.body]
                if walk(inner, guards, inner_loop):
                    return True
        return False

    return walk(loop.body, [], False)
