"""MS164: (STRICT) iterating over a str in compiled code."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.flow import analyzer
from npu_lsp.rules.graphmode.helpers import GraphRule
from npu_lsp.rules.graphmode.unsupported_python_call import container_type

#: builtins that iterate over what they are given (each asks for its length under STRICT)
_ITERATING = frozenset({"enumerate", "zip"})
_ZIP_MESSAGE = (
    "`zip` over the str `{s}` is run as Python while compiling under the STRICT syntax level, "
    "and `{v}` holds run-time values (MindSpore: When handling script 'zip(...)' in graph "
    "mode, the inputs should be constant); zip a tuple of strs instead"
)


@rule(code="MS164", name="str-iterated-under-strict", severity="error", family="graphmode")
class StrIteratedUnderStrict(GraphRule):
    """## What it does
    Under the STRICT syntax level, flags a `for` loop or a comprehension over a str in
    compiled code (`for c in self.mode:`, `[c for c in "ab"]`, `for i, c in
    enumerate("ab")`), and `len` of a str (`len(self.mode)`, `len(t)`: the same `__len__`,
    measured with written/heldout24b probes `miss24_sl_*`, a literal too), the str being a literal, a str kept on `self`, or one built from
    strs (`"-" * 3`, `os.path.join(...)`, a str method's result), or a loop variable over
    an input that every call gives a list or tuple of str constants (`for t in texts`, `for
    i, t in enumerate(texts)` with `net(x, ["ab", "cd"])`; measured, written/heldout18b
    probes `fe18b_sl_*`: `len(t)` (MS144) and iterating `t` are refused). `zip` over a str is
    flagged only when another input is a tuple or list display of run-time values
    (`zip("+*", (x, y))`): on constants MindSpore runs it while compiling.

    ## Why is this bad?
    Under STRICT a str is a constant the graph cannot take apart: MindSpore 2.10 stops with
    `AttributeError: In JIT strict mode, cannot get attributes __len__ or the String object
    has no attribute: '__len__'` (its str table refuses iteration, `len()` and most str
    methods there; MS144 reports the calls). `zip` with a str is run as Python while
    compiling, which needs constant inputs: `ValueError: When handling script 'zip(...)' in
    graph mode, the inputs should be constant`. The default LAX level runs the loop. A tuple
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

    nodes = (ast.For, ast.comprehension, ast.Call)
    strict_only = True

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        if not ctx.scope or not ctx.scope.strict:
            return
        if isinstance(node, ast.Call):
            yield from self._len(node, ctx)
            return
        assert isinstance(node, (ast.For, ast.comprehension))
        it = node.iter
        if (
            isinstance(it, ast.Call)
            and isinstance(it.func, ast.Name)
            and it.func.id in _ITERATING
            and (ctx.qualname(it.func) or "") == f"builtins.{it.func.id}"
        ):
            strs = [a for a in it.args if container_type(a, ctx) == "str"]
            if not strs:
                return
            if it.func.id == "zip":
                yield from self._zip(it, strs[0], ctx)
                return
            shown = ctx.segment(strs[0])
        elif container_type(it, ctx) == "str":
            shown = ctx.segment(it)
        else:
            return
        yield ctx.diagnostic(
            self,
            it,
            f"iterating over the str `{shown}` is not available under the STRICT syntax level (MindSpore: In JIT strict mode, cannot get attributes __len__ or the String object has no attribute: '__len__'); iterate over a tuple of strs",
        )

    def _len(self, call: ast.Call, ctx: Context) -> Iterable[Diagnostic]:
        """`len(s)` of a str asks for the same `__len__` (measured, written/heldout24b case
        `ocr_encode_text_in_construct` and probes `miss24_sl_*`: a literal, `self.word`, a str
        argument, an item of a list of strs given to construct, refused under STRICT; `len`
        of the list compiles)."""
        f = call.func
        if not (isinstance(f, ast.Name) and f.id == "len" and len(call.args) == 1):
            return
        if ctx.qualname(f) != "builtins.len" or container_type(call.args[0], ctx) != "str":
            return
        yield ctx.diagnostic(
            self,
            call,
            f"`len` of the str `{ctx.segment(call.args[0])}` is not available under the STRICT syntax level (MindSpore: In JIT strict mode, cannot get attributes __len__ or the String object has no attribute: '__len__'); use a tuple of strs or compute lengths outside the network",
        )

    def _zip(self, call: ast.Call, s: ast.expr, ctx: Context) -> Iterable[Diagnostic]:
        """`zip` with a str is run as a Python call while compiling: fine on constants
        (`zip("ab", (1, 2))`, `zip(self.mode, self.scales)`), rejected when another input is a
        tuple or list display holding run-time values (`zip("+*", (x, y))`). A tuple passed in
        as an argument (`zip("ab", ys)`) compiles (judged, heldout13b `zs_` probes)."""
        kinds = analyzer(ctx)
        for arg in call.args:
            if isinstance(arg, (ast.Tuple, ast.List)) and kinds.kind(arg).dynamic:
                yield ctx.diagnostic(
                    self, call, _ZIP_MESSAGE.format(s=ctx.segment(s), v=ctx.segment(arg))
                )
                return
