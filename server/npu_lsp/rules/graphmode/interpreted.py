"""Interpreted values: what LAX holds as a Python object after JIT Fallback (`ValueAny`).

Under LAX, MindSpore 2.10 runs a call it cannot compile on a run-time value by JIT Fallback
(PyExecute, `fallback_calls.runtime_fallback`: `str(t)`, `math.floor(t.max())`, `np.mean(...)`, an
f-string of run-time values, `x.asnumpy()`). Its result is an opaque Python object, and so is
arithmetic with it: `x = x + len(str(s)) * 0` leaves `x` a `ValueAny`, not a tensor the graph
knows, and so are its `shape`, `ndim` and items; it travels through returns into callers and
through arguments into callees. Graph scalars read from a tensor (`float(t)`, `t.item()`,
`t.mean()`) are not interpreted (measured, written/famc probes `g17_an_*`).

`interpreted(e, ctx, func)` answers for an expression of a compiled function; the answer is
flow-insensitive beyond "the last binding of a name before the read that always runs", and
callee parameters are interpreted only when every call in this file passes an interpreted
argument.
"""

from __future__ import annotations

import ast

from npu_lsp.astutil import range_count, store_names
from npu_lsp.engine import Context
from npu_lsp.rules.graphmode.flow import analyzer
from npu_lsp.rules.graphmode.tensor_names import TENSOR_CLASS, TENSOR_MAKERS

#: names and calls followed from one read (a chain of stages passing `x` along)
_DEPTH = 24
#: builtins and constructors whose result is interpreted when an argument is
_CARRIERS = frozenset(
    {"len", "float", "int", "round", "abs", "sum", "max", "min", "enumerate", "zip", "list", "tuple", "sorted", "reversed", "range"}
    | TENSOR_CLASS
)
_FROM_NUMPY = frozenset(f"{c}.from_numpy" for c in TENSOR_CLASS)
_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)
#: builtins making text; MindSpore knows them (`calls_table.graph_builtins`) but runs them by
#: JIT Fallback on a run-time value
_TEXT = frozenset({"str", "repr", "format"})
#: set while `rank_unknown` asks: a library call computing from such a value counts too
_RANK_QUERY = "interpreted.rank_query"


def _named_tuples(ctx: Context) -> frozenset[str]:
    """Classes of the file deriving from `typing.NamedTuple`, and module-level names bound to
    `collections.namedtuple(...)` (LAX builds both by PyExecute)."""
    key = "interpreted.namedtuples"
    hit: frozenset[str] | None = ctx.cache.get(key)
    if hit is None:
        hit = frozenset(
            n.name
            for n in ctx.tree.body
            if type(n) is ast.ClassDef and any(ctx.qualname(b) == "typing.NamedTuple" for b in n.bases)
        ) | frozenset(
            t.id
            for n in ctx.tree.body
            if type(n) is ast.Assign
            and type(n.value) is ast.Call
            and ctx.qualname(n.value.func) == "collections.namedtuple"
            for t in n.targets
            if type(t) is ast.Name
        )
        ctx.cache[key] = hit
    return hit


def rank_unknown(e: ast.expr, ctx: Context, func: ast.AST) -> bool:
    """Is the shape of `e` unknown while compiling: a value JIT Fallback made, or what any
    operator, tensor method or layer computes from one (`ops.relu(x)`, `x.reshape(2, 3)`,
    `ops.sum(x, 1)`, `x.sum()`, `self.act(x)`)? MindSpore then decides `x.ndim == 3` and
    `x.shape[0] == 5` at run time and compiles both sides (measured, written/gen18 probes
    `fix28b_nk_*`, `fix29b_nk_*`: `max(..., key=)` under such a test in a helper fails for all
    of these, even `x.reshape(2, 3)` or a full reduction, whatever the test; for a graph `x`
    it compiles; fresh v5 seed 11400063)."""
    ctx.cache[_RANK_QUERY] = True
    try:
        return interpreted(e, ctx, func)
    finally:
        ctx.cache[_RANK_QUERY] = False


