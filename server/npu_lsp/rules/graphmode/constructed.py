"""What `self.<attr>` of a compiled Cell was built from, followed through its constructor.

`self.optimizer = optimizer` in `__init__` holds whatever the code building the Cell passed:
`step = TrainStep(net, loss_fn, opt)` in `run()` with `opt = nn.Momentum(...)` a line above,
`TrainStep(net, loss_fn, nn.SGD(...))`, `TrainStep(..., optimizer=opt)` at module level.
MindSpore compiles `construct` for that instance, so the expression that built the object is
what the compiled code calls. `sources(cls, attr)` answers those expressions, each with the
function it is evaluated in (None: module level); None when any route is unknown (a starred
argument, a parameter rebound in `__init__`, no place in this file that builds the Cell).
"""

from __future__ import annotations

import ast

from npu_lsp.engine import Context
from npu_lsp.rules.graphmode.flow import analyzer
from npu_lsp.rules.graphmode.values import instances, local_bindings

#: how many names a value is followed through (`opt = base; base = nn.SGD(...)`)
_DEPTH = 4
#: at most this many places building the Cell are followed
_SITES = 8

Source = tuple[ast.expr, ast.AST | None]


def _subclassed(cls: ast.ClassDef, ctx: Context) -> bool:
    """Is `cls` a base of another class of this file (then `self` may be that subclass)?"""
    return any(
        isinstance(n, ast.ClassDef) and any(isinstance(b, ast.Name) and b.id == cls.name for b in n.bases)
        for n in ctx.tree.body
    )


def argument(cls: ast.ClassDef, index: int, keyword: str, ctx: Context, defaults: bool = False) -> list[Source] | None:
    """The argument each place building `cls` gives its constructor's parameter at `index`
    (after `self`) or named `keyword`, with the function it is written in; with `defaults`,
    the parameter's default (module level) where a place leaves it out."""
    sites = instances(ctx).instantiations(cls.name)
    if not sites or len(sites) > _SITES or _subclassed(cls, ctx):
        return None
    default = _default(cls, index) if defaults else None
    out: list[Source] = []
    for site in sites:
        if any(isinstance(a, ast.Starred) for a in site.args) or any(k.arg is None for k in site.keywords):
            return None
        given = [k.value for k in site.keywords if k.arg == keyword]
        if given:
            out.append((given[0], ctx.enclosing_function(site, through_classes=True)))
        elif index < len(site.args):
            out.append((site.args[index], ctx.enclosing_function(site, through_classes=True)))
        elif default is not None:
            out.append((default, None))
        else:
            return None  # the default: not followed
    return out


def _default(cls: ast.ClassDef, index: int) -> ast.expr | None:
    """The default of the positional parameter at `index` (after `self`) of `cls.__init__`."""
    init = init_of(cls)
    if init is None:
        return None
    args = init.args
    positional = len(args.posonlyargs) + len(args.args) - 1
    at = index - (positional - len(args.defaults))
    return args.defaults[at] if 0 <= at < len(args.defaults) else None


def init_of(cls: ast.ClassDef) -> ast.FunctionDef | None:
    """`cls`'s own `__init__` (not an inherited one)."""
    return next((f for f in cls.body if isinstance(f, ast.FunctionDef) and f.name == "__init__"), None)


def construction_args(param: str, cls: ast.ClassDef, init: ast.FunctionDef, ctx: Context) -> list[ast.expr]:
    """What each `Cls(...)` call of the file gives `__init__`'s parameter `param` (its default
    where a call leaves it out); empty when a call cannot be read (`*args`, `**kw`) or there
    is none."""
    a = init.args
    positional = [p.arg for p in [*a.posonlyargs, *a.args]][1:]  # without `self`
    if param not in positional and param not in [p.arg for p in a.kwonlyargs]:
        return []
    defaults = dict(zip(positional[len(positional) - len(a.defaults) :], a.defaults, strict=True))
    defaults.update({p.arg: d for p, d in zip(a.kwonlyargs, a.kw_defaults, strict=True) if d is not None})
    out: list[ast.expr] = []
    for call in instances(ctx).instantiations(cls.name):
        if any(isinstance(x, ast.Starred) for x in call.args) or any(k.arg is None for k in call.keywords):
            return []
        given: ast.expr | None = next((k.value for k in call.keywords if k.arg == param), None)
        if given is None and param in positional and positional.index(param) < len(call.args):
            given = call.args[positional.index(param)]
        given = given if given is not None else defaults.get(param)
        if given is None:
            return []
        out.append(given)
    return out


