"""Calls compiled LAX code runs by JIT Fallback at run time (MS145's sources of Python
objects): a builtin or package callable the graph does not compile applied to run-time
values, `min` / `max` of mixed values, the text of a run-time value, a tensor built from
run-time numbers, an instance of the module's own class; and the cheap name test before
any of these resolves anything."""

from __future__ import annotations

import ast
import builtins
import keyword

from npu_lsp.engine import Context
from npu_lsp.rules.graphmode import calls_table
from npu_lsp.rules.graphmode.flow import Kind, analyzer
from npu_lsp.rules.graphmode.held_callables import held_attrs, held_by_default
from npu_lsp.rules.graphmode.python_instances import built_classes, class_instance
from npu_lsp.rules.graphmode.tensor_names import TENSOR_MAKERS
from npu_lsp.rules.graphmode.values import lax_fallback_call, module_built_callable
from npu_lsp.scope import InitAssigns

_NOT_GRAPH_BUILTINS: frozenset[str] | None = None


_KEYWORDS = frozenset(keyword.kwlist)


def trigger_words(ctx: Context) -> frozenset[str] | None:
    """Every name a call needs in its text for `may_fall_back` to say yes: a builtin the
    graph does not implement, a name imported from outside MindSpore, a package callable
    held on `self`, `asnumpy` / `tolist`, a method refused somewhere (keywords left out: no
    call names them). None for a text that is not ASCII (`ast` normalises identifiers)."""
    if not ctx.text.isascii():
        return None
    global _NOT_GRAPH_BUILTINS
    if _NOT_GRAPH_BUILTINS is None:
        _NOT_GRAPH_BUILTINS = frozenset(dir(builtins)) - calls_table.graph_builtins()
    imports = ctx.scopes.info.imports
    outside = {name for name, target in imports.items() if not target.startswith("mindspore")}
    words = (
        _NOT_GRAPH_BUILTINS
        | calls_table.rejectable_names()
        | outside
        | _held_package_attrs(ctx)
        | _module_built_names(ctx)
        | built_classes(ctx)
    )
    return frozenset(words | {"asnumpy", "tolist", "min", "max"}) - _KEYWORDS


def may_fall_back(call: ast.AST, ctx: Context) -> bool:
    """A cheap look at the callee's name before `runtime_fallback` resolves anything: most
    calls in compiled code are ops, sub-cells and tensor methods."""
    global _NOT_GRAPH_BUILTINS
    if _NOT_GRAPH_BUILTINS is None:
        _NOT_GRAPH_BUILTINS = frozenset(dir(builtins)) - calls_table.graph_builtins()
    f = call.func  # type: ignore[attr-defined]
    imports = ctx.scopes.info.imports
    if isinstance(f, ast.Name):
        return (
            f.id in _NOT_GRAPH_BUILTINS
            or (f.id in ("min", "max") and len(call.args) >= 2)  # type: ignore[attr-defined]
            or not imports.get(f.id, "mindspore").startswith("mindspore")
            or f.id in _module_built_names(ctx)
            or f.id in built_classes(ctx)
        )
    if not isinstance(f, ast.Attribute):
        return False
    recv = f.value
    if isinstance(recv, ast.Name):
        if recv.id == "self":
            return f.attr in _held_package_attrs(ctx)  # a package callable held on self
        if recv.id in imports:
            return not imports[recv.id].startswith("mindspore")
    elif (
        type(recv) is ast.Attribute
        and type(recv.value) is ast.Name
        and not imports.get(recv.value.id, "mindspore").startswith("mindspore")
    ):
        # a function of a package's submodule (`np.random.randint`): run as Python at run
        # time when given a run-time value (measured, written/heldout40c probes `fix40e_rnd_np_*`)
        return True
    return f.attr in ("asnumpy", "tolist") or calls_table.rejectable(f.attr)


