"""`==` / `!=` between a Python list and a number: interpreted at run time under LAX.

MindSpore 2.10's `equal` / `not_equal` multitype graphs (mindspore/ops/composite/multitype_ops/
`equal_impl.py`, `not_equal_impl.py`) have no overload for a list against a number. Under LAX
the graph then hands the comparison to the Python interpreter at run time (a JIT Fallback
node), so its result is a run-time bool even though both operands are constants, and an
`if` on it is a branch of the graph whose two paths must join; STRICT folds it. Measured
(written/heldout30a, the YOLOv5 `froms` cases `r2_parse_froms_*` and probes `fix30e_*`):
`if f != -1: x = [x, y[0]]` with `f` a list fails at LAX only ("Type Join Failed: Abstract
type AbstractList cannot join with AbstractTensor"), also with `==` / `else`, a conditional
expression, a local list literal, a module-level list in an `@ms.jit` function; a tuple, a
str, an int `f`, a list against a list or against None, `isinstance(f, int) and f != -1`,
a tensor on both paths, or a name the branch binds and nobody reads compile.

In a loop unrolled over a table (`for i, m in enumerate(self.model): f = self.froms[i]`),
`f` is one item of the table per turn: the turn whose item is a list compares at run time,
and on that turn an `isinstance(f, int)` test in the branch folds to False
(`x = y[f] if isinstance(f, int) else [x if j == -1 else y[j] for j in f]` binds the list).
The tables are followed through `constructed.elements`, and through a module-level builder
`self.model, self.save, self.froms = parse_model(ROWS, 3)` whose returned `froms` grows by
`froms.append(f)` with `f` read from each row of the table it iterates (`for i, (f, n, m,
args) in enumerate(rows)`), or sets `m_.f = f` on each cell it appends (`for m in self.model:
... m.f`).
"""

from __future__ import annotations

import ast

from npu_lsp.astutil import walk
from npu_lsp.engine import Context
from npu_lsp.rules.graphmode import constructed
from npu_lsp.rules.graphmode.flow import analyzer

#: how many names, attributes and builders a value is followed through
_DEPTH = 6


def equality_with_number(test: ast.expr) -> bool:
    """Is `test` `a == <number>` / `a != <number>` (either side), maybe under `not`? (Asked of
    every `if` of compiled code: type tests only, the operator's first.)"""
    if type(test) is _UNARY:
        if type(test.op) is not _NOT:
            return False
        test = test.operand
        if type(test) is not _COMPARE:
            return False
    ops = getattr(test, "ops", None)
    if ops is None or type(ops[0]) not in _EQUALITY or len(ops) != 1:
        return False
    return _number(test.comparators[0]) or _number(test.left)  # type: ignore[attr-defined]


_UNARY, _NOT, _COMPARE = ast.UnaryOp, ast.Not, ast.Compare
_EQUALITY = (ast.Eq, ast.NotEq)


def compared_list(test: ast.expr, func: ast.AST | None, ctx: Context) -> ast.expr | None:
    """The operand of `test` (`f != -1`, `f == 0`, `not f == -1`) that may be a Python list
    compared with a number, on some turn of the loops around it; else None."""
    if not equality_with_number(test):
        return None
    if isinstance(test, ast.UnaryOp):
        test = test.operand
    assert isinstance(test, ast.Compare)
    left, right = test.left, test.comparators[0]
    operand = left if _number(right) else right if _number(left) else None
    if operand is None or not isinstance(operand, (ast.Name, ast.Attribute, ast.Subscript)):
        return None
    found = possible_values(operand, func, ctx)
    return operand if found and any(isinstance(v, (ast.List, ast.ListComp)) for v, _ in found) else None


def _number(e: ast.expr) -> bool:
    if isinstance(e, ast.UnaryOp) and isinstance(e.op, (ast.USub, ast.UAdd)):
        e = e.operand
    return isinstance(e, ast.Constant) and type(e.value) in (int, float)


Found = list[tuple[ast.expr, ast.AST | None]]


