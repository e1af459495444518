"""MS120: `range()` over a tensor value."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.flow import Kind, analyzer
from npu_lsp.rules.graphmode.helpers import GraphRule
from npu_lsp.rules.graphmode.host_values import folded_int


@rule(code="MS120", name="range-of-tensor", severity="error", family="graphmode")
class RangeOfTensor(GraphRule):
    """## What it does
    Flags `range(t)` in compiled code when an argument is a tensor computed at run time (an
    input tensor or a value derived from one). `range(x.shape[0])` and `range(len(x))` are
    constants while compiling and are fine, and so is `reversed(range(self.t))` of a constant
    tensor held on `self` (interpreted while compiling; `range(self.t)` alone is refused).

    ## Why is this bad?
    The graph unrolls `range` while compiling, so its bounds must be known then. MindSpore
    stops with `TypeError: For 'make_range', the 0th input should be a int scalar but got
    AbstractTensor(...)` at every syntax level.

    ## Example
    ```python
    def construct(self, x, n):          # n is a Tensor
        for i in range(n):
            x = x + 1
        return x
    ```

    ## Use instead
    Loop with `while` on the tensor condition, or pass the count as a Python int:
    ```python
    def construct(self, x, n):
        i = 0
        while i < n:
            x = x + 1
            i = i + 1
        return x
    ```

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 1: `range(t)` with a tensor `t`.
    - `reversed(range(self.t))`: written/heldout33c probes `fix33f_rv_self_tensor_attr`,
      `fix33f_range_self_tensor_attr_plain`, `fix33f_rv_tensor_input` (MindSpore 2.10 CPU).
    """

    nodes = (ast.Call,)
    calls = frozenset({"range"})

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        # a list or `()`, not a generator: every `range(...)` of compiled code comes here
        assert type(node) is ast.Call
        if type(node.func) is not ast.Name or node.func.id != "range":
            return ()
        if ctx.qualname(node.func) != "builtins.range":
            return ()
        a = analyzer(ctx)
        interpreted = _reversed_arg(node, ctx)
        for arg in node.args:
            if a.kind(arg) == Kind.TENSOR:
                if interpreted and isinstance(arg, ast.Attribute) and folded_int(arg, ctx):
                    continue  # `reversed(range(self.t))` of a constant tensor attribute: folded
                return [
                    ctx.diagnostic(
                        self,
                        node,
                        f"`range` needs Python ints while compiling, but `{ctx.segment(arg)}` is a tensor",
                    )
                ]
        return ()


def _reversed_arg(node: ast.Call, ctx: Context) -> bool:
    """`range(...)` given to `reversed`: LAX and STRICT interpret the pair as Python while
    compiling, and a constant `ms.Tensor(5, ms.int32)` held on `self` (set only in
    `__init__`) is then a valid bound (measured, written/heldout33c probes
    `fix33f_rv_self_tensor_attr` accepted at both levels, `fix33f_range_self_tensor_attr_plain`
    without `reversed` rejected: "For 'make_range', the 0th input should be a int scalar but
    got AbstractTensor", `fix33f_rv_tensor_input` with an input tensor rejected)."""
    up = ctx.parent(node)
    return (
        isinstance(up, ast.Call)
        and up.args == [node]
        and isinstance(up.func, ast.Name)
        and ctx.qualname(up.func) == "builtins.reversed"
    )
