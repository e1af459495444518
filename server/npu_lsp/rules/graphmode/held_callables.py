"""Package-built callables a cell receives through its constructor and keeps on `self`.

`self.act_fn = act_fn` in `__init__`, with `Net(act_fn=functools.partial(ops.gelu, ...))` at
every place the file builds `Net`: compiled code calling `self.act_fn(x)` calls an object the
standard library built, which MindSpore runs as Python (JIT Fallback) like the
`functools.partial` bound in `__init__` itself.
"""

from __future__ import annotations

import ast

from npu_lsp.astutil import COMPREHENSIONS, is_none_literal, none_compared
from npu_lsp.engine import Context
from npu_lsp.rules.graphmode import calls_table
from npu_lsp.rules.graphmode.flow import analyzer
from npu_lsp.scope import COPY_CALLS


def held_callable(f: ast.expr, ctx: Context, func: ast.AST | None) -> str | None:
    """What built the object `self.fn` holds, for a call `self.fn(...)` in `func`: a package's
    or the standard library's callable (`functools.partial`) bound in `__init__`, received
    through the constructor, or picked by default; that object is called as Python, like the
    function that built it (measured: a `functools.partial` held on `self` and called with a
    graph variable is rejected under STRICT). None for anything else."""
    if not (isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == "self"):
        return None
    a = analyzer(ctx)
    cls = a.owner_class(func)
    if cls is None:
        return None
    values = a.self_values(cls).get(f.attr, [])
    if len(values) != 1:
        return None
    value = values[0]
    if isinstance(value, ast.Name):
        # `self.act_fn = act_fn`, every construction passing a `functools.partial(...)`
        return held_from_constructor(ctx, cls, f.attr)
    if isinstance(value, (ast.BoolOp, ast.IfExp)):
        # `self.act = act or functools.partial(...)` with every construction leaving `act` None
        return held_by_default(ctx, cls, value)
    if not isinstance(value, ast.Call):
        return None
    init = next((f for f in cls.body if isinstance(f, ast.FunctionDef) and f.name == "__init__"), None)
    q = _builder(value, ctx, init)
    return q if q and calls_table.outside_project(q, ctx) and not q.startswith("builtins.") else None



def held_element_callable(f: ast.expr, ctx: Context, func: ast.AST | None) -> str | None:
    """What built the objects of a list or tuple held on `self`, for a call of one of them:
    `self.fns[0](x)`, or `fn(x)` with `fn` the target of `for fn in self.fns` (a loop or a
    comprehension), when `__init__` binds `self.fns` to a display or a comprehension of
    calls of one package's or the standard library's callable (`functools.partial`). Such
    an element is called as Python too (measured, written/heldout35b case
    `r2_encoding_partial_list_attr`, probe `fix35e_pt_partial_list_indexed`: "the inputs
    should be constant, but found variable '__input_0__'" under STRICT; LAX compiles)."""
    if func is None:
        return None
    holder: ast.expr | None = None
    if isinstance(f, ast.Subscript) and isinstance(f.slice, ast.Constant) and type(f.slice.value) is int:
        holder = f.value
    elif isinstance(f, ast.Name):
        holder = _comprehension_source(f, ctx, func) or analyzer(ctx).iterated(f.id, func)
    if not (isinstance(holder, ast.Attribute) and isinstance(holder.value, ast.Name) and holder.value.id == "self"):
        return None
    a = analyzer(ctx)
    cls = a.owner_class(func)
    values = a.self_values(cls).get(holder.attr, []) if cls is not None else []
    if len(values) != 1 or cls is None:
        return None
    value = values[0]
    if isinstance(value, (ast.ListComp, ast.GeneratorExp)):
        items: list[ast.expr] = [value.elt]
    elif isinstance(value, (ast.List, ast.Tuple)) and value.elts:
        items = list(value.elts)
    else:
        return None
    init = next((g for g in cls.body if isinstance(g, ast.FunctionDef) and g.name == "__init__"), None)
    built = {_builder(e, ctx, init) if isinstance(e, ast.Call) else None for e in items}
    q = built.pop() if len(built) == 1 else None
    return q if q and calls_table.outside_project(q, ctx) and not q.startswith("builtins.") else None