def _module_built_names(ctx: Context) -> frozenset[str]:
    """Module-level names bound to an object a package built (`clip = functools.partial(...)`)."""
    instances = ctx.scopes.info.instances
    return frozenset(n for n in instances if module_built_callable(ast.Name(id=n, ctx=ast.Load()), ctx, None))


def _held_package_attrs(ctx: Context) -> frozenset[str]:
    """`self.<a>` names some `__init__` of this file binds to an object a package built."""
    hit = ctx.cache.get("opaque.held")
    if hit is None:
        names: set[str] = set()
        # the names a call's root must be for the tests to go on (imported from outside
        # MindSpore): most files import few, and most calls are then passed by a set lookup
        outside = _outside_names(ctx)
        for cls, init in _init_bodies(ctx):
            index = _init_index(ctx, cls, init, outside)
            if index is None:
                _held_from_statements(ctx, cls, init.body, outside, names)
            elif index.either or index.outside_calls:  # most bodies: neither
                _held_from_statements(ctx, cls, [*index.either, *index.outside_calls], outside, names)
        names.update(held_attrs(ctx))  # bound from a constructor argument
        hit = ctx.cache["opaque.held"] = frozenset(names)
    return hit


def _outside_names(ctx: Context) -> set[str]:
    imports = ctx.scopes.info.imports
    return {name for name, target in imports.items() if not target.startswith("mindspore")}


def _init_bodies(ctx: Context) -> list[tuple[ast.ClassDef, ast.FunctionDef]]:
    """Each `def __init__` directly in a class of the module's own statements."""
    class_t, def_t = ast.ClassDef, ast.FunctionDef
    return [
        (cls, item)
        for cls in ctx.tree.body
        if type(cls) is class_t
        for item in cls.body
        if type(item) is def_t and item.name == "__init__"
    ]


def _init_index(ctx: Context, cls: ast.ClassDef, init: ast.FunctionDef, outside: set[str]) -> InitAssigns | None:
    """Scope's index of `init`'s own assignments (`InitAssigns`), when it was made from this
    very body with these outside names: then it holds every statement of the body
    `_held_from_statements` can pass on to its tests (in another order; the answer is a
    set). None otherwise (a second class of the name, a second `__init__`)."""
    known = ctx.scopes.info.classes.get(cls.name)
    if known is None or known.node is not cls or known.methods.get("__init__") is not init:
        return None
    index = known.init_assigns
    return index if index is not None and index.outside == outside else None


def _held_from_statements(
    ctx: Context, cls: ast.ClassDef, body: list[ast.stmt] | list[ast.Assign], outside: set[str], names: set[str]
) -> None:
    """The attributes `body`'s assignments bind to an object a package built."""
    assign_t, call_t, attr_t, name_t = ast.Assign, ast.Call, ast.Attribute, ast.Name
    either = (ast.BoolOp, ast.IfExp)
    for st in body:
        if type(st) is not assign_t:
            continue
        if isinstance(st.value, either):
            # `self.act = act or functools.partial(...)`, every construction
            # leaving `act` None (measured: its result fed to a `nn.Dense` fails
            # under LAX, "'int' object has no attribute '__len__'")
            if held_by_default(ctx, cls, st.value):
                names.update(t.attr for t in st.targets if isinstance(t, ast.Attribute))
            continue
        if type(st.value) is not call_t:
            continue
        root = st.value.func
        while type(root) is attr_t:
            root = root.value
        if type(root) is not name_t or root.id not in outside:
            continue  # MindSpore's own classes, the user's, builtins
        q = ctx.qualname(st.value.func) or ""
        if calls_table.outside_project(q, ctx):
            names.update(t.attr for t in st.targets if isinstance(t, ast.Attribute))


