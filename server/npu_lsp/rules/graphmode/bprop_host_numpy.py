"""MS231: a Cell's custom `bprop` takes a tensor to the host with `asnumpy()`."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.bprop_output_not_tuple import custom_bprops
from npu_lsp.rules.graphmode.bprop_reads_parameter import bprop_cell_compiled
from npu_lsp.rules.graphmode.helpers import GraphRule


@rule(code="MS231", name="bprop-host-numpy", severity="error", family="graphmode")
class BpropHostNumpy(GraphRule):
    """## What it does
    Flags `asnumpy()` in the custom `bprop` of a Cell whose gradient compiled code takes
    (`ms.grad`, `ms.value_and_grad`, `GradOperation`, a train-step cell), at both syntax
    levels; under LAX, not when the host value is turned into a Python float at once
    (`float(np.mean(x.asnumpy()))`).

    ## Why is this bad?
    MindSpore compiles a user-defined `bprop` into the backward graph, where JIT Fallback
    does not run numpy: under LAX the gradient fails with `NameError: name '__call_func_str__'
    is not defined` (numpy on the host array, `ms.Tensor(dout.asnumpy())`, even
    `print(dout.asnumpy().shape)`); under STRICT `asnumpy` is not a graph attribute at all
    ("In JIT strict mode, cannot get attributes asnumpy"). The forward pass runs, so the
    error shows only once training starts.

    ## Example
    ```python
    class ClipGrad(nn.Cell):
        def construct(self, x):
            return x

        def bprop(self, x, out, dout):
            g = np.clip(dout.asnumpy(), -1.0, 1.0)
            return (ms.Tensor(g),)
    ```

    ## Use instead
    Compute the gradient with tensor operations:
    ```python
        def bprop(self, x, out, dout):
            return (ops.clip_by_value(dout, -1.0, 1.0),)
    ```

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 1 (a custom `bprop` is compiled into the backward graph).
    - Measured on MindSpore 2.10 with the written set `heldout30b` (cases
      `bprop_numpy_in_backward`, `r2_bprop_asnumpy_only_shape_print`) and its probes
      `fix30d_bpnp_*`: `np.maximum(dout.asnumpy(), 0.0)`, `dout.asnumpy() * 2.0`,
      `ms.Tensor(dout.asnumpy())`, `print(dout.asnumpy().shape)` in the `bprop` of a Cell
      differentiated by `ms.jit(ms.grad(net))` are rejected at LAX and STRICT;
      `float(np.mean(x.asnumpy()))` compiles under LAX and is rejected under STRICT; a
      `bprop` of tensor operations compiles.
    """

    # `bprop` is no graph scope of its own: the rule looks at the classes whose `construct`
    # is one, once per module (as MS219 does)
    nodes = (ast.Module,)
    graph_only = False
    words = ("asnumpy",)

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        assert isinstance(node, ast.Module)
        for cls, bprop, construct in custom_bprops(node, ctx):
            if not bprop_cell_compiled(cls, construct, node, ctx):
                continue
            strict = _strict(construct, ctx)
            for call in _host_reads(bprop):
                if not strict and _floated_at_once(call, ctx):
                    continue
                why = (
                    "under STRICT `asnumpy` is no graph attribute (cannot get attributes asnumpy)"
                    if strict
                    else "JIT Fallback does not run numpy there (NameError: name '__call_func_str__' is not defined)"
                )
                yield ctx.diagnostic(
                    self,
                    call,
                    f"`{ctx.segment(call)}` in a custom `bprop` fails when the gradient compiles: {why}; compute the gradient with tensor operations",
                )


def _host_reads(bprop: ast.FunctionDef) -> list[ast.Call]:
    """The `<x>.asnumpy()` calls of the body of `bprop`, in source order."""
    calls = [
        n
        for n in ast.walk(bprop)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "asnumpy" and not n.args
    ]
    return sorted(calls, key=lambda c: (c.lineno, c.col_offset))


def _floated_at_once(call: ast.Call, ctx: Context) -> bool:
    """Is `call` inside a `float(...)` of the same expression (`float(np.mean(x.asnumpy()))`)?"""
    node: ast.AST | None = ctx.parent(call)
    while isinstance(node, ast.expr):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "float":
            return True
        node = ctx.parent(node)
    return False


def _strict(construct: ast.FunctionDef, ctx: Context) -> bool:
    """The level the Cell compiles at: its `construct`'s scope, else the configured one."""
    scope = ctx.scopes.scope_for(construct)
    if scope is not None:
        return scope.strict
    return ctx.config.syntax_level == "strict"
