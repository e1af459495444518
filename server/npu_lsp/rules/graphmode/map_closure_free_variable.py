"""MS157: a lambda with free variables given to `HyperMap` / `Map` in compiled code."""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context, called_name
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.control import param_names
from npu_lsp.rules.graphmode.flow import analyzer
from npu_lsp.rules.graphmode.helpers import GraphRule
from npu_lsp.rules.graphmode.optimizer_facts import optimizer_mappers

#: the multitype mappers and MindSpore's words when the mapped function is a closure
_MAPPERS = {"HyperMap": "HyperMap", "Map": "The Map operator"}


@rule(code="MS157", name="map-closure-free-variable", severity="error", family="graphmode")
class MapClosureFreeVariable(GraphRule):
    """## What it does
    Flags a `lambda` written in compiled code and given as the function of an
    `ops.HyperMap()` or `ops.Map()` call (also `self.hyper_map` / `self.map_` of an
    `nn.Optimizer` subclass, which the base class binds; or of Python's `map`, which the
    graph compiles as its Map operator) when its body reads a name it does not bind: a
    module-level name (a constant, an imported module such as `ops` or `math`), a builtin
    such as `abs`, or a local of the enclosing function holding a graph variable (a
    parameter, a value computed from tensors). A local bound to such a lambda
    (`fn = lambda p: p / steps`, then `hyper_map(fn, params)`) and a function defined with
    `def` inside the compiled function are flagged the same way.

    ## Why is this bad?
    MindSpore 2.10 maps only functions without free variables: at every syntax level it
    stops with `RuntimeError: HyperMap don't support Closure with free variable yet.`
    (`The Map operator don't support Closure ...` for `Map`). A lambda defined inside the jit
    function or `construct` captures whatever it reads from outside as a free variable. A
    lambda that reads only its own arguments, `self` and locals holding Python constants
    (`k = 0.25`, folded into it) compiles, and so does a module-level function that reads
    globals, or `ops.partial(fn, value)`.

    ## Example
    ```python
    hyper_map = ops.HyperMap()
    accum_steps = 4

    @ms.jit
    def apply_update():
        grads = hyper_map(lambda g: g / accum_steps, accum)
        optimizer(grads)
    ```

    ## Use instead
    Pass the value through `ops.partial`, or map a module-level function:
    ```python
    def divide(steps, g):
        return g / steps

    @ms.jit
    def apply_update():
        grads = hyper_map(ops.partial(divide, accum_steps), accum)
        optimizer(grads)
    ```

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 1 (rejected at every level); measured on MindSpore 2.10 (CPU), LAX
      and STRICT, with the written set `ported` (`grad_accumulation_hypermap`) and probes: a lambda reading a module-level
      int, `ops`, `math.pi`, `abs`, a tensor local or a parameter of the jit function is
      rejected; `self.scale`, a local float constant, a lambda without free names and a
      module-level lambda reading globals compile. The written set `zoo`
      (`ema_python_float_decay_schedule`: a decay computed from the step tensor) found the
      same rule independently. Python's `map` the same way (written set `trainsteps`,
      `map_builtin_over_grads`: `map(lambda g: ops.clip_by_value(g, -1.0, 1.0), grads)`,
      and its probes: a lambda reading `ops`, a module-level int, `math.pi` or `abs` is
      rejected in `construct` and in a jit function; a module-level function reading `ops`,
      `ops.relu` itself and a lambda calling only a method of its argument compile).
    - The mappers `nn.Optimizer` binds for its subclasses (`self.hyper_map`, `self.map_`):
      written/heldout15b probes `ls_om_*` (a nested `def` or a lambda reading `lr` or
      `self` rejected at both levels; `ops.partial` of a module-level function and a plain
      loop compile) and heldout15a case `optim_lion_sign_update`.
    """

    nodes = (ast.Call,)

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        assert isinstance(node, ast.Call)
        # not a generator itself: most nodes stop at these tests, for the cost of a call
        # rather than of a generator each
        if not node.args or not isinstance(node.args[0], (ast.Lambda, ast.Name)):
            return ()
        mentions = ctx.cache.get("ms157-mentions-map")  # (`_mentions_map`, its memo read here)
        if mentions is None:
            mentions = _mentions_map(ctx)
        if type(node.func) is not ast.Name and not mentions:
            # an inline mapper (`HyperMap()(...)`) or a `self.<attr>` one built in this
            # file's `__init__` resolves through this file's imports: its class ("HyperMap",
            # "Map") is in the text (`_mapper_of`)
            return ()
        return self._check(node, ctx)

    def file_calls(self, ctx: Context) -> frozenset[str] | None:
        # `check`'s tests per file: without "Map" in the text only a name's call can be one,
        # of Python's `map` or of a module-level mapper instance (`_mapper_of`)
        if _mentions_map(ctx):
            return None
        names = [n for n, q in ctx.scopes.info.instances.items() if _mapper_class(q) is not None]
        calls = (ast.Call(func=ast.Name(id=n, ctx=ast.Load()), args=[], keywords=[]) for n in [*names, "map"])
        return frozenset(called_name(c, ctx) for c in calls)

    def wants_call(self, callee: type[ast.AST], called: str, receiver: str) -> bool:
        # `_mapper_of` and `_builtin_map`: a mapper built inline, a name, or `self.<attr>`
        return callee is ast.Call or callee is ast.Name or (callee is ast.Attribute and receiver == "self")

    def _check(self, node: ast.Call, ctx: Context) -> Iterable[Diagnostic]:
        # `()` on the early exits (most calls with a name argument are no map): no generator
        mapper = _mapper_of(node.func, ctx)
        if mapper is None and _builtin_map(node.func, ctx):
            mapper = "Map"
        if mapper is None:
            return ()
        fn = local_function(node.args[0], ctx)
        if fn is None:
            return ()
        return self._report(node, ctx, mapper, fn)

    def _report(
        self, node: ast.Call, ctx: Context, mapper: str, fn: ast.Lambda | ast.FunctionDef
    ) -> Iterator[Diagnostic]:
        free = free_names(fn)
        func = ctx.function
        if isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
            # a local of the compiled function folds into the closure while it holds a
            # Python constant (`k = 0.25`, `k = self.scale`: compile); a graph variable, a
            # parameter or a value computed from one (`k = s * 2` even for `s=3`: measured,
            # rejected) is a free variable
            a = analyzer(ctx)
            free = {
                n: use
                for n, use in free.items()
                if not local_constant(n, func, function_bindings(ctx), set()) or a.kind(use, func).dynamic
            }
        if not free:
            return
        shown = ", ".join(f"`{n}`" for n in sorted(free))
        what = "lambda" if isinstance(fn, ast.Lambda) else f"nested function `{fn.name}`"
        yield ctx.diagnostic(
            self,
            node.args[0],
            f"{_MAPPERS[mapper]} don't support Closure with free variable yet: the {what} reads {shown} from outside it; map a module-level function or pass the value with `ops.partial`",
        )


