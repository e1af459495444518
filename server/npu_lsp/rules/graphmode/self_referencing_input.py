"""MS129: a list or dict that contains itself passed into a compiled network."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.astutil import walk
from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import Rule, rule
from npu_lsp.scope import module_statements


@rule(code="MS129", name="self-referencing-input", severity="error", family="graphmode")
class SelfReferencingInput(Rule):
    """## What it does
    Flags module-level calls of a Cell instance or a `@jit` function that pass a list or dict
    which contains itself (after `a.append(a)` or `d["k"] = d`).

    ## Why is this bad?
    MindSpore converts graph inputs recursively and stops with
    `RuntimeError: Detect recursion when converting python object.` at every syntax level.

    ## Example
    ```python
    a = [1, 2]
    a.append(a)
    net(a)
    ```

    ## Use instead
    Pass flat data (a tuple of tensors, or the values you need):
    ```python
    a = [1, 2]
    net(tuple(a))
    ```

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 1: self-referencing list or dict passed as a graph input.
    """

    nodes = (ast.Module,)

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        assert isinstance(node, ast.Module)
        info = ctx.scopes.info
        cyclic: set[str] = set()
        statements = list(module_statements(node))
        for st in statements:
            name = _self_reference(st)
            if name:
                cyclic.add(name)
        if not cyclic:
            return
        compiled = {n for n, q in info.instances.items() if ctx.scopes.is_cell_class(q)}
        compiled |= {n for n, f in info.functions.items() if ctx.scopes.scope_for(f) is not None}
        for st in statements:
            if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                continue
            for sub in walk(st):
                if not (isinstance(sub, ast.Call) and isinstance(sub.func, ast.Name)):
                    continue
                if sub.func.id not in compiled:
                    continue
                for arg in [*sub.args, *(k.value for k in sub.keywords)]:
                    if isinstance(arg, ast.Name) and arg.id in cyclic:
                        yield ctx.diagnostic(
                            self,
                            arg,
                            f"`{arg.id}` contains itself; MindSpore cannot convert it into a graph input",
                        )


def _self_reference(st: ast.stmt) -> str | None:
    """`a.append(a)`, `a.insert(i, a)` or `d[k] = d` -> the name, else None."""
    if isinstance(st, ast.Expr) and isinstance(st.value, ast.Call):
        f = st.value.func
        if (
            isinstance(f, ast.Attribute)
            and f.attr in ("append", "insert")
            and isinstance(f.value, ast.Name)
            and any(isinstance(a, ast.Name) and a.id == f.value.id for a in st.value.args)
        ):
            return f.value.id
    if isinstance(st, ast.Assign) and isinstance(st.value, ast.Name):
        for t in st.targets:
            if (
                isinstance(t, ast.Subscript)
                and isinstance(t.value, ast.Name)
                and t.value.id == st.value.id
            ):
                return t.value.id
    return None