def possible_values(e: ast.expr, where: ast.AST | None, ctx: Context, depth: int = 0) -> Found | None:
    """The expressions `e` may stand for (each with the function it is evaluated in), one per
    turn of an unrolled loop over a table when `e` reads its items; None when not known."""
    if depth > _DEPTH:
        return None
    d = depth + 1
    if isinstance(e, (ast.List, ast.ListComp, ast.Tuple, ast.Constant)) or _number(e):
        return [(e, where)]
    if isinstance(e, ast.Name):
        if where is not None:
            bound = analyzer(ctx).single_assignment(e.id, where)
            if bound is not None:
                return possible_values(bound, where, ctx, d)
        value = constructed.built(e, where, ctx)
        return possible_values(value, where, ctx, d) if value is not None else None
    if isinstance(e, ast.Subscript):
        items = table_items(e.value, where, ctx, d)
        if items is None:
            return None
        key = e.slice
        if isinstance(key, ast.Constant) and type(key.value) is int:
            if not -len(items) <= key.value < len(items):
                return None
            items = [items[key.value]]
        return _values_of_all(items, ctx, d)
    if isinstance(e, ast.Attribute) and isinstance(e.value, ast.Name):
        if e.value.id == "self":
            cls = analyzer(ctx).owner_class(where)
            found = constructed.sources(cls, e.attr, ctx) if cls is not None else None
            return _values_of_all(found, ctx, d) if found else None
        return _cell_attribute_values(e, where, ctx, d)
    return None


def _values_of_all(exprs: Found, ctx: Context, depth: int) -> Found | None:
    """`possible_values` of every expression, joined; None as soon as one is not known."""
    out: Found = []
    for e, at in exprs:
        got = possible_values(e, at, ctx, depth)
        if got is None:
            return None
        out.extend(got)
    return out


def table_items(e: ast.expr, where: ast.AST | None, ctx: Context, depth: int = 0) -> Found | None:
    """The items of the list or tuple `e`: `constructed.elements`, or a `self.<attr>` unpacked
    from what a module-level builder returns (`self.model, self.save, self.froms =
    parse_model(ROWS, 3)`) and grown there by `append`."""
    if depth > _DEPTH:
        return None
    items = constructed.elements(e, where, ctx)
    if items is not None:
        return [(i, where) for i in items]
    if not (isinstance(e, ast.Attribute) and isinstance(e.value, ast.Name) and e.value.id == "self"):
        return None
    built = _unpacked_from_builder(e.attr, where, ctx)
    if built is None:
        return None
    returned, builder, call = built
    return _grown_items(returned, builder, call, ctx, depth + 1)


def _unpacked_from_builder(
    attr: str, where: ast.AST | None, ctx: Context
) -> tuple[ast.expr, ast.FunctionDef, ast.Call] | None:
    """`self.<attr>` bound once in `__init__` by unpacking a call of a module-level function
    whose every return is a tuple display: (that tuple's item for `attr`, the function, the
    call)."""
    cls = analyzer(ctx).owner_class(where)
    init = next((m for m in cls.body if isinstance(m, ast.FunctionDef) and m.name == "__init__"), None) if cls else None
    if init is None:
        return None
    hits = [
        (st, i)
        for st in walk(init)
        if isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Tuple)
        for i, t in enumerate(st.targets[0].elts)
        if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self" and t.attr == attr
    ]
    if len(hits) != 1:
        return None
    st, index = hits[0]
    call = st.value
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name)):
        return None
    builder = _module_function(call.func.id, ctx)
    if builder is None:
        return None
    rets = [r for r in walk(builder) if isinstance(r, ast.Return)]
    width = len(st.targets[0].elts)  # type: ignore[attr-defined]
    if len(rets) != 1 or not isinstance(rets[0].value, ast.Tuple) or len(rets[0].value.elts) != width:
        return None
    return rets[0].value.elts[index], builder, call


def _module_function(name: str, ctx: Context) -> ast.FunctionDef | None:
    return next((st for st in ctx.tree.body if isinstance(st, ast.FunctionDef) and st.name == name), None)


def _grown_items(
    returned: ast.expr, builder: ast.FunctionDef, call: ast.Call, ctx: Context, depth: int
) -> Found | None:
    """The items of `returned` (a name of `builder`, maybe wrapped in `list(...)`,
    `nn.CellList(...)`, `nn.SequentialCell(*...)`): bound to `[]` and grown only by
    `name.append(v)` inside one `for` over a table; each `v` read per row of that table."""
    if isinstance(returned, ast.Call) and len(returned.args) == 1 and not returned.keywords:
        returned = returned.args[0]
        if isinstance(returned, ast.Starred):
            returned = returned.value
    if not isinstance(returned, ast.Name):
        return None
    name = returned.id
    appends = [
        n
        for n in walk(builder)
        if isinstance(n, ast.Call)
        and isinstance(n.func, ast.Attribute)
        and isinstance(n.func.value, ast.Name)
        and n.func.value.id == name
    ]
    if len(appends) != 1 or appends[0].func.attr != "append" or len(appends[0].args) != 1:  # type: ignore[attr-defined]
        return None
    loop = _enclosing_for(appends[0], builder, ctx)
    if loop is None:
        return None
    return _per_row(appends[0].args[0], loop, builder, call, ctx, depth)


