"""MS242: (LAX) a second-order `ms.grad` applied to a value JIT Fallback built at run time."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.helpers import GraphRule
from npu_lsp.rules.graphmode.interpreted import interpreted

#: the grad builders measured (written/lax probes `fix35h_ng_*`): `ms.grad` and
#: `ms.value_and_grad` both outside and inside
_GRADS = frozenset({"mindspore.grad", "mindspore.ops.grad", "mindspore.value_and_grad", "mindspore.ops.value_and_grad"})


@rule(code="MS242", name="higher-order-grad-of-fallback", severity="error", family="graphmode")
class HigherOrderGradOfFallback(GraphRule):
    """## What it does
    Under the default LAX syntax level, flags a second-order gradient in compiled code,
    `ms.grad(lambda t: ms.grad(f)(t).sum())(x)`, whose input `x` is a value JIT Fallback
    made at run time: a tensor built by Python from a run-time number
    (`x + ms.Tensor(np.ones((n, 3)))` with `n` an `ms.mutable`), or anything computed from
    such a value.

    ## Why is this bad?
    Under LAX, a call MindSpore cannot compile runs by JIT Fallback (PyExecute) and its
    result is an opaque Python object. Differentiating twice through a graph that holds one
    fails while compiling in MindSpore 2.10 with `RuntimeError: The pointer[local_dict_cnode]
    is null` (a framework error). The first-order `ms.grad(f)(x)` of the same value
    compiles, and so does the second-order grad when `x` comes only from graph operations:
    after `float(x.mean())`, a `.item()` loop, or a tensor of constants
    (`ms.Tensor(np.ones((2, 3)))`).

    ## Example
    ```python
    class Net(nn.Cell):
        def construct(self, x, n):
            x = x + ms.Tensor(np.ones((n, 3), np.float32))
            return ms.grad(lambda t: ms.grad(sq)(t).sum())(x)
    ```

    ## Use instead
    Build the tensor with tensor operations (`ops.ones((n, 3))`, `x + 1`), or pass it in from
    outside the network; then the second-order gradient compiles.

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 2 (JIT Fallback runs what the graph cannot compile as Python).
    - Measured on MindSpore 2.10 CPU, LAX: written/lax probes `fix35c_ng_*`,
      `fix35c_ng2_*` (the mutable-shape tensor rejected; `float`, `.item()`, constants,
      first-order compile), `fix35h_ng_*` (`ms.Tensor(x.asnumpy())`, `len(str(...))`
      arithmetic, an inner `def`, an inner `ms.value_and_grad`, in `construct` itself:
      rejected; `ops.ones((n, 3))` of the mutable: compiles); v6 seeds 12000535 and
      12000493 (a NamedTuple built in compiled code).
    """

    nodes = (ast.Call,)
    calls = frozenset({"grad", "value_and_grad"})
    words = ("grad",)

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        assert isinstance(node, ast.Call)
        func = ctx.function
        if func is None or not ctx.scope or ctx.scope.level != "lax":
            return
        if ctx.qualname(node.func) not in _GRADS or not node.args or not _differentiates_a_grad(node.args[0], ctx):
            return
        applied = ctx.parent(node)
        if type(applied) is not ast.Call or applied.func is not node:
            return
        for arg in applied.args:
            if type(arg) is not ast.Starred and interpreted(arg, ctx, func):
                yield ctx.diagnostic(
                    self,
                    applied,
                    f"a second-order gradient of `{ctx.segment(arg)}`, a value JIT Fallback builds at run time: "
                    'MindSpore cannot differentiate twice through it (LAX: "The pointer[local_dict_cnode] is null"); '
                    "build the value with tensor operations or pass it in",
                )
                return


def _differentiates_a_grad(f: ast.expr, ctx: Context) -> bool:
    """Is `f` a lambda, or the name of a function of this file (a closure or a module
    function), whose own body calls what a grad builder returns (`ms.grad(g)(t)`,
    `ms.value_and_grad(g)(t)`): the outer grad is then a second-order one."""
    if type(f) is ast.Lambda:
        return _calls_a_gradient(f.body, ctx)
    if type(f) is not ast.Name:
        return False
    return any(_calls_a_gradient(d, ctx) for d in _functions_named(f.id, ctx))


def _calls_a_gradient(body: ast.AST, ctx: Context) -> bool:
    for n in ast.walk(body):
        if type(n) is ast.Call and type(n.func) is ast.Call and ctx.qualname(n.func.func) in _GRADS:
            return True
    return False


def _functions_named(name: str, ctx: Context) -> list[ast.AST]:
    """The `def`s of the file called `name` (any depth; once per file, only files with a
    second-order-looking grad come here)."""
    defs: dict[str, list[ast.AST]] | None = ctx.cache.get("ms242.defs")
    if defs is None:
        defs = ctx.cache["ms242.defs"] = {}
        for n in ast.walk(ctx.tree):
            if type(n) in (ast.FunctionDef, ast.AsyncFunctionDef):
                defs.setdefault(n.name, []).append(n)  # type: ignore[attr-defined]
    return defs.get(name, [])