def _mapper_of(f: ast.expr, ctx: Context) -> str | None:
    """ "HyperMap"/"Map" when `f` is a MindSpore mapper: `ops.HyperMap()` called inline, a
    module-level instance, `self.<attr>` built in `__init__`, or a local of the function."""
    if isinstance(f, ast.Call):  # `HyperMap(fn)` fixes its function when built
        return None if f.args else _mapper_class(ctx.qualname(f.func))
    if isinstance(f, ast.Name):
        # a local binding names its mapper through this file's imports and aliases, so in
        # the text: without "Map" only a module-level instance can be one (and a local
        # binding of the name then hides it), so the walk of the function that finds the
        # local bindings is needed only for such a name
        if not _mentions_map(ctx) and _mapper_class(ctx.scopes.info.instances.get(f.id)) is None:
            return None
        built = function_bindings(ctx).get(f.id)
        if built:
            only = built[0]
            if len(built) == 1 and isinstance(only, ast.Call) and not only.args:
                return _mapper_class(ctx.qualname(only.func))
            return None
        return _mapper_class(ctx.scopes.info.instances.get(f.id))
    if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == "self":
        a = analyzer(ctx)
        cls = a.owner_class(ctx.function)
        if cls is None:
            return None
        values = a.self_values(cls).get(f.attr, [])
        if len(values) == 1 and isinstance(values[0], ast.Call) and not values[0].args:
            return _mapper_class(ctx.qualname(values[0].func))
        if not values and f.attr in optimizer_mappers() and optimizer_class(cls, ctx):
            # `self.hyper_map` of an `nn.Optimizer` subclass: bound by the base's `__init__`
            # (written/heldout15a case `optim_lion_sign_update`, probes `ls_om_*`)
            return optimizer_mappers()[f.attr]
    return None


def optimizer_class(cls: ast.ClassDef, ctx: Context) -> bool:
    """Does `cls` derive from `mindspore.nn.Optimizer` (through classes of this file)?"""
    info = ctx.scopes.info
    seen: set[str] = set()
    todo = [cls.name]
    while todo:
        c = info.classes.get(todo.pop())
        if c is None or c.name in seen:
            continue
        seen.add(c.name)
        for base in c.bases:
            if base.startswith("mindspore.") and base.rsplit(".", 1)[-1] == "Optimizer":
                return True
            todo.append(base.rsplit(".", 1)[-1])
    return False


