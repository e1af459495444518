"""MS228: `raise` with a tuple or list argument (`raise ValueError("bad", x.shape)`) under a run-time condition."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode import abstract as av
from npu_lsp.rules.graphmode.abstract_eval import values
from npu_lsp.rules.graphmode.flow import analyzer
from npu_lsp.rules.graphmode.helpers import GraphRule
from npu_lsp.rules.graphmode.opaque_value_query import opaque_at_lax

_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)


@rule(code="MS228", name="raise-sequence-argument", severity="error", family="graphmode")
class RaiseSequenceArgument(GraphRule):
    """## What it does
    Flags, in compiled code (at both syntax levels), a `raise` whose exception is given a
    tuple or a list among its arguments (`raise ValueError("bad shape", x.shape)`,
    `raise ValueError((2, 3))`, `raise RuntimeError("x", [1, 2])`, a name bound to
    `x.shape`) when the `raise` sits under an `if` or `while` whose test is known only at
    run time (`if x.sum() > 1000:`).

    ## Why is this bad?
    Such a `raise` is compiled into the graph as a `raise` node taking its arguments as
    inputs, and MindSpore 2.10's backend cannot pass a tuple to it: compiling stops with
    `RuntimeError: Tuple to TupleUnfold pattern should have TupleGetItem as user node, but
    got Default/raise-op0`, even when the branch is never taken. Strings, numbers, tensors
    and f-strings are accepted; a `raise` under a test MindSpore folds while compiling
    (`if x.shape[0] > 1000:`) is not compiled at all. Under LAX a shape of a JIT Fallback
    value (a Python object) is raised by Python and compiles.

    ## Example
    ```python
    class Net(nn.Cell):
        def construct(self, x):
            if x.sum() > 1000:
                raise ValueError("too big", x.shape)
            return x
    ```

    ## Use instead
    Format the values into the message:
    ```python
    class Net(nn.Cell):
        def construct(self, x):
            if x.sum() > 1000:
                raise ValueError(f"too big {x.shape}")
            return x
    ```

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 1 (rejected at every level).
    - Measured on MindSpore 2.10 CPU, LAX and STRICT (written/lax probes `fix30c_rt_*`):
      `raise ValueError('big', x.shape)`, `raise ValueError(x.shape)`, `raise
      ValueError((2, 3))`, `('big', (2, 3))`, `('big', [1, 2])`, `('big', x.shape, 'z')`,
      a name bound to `x.shape`, `RuntimeError` too, in `construct`, a helper, an `@ms.jit`
      function and a `for` body, under `if x.sum() > 1000:`, are rejected ("Tuple to
      TupleUnfold pattern should have TupleGetItem as user node, but got
      Default/raise-op0"); `('big', x.shape[0])`, `('big', 'small')`, `(1, 2)`, `('big',
      x)`, `f'big {x.shape}'`, and the tuple under `if x.shape[0] > 1000:` compile; under
      LAX, `x.shape` of `x + Tensor(x.asnumpy())` compiles. Difftest seeds 9880061,
      9880190, 9910040, 10500080.
    """

    nodes = (ast.Raise,)

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        assert isinstance(node, ast.Raise)
        exc = node.exc
        func = ctx.function
        if type(exc) is not ast.Call or func is None or not exc.args:
            return
        vals = values(ctx)
        sequence = next((a for a in exc.args if _is_sequence(a, vals.of(a, func))), None)
        if sequence is None:
            return
        test = _runtime_test(node, func, ctx)
        if test is None:
            return
        if not (ctx.scope and ctx.scope.strict) and (
            opaque_at_lax(sequence, func, ctx) or opaque_at_lax(test, func, ctx)
        ):
            return  # LAX raises a JIT Fallback value's shape in Python
        kind = vals.of(sequence, func)
        what = kind.kind if isinstance(kind, av.Sequence) else "tuple"
        yield ctx.diagnostic(
            self,
            node,
            f"this `raise` runs under the run-time test `{ctx.segment(test)}` (line {test.lineno}), so it is compiled "
            f"into the graph, and its argument `{ctx.segment(sequence)}` is a {what}: MindSpore cannot pass a "
            f"{what} to the graph's raise (Tuple to TupleUnfold pattern should have TupleGetItem as user node); "
            f"format it into the message (`f\"... {{{ctx.segment(sequence)}}}\"`)",
        )


def _is_sequence(arg: ast.expr, value: av.Value) -> bool:
    """A tuple or list argument: a display, or what the abstract values know as one
    (`x.shape`, a name bound to it); a starred argument is spread, not passed."""
    if type(arg) is ast.Starred:
        return False
    return type(arg) in (ast.Tuple, ast.List) or isinstance(value, av.Sequence)


def _runtime_test(node: ast.Raise, func: ast.AST, ctx: Context) -> ast.expr | None:
    """The test of the innermost `if` / `while` around `node` (in `func`) that is known only
    at run time: MindSpore compiles both sides of it, so the `raise` becomes a graph node."""
    a = analyzer(ctx)
    up = ctx.parent(node)
    while up is not None and up is not func and not isinstance(up, _FUNCS):
        if isinstance(up, (ast.If, ast.While)) and a.kind(up.test, func).dynamic:
            return up.test
        up = ctx.parent(up)
    return None
