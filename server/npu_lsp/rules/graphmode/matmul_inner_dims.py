"""MS223: a matrix product in compiled code whose operands' inner dimensions differ."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.helpers import GraphRule
from npu_lsp.rules.graphmode.ranks import Shape, describe, ranks

#: the functions computing `a @ b` that check `a`'s last dim against `b`'s second-to-last
_MATMUL_FUNCS = frozenset({"mindspore.ops.matmul", "mindspore.mint.matmul"})


@rule(code="MS223", name="matmul-inner-dimension-mismatch", severity="error", family="graphmode")
class MatmulInnerDimensionMismatch(GraphRule):
    """## What it does
    Flags `ops.matmul(a, b)`, `mint.matmul(a, b)`, `a.matmul(b)` and `a @ b` in compiled code
    when the shapes of `a` and `b` are known while compiling and `a`'s last dimension differs
    from `b`'s second-to-last. Shapes come from the tensors the module-level calls pass
    (`Tensor(np.random.randn(3, 6))`), the ops applied to them, and the tensors `__init__`
    stores once on `self`: `Parameter(Tensor(np.random.randn(vocab, d)))` with the
    constructor's arguments (or their defaults), `nn.Dense(d, k).weight` (`(k, d)`),
    `nn.Embedding(vocab, d).embedding_table` (`(vocab, d)`).

    ## Why is this bad?
    MindSpore infers every shape of the graph while compiling, and `MatMulExt` stops the
    compile at every syntax level with `ValueError: For 'MatMulExt' op, shape1[-1] must be
    equal to shape2[-2], but got 6 and 10.` The usual cause in ported PyTorch code is
    `w.transpose(0, 1)` of a 2-D weight (a tied LM head, an attention score): in a graph
    `Tensor.transpose` takes the whole permutation, as numpy's does, so `(0, 1)` leaves the
    weight as it is. PyNative follows PyTorch's meaning and runs, so the code fails only
    once compiled.

    ## Example
    ```python
    class TiedHead(nn.Cell):
        def __init__(self, d=6, vocab=10):
            super().__init__()
            self.weight = Parameter(Tensor(np.random.randn(vocab, d).astype(np.float32)))

        def construct(self, h):  # h: (3, 6)
            return ops.matmul(h, self.weight.transpose(0, 1))  # still (10, 6)
    ```

    ## Use instead
    ```python
        def construct(self, h):
            return ops.matmul(h, self.weight.T)  # or .swapaxes(0, 1), .transpose(1, 0)
    ```

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 1 (rejected at every level); `_transpose` of the shape model
      (ranks.py) and `Tensor.transpose(*axes)` in mindspore/common/tensor.py (2.10).
    - Measured on MindSpore 2.10 CPU: written/heldout28b probes `fix29a_mm_*` (a Parameter,
      `nn.Dense`'s weight and `ops.ones` made in `__init__`, `.transpose(0, 1)` /
      `(-2, -1)`, `ops.matmul` / `mint.matmul` / `@` / `.matmul`: rejected at both levels;
      a square weight, `.T`, `.swapaxes(0, 1)`, `.transpose(1, 0)`: compile), the held-out
      cases heldout28a `r2_blk_tied_lm_head_weight_transpose_2d` and heldout28b
      `r2_tfm_transpose_two_axes_2d_weight`.
    """

    nodes = (ast.Call, ast.BinOp)
    calls = frozenset({"matmul"})
    words = ("matmul", "@")

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        pair: tuple[ast.expr, ast.expr] | None
        if isinstance(node, ast.BinOp):
            if type(node.op) is not ast.MatMult:
                return ()
            pair = (node.left, node.right)
        else:
            assert isinstance(node, ast.Call)
            pair = _operands(node, ctx)
        if pair is None:
            return ()
        func = ctx.function
        if func is None:
            return ()
        model = ranks(ctx)
        firsts = model.value_at(pair[0], func)
        if not any(isinstance(v, tuple) for v in firsts):
            return ()
        seconds = model.value_at(pair[1], func)
        for a, b in zip(firsts, seconds, strict=False):
            if isinstance(a, tuple) and isinstance(b, tuple) and _clash(a, b):
                return [ctx.diagnostic(self, node, _message(a, b, pair[1], ctx))]
        return ()


def _operands(call: ast.Call, ctx: Context) -> tuple[ast.expr, ast.expr] | None:
    if call.keywords or any(isinstance(a, ast.Starred) for a in call.args):
        return None
    f = call.func
    if len(call.args) == 2 and ctx.qualname(f) in _MATMUL_FUNCS:
        return call.args[0], call.args[1]
    if len(call.args) == 1 and isinstance(f, ast.Attribute) and f.attr == "matmul" and ctx.qualname(f) is None:
        return f.value, call.args[0]  # `a.matmul(b)` of a local tensor, not a module's function
    return None


def _clash(a: Shape, b: Shape) -> bool:
    """Do `a`'s last dim and `b`'s second-to-last differ for sure? A shape of the model is a
    lower bound of the graph's (an operand of unknown shape may broadcast a dim of 1 wider,
    or add leading axes), so only dims other than 1, and `b` of rank 2 or more, count."""
    if not a or len(b) < 2:
        return False
    x, y = a[-1], b[-2]
    return x is not None and y is not None and x != 1 and y != 1 and x != y


def _message(a: Shape, b: Shape, second: ast.expr, ctx: Context) -> str:
    msg = (
        f"matrix product of shapes {describe(a)} and {describe(b)}: {a[-1]} is not {b[-2]}; MindSpore: "
        f"\"For 'MatMulExt' op, shape1[-1] must be equal to shape2[-2]\""
    )
    if (
        isinstance(second, ast.Call)
        and isinstance(second.func, ast.Attribute)
        and second.func.attr == "transpose"
        and len(second.args) == 2
        and len(b) == 2
    ):
        msg += (
            f"; `{ctx.segment(second)}` of a 2-D tensor is the identity permutation in a graph "
            "(numpy's meaning): use `.T` or `swapaxes(0, 1)`"
        )
    return msg