def _builtin_map(f: ast.expr, ctx: Context) -> bool:
    """Python's own `map`, which the graph compiles as its Map operator (measured: `map(lambda
    t: t + x, (a, b))` with `x` an argument of construct or of a jit function is refused with
    "The Map operator don't support Closure with free variable yet" at both levels)."""
    return (
        isinstance(f, ast.Name)
        and f.id == "map"
        and ctx.qualname(f) in (None, "builtins.map", "map")
        and "map" not in function_bindings(ctx)
    )


def _mentions_map(ctx: Context) -> bool:
    """Does the file's text say "Map" (or `hyper_map`, `map_`) at all? (searched once per file: a search per call
    made the rule quadratic in the file's length)"""
    hit: bool | None = ctx.cache.get("ms157-mentions-map")
    if hit is None:
        # also `hyper_map` / `map_`: the mappers an `nn.Optimizer` binds for its subclasses
        hit = ctx.cache["ms157-mentions-map"] = ctx.mentions("Map") or any(ctx.mentions(m) for m in optimizer_mappers())
    return hit


def function_bindings(ctx: Context) -> dict[str, list[ast.AST]]:
    """name -> what the compiled function binds it to (assigned values, nested defs), built
    once per function: most calls have a name as first argument, few are mappers."""
    func = ctx.function
    key = ("ms157-bindings", id(func))
    hit: dict[str, list[ast.AST]] | None = ctx.cache.get(key)
    if hit is None:
        hit = {}
        if func is not None and not isinstance(func, ast.Lambda):
            for st in ast.walk(func):
                if isinstance(st, ast.Assign):
                    for t in st.targets:
                        if isinstance(t, ast.Name):
                            hit.setdefault(t.id, []).append(st.value)
                elif isinstance(st, ast.FunctionDef) and st is not func:
                    hit.setdefault(st.name, []).append(st)
        ctx.cache[key] = hit
    return hit


def local_function(e: ast.expr, ctx: Context) -> ast.Lambda | ast.FunctionDef | None:
    """The function `e` is when the compiled function defines it: a lambda written inline,
    a local bound to one lambda (`fn = lambda p: ...`) or a nested `def` (measured: both
    closures as well)."""
    if isinstance(e, ast.Lambda):
        return e
    if not isinstance(e, ast.Name):
        return None
    values = function_bindings(ctx).get(e.id, [])
    if len(values) == 1 and isinstance(values[0], (ast.Lambda, ast.FunctionDef)):
        return values[0]
    return None


def _mapper_class(q: str | None) -> str | None:
    if not q or not q.startswith("mindspore.ops."):
        return None
    last = q.rpartition(".")[2]
    return last if last in _MAPPERS else None


def free_names(fn: ast.Lambda | ast.FunctionDef) -> dict[str, ast.Name]:
    """Names the function's body reads that it does not bind (its parameters, its locals,
    comprehension targets, nested functions' parameters), other than `self` (measured:
    `self.scale` compiles, while builtins such as `abs` and modules such as `math` are free
    variables too), each with its first read."""
    bound: set[str] = set()
    read: dict[str, ast.Name] = {}
    for n in ast.walk(fn):
        if isinstance(n, (ast.Lambda, ast.FunctionDef)):
            args = n.args
            for a in (*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg):
                if a is not None:
                    bound.add(a.arg)
            if isinstance(n, ast.FunctionDef) and n is not fn:
                bound.add(n.name)
        elif isinstance(n, ast.Name):
            if isinstance(n.ctx, ast.Store):
                bound.add(n.id)
            else:
                read.setdefault(n.id, n)
    return {n: use for n, use in read.items() if n not in bound and n != "self"}


def local_constant(
    name: str,
    func: ast.FunctionDef | ast.AsyncFunctionDef,
    bound: dict[str, list[ast.AST]],
    seen: set[str],
) -> bool:
    """Is `name` a local of `func` whose every assignment reads no parameter of `func`
    (directly or through other locals)? Names that are not locals (globals, builtins,
    modules) are never folded."""
    if name in seen:
        return False
    values = bound.get(name)
    if not values or any(not isinstance(v, ast.expr) for v in values):
        return False
    seen.add(name)
    params = param_names(func)
    for value in values:
        for sub in ast.walk(value):
            if isinstance(sub, ast.Name) and sub.id != "self":
                if sub.id in params:
                    return False
                if sub.id in bound and not local_constant(sub.id, func, bound, seen):
                    return False
    return True