def run_time_test(test: ast.expr, ctx: Context, func: ast.AST) -> bool:
    """Is the condition `test` decided only at run time because of JIT Fallback: computed from
    an interpreted value, or reading the shape of a value of unknown rank (`rank_unknown`:
    `x.shape[0] > 0` after `x = x + Tensor(x.asnumpy())`, or after `y = ops.relu(x)` of
    one)? MindSpore then compiles both sides of an `if` on it and joins what they bind, as for
    a tensor condition (measured, written/lax probes `fix30a_fb_*_if_len`, `fix30a_fj_*`).
    Its rank is not such a test: under `if x.ndim == 2:` a list grown on one side is
    measured with `len` fine (probe `fix30a_fj_np_ndim_if_len`)."""
    t = type(test)
    if t is ast.BoolOp:
        return any(run_time_test(v, ctx, func) for v in test.values)  # type: ignore[attr-defined]
    if t is ast.UnaryOp:
        return run_time_test(test.operand, ctx, func)  # type: ignore[attr-defined]
    if t is ast.Compare:
        return any(run_time_test(v, ctx, func) for v in (test.left, *test.comparators))  # type: ignore[attr-defined]
    if t is ast.Attribute and test.attr == "ndim":  # type: ignore[attr-defined]
        return False
    if interpreted(test, ctx, func):
        return True
    return any(
        type(sub) is ast.Attribute and sub.attr == "shape" and rank_unknown(sub.value, ctx, func)
        for sub in ast.walk(test)
    )


def _computed_from(call: ast.Call, ctx: Context, func: ast.AST, depth: int) -> bool:
    """A library call (not a function of this file, followed through its returns) given a
    value of unknown shape (`rank_unknown`), positionally or by keyword."""
    if _callee(call, ctx, func) is not None:
        return False
    return any(interpreted(a, ctx, func, depth + 1) for a in [*call.args, *(k.value for k in call.keywords)])


def interpreted(e: ast.expr, ctx: Context, func: ast.AST, depth: int = 0) -> bool:
    """Is `e`, evaluated in the compiled function `func`, a Python object JIT Fallback made?"""
    if depth > _DEPTH:
        return False
    t = type(e)
    if t is ast.Name:
        return _name(e, ctx, func, depth)  # type: ignore[arg-type]
    if t is ast.BinOp:
        return interpreted(e.left, ctx, func, depth) or interpreted(e.right, ctx, func, depth)  # type: ignore[attr-defined]
    if t is ast.UnaryOp:
        return interpreted(e.operand, ctx, func, depth)  # type: ignore[attr-defined]
    if t is ast.Subscript:
        if interpreted(e.value, ctx, func, depth):  # type: ignore[attr-defined]
            return True
        # indexed by a tensor JIT Fallback builds (`x[:, ms.Tensor(np.argsort(...))]`): the
        # result's shape is not known while compiling (opaque_value_query
        # `_fallback_tensor_index`; measured, fresh v5 seed 11000093: a comprehension over its
        # `shape` fails as over any interpreted tensor's)
        sl = e.slice  # type: ignore[attr-defined]
        return any(
            type(i) is ast.Call
            and ctx.qualname(i.func) in TENSOR_MAKERS
            and any(interpreted(a, ctx, func, depth + 1) for a in i.args)
            for i in (sl.elts if type(sl) is ast.Tuple else [sl])
        )
    if t is ast.Attribute:
        if type(e.value) is ast.Name and e.value.id == "self" and type(e.ctx) is ast.Load:  # type: ignore[attr-defined]
            # `self.calls` in a function that stores a Python number on it (`self.calls +=
            # 1`): LAX reads it as a Python object (number_stores; measured, written/lax probes
            # `genfresh31_fl_counter_*`: `x = x + self.calls * 0` then a comprehension over
            # `x[0]` given to `heapq.nlargest` or `sum` fails, "unsupported operand type(s)
            # for +: 'float' and 'list'"; fresh v5 seed 11800077)
            from npu_lsp.rules.graphmode.number_stores import number_stored

            return number_stored(e, func, ctx) or _stored_interpreted(e, ctx, func, depth)  # type: ignore[arg-type]
        return interpreted(e.value, ctx, func, depth)  # type: ignore[attr-defined]
    if t is ast.JoinedStr:
        return any(type(v) is ast.FormattedValue and known_only_at_run_time(v.value, ctx, func) for v in e.values)  # type: ignore[attr-defined]
    if t is ast.Call:
        return _call(e, ctx, func, depth)  # type: ignore[arg-type]
    if t is ast.IfExp:
        # `x * (1.0 if max(vals) > 0 else 0.5)` with `vals` host data: chosen by Python at
        # run time (measured, `g17_an_ifexp_*`; a test on `t.item()` is a graph value)
        return any(interpreted(v, ctx, func, depth) for v in (e.test, e.body, e.orelse))  # type: ignore[attr-defined]
    if t is ast.Compare:
        return any(interpreted(v, ctx, func, depth) for v in (e.left, *e.comparators))  # type: ignore[attr-defined]
    if t is ast.BoolOp:
        return any(interpreted(v, ctx, func, depth) for v in e.values)  # type: ignore[attr-defined]
    if t is ast.ListComp or t is ast.GeneratorExp:
        return interpreted(e.elt, ctx, func, depth)  # type: ignore[attr-defined]
    return False


