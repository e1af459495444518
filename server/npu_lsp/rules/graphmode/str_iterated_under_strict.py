"""MS164: (STRICT) iterating over a str in compiled code."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.helpers import GraphRule
from npu_lsp.rules.graphmode.unsupported_python_call import _container_type

#: builtins that iterate over what they are given (each asks for its length under STRICT)
_ITERATING = frozenset({"enumerate", "zip"})


@rule(code="MS164", name="str-iterated-under-strict", severity="error", family="graphmode")
class StrIteratedUnderStrict(GraphRule):
    """## What it does
    Under the STRICT syntax level, flags a `for` loop or a comprehension over a str in
    compiled code (`for c in self.mode:`, `[c for c in "ab"]`, `for i, c in
    enumerate("ab")`), the str being a literal, a str kept on `self`, or one built from
    strs (`"-" * 3`, `os.path.join(...)`, a str method's result).

    ## Why is this bad?
    Under STRICT a str is a constant the graph cannot take apart: MindSpore 2.10 stops with
    `AttributeError: In JIT strict mode, cannot get attributes __len__ or the String object
    has no attribute: '__len__'` (its str table refuses iteration, `len()` and most str
    methods there; MS144 reports the calls). The default LAX level runs the loop. A tuple
    of strs (`for c in ("a", "b"):`) and `"a" in s` compile at both levels.

    ## Example
    ```python
    @ms.jit(fullgraph=True)
    def count(x):
        n = 0
        for c in "abc":
            n = n + 1
        return x * n
    ```

    ## Use instead
    ```python
    @ms.jit(fullgraph=True)
    def count(x):
        n = 0
        for c in ("a", "b", "c"):
            n = n + 1
        return x * n
    ```

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 2 (rejected only under STRICT); MindSpore 2.10's str table in
      `ms_calls.json` ("for" on a str) and the `spec` probes fs_* (tests/npu_lsp/fixtures/written/spec).
    """

    nodes = (ast.For, ast.comprehension)
    strict_only = True

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        if not ctx.scope or not ctx.scope.strict:
            return
        assert isinstance(node, (ast.For, ast.comprehension))
        it = node.iter
        if (
            isinstance(it, ast.Call)
            and isinstance(it.func, ast.Name)
            and it.func.id in _ITERATING
            and (ctx.qualname(it.func) or "") == f"builtins.{it.func.id}"
        ):
            strs = [a for a in it.args if _container_type(a, ctx) == "str"]
            if not strs:
                return
            shown = ctx.segment(strs[0])
        elif _container_type(it, ctx) == "str":
            shown = ctx.segment(it)
        else:
            return
        yield ctx.diagnostic(
            self,
            it,
            f"iterating over the str `{shown}` is not available under the STRICT syntax level (MindSpore: In JIT strict mode, cannot get attributes __len__ or the String object has no attribute: '__len__'); iterate over a tuple of strs",
        )
