"""MS233: `ops.jvp` given its tangents as a one-element tuple or list in compiled code."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.flow import analyzer
from npu_lsp.rules.graphmode.helpers import GraphRule

#: the forward-mode function whose tangents are looked at, by its qualified name's last part
_JVP = frozenset({"jvp"})


@rule(code="MS233", name="jvp-one-element-tangents", severity="error", family="graphmode")
class JvpOneElementTangents(GraphRule):
    """## What it does
    Flags `ops.jvp(fn, inputs, v)` in compiled code (an `@ms.jit` function, `construct`)
    when the tangents `v` are a tuple or list of one element (`ops.jvp(f, (x,), (v,))`,
    `ops.jvp(f, [x], [v])`, or a local bound once to such a display), whatever `fn` is (a
    plain function, a gradient function).

    ## Why is this bad?
    MindSpore 2.10's `ops.jvp` differentiates a single input with a gradient that returns
    one tensor, and gives it the tangents as the sensitivity of that tensor: a one-element
    tuple there cannot join with the tensor, and compiling stops at every syntax level with
    `TypeError: Type Join Failed: Abstract type AbstractTuple cannot join with
    AbstractTensor`. Bare tensors (`ops.jvp(f, x, v)`) and two or more inputs with as many
    tangents (`ops.jvp(f, (x, y), (vx, vy))`) compile.

    ## Example
    ```python
    @ms.jit
    def tangent(x, v):
        _, t = ops.jvp(f, (x,), (v,))
        return t
    ```

    ## Use instead
    Pass the single input and its tangent as tensors:
    ```python
    @ms.jit
    def tangent(x, v):
        _, t = ops.jvp(f, x, v)
        return t
    ```

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md has no row for it (a limit of `ops.jvp`, rejected at every level).
    - MindSpore 2.10 `mindspore/ops/function/grad/grad_func.py` (`jvp`: one input goes
      through `_grad_single(grad_single)(u, jvp_inputs, vectors)` with `vectors` the
      tangents as given).
    - Measured on MindSpore 2.10 (CPU), LAX and STRICT: written set `heldout30b`
      (`hvp_forward_over_reverse_jvp`, `r2_jvp_of_wrapped_grad_def`,
      `r2_jvp_plain_function_tuple_clean`; `jvp_single_tensor_not_tuple`,
      `r2_jvp_of_grad_single_tensor_args` and `jvp_tuple_inputs_has_aux_clean` compile)
      and its probes `fix30d_jvp_*`.
    """

    nodes = (ast.Call,)
    words = ("jvp",)
    calls = _JVP

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        assert isinstance(node, ast.Call)
        q = ctx.qualname(node.func) or ""
        if q.split(".")[0] != "mindspore" or q.rsplit(".", 1)[-1] not in _JVP:
            return ()
        tangents = node.args[2] if len(node.args) > 2 else next((k.value for k in node.keywords if k.arg == "v"), None)
        if tangents is None or not _one_element(tangents, ctx):
            return ()
        return [
            ctx.diagnostic(
                self,
                tangents,
                f"`ops.jvp` of one input given its tangents as a one-element sequence `{ctx.segment(tangents)}`: MindSpore 2.10 cannot join that tuple with the tensor its gradient gives (Type Join Failed: AbstractTuple cannot join with AbstractTensor); pass the input and its tangent as tensors (`ops.jvp(f, x, v)`)",
            )
        ]


def _one_element(e: ast.expr, ctx: Context) -> bool:
    """A tuple or list display of one (non-starred) element, or a local bound once to one."""
    if isinstance(e, ast.Name) and ctx.function is not None:
        bound = analyzer(ctx).single_assignment(e.id, ctx.function)
        if bound is None:
            return False
        e = bound
    return isinstance(e, (ast.Tuple, ast.List)) and len(e.elts) == 1 and not isinstance(e.elts[0], ast.Starred)