def runtime_fallback(call: ast.Call, ctx: Context, func: ast.AST) -> bool:
    """A LAX fallback call that runs at run time: one on constants only (`[3.5, 1.0].copy()`)
    is run while compiling and gives a constant (measured)."""
    if class_instance(call, ctx, func):
        return True
    if type(call.func) is ast.Name and call.func.id in ("min", "max"):
        return mixed_min_max(call, ctx, func)
    if analyzer(ctx).host_read_while_compiling(call, func):
        return False  # `self.w.asnumpy()` of a constant Tensor attribute: constant data
    if not lax_fallback_call(call, ctx, func):
        return False
    f = call.func
    if (
        isinstance(f, ast.Attribute)
        and f.attr not in ("asnumpy", "tolist")
        and ctx.qualname(f) is None
        and analyzer(ctx).type_class(f.value, func) in calls_table.CONTAINER_TYPES
    ):
        return analyzer(ctx).kind(f.value, func).dynamic  # a container method
    return True


def mixed_min_max(call: ast.Call, ctx: Context, func: ast.AST) -> bool:
    """`min(a, b, ...)` / `max(a, b, ...)` of run-time values that are not all tensors:
    `ms_max` / `ms_min` (mindspore/graph/_parse/standard_method.py) take the graph's
    Maximum / Minimum only when every argument is a tensor, and otherwise run
    `_py_interpret("max(data)")`, at run time when an argument is a run-time value (measured,
    written/gen18 probes `vl19_max_float_argmax`, `vl19_min_runtime_argmax`: STRICT says
    "When handling script 'max(data) in graph mode', the inputs should be constant", LAX
    compiles and the tensor it scales is a Python object; fresh v5 seed 10800165; written/
    heldout18a probes `fe19a_mx_*`, `fe19b_mx_*`: `x / max(x.std().item(), 1e-5)`, `max(int(t),
    1)`, `max(x.std(), 0.5)` given to `nn.Dense` / `nn.LayerNorm` fail, "'int' object has no
    attribute '__len__'"; returned directly they compile, and `max(x.shape[0], 1)` folds)."""
    if len(call.args) < 2 or call.keywords or any(isinstance(a, ast.Starred) for a in call.args):
        return False
    if ctx.qualname(call.func) not in ("builtins.min", "builtins.max"):
        return False
    kinds = [analyzer(ctx).kind(a, func) for a in call.args]
    if any(k.dynamic for k in kinds) and not all(k == Kind.TENSOR for k in kinds):
        return True
    return Kind.TENSOR not in kinds and any(_reads_stored_module_dict(a, func, ctx) for a in call.args)


def _reads_stored_module_dict(e: ast.expr, func: ast.AST, ctx: Context) -> bool:
    """Does `e` read an item of a module-level dict display that `func` stores items into
    (`STATE["calls"] += 1`, `STATE["r"] = ...`)? Such an item is a run-time number in the
    graph: arithmetic on it compiles, but `max` / `min` of it is interpreted (measured,
    written/heldout23a probes `lax24a_f64_gdict_*`: `max(0.0, 1.0 - 0.1 * STATE["calls"])`
    after `STATE["calls"] += 1`, times `x`, given to `nn.GRUCell` fails under LAX; without
    the store, or without `max`, it compiles; STRICT compiles it)."""
    names = {
        n.value.id
        for n in ast.walk(e)
        if type(n) is ast.Subscript and type(n.value) is ast.Name and isinstance(n.ctx, ast.Load)
    }
    if not names:
        return False
    stored = _stored_module_dicts(func, ctx)
    return any(n in stored for n in names)


def _stored_module_dicts(func: ast.AST, ctx: Context) -> frozenset[str]:
    """The module-level dict displays `func` stores items into (and never binds itself)."""
    key = ("opaque.stored_dicts", id(func))
    hit: frozenset[str] | None = ctx.cache.get(key)
    if hit is None:
        from npu_lsp.rules.graphmode.runtime_index_into_constants import module_literal

        stored: set[str] = set()
        local: set[str] = set()
        for n in ast.walk(func):
            if type(n) is ast.Subscript and isinstance(n.ctx, ast.Store) and type(n.value) is ast.Name:
                stored.add(n.value.id)
            elif type(n) is ast.Name and isinstance(n.ctx, ast.Store):
                local.add(n.id)
        hit = ctx.cache[key] = frozenset(
            d for d in stored - local if isinstance(module_literal(d, ctx), ast.Dict)
        )
    return hit


