"""MS194: a tensor given as one of several separate sizes of `Tensor.reshape` / `Tensor.view`."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.flow import Kind, analyzer
from npu_lsp.rules.graphmode.helpers import GraphRule
from npu_lsp.rules.graphmode.host_list_iterated import param_shape

_METHODS = frozenset({"reshape", "view"})


@rule(code="MS194", name="tensor-size-argument", severity="error", family="graphmode")
class TensorSizeArgument(GraphRule):
    """## What it does
    Flags `x.reshape(n, -1)` / `x.view(n, 4)` (sizes given as separate arguments) in a
    network's `construct` or an `@ms.jit` function when a size is a tensor: an input every
    module-level call passes as a `Tensor(...)`, or a value computed from one
    (`size = x.shape[0] // n`).

    ## Why is this bad?
    The separate-arguments form of `Tensor.reshape` / `Tensor.view` takes Python ints only.
    MindSpore 2.10 stops at every syntax level with `TypeError: reshape(): argument 'shape'
    (position 1) must be tuple of int, not Tensor`. The tuple form `x.reshape((n, 4))`,
    `ops.reshape(x, (n, -1))`, `ops.zeros((n, 2))` and `x.reshape(int(n), -1)` compile.

    ## Example
    ```python
    class Chunker(nn.Cell):
        def construct(self, x, n_chunks):
            size = x.shape[0] // n_chunks
            return x[: size * n_chunks].reshape(n_chunks, size)

    Chunker()(Tensor(np.arange(10, dtype=np.float32)), Tensor(3, ms.int32))
    ```

    ## Use instead
    Pass the sizes as a tuple (`x.reshape((n_chunks, size))`), or as Python ints
    (`int(n_chunks)`).

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 1 (rejected at every level).
    - Measured on MindSpore 2.10 with the written set `algorithms` (`shape_reshape_from_tensor`)
      and its probes `shape_tensor_*` (`reshape(n, -1)`, `view(n, 4)`, `reshape(3, size)`
      rejected; `reshape((n, 4))`, `ops.reshape(x, (n, -1))`, `ops.zeros((n, 2))`,
      `reshape(int(n), -1)` compile). A sub-cell's `construct` parameter is not proof of a
      tensor (its parent may pass ints), so only the entry's inputs are followed.
    """

    nodes = (ast.Call,)
    words = (".reshape(", ".view(")

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        assert isinstance(node, ast.Call)
        f = node.func
        if type(f) is not ast.Attribute or f.attr not in _METHODS or len(node.args) < 2:
            return ()
        scope = ctx.scope
        if scope is None or scope.kind not in ("construct", "jit") or scope.function is not ctx.function:
            return ()
        if analyzer(ctx).kind(f.value) != Kind.TENSOR:
            return ()  # `ops.reshape(x, (n, -1))`: the function form takes a tuple
        return self._check(node, f, ctx)

    def _check(self, node: ast.Call, f: ast.Attribute, ctx: Context) -> Iterable[Diagnostic]:
        for i, arg in enumerate(node.args):
            if isinstance(arg, ast.Starred):
                return
            if _tensor(arg, ctx, 0):
                yield ctx.diagnostic(
                    self,
                    arg,
                    f"`{ctx.segment(arg)}` is a tensor: `{f.attr}` with separate sizes takes Python ints (MindSpore: \"{f.attr}(): argument 'shape' (position {i + 1}) must be tuple of int, not Tensor\"); pass a tuple (`{f.attr}(({', '.join(ctx.segment(a) for a in node.args)}))`) or `int(...)`",
                )
                return


def _tensor(e: ast.expr, ctx: Context, depth: int) -> bool:
    """Proof that `e` is a tensor: an entry input passed as a module-level `Tensor(...)`, or
    arithmetic on one."""
    if depth > 6:
        return False
    if isinstance(e, ast.Name):
        if param_shape(e.id, ctx) is not None:
            return not analyzer(ctx).rebinds(e.id, ctx.function)
        bound = analyzer(ctx).single_assignment(e.id, ctx.function)
        return bound is not None and _tensor(bound, ctx, depth + 1)
    if isinstance(e, ast.BinOp):
        return _tensor(e.left, ctx, depth + 1) or _tensor(e.right, ctx, depth + 1)
    return False
