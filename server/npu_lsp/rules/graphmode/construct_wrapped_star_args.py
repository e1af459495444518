"""MS190: `construct` wrapped by a decorator whose wrapper takes only `*args`."""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.helpers import GraphRule


@rule(code="MS190", name="construct-wrapped-star-args", severity="error", family="graphmode")
class ConstructWrappedStarArgs(GraphRule):
    """## What it does
    Flags a `construct` decorated with a decorator of the same module that returns a wrapper
    taking its inputs only through `*args` (`def wrapper(*args, **kwargs)`) without
    `functools.wraps`, also through a decorator factory (`@timed("fwd")`).

    ## Why is this bad?
    MindSpore compiles the function it finds as `construct`: here the wrapper, whose `self`
    is hidden in `*args`. The first call stops at every syntax level with `The parameters
    number of the function is 2, but the number of provided arguments is 1.` A wrapper that
    names `self` (`def wrapper(self, *args)`, `def wrapper(self, x)`) compiles, and so does
    one made with `functools.wraps`: MindSpore then reads the source of the decorated
    function and compiles it without the wrapper (what the wrapper adds, such as a cast or a
    timer, does not run in graph mode).

    ## Example
    ```python
    def timed(fn):
        def wrapper(*args, **kwargs):
            return fn(*args, **kwargs)
        return wrapper

    class Net(nn.Cell):
        @timed
        def construct(self, x):
            return self.fc(x)
    ```

    ## Use instead
    ```python
    class Net(nn.Cell):
        def construct(self, x):
            return self.fc(x)
    ```
    and time the call outside the network.

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 1 (rejected at every level); measured on MindSpore 2.10 with the
      written set `everyday` (`deco_timer_on_construct`) and its probes
      `deco_construct_*`: `(*args, **kwargs)` without `functools.wraps` is rejected at both
      levels; with `functools.wraps`, `(self, *args)` and `(self, x)` compile.
    """

    nodes = (ast.FunctionDef,)

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        # not a generator itself: most compiled functions are no decorated `construct`
        assert type(node) is ast.FunctionDef
        if node.name != "construct" or not node.decorator_list or ctx.scope is None:
            return ()
        return self._wrapped(node, ctx)

    def _wrapped(self, node: ast.FunctionDef, ctx: Context) -> Iterator[Diagnostic]:
        for deco in node.decorator_list:
            wrapper = _star_wrapper(deco, ctx)
            if wrapper is not None:
                yield ctx.diagnostic(
                    self,
                    deco,
                    f"`{ctx.segment(deco)}` replaces `construct` with `{wrapper}(*args, ...)`, which MindSpore compiles in its place and cannot give `self` and the inputs to (The parameters number of the function is 2, but the number of provided arguments is 1); name `self` in the wrapper, use `functools.wraps`, or drop the decorator",
                )
                return


def _module_def(name: str, ctx: Context) -> ast.FunctionDef | None:
    for st in ctx.tree.body:
        if isinstance(st, ast.FunctionDef) and st.name == name:
            return st
    return None


def _returned_def(fn: ast.FunctionDef) -> ast.FunctionDef | None:
    """The nested `def` that `fn` returns by name (`def wrapper(...): ...; return wrapper`)."""
    nested = {st.name: st for st in fn.body if isinstance(st, ast.FunctionDef)}
    returns = [st for st in fn.body if isinstance(st, ast.Return)]
    if len(returns) != 1 or not isinstance(returns[0].value, ast.Name):
        return None
    return nested.get(returns[0].value.id)


def _star_wrapper(deco: ast.expr, ctx: Context) -> str | None:
    """The wrapper's name when `deco` (`@d` or `@d(...)`, `d` a module-level `def`) returns a
    function without `functools.wraps` whose inputs all come through `*args`."""
    factory = isinstance(deco, ast.Call)
    head = deco.func if isinstance(deco, ast.Call) else deco
    if not isinstance(head, ast.Name):
        return None
    fn = _module_def(head.id, ctx)
    if fn is None:
        return None
    wrapper = _returned_def(fn)
    if wrapper is not None and factory:
        wrapper = _returned_def(wrapper)
    if wrapper is None:
        return None
    a = wrapper.args
    if a.posonlyargs or a.args or a.vararg is None:
        return None
    for d in wrapper.decorator_list:
        call = d.func if isinstance(d, ast.Call) else d
        if (isinstance(call, ast.Attribute) and call.attr == "wraps") or (isinstance(call, ast.Name) and call.id == "wraps"):
            return None
    return wrapper.name
