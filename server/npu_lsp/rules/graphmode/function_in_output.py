"""MS114: a compiled function returning a function or lambda."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.astutil import branch_list, walk_list
from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.flow import analyzer
from npu_lsp.rules.graphmode.helpers import GraphRule


@rule(code="MS114", name="function-in-output", severity="error", family="graphmode")
class FunctionInOutput(GraphRule):
    """## What it does
    Flags `return` statements of `construct` or a `@jit` function whose value is a function
    or lambda, or a tuple/list containing one: also a method (`return self.double`), a
    function kept on `self` (`self.act = ops.relu`), a MindSpore function (`ops.relu`), or a
    sub-cell or Primitive `__init__` stored on `self` (`return x, self.act` with
    `self.act = nn.GELU()`, `return self.relu` with `self.relu = ops.ReLU()`, or a module-level
    `dense = nn.Dense(3, 2)` returned by an `@ms.jit` function).

    ## Why is this bad?
    A graph's outputs must be tensors, scalars or containers of them. MindSpore stops with
    `RuntimeError: Function in output is not supported.` at every syntax level. Helpers
    *called* from `construct` may return functions; only the graph's own outputs matter.

    ## Example
    ```python
    def construct(self, x):
        return x, lambda v: v
    ```

    ## Use instead
    Return data only, and apply the function in the caller:
    ```python
    def construct(self, x):
        return x
    ```

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 1: returning a function or lambda, also inside a tuple.
    """

    nodes = (ast.Return,)

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        # a list or `()`, not a generator: every `return` of compiled code comes here
        scope = ctx.scope
        if (
            scope is None
            or scope.kind not in ("construct", "jit")
            or ctx.function is not scope.function
        ):
            return ()
        value = getattr(node, "value", None)
        if value is None:
            return ()
        items = value.elts if (type(value) is ast.Tuple or type(value) is ast.List) else [value]
        a = analyzer(ctx)
        for item in items:
            if (
                type(item) is ast.Lambda
                # flow types a lambda or a name only as a function (a call, an attribute,
                # a subscript never): the data flow is not started for the others
                or (type(item) is ast.Name and a.type_class(item) == "function")
                or self._module_function(item, ctx)
                or _library_function(item, ctx)
                or _self_function(item, ctx)
                or _local_function(item, ctx)
                or _self_callable_object(item, ctx)
                or self._module_callable_object(item, ctx)
                or _transformed_function(item, ctx)
            ):
                return [
                    ctx.diagnostic(
                        self,
                        node,
                        "a graph cannot return a function (Function in output is not supported)",
                    )
                ]
        return ()

    @staticmethod
    def _module_function(item: ast.expr, ctx: Context) -> bool:
        """A name that refers to a function defined at module level (not shadowed locally)."""
        if type(item) is not ast.Name:
            return False
        if item.id in analyzer(ctx).flow(ctx.function).kinds:
            return False
        return item.id in ctx.scopes.info.functions

    @staticmethod
    def _module_callable_object(item: ast.expr, ctx: Context) -> bool:
        """A name the module binds once, to a Cell or Primitive instance (`dense =
        nn.Dense(3, 2)` returned by an `@ms.jit` function; measured: "Function in output")."""
        if type(item) is not ast.Name or item.id in analyzer(ctx).flow(ctx.function).kinds:
            return False
        bound = [
            st.value
            for st in getattr(ctx.tree, "body", [])
            if isinstance(st, ast.Assign) and any(isinstance(t, ast.Name) and t.id == item.id for t in st.targets)
        ]
        return len(bound) == 1 and _builds_cell_or_primitive(bound[0], ctx)


#: MindSpore's function transforms: called on a function, they return a function
#: (`ms.grad(f)`, `ms.vmap(f)`, `ms.jacfwd(f)`)
_TRANSFORMS = frozenset({"grad", "value_and_grad", "vmap", "jacfwd", "jacrev"})
#: transforms returning `(value, function, ...)`: `out, vjp_fn = ops.vjp(f, x)`
_PAIR_TRANSFORMS = frozenset({"vjp", "linearize"})
#: what a file must spell for `_transformed_function` to find anything (`GradOperation`
#: and `value_and_grad` contain "grad", `jacfwd` / `jacrev` "jac")
_TRANSFORM_WORDS = ("grad", "vmap", "jac", "vjp", "linearize")


def _transform_call(e: ast.expr, ctx: Context, names: frozenset[str]) -> bool:
    """`e` calls one of MindSpore's transforms `names` on a function (`ms.grad(f)`), or
    is `ops.GradOperation(...)(f)` when `names` are the function-returning ones."""
    if not isinstance(e, ast.Call) or not e.args:
        return False
    if isinstance(e.func, ast.Call):
        q = ctx.qualname(e.func.func) or ""
        return names is _TRANSFORMS and q.split(".")[0] == "mindspore" and q.rsplit(".", 1)[-1] == "GradOperation"
    q = ctx.qualname(e.func) or ""
    return q.split(".")[0] == "mindspore" and q.rsplit(".", 1)[-1] in names


def _transformed_function(item: ast.expr, ctx: Context) -> bool:
    """A function a transform made: `ms.grad(f)` returned in place, or a local bound
    only to one (`df = ms.grad(f)`) or to the function `ops.vjp` returns (`out, vjp_fn =
    ops.vjp(f, x)`). Measured (written/heldout30b `vjp_function_returned_from_jit`,
    `r2_return_grad_function_from_jit`): "Function in output is not supported" at both
    levels."""
    if not (type(item) is ast.Call or type(item) is ast.Name) or not _spells_transform(ctx):
        return False  # a file spelling no transform makes no function of one
    if _transform_call(item, ctx, _TRANSFORMS):
        return True
    func = ctx.function
    if not isinstance(item, ast.Name) or func is None:
        return False
    key = ("MS114.transformed", id(func), item.id)
    hit: bool | None = ctx.cache.get(key)
    if hit is None:
        hit = ctx.cache[key] = _bound_to_transform(item.id, func, ctx)
    return hit


def _spells_transform(ctx: Context) -> bool:
    """Does the file spell any transform (`_TRANSFORM_WORDS`)? Once per file."""
    hit: bool | None = ctx.cache.get(_SPELLS_KEY)
    if hit is None:
        hit = ctx.cache[_SPELLS_KEY] = any(ctx.mentions(w) for w in _TRANSFORM_WORDS)
    return hit


_SPELLS_KEY = "MS114.spells-transform"


def _bound_to_transform(name: str, func: ast.AST, ctx: Context) -> bool:
    found = False
    args = getattr(func, "args", None)
    if args is not None and any(a.arg == name for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)):
        return False
    for n in branch_list(func):
        if isinstance(n, ast.Assign):
            for tgt in n.targets:
                if isinstance(tgt, ast.Name) and tgt.id == name:
                    if not _transform_call(n.value, ctx, _TRANSFORMS):
                        return False
                    found = True
                elif isinstance(tgt, (ast.Tuple, ast.List)) and any(isinstance(s, ast.Name) and s.id == name for s in walk_list(tgt)):
                    at = [i for i, s in enumerate(tgt.elts) if isinstance(s, ast.Name) and s.id == name]
                    if at != [1] or not _transform_call(n.value, ctx, _PAIR_TRANSFORMS):
                        return False
                    found = True
        elif isinstance(n, (ast.AugAssign, ast.AnnAssign, ast.For, ast.With, ast.comprehension)):
            target = getattr(n, "target", None)
            if target is not None and any(isinstance(s, ast.Name) and s.id == name for s in walk_list(target)):
                return False
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n is not func and n.name == name:
            return False
    return found


#: modules whose lower-case attributes are functions (`ops.relu`), not primitives or classes
_FUNCTION_MODULES = ("mindspore.ops", "mindspore.mint")


def _library_function(item: ast.expr, ctx: Context) -> bool:
    """`ops.relu`, `np.sum`...: a library function named, not called."""
    if type(item) is not ast.Attribute:
        return False
    q = ctx.qualname(item) or ""
    module, _, name = q.rpartition(".")
    return bool(name) and name[0].islower() and module.startswith(_FUNCTION_MODULES)


def _function_expr(e: ast.expr, ctx: Context) -> bool:
    """An expression whose value is a function: a lambda, a library or module-level
    function named without a call, or a conditional choosing between two of those
    (`ops.gelu if self.act == "gelu" else ops.relu`)."""
    if isinstance(e, ast.IfExp):
        return _function_expr(e.body, ctx) and _function_expr(e.orelse, ctx)
    if isinstance(e, ast.Name):
        return e.id in ctx.scopes.info.functions
    return isinstance(e, ast.Lambda) or _library_function(e, ctx)


def _local_function(item: ast.expr, ctx: Context) -> bool:
    """A local name every assignment of which binds a function (`act = ops.gelu if ...
    else ops.relu; return h, act`). Once per function and name (each `return` asks)."""
    func = ctx.function
    if type(item) is not ast.Name or func is None:
        return False
    key = ("MS114.local", id(func), item.id)
    hit: bool | None = ctx.cache.get(key)
    if hit is None:
        hit = ctx.cache[key] = _binds_functions_only(item, func, ctx)
    return hit


def _binds_functions_only(item: ast.Name, func: ast.AST, ctx: Context) -> bool:
    values: list[ast.expr] = []
    # names and constants bind nothing: the statements come in `ast.walk`'s order without them
    for n in branch_list(func):
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n is not func and n.name == item.id:
            return True  # a nested def of that name
        if isinstance(n, ast.Assign):
            for tgt in n.targets:
                if isinstance(tgt, ast.Name) and tgt.id == item.id:
                    values.append(n.value)
                elif any(isinstance(s, ast.Name) and s.id == item.id for s in walk_list(tgt)):
                    return False  # bound by unpacking: unknown
        elif isinstance(n, (ast.AugAssign, ast.AnnAssign, ast.For, ast.With, ast.comprehension)):
            target = getattr(n, "target", None)
            if target is not None and any(isinstance(s, ast.Name) and s.id == item.id for s in walk_list(target)):
                return False
    args = getattr(func, "args", None)
    if args is not None and any(a.arg == item.id for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)):
        return False
    return bool(values) and all(_function_expr(v, ctx) for v in values)


def _self_function(item: ast.expr, ctx: Context) -> bool:
    """`self.m` where `m` is a method of the class, or `__init__` stored a function in it."""
    if not (type(item) is ast.Attribute and type(item.value) is ast.Name):
        return False
    if item.value.id != "self":
        return False
    cls = analyzer(ctx).owner_class(ctx.function)
    if cls is None:
        return False
    for st in cls.body:
        if isinstance(st, ast.FunctionDef) and st.name == item.attr:
            # a property returns data; other decorators (staticmethod...) still give functions
            return not any(
                _name_of(d) in ("property", "cached_property") for d in st.decorator_list
            )
        if isinstance(st, ast.FunctionDef) and st.name == "__init__":
            for n in ast.walk(st):
                if (
                    isinstance(n, ast.Assign)
                    and any(_is_self_attr(t, item.attr) for t in n.targets)
                    and (isinstance(n.value, ast.Lambda) or _library_function(n.value, ctx))
                ):
                    return True
    return False


def _self_callable_object(item: ast.expr, ctx: Context) -> bool:
    """`self.fc` where every value `__init__` gives it is a Cell or a Primitive instance
    (`nn.Dense(3, 2)`, `ops.ReLU()`): measured, `return self.fc` and `return x, self.act`
    fail at both levels with "Function in output is not supported"."""
    if not (type(item) is ast.Attribute and type(item.value) is ast.Name and item.value.id == "self"):
        return False
    a = analyzer(ctx)
    cls = a.owner_class(ctx.function)
    if cls is None or item.attr not in a.self_info(cls).cells | a.self_info(cls).tensors:
        return False
    values = a.self_values(cls).get(item.attr, [])
    return bool(values) and all(_builds_cell_or_primitive(v, ctx) for v in values)


def _builds_cell_or_primitive(v: ast.expr | None, ctx: Context) -> bool:
    if not isinstance(v, ast.Call):
        return False
    q = ctx.qualname(v.func) or ""
    last = q.rsplit(".", 1)[-1]
    return q.startswith(("mindspore.nn.", "mindspore.ops.")) and last[:1].isupper() and last not in _DATA_CLASSES


#: classes of mindspore.nn / mindspore.ops whose instances are data, not callables
_DATA_CLASSES = frozenset({"Tensor", "Parameter", "ParameterTuple", "COOTensor", "CSRTensor", "RowTensor"})


def _is_self_attr(t: ast.expr, attr: str) -> bool:
    return (
        isinstance(t, ast.Attribute)
        and t.attr == attr
        and isinstance(t.value, ast.Name)
        and t.value.id == "self"
    )


def _name_of(d: ast.expr) -> str:
    if isinstance(d, ast.Attribute):
        return d.attr
    return d.id if isinstance(d, ast.Name) else ""
