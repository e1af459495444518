"""MS170: a key read from `locals()` / `globals()` in compiled code."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.flow import analyzer
from npu_lsp.rules.graphmode.helpers import GraphRule

#: the builtins returning a namespace dict (`vars()` without an argument is `locals()`)
_NAMESPACES = frozenset({"builtins.locals", "builtins.globals", "builtins.vars"})


@rule(code="MS170", name="namespace-dict-subscript", severity="error", family="graphmode")
class NamespaceDictSubscript(GraphRule):
    """## What it does
    Flags a key read by subscript from `locals()`, `globals()` or `vars()` (no argument) in
    compiled code, directly (`locals()["k"]`) or through a local bound only to one
    (`g = globals()`, then `g["K"]`).

    ## Why is this bad?
    The graph has no Python frame: MindSpore 2.10 gives `locals()` as an empty dict and
    `globals()` as a dict that holds none of the module's names, so the read stops compiling
    at every level with `KeyError: The key k does not exist in the dict:{}`. `.get(k,
    default)` on them compiles (and silently gives the default), as do `len(...)` and `in`.

    ## Example
    ```python
    class Net(nn.Cell):
        def construct(self, x):
            k = 2
            return x * locals()["k"]
    ```

    ## Use instead
    ```python
    class Net(nn.Cell):
        def construct(self, x):
            k = 2
            return x * k
    ```

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 2 (JIT Fallback); written set `langref` (case
      `builtin_locals__in_construct`) and its probes `locals_*`, `globals_*`, `vars_*`.
    """

    nodes = (ast.Subscript,)
    words = ("locals(", "globals(", "vars(")

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        assert isinstance(node, ast.Subscript)
        if not isinstance(node.ctx, ast.Load):
            return
        ns = _namespace_call(node.value, ctx)
        if ns is None:
            return
        yield ctx.diagnostic(
            self,
            node,
            f"`{ctx.segment(node)}` reads a key of `{ns}()`, which has none of the function's or module's names in graph mode (MindSpore: The key ... does not exist in the dict); use the name itself",
        )


def _namespace_call(e: ast.expr, ctx: Context) -> str | None:
    """`locals` / `globals` / `vars` when `e` is a call of one without arguments, or a local
    of the compiled function bound only to one."""
    if isinstance(e, ast.Name) and ctx.function is not None:
        bound = analyzer(ctx).single_assignment(e.id, ctx.function)
        if bound is None:
            return None
        e = bound
    if isinstance(e, ast.Call) and not e.args and not e.keywords:
        q = ctx.qualname(e.func) or ""
        if q in _NAMESPACES:
            return q[9:]
    return None
