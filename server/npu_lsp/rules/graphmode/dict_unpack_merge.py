"""MS123: `{**a, **b}` dict unpacking in compiled code."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode import calls_table
from npu_lsp.rules.graphmode.flow import Kind, analyzer
from npu_lsp.rules.graphmode.helpers import GraphRule


def _dict_union(rule: GraphRule, node: ast.BinOp, ctx: Context) -> Iterable[Diagnostic]:
    """`d1 | d2`: measured (ms_calls.json, operation "|") to fail at both levels."""
    if not isinstance(node.op, ast.BitOr) or analyzer(ctx).type_class(node.left) != "dict":
        return
    verdict = calls_table.method("dict", "|", analyzer(ctx).kind(node.left).dynamic, ctx.scope.level if ctx.scope else "lax")
    if verdict is not None and not verdict.accepted:
        yield ctx.diagnostic(
            rule, node, f"merging dicts with `|` fails to compile in graph mode (MindSpore: {verdict.message})"
        )


def _all_constant(node: ast.Dict, ctx: Context) -> bool:
    """Merging dicts of compile-time constants is folded correctly (measured on 2.10:
    `{**d, "f": 1.0}` with float values compiles); only run-time values are mis-evaluated."""
    a = analyzer(ctx)
    return all(a.kind(v) == Kind.CONST for v in node.values)


@rule(code="MS123", name="dict-unpack-merge", severity="error", family="graphmode")
class DictUnpackMerge(GraphRule):
    """## What it does
    Flags dict displays that unpack another mapping with `**` inside compiled code, when the
    merged values are computed at run time (tensors) and an unpacked value is then computed
    with (`d["a"] + d["b"]`, `d["a"] * 2`); dicts of constants merge correctly, and returning
    the dict or an unpacked value as it is compiles.
    Also flags merging dicts with `|`, which MindSpore 2.10 rejects at every level (measured,
    `ms_calls.json`: "For operation 'bitwise_or' ... 'Dictionary' is not supported").

    ## Why is this bad?
    MindSpore mis-evaluates the display (it treats the unpacking like addition) and stops
    with `TypeError: For Operator[Add], input's type 'Tuple[...]' does not match expected
    type 'Tensor'.`, without pointing at a line.

    ## Example
    ```python
    def construct(self, x):
        d1 = {"a": x}
        d2 = {"b": x * 2}
        d = {**d1, **d2}
        return d["a"] + d["b"]
    ```

    ## Use instead
    ```python
    def construct(self, x):
        d = {"a": x, "b": x * 2}
        return d["a"] + d["b"]
    ```
    or build the merged dict with `d = d1.copy()` followed by `d.update(d2)`.

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 1: `{**d1, **d2}` (mis-evaluated).
    """

    nodes = (ast.Dict, ast.BinOp)
    words = ("|", "**")  # `a | b` (BitOr) or `{**a}` (a dict display unpacking)

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        # not a generator itself: every binary operation of compiled code comes here
        if isinstance(node, ast.BinOp):
            if not isinstance(node.op, ast.BitOr):
                return ()
            return _dict_union(self, node, ctx)
        assert isinstance(node, ast.Dict)
        if not any(k is None for k in node.keys):
            return ()
        return self._unpacked(node, ctx)

    def _unpacked(self, node: ast.Dict, ctx: Context) -> Iterable[Diagnostic]:
        if not _all_constant(node, ctx):
            read = _unpacked_value_computed_on(node, ctx)
            if read is not None:
                yield ctx.diagnostic(
                    self,
                    node,
                    f"`**` unpacking in a dict display is mis-compiled in graph mode: the values it unpacks come back wrapped in tuples, so `{ctx.segment(read)}` cannot be computed with (MindSpore: input's type 'Tuple[Tuple[Tensor...]]' does not match expected type 'Tensor')",
                )


#: parents in which an item read is computed with (not just passed on or returned)
_COMPUTING = (ast.BinOp, ast.UnaryOp, ast.Compare, ast.AugAssign, ast.Attribute, ast.Call)


def _unpacked_value_computed_on(node: ast.Dict, ctx: Context) -> ast.Subscript | None:
    """The first `d[k]` of the dict `d = {**a, ...}` whose key is not one of the display's
    own and whose value is computed with (an operand, a call argument, a method receiver).
    Measured on 2.10: `d["a"] + d["b"]`, `d["a"] * 2`, `{**a}["a"] + 1` fail at both levels;
    `return d["a"]`, `return d` and an operation on a key the display writes itself compile."""
    parent = ctx.parent(node)
    func = ctx.function
    if not (
        isinstance(parent, ast.Assign)
        and len(parent.targets) == 1
        and isinstance(parent.targets[0], ast.Name)
        and func is not None
    ):
        return None
    name = parent.targets[0].id
    own = {k.value for k in node.keys if isinstance(k, ast.Constant)}
    for n in ast.walk(func):
        if (
            isinstance(n, ast.Subscript)
            and isinstance(n.ctx, ast.Load)
            and isinstance(n.value, ast.Name)
            and n.value.id == name
            and not (isinstance(n.slice, ast.Constant) and n.slice.value in own)
        ):
            outer = ctx.parent(n)
            if isinstance(outer, _COMPUTING) and not (isinstance(outer, ast.Call) and outer.func is n):
                return n
    return None
