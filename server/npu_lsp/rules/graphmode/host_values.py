"""Host values: Python data compiled code makes from a run-time tensor.

Under LAX, MindSpore 2.10 runs `x.asnumpy()`, `x.tolist()`, numpy steps on them and the Python
containers built from them (`sorted(...)`, `collections.Counter(...)`, `d.items()`) by JIT
Fallback (PyExecute): the graph knows such a value only at run time (`ValueAny`, or a sequence
of dynamic length). `int(t)`, `float(t)` and `t.item()` give a graph scalar whose value is
unknown while compiling as well. The rules of the family ask these questions here:

- `host_iterable(e)`: `e` iterates host data of a run-time tensor (lists, arrays, dicts, their
  views), whatever its length;
- `host_scalar(e)`: `e` is a Python number read from a run-time tensor;
- `host_names(comp)`: the names a comprehension binds to items of host data.

Measured uses (written/heldout14b probes `hv_*`): a dict key that is a host value fails at
both levels (`make_dict` / `dict_getitem` / `dict_setitem evaluator key only supports ...`);
a generator over host data fails under LAX when joined, summed or collected; see the rules
that use these answers for the rest.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence

from npu_lsp.astutil import COMPREHENSIONS
from npu_lsp.engine import Context
from npu_lsp.rules.graphmode.flow import AUGMENTED, Kind, analyzer
from npu_lsp.rules.graphmode.helpers import store_lines

#: tensor methods whose result is host data JIT Fallback computes at run time
HOST_METHODS = frozenset({"asnumpy", "tolist", "numpy"})
#: builtins that keep a host iterable a host iterable
WRAPPERS = frozenset({"set", "sorted", "list", "tuple", "enumerate", "reversed", "zip", "frozenset", "dict"})
#: numpy / list / dict methods chained on a host value (`x.asnumpy().flatten().tolist()`,
#: `counts.items()`)
CHAINED = frozenset(
    {"flatten", "ravel", "reshape", "tolist", "astype", "squeeze", "copy", "transpose", "T", "items", "keys", "values"}
)
#: numpy methods that give an array or a list again when chained on an indexed host array
_ARRAY_METHODS = frozenset({"flatten", "ravel", "reshape", "tolist", "astype", "squeeze", "copy", "transpose"})
#: `collections` containers built from an iterable (`Counter(ids.tolist())`), and `random`
#: draws from one (`random.sample(ids.tolist(), 3)`: measured, written/heldout15b probes
#: `ls_rnd_sample_tolist_*`, `ls_rnd_sample_range_len_host`, a list filled in a `for` over
#: it is empty under LAX)
_COLLECTIONS = frozenset(
    {"collections.Counter", "collections.OrderedDict", "collections.deque", "random.sample", "random.choices"}
)


def host_iterable(e: ast.expr, ctx: Context, depth: int = 0) -> bool:
    """`e` iterates host data of a run-time tensor: `t.tolist()`, `t.asnumpy()` (and numpy or
    dict steps chained on them, slices of them), builtins and `collections` containers wrapping one, a name
    bound once to one, `range(len(<host data>))`; at depth 0 also `reversed(...)` of a
    non-literal `range` or of graph values, which LAX runs the same way."""
    if depth > 8:
        return False
    if isinstance(e, ast.Name):
        bound = analyzer(ctx).single_assignment(e.id, ctx.function)
        return bound is not None and host_iterable(bound, ctx, depth + 1)
    if isinstance(e, ast.Subscript) and isinstance(e.slice, ast.Slice):
        return host_iterable(e.value, ctx, depth + 1)  # `sorted(vals)[:k]`: a slice of host data
    if not isinstance(e, ast.Call):
        return False
    f = e.func
    if isinstance(f, ast.Attribute):
        if f.attr in HOST_METHODS and not e.args and analyzer(ctx).kind(f.value) == Kind.TENSOR:
            return True
        if f.attr in CHAINED or f.attr in HOST_METHODS:
            base = f.value
            if type(base) is ast.Subscript and f.attr in _ARRAY_METHODS:
                # `x.asnumpy()[1].tolist()`: a row of a host array is a host array (measured,
                # written/gen18 probes `cg_idx_*`)
                base = base.value
            return host_iterable(base, ctx, depth + 1)
        if ctx.qualname(f) in _COLLECTIONS and e.args:
            return host_iterable(e.args[0], ctx, depth + 1)
        return False
    if isinstance(f, ast.Name) and e.args:
        q = ctx.qualname(f) or ""
        if q == "builtins.reversed" and depth == 0:
            # LAX runs `reversed` of a `range` (even a constant one) or of graph values by JIT
            # Fallback (measured: `for t in reversed(range(x.shape[0]))` and `for h in
            # reversed(hs)` over a list of tensors add nothing to a list); of a constant
            # list or tuple (`reversed(self.scales)`) it is folded and compiles, and so is
            # `reversed(range(4))` of literal ints (written/algorithms probes `rev_range_*`:
            # `reversed(range(4))` compiles indexing a tensor or a list of tensors,
            # `reversed(range(x.shape[0]))` over the same list fails). MindSpore folds the
            # interpreted `reversed(range(...))` while compiling when its bounds are Python
            # ints: literals, names and `self` attributes bound to them, `len` of a list or
            # tuple given as an input, arithmetic on these (written/heldout18b probes `rvc_*`)
            arg = e.args[0]
            if isinstance(arg, ast.Call) and ctx.qualname(arg.func) == "builtins.range":
                return not all(folded_int(b, ctx) for b in arg.args)
            return analyzer(ctx).kind(arg).dynamic
        if q[9:] in WRAPPERS and q.startswith("builtins."):
            return any(host_iterable(a, ctx, depth + 1) or numpy_of_host(a, ctx) for a in e.args)
        if q in _COLLECTIONS:
            return host_iterable(e.args[0], ctx, depth + 1)
        if q == "builtins.range" and len(e.args) <= 3 and not e.keywords:
            bounds = [host_len_bound(a, ctx, depth + 1) for a in e.args]
            return any(b is not None for b in bounds) and all(
                b is not None or literal_int(a) for a, b in zip(e.args, bounds, strict=True)
            )
    return False


def host_len_bound(e: ast.expr, ctx: Context, depth: int = 0) -> ast.expr | None:
    """The host data whose `len` the bound `e` is, give or take a literal int: `len(a)`,
    `len(a) - 1`, `len(a) + 1`, `1 + len(a)` with `a` host data (`a = t[0].tolist()`).
    Under LAX the `len` of a JIT Fallback value is itself interpreted, and a `range` over
    it is run by JIT Fallback like the data: a comprehension over `range(len(a) - 1)` or
    `range(len(a) + 1)` fails as one over `a` does (measured, written/heldout21a probes
    `hc22_comp_range_host_len`, `hc22_dp_table_host_len`: "unsupported operand type(s) for
    +: 'int' and 'list'", "Expected SequenceShape for SetShape, but got: TensorShape"),
    while a `for` accumulating over it and `[0] * (len(a) + 1)` compile."""
    if isinstance(e, ast.BinOp) and isinstance(e.op, (ast.Add, ast.Sub)):
        if literal_int(e.right):
            return host_len_bound(e.left, ctx, depth + 1)
        if isinstance(e.op, ast.Add) and literal_int(e.left):
            return host_len_bound(e.right, ctx, depth + 1)
        return None
    if (
        isinstance(e, ast.Call)
        and isinstance(e.func, ast.Name)
        and e.func.id == "len"
        and len(e.args) == 1
        and not e.keywords
        and ctx.qualname(e.func) == "builtins.len"
        and host_iterable(e.args[0], ctx, depth + 1)
    ):
        return e.args[0]
    return None


def numpy_of_host(e: ast.expr, ctx: Context) -> bool:
    """A numpy method chained on a tensor's host array (`x.asnumpy().max(axis=0)`): what a
    builtin container (`list(...)`) makes of it is host data (measured, fresh v5 seeds
    10000034, 10600104: `list(x.asnumpy().max(axis=0))` grown by `append`, then `len`,
    "'NoneType' object has no attribute '__len__'"; 10500015, 10800142: `', '.join(f'{v:.2f}'
    for v in vals)` over it, "For Tensor, the input_data is ('7.524561',) that contain
    unsupported element")."""
    while isinstance(e, ast.Call) and isinstance(e.func, ast.Attribute):
        if e.func.attr in ("asnumpy", "numpy") and not e.args:
            return analyzer(ctx).kind(e.func.value) == Kind.TENSOR
        e = e.func.value
    return False


def host_data(e: ast.expr, ctx: Context) -> bool:
    """`host_iterable` without the `reversed(range(...))` case: data made from a tensor."""
    return host_iterable(e, ctx, 1)


def host_scalar(e: ast.expr, ctx: Context) -> bool:
    """`int(t)`, `float(t)`, `t.item()` of a run-time tensor (or a name bound once to one):
    a graph scalar whose value is unknown while compiling. A loop variable over `t.tolist()`
    is not one (LAX runs such a `for` in Python)."""
    if isinstance(e, ast.Name):
        bound = analyzer(ctx).single_assignment(e.id, ctx.function)
        if bound is None:
            return False
        e = bound
    if not isinstance(e, ast.Call) or len(e.args) + len(e.keywords) > 1 or analyzer(ctx).kind(e) != Kind.VAR:
        return False
    f = e.func
    if isinstance(f, ast.Name):
        return f.id in ("int", "float") and len(e.args) == 1
    return isinstance(f, ast.Attribute) and f.attr == "item" and not e.args


def host_names(comp: ast.DictComp | ast.ListComp | ast.SetComp | ast.GeneratorExp, ctx: Context) -> set[str]:
    """The names `comp`'s generators bind while iterating host data (`k, v` in `for k, v in
    counts.items()` with `counts = Counter(t.tolist())`). An `enumerate` index counts too
    (measured, written/heldout14b probe `hv_dict_comp_enum_key_const`: `{NAMES[i]: v for i,
    v in enumerate(t.tolist())}` fails with `make_dict evaluator key ... ValueAny`)."""
    out: set[str] = set()
    for gen in comp.generators:
        if host_data(gen.iter, ctx):
            out.update(n.id for n in ast.walk(gen.target) if isinstance(n, ast.Name))
    return out


def host_item(e: ast.expr, ctx: Context) -> bool:
    """An item of host data (`ids[0]` with `ids = t.tolist()`) or a host scalar."""
    if host_scalar(e, ctx):
        return True
    return isinstance(e, ast.Subscript) and not isinstance(e.slice, ast.Slice) and host_data(e.value, ctx)


def host_loop_target(e: ast.expr, ctx: Context) -> ast.For | None:
    """The enclosing `for` of the compiled function whose target binds the name `e` while
    iterating host data of a run-time tensor (`for k in t.tolist()`, `for a, b in
    zip(t.tolist(), ...)`), when the function binds that name nowhere else. LAX runs such a
    loop by JIT Fallback: `k` is a Python value the graph knows only at run time."""
    if type(e) is not ast.Name or ctx.function is None:
        return None
    p = ctx.parent(e)
    while p is not None and p is not ctx.function:
        if type(p) is ast.For and any(type(n) is ast.Name and n.id == e.id for n in ast.walk(p.target)):
            if host_iterable(p.iter, ctx, 0) and len(store_lines(ctx.function, ctx).get(e.id, ())) == 1:
                return p
            return None
        p = ctx.parent(p)
    return None


def scalar_list_item(e: ast.expr, ctx: Context) -> ast.expr | None:
    """The list `e` is an item of (`losses[0]`, or the variable of a `for` / comprehension
    over `losses`), when that list holds only numbers read from run-time tensors (see
    `runtime_scalar_list`)."""
    if type(e) is ast.Subscript:
        if type(e.slice) is not ast.Slice and runtime_scalar_list(e.value, ctx):
            return e.value
        return None
    if type(e) is not ast.Name or ctx.function is None:
        return None
    p = ctx.parent(e)
    while p is not None and p is not ctx.function:
        gens = [p] if type(p) is ast.For else getattr(p, "generators", None) if isinstance(p, COMPREHENSIONS) else None
        for g in gens or ():
            if type(g.target) is ast.Name and g.target.id == e.id:
                return g.iter if runtime_scalar_list(g.iter, ctx) else None
        p = ctx.parent(p)
    return None


def runtime_scalar_list(e: ast.expr, ctx: Context) -> bool:
    """A local list that holds only numbers read from run-time tensors (`float(t)`, `int(t)`,
    `t.item()`, not through host data): bound once, to a display of them or to `[]` grown
    only by `append` of them."""
    if type(e) is not ast.Name or ctx.function is None:
        return False
    key = ("runtime-scalar-list", id(ctx.function), e.id)
    hit = ctx.cache.get(key)
    if hit is None:
        hit = ctx.cache[key] = _runtime_scalar_list(e.id, ctx)
    return bool(hit)


def _runtime_scalar_list(name: str, ctx: Context) -> bool:
    bound = analyzer(ctx).single_assignment(name, ctx.function)
    if type(bound) in (ast.List, ast.Tuple) and bound.elts:  # type: ignore[union-attr]
        items = list(bound.elts)  # type: ignore[union-attr]
    elif type(bound) is ast.List and not bound.elts:
        items = []
        for c in analyzer(ctx).changes(name, ctx.function):
            if c.how == AUGMENTED:
                continue  # a rebinding: `single_assignment` has answered for this body
            if c.how != "append" or len(c.args) != 1:
                return False  # extended, inserted...: not followed
            items.append(c.args[0])
    elif type(bound) is ast.ListComp and not any(
        type(n) is ast.Attribute and n.attr in HOST_METHODS for n in ast.walk(bound)
    ):
        # `[x[0, j].item() for j in range(3)]`, `[float(x[0, j]) for j in range(n)]`: a list
        # comprehension the graph builds of run-time scalars (measured, written/gen18 probes
        # `cg_item_comp_*`, `cg_float_comp_counter`: `round` of its items fails at both levels
        # with "For Operator[Round], input's type 'Float32' does not match expected type
        # 'Tensor'"; over `x.shape` it compiles, `sum` of its items compiles)
        items = [bound.elt]
    else:
        return False
    return bool(items) and all(_read_scalar(v, ctx) for v in items)


def _read_scalar(v: ast.expr, ctx: Context) -> bool:
    """`float(t)`, `int(t)`, `t.item()` of a run-time tensor, not computed from host data
    (LAX runs `round(float(x.asnumpy()))` in Python)."""
    return host_scalar(v, ctx) and not any(
        type(n) is ast.Attribute and n.attr in HOST_METHODS for n in ast.walk(v)
    )


def reads(e: ast.AST, names: set[str]) -> bool:
    return bool(names) and any(isinstance(n, ast.Name) and n.id in names for n in ast.walk(e))


def folded_int(e: ast.expr, ctx: Context, depth: int = 0) -> bool:
    """A Python int MindSpore 2.10 knows while compiling, so that an interpreted
    `reversed(range(e))` is folded into a constant: `4`, a name bound once to one (locally
    or at module level), `self.n` set to one in `__init__`, `len(xs)` of a list or tuple
    given as an input, and `+ - * //` of these. Measured (written/heldout18b probes `rvc_*`):
    a list grown in a `for` over `reversed(range(...))` of each of these is full after the
    loop at both levels; over `reversed(range(x.shape[0]))` or `range(len(x))` of a tensor it
    is empty under LAX; `len(self.cells)` of a `CellList` or `len(hs)` of a local list of
    tensors are not constants under STRICT (and crash MindSpore under LAX): not folded here."""
    if depth > 6:
        return False
    if literal_int(e):
        return True
    if isinstance(e, ast.BinOp) and isinstance(e.op, (ast.Add, ast.Sub, ast.Mult, ast.FloorDiv)):
        return folded_int(e.left, ctx, depth + 1) and folded_int(e.right, ctx, depth + 1)
    if isinstance(e, ast.Name):
        if e.id in _param_names(ctx):
            return analyzer(ctx).int_input(e.id, ctx.function)
        an = analyzer(ctx)
        bound = an.single_assignment(e.id, ctx.function)
        if bound is not None:
            return folded_int(bound, ctx, depth + 1) or _graph_int(bound, ctx, depth + 1)
        if _single_shape_unpacking(e.id, ctx):
            return True
        if an.first_binding_line(e.id, ctx.function) is not None:
            return False  # bound locally more than once, or as a parameter / loop variable
        return _module_int(e.id, ctx)
    if isinstance(e, ast.Attribute) and isinstance(e.value, ast.Name) and e.value.id == "self":
        an = analyzer(ctx)
        cls = an.owner_class(ctx.function)
        if cls is None:
            return False
        values = an.self_values(cls).get(e.attr, ())
        if values and all(v is not None and literal_int(v) for v in values):
            return True
        return bool(values) and _constant_attr(e, values, ctx)
    if (
        isinstance(e, ast.Call)
        and len(e.args) == 1
        and not e.keywords
        and isinstance(e.args[0], ast.Name)
        and ctx.qualname(e.func) == "builtins.len"
    ):
        return _input_sequence(e.args[0].id, ctx)
    return False


def _constant_attr(e: ast.Attribute, values: Sequence[ast.expr | None], ctx: Context) -> bool:
    """`self.n` set only in `__init__` (`self.horizon = horizon`, `cfg["horizon"]`,
    `arr.shape[0]` of a numpy array, even `ms.Tensor(5, ms.int32)`), never to a `Parameter`:
    MindSpore reads the attribute from the object when it compiles, a constant, and folds
    `reversed(range(self.n))` (measured under LAX and STRICT, written/heldout33c
    `nstep_returns_reversed_loop_clean` and probes `fix33f_rv_self_*`: the list grown in the
    loop is full afterwards). A `Parameter` or an attribute `construct` stores may change at
    run time: not folded here (not measured)."""
    from npu_lsp.rules.graphmode.values import instances

    if any(v is None or _parameter_call(v, ctx) for v in values):
        return False
    stores = instances(ctx).attr_stores(e.attr)
    if stores is None:
        return False
    return all(_in_init(st, ctx) for st in stores)


def _parameter_call(v: ast.expr, ctx: Context) -> bool:
    return isinstance(v, ast.Call) and (ctx.qualname(v.func) or "").endswith("Parameter")


def _in_init(node: ast.AST, ctx: Context) -> bool:
    up = ctx.parent(node)
    while up is not None and not isinstance(up, (ast.FunctionDef, ast.AsyncFunctionDef)):
        up = ctx.parent(up)
    return isinstance(up, ast.FunctionDef) and up.name == "__init__"


def _graph_int(e: ast.expr, ctx: Context, depth: int) -> bool:
    """An int the graph knows while compiling, once a local name holds it: `x.shape[0]`,
    `x.ndim`, `len(x)` of a tensor or a list (even a local list of tensors), and `+ - * //`
    of these and of folded ints. MindSpore hands the interpreted `reversed(range(n))` the
    name's value, a constant, and folds it; written inline (`range(x.shape[0])`, `range(len(hs))`)
    the call's inputs are the tensor or list themselves, which are not, and LAX runs it at run
    time. Measured (written/heldout22a `gae_reversed_loop_insert`, probes `rv22_*`): with
    `T = rewards.shape[0]`, `T = len(rewards)`, `T = h.shape[0]` of a computed tensor,
    `T = len(hs)` of a local list of tensors, `T = rewards.shape[0] - 1`, `T, = x.shape`, a
    list grown over `reversed(range(T))` (or `range(1, T)`) is full after the loop."""
    if depth > 6:
        return False
    if isinstance(e, ast.BinOp) and isinstance(e.op, (ast.Add, ast.Sub, ast.Mult, ast.FloorDiv)):
        return all(folded_int(s, ctx, depth + 1) or _graph_int(s, ctx, depth + 1) for s in (e.left, e.right))
    if isinstance(e, ast.Subscript) and isinstance(e.value, ast.Attribute) and e.value.attr == "shape":
        return literal_int(e.slice)
    if isinstance(e, ast.Attribute) and e.attr == "ndim":
        return True
    return (
        isinstance(e, ast.Call)
        and len(e.args) == 1
        and not e.keywords
        and ctx.qualname(e.func) == "builtins.len"
    )


def _single_shape_unpacking(name: str, ctx: Context) -> bool:
    """`name` is bound once, by unpacking a shape (`B, T = x.shape`, `T, = x.shape[:1]`)."""
    an = analyzer(ctx)
    binds = an.bindings_of(name, ctx.function)
    if len(binds) != 1 or name in _param_names(ctx):
        return False
    value = binds[0][1]
    if isinstance(value, tuple):
        value = value[0]
    if isinstance(value, ast.Subscript) and isinstance(value.slice, ast.Slice):
        value = value.value
    return isinstance(value, ast.Attribute) and value.attr == "shape"


def _module_int(name: str, ctx: Context) -> bool:
    """`name` is bound once at module level, to an int literal (`T = 4`)."""
    values = [
        st.value
        for st in ctx.tree.body
        if isinstance(st, (ast.Assign, ast.AnnAssign, ast.AugAssign))
        and any(isinstance(t, ast.Name) and t.id == name for t in (st.targets if isinstance(st, ast.Assign) else [st.target]))
    ]
    return len(values) == 1 and values[0] is not None and literal_int(values[0])


def _input_sequence(name: str, ctx: Context) -> bool:
    """`name` is an input of the compiled function (never rebound) that every call passes a
    list or tuple (`net(rews)` with `rews = [Tensor(...) for _ in range(T)]`)."""
    return analyzer(ctx).sequence_input(name, ctx.function)


def _param_names(ctx: Context) -> set[str]:
    args = getattr(ctx.function, "args", None)
    if args is None:
        return set()
    return {a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)}


def literal_int(e: ast.expr) -> bool:
    """`4` or `-1` written in the source."""
    if isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.USub):
        e = e.operand
    return isinstance(e, ast.Constant) and type(e.value) is int


