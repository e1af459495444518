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
    `getattr(self, "f" + str(i))` with `i = int(t)`. Under LAX, also a name reading the
    `.ndim` / `.shape` of a JIT Fallback value (`x = x + len(str(x.mean())) * 0.0`, then
    `getattr(self, f"head_{x.ndim - 2}")`).

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
      rejected at LAX and STRICT, `ty_f`, `ty_n` compile); probes `genfresh35_gn_*`: after
      a JIT Fallback step `x.ndim`, `x.ndim - 2`, `x.shape[0] - 2` in the name fail at LAX
      ("attribute name must be string but got: Tensor"), a name computed before the step
      compiles (fresh v6 seed 12000556).
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
        if isinstance(name, ast.Constant):
            return
        if _runtime_name(name, ctx):
            yield ctx.diagnostic(
                self,
                node,
                f"the attribute name `{ctx.segment(name)}` depends on a tensor's value, but `getattr` is resolved while compiling: MindSpore rejects a name known only at run time",
            )
            return
        held = _fallback_shape_read(name, ctx)
        if held is not None:
            yield ctx.diagnostic(
                self,
                node,
                f"the attribute name `{ctx.segment(name)}` reads the shape of `{ctx.segment(held.value)}`, a JIT Fallback value: under LAX its `.{held.attr}` is known only at run time, but `getattr` is resolved while compiling (\"getattr(): attribute name must be string but got: Tensor\"); compute the name before the JIT Fallback step",
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


def _fallback_shape_read(name: ast.expr, ctx: Context) -> ast.Attribute | None:
    """Under LAX, the `x.ndim` / `x.shape` the name reads when `x` is a JIT Fallback value
    (`x = x + len(str(x.mean())) * 0.0`, then `getattr(self, f'head_{x.ndim - 2}')`): the
    shape of a Python object is a run-time value, a Tensor to `getattr` (measured, written/lax
    probes `genfresh35_gn_*`: `x.ndim`, `x.ndim - 2`, `x.shape[0] - 2`, `'head_' + str(x.ndim
    - 2)` fail at LAX with "attribute name must be string but got: Tensor"; a name computed
    before the fallback step, or without one, compiles; fresh v6 seed 12000556)."""
    if ctx.scope is None or ctx.scope.level != "lax" or ctx.function is None:
        return None
    from npu_lsp.rules.graphmode.opaque_value_query import opaque_at_lax

    for n in ast.walk(name):
        if type(n) is ast.Attribute and n.attr in ("ndim", "shape") and opaque_at_lax(n.value, ctx.function, ctx):
            return n
    return None
