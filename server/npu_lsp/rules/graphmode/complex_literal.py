"""MS113: complex number literals in compiled code."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable

from npu_lsp.astutil import walk
from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import Rule, rule

IMAGINARY = re.compile(r"[0-9.][jJ]\b")


def has_imaginary_literal(text: str) -> bool:
    """Does `IMAGINARY` match anywhere? Tried only where a `j`/`J` follows a digit or dot:
    `str.find` skips the rest at C speed (a regex search tries every position of the file)."""
    for letter in "jJ":
        i = text.find(letter, 1)
        while i != -1:
            if text[i - 1] in "0123456789." and IMAGINARY.match(text, i - 1):
                return True
            i = text.find(letter, i + 1)
    return False


@rule(code="MS113", name="complex-literal", severity="error", family="graphmode")
class ComplexLiteral(Rule):
    """## What it does
    Flags imaginary literals such as `3.14j` in compiled code.

    ## Why is this bad?
    The graph parser has no complex constants: it stops with
    `TypeError: Unsupported Constant type : 3.14j` at every syntax level.

    ## Example
    ```python
    def construct(self, x):
        return x * 2j
    ```

    ## Use instead
    Create complex tensors outside the graph (or with `ops.Complex(real, imag)`) and pass
    them in:
    ```python
    def construct(self, x, scale):
        return x * scale
    ```

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 1: complex literal `3.14j`.
    """

    # A module-level rule with a textual pre-check: complex literals are rare, and leaving
    # every Constant node out of the walk keeps the engine fast.
    nodes = (ast.Module,)

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        if not has_imaginary_literal(ctx.text):
            return
        for fn, _owner in ctx.scopes.local_roots():
            scope = ctx.scopes.scope_for(fn)
            for sub in walk(fn):
                if isinstance(sub, ast.Constant) and isinstance(sub.value, complex):
                    ctx.scope = scope  # so the diagnostic names the call sites of a helper
                    yield ctx.diagnostic(
                        self,
                        sub,
                        f"complex constant {ctx.segment(sub)} is not supported in graph mode",
                    )
        ctx.scope = None
