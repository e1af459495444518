"""MS162: a `jit_class` instance created in compiled code from a tensor."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.flow import Kind, analyzer
from npu_lsp.rules.graphmode.helpers import GraphRule


@rule(code="MS162", name="jit-class-variable-argument", severity="error", family="graphmode")
class JitClassVariableArgument(GraphRule):
    """## What it does
    Flags the creation of an instance of a `@ms.jit_class` class inside compiled code
    (`construct`, a method it calls, an `@ms.jit` function) when an argument is a tensor
    computed there (`Box(out[:, :2], ops.exp(out[:, 2:]))`).

    ## Why is this bad?
    MindSpore builds a jit_class instance while compiling, so every constructor argument must
    be a constant: with a tensor it stops at every syntax level with `TypeError: When creating
    an instance of 'Box', all arguments are required to be constants, but input 0 is a
    variable`. Constants and shapes (`Grid(x.shape[1])`) compile, and so does an instance
    made before compiling and held on `self`.

    ## Example
    ```python
    @ms.jit_class
    class Box:
        def __init__(self, xy, wh):
            self.xy = xy
            self.wh = wh

    class Head(nn.Cell):
        def construct(self, x):
            box = Box(x[:, :2], x[:, 2:])
            return box.wh.prod(axis=1)
    ```

    ## Use instead
    Pass the tensors to a function (or a method of an instance made in `__init__`):
    ```python
    def box_area(wh):
        return wh.prod(axis=1)

    class Head(nn.Cell):
        def construct(self, x):
            return box_area(x[:, 2:])
    ```

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 1 (rejected at every level).
    - Measured on MindSpore 2.10 with the written set `structure`
      (`jit_class_created_in_construct`) and its probes: a jit_class created from tensors in
      `construct`, in a helper method it calls and in an `@ms.jit` function is rejected at
      LAX and STRICT; created from a float constant or from `x.shape[1]` it compiles.
    """

    nodes = (ast.Call,)
    callee = (ast.Name,)  # `Config(...)`: the module's own class by name
    words = ("jit_class",)  # the decorator (or its import) that makes a class one

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        assert isinstance(node, ast.Call)
        # not a generator itself: most nodes stop at these tests, for the cost of a call
        # rather than of a generator each
        name = jit_class_called(node, ctx)
        if name is None:
            return ()
        return self._check(node, name, ctx)

    def _check(self, node: ast.Call, name: str, ctx: Context) -> Iterable[Diagnostic]:
        a = analyzer(ctx)
        for arg in [*node.args, *(k.value for k in node.keywords)]:
            if a.kind(arg) is Kind.TENSOR:
                yield ctx.diagnostic(
                    self,
                    node,
                    f"the jit_class `{name}` is instantiated while compiling and needs constant arguments, but `{ctx.segment(arg)}` is a tensor",
                )
                return


def jit_class_called(node: ast.Call, ctx: Context) -> str | None:
    """The name of the module's own `@jit_class` class that `node` calls, if it is one."""
    f = node.func
    if not isinstance(f, ast.Name):
        return None
    info = ctx.scopes.info.classes.get(f.id)
    if info is None or not info.jit_class:
        return None
    q = ctx.qualname(f)
    return f.id if q in (None, f"{ctx.scopes.info.module}.{f.id}") else None