def _stored_interpreted(read: ast.Attribute, ctx: Context, func: ast.AST, depth: int) -> bool:
    """`self.<attr>` read after a statement of the same function stores a JIT Fallback value
    on it (`self.acc = self.acc + x.asnumpy()`, then `ms.Tensor(self.acc)`): LAX keeps the
    Python object there (measured, written/lax probe `fix36b_hg_from_subcell`: its tensor,
    returned by a sub-cell and differentiated twice, fails as `ms.Tensor(x.asnumpy())`
    does, "The pointer[local_dict_cnode] is null"; difftest v6 seed 12000710)."""
    if not (ctx.mentions("asnumpy") or ctx.mentions("tolist")):
        return False  # (the stores that matter hold host data read from a tensor)
    key = ("interpreted.stored", id(func), read.attr)
    if ctx.cache.get(key):
        return False  # the store's own value reads the attribute: followed once
    ctx.cache[key] = True
    try:
        at = (read.lineno, read.col_offset)
        for st in _own_statements(func):
            if (
                type(st) is ast.Assign
                and len(st.targets) == 1
                and type(st.targets[0]) is ast.Attribute
                and st.targets[0].attr == read.attr
                and type(st.targets[0].value) is ast.Name
                and st.targets[0].value.id == "self"
                and (st.lineno, st.col_offset) < at
                and interpreted(st.value, ctx, func, depth + 1)
            ):
                return True
        return False
    finally:
        ctx.cache[key] = False


def _call(call: ast.Call, ctx: Context, func: ast.AST, depth: int) -> bool:
    from npu_lsp.rules.graphmode.fallback_calls import runtime_fallback

    if runtime_fallback(call, ctx, func):
        return True  # a fallback on constants only (`d.copy()` of a literal dict) is folded
    q = ctx.qualname(call.func) or ""
    name = q[9:] if q.startswith("builtins.") else q
    f = call.func
    if name in _TEXT or (type(f) is ast.Attribute and f.attr == "format" and type(f.value) is ast.Constant):
        # `str(t)`, `'{:.3f}'.format(v)` of a run-time value: text JIT Fallback makes
        return any(known_only_at_run_time(x, ctx, func) for x in [*call.args, *(k.value for k in call.keywords)])
    if type(f) is ast.Name and f.id in _named_tuples(ctx):
        return True  # LAX builds a NamedTuple instance as Python (PyExecute)
    if name in _CARRIERS or name in _FROM_NUMPY:
        # `ms.Tensor.from_numpy(np.ascontiguousarray(x.asnumpy()))` wraps the Python object
        # as `ms.Tensor(...)` does (fresh v5 seed 11900176: a comprehension over its shape fails)
        return any(interpreted(a, ctx, func, depth) for a in call.args)
    if _arithmetic_lambda(f, ctx, func) and any(interpreted(a, ctx, func, depth) for a in call.args):
        # `f = lambda t: t * 2; x = f(x) / 2` of such a value: Python arithmetic on the
        # Python object (measured, fresh v5 seed 11800121, written/lax probes
        # `genfresh31_lm_*`: a comprehension over `x[0]` after it fails as without the lambda)
        return True
    if type(f) is ast.Attribute and interpreted(f.value, ctx, func, depth):
        return True  # a method of a Python object runs as Python
    if type(f) is ast.Attribute and type(f.value) is ast.Constant and type(f.value.value) is str:
        # `', '.join(f'{v:.2f}' for v in vals)` of interpreted text: run as Python too
        # (measured, written/gen18 probes `v23_jn_*`)
        return any(interpreted(a, ctx, func, depth + 1) for a in call.args)
    if ctx.cache.get(_RANK_QUERY) and _computed_from(call, ctx, func, depth):
        return True
    partial = _partial_of(f, ctx, func)
    if partial is not None:
        inner, bound = partial
        given = [*bound.args[1:], *(k.value for k in bound.keywords), *call.args, *(k.value for k in call.keywords)]
        return any(interpreted(a, ctx, func, depth + 1) for a in given) and _passes_through(inner, ctx, depth + 1)
    callee = _callee(call, ctx, func)
    return callee is not None and _returns(callee, ctx, depth + 1)