def sources(cls: ast.ClassDef, attr: str, ctx: Context, defaults: bool = False) -> list[Source] | None:
    """The expressions `self.<attr>` of `cls` was built from, each where it is evaluated
    (with `defaults`, also a constructor parameter's default that a place leaves out)."""
    values = analyzer(ctx).self_values(cls).get(attr)
    init = init_of(cls)
    if not values or init is None:
        return None
    params = [a.arg for a in (*init.args.posonlyargs, *init.args.args)][1:]
    out: list[Source] = []
    for v in values:
        if v is None:
            return None
        if isinstance(v, ast.IfExp):
            picked = _none_test_picks(v, cls, init, params, ctx, defaults)
            if picked is not None:
                out.extend(picked)
                continue
        if isinstance(v, ast.Name) and v.id in params:
            if len(cached_bindings(init, ctx).get(v.id, [])) != 1:
                return None  # the parameter is rebound in `__init__`
            passed = argument(cls, params.index(v.id), v.id, ctx, defaults)
            if passed is None:
                return None
            out.extend(passed)
        else:
            out.append((v, init))
    return out


def _none_test_picks(
    v: ast.IfExp, cls: ast.ClassDef, init: ast.FunctionDef, params: list[str], ctx: Context, defaults: bool
) -> list[Source] | None:
    """`0.1 if T is None else T` (or `is not None`) on a constructor parameter: `__init__` runs
    as Python, so each place building `cls` picks one side by what it gives `T` (measured,
    written/heldout27a probe `fix28b_nd_default_none`: `T` left at `None` stores the 0.1);
    the side picked, the parameter's argument for `T` itself. None when not such a test,
    or some place gives `T` what we cannot follow."""
    t = v.test
    if not (
        isinstance(t, ast.Compare)
        and len(t.ops) == 1
        and isinstance(t.ops[0], (ast.Is, ast.IsNot))
        and isinstance(t.left, ast.Name)
        and t.left.id in params
        and isinstance(t.comparators[0], ast.Constant)
        and t.comparators[0].value is None
        and len(cached_bindings(init, ctx).get(t.left.id, [])) == 1
    ):
        return None
    name = t.left.id
    passed = argument(cls, params.index(name), name, ctx, defaults)
    if passed is None:
        return None
    out: list[Source] = []
    for e, where in passed:
        made = built(e, where, ctx) if isinstance(e, ast.Name) else e
        if made is None:
            return None
        given_none = isinstance(made, ast.Constant) and made.value is None
        side = v.body if given_none == isinstance(t.ops[0], ast.Is) else v.orelse
        if isinstance(side, ast.Name) and side.id == name:
            out.append((e, where))
        elif isinstance(side, ast.Name) and side.id in params:
            return None  # another parameter: not followed
        else:
            out.append((side, init))
    return out


def built(e: ast.expr, where: ast.AST | None, ctx: Context, depth: int = 0) -> ast.expr | None:
    """`e` with the names it reads followed to the expression they were bound to: a local
    bound once in `where` (`opt = nn.SGD(...)` in `run()`), else a module-level name."""
    while isinstance(e, ast.Name) and depth < _DEPTH:
        depth += 1
        value: ast.expr | None = None
        binds = cached_bindings(where, ctx).get(e.id) if where is not None else None
        if binds and where is not None:
            value = _assigned_cached(binds, where, ctx)
        else:
            binds = cached_bindings(ctx.tree, ctx).get(e.id)
            value = _assigned_cached(binds, ctx.tree, ctx) if binds else None
            where = None
        if value is None:
            return None
        e = value
    return None if isinstance(e, ast.Name) else e


def cached_bindings(where: ast.AST, ctx: Context) -> dict[str, list[ast.AST]]:
    key = ("constructed:bindings", id(where))
    hit: dict[str, list[ast.AST]] | None = ctx.cache.get(key)
    if hit is None:
        if isinstance(where, ast.Lambda):  # its body is an expression: only its parameters
            hit = {a.arg: [a] for a in (*where.args.posonlyargs, *where.args.args, *where.args.kwonlyargs)}
        else:
            hit = local_bindings(where)
        ctx.cache[key] = hit
    return hit


def _assigned_cached(binds: list[ast.AST], where: ast.AST, ctx: Context) -> ast.expr | None:
    key = ("constructed:assigned", id(binds[0]) if len(binds) == 1 else 0, id(where))
    if key[1] == 0:
        return None
    if key not in ctx.cache:
        ctx.cache[key] = _assigned(binds, where)
    hit: ast.expr | None = ctx.cache[key]
    return hit


