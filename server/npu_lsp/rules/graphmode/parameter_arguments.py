"""The Python number a compiled entry's parameter holds when every call in the file gives it
one: `def f(loss, best=1e9)` called as `f(t)` (the default), or `f(t, 1.0)`.

MindSpore 2.10 keeps a Python int/float argument of a jit function or of `construct` as a
constant scalar of the graph, so `if loss < best: best = loss` joins a tensor with a scalar
and fails (`Cannot join the return values of different branches`), as it does for a local
`best = 1e9`; a tensor passed for the same parameter compiles (measured:
fixtures/written/functional/probes, `join_*`).
"""

from __future__ import annotations

import ast

from npu_lsp.engine import Context
from npu_lsp.rules.graphmode.flow import python_number
from npu_lsp.scope import SiteReads


def python_number_argument(fn: ast.AST, name: str, ctx: Context) -> ast.expr | None:
    """The number (an expression) parameter `name` of `fn` gets at every call of `fn` found in
    the file, or None when a call gives something else, is not understood, or none is found."""
    given = arguments_at_calls(fn, name, ctx)
    if not given or not all(python_number(v, _constant_conversion) for v in given):
        return None
    return given[0]


def number_or_tuple_argument(fn: ast.AST, name: str, ctx: Context) -> ast.expr | None:
    """`python_number_argument`, else `tuple_argument`, from one look at the calls."""
    given = arguments_at_calls(fn, name, ctx)
    if not given:
        return None
    if all(python_number(v, _constant_conversion) for v in given):
        return given[0]
    return _tuple_given(given, ctx)


def tuple_argument(fn: ast.AST, name: str, ctx: Context) -> ast.expr | None:
    """The tuple (a display or a `tuple(...)` call, also through a module-level name bound
    once to one) parameter `name` of `fn` gets at every call of `fn` in the file, or None.
    MindSpore 2.10 keeps a tuple argument a tuple in the graph: a list bound to the
    parameter under a tensor `if` then fails to join it ("AbstractList cannot join with
    AbstractTuple", written/heldout29a cases `clip_manual_global_norm_sum_loop`,
    `r2_clip_if_branch_list_with_else_tuple`, probes `fix29c_join_*`)."""
    given = arguments_at_calls(fn, name, ctx)
    return _tuple_given(given, ctx) if given else None


def _tuple_given(given: list[ast.expr], ctx: Context, forwarded: bool = False) -> ast.expr | None:
    found: list[ast.expr] = []
    for arg in given:
        v = only_module_binding(arg.id, ctx) if isinstance(arg, ast.Name) else arg
        if v is None and isinstance(arg, ast.Name) and not forwarded:
            v = _forwarded_tuple(arg, ctx)
        is_tuple = isinstance(v, ast.Tuple) or (
            isinstance(v, ast.Call) and isinstance(v.func, ast.Name) and v.func.id == "tuple" and len(v.args) == 1
        )
        if not is_tuple or v is None:
            return None
        found.append(v)
    return found[0]


def _forwarded_tuple(arg: ast.Name, ctx: Context) -> ast.expr | None:
    """The tuple a call's argument holds when it is the gradients parameter of an
    `nn.Optimizer` subclass's `construct`, passed on as it came: `clip(gradients, 1.0)` in
    a `construct` every module-level call gives a tuple. There MindSpore keeps the tuple a
    tuple through the helper too, and a list bound to the helper's parameter under a tensor
    `if` fails to join it (written/heldout36d case `clip_torch_style_sum_list_norms`, probes
    `fix36d_jn2_case_*`, six variants). The same helper called from a plain Cell's
    `construct` or a jit function with a module-level tuple of tensors compiles (probes
    `fix36d_jn_construct_param_tuple_listcomp`, `fix36d_jn_jit_param_tuple_listcomp`,
    `fix36d_jn2_case_plain_cell`), so no other caller is followed. One step only; a
    parameter rebound anywhere in the caller (or the call in a loop) is left alone."""
    caller = _enclosing_function(arg, ctx)
    if caller is None or arg.id not in {a.arg for a in (*caller.args.posonlyargs, *caller.args.args)}:
        return None
    if not _optimizer_construct(caller, ctx):
        return None
    statement = ctx.statement_of(arg)
    if statement is None or statement is caller or any(
        type(p) in (ast.For, ast.While) for p in ctx.ancestors(statement, caller)
    ):
        return None  # in a loop, the call's own rebinding would feed the next turn
    own = {id(m) for m in ast.walk(statement)}
    for n in ast.walk(caller):
        if type(n) is ast.Name and n.id == arg.id and type(n.ctx) is ast.Store and id(n) not in own:
            return None  # rebound elsewhere in the caller: not what the calls gave
    given = arguments_at_calls(caller, arg.id, ctx)
    return _tuple_given(given, ctx, forwarded=True) if given else None