def _enclosing_for(node: ast.AST, builder: ast.FunctionDef, ctx: Context) -> ast.For | None:
    """The one `for` statement of `builder` around `node` (none nested in another)."""
    loops: list[ast.For] = []
    p = ctx.parent(node)
    while p is not None and p is not builder:
        if isinstance(p, (ast.While, ast.comprehension, ast.ListComp, ast.GeneratorExp)):
            return None
        if isinstance(p, ast.For):
            loops.append(p)
        p = ctx.parent(p)
    return loops[0] if len(loops) == 1 else None


def _per_row(
    value: ast.expr, loop: ast.For, builder: ast.FunctionDef, call: ast.Call, ctx: Context, depth: int
) -> Found | None:
    """What `value` (a name the loop's target binds, as `f` in `for i, (f, n, m, args) in
    enumerate(rows)`) is on each row of the table `rows` the call passes the builder."""
    if not isinstance(value, ast.Name):
        return None
    target, it = loop.target, loop.iter
    if isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "enumerate" and len(it.args) == 1:
        if not (isinstance(target, ast.Tuple) and len(target.elts) == 2):
            return None
        target, it = target.elts[1], it.args[0]
    path = _path_in_target(target, value.id)
    if path is None or not isinstance(it, ast.Name):
        return None
    if any(isinstance(n, ast.Name) and n.id == value.id and not isinstance(n.ctx, ast.Load) and n not in _names(target) for n in walk(loop)):
        return None  # rebound in the loop
    params = [a.arg for a in (*builder.args.posonlyargs, *builder.args.args)]
    if it.id not in params:
        return None
    index = params.index(it.id)
    given = next((k.value for k in call.keywords if k.arg == it.id), None)
    if given is None and index < len(call.args):
        given = call.args[index]
    if given is None or isinstance(given, ast.Starred):
        return None
    rows = table_items(given, ctx.enclosing_function(call, through_classes=True), ctx, depth)
    if rows is None:
        return None
    out: Found = []
    for row, at in rows:
        item: ast.expr = row
        for k in path:
            if not (isinstance(item, (ast.List, ast.Tuple)) and k < len(item.elts)):
                return None
            item = item.elts[k]
        out.append((item, at))
    return out


def _names(target: ast.expr) -> list[ast.Name]:
    return [n for n in ast.walk(target) if isinstance(n, ast.Name)]


def _path_in_target(target: ast.expr, name: str) -> list[int] | None:
    """The positions leading to `name` in a nested unpacking target (`(f, n, m, args)`)."""
    if isinstance(target, ast.Name):
        return [] if target.id == name else None
    if isinstance(target, (ast.Tuple, ast.List)):
        for i, t in enumerate(target.elts):
            sub = _path_in_target(t, name)
            if sub is not None:
                return [i, *sub]
    return None


def _cell_attribute_values(e: ast.Attribute, where: ast.AST | None, ctx: Context, depth: int) -> Found | None:
    """`m.f` with `m` iterating `self.model` (`for m in self.model`, `enumerate`): the values
    the builder of `self.model` gives `.f` on each cell it appends (`m_.i, m_.f = i, f`)."""
    assert isinstance(e.value, ast.Name)
    if where is None:
        return None
    seq = analyzer(ctx).iterated(e.value.id, where)
    if not (isinstance(seq, ast.Attribute) and isinstance(seq.value, ast.Name) and seq.value.id == "self"):
        return None
    built = _unpacked_from_builder(seq.attr, where, ctx)
    if built is None:
        return None
    returned, builder, call = built
    if isinstance(returned, ast.Call) and len(returned.args) == 1 and not returned.keywords:
        returned = returned.args[0]
        if isinstance(returned, ast.Starred):
            returned = returned.value
    if not isinstance(returned, ast.Name):
        return None
    appends = [
        n
        for n in walk(builder)
        if isinstance(n, ast.Call)
        and isinstance(n.func, ast.Attribute)
        and n.func.attr == "append"
        and isinstance(n.func.value, ast.Name)
        and n.func.value.id == returned.id
        and len(n.args) == 1
        and isinstance(n.args[0], ast.Name)
    ]
    if len(appends) != 1:
        return None
    appended = appends[0].args[0]
    assert isinstance(appended, ast.Name)
    cell = appended.id
    loop = _enclosing_for(appends[0], builder, ctx)
    if loop is None:
        return None
    stores = [
        value
        for st in walk(loop)
        if isinstance(st, ast.Assign)
        for value in _attribute_store_values(st, cell, e.attr)
    ]
    if len(stores) != 1:
        return None
    return _per_row(stores[0], loop, builder, call, ctx, depth + 1)


