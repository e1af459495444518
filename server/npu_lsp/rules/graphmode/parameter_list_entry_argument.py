"""MS218: Python gives a compiled entry a list or ParameterTuple of Parameters as an argument."""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.entries import entry_callers
from npu_lsp.rules.graphmode.flow import analyzer, makes_parameter
from npu_lsp.rules.graphmode.helpers import GraphRule
from npu_lsp.rules.graphmode.parameter_receivers import LAYER_PARAMETERS, element_of
from npu_lsp.scope import GraphScope

#: Cell methods whose result is a list of the network's Parameter objects
_LIST_METHODS = frozenset({"trainable_params", "untrainable_params"})
_MAX_DEPTH = 4


@rule(code="MS218", name="parameter-list-entry-argument", severity="error", family="graphmode")
class ParameterListEntryArgument(GraphRule):
    """## What it does
    Flags a call from Python code of an `@ms.jit` function, or of a network whose
    `construct` is compiled, that gives it a list of Parameters as an argument
    (`net.trainable_params()`, `list(...)` of one, or a module-level name bound to one), and
    one that gives it a tuple of Parameters (`tuple(net.trainable_params())`, a
    `ParameterTuple` and its `.clone(...)`, `(net.weight, net.bias)`, two such tuples added)
    when it is a network's `construct`, or an `@ms.jit` function that writes none of the
    tuple's Parameters (the online side of the EMA idiom `ema_update(ema_params, params)`).

    ## Why is this bad?
    MindSpore turns a top graph's arguments into graph inputs; Parameters handed over in a
    list, or in a tuple that the jit function only reads, become inputs without a value,
    and compiling fails at every syntax level: `RuntimeError: Parameter[0] has no default
    param`. A tuple one of whose Parameters the jit function writes (`ops.assign(p, ...)`,
    `ops.assign_sub` in a loop over it, a helper called on each) compiles, as do a single
    Parameter and Parameters the function reads as globals.

    ## Example
    ```python
    params = ParameterTuple(net.trainable_params())
    ema_params = params.clone(prefix="ema", init="same")

    @ms.jit
    def ema_update(ema_params, params, decay):
        for e, p in zip(ema_params, params):
            ops.assign(e, e * decay + p * (1 - decay))
        return decay

    ema_update(ema_params, params, Tensor(0.9, ms.float32))
    ```

    ## Use instead
    Read the Parameters as globals (or hold them on a Cell as `self` attributes):
    ```python
    @ms.jit
    def ema_update(decay):
        for e, p in zip(ema_params, params):
            ops.assign(e, e * decay + p * (1 - decay))
        return decay

    ema_update(Tensor(0.9, ms.float32))
    ```

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 1 (rejected at every level).
    - Measured on MindSpore 2.10 with the written set `heldout24a`
      (`ema_jit_function_parametertuple_args`, `r2_ema_jit_param_list_args_python_decay`)
      and its probes `miss24_jp_*`: a list from `trainable_params()` given to an `@ms.jit`
      function (PyNative or GRAPH_MODE) or to a Cell's `construct` is refused, assigned
      too, as is a `ParameterTuple` given to a `construct`; the same read as globals
      compiles.
    - Tuples: written set `heldout34b` (`r2_ema_jit_function_plain_tuple_args`) and its
      probes `fix34d_pt_*`, `fix35a_pt_*`: `tuple(...)`, `ParameterTuple(...)` and tuple
      displays of Parameters given to a jit function that only reads them (a loop, an
      index, arithmetic), or does not use them, are refused at both levels, with one
      network or two; one element assigned (`ops.assign(a[0], ...)`, `assign_sub` in a loop,
      through a helper) compiles; given to a `construct`, refused even when assigned.
    """

    nodes = (ast.FunctionDef,)
    #: every list `_parameter_list` knows is spelled with one of these: in a file without,
    #: the rule is left out of the walk
    words = ("trainable_params", "untrainable_params", "get_parameters", "ParameterTuple", "Parameter", *LAYER_PARAMETERS)

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        # not a generator itself: most compiled functions are no entry (helpers, methods)
        assert isinstance(node, ast.FunctionDef)
        scope = ctx.scope
        if scope is None or scope.kind not in ("jit", "construct") or scope.function is not node:
            return ()
        return self._check(node, scope, ctx)

    def _check(self, node: ast.FunctionDef, scope: GraphScope, ctx: Context) -> Iterator[Diagnostic]:
        callers = entry_callers(node, scope.kind, ctx)
        if callers is None:
            return
        for call in module_calls(ctx):
            if not callers.calls(call):
                continue
            for arg, param in _arguments(call, node, scope.kind):
                kind = _parameter_sequence(arg, ctx, 0)
                if kind == _LIST:
                    yield ctx.diagnostic(
                        self,
                        arg,
                        f"`{ctx.segment(arg)}` is a list of Parameters given to the compiled `{node.name}`: MindSpore makes them graph inputs without a value (RuntimeError: Parameter[0] has no default param); read them as globals or from `self`",
                    )
                elif kind == _TUPLE and (scope.kind == "construct" or (param is not None and not _written(param, node, ctx))):
                    how = "to a network's `construct`" if scope.kind == "construct" else f"to `{node.name}`, which writes none of them (`ops.assign` ...)"
                    yield ctx.diagnostic(
                        self,
                        arg,
                        f"`{ctx.segment(arg)}` is a tuple of Parameters given {how}: MindSpore makes them graph inputs without a value (RuntimeError: Parameter[0] has no default param); read them as globals or from `self`",
                    )