def forwarded_gradients(fn: ast.AST, name: str, ctx: Context) -> bool:
    """Does every call of `fn` give parameter `name` the gradients an `nn.Optimizer`
    subclass's `construct` received (`_forwarded_tuple`)? There the tuple is a graph variable:
    even a list MindSpore would fold from a constant tuple (`[g * 0.5 for g in grads]`) fails
    to join it (measured, written/heldout36d probe `fix36d_jn3_opt_folded_list`)."""
    given = arguments_at_calls(fn, name, ctx)
    return bool(given) and all(
        isinstance(arg, ast.Name) and only_module_binding(arg.id, ctx) is None and _forwarded_tuple(arg, ctx) is not None
        for arg in given or ()
    )


def _optimizer_construct(fn: ast.FunctionDef, ctx: Context) -> bool:
    """Is `fn` the `construct` of a module-level subclass of `mindspore.nn.Optimizer`?"""
    owner = ctx.parent(fn)
    if fn.name != "construct" or type(owner) is not ast.ClassDef or ctx.parent(owner) is not ctx.tree:
        return False
    return any(ctx.qualname(b) == "mindspore.nn.Optimizer" for b in owner.bases)


def _enclosing_function(node: ast.AST, ctx: Context) -> ast.FunctionDef | None:
    """The `def` directly around `node` (None inside a lambda or an `async def`)."""
    fn = ctx.enclosing_function(node)
    return fn if type(fn) is ast.FunctionDef else None


def only_module_binding(name: str, ctx: Context) -> ast.expr | None:
    """The value of the only module-level `name = value` of the file, or None."""
    bound = [
        st.value
        for st in ctx.tree.body
        if isinstance(st, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in st.targets)
    ]
    return bound[0] if len(bound) == 1 else None


def arguments_at_calls(fn: ast.AST, name: str, ctx: Context) -> list[ast.expr] | None:
    """What parameter `name` of `fn` gets at each call of `fn` found in the file (the
    default where a call leaves it out), or None when a call is not understood."""
    if type(fn) is not ast.FunctionDef:
        return None
    calls, skip = _calls_of(fn, ctx)
    if not calls:
        return None
    args = [*fn.args.posonlyargs, *fn.args.args]
    names = [a.arg for a in args][skip:]
    if name not in names:
        return None  # keyword-only or *args: left alone
    index = names.index(name)
    defaults = dict(zip([a.arg for a in args[len(args) - len(fn.args.defaults) :]], fn.args.defaults, strict=True))
    found: list[ast.expr] = []
    for call in calls:
        if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
            return None
        if index < len(call.args):
            value: ast.expr | None = call.args[index]
        else:
            value = next((k.value for k in call.keywords if k.arg == name), defaults.get(name))
        if value is None:
            return None
        found.append(value)
    return found


def _constant_conversion(e: ast.expr) -> bool:
    """`float("inf")` / `int(2)`: a number known while compiling (`float(t)` of a tensor, in
    a compiled caller, is not)."""
    return (
        isinstance(e, ast.Call)
        and isinstance(e.func, ast.Name)
        and e.func.id in ("float", "int")
        and len(e.args) == 1
        and not e.keywords
        and isinstance(e.args[0], ast.Constant)
    )