def _partial_of(f: ast.expr, ctx: Context, func: ast.AST) -> tuple[ast.AST, ast.Call] | None:
    """For a callee `functools.partial(g, ...)` (inline, or a local name bound once to it) of
    a function `g` of this file: `g`'s definition and the `partial` call."""
    if type(f) is ast.Name:
        bound = analyzer(ctx).single_assignment(f.id, func)
        if bound is None:
            return None
        f = bound
    if type(f) is not ast.Call or not f.args or type(f.args[0]) is not ast.Name:
        return None
    if ctx.qualname(f.func) != "functools.partial":
        return None
    g = _defs(ctx).get(f.args[0].id)
    return None if g is None else (g, f)


def _passes_through(g: ast.AST, ctx: Context, depth: int) -> bool:
    """Does every `return` of `g` give an interpreted value when its parameters hold one
    (`return t * factor`)? `functools.partial(g, factor=2.0)(x)` of such an `x` is then one
    too: MindSpore compiles the partial as a call of `g` (measured, written/lax probes
    `fix32b_pt_*`: after `x = x * math.isfinite(x.sum())`, `functools.partial(scale_by,
    factor=2.0)(x)`, also through a name or of a `g` returning `ops.relu(t) * factor`, then
    a comprehension over `x.shape` fails as after a direct call; of a graph `x` it compiles;
    fresh v5 seed 11700077)."""
    key = ("interpreted.assumed", id(g))
    if ctx.cache.get(key):
        return False  # a cycle
    ctx.cache[key] = True
    try:
        rets = [n for n in _own_statements(g) if type(n) is ast.Return and n.value is not None]
        return bool(rets) and all(interpreted(r.value, ctx, g, depth) for r in rets)  # type: ignore[arg-type]
    finally:
        ctx.cache[key] = False


def _arithmetic_lambda(f: ast.expr, ctx: Context, func: ast.AST) -> bool:
    """Is `f` a lambda (inline, or a local name bound once to one) whose body is arithmetic
    of its parameters and constants (`lambda t: t * 2`, `lambda t, s=2.0: t * s`)?"""
    if type(f) is ast.Name:
        bound = analyzer(ctx).single_assignment(f.id, func)
        if bound is None:
            return False
        f = bound
    if type(f) is not ast.Lambda:
        return False
    params = {a.arg for a in f.args.args}
    return _arithmetic_of(f.body, params)


def _arithmetic_of(e: ast.expr, params: set[str]) -> bool:
    t = type(e)
    if t is ast.BinOp:
        return _arithmetic_of(e.left, params) and _arithmetic_of(e.right, params)  # type: ignore[attr-defined]
    if t is ast.UnaryOp:
        return _arithmetic_of(e.operand, params)  # type: ignore[attr-defined]
    if t is ast.Name:
        return e.id in params  # type: ignore[attr-defined]
    return t is ast.Constant


def known_only_at_run_time(e: ast.expr, ctx: Context, func: ast.AST) -> bool:
    """Is `e` a value known only at run time: a graph variable, or an item of a list a
    comprehension builds of them (`vals[1]` of `vals = [x[0, j].item() for j in range(3)]`,
    whose kind the flow leaves unknown)? Text made of one is made by JIT Fallback (measured,
    fresh v5 seed 11100046; written/gen18 probes `v23_fm_*`: `x + len('{:.3f}'.format(vals[1]))
    * 0.0` then `ops.gelu(x)` fails, "Unsupported op [DType]")."""
    if analyzer(ctx).kind(e, func).dynamic:
        return True
    if type(e) is ast.Name:
        # a comprehension's variable over such a list (`f'{v:.2f}' for v in vals`)
        p = ctx.parent(e)
        while p is not None and not isinstance(p, (ast.stmt, ast.Lambda)):
            for g in getattr(p, "generators", ()) if type(p) in (ast.ListComp, ast.GeneratorExp, ast.SetComp) else ():
                if type(g.target) is ast.Name and g.target.id == e.id:
                    if type(g.iter) is not ast.Name:
                        return False
                    from npu_lsp.rules.graphmode.python_call_on_tensor import list_of_variables

                    return list_of_variables(g.iter, ctx, func)
            p = ctx.parent(p)
        return False
    if type(e) is ast.Subscript and type(e.value) is ast.Name and type(e.slice) is not ast.Slice:
        from npu_lsp.rules.graphmode.python_call_on_tensor import list_of_variables

        return list_of_variables(e.value, ctx, func)
    return False