def module_calls(ctx: Context) -> list[ast.Call]:
    """Calls module-level code makes (in its `if` / `for` / `while` / `with` / `try` blocks
    too, not in functions or classes), cached for the run."""
    key = "parameter-list-entry-argument:calls"
    hit: list[ast.Call] | None = ctx.cache.get(key)
    if hit is None:
        hit = list(_calls_in(ctx.tree.body))
        ctx.cache[key] = hit
    return hit


def _calls_in(body: list[ast.stmt]) -> Iterator[ast.Call]:
    for st in body:
        if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        if isinstance(st, (ast.If, ast.For, ast.While, ast.With, ast.Try)):
            for field in ("body", "orelse", "finalbody"):
                yield from _calls_in(getattr(st, field, []))
            for h in getattr(st, "handlers", []):
                yield from _calls_in(h.body)
            continue
        for n in ast.walk(st):
            if isinstance(n, ast.Call):
                yield n


_LIST = "list"
_TUPLE = "tuple"
#: Cell methods whose result is a generator of the network's Parameter objects
_GENERATOR_METHODS = frozenset({"get_parameters"})


def _arguments(call: ast.Call, entry: ast.FunctionDef, kind: str) -> Iterator[tuple[ast.expr, str | None]]:
    """Each argument of `call` with the name of the entry's parameter it binds (None when
    not known: a `*args`, or more arguments than named parameters)."""
    params = [a.arg for a in (*entry.args.posonlyargs, *entry.args.args)]
    if kind == "construct":
        params = params[1:]  # `self`
    starred = any(isinstance(a, ast.Starred) for a in call.args)
    for i, arg in enumerate(call.args):
        yield arg, None if starred or i >= len(params) else params[i]
    for k in call.keywords:
        yield k.value, k.arg if k.arg in params or k.arg in {a.arg for a in entry.args.kwonlyargs} else None


