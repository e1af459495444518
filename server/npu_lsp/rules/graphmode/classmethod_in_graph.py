"""MS127: calling a `@classmethod` of a Cell from compiled code."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.flow import analyzer
from npu_lsp.rules.graphmode.helpers import GraphRule


@rule(code="MS127", name="classmethod-in-graph", severity="error", family="graphmode")
class ClassmethodInGraph(GraphRule):
    """## What it does
    Flags calls, from compiled code, to a method decorated `@classmethod`: through `self` or
    the Cell's own class name, or through the name of any class of the project (a plain
    class used as a namespace, such as a logger facade), in this module or another.

    ## Why is this bad?
    The graph compiler never binds the class to `cls` and miscounts the arguments:
    `TypeError: The parameters number of the function is 3, but the number of provided
    arguments is 2.` at every syntax level. The body is never compiled, so nothing it calls
    is reported.

    ## Example
    ```python
    class Net(nn.Cell):
        @classmethod
        def scale(cls, x, k):
            return x * k

        def construct(self, x):
            return self.scale(x, 2)
    ```

    ## Use instead
    Use a `@staticmethod` or a module-level function:
    ```python
    class Net(nn.Cell):
        @staticmethod
        def scale(x, k):
            return x * k

        def construct(self, x):
            return self.scale(x, 2)
    ```

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 1: `@classmethod` on a Cell, called from construct.
    """

    nodes = (ast.Call,)
    callee = (ast.Attribute,)  # `name.method(...)` only

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        # not a generator itself: every call of compiled code comes here, most are not
        # `name.method(...)`
        assert isinstance(node, ast.Call)
        f = node.func
        if not (isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name)):
            return ()
        owner, methods = _owner(ctx)  # (`_check`'s first test here: one call less per call)
        if owner is not None and (f.value.id == "self" or f.value.id == owner):
            if f.attr in methods:
                return [ctx.diagnostic(self, node, f"classmethod `{f.attr}` cannot be called from compiled code")]
            return ()
        return self._check(node, f, ctx)

    def wants_call(self, callee: type[ast.AST], called: str, receiver: str) -> bool:
        return callee is ast.Attribute and (receiver == "self" or receiver == "name")  # `name.method(...)`

    def applies(self, ctx: Context) -> bool:
        # Every finding is a method whose decorator list names `classmethod` (`_classmethods`,
        # `scope.is_classmethod`); without a workspace the classes looked at are this file's
        # (`ScopeResolver._find_class`), so its text spells the word (most files do not: no
        # call of theirs comes here then)
        return ctx.scopes.workspace is not None or ctx.mentions("classmethod")

    def _check(self, node: ast.Call, f: ast.Attribute, ctx: Context) -> Iterable[Diagnostic]:
        # a list or `()`, not a generator; `check` has left out calls through `self` or the
        # owning class's name
        assert isinstance(f.value, ast.Name)
        # `Log.warning(...)`: a classmethod of any class of the project, through its name
        # (measured: the same "parameters number" TypeError for a plain class at both levels)
        q = ctx.qualname(f.value)
        if q is not None and not q.startswith("builtins.") and ctx.scopes.classmethod_of(q, f.attr):
            return [ctx.diagnostic(self, node, f"classmethod `{f.attr}` cannot be called from compiled code")]
        return ()


def _owner(ctx: Context) -> tuple[str | None, frozenset[str]]:
    """(name, `_classmethods`) of the class owning the function being checked, (None, {})
    outside a class; once per function and run (every `self.x(...)` call in it asks)."""
    func = ctx.function
    key = (_owner, id(func))
    hit: tuple[str | None, frozenset[str]] | None = ctx.cache.get(key)
    if hit is None:
        cls = analyzer(ctx).owner_class(func)
        hit = ctx.cache[key] = (None, frozenset()) if cls is None else (cls.name, _classmethods(cls, ctx))
    return hit


def _classmethods(cls: ast.ClassDef, ctx: Context) -> frozenset[str]:
    """Names of the `@classmethod`s defined in `cls` (the first definition of a name decides),
    once per class and run: every `self.x(...)` call in compiled code asks."""
    key = (_classmethods, id(cls))
    names = ctx.cache.get(key)
    if names is None:
        first: dict[str, bool] = {}
        for item in cls.body:
            if isinstance(item, ast.FunctionDef) and item.name not in first:
                first[item.name] = any(
                    isinstance(d, ast.Name) and d.id == "classmethod" for d in item.decorator_list
                )
        names = ctx.cache[key] = frozenset(n for n, is_cm in first.items() if is_cm)
    return names
