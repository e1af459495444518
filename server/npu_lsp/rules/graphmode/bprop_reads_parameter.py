"""MS219: a Cell's custom `bprop` reads a Parameter of the Cell."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.bprop_output_not_tuple import custom_bprops
from npu_lsp.rules.graphmode.flow import SelfInfo, analyzer
from npu_lsp.rules.graphmode.helpers import GraphRule
from npu_lsp.rules.graphmode.parameter_receivers import LAYER_PARAMETERS


@rule(code="MS219", name="bprop-reads-parameter", severity="error", family="graphmode")
class BpropReadsParameter(GraphRule):
    """## What it does
    Flags a read of a Parameter of the Cell in the body of its custom `bprop`, when the
    Cell's `construct` is compiled and the file takes a gradient: `self.w` made a
    `Parameter` in `__init__` (also with `requires_grad=False`, also only its `.shape` or
    through a local alias `w = self.w`), or the weight of a `mindspore.nn` layer held on
    `self` (`self.fc.weight`).

    ## Why is this bad?
    MindSpore 2.10 compiles a custom `bprop` into the backward graph without the Cell's
    Parameters, and stops at every syntax level: `RuntimeError: The user defined 'bprop'
    function in scope ... does not support using Parameter.` PyNative runs the same code,
    so the mistake shows only when the gradient is compiled.

    ## Example
    ```python
    class Scaled(nn.Cell):
        def __init__(self):
            super().__init__()
            self.w = Parameter(Tensor(np.ones((3, 2), np.float32)), name="w")

        def construct(self, x):
            return ops.matmul(x, self.w)

        def bprop(self, x, out, dout):
            return (ops.matmul(dout, self.w.T),)
    ```

    ## Use instead
    Give the `bprop` what it needs through `construct`'s inputs (pass the weight in as an
    input, `construct(self, x, w)`), keep a plain tensor copy that is no Parameter, or drop
    the custom `bprop` and let MindSpore differentiate `construct`.

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 1 (rejected at every level); section 0 (a custom `bprop` is
      compiled with the gradient of its Cell).
    - Measured on MindSpore 2.10 (CPU), LAX and STRICT, written set `heldout25a`
      (`r2_bprop_lambda_inside_jit`) and its probes `fix25c_bprop_*`: `self.w.T`,
      `self.w.shape`, `w = self.w`, a frozen Parameter and `self.fc.weight` in `bprop`
      (gradient by `ms.grad`, `ms.value_and_grad` or `GradOperation` in `construct`) are
      rejected; a plain tensor attribute, a `bprop` not reading the Parameter, a call of
      the sub-cell (`self.fc(x)`) or of a helper method reading `self.w`, and the Cell
      compiled without a gradient compile.
    """

    # `bprop` is no graph scope of its own: the rule looks at the classes whose `construct`
    # is one, once per module
    nodes = (ast.Module,)
    graph_only = False
    words = ("bprop",)

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        assert isinstance(node, ast.Module)
        for cls, bprop, construct in custom_bprops(node, ctx):
            if not bprop_cell_compiled(cls, construct, node, ctx):
                continue
            read = _parameter_read(bprop, cls, ctx)
            if read is not None:
                yield ctx.diagnostic(
                    self,
                    read,
                    f"`bprop` reads the Parameter `{ctx.segment(read)}`, which MindSpore does not support in a user-defined `bprop` (does not support using Parameter); pass the weight in as an input of `construct`, or drop the custom `bprop`",
                )


def bprop_cell_compiled(cls: ast.ClassDef, construct: ast.FunctionDef, tree: ast.Module, ctx: Context) -> bool:
    """Is `construct` compiled, or is the Cell held on `self` by a Cell of the file whose
    compiled `construct` reads it (`self.grad_op(self.inner)(x)`: the gradient compiles the
    sub-cell, measured, probe `fix25c_bprop_param_construct_grad`)?"""
    if ctx.scopes.scope_for(construct) is not None:
        return True
    a = analyzer(ctx)
    for outer in tree.body:
        if not isinstance(outer, ast.ClassDef) or outer is cls:
            continue
        held = [
            attr
            for attr, values in a.self_values(outer).items()
            if any(isinstance(v, ast.Call) and isinstance(v.func, ast.Name) and v.func.id == cls.name for v in values)
        ]
        if not held:
            continue
        body = next((m for m in outer.body if isinstance(m, ast.FunctionDef) and m.name == "construct"), None)
        if body is None or ctx.scopes.scope_for(body) is None:
            continue
        if any(
            isinstance(n, ast.Attribute) and n.attr in held and isinstance(n.value, ast.Name) and n.value.id == "self"
            for n in ast.walk(body)
        ):
            return True
    return False


def _parameter_read(bprop: ast.FunctionDef, cls: ast.ClassDef, ctx: Context) -> ast.Attribute | None:
    """The first `self.<param>` / `self.<layer>.weight` the body of `bprop` reads."""
    info = analyzer(ctx).self_info(cls)
    reads = [n for n in ast.walk(bprop) if isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Load) and _parameter(n, info)]
    return min(reads, key=lambda r: (r.lineno, r.col_offset)) if reads else None


def _parameter(n: ast.Attribute, info: SelfInfo) -> bool:
    """`self.w` made a Parameter in `__init__`, or `self.fc.weight` of a layer held on `self`."""
    v = n.value
    if isinstance(v, ast.Name):
        return v.id == "self" and n.attr in info.parameters
    return (
        isinstance(v, ast.Attribute)
        and isinstance(v.value, ast.Name)
        and v.value.id == "self"
        and v.attr in info.cells
        and n.attr in LAYER_PARAMETERS
    )
