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
from npu_lsp.rules.graphmode.flow import analyzer
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
    benefit of the doubt. The manager may be made on the `with` line or be an instance made
    before it: `self.ctx` bound to `Ctx()` in `__init__`, a local bound only to `Ctx()`, or
    a module-level `CTX = Ctx()` bound once (written set `langref`, probes `with_*`).
    Also flags `with f(...)` where the bare name `f` is a module-level function of the
    project (undecorated or a `@contextmanager`), whatever it returns.

    ## Why is this bad?
    The graph compiler can only run `__enter__`/`__exit__` of jit classes. Anything else stops
    with `TypeError: Only support jit_class instance, but got PythonObject(...)` at every level.
    For `with f(...)` MindSpore's parser first asks whether the global `f` is a subclass of
    its stream contexts, and a function stops it with `TypeError: issubclass() arg 1 must be
    a class` at every level, even when `f` returns a jit class instance.

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
    - Measured on MindSpore 2.10 with the written/zoo probes `zoo31_with_*` and
      `zoo31_amp_autocast_with_then_dtype` (wan2_2's `with autocast(dtype=ms.float32):`, a
      function returning MindSpore's `AmpDecorator`): `with make_ctx():` fails with the
      TypeError above even when `make_ctx` returns a jit class instance; `with JitCtx():`,
      `with self.make_ctx():`, `with H.make():` and a module-level `with CTX:` compile
      (`parser.py` `check_is_base_ctx`).
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
            function = _module_function_called(expr, ctx)
            if function is not None:
                yield ctx.diagnostic(
                    self,
                    ctx.head_span(node),
                    f"`{function}(...)` on the `with` line calls a function: MindSpore looks the name of a"
                    " `with NAME(...)` manager up as a class and stops at every level (TypeError: issubclass()"
                    " arg 1 must be a class); build a @jit_class on the line (`with Ctx():`) or get the"
                    " manager from a method (`with self.ctx():`)",
                )
                return
            target = expr.func if isinstance(expr, ast.Call) else expr
            q = ctx.qualname(target) if target is not expr else _instance_class(expr, ctx)
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
                f"`{ctx.segment(target)}` is not a @jit_class"
                + ("" if target is not expr else f" instance (it holds a `{q.rpartition('.')[2]}`)")
                + "; graph mode only supports `with` on jit_class instances",
            )
            return


def _module_function_called(expr: ast.expr, ctx: Context) -> str | None:
    """`f` when the manager is `f(...)` and the bare name `f` is a module-level function
    (defined in this file, or imported from a workspace module), undecorated or a
    `@contextmanager`. MindSpore's parser asks `issubclass(<global f>, StreamCtx)` of a
    `with NAME(...)` item, which raises for anything not a class; a method call
    (`self.ctx()`, `H.make()`) or a module-level instance (`with CTX:`) is not looked up so
    (measured on 2.10, written/zoo probes `zoo31_with_*`, wan2_2's `with autocast(...)`)."""
    if type(expr) is not ast.Call or type(expr.func) is not ast.Name:
        return None
    name = expr.func.id
    func = ctx.function
    if func is not None:
        params = getattr(func, "args", None)
        if params is not None and any(p.arg == name for p in ast.walk(params) if isinstance(p, ast.arg)):
            return None
        if analyzer(ctx).rebinds(name, func):
            return None
    q = ctx.qualname(expr.func)
    if q is None:
        return None
    mod, _, short = q.rpartition(".")
    info = ctx.scopes.info
    if mod == info.module:
        fdef = info.functions.get(short)
        if fdef is None or short in info.classes or not any(st is fdef for st in getattr(ctx.tree, "body", [])):
            return None
    else:
        other = ctx.scopes.workspace.module(mod) if ctx.scopes.workspace else None
        fdef = other.functions.get(short) if other is not None else None
        if fdef is None or other is None or short in other.classes:
            return None
    if not all(_contextmanager_decorator(d) for d in fdef.decorator_list):
        return None  # another decorator may turn the function into a class or an instance
    return name


def _contextmanager_decorator(d: ast.expr) -> bool:
    """`@contextmanager` / `@contextlib.contextmanager`: the name stays a function."""
    return (type(d) is ast.Name and d.id == "contextmanager") or (
        type(d) is ast.Attribute and d.attr == "contextmanager"
    )


def _instance_class(expr: ast.expr, ctx: Context) -> str | None:
    """The class (dotted) of the instance a `with` statement's manager expression holds when
    it is made before the statement: `self.<attr>` bound to `SomeClass(...)` in `__init__`
    (or a base's), a local bound only to `SomeClass(...)` in the function, or a name bound
    once at module level to `SomeClass(...)`; None when unknown."""
    func = ctx.function
    if isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name) and expr.value.id == "self":
        cls = analyzer(ctx).owner_class(func)
        if cls is None or cls.name not in ctx.scopes.info.classes:
            return None
        return ctx.scopes.attribute_class(f"{ctx.scopes.info.module}.{cls.name}", expr.attr)
    if not isinstance(expr, ast.Name):
        return None
    a = analyzer(ctx)
    if func is not None and a.rebinds(expr.id, func):
        bound = a.single_assignment(expr.id, func)
        return ctx.qualname(bound.func) if isinstance(bound, ast.Call) else None
    params = getattr(func, "args", None)
    if params is not None and any(p.arg == expr.id for p in ast.walk(params) if isinstance(p, ast.arg)):
        return None
    made = ctx.scopes.info.instances.get(expr.id)
    if made is None:
        return None
    binds = 0
    for st in getattr(ctx.tree, "body", []):
        if isinstance(st, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = st.targets if isinstance(st, ast.Assign) else [st.target]
            binds += sum(1 for t in targets for n in ast.walk(t) if isinstance(n, ast.Name) and n.id == expr.id)
    return made if binds == 1 else None
