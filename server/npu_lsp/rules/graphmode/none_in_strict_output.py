"""MS158: (STRICT) a compiled entry returns a tuple holding `None`, and Python unpacks it."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.entries import entry_callers
from npu_lsp.rules.graphmode.helpers import GraphRule, is_root_body
from npu_lsp.scope import module_statements


@rule(code="MS158", name="none-in-strict-output", severity="error", family="graphmode")
class NoneInStrictOutput(GraphRule):
    """## What it does
    Under the STRICT syntax level, flags a `return` of a tuple with a literal `None` element
    (`return out, None`) in a jit function or a `construct` that Python calls directly, when
    the module unpacks that call into as many names (`out, weights = attn(x)`).

    ## Why is this bad?
    A STRICT graph's output drops its `None` elements: `(out, None)` comes back to Python as a
    tuple of one, and the unpacking fails with `ValueError: not enough values to unpack
    (expected 2, got 1)`. The default LAX level returns `(out, None)` as written. A sub-cell
    returning `(y, None)` to another `construct` is not affected, nor is indexing the result
    (`net(x)[0]`).

    ## Example
    ```python
    class Attention(nn.Cell):
        def construct(self, x, need_weights=False):
            w = ops.softmax(ops.bmm(x, x.transpose(0, 2, 1)), axis=-1)
            if need_weights:
                return ops.bmm(w, x), w
            return ops.bmm(w, x), None

    out, w = Attention()(x)
    ```

    ## Use instead
    Return only what exists, or a placeholder tensor:
    ```python
    class Attention(nn.Cell):
        def construct(self, x):
            w = ops.softmax(ops.bmm(x, x.transpose(0, 2, 1)), axis=-1)
            return ops.bmm(w, x)

    out = Attention()(x)
    ```

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 2 (STRICT only); measured on MindSpore 2.10 with the written set
      `ported` (`self_attention_returns_none_weights`) and probes: `(x, None)` and
      `(None, x)` from a Cell, `(x, None, y)` into three names, a jit function's `(x, None)`
      and a `None` left in a variable are rejected under STRICT; `net(x)[0]`, `len(...)` and a
      sub-cell's `(y, None)` unpacked in `construct` compile.
    """

    nodes = (ast.Return,)
    strict_only = True

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        assert isinstance(node, ast.Return)
        value = node.value
        if not isinstance(value, ast.Tuple) or not any(
            isinstance(e, ast.Constant) and e.value is None for e in value.elts
        ):
            return
        scope = ctx.scope
        if scope is None or scope.kind not in ("jit", "construct") or not is_root_body(node, ctx):
            return
        func = ctx.function
        if not isinstance(func, ast.FunctionDef):
            return
        site = _unpacked_call(func, scope.kind, len(value.elts), ctx)
        if site is None:
            return
        n_none = sum(isinstance(e, ast.Constant) and e.value is None for e in value.elts)
        yield ctx.diagnostic(
            self,
            node,
            f"under STRICT the graph output drops `None`: this tuple of {len(value.elts)} reaches Python as {len(value.elts) - n_none} item(s), and line {site.lineno} unpacks it into {len(value.elts)} (ValueError: not enough values to unpack)",
        )


def _unpacked_call(func: ast.FunctionDef, kind: str, size: int, ctx: Context) -> ast.Assign | None:
    """A module-level `a, b = entry(...)` with `size` names, calling this jit function or a
    module-level instance of the Cell whose `construct` this is (or `Cls(...)(...)`)."""
    callers = entry_callers(func, kind, ctx)
    if callers is None:
        return None
    for st in module_statements(ctx.tree):
        if not (isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.value, ast.Call)):
            continue
        target = st.targets[0]
        if not isinstance(target, (ast.Tuple, ast.List)) or len(target.elts) != size:
            continue
        if any(isinstance(e, ast.Starred) for e in target.elts):
            continue
        if callers.calls(st.value):
            return st
    return None
