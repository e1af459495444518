"""MS143: a Cell method calling itself through `self` under a tensor-dependent condition."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.control import block_of
from npu_lsp.rules.graphmode.flow import Analyzer, analyzer
from npu_lsp.rules.graphmode.helpers import GraphRule, returns_in

#: A guard is the branch statement (or expression) whose tensor-dependent test decides
#: whether the recursive call runs.
_Guard = ast.If | ast.While | ast.IfExp


@rule(code="MS143", name="unbounded-method-recursion", severity="error", family="graphmode")
class UnboundedMethodRecursion(GraphRule):
    """## What it does
    Flags a method of a compiled Cell (including `construct`) that calls itself through
    `self.<method>(...)` when whether the call happens depends on a tensor's value: the call
    sits in a branch of a tensor-dependent `if`, `while` or conditional expression, or follows
    an `if` on a tensor that returns early. A module-level function recursing the same way is
    fine, and so is recursion whose depth is decided by Python constants.

    ## Why is this bad?
    Both paths of a tensor-dependent branch are compiled. A module-level function is
    compiled once as a recursive graph, but every `self.<method>` call is expanded again, so
    the compiler unrolls the recursion until MindSpore 2.10 stops with `RuntimeError: Exceed
    function call depth limit 1000` on the condition's line, at every syntax level (older
    versions said `There isn't any branch that can be evaluated.`).

    ## Example
    ```python
    class Net(nn.Cell):
        def grow(self, x):
            if x.sum() > 100:
                return x
            return self.grow(x * 2)

        def construct(self, x):
            return self.grow(x)
    ```

    ## Use instead
    Loop with `while` on the tensor condition (or recurse in a module-level function):
    ```python
    class Net(nn.Cell):
        def construct(self, x):
            while x.sum() <= 100:
                x = x * 2
            return x
    ```

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 1: unbounded data-dependent recursion.
    - ms210 corpus: doc_faq_endless_recursion, orig_recursion_method_countdown (rejected);
      orig_recursion_function_doubling, orig_recursion_tensor_depth (accepted).
    """

    nodes = (ast.Call,)

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        assert isinstance(node, ast.Call)
        # not a generator itself: most nodes stop at these tests, for the cost of a call
        # rather than of a generator each
        if not _is_self_call(node, ctx.function, ctx):
            return ()
        return self._check(node, ctx)

    def _check(self, node: ast.Call, ctx: Context) -> Iterable[Diagnostic]:
        func = ctx.function
        assert isinstance(func, ast.FunctionDef | ast.AsyncFunctionDef)
        guard = _dynamic_guard(node, func, ctx, analyzer(ctx))
        if guard is None:
            return
        where = guard.test if isinstance(guard, ast.IfExp) else ctx.head_span(guard)
        yield ctx.diagnostic(
            self,
            where,
            f"`{func.name}` calls itself through `self` under this tensor-dependent condition; "
            "MindSpore compiles both paths and unrolls the recursion until it exceeds its "
            "call-depth limit",
        )


def _is_self_call(call: ast.Call, func: ast.AST | None, ctx: Context) -> bool:
    """Is `call` the method `func` calling itself as `self.<its name>(...)`? Cheap tests
    first: this runs for every call in compiled code."""
    f = call.func
    if not (
        type(f) is ast.Attribute
        and type(f.value) is ast.Name
        and isinstance(func, ast.FunctionDef | ast.AsyncFunctionDef)
        and f.attr == func.name
    ):
        return False
    params = func.args.posonlyargs + func.args.args
    # `self` is the first parameter of a method defined directly in the class body
    return (
        bool(params) and f.value.id == params[0].arg and isinstance(ctx.parent(func), ast.ClassDef)
    )


def _dynamic_guard(call: ast.Call, func: ast.AST, ctx: Context, a: Analyzer) -> _Guard | None:
    """The innermost tensor-dependent condition deciding whether `call` runs, if any: an
    enclosing `if` / `while` / conditional expression (the call in a branch, not in the
    test), or an earlier `if` in an enclosing block that returns from one of its branches
    (MindSpore compiles what follows it as the other branch)."""
    node: ast.AST = call
    while node is not func:
        parent = ctx.parent(node)
        if parent is None:
            return None
        if isinstance(node, ast.stmt):
            _parent, block, index = block_of(node, ctx)
            for st in reversed(block[:index]):
                if (
                    isinstance(st, ast.If)
                    and (returns_in(st.body) or returns_in(st.orelse))
                    and a.kind(st.test).dynamic
                ):
                    return st
        if (
            isinstance(parent, ast.If | ast.While | ast.IfExp)
            and node is not parent.test
            and a.kind(parent.test).dynamic
        ):
            return parent
        node = parent
    return None
