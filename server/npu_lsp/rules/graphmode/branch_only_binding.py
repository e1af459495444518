"""MS118: a name bound on only one path of a tensor-dependent branch, or only in a loop body."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.control import bindings, name_events, param_names
from npu_lsp.rules.graphmode.flow import analyzer
from npu_lsp.rules.graphmode.helpers import GraphRule, terminates


@rule(code="MS118", name="branch-only-binding", severity="error", family="graphmode")
class BranchOnlyBinding(GraphRule):
    """## What it does
    Flags a local name that is assigned on only one side of an `if` whose condition depends
    on a tensor's value, or only inside a `while` loop body, and is then read after the
    branch or loop.

    ## Why is this bad?
    In a graph both branches of a tensor-dependent `if` are compiled, and each must define
    the names used afterwards. MindSpore stops with
    `UnboundLocalError: The local variable 'y' is not defined in true branch, but defined in
    false branch.` (or `... defined in the 'while' loop body cannot be used outside of the
    loop body.`), even when the path taken at run time would define it. A condition on a
    shape, a Python constant or `self.training` is folded while compiling and is fine.

    ## Example
    ```python
    def construct(self, x):
        if x.sum() > 0:
            y = x * 2
        return y
    ```

    ## Use instead
    Bind the name on every path before using it:
    ```python
    def construct(self, x):
        y = x
        if x.sum() > 0:
            y = x * 2
        return y
    ```

    ## Fix safety
    No automatic fix: the right default value depends on the program.

    ## References
    - RULES.md, section 1: a name bound on only one path of a tensor-dependent `if`, or only
      inside a loop body, then used afterwards.
    """

    nodes = (ast.If, ast.While)

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        func = ctx.function
        if func is None:
            return
        a = analyzer(ctx)
        end = node.end_lineno or node.lineno  # type: ignore[attr-defined]
        if isinstance(node, ast.If):
            # Structure first: the tensor-dependence test needs the function's data flow, the
            # dearest step of the analysis, and a rebound parameter can never be flagged
            # (parameters are bound before every branch).
            if terminates(node.body) or (node.orelse and terminates(node.orelse)):
                return
            body, other = bindings(node.body), bindings(node.orelse)
            only = (body - other) | (other - body)
            if not only - param_names(func) or not a.kind(node.test).dynamic:
                return
            where = "true branch" if body - other else "false branch"
        else:
            assert isinstance(node, ast.While)
            only = bindings(node.body)
            where = "'while' loop body"
        if not only:
            return
        events = name_events(ctx, func)
        before = events.bound_before(node.lineno)
        for name in sorted(only - before):
            use = events.first_use_after(name, end)
            if use is None:
                continue
            if isinstance(node, ast.If):
                msg = f"`{name}` is only bound in the {where} of a tensor-dependent `if`, but used after it"
            else:
                msg = f"`{name}` is first bound inside the {where} and cannot be used after the loop in graph mode"
            yield ctx.diagnostic(self, use, msg)