#: builtins whose result is the text of their argument
_TEXT_OF_VALUE = frozenset({"builtins.str", "builtins.repr"})


def text_of_value(call: ast.Call, ctx: Context, func: ast.AST) -> bool:
    """`str(v)` / `repr(v)` of a value known only at run time."""
    from npu_lsp.rules.graphmode.interpreted import known_only_at_run_time

    f = call.func
    if type(f) is ast.Attribute and f.attr == "format" and type(f.value) is ast.Constant and type(f.value.value) is str:
        # `'{:.3f}'.format(v)`: formatted by JIT Fallback as an f-string is (measured, fresh v5
        # seed 11100046; written/gen18 probes `v23_fm_*`)
        return any(known_only_at_run_time(a, ctx, func) for a in [*call.args, *(k.value for k in call.keywords)])
    return (
        isinstance(f, ast.Name)
        and bool(call.args)
        and ctx.qualname(f) in _TEXT_OF_VALUE
        and known_only_at_run_time(call.args[0], ctx, func)
    )


def formats_value(e: ast.JoinedStr, ctx: Context, func: ast.AST) -> bool:
    """An f-string formatting a value known only at run time."""
    from npu_lsp.rules.graphmode.interpreted import known_only_at_run_time

    return any(type(v) is ast.FormattedValue and known_only_at_run_time(v.value, ctx, func) for v in e.values)


#: the tensor constructors (`ms.Tensor(v)` of a fallback value is made by Python at run time)
TENSOR_CONSTRUCTORS = TENSOR_MAKERS


def built_tensor(call: ast.Call, ctx: Context, func: ast.AST) -> bool:
    """`ms.Tensor(v)` / `ms.tensor(v, dtype)` of a run-time value that is not a tensor (a
    number read from a tensor, a list of them): LAX builds it by JIT Fallback (STRICT: "When
    handling script '__call_func_str__(...)' ... the inputs should be constant"), and the
    tensor is a Python object whose dtype MindSpore cannot give to an operator (measured,
    written/gen18 probes `v20_tl_*`: `x + ms.Tensor([x[0, j].item() for j in range(3)],
    mstype.float32)` or `ms.Tensor(float(x.sum()), ...)`, then `ops.zeros_like(x)` /
    `ops.scalar_to_tensor(1.0, x.dtype)` fail, "DtypeToEnum"; of a constant list it compiles;
    fresh v5 seed 10500026); not `Tensor(v, dtype)` by its bare name (`typed_tensor_call`)."""
    f = call.func
    name = f.attr if type(f) is ast.Attribute else f.id if type(f) is ast.Name else None
    if name not in ("Tensor", "tensor") or not call.args or isinstance(call.args[0], ast.Starred):
        return False
    if ctx.qualname(f) not in TENSOR_CONSTRUCTORS:
        return False
    a = analyzer(ctx)
    v = call.args[0]
    if typed_tensor_call(call, ctx):
        return False
    if isinstance(v, ast.Name):
        v = a.single_assignment(v.id, func) or comprehension_item(v, call, ctx, func) or v
    if isinstance(v, ast.ListComp):
        v = v.elt  # a list of numbers read from a tensor, one per item
    elif isinstance(v, (ast.List, ast.Tuple)):
        return any(
            not isinstance(x, ast.Starred) and (a.kind(x, func) == Kind.VAR or item_of_number_list(x, ctx, func))
            for x in v.elts
        ) and all(not isinstance(x, ast.Starred) and a.kind(x, func) != Kind.TENSOR for x in v.elts)
    return a.kind(v, func) == Kind.VAR


