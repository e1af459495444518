"""How module-level code calls a compiled entry: the names a jit function or a network's
`construct` is reached through, so rules can read the arguments and results at those calls."""

from __future__ import annotations

import ast
from dataclasses import dataclass

from npu_lsp.engine import Context
from npu_lsp.rules.graphmode.flow import analyzer


@dataclass(frozen=True)
class EntryCallers:
    #: names a call goes through: the jit function's own name, or module-level instances
    names: frozenset[str]
    #: the network's class, for `Cls(...)(...)`; None for a jit function
    cls_name: str | None

    def calls(self, call: ast.Call) -> bool:
        """Whether `call` runs the entry."""
        f = call.func
        if isinstance(f, ast.Name):
            return f.id in self.names
        return (
            self.cls_name is not None
            and isinstance(f, ast.Call)
            and isinstance(f.func, ast.Name)
            and f.func.id == self.cls_name
        )


def entry_callers(func: ast.FunctionDef | ast.AsyncFunctionDef, kind: str, ctx: Context) -> EntryCallers | None:
    """For a jit function (`kind == "jit"`) or a `construct`, the names module-level code calls
    it through; None when the `construct` has no class of this module."""
    if kind == "jit":
        return EntryCallers(frozenset({func.name}), None)
    cls = analyzer(ctx).owner_class(func)
    if cls is None:
        return None
    info = ctx.scopes.info
    qual = f"{info.module}.{cls.name}"
    return EntryCallers(frozenset(n for n, q in info.instances.items() if q == qual), cls.name)