def _parameter_sequence(e: ast.expr, ctx: Context, depth: int) -> str | None:
    """`_LIST` when `e`, evaluated at module level, is a list of Parameters
    (`net.trainable_params()`, `list(...)` of one); `_TUPLE` when it is a tuple of them
    (`tuple(...)` of one or of `net.get_parameters()`, a `ParameterTuple` and its `clone`, a
    tuple display of Parameters, two such tuples added); None otherwise."""
    if depth > _MAX_DEPTH:
        return None
    if isinstance(e, ast.Name):
        value = module_binding(e.id, ctx)
        return None if value is None else _parameter_sequence(value, ctx, depth + 1)
    if isinstance(e, ast.Tuple):
        return _TUPLE if e.elts and all(_module_parameter(x, ctx, depth + 1) for x in e.elts) else None
    if isinstance(e, ast.BinOp) and isinstance(e.op, ast.Add):
        left, right = _parameter_sequence(e.left, ctx, depth + 1), _parameter_sequence(e.right, ctx, depth + 1)
        return left if left == right and left is not None else None
    if not isinstance(e, ast.Call):
        return None
    f = e.func
    if isinstance(f, ast.Attribute):
        if f.attr in _LIST_METHODS:
            return _LIST
        # `params.clone(prefix="ema")` of a ParameterTuple is one
        if f.attr == "clone" and _parameter_sequence(f.value, ctx, depth + 1) == _TUPLE:
            return _TUPLE
    if isinstance(f, ast.Name) and f.id in ("list", "tuple") and len(e.args) == 1 and not e.keywords:
        inner = e.args[0]
        made = _parameter_sequence(inner, ctx, depth + 1) is not None or (
            isinstance(inner, ast.Call) and isinstance(inner.func, ast.Attribute) and inner.func.attr in _GENERATOR_METHODS
        )
        return (_LIST if f.id == "list" else _TUPLE) if made else None
    q = ctx.qualname(f) or ""
    return _TUPLE if q.rsplit(".", 1)[-1] == "ParameterTuple" else None


def _module_parameter(e: ast.expr, ctx: Context, depth: int) -> bool:
    """Is `e`, at module level, one Parameter: a name bound there to `Parameter(...)`, or
    `net.weight` / `model.fc.bias` (a built-in layer's Parameter) / `model.scale` (one the
    file's Cell class stores in `__init__`) of a module-level Cell?"""
    if isinstance(e, ast.Name):
        value = module_binding(e.id, ctx)
        return isinstance(value, ast.Call) and makes_parameter(ctx.qualname(value.func) or "") and (ctx.qualname(value.func) or "").endswith(".Parameter")
    if not isinstance(e, ast.Attribute):
        return False
    base = e.value
    chain = 0
    while isinstance(base, ast.Attribute) and chain < 3:
        base, chain = base.value, chain + 1
    if not isinstance(base, ast.Name):
        return False
    built = module_binding(base.id, ctx)
    if not isinstance(built, ast.Call):
        return False
    q = ctx.qualname(built.func) or ""
    if e.attr in LAYER_PARAMETERS and (q.startswith("mindspore.nn.") or analyzer(ctx)._is_local_cell(q)):
        return True
    if chain or not isinstance(built.func, ast.Name) or not analyzer(ctx)._is_local_cell(q):
        return False
    cls = next((st for st in ctx.tree.body if isinstance(st, ast.ClassDef) and st.name == built.func.id), None)
    return cls is not None and e.attr in analyzer(ctx).self_info(cls).parameters


#: last names of calls that write the tensor given first (`ops.assign(p, v)`,
#: `ops.scatter_update(p, i, v)`, `P.AssignAdd()(p, v)`)
_WRITING = ("assign", "scatter", "update")
_READING_NODES = (ast.BinOp, ast.UnaryOp, ast.Compare)


