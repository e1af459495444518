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
#: what a `collections.deque` adds to them
_DEQUE_MUTATORS = frozenset({"appendleft", "extendleft", "popleft", "rotate"})


@rule(code="MS142", name="self-list-mutation", severity="warning", family="graphmode")
class SelfListMutation(GraphRule):
    """## What it does
    Warns about in-place list methods (`append`, `extend`, `insert`, `pop`, ...) called in
    compiled code on a list stored on `self` in `__init__`; also on a `collections.deque`
    stored there (`append`, `appendleft`, `popleft`, ...).

    ## Why is this bad?
    The graph works on a copy: after `self.history.append(x)` in `construct`,
    `net.history` is still `[]`. Local lists are fine. A deque held on `self` is read the
    same way: each call sees the deque `__init__` built, so a window that should fill over
    calls stays empty, and `if len(self.buf) < self.n: return zeros` returns zeros on every
    call (measured, written/heldout17b case `r2_anom_window_deque_buffer` and probes
    `fe17_dq_return_*`: MindSpore LAX prints `[[0. 0.]]` where PyNative prints the window).

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
    calls = _MUTATORS | _DEQUE_MUTATORS

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        assert type(node) is ast.Call
        f = node.func
        if not (type(f) is ast.Attribute and f.attr in self.calls):
            return
        recv = f.value
        if not (
            type(recv) is ast.Attribute
            and isinstance(recv.value, ast.Name)
            and recv.value.id == "self"
        ):
            return
        a = analyzer(ctx)
        cls = a.owner_class(ctx.function)
        if f.attr in _MUTATORS and recv.attr in a.self_info(cls).lists:
            yield ctx.diagnostic(
                self,
                node,
                f"`self.{recv.attr}.{f.attr}(...)` in a graph does not change the list seen from Python",
            )
        elif cls is not None and _holds_deque(cls, recv.attr, ctx):
            yield ctx.diagnostic(
                self,
                node,
                f"`self.{recv.attr}.{f.attr}(...)` in a graph does not change the deque seen from Python: each call reads the deque `__init__` built",
            )


def _holds_deque(cls: ast.ClassDef, attr: str, ctx: Context) -> bool:
    """Is `self.<attr>` bound to a `collections.deque(...)` (and nothing else) in `cls`?"""
    bound = analyzer(ctx).self_values(cls).get(attr, [])
    return bool(bound) and all(
        isinstance(v, ast.Call) and ctx.qualname(v.func) == "collections.deque" for v in bound
    )