def _callee(call: ast.Call, ctx: Context, func: ast.AST) -> ast.AST | None:
    """The compiled function of this file `call` runs (a helper, a closure, an `@ms.jit`
    function, a `@jit_class` method, a sub-cell's `construct`)."""
    from npu_lsp.rules.graphmode.values import callees_by_call

    hit = callees_by_call(ctx).get(id(call))
    if hit:
        return hit[0]
    f = call.func
    if type(f) is not ast.Name:
        return None
    found = _defs(ctx).get(f.id)
    if found is None or ctx.scopes.scopes.get(id(found)) is None:
        return None
    return found


def _defs(ctx: Context) -> dict[str, ast.AST]:
    """Function definitions of the file by name, only names defined once."""
    key = "interpreted.defs"
    hit: dict[str, ast.AST] | None = ctx.cache.get(key)
    if hit is None:
        seen: dict[str, list[ast.AST]] = {}
        for n in ast.walk(ctx.tree):
            if type(n) in _FUNCS:
                seen.setdefault(n.name, []).append(n)  # type: ignore[attr-defined]
        hit = {k: v[0] for k, v in seen.items() if len(v) == 1}
        ctx.cache[key] = hit
    return hit


def _returns(func: ast.AST, ctx: Context, depth: int) -> bool:
    """Does every `return` of `func` give an interpreted value (cached; a cycle is False)?"""
    key = ("interpreted.returns", id(func), bool(ctx.cache.get(_RANK_QUERY)))
    hit = ctx.cache.get(key)
    if hit is not None:
        return bool(hit)
    ctx.cache[key] = False
    rets = [n for n in _own_statements(func) if type(n) is ast.Return and n.value is not None]
    ok = bool(rets) and all(interpreted(r.value, ctx, func, depth) for r in rets)  # type: ignore[arg-type]
    ctx.cache[key] = ok
    return ok


def _own_statements(func: ast.AST) -> list[ast.stmt]:
    out: list[ast.stmt] = []
    stack: list[ast.stmt] = list(getattr(func, "body", []))
    while stack:
        s = stack.pop()
        out.append(s)
        if type(s) in (*_FUNCS, ast.ClassDef):
            continue
        for field in ("body", "orelse", "finalbody"):
            stack.extend(getattr(s, field, []))
        for h in getattr(s, "handlers", []):
            stack.extend(h.body)
    return out


def _name(e: ast.Name, ctx: Context, func: ast.AST, depth: int) -> bool:
    """The value of the last assignment of `e.id` that always runs before the read, or of
    the parameter when no assignment comes first; or a name joined with None under a tensor
    condition (`_none_joined`)."""
    stmt = ctx.statement_of(e)
    return stmt is not None and (_before(e.id, stmt, ctx, func, depth) or _none_joined(e, ctx, func))


def _none_joined(e: ast.Name, ctx: Context, func: ast.AST) -> bool:
    """Is `e` bound to None and to a value, one of them under an `if` on a tensor
    (`none_join.none_joined`)? LAX joins the two into a Python object (`AbstractAny`), as it
    does a JIT Fallback result, and arithmetic with it stays one (measured, written/lax probes
    `fix32b_nj_*`: `aux = None; if x.sum() > 0: aux = x * 0.5`, then `if aux is not None: x =
    x + aux` (or `x = x if aux is None else x + aux`) and a comprehension over `x[0]` or
    `x.shape` fails, "The pointer[seq_abs] is null", in `construct`, a helper method or a
    closure; under `if x.ndim == 2:`, or with `aux` only tested, it compiles; fresh v5 seed
    11800006). Asked only of functions with a line binding None (a per-file line index)."""
    from npu_lsp.rules.graphmode.none_join import may_hold_none, none_joined

    return may_hold_none(func, ctx) and none_joined(e, func, ctx)


def _before(name: str, stmt: ast.stmt, ctx: Context, func: ast.AST, depth: int) -> bool:
    """Is `name` interpreted when `stmt` starts? A binding under a branch counts only when
    the value it replaces is interpreted too."""
    if depth > _DEPTH:
        return False
    last: ast.stmt | None = None
    for s in _own_statements(func):
        if s.lineno >= stmt.lineno or not _assigns(s, name):
            continue
        if _exclusive(s, stmt, ctx, func) or _dropped(s, ctx, func):
            continue  # never runs before `stmt`: the other side of an `if`, or folded away
        if last is None or s.lineno > last.lineno:
            last = s
    if _carried(name, stmt, ctx, func, depth):
        return True
    if last is None:
        return _param(name, ctx, func, depth)
    if type(last) is ast.For:
        # a loop variable: an item of what the loop runs over
        return interpreted(last.iter, ctx, func, depth + 1)
    if not interpreted(last.value, ctx, func, depth + 1):  # type: ignore[attr-defined]
        return False
    return (
        _always_runs(last, stmt, ctx, func)
        or _python_loop(last, ctx, func, depth)
        or _run_time_branch(last, stmt, ctx, func, depth)
        or _before(name, last, ctx, func, depth + 1)
    )