def runs_only_if_reached(comp: ast.ListComp | ast.GeneratorExp, ctx: Context, func: ast.AST | None = None) -> bool:
    """Is `comp` run as Python by JIT Fallback, so that under LAX it fails only when it runs,
    and is it under a test MindSpore decides only at run time?

    Run as Python: its result (maybe as the element of an outer comprehension) goes straight
    into the tensor constructor (`ms.Tensor([[v * 2 for v in row] for row in x.tolist()])`)
    or into a function neither MindSpore nor a builtin (`collections.Counter(round(v) for v
    in vals)`). Measured (written/lax probes `genfresh38_wt_*`, `genfresh38_rt_*`; fresh v6
    seeds 12001319, 12001340): such a comprehension over host data is rejected at run time
    ("unsupported operand type(s) for +: 'float' and 'list'"), in a loop or not, and compiles
    and runs when it sits under an `if` or a `while` on a tensor whose body never runs; the
    same comprehension given to `ops.stack` fails while compiling ("The pointer[abs_base] is
    null") even there, so it is not one of these."""
    node: ast.AST = comp
    up = ctx.parent(node)
    while isinstance(up, (ast.ListComp, ast.GeneratorExp)) and node is up.elt:
        node, up = up, ctx.parent(up)
    if not isinstance(up, ast.Call) or node not in up.args:
        return False
    name = ctx.qualname(up.func) or ""
    tensor = name.startswith("mindspore") and name.rsplit(".", 1)[-1] == "Tensor"
    if not tensor and (not name or name.startswith(("mindspore", "builtins"))):
        return False
    return under_runtime_test(comp, ctx, func)


def under_runtime_test(node: ast.AST, ctx: Context, func: ast.AST | None = None) -> bool:
    """Is `node` in the body of an `if` / `while` (or a side of a conditional expression) of
    `func` (default: the function being checked) whose test is a run-time value (a tensor, `t.item()`), which
    MindSpore neither folds nor unrolls: whether the body runs is known only at run time."""
    func = func if func is not None else ctx.function
    flow = analyzer(ctx)
    child: ast.AST = node
    up = ctx.parent(node)
    while up is not None and up is not func:
        if isinstance(up, (ast.If, ast.While, ast.IfExp)) and child is not up.test and flow.kind(up.test, func).dynamic:
            return True
        child, up = up, ctx.parent(up)
    return False