def item_of_number_list(e: ast.expr, ctx: Context, func: ast.AST) -> bool:
    """`toks[-1]` of a list the function grows with run-time numbers (`toks.append(int(
    logits.argmax()))`) before the read, or in a loop around both: the item is a run-time
    number, though the flow keeps the list's constant start (measured, written/heldout31a
    case `greedy_python_list_tokens_tolist`, probes `fix31d_tl_*`: `ms.Tensor([toks[-1]],
    ms.int32)` given to `nn.Embedding` then `nn.GRUCell` fails under LAX, "Tensor(shape=[-2])",
    and STRICT refuses the script, "the inputs should be constant"; `toks[0]` of `toks = [1]`
    stays the constant it started as and compiles)."""
    if not (isinstance(e, ast.Subscript) and isinstance(e.value, ast.Name) and isinstance(e.ctx, ast.Load)):
        return False
    from npu_lsp.rules.graphmode.python_call_on_tensor import mutation_reaches  # cycle

    a = analyzer(ctx)
    name = e.value
    start = a.single_assignment(name.id, func)
    if (
        isinstance(e.slice, ast.Constant)
        and type(e.slice.value) is int
        and isinstance(start, ast.List)
        and 0 <= e.slice.value < len(start.elts)
    ):
        return False  # an item the list started with (`toks[0]`: measured, compiles)
    return any(
        c.how == "append" and c.args and a.kind(c.args[-1], func) == Kind.VAR and mutation_reaches(c.node, name, func, ctx)
        for c in a.changes(name.id, func)
    )


def comprehension_item(name: ast.Name, at: ast.AST, ctx: Context, func: ast.AST) -> ast.expr | None:
    """What the variable `name` of a comprehension enclosing `at` takes, when it iterates a
    name bound once to a list comprehension (`v` of `[ms.Tensor(v) for v in vals]` with `vals =
    [float(r) for r in x[0]]`: `float(r)`); None otherwise. Measured (written/gen18 probes
    `genfresh28_sj_*`, fresh v5 seeds 11500091, 11500137): such a `ms.Tensor(v, dtype)` is
    built by JIT Fallback under LAX and refused under STRICT, as of `float(x[0, 0])`."""
    node: ast.AST | None = ctx.parent(at)
    while node is not None and node is not func:
        if isinstance(node, (ast.ListComp, ast.GeneratorExp, ast.SetComp)):
            for gen in node.generators:
                if isinstance(gen.target, ast.Name) and gen.target.id == name.id:
                    it = gen.iter
                    src = analyzer(ctx).single_assignment(it.id, func) if isinstance(it, ast.Name) else None
                    return src.elt if isinstance(src, ast.ListComp) and len(src.generators) == 1 else None
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef, ast.stmt)):
            return None
        node = ctx.parent(node)
    return None


def typed_tensor_call(call: ast.Call, ctx: Context) -> bool:
    """`Tensor(v, ms.float32)`: MindSpore's class called by a bare name with a constant dtype.
    The parser types what it builds (STRICT names it: "When handling script 'Tensor(input_data,
    dtype, ...)'"), so the tensor is no Python object, whatever `v` is: `nn.Dense`,
    `ops.zeros_like`, `ops.cast(t, t.dtype)` and arithmetic on it compile under LAX, of host
    data (`asnumpy()`, `tolist()`, numpy) and of graph scalars (`float(x.sum())`, a list of
    `.item()`). Spelt `ms.Tensor(...)`, or without the dtype, it is one, and `nn.Dense` fails
    ("'int' object has no attribute '__len__'"; measured, written/fallbackflows probes
    `ld23_bt_*`, written/heldout23a `window_numpy_stride_tricks_in_construct`)."""
    if type(call.func) is not ast.Name or call.func.id != "Tensor" or not call.args:
        return False
    if ctx.qualname(call.func) not in TENSOR_CONSTRUCTORS:
        return False
    dtype = call.args[1] if len(call.args) > 1 else next((k.value for k in call.keywords if k.arg == "dtype"), None)
    return isinstance(dtype, ast.Attribute) and analyzer(ctx).kind(dtype, ctx.function) == Kind.CONST
