"""MS186: a tensor among the separate sizes of `Tensor.reshape` / `Tensor.view`."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.flow import Kind, analyzer
from npu_lsp.rules.graphmode.helpers import GraphRule

#: the tensor methods whose sizes may be given one per argument
_METHODS = frozenset({"reshape", "view"})


@rule(code="MS186", name="tensor-size-argument", severity="error", family="graphmode")
class TensorSizeArgument(GraphRule):
    """## What it does
    Flags `x.reshape(a, b, ...)` and `x.view(a, b, ...)` on a tensor in compiled code when
    the sizes are given as separate arguments and one of them is a tensor: an input tensor
    (`x.reshape(n, -1)` with `n = Tensor(3)` passed in) or a value computed from one
    (`size = x.shape[0] // n`, then `x.reshape(3, size)`).

    ## Why is this bad?
    With separate sizes the graph packs them into a shape tuple, which must hold ints: MindSpore
    2.10 stops at every syntax level with `TypeError: reshape(): argument 'shape' (position 1)
    must be tuple of int, not Tensor.` (`view()` the same). One tuple holding the tensor
    (`x.reshape((n, 4))`), `ops.reshape(x, (n, -1))`, `ops.zeros((n, 2))` and
    `x.reshape(int(n), -1)` compile.

    ## Example
    ```python
    class Chunker(nn.Cell):
        def construct(self, x, n_chunks):      # n_chunks is a Tensor
            size = x.shape[0] // n_chunks
            return x[: size * n_chunks].reshape(n_chunks, size)
    ```

    ## Use instead
    Pass the count as a Python int (or give the sizes as one tuple):
    ```python
    class Chunker(nn.Cell):
        def __init__(self, n_chunks):
            super().__init__()
            self.n_chunks = n_chunks

        def construct(self, x):
            size = x.shape[0] // self.n_chunks
            return x[: size * self.n_chunks].reshape(self.n_chunks, size)
    ```

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 1 (rejected at every level); measured on MindSpore 2.10 with the
      written set `algorithms` (`shape_reshape_from_tensor`) and its probes `shape_*`:
      `x.reshape(n, -1)`, `x.view(n, 4)` and `x.reshape(3, x.shape[0] // n)` with a tensor
      `n` are rejected at both levels; `x.reshape((n, 4))`, `ops.reshape(x, (n, -1))`,
      `ops.zeros((n, 2), ...)`, `x.reshape(int(n), -1)` and int sizes compile.
    """

    nodes = (ast.Call,)
    calls = _METHODS  # `<x>.reshape(...)` / `<x>.view(...)` only

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        assert isinstance(node, ast.Call)
        f = node.func
        if not (isinstance(f, ast.Attribute) and f.attr in _METHODS) or len(node.args) < 2 or node.keywords:
            return
        if any(isinstance(a, ast.Starred) for a in node.args):
            return
        recv = f.value
        if isinstance(recv, ast.Name) and (recv.id == "self" or recv.id in ctx.scopes.info.imports):
            return  # `ops.reshape(x, shape)`, a method of the cell: not the tensor method
        flow = analyzer(ctx)
        size = next((a for a in node.args if flow.kind(a) == Kind.TENSOR), None)
        if size is None or flow.kind(recv) != Kind.TENSOR:
            return
        yield ctx.diagnostic(
            self,
            size,
            f"`{ctx.segment(size)}` is a tensor: `{f.attr}` with separate sizes needs Python ints in a graph (MindSpore: must be tuple of int, not Tensor) at every level; pass an int, or give the sizes as one tuple",
        )