def _written(param: str, fn: ast.FunctionDef, ctx: Context) -> bool:
    """Might the jit function `fn` write one of the Parameters its argument `param` (a tuple
    of them) holds? False only when every use of `param` surely reads: an element
    (`param[i]`, the target of `for p in param` / `zip(param, ...)`) in arithmetic, a
    comparison, a tensor method other than an in-place one, a `mindspore` function or a
    writing call after its first argument; `len(param)`; or no use at all. Measured
    (written/heldout34b probes `fix35a_pt_*`): such a tuple fails ("Parameter[0] has no
    default param") while one element written (`ops.assign(a[0], ...)`, an `assign_sub` in a
    loop, a helper called on each element) makes the whole tuple compile."""
    if analyzer(ctx).rebinds(param, fn):
        return True
    for n in ast.walk(fn):
        if not (isinstance(n, ast.Name) and n.id == param) or (n.ctx is not None and not isinstance(n.ctx, ast.Load)):
            continue
        parent = ctx.parent(n)
        if parent is None:
            return True
        if isinstance(parent, ast.Subscript) and parent.value is n:
            if _element_written(parent, ctx):
                return True
        elif isinstance(parent, ast.Call) and isinstance(parent.func, ast.Name) and parent.func.id == "len":
            continue
        else:
            loop = parent if isinstance(parent, ast.For) else ctx.parent(parent)
            if not (isinstance(loop, ast.For) and (loop.iter is n or loop.iter is parent)):
                return True
            if _loop_elements_written(loop, n, ctx):
                return True
    return False


def _loop_elements_written(loop: ast.For, src: ast.Name, ctx: Context) -> bool:
    """Might `for target in ...src...` write an element of `src` through its target?"""
    names = [t.id for t in ([loop.target] if isinstance(loop.target, ast.Name) else getattr(loop.target, "elts", [])) if isinstance(t, ast.Name)]
    element = next((name for name in names if element_of(loop.target, name, loop.iter) is src), None)
    if element is None:
        return True  # not one of the shapes `element_of` knows (`enumerate`, nested tuples)
    for st in loop.body:
        for n in ast.walk(st):
            if isinstance(n, ast.Name) and n.id == element and (not isinstance(n.ctx, ast.Load) or _element_written(n, ctx)):
                return True
    return False


def _element_written(x: ast.expr, ctx: Context) -> bool:
    """Might this use of one Parameter `x` write it (or give it where it may be written)?"""
    parent = ctx.parent(x)
    if isinstance(parent, _READING_NODES):
        return False
    if isinstance(parent, ast.Attribute):
        # a tensor method or attribute (`p.sum()`, `p.shape`); in-place ones end in `_`
        # (`p.add_`, `p.copy_`) or write (`assign_value`, `set_data`)
        return parent.attr.endswith("_") or "assign" in parent.attr or parent.attr.startswith("set_")
    if isinstance(parent, ast.Call) and x in parent.args:
        f = parent.func
        last = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
        if type(f) is ast.Call:  # `P.AssignAdd()(p, v)`
            inner = f.func
            last = inner.attr if isinstance(inner, ast.Attribute) else inner.id if isinstance(inner, ast.Name) else ""
        if any(w in last.lower() for w in _WRITING):
            return parent.args[0] is x
        q = ctx.qualname(f) if not isinstance(f, ast.Call) else None
        return not (q is not None and q.startswith("mindspore."))
    return True


def module_binding(name: str, ctx: Context) -> ast.expr | None:
    """The value of the only module-level `name = value` (None when bound otherwise or more
    than once)."""
    key = "parameter-list-entry-argument:bindings"
    table: dict[str, ast.expr | None] | None = ctx.cache.get(key)
    if table is None:
        table = {}
        for st in ctx.tree.body:
            if isinstance(st, ast.Assign):
                for t in st.targets:
                    for n in ast.walk(t):
                        if isinstance(n, ast.Name):
                            single = isinstance(t, ast.Name) and n.id not in table
                            table[n.id] = st.value if single else None
            elif isinstance(st, (ast.AugAssign, ast.AnnAssign, ast.For, ast.With, ast.Import, ast.ImportFrom)):
                for n in ast.walk(st):
                    if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                        table[n.id] = None
        ctx.cache[key] = table
    return table.get(name)