def _run_time_branch(s: ast.stmt, use: ast.stmt, ctx: Context, func: ast.AST, depth: int) -> bool:
    """Is `s` on a side of an `if` on a run-time (tensor) condition, its other enclosing
    blocks holding `use` or unrolled loops? MindSpore compiles both sides and joins the
    Python object with the graph tensor into a Python object, whichever side runs
    (measured, written/gen18 probes `fix29b_jn_*`: `if x.sum() > -1000: x = x *
    math.isfinite(x.sum())`, also with a condition false at run time, then a comprehension
    over `x.shape` fails as without the `if`; a graph value bound there compiles; fresh v5
    seed 11500096)."""
    holders = set()
    p = ctx.parent(use)
    while p is not None and p is not func:
        holders.add(id(p))
        p = ctx.parent(p)
    a = analyzer(ctx)
    branch = False
    child: ast.AST = s
    p = ctx.parent(s)
    while p is not None and p is not func:
        if id(p) in holders or _literal_range_loop(p):
            pass
        elif type(p) is ast.If and (a.kind(p.test, func).dynamic or _interpreted_test(p.test, ctx, func, depth)):
            branch = True
        elif not _kept_side(p, child, ctx, func):
            # (a side MindSpore keeps, `if x.shape[0] > 1:` of a 2-row input, always runs:
            # measured, written/lax probe `fix32b_nj_closure_shape_if_comp_for`)
            return False
        child, p = p, ctx.parent(p)
    return branch and p is func


def _interpreted_test(test: ast.expr, ctx: Context, func: ast.AST, depth: int) -> bool:
    """A test on a Python object LAX holds (`if aux is not None:` with `aux` joined with None
    under a tensor condition): decided at run time, so both sides are compiled and joined."""
    return type(test) is ast.Compare and interpreted(test, ctx, func, depth + 1)


def _carried(name: str, stmt: ast.stmt, ctx: Context, func: ast.AST, depth: int) -> bool:
    """Is `stmt` in a `for` over a literal `range` of two or more passes whose body, at or
    after `stmt`, always binds `name` to an interpreted value? MindSpore unrolls the loop,
    and from the second pass on `stmt` reads that value (measured, fresh v5 seed 11100106;
    written/gen18 probes `v23_jn_item_join_loop`, `v23_jn_item_sum_gen_loop`: a generator
    over `.item()`s of `x` fails in a loop that makes `x` a Python object, and compiles
    once)."""
    p = ctx.parent(stmt)
    while p is not None and p is not func:
        if type(p) is ast.For and (range_count(p.iter) or 0) >= 2:
            # the value a later statement assigns is judged without this loop's carry (a
            # cycle otherwise: `x = x + len(msg) * 0.0` reads the `x` it carries)
            guard = ("interpreted.carry", name, id(p))
            if ctx.cache.get(guard):
                return False
            ctx.cache[guard] = True
            try:
                for s in _own_statements(p):
                    if (
                        s.lineno >= stmt.lineno
                        and type(s) in (ast.Assign, ast.AugAssign)
                        and _assigns(s, name)
                        and _always_runs(s, stmt, ctx, p)
                        and interpreted(s.value, ctx, func, depth)  # type: ignore[attr-defined]
                    ):
                        return True
            finally:
                ctx.cache[guard] = False
        p = ctx.parent(p)
    return False


def _python_loop(s: ast.stmt, ctx: Context, func: ast.AST, depth: int) -> bool:
    """Is `s` in a `for` over interpreted values (`for i in range(int(s0) % 3)` with `s0 =
    x.max().asnumpy()`)? Python runs that loop, and what it binds stays interpreted after it
    (measured, fresh v5 seed 10200180 and written/famc probes `g17_an_loop_*`)."""
    p = ctx.parent(s)
    while p is not None and p is not func:
        if type(p) is ast.For and interpreted(p.iter, ctx, func, depth + 1):
            return True
        p = ctx.parent(p)
    return False


