"""MS131: (STRICT) numpy, builtin or stdlib calls on graph variables."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.flow import analyzer
from npu_lsp.rules.graphmode.helpers import GraphRule

# Builtins the graph compiler implements itself (fine on tensors at any level).
_GRAPH_BUILTINS = frozenset(
    {
        "len",
        "isinstance",
        "int",
        "float",
        "bool",
        "print",
        "range",
        "enumerate",
        "zip",
        "abs",
        "max",
        "min",
        "sum",
        "round",
        "tuple",
        "list",
        "dict",
        "all",
        "any",
        "map",
        "filter",
        "getattr",
        "hasattr",
        "setattr",
        "type",
        "str",
        "repr",
        "super",
        "pow",
        "divmod",
        "callable",
        "iter",
        "next",
        "reversed",
        "slice",
    }
)


@rule(code="MS131", name="python-call-on-tensor", severity="error", family="graphmode")
class PythonCallOnTensor(GraphRule):
    """## What it does
    Under the STRICT syntax level, flags calls into numpy, the standard library or Python
    builtins that MindSpore cannot compile (`np.square(x)`, `np.array([x[0]])`, `id(x)`,
    `sorted(x)`) when an argument is a graph variable, and `exec(...)` always.

    ## Why is this bad?
    STRICT only runs such calls while compiling, so their inputs must be constants:
    `ValueError: When handling script 'sorted(x) in graph mode', the inputs should be
    constant, but found variable 'x' to be nonconstant.` The default LAX level accepts them
    through JIT Fallback, with a host round trip at run time.

    ## Example
    ```python
    @ms.jit(fullgraph=True)
    def f(x):
        return Tensor(np.square(x))
    ```

    ## Use instead
    ```python
    @ms.jit(fullgraph=True)
    def f(x):
        return ops.square(x)
    ```

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 2 (STRICT only): numpy, builtin or stdlib calls whose arguments are
      graph variables.
    """

    nodes = (ast.Call,)

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        assert isinstance(node, ast.Call)
        if not ctx.scope or not ctx.scope.strict:
            return
        q = ctx.qualname(node.func)
        if q is None or q.startswith("mindspore.") or q.startswith(f"{ctx.scopes.info.module}."):
            return
        name = q.rsplit(".", 1)[-1]
        if q == "builtins.exec":
            yield ctx.diagnostic(
                self, node, "`exec` cannot be compiled under the STRICT syntax level"
            )
            return
        if q.startswith("builtins.") and name in _GRAPH_BUILTINS:
            return
        a = analyzer(ctx)
        for arg in [*node.args, *(k.value for k in node.keywords)]:
            if a.kind(arg).dynamic:
                yield ctx.diagnostic(
                    self,
                    node,
                    f"`{q.removeprefix('builtins.')}` needs constant inputs under STRICT, but `{ctx.segment(arg)}` is a graph variable",
                )
                return