def _assigned(binds: list[ast.AST], where: ast.AST) -> ast.expr | None:
    """The value of a name's only binding when it is a plain `name = value`."""
    if len(binds) != 1 or not isinstance(binds[0], ast.Name):
        return None
    target = binds[0]
    body = getattr(where, "body", None)
    stack: list[ast.AST] = list(body) if isinstance(body, list) else []
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Assign):
            if len(node.targets) == 1 and node.targets[0] is target:
                return node.value
            continue
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        if isinstance(node, ast.stmt):
            stack.extend(ast.iter_child_nodes(node))
    return None


def elements(
    e: ast.expr, where: ast.AST | None, ctx: Context, depth: int = 0, defaults: bool = False
) -> list[ast.expr] | None:
    """The expressions of the items a list or tuple holds, followed to where it was built:
    a display, `list(...)` / `tuple(...)` / `sorted(...)` of one, a name bound once to one, a
    parameter of a Cell's `__init__` (every place building the Cell, by `argument`),
    `self.<attr>` of a method (its `__init__` sources), and a comprehension `[s for s in
    xs]` or `[s[0] for s in specs]` over one of those displays (its items, or their k-th
    items). None when any route is unknown. The graph holds such a sequence as a constant
    whose items keep their Python types (a str item is a String of the graph). With
    `defaults`, a constructor parameter's default a place building the Cell leaves out
    counts as what it gives."""
    if depth > _DEPTH:
        return None
    d = depth + 1
    if isinstance(e, (ast.List, ast.Tuple)):
        return None if any(isinstance(x, ast.Starred) for x in e.elts) else list(e.elts)
    if isinstance(e, ast.Call):
        f = e.func
        if (
            len(e.args) == 1
            and not e.keywords
            and isinstance(f, ast.Name)
            and f.id in ("list", "tuple", "sorted")
            and ctx.qualname(f) == f"builtins.{f.id}"
        ):
            return elements(e.args[0], where, ctx, d, defaults)
        return None
    if isinstance(e, (ast.ListComp, ast.GeneratorExp)):
        if len(e.generators) != 1 or not isinstance(e.generators[0].target, ast.Name):
            return None
        gen = e.generators[0]
        target = gen.target
        assert isinstance(target, ast.Name)
        base = elements(gen.iter, where, ctx, d, defaults)
        if base is None:
            return None
        elt = e.elt
        if isinstance(elt, ast.Name) and elt.id == target.id:
            return base
        if (
            isinstance(elt, ast.Subscript)
            and isinstance(elt.value, ast.Name)
            and elt.value.id == target.id
            and isinstance(elt.slice, ast.Constant)
            and type(elt.slice.value) is int
        ):
            k = elt.slice.value
            out: list[ast.expr] = []
            for item in base:
                if not isinstance(item, (ast.Tuple, ast.List)) or not -len(item.elts) <= k < len(item.elts):
                    return None
                out.append(item.elts[k])
            return out
        return None
    if isinstance(e, ast.Attribute) and isinstance(e.value, ast.Name) and e.value.id == "self":
        cls = analyzer(ctx).owner_class(where)
        found = sources(cls, e.attr, ctx, defaults) if cls is not None else None
        if not found:
            return None
        out = []
        for src, at in found:
            items = elements(src, at, ctx, d, defaults)
            if items is None:
                return None
            out.extend(items)
        return out
    if isinstance(e, ast.Name):
        init = where if isinstance(where, ast.FunctionDef) and where.name == "__init__" else None
        cls = analyzer(ctx).owner_class(init) if init is not None else None
        if init is not None and cls is not None:
            params = [a.arg for a in (*init.args.posonlyargs, *init.args.args)][1:]
            if e.id in params:
                if len(cached_bindings(init, ctx).get(e.id, [])) != 1:
                    return None  # the parameter is rebound in `__init__`
                passed = argument(cls, params.index(e.id), e.id, ctx, defaults)
                if not passed:
                    return None
                out = []
                for src, at in passed:
                    items = elements(src, at, ctx, d, defaults)
                    if items is None:
                        return None
                    out.extend(items)
                return out
        value = built(e, where, ctx)
        return None if value is None else elements(value, where, ctx, d, defaults)
    return None


def str_elements(e: ast.expr, where: ast.AST | None, ctx: Context, defaults: bool = False) -> bool:
    """Does the list or tuple `e` hold only str constants (and at least one)?"""
    items = elements(e, where, ctx, defaults=defaults) or []
    return bool(items) and all(isinstance(x, ast.Constant) and isinstance(x.value, str) for x in items)