def _assigns(s: ast.stmt, name: str) -> bool:
    t = type(s)
    if t is ast.Assign:
        # `v, s = Out(x, 2.0)` too: an item of a Python object is one (measured, written/lax
        # probes `genfresh31_nt_*_unpack_dictcomp`, fresh v5 seed 11800183: a dict
        # comprehension over `enumerate(v * s)` fails, "make_dict evaluator key ... ValueAny")
        return any(
            (type(x) is ast.Name and x.id == name)
            or (type(x) in (ast.Tuple, ast.List) and any(type(i) is ast.Name and i.id == name for i in x.elts))
            for x in s.targets  # type: ignore[attr-defined]
        )
    if t in (ast.AugAssign, ast.AnnAssign):
        return type(s.target) is ast.Name and s.target.id == name  # type: ignore[attr-defined]
    if t is ast.For:
        return any(type(x) is ast.Name and x.id == name for x in ast.walk(s.target))  # type: ignore[attr-defined]
    return False


def _always_runs(s: ast.stmt, use: ast.stmt, ctx: Context, func: ast.AST) -> bool:
    """Does `s` run whenever `use` does: its enclosing blocks are `func`'s body, blocks
    holding `use`, or loops over a literal `range` (unrolled, run at least once)?"""
    holders = set()
    p = ctx.parent(use)
    while p is not None and p is not func:
        holders.add(id(p))
        p = ctx.parent(p)
    child: ast.AST = s
    p = ctx.parent(s)
    while p is not None and p is not func:
        if id(p) not in holders and not _literal_range_loop(p) and not _kept_side(p, child, ctx, func):
            return False
        child, p = p, ctx.parent(p)
    return p is func


def _kept_side(p: ast.AST, child: ast.AST, ctx: Context, func: ast.AST) -> bool:
    """Is `child` on the side of the `if` `p` that MindSpore keeps (`_folded_side`)? The
    other side is folded away, so a binding there always runs (measured, fresh v5 seeds
    10800045, 11600185: `if x.shape[0] > 1: x = functools.reduce(...)` then a comprehension
    over `x[0]` fails as without the `if`)."""
    return _folded_side(p, child, ctx, func) is True


def _folded_side(p: ast.AST, child: ast.AST, ctx: Context, func: ast.AST) -> bool | None:
    """For `child`, a statement of a side of the `if` `p` whose test is decided while
    compiling (`x.shape[0] > 1`, `x.ndim == 2` of an input): True when the shape analysis
    finds that side taken in every known call of `func`, False when never; None when not
    known (a run-time test, no known call, or calls that differ)."""
    if type(p) is not ast.If:
        return None
    test = p.test
    if analyzer(ctx).kind(test, func).dynamic:
        return None
    from npu_lsp.rules.graphmode.ranks import ranks

    got = ranks(ctx).value_at(test, func)
    if not got or any(type(v) is not bool for v in got) or len(set(got)) != 1:
        return None
    in_body = any(child is st for st in p.body)
    return got[0] is in_body


def _dropped(s: ast.stmt, ctx: Context, func: ast.AST) -> bool:
    """Is `s` on a side of an `if` that MindSpore folds away (`_folded_side` False)? Its
    binding never runs (measured, written/lax probes `fix30a_fk_*`: `x = x +
    Tensor(x.asnumpy())` under `if x.ndim == 3:` with a 2-D `x`, then a comprehension over
    `x[0]`, compiles)."""
    child: ast.AST = s
    p = ctx.parent(s)
    while p is not None and p is not func:
        if type(p) is ast.If and _folded_side(p, child, ctx, func) is False:
            return True
        child, p = p, ctx.parent(p)
    return False


def folded_away_binding(s: ast.stmt, ctx: Context, func: ast.AST) -> bool:
    """Is the binding `s` of `func` on a side of an `if` on shapes that MindSpore folds away
    in every known call (`_dropped`)? Asked only of a binding inside an `if`."""
    p = ctx.parent(s)
    return p is not None and p is not func and _dropped(s, ctx, func)


def _exclusive(s: ast.stmt, use: ast.stmt, ctx: Context, func: ast.AST) -> bool:
    """Are `s` and `use` on different sides of one `if` (`s` in its body, `use` in its
    `else`)? Then `s` never runs before `use` on the same pass."""
    sides: dict[int, bool] = {}
    child: ast.AST = use
    p = ctx.parent(use)
    while p is not None and p is not func:
        if type(p) is ast.If:
            sides[id(p)] = any(child is st for st in p.body)
        child, p = p, ctx.parent(p)
    child = s
    p = ctx.parent(s)
    while p is not None and p is not func:
        if type(p) is ast.If and id(p) in sides:
            return sides[id(p)] != any(child is st for st in p.body)
        child, p = p, ctx.parent(p)
    return False


