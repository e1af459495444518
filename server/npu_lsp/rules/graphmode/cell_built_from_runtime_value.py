"""MS183: an `nn` Cell created in compiled code from a value known only at run time."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.flow import analyzer
from npu_lsp.rules.graphmode.helpers import GraphRule


@rule(code="MS183", name="cell-built-from-runtime-value", severity="error", family="graphmode")
class CellBuiltFromRuntimeValue(GraphRule):
    """## What it does
    Flags the creation of a built-in `mindspore.nn` Cell inside compiled code (`construct`, a
    method it calls, an `@ms.jit` function) when an argument is computed from a tensor:
    `nn.AvgPool1d(kernel_size=int(k))`, `nn.Dropout(p=rate.item())`,
    `nn.LeakyReLU(alpha=float(scale))`, or a tensor itself.

    ## Why is this bad?
    MindSpore builds the Cell while compiling, so every constructor argument must be a
    constant. A Python number taken from a tensor (`int(t)`, `float(t)`, `t.item()`) is a
    run-time value in the graph, and compiling stops at every syntax level with `TypeError:
    When creating an instance of 'AvgPool1d', all arguments are required to be constants,
    but input 0 is a variable`. Constants, attributes set in `__init__` (`self.k`) and
    shapes (`x.shape[-1] // 2`) compile.

    ## Example
    ```python
    class Decomp(nn.Cell):
        def construct(self, x, kernel):
            pool = nn.AvgPool1d(kernel_size=int(kernel), stride=1)
            return pool(x)
    ```

    ## Use instead
    Build the Cell in `__init__` from a Python number:
    ```python
    class Decomp(nn.Cell):
        def __init__(self, kernel):
            super().__init__()
            self.pool = nn.AvgPool1d(kernel_size=kernel, stride=1)

        def construct(self, x):
            return self.pool(x)
    ```

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 1 (rejected at every level).
    - Measured on MindSpore 2.10 with the written set `domains`
      (`ts_dlinear_conv_kernel_from_tensor`) and its probes: `nn.AvgPool1d` from `int(k)`,
      `nn.Dropout` from `k.item()`, `nn.LeakyReLU` from `float(t)` and `nn.MaxPool1d` built in
      a helper method from `int(k.item())` are rejected at LAX and STRICT; built from a
      constant, from `self.k` or from `x.shape[-1] // 2` they compile. Primitives are not
      flagged: `ops.TopK(sorted=bool(k > 0))` is rejected but `ops.Softmax(int(axis))` and
      `ops.ReduceSum(keep_dims=bool(flag))` compile.
    """

    nodes = (ast.Call,)

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        # a list or `()`, not a generator: every call of compiled code comes here
        assert isinstance(node, ast.Call)
        if not node.args and not node.keywords:
            return ()
        q = ctx.qualname(node.func) or ""
        if not q.startswith("mindspore.nn.") or not q.rsplit(".", 1)[-1][:1].isupper():
            return ()
        a = analyzer(ctx)
        for arg in [*node.args, *(k.value for k in node.keywords)]:
            if a.kind(arg).dynamic:
                return [
                    ctx.diagnostic(
                        self,
                        node,
                        f"`{q.rsplit('.', 1)[-1]}` is built while compiling and needs constant arguments, but `{ctx.segment(arg)}` is known only at run time; build it in `__init__`",
                    )
                ]
        return ()

    def wants_call(self, callee: type[ast.AST], called: str, receiver: str) -> bool:
        # `check`'s name test: a class of `mindspore.nn` (its resolved name, whose last part
        # is the called name, starts with a capital)
        return (callee is ast.Name or callee is ast.Attribute) and called[:1].isupper()
