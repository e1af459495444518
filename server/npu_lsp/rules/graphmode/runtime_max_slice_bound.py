"""MS212: (LAX) a slice bound computed by `max` / `min` of a number known only at run time."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.flow import Kind, analyzer
from npu_lsp.rules.graphmode.helpers import GraphRule

_REDUCERS = frozenset({"builtins.max", "builtins.min"})


@rule(code="MS212", name="runtime-max-slice-bound", severity="error", family="graphmode")
class RuntimeMaxSliceBound(GraphRule):
    """## What it does
    Under the default LAX syntax level, flags a slice bound of a tensor computed by the
    builtin `max` or `min` of numbers one of which is known only at run time (`seq[b,
    :max(n, 1)]` with `n` counted by a `while` on a tensor condition, or `n = int(t)`), also
    through a name bound once to it.

    ## Why is this bad?
    MindSpore 2.10 compiles `max` / `min` of graph scalars known only at run time to a
    reduction over a sequence, and a slice bound made from its result needs an operator the
    CPU backend does not have: `Kernel select failed: Unsupported op [IsDimUnKnown] on
    CPU`. The run-time scalar itself as the bound (`seq[b, :n]`), `max` of numbers known
    while compiling, and the same `max(n, 1)` used as a factor compile. (STRICT refuses
    `max` of a run-time scalar anywhere: MS131.)

    ## Example
    ```python
    def construct(self, seq):
        n = int(seq[0, 0])
        return seq[0, :max(n, 1)]
    ```

    ## Use instead
    Clamp with a conditional expression (`n if n > 1 else 1`) or on the tensor before
    reading the number (`int(seq[0, 0].clip(1, None))`).

    ## Fix safety
    No automatic fix.

    ## References
    - Measured on MindSpore 2.10 CPU, LAX and STRICT: written set `heldout21a`
      (`r2_emb_oov_fallback_while_item`) and its probes `tc22_*slice_m*`: `max(n, 1)` and
      `min(n, 3)` of a `while`-counted `n`, `max(int(t), 1)` as a slice bound are rejected
      ("Unsupported op [IsDimUnKnown]"); `seq[0, :n]`, `max(n, 1)` after a `while` on a
      constant condition, and `max(n, 1)` as a factor compile at LAX.
    """

    nodes = (ast.Subscript,)
    words = ("max(", "min(")

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        assert isinstance(node, ast.Subscript)
        index = node.slice
        if ctx.function is None or not ctx.scope or ctx.scope.level != "lax":
            return ()
        if type(index) is ast.Tuple:
            parts = [p for p in index.elts if type(p) is ast.Slice]
        elif type(index) is ast.Slice:
            parts = [index]
        else:
            return ()
        if not parts or not isinstance(node.ctx, ast.Load):
            return ()
        return self._check(node, parts, ctx)

    def _check(self, node: ast.Subscript, parts: list[ast.expr], ctx: Context) -> Iterable[Diagnostic]:
        a = analyzer(ctx)
        for part in parts:
            assert isinstance(part, ast.Slice)
            for bound in (part.lower, part.upper, part.step):
                if bound is None:
                    continue
                call = bound
                if type(call) is ast.Name:
                    call = a.single_assignment(call.id, ctx.function) or call
                if not (type(call) is ast.Call and len(call.args) >= 2 and not call.keywords):
                    continue
                if ctx.qualname(call.func) not in _REDUCERS:
                    continue
                kinds = [a.kind(v) for v in call.args]
                if Kind.VAR not in kinds or any(k in (Kind.TENSOR, Kind.UNKNOWN) for k in kinds):
                    continue
                if a.kind(node.value) != Kind.TENSOR:
                    continue
                yield ctx.diagnostic(
                    self,
                    bound,
                    f"`{ctx.segment(call)}` takes `{ctx.segment(call.func)}` of a number known only at run time; MindSpore compiles it to a sequence reduction, and a slice bound made from it needs an operator the CPU backend lacks (\"Unsupported op [IsDimUnKnown]\"): clamp with a conditional expression (`n if n > 1 else 1`) instead",
                )
                return
