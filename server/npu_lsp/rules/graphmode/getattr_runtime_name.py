"""MS176: `getattr` with an attribute name computed from a tensor at run time."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.flow import analyzer
from npu_lsp.rules.graphmode.helpers import GraphRule


@rule(code="MS176", name="getattr-runtime-name", severity="error", family="graphmode")
class GetattrRuntimeName(GraphRule):
    """## What it does
    Flags `getattr(obj, name)` / `getattr(obj, name, default)` in compiled code when the
    attribute name depends on a tensor's value: `getattr(self, names[int(x[0])])`,
    `getattr(self, "f" + str(i))` with `i = int(t)`.

    ## Why is this bad?
    MindSpore resolves `getattr` while compiling, so the name must be a constant string.
    A name known only at run time stops compilation at every syntax level: `TypeError:
    getattr(): attribute name must be string but got: Tensor`, or `Cast failed, original
    value: ValueAny` when the name is picked from a list by a run-time index or formatted
    from a run-time value (`f"head{int(x.sum() > 0)}"`). Names built from constants (`getattr(self, "f" + str(1))`, a `for` over a tuple of names) compile.

    ## Example
    ```python
    def construct(self, x):
        i = int(x[0])
        return getattr(self, "head" + str(i))(x)
    ```

    ## Use instead
    Put the choices in an `nn.CellList` and select with a tensor-free index, or compute
    every branch and choose with `ops.select`.

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 1 (rejected at every level).
    - MindSpore 2.10 static-graph syntax: `getattr` is one of the builtins supported with
      constant attribute names; measured with the written probes `lax` (`ty_e`, `ty_m`
      rejected at LAX and STRICT, `ty_f`, `ty_n` compile).
    """

    nodes = (ast.Call,)
    calls = frozenset({"getattr"})  # the builtin only

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        assert isinstance(node, ast.Call)
        if not isinstance(node.func, ast.Name) or node.func.id != "getattr" or len(node.args) < 2:
            return
        if ctx.qualname(node.func) != "builtins.getattr":
            return
        name = node.args[1]
        if isinstance(name, ast.Constant) or not _runtime_name(name, ctx):
            return
        yield ctx.diagnostic(
            self,
            node,
            f"the attribute name `{ctx.segment(name)}` depends on a tensor's value, but `getattr` is resolved while compiling: MindSpore rejects a name known only at run time",
        )


def _runtime_name(name: ast.expr, ctx: Context) -> bool:
    """Is the name known only at run time? An f-string is when one of its fields is
    (`f'head_{int(x.sum() > 0)}'`: "Cast failed, original value: ValueAny" at both levels,
    fresh v6 seeds 12000025, 12000043, 12000094); fields built from constants or a loop over
    `range` (`f'blk_{i}'`) compile."""
    flow = analyzer(ctx)
    if type(name) is ast.JoinedStr:
        # a field that is a bare name is left alone: a `for i in range(len(ROWS))` index
        # reads as a run-time int to the flow model, yet the loop is unrolled and compiles
        return any(
            type(v) is ast.FormattedValue and type(v.value) is not ast.Name and flow.kind(v.value).dynamic
            for v in name.values
        )
    return flow.kind(name).dynamic