def _calls_of(fn: ast.FunctionDef, ctx: Context) -> tuple[list[ast.Call], int]:
    """Calls of a module-level function `fn` by its name, or of instances of the module-level
    class whose `construct` `fn` is (`Net()(x)`, `net = Net()` then `net(x)`); and how many
    leading parameters the calls do not pass (`self`)."""
    if SiteReads.seen is not None:  # the language server's incremental path
        SiteReads.note(fn.name)
    owner = ctx.parent(fn)
    if owner is ctx.tree:
        return [c for _, c in _index(ctx)[0].get(fn.name, [])], 0
    if type(owner) is not ast.ClassDef or ctx.parent(owner) is not ctx.tree or fn.name != "construct":
        return [], 1  # decided before the file is indexed: most methods end here
    calls_by_name, loads_by_name = _index(ctx)
    cls = owner
    instances = _instances(ctx).get(cls.name, set())
    # `Net()(x)` (a call whose callee builds the class) or `net(x)`, in the file's walk order
    found = [
        (order, n)
        for _, built in calls_by_name.get(cls.name, [])
        if (n := _parent_call(built, ctx)) is not None and (order := _order_of(n, ctx)) is not None
    ]
    found += [pair for name in instances for pair in calls_by_name.get(name, [])]
    calls = [c for _, c in sorted(found, key=lambda pair: pair[0])]
    # an instance that escapes (passed on, stored elsewhere) may be called where we do not see
    callees = {id(c.func) for c in calls}
    if any(id(n) not in callees for name in instances for n in loads_by_name.get(name, [])):
        return [], 1
    return calls, 1


_INDEX_KEY = "parameter_arguments.index"


def _index(ctx: Context) -> tuple[dict[str, list[tuple[int, ast.Call]]], dict[str, list[ast.Name]]]:
    """Calls of a plain name (with their place in the file's walk order) and loads of every
    name, once per file: one query per parameter would otherwise walk the file each time."""
    hit = ctx.cache.get(_INDEX_KEY)
    if hit is None:
        calls: dict[str, list[tuple[int, ast.Call]]] = {}
        loads: dict[str, list[ast.Name]] = {}
        order: dict[int, int] = {}
        for i, n in enumerate(ast.walk(ctx.tree)):
            if isinstance(n, ast.Call):
                order[id(n)] = i
                if isinstance(n.func, ast.Name):
                    calls.setdefault(n.func.id, []).append((i, n))
            elif isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load):
                loads.setdefault(n.id, []).append(n)
        hit = ctx.cache[_INDEX_KEY] = (calls, loads)
        ctx.cache[_ORDER_KEY] = order
    return hit


_ORDER_KEY = "parameter_arguments.order"
_INSTANCES_KEY = "parameter_arguments.instances"


def _instances(ctx: Context) -> dict[str, set[str]]:
    """Module-level names bound to an instance of a class, by class name (`net = Net()`)."""
    hit: dict[str, set[str]] | None = ctx.cache.get(_INSTANCES_KEY)
    if hit is None:
        hit = {}
        for st in ctx.tree.body:
            if (
                isinstance(st, ast.Assign)
                and len(st.targets) == 1
                and isinstance(target := st.targets[0], ast.Name)
                and isinstance(st.value, ast.Call)
                and isinstance(st.value.func, ast.Name)
            ):
                hit.setdefault(st.value.func.id, set()).add(target.id)
        ctx.cache[_INSTANCES_KEY] = hit
    return hit


def _order_of(call: ast.Call, ctx: Context) -> int | None:
    order: dict[int, int] = ctx.cache[_ORDER_KEY]
    return order.get(id(call))


def _parent_call(built: ast.Call, ctx: Context) -> ast.Call | None:
    """The call whose callee is `built` (`Net()(x)` for `Net()`), if any."""
    p = ctx.parent(built)
    return p if isinstance(p, ast.Call) and p.func is built else None

