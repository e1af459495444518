"""MS142: mutating a list held on `self` inside compiled code."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.flow import analyzer
from npu_lsp.rules.graphmode.helpers import GraphRule

_MUTATORS = frozenset({"append", "extend", "insert", "pop", "remove", "clear", "reverse", "sort"})


@rule(code="MS142", name="self-list-mutation", severity="warning", family="graphmode")
class SelfListMutation(GraphRule):
    """## What it does
    Warns about in-place list methods (`append`, `extend`, `insert`, `pop`, ...) called in
    compiled code on a list stored on `self` in `__init__`.

    ## Why is this bad?
    The graph works on a copy: after `self.history.append(x)` in `construct`,
    `net.history` is still `[]`. Local lists are fine.

    ## Example
    ```python
    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.history = []

        def construct(self, x):
            self.history.append(x)
            return x
    ```

    ## Use instead
    Return the values you want to keep and collect them outside the network:
    ```python
    class Net(nn.Cell):
        def construct(self, x):
            return x, x
    ```

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 4: mutating a list held on `self` is silently lost.
    """

    nodes = (ast.Call,)
    calls = _MUTATORS

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        assert isinstance(node, ast.Call)
        f = node.func
        if not (isinstance(f, ast.Attribute) and f.attr in _MUTATORS):
            return
        recv = f.value
        if not (
            isinstance(recv, ast.Attribute)
            and isinstance(recv.value, ast.Name)
            and recv.value.id == "self"
        ):
            return
        a = analyzer(ctx)
        if recv.attr in a.self_info(a.owner_class(ctx.function)).lists:
            yield ctx.diagnostic(
                self,
                node,
                f"`self.{recv.attr}.{f.attr}(...)` in a graph does not change the list seen from Python",
            )