def _literal_range_loop(n: ast.AST) -> bool:
    return type(n) is ast.For and range_count(n.iter) is not None


def _param(name: str, ctx: Context, func: ast.AST, depth: int) -> bool:
    """A parameter every call of `func` in compiled code of this file gives an interpreted
    value (positionally); False when some call passes something else or none is known."""
    from npu_lsp.rules.graphmode.values import compiled_callers

    if type(func) not in _FUNCS:
        return False
    params = [a.arg for a in (*func.args.posonlyargs, *func.args.args)]  # type: ignore[attr-defined]
    if name not in params:
        return False
    if ctx.cache.get(("interpreted.assumed", id(func))):
        return True  # asked by `_passes_through`: every parameter holds such a value
    scope = ctx.scopes.scopes.get(id(func))
    if scope is None:
        return False
    i = params.index(name)
    sites = compiled_callers(ctx, scope)
    if not sites:
        return False
    for call, caller in sites:
        j = i - (1 if params and params[0] == "self" else 0)
        if any(type(a) is ast.Starred for a in call.args) or not 0 <= j < len(call.args):
            return False
        if not interpreted(call.args[j], ctx, caller, depth + 1):
            return False
    return True


def joined_in_tensor_while(it: ast.expr, at: ast.AST, ctx: Context, func: ast.AST) -> bool:
    """Is `it` (a name, or an item, attribute or method result of one: `x[0]`) read where the
    innermost loop around `at` is a `while` with a tensor test that rebinds that name, each
    time by arithmetic (`x = x * 0.5`, `x = x + float(s)`, `x *= 2`)? MindSpore compiles such a
    loop as a graph loop whose header joins the name's entry value with the body's: read in
    the body it is the joined graph tensor, not the JIT Fallback value the loop was entered
    with (measured, written/lax probes `genfresh41_ab_*`: `[float(v) for v in x[0]]` in
    `while x.abs().max() > 1000:` compiles when the body rebinds `x = x * 0.5` or `x = x +
    heapq.nlargest(1, vals)[0]`, fails without the rebinding ("The pointer[seq_abs] is
    null"), in `for _ in range(2):` and in a counter `while k < 2:`; fresh v6 seed
    12001778)."""
    root = it
    while True:
        if isinstance(root, (ast.Subscript, ast.Attribute)):
            root = root.value
        elif isinstance(root, ast.Call) and isinstance(root.func, ast.Attribute):
            root = root.func.value
        else:
            break
    if type(root) is not ast.Name:
        return False
    loop = _innermost_loop(at, ctx, func)
    if type(loop) is not ast.While or not analyzer(ctx).kind(loop.test, func).dynamic:
        return False
    return rebound_by_arithmetic(root.id, loop, at_least_once=True)


def _innermost_loop(at: ast.AST, ctx: Context, func: ast.AST) -> ast.AST | None:
    """The `for` / `while` whose body holds `at` (not its iterable or test), inside `func`."""
    child, p = at, ctx.parent(at)
    while p is not None and p is not func and type(p) not in (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef):
        if (type(p) is ast.For and child is not p.iter and child is not p.target) or (
            type(p) is ast.While and child is not p.test
        ):
            return p
        child, p = p, ctx.parent(p)
    return None


def rebound_by_arithmetic(name: str, loop: ast.AST, at_least_once: bool = False) -> bool:
    """Is every binding of `name` in `loop` arithmetic (`x = x + float(s)`, `x *= 0.5`), and,
    with `at_least_once`, is there one? A tensor the body rebinds to a Python object's field
    (`x = o.value` of a namedtuple a helper builds) is no tensor after the loop: `x * 0.5` of
    it fails ("can't multiply sequence by non-int of type 'float'", fresh v6 seed 12001542)."""
    found = False
    for n in ast.walk(loop):
        if type(n) is ast.AugAssign and type(n.target) is ast.Name and n.target.id == name:
            found = True
            continue
        if type(n) is not ast.Assign:
            continue
        bound: set[str] = set()
        for t in n.targets:
            store_names(t, bound)
        if name not in bound:
            continue
        found = True
        if len(n.targets) != 1 or type(n.targets[0]) is not ast.Name or not isinstance(n.value, ast.BinOp):
            return False
    return found or not at_least_once

