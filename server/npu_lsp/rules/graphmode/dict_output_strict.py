"""MS148: (STRICT) a dict returned from the outermost graph, then read by key in Python."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.flow import analyzer
from npu_lsp.rules.graphmode.helpers import GraphRule

# what Python code does with a dict that a tuple cannot do
_DICT_METHODS = frozenset({"items", "keys", "values", "get"})


@rule(code="MS148", name="dict-output-under-strict", severity="error", family="graphmode")
class DictOutputUnderStrict(GraphRule):
    """## What it does
    Under the STRICT syntax level, flags a `return` of a dict from the outermost compiled
    function (a Cell's `construct` or a `@jit` function called from plain Python) when the
    plain-Python caller reads the result as a dict: `net(x)["loss"]`, `out = net(x)` then
    `out["loss"]`, `out.items()`, `out.get(...)`.

    ## Why is this bad?
    STRICT graphs hand a returned dict back as a tuple of its values (`{"a": 1}` comes back
    as `(1,)`), so the caller fails: `TypeError: tuple indices must be integers or slices,
    not str`. Under the default LAX level the dict comes back as a dict.

    ## Example
    ```python
    class Head(nn.Cell):
        def construct(self, x):
            return {"maps": x, "thresh": x * 0.5}

    out = Head()(x)
    print(out["maps"])
    ```

    ## Use instead
    Return a tuple (or a namedtuple built outside the graph) and name its parts in Python:
    ```python
    class Head(nn.Cell):
        def construct(self, x):
            return x, x * 0.5

    maps, thresh = Head()(x)
    ```

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 4 (STRICT changes return types: a returned dict comes back as a tuple).
    """

    nodes = (ast.Return,)
    strict_only = True

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        assert isinstance(node, ast.Return)
        if not ctx.scope or not ctx.scope.strict or node.value is None:
            return
        func = ctx.function
        if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return
        a = analyzer(ctx)
        if not (isinstance(node.value, (ast.Dict, ast.DictComp)) or a.type_class(node.value) == "dict"):
            return
        for call in a._module_level_calls(func):
            use = _read_as_dict(call, ctx)
            if use is not None:
                yield ctx.diagnostic(
                    self,
                    node,
                    f"under STRICT this dict comes back to Python as a tuple of its values, but line {use.lineno} reads it as a dict (`{ctx.segment(use)}`); return a tuple",
                )
                return


def _read_as_dict(call: ast.Call, ctx: Context) -> ast.expr | None:
    """The expression where plain-Python code reads the result of `call` as a dict."""
    parent = ctx.parent(call)
    if _dict_use(parent, call):
        return parent  # type: ignore[return-value]
    if not (
        isinstance(parent, ast.Assign)
        and len(parent.targets) == 1
        and isinstance(parent.targets[0], ast.Name)
    ):
        return None
    name = parent.targets[0].id
    block = ctx.parent(parent)
    body = getattr(block, "body", None)
    if not isinstance(body, list) or parent not in body:
        return None
    for st in body[body.index(parent) + 1 :]:
        for n in ast.walk(st):
            if isinstance(n, ast.Name) and n.id == name:
                if isinstance(n.ctx, ast.Store):
                    return None  # rebound: later reads see another value
                up = ctx.parent(n)
                if _dict_use(up, n):
                    return up  # type: ignore[return-value]
    return None


def _dict_use(parent: ast.AST | None, value: ast.expr) -> bool:
    if isinstance(parent, ast.Subscript) and parent.value is value:
        key = parent.slice
        return isinstance(key, ast.Constant) and isinstance(key.value, str)
    if isinstance(parent, ast.Attribute) and parent.value is value:
        return parent.attr in _DICT_METHODS
    return False
