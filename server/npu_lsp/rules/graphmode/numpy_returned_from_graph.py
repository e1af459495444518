"""MS134: (STRICT) returning a numpy value from a graph."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.flow import ASSIGN, analyzer
from npu_lsp.rules.graphmode.helpers import GraphRule, strict_output_items


@rule(code="MS134", name="numpy-returned-from-graph", severity="error", family="graphmode")
class NumpyReturnedFromGraph(GraphRule):
    """## What it does
    Under the STRICT syntax level, flags `return` statements of `construct` or a `@jit`
    function that return a numpy array (or another numpy object).

    ## Why is this bad?
    STRICT graphs can only output tensors, scalars and containers of them:
    `RuntimeError: Illegal type in the graph: AbstractScalar(Type: External, Value:
    PythonObject(type: <class 'numpy.ndarray'> ...`. LAX accepts it.

    ## Example
    ```python
    @ms.jit(fullgraph=True)
    def f(x):
        return np.ones(3)
    ```

    ## Use instead
    ```python
    @ms.jit(fullgraph=True)
    def f(x):
        return ops.ones(3, ms.float32)
    ```

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 2 (STRICT only): returning a numpy array or other third-party object.
    """

    nodes = (ast.Return,)
    strict_only = True

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        items = strict_output_items(node, ctx)
        if not items:
            return
        a = analyzer(ctx)
        flow = a.flow(ctx.function)
        numpy_items = [i for i in items if a.is_numpy_value(i, flow) and not _numpy_scalar(i, ctx) and not _scalar_name(i, flow, ctx)]
        if len(items) >= 2 and len(numpy_items) == len(items):
            # measured on 2.10: `return (np.ones(2), np.zeros(2))` and `return [np.ones(2),
            # np.zeros(2)]` compile under STRICT (a sequence of numpy constants only), while
            # `return np.ones(2)` and `return x, np.array(...)` are refused
            return
        # `return x.asnumpy()` is already reported by MS130 at the call itself
        if any(not _asnumpy_call(i) for i in numpy_items):
            yield ctx.diagnostic(self, node, "under STRICT, a graph cannot return numpy objects")


def _asnumpy_call(e: ast.expr) -> bool:
    return (
        isinstance(e, ast.Call) and isinstance(e.func, ast.Attribute) and e.func.attr == "asnumpy"
    )


#: numpy scalar types: a call of one gives a number, which STRICT outputs (measured on 2.10:
#: `return x, np.float32(1.5)`, `np.int64(3)`, `np.float64(0.5)` compile)
_NUMPY_SCALARS = frozenset(
    {"float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "bool_", "double", "single"}
)


def _numpy_scalar(e: ast.expr, ctx: Context) -> bool:
    if not isinstance(e, ast.Call):
        return False
    q = ctx.qualname(e.func) or ""
    return q.startswith("numpy.") and q[6:] in _NUMPY_SCALARS



def _scalar_name(e: ast.expr, flow: object, ctx: Context) -> bool:
    """A name every binding of which is a plain assignment of a numpy scalar call or of a
    value that is no numpy object (`weight = np.float32(0.5)` on one path of a tensor `if`,
    `weight = 0` on the other): a number STRICT outputs (measured, written/heldout41d probe
    `fix42a_np_literal_f32_vs_int_returned_only`: `return x, weight` compiles)."""
    if type(e) is not ast.Name or ctx.function is None:
        return False
    a = analyzer(ctx)
    bound = a.bindings_of(e.id, ctx.function)
    values = [v for how, v in bound if how == ASSIGN and isinstance(v, ast.expr)]
    return (
        bool(values)
        and len(values) == len(bound)
        and any(_numpy_scalar(v, ctx) for v in values)
        and all(_numpy_scalar(v, ctx) or not a.is_numpy_value(v, flow) for v in values)  # type: ignore[arg-type]
    )