def _attribute_store_values(st: ast.Assign, obj: str, attr: str) -> list[ast.expr]:
    """The values `st` stores in `<obj>.<attr>` (`m_.f = f`, `m_.i, m_.f = i, f`)."""
    out: list[ast.expr] = []
    for t in st.targets:
        pairs: list[tuple[ast.expr, ast.expr | None]]
        if isinstance(t, ast.Tuple) and isinstance(st.value, ast.Tuple) and len(t.elts) == len(st.value.elts):
            pairs = list(zip(t.elts, st.value.elts, strict=True))
        else:
            pairs = [(t, st.value)]
        for target, value in pairs:
            if (
                isinstance(target, ast.Attribute)
                and target.attr == attr
                and isinstance(target.value, ast.Name)
                and target.value.id == obj
                and value is not None
            ):
                out.append(value)
    return out


#: `isinstance(f, <names>)` for a list `f`: True when the names hold `list`, False when
#: they are only types a list is not (anything else is left unfolded)
_NOT_A_LIST = frozenset({"int", "float", "bool", "str", "tuple", "dict"})


def isinstance_for_list(test: ast.expr, operand: ast.expr) -> bool | None:
    """`test` evaluated on the turn where `operand` is a Python list: `isinstance(f, int)`
    is False, `isinstance(f, list)` True, `not ...` the opposite; None when `test` is not
    such a test of `operand`."""
    negate = False
    while isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        test, negate = test.operand, not negate
    if not (
        isinstance(test, ast.Call)
        and isinstance(test.func, ast.Name)
        and test.func.id == "isinstance"
        and len(test.args) == 2
        and not test.keywords
        and _same(test.args[0], operand)
    ):
        return None
    kinds = test.args[1]
    names = kinds.elts if isinstance(kinds, ast.Tuple) else [kinds]
    if not all(isinstance(n, ast.Name) for n in names):
        return None
    ids = {n.id for n in names}  # type: ignore[attr-defined]
    if "list" in ids:
        result = True
    elif ids <= _NOT_A_LIST:
        result = False
    else:
        return None
    return result != negate


def _same(a: ast.expr, b: ast.expr) -> bool:
    """The same name or `obj.attr` read (`f`, `m.f`, `self.f`)."""
    if isinstance(a, ast.Name) and isinstance(b, ast.Name):
        return a.id == b.id
    if isinstance(a, ast.Attribute) and isinstance(b, ast.Attribute):
        return a.attr == b.attr and _same(a.value, b.value)
    return False


def folded_value(e: ast.expr, operand: ast.expr) -> ast.expr:
    """`e` with conditional expressions on `isinstance(operand, ...)` replaced by the side
    a list `operand` picks."""
    while isinstance(e, ast.IfExp):
        picked = isinstance_for_list(e.test, operand)
        if picked is None:
            break
        e = e.body if picked else e.orelse
    return e


def folded_bindings(block: list[ast.stmt], operand: ast.expr) -> dict[str, ast.expr] | None:
    """`name = value` statements of `block` (the last one per name wins), with `if
    isinstance(operand, ...)` statements folded for a list `operand` and their chosen
    block followed; None when a name is bound any other way (unpacking, a loop...)."""
    out: dict[str, ast.expr] = {}
    for st in block:
        if isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name):
            out[st.targets[0].id] = folded_value(st.value, operand)
        elif isinstance(st, ast.If) and (picked := isinstance_for_list(st.test, operand)) is not None:
            inner = folded_bindings(st.body if picked else st.orelse, operand)
            if inner is None:
                return None
            out.update(inner)
        elif isinstance(st, (ast.Expr, ast.Pass)):
            continue
        else:
            return None
    return out