def _comprehension_source(name: ast.Name, ctx: Context, func: ast.AST) -> ast.expr | None:
    """The iterable of the comprehension around `name` whose only target is `name`."""
    node: ast.AST | None = ctx.parent(name)
    while node is not None and node is not func:
        if isinstance(node, COMPREHENSIONS):
            for g in node.generators:
                if isinstance(g.target, ast.Name) and g.target.id == name.id:
                    return g.iter
        node = ctx.parent(node)
    return None


def _builder(value: ast.Call, ctx: Context, init: ast.FunctionDef | None) -> str | None:
    """What built the object `value` makes: the callee, or for `copy.deepcopy(reduction)`
    what built `reduction` (a copy has its original's class: a copied Cell is compiled as a
    Cell, measured on MindSpore 2.10 with `self.r0 = copy.deepcopy(nn.SequentialCell(...))`
    called on graph variables at LAX and STRICT; mindspore-ai/models MGN). None when the
    original is not known."""
    for _ in range(8):  # copies of copies, bounded
        q = ctx.qualname(value.func)
        if q not in COPY_CALLS:
            return q
        if len(value.args) != 1 or value.keywords:
            return None
        arg = value.args[0]
        if isinstance(arg, ast.Name) and init is not None:
            bound = analyzer(ctx).single_assignment(arg.id, init)
            arg = bound if bound is not None else arg
        if not isinstance(arg, ast.Call):
            return None
        value = arg
    return None


def held_from_constructor(ctx: Context, cls: ast.ClassDef, attr: str) -> str | None:
    """`functools.partial` when the object `self.<attr>` holds was built by it,
    when `__init__` binds it from a parameter and a construction of the class in this file
    passes such an object for it (or leaves it to a default that is one)."""
    return _table(ctx).get((cls.name, attr))


def held_attrs(ctx: Context) -> frozenset[str]:
    """The attribute names `held_from_constructor` knows in this file (a cheap prefilter)."""
    return frozenset(attr for _cls, attr in _table(ctx))


def _table(ctx: Context) -> dict[tuple[str, str], str]:
    hit: dict[tuple[str, str], str] | None = ctx.cache.get("held_callables")
    if hit is None:
        hit = ctx.cache["held_callables"] = _build(ctx)
    return hit


