"""MS124: `with` on a context manager that is not a `@jit_class` instance."""

from __future__ import annotations

import ast
import json
import sys
from collections.abc import Iterable
from importlib import resources

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.helpers import GraphRule

_THIRD_PARTY = frozenset({"torch", "numpy", "tensorflow", "jax", "scipy", "tqdm"})
# MindSpore's own context managers that are not jit classes (`ms._no_grad`, `ms.Profiler`, ...).
_MS_NOT_JIT_CLASS = frozenset(
    json.loads(resources.files(__package__).joinpath("ms_context_managers.json").read_text("utf-8"))["not_jit_class"]
)


@rule(code="MS124", name="with-non-jit-class", severity="error", family="graphmode")
class WithNonJitClass(GraphRule):
    """## What it does
    Flags `with` statements in compiled code whose context manager is known not to be a
    `@ms.jit_class` instance: standard-library or third-party managers such as
    `contextlib.nullcontext()` or `open(...)`, and classes of this project (this file or the
    workspace) that lack the `@jit_class` decorator, and MindSpore's own managers, none of
    which is a jit class (`ms._no_grad()`, `ms.saved_tensors_hooks(...)`, `ms.Profiler()`,
    `ms.runtime.StreamCtx(...)`; the list, read from MindSpore 2.10, is
    `ms_context_managers.json`). Managers imported from code it cannot see are given the
    benefit of the doubt.

    ## Why is this bad?
    The graph compiler can only run `__enter__`/`__exit__` of jit classes. Anything else stops
    with `TypeError: Only support jit_class instance, but got PythonObject(...)` at every level.

    ## Example
    ```python
    @ms.jit
    def f(x):
        with contextlib.nullcontext():
            return x * 2
    ```

    ## Use instead
    Drop the manager from compiled code, or decorate your own manager class with
    `@ms.jit_class`:
    ```python
    @ms.jit
    def f(x):
        return x * 2
    ```

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 1: `with` on a context manager that is not a `@ms.jit_class` instance.
    """

    nodes = (ast.With,)

    @staticmethod
    def _known_foreign(q: str, ctx: Context) -> bool:
        """True when `q` is certainly not a jit_class: builtins, the standard library,
        well-known third-party packages, or a workspace class without the decorator."""
        top = q.split(".", 1)[0]
        if top == "builtins" or top in sys.stdlib_module_names or top in _THIRD_PARTY:
            return True
        mod, _, name = q.rpartition(".")
        other = ctx.scopes.workspace.module(mod) if ctx.scopes.workspace else None
        cls = other.classes.get(name) if other else None
        return cls is not None and not cls.jit_class

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        assert isinstance(node, ast.With)
        info = ctx.scopes.info
        for item in node.items:
            expr = item.context_expr
            target = expr.func if isinstance(expr, ast.Call) else None
            if target is None:
                continue
            q = ctx.qualname(target)
            if q is None or (q.startswith("mindspore.") and q not in _MS_NOT_JIT_CLASS):
                continue
            mod, _, name = q.rpartition(".")
            if q in _MS_NOT_JIT_CLASS:
                pass  # MindSpore's own manager: never a jit class
            elif mod == info.module:
                cls = info.classes.get(name)
                if cls is None or cls.jit_class:
                    continue
            elif not self._known_foreign(q, ctx):
                continue  # imported from code we cannot see: it may well be a jit_class
            yield ctx.diagnostic(
                self,
                ctx.head_span(node),
                f"`{ctx.segment(target)}` is not a @jit_class; graph mode only supports `with` on jit_class instances",
            )
            return
