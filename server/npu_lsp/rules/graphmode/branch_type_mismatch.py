"""MS119: branches of a tensor-dependent `if` producing values of different types."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.control import continuation_returns
from npu_lsp.rules.graphmode.flow import Analyzer, analyzer
from npu_lsp.rules.graphmode.helpers import GraphRule, returns_in

_SEQUENCES = frozenset({"tuple", "list"})


def _classes(rets: list[ast.Return], a: Analyzer) -> set[str]:
    out: set[str] = set()
    for r in rets:
        if r.value is None:
            out.add("none")
        else:
            t = a.type_class(r.value)
            if t is not None:
                out.add(t)
    return out


def _dtypes(rets: list[ast.Return], a: Analyzer) -> set[str | None]:
    return {a.dtype_of(r.value) if r.value is not None else None for r in rets}


def _assigned(block: list[ast.stmt]) -> dict[str, ast.expr]:
    """`name = value` statements directly in `block` (the last one per name wins)."""
    out: dict[str, ast.expr] = {}
    for st in block:
        if (
            isinstance(st, ast.Assign)
            and len(st.targets) == 1
            and isinstance(st.targets[0], ast.Name)
        ):
            out[st.targets[0].id] = st.value
    return out


def incompatible(x: set[str], y: set[str]) -> str | None:
    """A human-readable reason the two sets of type classes cannot be joined, if any."""
    if "tensor" in x and y & _SEQUENCES:
        return f"Tensor vs {sorted(y & _SEQUENCES)[0]}"
    if "tensor" in y and x & _SEQUENCES:
        return f"{sorted(x & _SEQUENCES)[0]} vs Tensor"
    return None


@rule(code="MS119", name="branch-type-mismatch", severity="error", family="graphmode")
class BranchTypeMismatch(GraphRule):
    """## What it does
    Flags an `if` whose condition depends on a tensor's value when its two paths return (or
    assign to the same name) values of different kinds: a Tensor on one side and a tuple or
    list on the other, or tensors of different explicit dtypes.

    ## Why is this bad?
    Both sides of a tensor-dependent branch are compiled and their results are joined into
    one type. MindSpore stops with `TypeError: Cannot join the return values of different
    branches, perhaps you need to make them equal.` at every syntax level. Results that
    differ only in shape are fine, and so are branches on shapes or Python constants, which
    are folded while compiling.

    ## Example
    ```python
    def construct(self, x):
        if x.sum() > 0:
            return x
        return (x, x)
    ```

    ## Use instead
    Return the same structure on every path:
    ```python
    def construct(self, x):
        if x.sum() > 0:
            return (x, x * 0)
        return (x, x)
    ```

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 1: tensor-dependent branches yielding different dtype, or Tensor vs tuple.
    """

    nodes = (ast.If,)

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        assert isinstance(node, ast.If)
        # Structure first: only returns in the true branch or a name assigned in both
        # branches can disagree, and the tensor-dependence test below needs the function's
        # data flow, the dearest step of the analysis.
        if not returns_in(node.body) and not (
            node.orelse and _assigned(node.body).keys() & _assigned(node.orelse).keys()
        ):
            return
        a = analyzer(ctx)
        if not a.kind(node.test).dynamic:
            return
        reason = self._returns(node, ctx, a) or self._assigns(node, a)
        if reason:
            yield ctx.diagnostic(
                self,
                ctx.head_span(node),
                f"branches of this tensor-dependent `if` produce different types ({reason}); MindSpore cannot join them",
            )

    @staticmethod
    def _returns(node: ast.If, ctx: Context, a: Analyzer) -> str | None:
        body = returns_in(node.body)
        if not body:
            return None
        if node.orelse:
            other = returns_in(node.orelse)
        else:
            cont = continuation_returns(node, ctx)
            if cont is None:
                return None
            other = cont[0]
        x, y = _classes(body, a), _classes(other, a)
        reason = incompatible(x, y)
        if reason:
            return reason
        dx, dy = _dtypes(body, a), _dtypes(other, a)
        if len(dx) == 1 and len(dy) == 1 and None not in dx | dy and dx != dy:
            return f"dtype {next(iter(dx))} vs {next(iter(dy))}"
        return None

    @staticmethod
    def _assigns(node: ast.If, a: Analyzer) -> str | None:
        if not node.orelse:
            return None
        left, right = _assigned(node.body), _assigned(node.orelse)
        for name in sorted(left.keys() & right.keys()):
            # the other side is asked only when this one is known (a dtype costs a solve)
            x = a.type_class(left[name])
            y = a.type_class(right[name]) if x else None
            if x and y:
                reason = incompatible({x}, {y})
                if reason:
                    return f"`{name}`: {reason}"
            dx = a.dtype_of(left[name])
            dy = a.dtype_of(right[name]) if dx else None
            if dx and dy and dx != dy:
                return f"`{name}`: dtype {dx} vs {dy}"
        return None