def _build(ctx: Context) -> dict[tuple[str, str], str]:
    if not ctx.mentions("partial"):
        return {}  # measured for `functools.partial`; a file without one has nothing here
    params_of: dict[str, tuple[list[str], dict[str, ast.expr], dict[str, str]]] = {}
    for cls in ctx.tree.body:
        if not isinstance(cls, ast.ClassDef):
            continue
        init = next(
            (f for f in cls.body if isinstance(f, ast.FunctionDef) and f.name == "__init__"), None
        )
        if init is None:
            continue
        args = init.args
        names = [p.arg for p in [*args.posonlyargs, *args.args][1:]]
        defaults = dict(zip(names[len(names) - len(args.defaults) :], args.defaults, strict=True))
        defaults.update(
            (p.arg, d) for p, d in zip(args.kwonlyargs, args.kw_defaults, strict=True) if d is not None
        )
        kwonly = [p.arg for p in args.kwonlyargs]
        bound = _self_from_params(init, {*names, *kwonly})
        if bound:
            params_of[cls.name] = (names + kwonly, defaults, bound)
    if not params_of:
        return {}
    sites: dict[str, list[ast.Call]] = {}
    for node in ast.walk(ctx.tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in params_of:
            sites.setdefault(node.func.id, []).append(node)
    out: dict[tuple[str, str], str] = {}
    for cls_name, calls in sites.items():
        names, defaults, bound = params_of[cls_name]
        for attr, param in bound.items():
            # each construction is compiled as its own instance: one given a package object
            # is enough for compiling to fail
            made = [q for call in calls if (q := _built_by(_argument(call, names, param, defaults), ctx))]
            if made:
                out[(cls_name, attr)] = made[0]
    return out


def _self_from_params(init: ast.FunctionDef, params: set[str]) -> dict[str, str]:
    """`self.<attr>` -> the parameter `__init__` binds it to, for attributes with no other
    binding in `__init__`."""
    seen: dict[str, str | None] = {}
    for node in init.body:
        if isinstance(node, ast.Assign):
            for t in node.targets:
                if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self":
                    v = node.value
                    param = v.id if isinstance(v, ast.Name) and v.id in params else None
                    seen[t.attr] = param if t.attr not in seen else None
    return {attr: p for attr, p in seen.items() if p is not None}


def _argument(call: ast.Call, names: list[str], param: str, defaults: dict[str, ast.expr]) -> ast.expr | None:
    if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        return None  # `*args` / `**cfg`: not known here
    for k in call.keywords:
        if k.arg == param:
            return k.value
    i = names.index(param)
    if i < len(call.args):
        return call.args[i]
    return defaults.get(param)


def _built_by(e: ast.expr | None, ctx: Context) -> str | None:
    """The package callable that built `e`: a call written in place, or a module-level name
    bound to one (`gelu_tanh = functools.partial(...)`)."""
    q: str | None = None
    if isinstance(e, ast.Call):
        q = ctx.qualname(e.func)
    elif isinstance(e, ast.Name):
        q = ctx.scopes.info.instances.get(e.id)
    return q if q == "functools.partial" else None


def held_by_default(ctx: Context, cls: ast.ClassDef, value: ast.expr) -> str | None:
    """`functools.partial` when `__init__` binds `self.<attr>` to a parameter-or-default
    choice (`act or functools.partial(...)`, `functools.partial(...) if act is None else
    act`) and every construction of the class in this file leaves that parameter to a `None`
    default, so each compiled instance holds the partial (measured: all four spellings are
    rejected under STRICT when the held partial is called with a graph variable)."""
    choice = _default_choice(value)
    if choice is None:
        return None
    param, made = choice
    if _built_by(made, ctx) is None:
        return None
    init = next((f for f in cls.body if isinstance(f, ast.FunctionDef) and f.name == "__init__"), None)
    if init is None:
        return None
    args = init.args
    names = [p.arg for p in [*args.posonlyargs, *args.args][1:]]
    defaults = dict(zip(names[len(names) - len(args.defaults) :], args.defaults, strict=True))
    if param not in names or not is_none_literal(defaults.get(param)):
        return None
    calls = [
        n for n in ast.walk(ctx.tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == cls.name
    ]
    if not calls:
        return None
    for call in calls:
        if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
            return None
        if not is_none_literal(_argument(call, names, param, defaults)):
            return None
    return "functools.partial"


def _default_choice(value: ast.expr) -> tuple[str, ast.expr] | None:
    """(parameter, the value used when it is None) for `p or made` and the two `is None`
    conditional expressions."""
    if isinstance(value, ast.BoolOp) and isinstance(value.op, ast.Or) and len(value.values) == 2:
        first, made = value.values
        return (first.id, made) if isinstance(first, ast.Name) else None
    if not isinstance(value, ast.IfExp):
        return None
    compared = none_compared(value.test)
    if compared is None or not isinstance(compared[0], ast.Name):
        return None
    name, negated = compared[0].id, compared[1]
    if not negated and isinstance(value.orelse, ast.Name) and value.orelse.id == name:
        return name, value.body
    if negated and isinstance(value.body, ast.Name) and value.body.id == name:
        return name, value.orelse
    return None
