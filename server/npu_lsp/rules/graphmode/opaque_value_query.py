"""MS145: (LAX) a JIT Fallback result (or None joined under a tensor condition) reaching MindSpore code that reads its shape or dtype."""

from __future__ import annotations

import ast
import functools
import json
from collections.abc import Iterable
from importlib import resources

from npu_lsp.astutil import node_key, range_count
from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.modes import sets_graph_mode
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode import calls_table
from npu_lsp.rules.graphmode.attribute_stores import (
    ACROSS_JOIN,
    branch_stored,
    branch_stores,
    given_tensors,
    joined_attr,
    nested_self_lines,
    none_guarded,
    numpy_attr,
    reaching_store,
    restored_tensor_attrs,
    self_stores,
    state_attr,
    state_attrs,
    stores_across_join,
    stores_state_attrs,
    stores_tensor_attrs,
)
from npu_lsp.rules.graphmode.dynamic_shape import reaching_assignment
from npu_lsp.rules.graphmode.fallback_calls import (
    TENSOR_CONSTRUCTORS,
    built_tensor,
    formats_value,
    may_fall_back,
    mixed_min_max,
    runtime_fallback,
    text_of_value,
    trigger_words,
    typed_tensor_call,
)
from npu_lsp.rules.graphmode.flow import GROWERS, Kind, analyzer
from npu_lsp.rules.graphmode.helpers import GraphRule, own_nodes, top_cell_construct
from npu_lsp.rules.graphmode.host_values import runs_only_if_reached
from npu_lsp.rules.graphmode.input_object_attribute_store import (
    input_object_stored,
    stores_on_objects,
)
from npu_lsp.rules.graphmode.interpreted import (
    folded_away_binding,
    interpreted,
    joined_in_tensor_while,
    rebound_by_arithmetic,
)
from npu_lsp.rules.graphmode.lax_functions import (
    calls_in,
    fstrings_in,
    function_holds,
    function_mentions,
    lax_scopes,
)
from npu_lsp.rules.graphmode.none_join import has_none_join, none_joined, returns_none_joined
from npu_lsp.rules.graphmode.number_stores import (
    held_number_stored,
    number_stored,
    stores_held_numbers,
    stores_numbers,
)
from npu_lsp.rules.graphmode.python_instances import (
    builds_python_instances,
    from_instance_fields,
    namedtuple_classes,
)
from npu_lsp.rules.graphmode.runtime_index_into_constants import tensor_read_of_numbers
from npu_lsp.rules.graphmode.table_reads import from_float_table, reads_tables
from npu_lsp.rules.graphmode.typed_scalar_tensor import (
    IN_PLACE_UPDATES,
    float64_tensor_of_number,
    from_typed_scalar_tensor,
    number_read,
    typed_scalar_tensor,
)
from npu_lsp.rules.graphmode.values import callees_by_call, in_dead_branch, returns_reached
from npu_lsp.scope import GraphScope

_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)
_CONTAINERS = frozenset({"mindspore.nn.CellList", "mindspore.nn.SequentialCell"})
_SHAPE = frozenset({"mindspore.ops.shape"})
_DEPTH = 4
_CALL = frozenset({ast.Call})
_DICT_MESSAGE = (
    "`{name}` is a dict holding a JIT Fallback value, which MindSpore keeps as a tuple of its"
    " values; indexing it by key fails (`tuple indices must be integers or slices, not str`): use `.get()`"
)
_TUPLE_DICT_MESSAGE = (
    "`{name}` is a dict that travelled in a tuple beside a JIT Fallback value; LAX builds that"
    " tuple as a Python object and hands the dict back as a tuple of its values, so indexing it"
    " by key fails (`tuple indices must be integers or slices, not str`): return the dict's"
    " values separately, or keep the other items graph tensors"
)
_TUPLE_DICT_GET_MESSAGE = (
    "`{name}` is a dict that travelled in a tuple beside a JIT Fallback value; LAX builds that"
    " tuple as a Python object and hands the dict back as a tuple of its values, which has no"
    " `.get` (`'tuple' object has no attribute 'get'`): return the dict's values separately,"
    " or keep the other items graph tensors"
)
_APPENDED_MESSAGE = (
    "`{name}` is `list()` of a JIT Fallback value grown in place, which MindSpore keeps as a Python"
    " object whose `append` returns None: the name then holds None and indexing it fails"
    " (`'NoneType' object is not subscriptable`); build the list as a display (`[v]`) instead"
)
_TUPLE_OP_INDEX_MESSAGE = (
    "`{index}` is an output of `{op}` of a JIT Fallback value, whose dtype MindSpore guesses as"
    " Float32 while compiling; a tensor cannot be indexed by it (`The tensor element in tuple"
    " index must be int or bool type, but got Float32`; only when the sorted value's name is"
    " also bound at module level or in an enclosing function): cast it (`.astype(ms.int32)`),"
    " call `{op}` on a graph tensor, or hold the value in a name of its own"
)
#: `mindspore.ops` functions returning a tuple (values, indices) whose items, of a JIT Fallback
#: value, get a guessed Float32 dtype (measured, written/gen18 probes `fix29b_ti_*`: the
#: tensor method `t.sort()`, `ops.argmax`, `ops.gather` by them, a cast index, or
#: `ops.sort(ops.relu(v))` compile)
_TUPLE_OPS = frozenset({"mindspore.ops.sort", "mindspore.ops.topk"})
_PLACEHOLDER_INDEX_MESSAGE = (
    "`{name}` is a list of numbers read from `{over}`, a JIT Fallback value, one by one: LAX"
    " compiles such a comprehension to a single placeholder number, not a list, and indexing it"
    " fails (`'float' object is not subscriptable`); compute with tensor ops (`v[0]` of the tensor)"
)
#: a slice of such a list (`head = vals[:2]`) is no list either: any use of it fails, its
#: length, an item, `sum`, a `for` (measured, written/lax probes `genfresh36_ph_*`; fresh v6
#: seed 12000813)
_PLACEHOLDER_SLICE_MESSAGE = (
    "`{name}` is a list of numbers read from `{over}`, a JIT Fallback value, one by one: LAX"
    " compiles such a comprehension to a single placeholder number, not a list, and what slicing"
    " it gives is no list either (`unsupported operand type(s) for +: 'float' and 'list'`);"
    " compute with tensor ops (`v[:2]` of the tensor)"
)
_PLACEHOLDER_ITER_MESSAGE = (
    "`{name}` is a list of numbers read from `{over}`, a JIT Fallback value, one by one: LAX"
    " compiles such a comprehension to a single placeholder number, not a list, and iterating it"
    " fails (`'float' object is not iterable`, \"The pointer[seq_abs] is null\"); compute with"
    " tensor ops on the tensor"
)
#: builtins whose call reads a Python number out of a tensor item (`float(v)`, `v.item()`)
_NUMBER_READS = frozenset({"builtins.float", "builtins.int", "builtins.bool"})
#: methods giving host data: a comprehension over it is other rules' (MS193, MS173...)
_HOST_DATA_METHODS = frozenset({"tolist", "asnumpy", "numpy"})
_COMP_MESSAGE = (
    "`{name}` is a comprehension over the shape of a JIT Fallback value, which MindSpore does not"
    " build as a list; indexing it fails (`'float' object is not subscriptable`)"
)


@functools.cache
def _queries() -> tuple[frozenset[str], frozenset[str]]:
    """(cells, functions) of MindSpore that read their input's shape or dtype while compiling."""
    data = json.loads(
        resources.files(__package__).joinpath("ms_input_queries.json").read_text("utf-8")
    )
    return frozenset(data["cells"]), frozenset(data["functions"])


@functools.cache
def _typed_index_queries() -> tuple[frozenset[str], frozenset[str]]:
    """(cells, functions) of MindSpore that fail even on a graph tensor indexed by a typed
    `Tensor(v, dtype)` of a JIT Fallback value (`ms_typed_index_sinks.json`, measured)."""
    data = json.loads(
        resources.files(__package__).joinpath("ms_typed_index_sinks.json").read_text("utf-8")
    )
    return frozenset(data["cells"]), frozenset(data["functions"])


@functools.cache
def _guarded_queries() -> dict[str, tuple[str, int]]:
    """MindSpore functions that read their input's size only while one argument is left None
    (`ops.norm` without `dim`): qualified name -> (the argument, its position)."""
    data = json.loads(
        resources.files(__package__).joinpath("ms_input_queries.json").read_text("utf-8")
    )
    return {q: (g["argument"], g["position"]) for q, g in data.get("functions_unless_given", {}).items()}


@functools.cache
def _argument_queries() -> dict[str, tuple[str, int]]:
    """MindSpore functions that read the shape of one argument only (`ops.conv2d`'s weight,
    `ops.mv`'s vector): qualified name -> (the argument, its position)."""
    data = json.loads(
        resources.files(__package__).joinpath("ms_input_queries.json").read_text("utf-8")
    )
    return {q: (g["argument"], g["position"]) for q, g in data.get("functions_argument", {}).items()}


@functools.cache
def _keyword_overloads() -> frozenset[str]:
    """`mint` functions that are C++-dispatched overloads (`ms_keyword_overloads.json`):
    called by keyword on a JIT Fallback value under LAX they fail (measured)."""
    data = json.loads(
        resources.files(__package__).joinpath("ms_keyword_overloads.json").read_text("utf-8")
    )
    return frozenset(data["functions"])


def reads_run_time_dict(ctx: Context) -> bool:
    """Does a compiled function of the module read a dict display after storing an item into
    it under a run-time (tensor) `if`? Measured (written/lax probes `genfresh33_mx_*`, fresh
    v6 seed 12000336): such a read anywhere in the compiled program (in `construct`, in a
    helper the dict goes through, in a sub-cell; on a later pass of an unrolled loop around
    the store) makes `mint.max(x, dim=1)` / `mint.clamp(x, min=, max=)` of a JIT Fallback
    `x` compile under LAX, wherever the call is; without the read (the store alone), with a
    list item, with `dict(n=0)` or an unconditional store, it fails ("Illegal type in the
    graph: AbstractKeywordArg"). Cached per module: asked only where that finding fires."""
    key = "opaque.reads_run_time_dict"
    if key not in ctx.cache:
        ctx.cache[key] = ctx.mentions("{") and any(
            _reads_joined_dict(f, ctx)
            for f in ast.walk(ctx.tree)
            if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef)) and ctx.scopes.scope_for(f) is not None
        )
    return bool(ctx.cache[key])


def _reads_joined_dict(func: ast.FunctionDef | ast.AsyncFunctionDef, ctx: Context) -> bool:
    """`d = {...}` (or a parameter `d`), `d[k] = v` under an `if` on a run-time value, and
    `d[...]` read after that `if` (or `return d`, read by the caller), or read anywhere in a
    loop around it (a later pass reads the joined dict)."""
    nodes = own_nodes(func)
    dicts = {a.arg for a in func.args.args} | {
        t.id
        for n in nodes
        if type(n) is ast.Assign and type(n.value) is ast.Dict
        for t in n.targets
        if type(t) is ast.Name
    }
    if not dicts:
        return False
    a = analyzer(ctx)
    for st in nodes:
        if type(st) is not ast.If:
            continue
        stored = _item_stores(st, dicts)
        if stored and a.kind(st.test, func).dynamic and _read_after(st, stored, nodes, func, ctx):
            return True
    return False


def _item_stores(st: ast.If, names: set[str]) -> set[str]:
    """The names of `names` an item is stored into in `st`'s sides (`d[k] = v`, `d[k] += v`)."""
    out: set[str] = set()
    for s in ast.walk(st):
        t = type(s)
        targets = s.targets if t is ast.Assign else [s.target] if t is ast.AugAssign else ()  # type: ignore[attr-defined]
        out.update(tg.value.id for tg in targets if type(tg) is ast.Subscript and type(tg.value) is ast.Name and tg.value.id in names)
    return out


def _read_after(st: ast.If, names: set[str], nodes: list[ast.AST], func: ast.AST, ctx: Context) -> bool:
    end = st.end_lineno or st.lineno
    lo, hi = end + 1, end  # the lines of the innermost loop around `st` (none: empty)
    p = ctx.parent(st)
    while p is not None and p is not func:
        if isinstance(p, (ast.For, ast.While)):
            lo, hi = p.lineno, p.end_lineno or p.lineno
            break
        p = ctx.parent(p)
    for n in nodes:
        if isinstance(n, ast.Subscript) and type(n.value) is ast.Name and n.value.id in names and type(n.ctx) is ast.Load:
            if n.lineno > end or lo <= n.lineno <= hi:
                return True
        elif isinstance(n, ast.Return) and type(n.value) is ast.Name and n.value.id in names and n.lineno > end:
            return True
    return False


def _constant_keywords_only(call: ast.Call, func: ast.AST, ctx: Context) -> bool:
    """Is every keyword argument of `call` a compile-time constant (a number, str, dtype,
    tuple of them)? One tensor among them (`mint.mul(x, other=t)`, `mint.lerp(x, end=t,
    weight=0.5)`, the fallback value itself as `input=`) and MindSpore 2.10 compiles the
    overload on a JIT Fallback value; only constants alone fail (measured, written/lax
    probes fix33c_fkwb_*). `**kwargs` is not known: no."""
    a = analyzer(ctx)
    return all(k.arg is not None and a.kind(k.value, func) == Kind.CONST for k in call.keywords)


#: arguments a MindSpore function checks the Python type of with `_check_attr_dtype`
#: (ops/function/math_func.py), by name and position: given a JIT Fallback value (a number
#: LAX stores on `self` in `construct`: `self.tau = self.tau * 0.9`, also read before the
#: store) the check sees a Tensor (measured, written/heldout40c cases
#: `fbnet_tau_anneal_self_mutation`, `r2_fbnet_tau_mutated_before_gumbel`, probes
#: `fix40e_tau_*`: "For 'gumbel_softmax', the type of 'tau' should be 'float', but got type
#: 'Tensor'", by keyword or position, and `hard`; a local `tau` computed from the attribute
#: compiles). Only the measured function: `argmax`'s `keepdim`, `diag_embed`'s offsets,
#: `quantile`'s `axis` use the same check but were not measured.
_GUMBEL_CHECKED = (("tau", 1, "float"), ("hard", 2, "bool"), ("dim", 3, "int"))
_TYPE_CHECKED_ARGUMENTS: dict[str, tuple[tuple[str, int, str], ...]] = {
    "mindspore.ops.gumbel_softmax": _GUMBEL_CHECKED,
    "mindspore.ops.function.math_func.gumbel_softmax": _GUMBEL_CHECKED,
}


def _short_segment(ctx: Context, e: ast.expr) -> str:
    """The source text of `e` (shortened for a message)."""
    text = ctx.segment(e)
    return text if len(text) <= 40 else text[:37] + "..."


def _call_arguments(call: ast.Call) -> list[ast.expr]:
    """The expressions `call` gives, positional then keyword (a starred one as itself)."""
    return [*call.args, *(k.value for k in call.keywords)]


def _argument(call: ast.Call, argument: str, position: int) -> ast.expr | None:
    """The expression `call` gives for `argument` (keyword, or positional at `position`)."""
    given: ast.expr | None = next((k.value for k in call.keywords if k.arg == argument), None)
    if given is None and 0 <= position < len(call.args) and not any(isinstance(a, ast.Starred) for a in call.args[: position + 1]):
        given = call.args[position]
    return given


def _queried_arguments(call: ast.Call, ctx: Context) -> list[ast.expr]:
    """The positional arguments of `call` a JIT Fallback value taints it through: all but a
    `_HOST_LIST_ARGUMENTS` one (and starred ones)."""
    args = [a for a in call.args if not isinstance(a, ast.Starred)]
    if not call.keywords and len(call.args) < 2:
        return args  # (cheap first: no second argument to leave out)
    host = _HOST_LIST_ARGUMENTS.get(ctx.qualname(call.func) or "")
    if host is None:
        return args
    given = _argument(call, host[1], host[0])
    return [a for a in args if a is not given]


def _left_none(call: ast.Call, argument: str, position: int) -> bool:
    """Is `argument` (keyword, or positional at `position`) absent from `call` or None?"""
    given: ast.expr | None = next((k.value for k in call.keywords if k.arg == argument), None)
    if given is None and 0 <= position < len(call.args):
        given = call.args[position]
    if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        return False
    return given is None or (isinstance(given, ast.Constant) and given.value is None)


def _nested_sub_cell(f: ast.Attribute, ctx: Context) -> bool:
    """Is `f` (`self.head.cls`) a Cell held by a sub-cell of `self`: each attribute of the
    chain bound in `__init__` of the class before it (a sub-cell's sub-cell is called the
    same way, measured: heldout34a probe `fix34f_nx_construct_dict_no_grad`)?"""
    chain: list[str] = []
    e: ast.expr = f
    while type(e) is ast.Attribute:
        chain.append(e.attr)
        e = e.value
    if type(e) is not ast.Name or e.id != "self" or len(chain) < 2:
        return False
    cls = analyzer(ctx).owner_class(ctx.function)
    if cls is None:
        return False
    scopes = ctx.scopes
    qual: str | None = f"{scopes.info.module}.{cls.name}"
    for attr in reversed(chain):
        qual = scopes.attribute_class(qual, attr) if qual else None
    return qual is not None and scopes.is_cell_class(qual)


#: modules whose functions, imported by name (`from typing import cast`), MindSpore's parser
#: resolves as unsupported objects, so a call of the bare name is interpreted whole (measured,
#: written/everyday probes `fix35g_*`: `cast`, `copy_fn` from `copy`, `sqrt` from `math`)
_SCRIPTED_IMPORT_MODULES = frozenset({"typing", "copy", "math"})


_SCRIPTED_CALLEES_KEY = "opaque.scripted_callees"


def _scripted_callees(ctx: Context) -> frozenset[str]:
    """The bare names a call of which `_whole_call_script` may find scripted whole, once per
    file (every call of a bare name in compiled code asks): none outside GRAPH_MODE."""
    names: frozenset[str] = frozenset()
    info = ctx.scopes.info
    if sets_graph_mode(info):
        imported = (n for n, m in info.imports.items() if m.partition(".")[0] in _SCRIPTED_IMPORT_MODULES)
        names = calls_table.interpreted_builtins() | frozenset(imported)
    ctx.cache[_SCRIPTED_CALLEES_KEY] = names
    return names


def _whole_call_script(node: ast.Call, ctx: Context) -> str | None:
    """The callee's name when MindSpore's parser turns this call, argument source included,
    into one JIT Fallback script: the callee is a bare name the parser resolves to an object
    the graph does not support, a builtin it does not implement (`dict`, `set`, `reversed`,
    `sorted`, `any`: `calls_table.interpreted_builtins`) or a function imported by name from
    a module of `_SCRIPTED_IMPORT_MODULES` (`cast(Tensor, ...)` runs as the script
    `cast(Tensor, h)`). The same function reached as a module attribute (`typing.cast(...)`,
    `copy.copy(...)`, `math.sqrt(...)`) is resolved later, after its arguments were
    computed in the graph ("__call_func_str__(__input_0__,)"), and compiles (measured,
    written/everyday probes `fix35g_*`)."""
    f = node.func
    if type(f) is not ast.Name:
        return None
    name = f.id
    if name in calls_table.interpreted_builtins():
        return name if ctx.qualname(f) == f"builtins.{name}" else None
    module = ctx.scopes.info.imports.get(name)
    if module is None or module.partition(".")[0] not in _SCRIPTED_IMPORT_MODULES:
        return None
    return name


def _runs_a_cell(call: ast.Call, ctx: Context, func: ast.AST) -> bool:
    """Does `call` run a Cell: a sub-cell (`self.fc(x)`, `self.block.fc(x)`), a module-level
    Cell, a method of the class that calls a sub-cell (`self.forward_fc(x)`), or a function
    of the module given `self` that calls one of its sub-cells (`helper(self, x)` calling
    `net.fc(x)`)?"""
    from npu_lsp.rules.graphmode.parameter_receivers import module_cell
    from npu_lsp.rules.graphmode.subcell_attribute_assignment import holds_cell

    f = call.func
    if type(f) is ast.Name:
        return module_cell(f, ctx, func) or _helper_calls_sub_cell(call, f.id, ctx)
    if type(f) is not ast.Attribute:
        return False
    if type(f.value) is ast.Name and f.value.id == "self":
        return holds_cell(f.attr, ctx) or _method_calls_sub_cell(f.attr, ctx)
    return _nested_sub_cell(f, ctx)


def _method_calls_sub_cell(name: str, ctx: Context) -> bool:
    """Does the method `name` of the class being checked call one of its sub-cells?"""
    from npu_lsp.rules.graphmode.subcell_attribute_assignment import holds_cell

    cls = analyzer(ctx).owner_class(ctx.function)
    info = ctx.scopes.info.classes.get(cls.name) if cls is not None else None
    method = info.methods.get(name) if info is not None else None
    if method is None or method is ctx.function:
        return False
    return any(
        type(n) is ast.Call
        and type(n.func) is ast.Attribute
        and type(n.func.value) is ast.Name
        and n.func.value.id == "self"
        and holds_cell(n.func.attr, ctx)
        for n in ast.walk(method)
    )


def _helper_calls_sub_cell(call: ast.Call, name: str, ctx: Context) -> bool:
    """`helper(self, x)`: a function of the module given `self` whose body calls
    `<that parameter>.<sub-cell>(...)`."""
    from npu_lsp.rules.graphmode.subcell_attribute_assignment import holds_cell

    helper = ctx.scopes.info.functions.get(name)
    if helper is None or not isinstance(helper, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    params = [a.arg for a in helper.args.args]
    given = {params[i] for i, a in enumerate(call.args[: len(params)]) if type(a) is ast.Name and a.id == "self"}
    return bool(given) and any(
        type(n) is ast.Call
        and type(n.func) is ast.Attribute
        and type(n.func.value) is ast.Name
        and n.func.value.id in given
        and holds_cell(n.func.attr, ctx)
        for n in ast.walk(helper)
    )


@rule(code="MS145", name="fallback-value-shape-query", severity="error", family="graphmode")
class FallbackValueShapeQuery(GraphRule):
    """## What it does
    Under the default LAX syntax level, flags a value made by JIT Fallback (a call MindSpore
    runs as Python: `x.asnumpy()` (not of a tensor it holds as a constant while compiling: a
    Tensor attribute `__init__` built, `ops.ones(...)`), a builtin it does not compile applied to a tensor, a
    standard-library or `functools.partial` callable, a container method only LAX allows),
    or computed from one, when it reaches MindSpore code that reads its shape or dtype: its
    `.dtype` given to an operator (`ops.cast(v, v.dtype)`, `x.astype(d)` after `d = v.dtype`;
    printed, formatted, compared or given to the tensor constructor (`ms.tensor(2.0,
    v.dtype)`, which LAX then runs as Python) or to numpy (`np.finfo(v.dtype)`) it is read on the host and compiles), `ops.shape(v)[i]`, a `mindspore.nn` cell or `mindspore.ops` function whose
    own source queries its input (`nn.Dense`, `nn.BatchNorm1d`, `nn.LayerNorm`,
    `ops.clip_by_value`, `ops.zeros_like`, the losses that reduce a tensor computed from
    their inputs through `_get_axis` (`ops.mse_loss`, `ops.l1_loss`, `ops.huber_loss`: "The
    pointer[seq_abs] is null"), `ops.norm` without `dim`, whose compile-time axis check reads
    the input's rank only then ("Graph cycle exists ... _norm_immediate"; `ops.norm(v, dim=0)`
    and `v.norm()` compile)...; the table `ms_input_queries.json` is derived
    from MindSpore 2.10's sources; a read that only decides an `if` does not count:
    `ops.cumsum`, `ops.cumprod`, `ops.exp2`, `ops.xlogy`... of such a value compile), also a tensor computed from `max(a, b)` / `min(a, b)` of a number
    read from a run-time tensor (`x / max(x.std().item(), 1e-5)`: LAX runs the builtin by JIT
    Fallback), directly or through the user's helpers, sub-cells, a MindSpore cell built
    once at module level and called from an `@ms.jit` function (`proj = nn.Dense(1, 4)`,
    `proj(ms.Tensor(np.cos(hour)))`: "'int' object has no attribute '__len__'", written/heldout42a
    probes `fix42a_jf_*`),
    `CellList` blocks and the blocks of an `nn.SequentialCell` (past blocks that do not
    query it: `nn.ReLU`, `nn.Dropout`; also the next block after a Cell of the file that
    returns such a value inside the SequentialCell, snnTorch's `init_hidden` Leaky storing a
    Tensor `self.mem` in `construct` before `nn.Dense`: written/heldout41a probes
    `fix43a_sq_*`), lists holding it (also grown by `.append`), its attributes (`.shape`,
    a namedtuple's fields, also unpacked: `v, s = Out(x, 2.0)`); an instance of a module's
    `collections.namedtuple` class, built as Python under LAX even from tensors (not from
    tensors created from constants, `ops.zeros((n, 4))`: built while compiling), counts as
    one, and so does an instance of its `typing.NamedTuple` classes, dataclasses and plain
    classes built from a graph variable (`Box(x, 2.0)`; from constants it is a constant),
    wherever it travels: into a sub-cell or helper it is given to, and back out of one that
    returns it; LAX makes a name bound to `None` on
    one path of a branch on a tensor and to a value on the other (`y = None; if x.sum() > 0:
    y = x`), a conditional expression `None if <tensor test> else v`, or a helper returning
    `None` on such a path, the same kind of Python object, and so does an attribute of
    `self` stored inside an `if` of compiled code and read after it (`if self.memory is
    None: self.memory = ...`, `if new_mask: self.mask = ...` in a sub-cell; a store outside
    any `if`, or in a branch MindSpore folds away, is read back as the value in its own block
    and in the branches of an `if` after it), and so is one read across a join after a store
    (`self.h = x`, then `self.h` read in a `for` / `while` body, after any `if` (on a tensor,
    a shape or a constant flag) or loop, or in a comprehension; `__init__` making it `None`,
    a number, a tuple or a tensor: `for _ in range(3): self.h = self.gru(x, self.h)` fails;
    read after a store in the same loop body, or after a store that follows the loop, it is
    the value); `.reshape(...)` of a product `a @ b` with such an operand (also after
    arithmetic, or of `ms.Tensor(...)` of it: MindSpore compiles `@` as its own MatMul of the
    placeholder the value holds while compiling, "proposed_shape ... is invalid for input of
    size 1"; `np.matmul`, `np.dot` and the product's `.T`, `.flatten()`, `.sum()` compile);
    and the shape of such a value given as a target shape
    (`ops.reshape(x, a.shape)`, `ops.zeros(a.shape, ...)`, `ops.broadcast_to(y, a.shape)`
    with `a = x.asnumpy()`; not the shape of a `self` attribute stored under an `if`, a
    Tensor whose shape MindSpore reads: written/heldout17a probe `st18_memo_ifnone_shape`);
    a tensor indexed by a tensor JIT Fallback builds (`x[ms.Tensor(idx)]` with `idx` from
    numpy on `x.asnumpy()`, scipy, a `tolist()`; not `x[Tensor(idx, ms.int32)]` by the bare
    name with a constant dtype, a graph tensor `nn.LSTM` and `nn.Dense` take: only `nn.GRU`
    and `ops.split` fail on that one, table `ms_typed_index_sinks.json`), given to such a cell or function (its
    `.shape` as a target shape compiles); such a value given as the fill value of `ops.full` /
    `ops.fill`; the result of `min` / `max` that MindSpore interprets rather than compiles
    (one argument a run-time scalar, `t.item()`, `float(t)`, `int(t)`, and none a tensor, or
    a tensor beside a Python number: `x / max(x.std().item(), 1e-5)` before an `nn.Dense`;
    `max` of tensors alone, or of constants and shapes, compiles); a tensor an item of which is
    set to such a value (`y[m] = x[m] / max(s, 1e-5)`, `y[0] = ...`), read after the store;
    `min` / `max` of such a value's shape (`max` / `min` of a host list of a tensor's
    values is MS201); and indexing a
    `list(...)` of such a value after `.append` grew it, also one a helper returns (the name
    holds the None `append` returned). Of a tuple a helper, method or sub-cell returns
    (every `return` a tuple display of one length), only the items holding such a value
    are Python objects: `out, tbl = self.lookup(ids)` or `self.lookup(ids)[0]` takes
    one item, and MindSpore keeps the others graph values. Also JIT Fallback objects: an
    f-string of a run-time value (`x + len(f"{float(x.mean()):.3f}") * 0`), a tensor built
    from run-time numbers that are not a tensor (`ms.Tensor([x[0, j].item() for j in
    range(3)], ms.float32)`, `ms.Tensor(float(x.sum()))`, `ms.Tensor([toks[-1]], ms.int32)` of
    a list grown with `int(logits.argmax())`; `toks[0]` of `toks = [1]` compiles), and `self.<attr>` read in a
    compiled function that stores a Python number on it (`self.calls += 1`, `self.n =
    self.n + 1`, `self.ratio = 0.5`, `self.ratio = 1.0 - 0.1 * self.calls`, `self.alpha =
    min(1.0, self.step / k)`, `self.seen += t` with `t = ids.shape[1]`, a shape's int; read
    before or after the store; a tensor stored is read back as
    the tensor), or on an object held on `self` (`self.cfg.ratio = 0.5`, then
    `self.cfg.ratio` read), in the `construct` of a top cell (or of a sub-cell or a cell a
    jit function calls, when the arithmetic uses a tensor argument of that `construct`: an
    optimizer's `g` from its tuple of gradients compiles there) such a number attribute in
    arithmetic that is an operand of the value `ops.assign` gives a Parameter
    (`ops.assign(p, p - self.cur_lr * g)` with `self.cur_lr = self.cur_lr * self.gamma`:
    "Data type conversion is not supported for a 'Parameter' ... Float64"; `(m - self.mean)
    / self.n`, `ops.assign_sub` / `ops.assign_add` of it compile); `ops.cat` / `ops.concat` of
    slices bounded by such a number (`ops.cat([q[:, :ptr], f.T, q[:, ptr + b:]], axis=1)` with
    `ptr = self.queue_ptr`, a queue pointer the function moves on) given to `ops.assign`,
    `ops.assign_add` or `ops.assign_sub` of a Parameter, also through arithmetic (the slice
    alone, or the joined value returned or stored by `q[:, :] = ...`, compiles); a plain Tensor attribute read before
    the function stores it again, also as an item of a tuple target (`out, self.hidden =
    self.gru(x, self.hidden)`), and so an attribute `__init__` sets to `None` or a tuple (an
    RNN state) read before the first store or after a store of a tuple (`out, state =
    self.lstm(x, self.state); self.state = state`: "'hx' must be Tuple, but got
    Tensor[Float64]"; `self.dense(self.state[0])`; written/heldout42c probes `fix42c_hx_*`;
    not under `if self.state is not None:` while `__init__` leaves it `None`), and given to `ops.minimum` (`self.min_val =
    ops.minimum(self.min_val, x.min())`: "the input type must be same ... Float64";
    `ops.maximum` compiles); an item of a tuple or list of Python numbers read with a Tensor index
    (`TABLE[self.step]`, `self.lr_table[step]`: LAX reads it at run time, a float64 value of
    unknown shape), and such a float given to `ops.assign_sub` / `ops.assign_add` of a
    Parameter (`ops.assign_sub(p, lr * g)`: "Data type conversion is not supported for a
    Parameter ... Float64"), and so a tensor `ms.Tensor(v, dtype)` (spelled as a module
    attribute) built from a number read from a run-time tensor (`int(p)`, `float(t)`,
    `t.item()`, through arithmetic: LAX builds it as Float64 whatever the dtype) given to
    `ops.assign` / `ops.assign_add` / `ops.assign_sub` (the bare `Tensor(v, ms.int32)` and
    `ops.scalar_to_tensor(v, dtype)` compile; written/heldout34b probes `fix34d_rt_*`,
    `fix34d_int_ptr_*`); `min` / `max` of an item of a module-level dict the function
    stores into (`STATE["calls"] += 1`, then `max(0.0, 1.0 - 0.1 * STATE["calls"])`). A
    name read in a loop body holds what the body binds to it after the read (in a `for` over
    `reversed(...)`, also in the statement that reads it), too (from the second pass on: `h = self.cell(x, h)` then `x =
    ...` of such a value; `out = lat + ops.interpolate(out, ...)`). The variable of a `for`
    over `reversed(...)` of a list or tuple a comprehension builds from sub-cell outputs
    (`laterals = [l(f) for l, f in zip(self.lateral, feats)]`, `tuple(...)` of one) is such a
    value: LAX runs `reversed` by JIT Fallback at run time (an FPN top-down loop `for lat in
    reversed(laterals[:-1])` giving `lat` or the carried `out` to `ops.interpolate`,
    `ops.repeat_interleave`, `nn.Dense`, `nn.LayerNorm`, `ops.gelu`, `ops.zeros_like` fails;
    adding, `ops.cat`, `ops.relu`, an `nn.Conv2d` and reading `lat.shape` compile, and so do
    `laterals[-2::-1]` and `reversed` of a `construct` argument). Also
    `ops.interpolate(x, scale_factor=..., recompute_scale_factor=True)` in a function where
    `min` / `max` takes a number attribute the function stores on `self` (`self.step += 1`,
    `min(1.0, self.step / k)`: "'int' object is not iterable"). And a sink: a
    `functools.partial` of such a function built in the compiled function itself (`act =
    functools.partial(ops.leaky_relu, alpha=0.1); act(v)`; a module-level partial or one
    held on `self` is called as Python and compiles). Also, over a value known only at run
    time: `sum` / `max` / `min` / `len` of a list comprehension or generator iterating such a
    value (inline or through a name; LAX builds it as a Python object, not a sequence), such a
    comprehension inside the body of a `for` loop (not one over the fallback value itself,
    whose body MindSpore compiles no pass of), `ops.stack` / `max` / `min` of a list grown only
    in a `for` over such a value (empty while compiling), `max` / `min` of a comprehension of
    items read from one (`[v[0, j].item() for j in range(3)]`), a list of numbers read one by
    one from such a tensor (`s = [float(r) for r in v.sum(axis=1)]`, `[r.sum().item() for r in
    v]`: one placeholder number while compiling) indexed (`s[0]`: "'float' object is not
    subscriptable"), sliced (`s[:2]`: "unsupported operand type(s) for +: 'float' and
    'list'" whatever reads the slice) or iterated by a `for`, a comprehension or `zip` / `enumerate` ("'float'
    object is not iterable", "The pointer[seq_abs] is null"; returned as it is it compiles,
    and so does `[r * 2 for r in v]` indexed), and a fill value read from one
    by `.item()` or a method (`float(s)` with `s = v.sum()`); not a fill value whose chain
    starts at a call of a Python library function given only functions and lists
    (`functools.reduce(lambda a, b: a + b, [x, x, x])`: no tensor input gives it a dtype, and
    MindSpore keeps the cast). The text of run-time values made in a comprehension
    (`', '.join(f'{s:.2f}' for s in vals)` of `.item()`s) and the rows of a fallback value
    collected by one (`[c for c in v.T]`) are such values too. A value given to a sub-cell
    reaches the base class's method it runs through `super().construct(x)` or
    `Base.construct(self, x)`.
    Also a `mint` function MindSpore dispatches as a C++ overload (`mint.clamp`, `mint.clip`,
    `mint.add`, `mint.max`, `mint.where`, `mint.nn.functional.gelu`...: the 31 measured in
    `ms_keyword_overloads.json`) given such a value with keyword arguments that are all
    constants (`mint.clamp(x, min=-1.0, max=1.0)`, `mint.div(x, 2.0, rounding_mode='floor')`),
    also `x` a parameter a caller gives one: "Illegal type in the graph: AbstractKeywordArg(key:
    min, ...)". One tensor among the keywords (`mint.mul(x, other=t)`, `mint.add(x, other=t,
    alpha=2.0)`, the value itself as `input=`) and it compiles. By position, and
    `mint.sum` / `mint.mean` / `mint.nn.functional.softmax`, `ops.clamp` and Tensor methods
    by keyword, compile, and so does the keyword call anywhere in a program that reads a dict
    display after storing an item into it under a tensor `if` (`d = {'n': 0}; if x.sum() > 0:
    d['n'] += 1; x = x + d['n']`). Also a Cell (a sub-cell, a module-level Cell, or a
    method or module function given `self` that calls a sub-cell) called among the arguments
    of a call whose callee is a bare name the graph cannot compile: a builtin it does not
    implement (`dict(logits=self.head(h), ...)`, `sorted(...)`, `reversed(...)`, `set(...)`,
    `any(...)`) or a function imported by name from `typing`, `copy` or `math`
    (`cast(Tensor, self.fc(x))`), in a file that sets GRAPH_MODE (in PYNATIVE_MODE an
    `@ms.jit` function runs it eagerly and compiles):
    LAX runs the whole call, arguments included, as one JIT Fallback script, so the Cell
    would run as Python in the middle of compiling ("Nested execution during JIT execution
    for 'Dense.construct' is not supported"). The same function reached as a module
    attribute (`typing.cast(...)`, `copy.copy(...)`, `math.sqrt(...)`) gets its arguments
    computed in the graph first and compiles.
    Not flagged: a call of `ops.ones_like`, `ops.zeros_like`, `ops.leaky_relu`,
    `ops.threshold` or `ops.cast` (the measured rows of `ms_unused_results.json`) whose result
    nothing reads (an expression statement, a name never read or rebound first, read only
    in a branch MindSpore folds away): MindSpore infers a graph from its outputs and never
    infers such a call. Most other functions and cells (`ops.pad`, `ops.gelu`,
    `ops.clip_by_value`, `nn.Dense`) fail even unused.

    ## Why is this bad?
    A fallback result is an opaque Python object while compiling: arithmetic on it works,
    but its shape and dtype are unknown, and MindSpore fails inside its own code:
    `Failed to infer for primitive:DtypeToEnum`, `'int' object has no attribute '__len__'`,
    `'int' object is not subscriptable`, `negative dimensions are not allowed`. A function
    that checks the Python type of an argument while compiling sees such a value as a
    Tensor: `ops.gumbel_softmax(logits, tau=self.tau)` in a `construct` that also stores
    `self.tau = self.tau * decay` (before or after the call) fails with "For
    'gumbel_softmax', the type of 'tau' should be 'float', but got type 'Tensor'" (also
    `hard`, `dim`).

    ## Example
    ```python
    def construct(self, x):
        n = len(x.asnumpy().tolist())
        x = x + n * 0.0
        return self.dense(x)
    ```

    ## Use instead
    ```python
    def construct(self, x):
        n = x.shape[0]
        x = x + n * 0.0
        return self.dense(x)
    ```

    ## Fix safety
    No automatic fix.

    ## References
    - A list (`[]`) or dict (`{}`) filled only in a `for` over such a value, then read at a
      constant index (`outs[0]`, `d[0]`): written/lax probes `genfresh38_it_*` ("cannot get
      item by index from an empty sequence", "The key 0 does not exist in the dict:{}"; over
      a graph tensor they compile); fresh v6 seed 12001212. A fallback value held in a dict
      display (`sum(feats.values())`): fresh v6 seed 12001188. A comprehension run as Python
      (given to `ms.Tensor` or `collections.Counter`) in a `while` on a tensor is not the
      looped comprehension below: it fails only when it runs (MS193 / MS173; written/lax
      probes `genfresh38_wt_*`, `genfresh38_rt_*`).
    - Unused results: written/lax probes `fix35c_dte_local_unused`, `fix36b_un_*`,
      `fix36b_uf_*`, `fix36b_ur_*`, `fix36b_uc_*`.
    - A list of numbers read one by one from such a tensor, indexed or iterated: written/lax
      probes `fix34c_fx_*`, `fix33a_fx_*` and fresh v6 seed 12000042 (a loop carrying the
      value through two sub-cells first).
    - Comprehensions and loops over such values: written/gen18 probes `v22_it_*`, `v22_ab_*`,
      `v22_hl_*`, `v22_fl_*` ("Cannot iterate over a scalar tensor", "The object is not
      iterable", "The pointer[seq_abs] is null", "The pointer[abs_base] is null", "max() arg
      is an empty sequence", IsDimUnKnown, FillV2); `ms_sum` / `ms_max_one_element` in
      mindspore/graph/_parse/standard_method.py (2.10).
    - `ops.norm` of a value computed from `math.sqrt` / `math.cos` of a tensor or from
      `x.asnumpy()`: written/heldout25b cases `fuse_madgwick_imu_update`,
      `r2_fuse_mahony_math_sqrt_augassign` and probes `fix25b_m_*`.
    - RULES.md, section 2 (JIT Fallback at LAX); target shapes measured with the written
      probes `lax` (`sh_a`, `sh_b`, `sh_n` rejected under LAX; `int(t)` in a shape, an axis,
      `tile` multiples or a `one_hot` depth compiles: `sh_c`...`sh_m`).
    - `mint` overloads by keyword: written/lax probes `fix32e_fkw_*` and `fix32e_kw_*`;
      not of a namedtuple built from keyword arguments only (`Out(value=x)`: written/lax
      probes `genfresh37_nt_*`, fresh v6 seed 12001088).
    - A layer a sub-cell holds because every construction gives its `__init__` the same one
      (`shared = nn.Dense(3, 3)`; `Reader(shared)`): written/lax probes `genfresh37_sh_*`,
      fresh v6 seed 12001098.
      (of a graph tensor all compile), difftest seeds 12000004, 12000102.
    - `int(t)` / `float(t)` / `t.item()` of a tensor computed from `Tensor(i, ms.int32)` of a
      run-time number `i = int(scores.argmax())` (greedy picking: `scores = scores -
      ops.one_hot(Tensor(i, ms.int32), ...)` then `int(scores.argmax())` again, in a loop or
      not): "Cannot join the return values of different branches ... dtype1 = Int64, dtype2 =
      Any" (written/heldout33a case `r2_tensor_of_list_int_argmax_loop`, probes
      `fix33e_am_*`; the typed tensor returned, added, given to `ops.one_hot` / `ops.gather`,
      and `Tensor(picked, ms.int32)` of such numbers compile; so do reads of what a constant
      tensor or the number itself scales). MS246's stores on a plain object the graph was
      given, read back and given to `nn.Dense`: probes `fix33e_do_*`. A Cell called inside
      `dict(...)`: written/heldout34a case `r2_flags_dict_returned_from_jit_function` and
      probes `fix34f_nx_*` (the Cell's result bound to a name first, `ops.relu(h)` or
      arithmetic among the arguments, and a dict literal compile at LAX), `fix35d_nx_*` (GRAPH_MODE
      only: the same in PYNATIVE_MODE `@ms.jit` code compiles, with a gradient or without) Other
      callees: written/everyday probes `fix35g_*` (`cast`, `sorted`, `reversed`, `set`, `any`,
      `dict` given a list, `copy` and `sqrt` imported by name fail; `typing.cast`, `copy.copy`,
      `math.sqrt` and a `cast` of a name bound first compile).
    - `for` over `reversed(...)` of a comprehension of sub-cell outputs: written/heldout37a
      cases `swin_decoder_reversed_celllist_iteration`, `r2_fpn_reversed_list_*` and probes
      `fix37e_rv_*`, `fix37e_rv2_*` (a list display or a list grown by `append` crashes the
      LAX compile instead; a carry changed by `repeat_interleave` without the item fails too,
      not flagged).
    - `.reshape` of a product `a @ b` of such a value: written/heldout39b case
      `eigencam_numpy_svd_in_construct` and probes `fix40a_np_*`, `fix40a_mm_*`.
    - A `self` attribute read across a join after a store: written/heldout38b probes
      `fix40a_st_*`, `fix40a_st2_*` and cases `opennmt_decoder_state_tensor_attr_assign`,
      written/heldout39b `mifgsm_momentum_stored_on_self` (a helper method reading the
      attribute gets its `__init__` value instead, `fix40a_st2_helper_read_dense`: not flagged).
    - `ops.gumbel_softmax`'s `tau` / `hard` given a number stored on `self` in `construct`:
      written/heldout40c cases `fbnet_tau_anneal_self_mutation`,
      `r2_fbnet_tau_mutated_before_gumbel` and probes `fix40e_tau_*` (by keyword or position,
      read before or after the store, a constant stored; a local `tau` computed from the
      attribute, or another attribute stored, compile).
    - Not a query: `ops.bucketize(x, v.asnumpy().tolist())`, whose `boundaries` list only goes
      to the kernel: it compiles under LAX, and so do `nn.Embedding` / `ops.zeros_like` of its
      result (written/heldout41c case `fs2_variance_adaptor_target_none`, probes `fix41c_fb_*`).
    """

    nodes = (ast.Call, ast.Attribute, ast.Subscript, ast.ListComp, ast.GeneratorExp, ast.For, ast.Return)

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        # not a generator itself: most files have no fallback call, and every call,
        # attribute and subscript of their compiled code costs a lookup, not a generator
        scope, func = ctx.scope, ctx.function
        if scope is None or scope.level != "lax" or func is None:
            return ()
        if type(node) is ast.Return:
            return self._sequential_block_return(node, ctx, func)
        if type(node) is ast.Call and type(node.func) is ast.Name:
            callees = ctx.cache.get(_SCRIPTED_CALLEES_KEY)
            if callees is None:
                callees = _scripted_callees(ctx)
            if node.func.id in callees:
                scripted = self._cell_called_in_whole_script(node, ctx, func)
                if scripted is not None:
                    return [scripted]
            if node.func.id == "dict" and node.keywords:
                return ()  # `dict(k=...)` is only this check's (as before the check was generalised)
        if type(node) is ast.Call and type(node.func) is ast.Attribute and node.func.attr in IN_PLACE_UPDATES:
            found = self._float64_update(node, ctx, func)
            if found is not None:
                return [found]
        if not has_fallback(ctx):
            return ()
        return self._check(node, ctx, func)

    def _sequential_block_return(self, node: ast.Return, ctx: Context, func: ast.AST) -> list[Diagnostic]:
        """The `construct` of a Cell of this file placed in an `nn.SequentialCell(...)` returning
        a JIT Fallback value that the next block (past MindSpore blocks that do not read it:
        `nn.ReLU`) is a MindSpore cell reading its input's shape or dtype: the chain is
        `Dense(Leaky(x))`. Measured (written/heldout41a cases
        `r2_init_hidden_sequential_spk_only`, `snntorch_init_hidden_attr_mem`, probes
        `fix43a_sq_*`): snnTorch's `init_hidden` Leaky storing a Tensor `self.mem` in
        `construct`, followed by `nn.Dense` (also past `nn.ReLU` or a Cell of the file passing
        its input on, `x * self.scale`) or `nn.LayerNorm` in an `nn.SequentialCell` (built at
        module level, called there or from an `@ms.jit` function, or held by a Cell), fails
        under LAX ("'int' object has no attribute '__len__'"); the Leaky last, followed by
        `nn.ReLU` alone or by a Cell of the file only, compiles."""
        if node.value is None or getattr(func, "name", None) != "construct" or not ctx.mentions("SequentialCell"):
            return []
        if type(node.value) is ast.Tuple:
            return []  # a tuple is not what a next block takes (`return spk, mem` of the last one)
        if not has_fallback(ctx):
            return []
        o = OpaqueValues(ctx)
        successor = o.sequential_successor(func)
        if successor is None or not o.value(node.value, func, frozenset()):
            return []
        cell, built = successor
        return [
            ctx.diagnostic(
                self,
                node,
                f"this Cell returns `{_short_segment(ctx, node.value)}`, a JIT Fallback value, and the next block of the `nn.SequentialCell` built at line {built.lineno}, `{cell.rpartition('.')[2]}`, reads the shape or dtype of its input (MindSpore: 'int' object has no attribute '__len__', or for `nn.LayerNorm` negative dimensions are not allowed); keep the state in a Parameter, or compute it with graph tensors",
            )
        ]

    def _cell_called_in_whole_script(self, node: ast.Call, ctx: Context, func: ast.AST) -> Diagnostic | None:
        """`dict(logits=self.head(h), ...)`, `cast(Tensor, self.fc(x))`, `sorted([...])` under
        LAX: a call whose callee is a bare name MindSpore's parser cannot compile
        (`_whole_call_script`; written/everyday probes `fix35g_*`: sub-cells, sub-cells of
        sub-cells, module-level Cells, a method or a module function given `self` that calls a
        sub-cell) is run whole, its arguments' source included, as one JIT Fallback script, so the Cell
        written among them would run as Python in the middle of compiling (measured,
        written/heldout34a case `r2_flags_dict_returned_from_jit_function`, probes
        `fix34f_nx_*`: "Nested execution during JIT execution for 'Dense.construct' is not
        supported", a module-level Cell or a sub-cell; the Cell's result bound to a name
        first, `ops.relu(h)` or arithmetic among the arguments, and a dict literal compile at
        LAX; STRICT refuses any such `dict(...)` of graph values, MS131). Only in GRAPH_MODE:
        there calling a Cell compiles it, which cannot start while another graph compiles and
        runs; in PYNATIVE_MODE (set, or MindSpore's default when the file never sets a mode)
        an `@ms.jit` function's fallback script runs the Cell eagerly and it compiles, with a
        gradient or without (measured, heldout34a probes `fix35d_nx_*`: GRAPH_MODE fails
        whether the Cell is called directly, through `@ms.jit`, `ms.value_and_grad`,
        `ops.GradOperation` or a second Cell of the file; PYNATIVE_MODE `@ms.jit` functions,
        `@ms.jit` constructs and train steps compile; heldout30a case
        `r2_registry_loss_dict_explicit_keys_train_step`)."""
        callee = _whole_call_script(node, ctx)
        if callee is None:
            return None
        for a in [*node.args, *(k.value for k in node.keywords)]:
            for n in ast.walk(a):
                if type(n) is ast.Call and _runs_a_cell(n, ctx, func):
                    return ctx.diagnostic(
                        self,
                        n,
                        f"under LAX MindSpore runs this `{callee}(...)` call, arguments included, as Python (JIT Fallback), so the Cell call `{ctx.segment(n)}` would run inside it (MindSpore: Nested execution during JIT execution ... is not supported): bind `{ctx.segment(n)}` to a name first"
                        + (", or write a dict literal" if callee == "dict" else ""),
                    )
        return None

    def _float64_update(self, node: ast.Call, ctx: Context, func: ast.AST) -> Diagnostic | None:
        """`ops.assign(p, ms.Tensor(int(p) + 1, ms.int32))`: the tensor of a run-time number is
        Float64 under LAX, and a Parameter's in-place update does not convert it."""
        if len(node.args) < 2 or type(node.args[1]) is not ast.Call:
            return None
        if (ctx.qualname(node.func) or "").rpartition(".")[0] != "mindspore.ops":
            return None
        read = float64_tensor_of_number(node.args[1], func, ctx)
        if read is None:
            return None
        return ctx.diagnostic(
            self,
            node.args[1],
            f"`{ctx.segment(node.args[1])}` is built from `{ctx.segment(read)}`, a number read from a tensor at run time: LAX builds it by JIT Fallback as a Float64 tensor whatever dtype it is given, and the in-place `{ctx.segment(node.func).rpartition('.')[2]}` of a Parameter cannot convert it (MindSpore: Data type conversion is not supported for a 'Parameter' ... Float64); use `ops.scalar_to_tensor(v, dtype)`, or keep the value a tensor",
        )

    def applies(self, ctx: Context) -> bool:
        # `check`'s first test, once per file: a LAX scope and a fallback call somewhere
        return any(s.level == "lax" for s in ctx.scopes.scopes.values()) and (has_fallback(ctx) or "dict(" in ctx.text)

    def _check(self, node: ast.AST, ctx: Context, func: ast.AST) -> Iterable[Diagnostic]:
        o = OpaqueValues(ctx)
        if type(node) is ast.Call and type(node.func) is ast.Attribute and node.func.attr == "reshape":
            product = _matmul_of_fallback(node.func.value, func, o, ctx)
            if product is not None:
                yield ctx.diagnostic(
                    self,
                    node,
                    f"`{ctx.segment(product)}` multiplies a JIT Fallback value with `@`: MindSpore compiles the "
                    "operator as its own MatMul of the placeholder the value holds while compiling, so the product "
                    f"does not have the array's shape and `{ctx.segment(node.func)}(...)` fails (MindSpore: "
                    "proposed_shape ... is invalid for input of size 1); use `np.matmul(a, b)` or `np.dot(a, b)`, "
                    "or compute with tensors",
                )
                return
        if type(node) is ast.For:
            why = o.placeholder_iterated(node.iter, func, frozenset())
            if why:
                yield ctx.diagnostic(self, node.iter, why)
            return
        if isinstance(node, (ast.ListComp, ast.GeneratorExp)):
            why = o.looped_comprehension(node, func, frozenset()) or o.placeholder_iterated(node.generators[0].iter, func, frozenset())
            if why:
                yield ctx.diagnostic(self, node, why)
            return
        if isinstance(node, ast.Attribute):
            if (
                node.attr == "dtype"
                and isinstance(node.ctx, ast.Load)
                and _dtype_given_to_op(node, func, ctx)
                and not _dtype_to_unused_call(node, func, ctx)
                and o.value(node.value, func, frozenset())
            ):
                yield ctx.diagnostic(
                    self,
                    node,
                    f"`{ctx.segment(node.value)}` comes from a JIT Fallback call; MindSpore cannot give the dtype of such a value to an operator (DtypeToEnum)",
                )
            return
        if isinstance(node, ast.Subscript):
            v = node.value
            if (
                isinstance(v, ast.Call)
                and ctx.qualname(v.func) in _SHAPE
                and v.args
                and OpaqueValues(ctx, none_joins=False).value(v.args[0], func, frozenset())
            ):
                yield ctx.diagnostic(
                    self,
                    node,
                    f"`{ctx.segment(v.args[0])}` comes from a JIT Fallback call; MindSpore cannot index the shape of such a value",
                )
            else:
                why = o.failed_index(node, func, frozenset()) or o.emptied_index(node, func)
                if why:
                    yield ctx.diagnostic(self, node, why.format(name=ctx.segment(node.value)))
            return
        assert isinstance(node, ast.Call)
        f = node.func
        read = number_read(node)
        if read is not None and "ensor(" in ctx.text and analyzer(ctx).kind(read, func) == Kind.TENSOR:
            built = from_typed_scalar_tensor(read, func, ctx)
            if built is not None:
                yield ctx.diagnostic(self, node, _TYPED_SCALAR_MESSAGE.format(read=ctx.segment(node), built=ctx.segment(built)))
                return
        if type(f) is ast.Attribute and f.attr == "get" and type(f.value) is ast.Name and o.dict_read_as_tuple(f.value, func):
            yield ctx.diagnostic(
                self,
                node,
                _TUPLE_DICT_GET_MESSAGE.format(name=f.value.id),
            )
            return
        shape = _shape_argument(node, ctx)
        if (
            shape is not None
            # `gen.reshape(self.m.shape)` with `self.m` stored under an `if` (a Python object
            # after the join) compiles: the object is a Tensor whose shape MindSpore reads
            # (measured, written/heldout17a probe `st18_memo_ifnone_shape`)
            and not (isinstance(shape.value, ast.Attribute) and branch_stored(shape.value, func, ctx))
            and (
                o.value(shape.value, func, frozenset())
                # a tensor sliced by a bound JIT Fallback computes has an unknown rank too
                or (_shape_joined(ctx.parent(shape)) is shape and OpaqueValues(ctx, tensor_index=True).value(shape.value, func, frozenset()))  # type: ignore[arg-type]
            )
        ):
            yield ctx.diagnostic(
                self,
                node,
                f"the shape `{ctx.segment(shape)}` is read from a JIT Fallback value, unknown while compiling; MindSpore cannot build the tensor from it (use `ops.shape` of the tensor itself)",
            )
            return
        if ctx.qualname(node.func) == "mindspore.ops.interpolate" and _recomputed_scale(node):
            at = _min_max_of_stored_number(func, ctx)
            if at is not None:
                yield ctx.diagnostic(
                    self,
                    node,
                    f"`ops.interpolate(..., recompute_scale_factor=True)` in a function whose `{ctx.segment(at.func)}` (line {at.lineno}) takes a number attribute it stores on `self`: LAX interprets that `{ctx.segment(at.func)}`, and MindSpore then fails inside interpolate's size computation (\"'int' object is not iterable\"); keep the counter in a Parameter, or pass `size=` instead of `scale_factor`",
                )
                return
        found = _stored_attribute_sink(node, func, ctx)
        if found is not None:
            yield ctx.diagnostic(self, node, found)
            return
        if (
            ctx.qualname(node.func) in _IN_PLACE
            and len(node.args) >= 2
            and reads_tables(ctx)
            and from_float_table(node.args[1], func, ctx, 0)
        ):
            yield ctx.diagnostic(
                self,
                node,
                f"`{ctx.segment(node.args[1])}` is computed from a Python float read from a table with a Tensor index: LAX reads it at run time as a float64 value, and an in-place update of a float32 Parameter cannot take it (MindSpore: Data type conversion is not supported for a 'Parameter' ... Float64); keep the table as a float32 tensor (`ms.Tensor(table, ms.float32)`) and index that",
            )
            return
        if node.keywords and ctx.qualname(node.func) in _keyword_overloads():
            kw = OpaqueValues(ctx, keyword_namedtuples=False)
            env = kw.opaque_params(func)  # also a parameter a caller gives such a value (seed 12000004)
            given = next((a for a in _call_arguments(node) if kw.value(a, func, env)), None)
            if (
                given is not None
                and _constant_keywords_only(node, func, ctx)
                and not reads_run_time_dict(ctx)
            ):
                yield ctx.diagnostic(
                    self,
                    node,
                    f"`{ctx.segment(node.func)}` is given `{ctx.segment(given)}`, a JIT Fallback value, and keyword arguments: under LAX MindSpore runs this overloaded `mint` function on the Python object and cannot pass it the keywords (\"Illegal type in the graph: AbstractKeywordArg\"); pass them by position, or give it a graph tensor",
                )
                return
        why = OpaqueValues(ctx, tensor_index=True, while_joins=True).sink(node, func, frozenset(), 0)
        if not why:
            why = OpaqueValues(ctx, tensor_index=True, typed_index=True).typed_index_sink(node, func)
        if why:
            yield ctx.diagnostic(self, node, why)


def _given_to_init(cls: ast.ClassDef, attr: str, ctx: Context) -> ast.Call | None:
    """The layer `self.<attr> = <param>` holds when every `Cls(...)` call of the file gives
    `__init__` the same one: a call, or a name bound once to a call in the calling function
    (`shared = nn.Dense(3, 3)`, then `Reader(shared)` twice). Measured (written/lax probes
    `genfresh37_sh_*`): such an `nn.Dense` given a JIT Fallback value fails under LAX as one
    built in the sub-cell's own `__init__` does ("'int' object has no attribute '__len__'";
    fresh v6 seed 12001098); an `nn.ReLU` compiles."""
    owner = ctx.scopes.info.classes.get(cls.name)
    param = owner.attr_params.get(attr) if owner is not None else None
    init = owner.methods.get("__init__") if owner is not None else None
    if param is None or not isinstance(init, ast.FunctionDef):
        return None
    params = [p.arg for p in init.args.args[1:]]
    from npu_lsp.rules.graphmode.values import instances

    made: ast.Call | None = None
    for call in instances(ctx).instantiations(cls.name):
        if any(isinstance(x, ast.Starred) for x in call.args):
            return None
        given = next((k.value for k in call.keywords if k.arg == param), None)
        if given is None and param in params and params.index(param) < len(call.args):
            given = call.args[params.index(param)]
        if isinstance(given, ast.Name):
            given = analyzer(ctx).single_assignment(given.id, ctx.enclosing_function(call, lambdas=False))
        if not isinstance(given, ast.Call):
            return None
        if made is not None and node_key(given) != node_key(made):
            return None
        made = made or given
    return made


#: in-place updates of a Parameter that fail on a value computed from a number attribute the
#: function stores on `self` (measured, written/heldout36d probes `fix36d_at_*`: `ops.assign`
#: fails; `ops.assign_sub(p, self.lr * x)` and `ops.assign_add` compile, probes `fix36d_at2_*`)
_STORED_NUMBER_SINKS = frozenset({"mindspore.ops.assign"})
#: functions that fail on a plain Tensor attribute the function stores again, read before the
#: store (measured: written/heldout36a case `r2_quant_observer_rebind_tensor_attr`, heldout36d
#: probes `fix36d_at_tensor_minimum_*`; `ops.maximum(self.m, x.max())` and `self.m + x.sum()`
#: compile, probes `fix36d_at2_tensor_maximum_xmax`, `fix36d_at_tensor_add_xsum`)
_SAME_DTYPE_PAIRS = frozenset({"mindspore.ops.minimum"})


def _stored_attribute_sink(node: ast.Call, func: ast.AST, ctx: Context) -> str | None:
    """Under LAX, a `self` attribute the function stores again is read as a Python object
    whose tensor is Float64: a Python number (`self.cur_lr = self.cur_lr * self.gamma`,
    `self.n = self.n + 1`, read before or after the store) in the value of an in-place update
    of a Parameter (`ops.assign(p, p - self.cur_lr * g)`: "Data type conversion is not
    supported for a 'Parameter' ... Float32 ... Float64"), or a plain Float32 Tensor `__init__`
    builds, read before the store (`self.m = ops.minimum(self.m, x.min())`), given to
    `ops.minimum` ("For primitive[Minimum], the input type must be same ...
    Float32 ... Float64"). Measured: the same read times a tensor, returned, added to a
    tensor, given to `ops.assign_sub` / `ops.assign_add` or `ops.maximum` compiles; never
    stored in the function, or only another attribute stored, compiles. In the `construct`
    of a top cell (`top_cell_construct`); in the `construct` of a cell compiled inside
    another graph (a sub-cell, a cell a jit function calls) only when the value is computed
    with a tensor argument of that `construct` itself (`_with_tensor_argument`)."""
    q = ctx.qualname(node.func)
    if q in _JOINED_SLICE_SINKS and len(node.args) >= 2 and top_cell_construct(func, ctx):
        found = _joined_stored_slice(node.args[1], func, ctx)
        if found is not None:
            joined, bound_by = found
            return (
                f"`{ctx.segment(joined)}` joins slices bounded by `{ctx.segment(bound_by)}`, a Python number this "
                "function stores on `self`: under LAX the store runs as Python, the joined tensor is built as a "
                f"Float64 JIT Fallback value, and the in-place `{q.rpartition('.')[2]}` of a float32 Parameter "
                "cannot take it (MindSpore: Data type conversion is not supported for a 'Parameter' ... Float64); "
                "keep the pointer in a Parameter (`int(self.ptr[0])`), or do not store it in compiled code"
            )
    if q not in _STORED_NUMBER_SINKS and q not in _SAME_DTYPE_PAIRS:
        return None
    top = top_cell_construct(func, ctx)
    if not top and not _inner_cell_construct(func, ctx):
        # a helper method of the cell (written/heldout21b case `swa_n_averaged_python_int`)
        # compiles with the same store and update
        return None
    if q in _STORED_NUMBER_SINKS:
        if len(node.args) < 2:
            return None
        read = _mixed_stored_number(node.args[1], func, ctx)
        if read is None or not (top or _with_tensor_argument(node.args[1], func, ctx)):
            return None
        return (
            f"`{ctx.segment(read)}` is a Python number this function stores on `self`: under LAX the store runs "
            f"as Python and the attribute is read back as a Float64 value, which the in-place "
            f"`{q.rpartition('.')[2]}` of a float32 Parameter cannot take (MindSpore: Data type conversion is not "
            "supported for a 'Parameter' ... Float64); keep it in a Parameter (`ops.assign(self.lr, ...)`), or do "
            "not store it in compiled code"
        )
    if q in _SAME_DTYPE_PAIRS and len(node.args) >= 2 and restored_tensor_attrs(ctx):
        o = OpaqueValues(ctx)
        for i, arg in enumerate(node.args[:2]):
            if not (top or _with_tensor_argument(node.args[1 - i], func, ctx)):
                continue
            if type(arg) is ast.Attribute and o._tensor_attr_stored(arg, func, frozenset(), 0) is True:
                return (
                    f"`{ctx.segment(arg)}` is a plain Tensor attribute this function stores again: under LAX the "
                    f"store runs as Python and the read before it is a Float64 value, and `{q.rpartition('.')[2]}` "
                    f"needs both inputs of one dtype (MindSpore: For primitive[{q.rpartition('.')[2].capitalize()}], "
                    "the input type must be same ... Float64); keep the running value in a Parameter and update it "
                    "with `ops.assign`"
                )
    return None


#: in-place updates of a Parameter that fail on `ops.cat` of slices bounded by a number
#: attribute the function stores on `self` (measured, written/heldout37b probes `fix38a_qp_*`)
_JOINED_SLICE_SINKS = frozenset({"mindspore.ops.assign", "mindspore.ops.assign_add", "mindspore.ops.assign_sub"})
#: joining functions whose result is then a Float64 JIT Fallback value (`fix38a_qp_*`)
_JOINS = frozenset({"mindspore.ops.cat", "mindspore.ops.concat"})


def _joined_stored_slice(e: ast.expr, func: ast.AST, ctx: Context) -> tuple[ast.Call, ast.Attribute] | None:
    """The `ops.cat([...])` / `ops.concat((...))` call `e` is, or is computed from by
    arithmetic (directly or through a name bound once in the function), when an item of its
    display is a tensor sliced or indexed by a number attribute the function stores on `self`
    (`_stored_number_read`), with that read. Measured on 2.10 (written/heldout37b case
    `albef_queue_ptr_python_int_attr`, probes `fix38a_qp_*`): with `ptr = self.queue_ptr` and
    `self.queue_ptr = ...` anywhere in `construct` (a constant store too, before or after),
    `ops.assign(q, ops.cat([q[:, :ptr], f.T, q[:, ptr + b:]], axis=1))` fails under LAX, also
    through `* 1.0`, with `ops.assign_add` or a tuple given to `ops.concat`; the slice alone
    (`ops.assign(q, q[:, ptr:ptr + 6] * 0.5)`), the joined value returned or stored with
    `q[:, :] = ...`, constant bounds, and no store of the attribute compile."""
    todo = [e]
    seen = 0
    while todo and seen < 8:
        n = todo.pop()
        seen += 1
        if isinstance(n, ast.Name):
            bound = analyzer(ctx).single_assignment(n.id, func)
            if bound is not None:
                todo.append(bound)
        elif isinstance(n, ast.BinOp):
            todo += (n.left, n.right)
        elif isinstance(n, ast.UnaryOp):
            todo.append(n.operand)
        elif isinstance(n, ast.Call) and n.args and (ctx.qualname(n.func) or "") in _JOINS:
            items = n.args[0]
            if not isinstance(items, (ast.List, ast.Tuple)):
                continue
            for item in items.elts:
                if not isinstance(item, ast.Subscript):
                    continue
                for b in _slice_bounds(item.slice):
                    read = _stored_number_read(b, func, ctx, 0)
                    if read is not None:
                        return n, read
    return None


def _slice_bounds(s: ast.expr) -> list[ast.expr]:
    """The bounds and indices of a subscript's slice (`[:, a:b]` gives `a`, `b`)."""
    parts = s.elts if isinstance(s, ast.Tuple) else [s]
    out: list[ast.expr] = []
    for p in parts:
        if isinstance(p, ast.Slice):
            out += [b for b in (p.lower, p.upper, p.step) if b is not None]
        else:
            out.append(p)
    return out


def _inner_cell_construct(func: ast.AST, ctx: Context) -> bool:
    """Is `func` the compiled `construct` of a module-level Cell class that is not (only) a
    top cell: a sub-cell, or a cell a jit function calls?"""
    if type(func) is not ast.FunctionDef or func.name != "construct":
        return False
    scope = ctx.scopes.scope_for(func)
    owner = ctx.parent(func)
    # a cell a jit function calls is compiled as a helper of it
    return (
        scope is not None
        and scope.kind in ("construct", "helper")
        and type(owner) is ast.ClassDef
        and ctx.parent(owner) is ctx.tree
    )


def _with_tensor_argument(e: ast.expr, func: ast.AST, ctx: Context) -> bool:
    """Is `e` arithmetic (or a tensor method, `x.min()`) on a parameter of `func`, never
    rebound, that the program's calls give a tensor? Measured in a sub-cell's or a
    jit-called cell's `construct` (written/heldout36d probes `fix36d_at3_*`, `fix37a_at5_*`,
    `fix37a_at6_*`): `ops.assign(p, p - self.lr * x)` with `x` its tensor argument fails under
    LAX as in a top cell; with `g` an element of a tuple argument (`zip(self.params, grads)`,
    `grads[0]`: an optimizer's gradients) it compiles, in an `nn.Optimizer` or a plain Cell."""
    from npu_lsp.rules.graphmode.ranks import is_tensor, ranks

    assert isinstance(func, ast.FunctionDef)
    params = {a.arg for a in func.args.args[1:]}
    a = analyzer(ctx)
    todo = [e]
    while todo:
        n = todo.pop()
        t = type(n)
        if t is ast.BinOp:
            assert isinstance(n, ast.BinOp)
            todo += (n.left, n.right)
        elif t is ast.UnaryOp:
            assert isinstance(n, ast.UnaryOp)
            todo.append(n.operand)
        elif t is ast.Call and type(n.func) is ast.Attribute:  # type: ignore[attr-defined]
            todo.append(n.func.value)  # type: ignore[attr-defined]
        elif t is ast.Name and n.id in params and not a.rebinds(n.id, func):  # type: ignore[attr-defined]
            assert isinstance(n, ast.Name)
            # what the calls give it: followed from the module-level calls when the shapes
            # model can, else as the flow model sees the callers (a tuple of tensors would
            # make the arithmetic fail anyway)
            got = ranks(ctx).value_at(n, func, first=True)
            if got and all(is_tensor(v) for v in got):
                return True
            if not got and a.param_kind_seen(n.id, func) == Kind.TENSOR:
                return True
    return False


def _mixed_stored_number(e: ast.expr, func: ast.AST, ctx: Context) -> ast.Attribute | None:
    """The stored-number read when `e` (or the expression a name bound once holds) is
    arithmetic one operand of which is itself arithmetic on such a read (`p - self.lr * g`,
    `self.mean + (m - self.mean) / self.n`): LAX runs the inner operation as Python and the
    graph's outer one makes Float64. Measured: `ops.assign(self.mean, (m - self.mean) /
    self.n)`, the read a bare operand of the outer operation, compiles (written/heldout33c
    probes `fix33f_f64_*`, case `obsnorm_count_python_int_counter`; heldout36d `fix36d_at*`)."""
    if type(e) is ast.Name:
        bound = analyzer(ctx).single_assignment(e.id, func)
        if bound is None:
            return None
        e = bound
    if type(e) is not ast.BinOp:
        return None
    for side in (e.left, e.right):
        if type(side) is ast.Name:
            bound = analyzer(ctx).single_assignment(side.id, func)
            side = bound if bound is not None else side
        if type(side) in (ast.BinOp, ast.UnaryOp):
            read = _stored_number_read(side, func, ctx, 0)
            if read is not None:
                return read
    return None


def _stored_number_read(e: ast.expr, func: ast.AST, ctx: Context, depth: int) -> ast.Attribute | None:
    """The `self.<attr>` read (`number_stored`) `e` is computed from by arithmetic, directly
    or through a name bound once in the function; None when none."""
    if depth > 4:
        return None
    t = type(e)
    if t is ast.Attribute:
        assert isinstance(e, ast.Attribute)
        return e if number_stored(e, func, ctx) else None
    if t is ast.BinOp:
        assert isinstance(e, ast.BinOp)
        return _stored_number_read(e.left, func, ctx, depth + 1) or _stored_number_read(e.right, func, ctx, depth + 1)
    if t is ast.UnaryOp:
        assert isinstance(e, ast.UnaryOp)
        return _stored_number_read(e.operand, func, ctx, depth + 1)
    if t is ast.Name:
        assert isinstance(e, ast.Name)
        bound = analyzer(ctx).single_assignment(e.id, func)
        return _stored_number_read(bound, func, ctx, depth + 1) if bound is not None else None
    return None


def _built_while_compiling(call: ast.Call, ctx: Context, func: ast.AST) -> bool:
    """Is every argument of the Python call `call` a constant or a tensor created from
    constants (`ops.zeros((n, 4), ms.float32)`)? MindSpore then runs the call while compiling
    and its result is a constant, not a JIT Fallback object."""
    a = analyzer(ctx)
    args = [*call.args, *(k.value for k in call.keywords)]
    return all(
        not isinstance(x, ast.Starred) and (a.kind(x, func) == Kind.CONST or a.created_tensor(x, func)) for x in args
    )


def _recomputed_scale(call: ast.Call) -> bool:
    """`ops.interpolate(x, scale_factor=..., recompute_scale_factor=True)`."""
    kw = {k.arg: k.value for k in call.keywords}
    flag = kw.get("recompute_scale_factor")
    return (
        isinstance(flag, ast.Constant)
        and flag.value is True
        and "size" not in kw
        and ("scale_factor" in kw or len(call.args) >= 3)
    )


def _min_max_of_stored_number(func: ast.AST, ctx: Context) -> ast.Call | None:
    """A `min(...)` / `max(...)` of `func` one argument of which reads a number attribute
    `func` stores on `self` (`number_stored`). Measured (written/heldout20a case
    `r2_gan_progressive_alpha_fade_attr`, probes `lax24a_gan_*`): with `self.step += 1` and
    `min(1.0, self.step / k)` or `max(...)` (stored on `self` or not), an
    `ops.interpolate(x, scale_factor=2.0, recompute_scale_factor=True)` anywhere in the
    function fails under LAX, "'int' object is not iterable"; without the `min`, with `size=`,
    with `min` of `x.mean().item()` or of constants, it compiles."""
    for n in calls_in(func):
        if (
            type(n) is ast.Call
            and type(n.func) is ast.Name
            and n.func.id in ("min", "max")
            and any(
                type(a) is ast.Attribute and isinstance(a.ctx, ast.Load) and number_stored(a, func, ctx)
                for arg in n.args
                for a in ast.walk(arg)
            )
        ):
            return n
    return None


#: in-place updates of a Parameter whose value must have the Parameter's dtype (measured,
#: written/heldout21b probes `st22_lr_*`, `lax24a_lr_*`: `ops.assign_sub(p, lr * g)` and
#: `ops.assign_sub(p, ops.cast(lr * g, p.dtype))` fail with a float64 `lr`; `ops.assign(p,
#: p - lr * g)` compiles)
_IN_PLACE = frozenset({"mindspore.ops.assign_sub", "mindspore.ops.assign_add"})


#: MindSpore functions and tensor methods taking a target shape as their argument at this index
_SHAPE_ARGUMENTS = {
    "mindspore.ops.reshape": 1,
    "mindspore.ops.zeros": 0,
    "mindspore.ops.ones": 0,
    "mindspore.ops.broadcast_to": 1,
    "mindspore.ops.full": 0,
    "mindspore.ops.fill": 1,
}
#: (not `reshape`: measured, written/fallbackflows probes `ff_*__nd_shape`,
#: `ff3_reshape_method_2d_shape`, `t.reshape(a.shape)` with `a = t.asnumpy()` compiles under
#: LAX at ranks 1 and 2, while `ops.reshape(t, a.shape)` and `ops.zeros(a.shape)` fail)
_SHAPE_METHODS = frozenset({"view", "broadcast_to"})
#: MindSpore functions whose fill value (at this index) becomes the FillV2 primitive's tensor
#: input: a Python number is converted while compiling, a fallback object is not (measured,
#: written/famc probes `g17_an_full_*`: a value from `x.asnumpy()` or from the shape of a
#: fallback tensor fails under LAX, `float(x.mean())` compiles; `ops.full` calls `ops.fill`)
_FILL_VALUES = {"mindspore.ops.full": 1, "mindspore.ops.fill": 2}
#: MindSpore functions whose argument at this position is a Python list the function only
#: hands to its kernel, never a tensor it queries: a JIT Fallback value there neither makes the
#: call read a fallback value nor its result one (measured, written/heldout41c case
#: `fs2_variance_adaptor_target_none`, probes `fix41c_fb_*`: `ops.bucketize(x, b.asnumpy().tolist())`
#: compiles under LAX, alone, given to `nn.Embedding` and to `ops.zeros_like`, with `b` an input
#: or a Tensor attribute; `nn.Embedding(Tensor(b.asnumpy()))` of an input `b` fails)
_HOST_LIST_ARGUMENTS = {"mindspore.ops.bucketize": (1, "boundaries")}
#: creation functions whose shape argument (at this position), given as a *list* display
#: holding a number JIT Fallback computes, fails under LAX: "Failed to get array value, expect
#: sequence or tensor type, but got: Int64Imm" (measured, written/lax probes `fix35c_tb_*`:
#: `ops.zeros([x.shape[0], period, x.shape[2]], x.dtype)` with `period = int(...)` of an
#: `asnumpy()` result, and `ops.ones` the same; the shape as a tuple, a list of shape items
#: only, or `x.reshape([b, t // period, period, n])` compile; heldout34c
#: `times_block_period_reshape_2d_conv_pad`)
_LIST_SHAPES = {"mindspore.ops.zeros": 0, "mindspore.ops.ones": 0}


#: builtins that fail on a comprehension over a JIT Fallback value (LAX builds it as a Python
#: object, not a sequence), with what MindSpore 2.10 says: `sum`, `max`, `min` iterate it and
#: raise when given a tensor of shape () (mindspore/graph/_parse/standard_method.py `ms_sum`,
#: `ms_max_one_element`, `ms_min_one_element`; over a name bound to one, `max` / `min` say
#: "The object is not iterable"); `len` of a name bound to one fails too (measured, written/gen18
#: probes `v22_it_*`: over `functools.partial(ops.clip_by_value, ...)(x)`, an f-string's
#: `len`, `math.log1p` of a tensor, a namedtuple's field, `ms.Tensor` of `.item()`s; the same
#: comprehension over a graph tensor, given to `ops.stack` or `tuple`, or a `for` loop adding
#: up, compile)
_COMPREHENSION_READERS = {
    "builtins.sum": "Cannot iterate over a scalar tensor",
    "builtins.max": "Cannot iterate over a scalar tensor; through a name: The object is not iterable",
    "builtins.min": "Cannot iterate over a scalar tensor; through a name: The object is not iterable",
    "builtins.len": "The pointer[seq_abs] is null",
}
#: builtins that hand a comprehension the items of their argument
_ITERABLE_WRAPPERS = frozenset(
    {"builtins.enumerate", "builtins.zip", "builtins.reversed", "builtins.list", "builtins.tuple"}
)
_ITERATED_MESSAGE = (
    "`{fn}` of a comprehension over `{over}`, a JIT Fallback value: LAX builds the comprehension"
    " as a Python object, not a sequence (MindSpore: \"{said}\"); loop with `for` and add up,"
    " or reduce with tensor ops (`v.sum()`, `v.shape[0]`)"
)


#: calls that fail on an empty list, with what MindSpore 2.10 says (measured, written/gen18
#: probes `v22_it_for_append_*`: a list appended only in a `for` over a JIT Fallback value is
#: empty while compiling; its `len` compiles, and the same loop over a graph tensor fills it)
_EMPTY_READERS = {
    "builtins.max": "max() arg is an empty sequence",
    "builtins.min": "min() arg is an empty sequence",
    "mindspore.ops.stack": "For 'Stack', the 'len of input_x' must be int and must >= 1, but got '0'",
}
_EMPTY_MESSAGE = (
    "`{name}` is grown only in a `for` over `{over}`, a JIT Fallback value, of which MindSpore"
    " runs no pass while compiling: the list is empty here (MindSpore: \"{said}\"); build it with"
    " tensor ops on a tensor the graph computes"
)
_EMPTY_INDEX_MESSAGE = (
    "`{{name}}` is filled only in a `for` over `{over}`, a JIT Fallback value, of which MindSpore"
    " runs no pass while compiling: it is empty here (MindSpore: \"{said}\"); build it with"
    " tensor ops on a tensor the graph computes"
)


def _empty_index(loop: ast.For, said: str) -> str:
    """`_EMPTY_INDEX_MESSAGE` for `loop`, its braces kept for the `{name}` format that follows."""
    def braces(s: str) -> str:
        return s.replace("{", "{{").replace("}", "}}")

    return _EMPTY_INDEX_MESSAGE.format(over=braces(ast.unparse(loop.iter)), said=braces(said))


_ITEMS_MESSAGE = (
    "`{fn}` of a list of `{elt}`, Python values JIT Fallback reads at run time: MindSpore compiles"
    " it to a dynamic-length reduction the CPU backend cannot run (\"Unsupported op [IsDimUnKnown]\");"
    " take `{fn}` of the tensor"
)


def _numpy_result(e: ast.expr, ctx: Context, func: ast.AST) -> bool:
    """Is `e` the result of a numpy function (`np.sum(a)`), or a name bound once to one? As a
    fill value it compiles under LAX (measured, written/fallbackflows probes `ff_npsum__fill`,
    `ff3_full_numpy_scalar`), where `float(...)` of it fails (famc `g17_an_full_host_scalar`)."""
    if isinstance(e, ast.Name):
        bound = analyzer(ctx).single_assignment(e.id, func)
        if bound is None:
            return False
        e = bound
    return isinstance(e, ast.Call) and (ctx.qualname(e.func) or "").startswith("numpy.")


def _shape_argument(call: ast.Call, ctx: Context) -> ast.Attribute | None:
    """The `<value>.shape` a shape-taking call is given (`ops.reshape(x, a.shape)`,
    `ops.zeros(a.shape, ...)`, `t.reshape(a.shape)`), if any (measured on 2.10 with the written
    probes `lax`: with `a = x.asnumpy()` these fail under LAX, "Kernel select failed")."""
    f = call.func
    arg: ast.expr | None = None
    if isinstance(f, ast.Attribute) and f.attr in _SHAPE_METHODS and len(call.args) == 1:
        arg = call.args[0]
    else:
        i = _SHAPE_ARGUMENTS.get(ctx.qualname(f) or "")
        if i is not None and len(call.args) > i:
            arg = call.args[i]
    if isinstance(arg, ast.Attribute) and arg.attr == "shape":
        return arg
    return _shape_joined(arg)


def _shape_joined(arg: ast.expr | None) -> ast.Attribute | None:
    """The `<value>.shape` in `<value>.shape + (k,)` / `(k,) + <value>.shape` given as a target
    shape: adding a tuple to the shape of a tensor of unknown rank compiles to MindSpore's
    `IsDimUnKnown` test (composite `add_impl._tuple_add_tuple`), which has no CPU kernel
    (measured, written/heldout21a probes `lb23_emb_host_shape_concat`,
    `lb23_sl_max_shape_concat`: `ops.reshape(v, v.shape + (1,))` with `v =
    ms.Tensor(np.clip(t.asnumpy(), 0, 7))` or `v = seq[0, :max(n, 1)]` fails under LAX,
    "Kernel select failed: Unsupported op [IsDimUnKnown] on CPU")."""
    if isinstance(arg, ast.BinOp) and isinstance(arg.op, ast.Add):
        for side, other in ((arg.left, arg.right), (arg.right, arg.left)):
            if isinstance(side, ast.Attribute) and side.attr == "shape" and isinstance(other, ast.Tuple):
                return side
    return None


def _module_names(ctx: Context) -> frozenset[str]:
    """Names the module binds at its top level by plain assignment (once per file)."""
    hit = ctx.cache.get("opaque.module_names")
    if hit is None:
        hit = ctx.cache["opaque.module_names"] = frozenset(
            t.id for st in ctx.tree.body if type(st) is ast.Assign for t in st.targets if type(t) is ast.Name
        )
    return hit


def _bound_outside(name: str, func: ast.AST, ctx: Context) -> bool:
    """Is `func` nested in a function that binds `name` (a parameter or an assignment)?"""
    p = ctx.parent(func)
    while p is not None and not isinstance(p, _FUNCS):
        p = ctx.parent(p)
    if p is None:
        return False
    assert isinstance(p, _FUNCS)
    a = p.args
    if any(x.arg == name for x in (*a.posonlyargs, *a.args, *a.kwonlyargs)):
        return True
    return any(type(n) is ast.Name and n.id == name and type(n.ctx) is ast.Store for n in own_nodes(p))


#: measured (written/heldout33a case `r2_tensor_of_list_int_argmax_loop`, probes `fix33e_am_*`):
#: `int(t)` / `float(t)` of a tensor computed from `Tensor(i, ms.int32)` of a run-time number
#: fails under LAX ("Cannot join the return values of different branches ... dtype1 = Int64,
#: dtype2 = Any"; `.item()`: "The tensor should have only one element. But the shape of input
#: tensor is None"); the same tensor returned, added to, or argmax'ed compiles, and so does
#: `int(...)` of what a constant `Tensor(2.0, ms.float32)` or the number itself (`scores + i`)
#: scales; STRICT refuses the `Tensor(...)` script itself (MS131)
_TYPED_SCALAR_MESSAGE = "`{read}` reads a number from a tensor computed from `{built}`, which LAX builds by JIT Fallback from a run-time number, with a shape MindSpore does not know; MindSpore cannot compile the read (\"Cannot join the return values of different branches ... dtype2 = Any\"): keep the index a tensor the graph computes (`ops.one_hot(scores.argmax(), ...)`)"


def _indexed_by_number(e: ast.Subscript, func: ast.AST, ctx: Context) -> bool:
    """A constant container indexed by anything, or a tensor indexed by a value that is
    not a tensor (a Python number)."""
    a = analyzer(ctx)
    kind = a.kind(e.value, func)
    return kind is Kind.CONST or (kind is Kind.TENSOR and a.kind(e.slice, func) is not Kind.TENSOR)


def _self_item_stored(e: ast.Subscript, func: ast.AST, ctx: Context) -> ast.expr | None:
    """The value a store `self.<d>[<key>] = v` of `func` gives the read `e` of
    `self.<d>[<key>]` (a constant key), when it reaches the read in its block
    (`reaching_store`): the dict keeps what was stored, so a JIT Fallback value stays one
    (measured, written/lax probes `fix43b_pc_*`: after `x = clip(x)` of a module-level
    `functools.partial`, `self.cache['last'] = x; x = self.cache['last']` then a `for` over
    `ops.unstack(x, 0)` appending rows and `ops.stack` fails under LAX, "got '0'", also in a
    sub-cell; storing a graph tensor there compiles, probes `fix43b_ca_*`; difftest v6 seed
    12001227). None when no such store reaches it."""
    d = e.value
    if not (type(d) is ast.Attribute and type(d.value) is ast.Name and d.value.id == "self" and type(e.slice) is ast.Constant):
        return None
    key = e.slice.value
    stores = [
        st
        for st in own_nodes(func)
        if type(st) is ast.Assign
        and len(st.targets) == 1
        and type(t := st.targets[0]) is ast.Subscript
        and type(t.value) is ast.Attribute
        and t.value.attr == d.attr
        and type(t.value.value) is ast.Name
        and t.value.value.id == "self"
        and type(t.slice) is ast.Constant
        and t.slice.value == key
    ]
    if not stores:
        return None
    reach = reaching_store(e, func, stores, ctx)  # type: ignore[arg-type]
    return reach.value if type(reach) is ast.Assign else None


def has_fallback(ctx: Context) -> bool:
    """Does compiled LAX code of this file make any run-time fallback call (else no value is
    opaque and the rule has nothing to follow)?"""
    hit = ctx.cache.get("opaque.any")
    if hit is None:
        words = trigger_words(ctx)
        present = ctx.text_words() if words is not None else None
        if words is not None and present is not None:
            # a function's text holds only words of the file's text: look for those alone
            words = frozenset(w for w in words if w in present)
        lax = lax_scopes(ctx)
        hit = any(
            may_fall_back(n, ctx) and runtime_fallback(n, ctx, s.function)  # type: ignore[arg-type]
            for s in lax
            if function_mentions(s.function, words, ctx)
            for n in calls_in(s.function)
        ) or any(has_none_join(s.function, ctx) for s in lax)
        hit = hit or (nested_self_lines(ctx) and any(branch_stores(s.function) for s in lax))
        hit = hit or bool(namedtuple_classes(ctx)) or stores_numbers(ctx) or stores_tensor_attrs(ctx, lax)
        hit = hit or stores_across_join(ctx, lax) or stores_state_attrs(ctx, lax)
        hit = hit or reads_tables(ctx) or stores_held_numbers(ctx) or stores_on_objects(ctx, lax)
        hit = hit or ((ctx.mentions("str(") or ctx.mentions("repr(") or ctx.mentions(".format(")) and any(
            text_of_value(n, ctx, s.function) for s in lax for n in calls_in(s.function)  # type: ignore[arg-type]
        ))
        hit = hit or ((ctx.mentions("f'") or ctx.mentions('f"')) and any(
            formats_value(n, ctx, s.function)  # type: ignore[arg-type]
            for s in lax
            if function_holds(s.function, ("f'", 'f"'), ctx)
            for n in fstrings_in(s.function)
        ))
        hit = hit or (("ensor(" in ctx.text) and any(
            built_tensor(n, ctx, s.function) or typed_scalar_tensor(n, s.function, ctx)  # type: ignore[arg-type]
            for s in lax
            if function_holds(s.function, ("ensor(",), ctx)
            for n in calls_in(s.function)
        ))
        hit = hit or ((ctx.mentions("max(") or ctx.mentions("min(")) and any(
            mixed_min_max(n, ctx, s.function) for s in lax for n in calls_in(s.function)  # type: ignore[arg-type]
        ))
        ctx.cache["opaque.any"] = hit
    return bool(hit)


def _matmul_of_fallback(e: ast.expr, func: ast.AST, o: OpaqueValues, ctx: Context, depth: int = 0) -> ast.BinOp | None:
    """The `a @ b` with a JIT Fallback operand that `e` (the receiver of `.reshape`) is
    computed from: the product itself, arithmetic on it, `ms.Tensor(...)` of it, or a name
    bound to one of these. Under LAX MindSpore compiles `@` as `MatMulExt` of the two
    placeholders, a tensor of size 1 while compiling, and `reshape` to the array's shape then
    fails (measured, written/heldout39b case `eigencam_numpy_svd_in_construct`, probes
    `fix40a_np_*`, `fix40a_mm_*`: `proj = a @ vt[0]` with `a = x.asnumpy()`, then
    `ms.Tensor(proj.reshape(h, w))`, `(a @ a).reshape(...)`, `(a @ a + 1.0).reshape(...)`,
    `ms.Tensor(a @ a).reshape(...)` fail, "proposed_shape '[const vector]{2, 8}' is invalid for
    input of size 1"; `np.matmul`, `np.dot`, `*`, and `.T` / `.flatten()` / `.astype()` /
    `.sum()` of the product compile)."""
    if depth > 4:
        return None
    if isinstance(e, ast.Name):
        bound = analyzer(ctx).bound_value(e, func)
        return None if bound is None else _matmul_of_fallback(bound, func, o, ctx, depth + 1)
    if isinstance(e, ast.Call):
        if ctx.qualname(e.func) in TENSOR_CONSTRUCTORS and len(e.args) == 1:
            return _matmul_of_fallback(e.args[0], func, o, ctx, depth + 1)
        return None
    if not isinstance(e, ast.BinOp):
        return None
    if type(e.op) is ast.MatMult:
        if o.value(e.left, func, frozenset()) or o.value(e.right, func, frozenset()):
            return e
        return None
    return _matmul_of_fallback(e.left, func, o, ctx, depth + 1) or _matmul_of_fallback(e.right, func, o, ctx, depth + 1)


#: marks, among a call's opaque parameter names, the class of the instance it runs on
_CLS = "@cls="


def _none_against_value(e: ast.IfExp, func: ast.AST, ctx: Context) -> bool:
    """`None if <tensor test> else v` (or the other way round): LAX joins None with the
    value into a Python object, as it does a name bound to both under a tensor `if`
    (measured, trainsteps probes `mh_ifexp_none_*`: `s = None if x.sum() > 0 else 0.5`,
    then `x * s` in a helper and `nn.Dense(x)`, fails with "'int' object has no attribute
    '__len__'"; under `x.ndim == 3`, or with two floats, it compiles)."""
    sides = [isinstance(x, ast.Constant) and x.value is None for x in (e.body, e.orelse)]
    return sides[0] != sides[1] and analyzer(ctx).kind(e.test, func).dynamic


class OpaqueValues:
    """Which expressions hold a JIT Fallback object, following names backwards in source order
    and parameters bound at a call."""

    def __init__(
        self,
        ctx: Context,
        none_joins: bool = True,
        tensor_index: bool = False,
        graph_calls: bool = False,
        typed_index: bool = False,
        in_place: bool = False,
        keyword_namedtuples: bool = True,
        while_joins: bool = False,
    ) -> None:
        self.ctx = ctx
        #: is a name read after a tensor-conditioned `while` that rebinds it what it held on
        #: entering the loop (`_tensor_while_entry`)? Only for the input-query sinks: LAX
        #: gives them the loop's joined tensor (`ops.ones_like`, `nn.Dense` of it compile), but
        #: the value still joins with anything (`x.sum() > 0 and x.shape[0] == 2` after a
        #: `while` rebinding `x = ms.Tensor.from_numpy(x.asnumpy())` compiles: fresh v6 seed
        #: 12000287) and an overloaded `mint` function given it by keyword still fails (seed
        #: 12000423)
        self.while_joins = while_joins
        #: does an instance of a module's namedtuple class built from keyword arguments only
        #: (`Out(value=x)`) count? Not for an overloaded `mint` function given keywords: LAX
        #: passes them to it (measured, written/lax probes `genfresh37_nt_*`: `mint.max(x,
        #: dim=1)` of `x = o[0] + o.scale` compiles for `o = Out(value=x)` or `Out(value=x,
        #: scale=2.0)`, fails for `Out(x)`, `Out(x, 2.0)`, `Out(x, scale=2.0)`; a
        #: comprehension over `x[0]` fails for the keyword form too; fresh v6 seed 12001088)
        self.keyword_namedtuples = keyword_namedtuples
        #: does a list display changed by a method LAX runs by JIT Fallback count
        #: (`_IN_PLACE_FALLBACK`)? Only for joins: sinks take such a list's values
        #: (`joins_anything_at_lax`)
        self.in_place = in_place
        #: does a call of a function holding a loop MindSpore cannot unroll give a graph value
        #: (`_runtime_loop`)? Only for the numbers read from it (`float(v.mean())` as a fill
        #: value); its shape is still unknown to the caller
        self.graph_calls = graph_calls
        #: does a name joined with None under a tensor condition count (LAX makes it a Python
        #: object too, but `ops.shape(v)[0]` of one compiles: measured, written/lax probes `gf_pc_*`)
        self.none_joins = none_joins
        #: does a tensor indexed by a fallback tensor count (`x[ms.Tensor(v)]`)? Only for the
        #: sinks (`nn.Dense` fails on it); its `.shape` as a target shape compiles (measured,
        #: written/heldout18a probe `fti_shape_broadcast_to`)
        self.tensor_index = tensor_index
        #: does an index built by `Tensor(v, dtype)` (bare name, constant dtype) of a fallback
        #: value count too? Only for the few sinks that fail on such a graph tensor
        #: (`typed_index_sink`)
        self.typed_index = typed_index
        self.memo: dict[tuple[int, int, frozenset[str]], bool] = ctx.cache.setdefault(
            ("opaque.memo" if none_joins else "opaque.memo.calls")
            + (".index" if tensor_index else "")
            + (".loops" if graph_calls else "")
            + (".typed" if typed_index else "")
            + (".inplace" if in_place else "")
            + ("" if keyword_namedtuples else ".nokw")
            + (".whilejoins" if while_joins else ""),
            {},
        )

    def value(self, e: ast.expr, func: ast.AST, env: frozenset[str], depth: int = 0) -> bool:
        key = (id(e), id(func), env)
        hit = self.memo.get(key)
        if hit is None:
            pending = self._pending()
            pending.add(key)  # cycles: not opaque until shown
            self.memo[key] = False
            cycles = self.ctx.cache.get("opaque.cycles", 0)
            hit = self._value(e, func, env, depth)
            pending.discard(key)
            if hit or self.ctx.cache.get("opaque.cycles", 0) == cycles:
                self.memo[key] = hit
            else:
                # False only because a value still being worked out (a loop-carried name:
                # `x = self.w(x); x = self.r(x)` in a `for`) was read as False: work it out
                # again when asked after that one is known (fresh v6 seed 12000042)
                del self.memo[key]
        elif not hit and key in self._pending():
            self.ctx.cache["opaque.cycles"] = self.ctx.cache.get("opaque.cycles", 0) + 1
        return hit

    def _pending(self) -> set[tuple[int, int, frozenset[str]]]:
        """The keys of `self.memo` whose value is being worked out (on the stack)."""
        got = self.ctx.cache.setdefault(("opaque.pending", id(self.memo)), set())
        assert isinstance(got, set)
        return got

    def _value(self, e: ast.expr, func: ast.AST, env: frozenset[str], depth: int) -> bool:
        if isinstance(e, ast.Name):
            if self.none_joins and none_joined(e, func, self.ctx):
                return True
            st = self._last_assignment(e, func)
            entry = self._tensor_while_entry(e, st, func) if self.while_joins else None
            if entry is not None:
                # the loop's join: what the name held when the loop was entered decides
                # (a fresh node: not memoised by id)
                return self._value(entry, func, env, depth)
            if self._item_stored(e, st, func, env, depth):
                return True
            if self._loop_carried(e, func, env, depth):
                return True
            if st is None:
                return e.id in env
            if isinstance(st, ast.AugAssign):
                target = st.target
                assert isinstance(target, ast.Name)
                # the name's value before this statement (a fresh node: not memoised by id)
                return self.value(st.value, func, env, depth) or self._value(
                    ast.Name(
                        id=target.id, ctx=ast.Load(), lineno=st.lineno, col_offset=st.col_offset
                    ),
                    func,
                    env,
                    depth,
                )
            # `for k, v in d.items()`: every loop variable holds a piece of the iterable
            value = _bound_value(st, e.id)
            if isinstance(value, ast.Call) and isinstance(st, ast.Assign):
                k = _unpacked_position(st, e.id)
                item = self._call_item(value, k, func, env, depth) if k is not None else None
                if item is not None:
                    return item
            if value is not None and self.value(value, func, env, depth):
                return True
            # a list grown with one (`outs = []` then `outs.append(v)` in a loop)
            if isinstance(value, ast.List) and self._appended(e, st, func, env, depth):
                return True
            # a list comprehension too (measured, written/lax probes `genfresh43_wj_lc_*`: `[float(v)
            # for v in x[0]]` then `pop`/`insert`/`reverse`, read by index or `sum`, joins with
            # anything at LAX; `append`, `len`, a read before the method fail; fresh v6 seed 12002320)
            return self.in_place and isinstance(value, (ast.List, ast.ListComp)) and self._changed_in_place(e, st, func)
        if isinstance(e, ast.BinOp):
            return self.value(e.left, func, env, depth) or self.value(e.right, func, env, depth)
        if isinstance(e, ast.Compare):
            return any(self.value(v, func, env, depth) for v in (e.left, *e.comparators))
        if isinstance(e, ast.BoolOp):
            return any(self.value(v, func, env, depth) for v in e.values)
        if isinstance(e, ast.UnaryOp):
            return self.value(e.operand, func, env, depth)
        if isinstance(e, ast.IfExp):
            if self.none_joins and _none_against_value(e, func, self.ctx):
                return True
            # a side MindSpore folds away (`v.asnumpy() if False else v`) gives nothing
            return any(
                self.value(side, func, env, depth)
                for side in (e.body, e.orelse)
                if not in_dead_branch(self.ctx, func, self.ctx.span(side))
            )
        if isinstance(e, ast.Subscript):
            if func is self.ctx.function and reads_tables(self.ctx) and tensor_read_of_numbers(e, self.ctx):
                return True
            if (
                isinstance(e.value, ast.Call)
                and isinstance(e.slice, ast.Constant)
                and type(e.slice.value) is int
            ):
                item = self._call_item(e.value, e.slice.value, func, env, depth)
                if item is not None:
                    return item
            item_stored = _self_item_stored(e, func, self.ctx)
            if item_stored is not None and self.value(item_stored, func, env, depth + 1):
                return True
            if self.value(e.value, func, env, depth):
                return True
            if (
                not isinstance(e.slice, (ast.Constant, ast.Slice))
                and self.value(e.slice, func, env, depth)
                and _indexed_by_number(e, func, self.ctx)
            ):
                # (a tensor indexed by such a number too: `x + x[n - 1]` with `n =
                # len(x.tolist())` joins with a bool in `while x.sum() > -100 and i < 2` under
                # LAX, written/lax probes `fix33a_jn_tolist_len_index*`; difftest seed 9990133;
                # a tensor index is `_fallback_tensor_index`'s)
                # a constant tuple / list / dict indexed by a fallback number (`(0.5, 1.0,
                # 1.5)[int(s) % 3]` with `s = x.max().asnumpy()`): LAX reads the item by JIT
                # Fallback too (measured, written/gen18 probes `genfresh28_ti_*`: `x` plus it
                # then given to `ops.ones_like` fails, "DtypeToEnum", also for a name or
                # module constant bound to the tuple; an index `int(x.max()) % 3` the graph
                # computes compiles; fresh v5 seed 11500025)
                return True
            return self.tensor_index and (
                self._fallback_tensor_index(e.slice, func, env, depth) or self._reversed_loop_index(e.slice, func)
            )
        if (
            isinstance(e, ast.ListComp)
            and len(e.generators) == 1
            and isinstance(e.elt, ast.Call)
            and built_tensor(e.elt, self.ctx, func)
        ):
            # a list of tensors built by JIT Fallback (`[ms.Tensor(v, ...) for v in vals]` of
            # Python numbers: written/gen18 probes `genfresh28_sj_*`), given to `ops.stack`
            return True
        if isinstance(e, (ast.ListComp, ast.GeneratorExp)) and len(e.generators) == 1:
            return self._fallback_items(e, func, env)
        if isinstance(e, (ast.List, ast.Tuple)):
            # a list holding one: what `pop()`, `sum()` or an index take out of it (measured:
            # `outs = [v, v * 2]; outs.reverse(); x = outs.pop()` then `nn.Dense(x)` fails)
            return any(self.value(v, func, env, depth) for v in e.elts if not isinstance(v, ast.Starred))
        if isinstance(e, ast.Dict):
            # a dict display holding one, the same way (fresh v6 seed 12001188: `feats = {'a':
            # x, 'b': x}; x = sum(feats.values()) / 2` of a fallback `x`, then
            # `ops.clip_by_value(x, ...)` fails, "DtypeToEnum")
            return any(self.value(v, func, env, depth) for v in e.values)
        if isinstance(e, ast.Attribute) and isinstance(e.ctx, ast.Load) and e.attr != "dtype":
            if branch_stored(e, func, self.ctx) or number_stored(e, func, self.ctx) or held_number_stored(e, func, self.ctx):
                return True
            if input_object_stored(e, func, self.ctx) is not None:
                return True  # `data.x = v` on a plain object the graph was given, read back
            stored = self._tensor_attr_stored(e, func, env, depth)
            if stored is not None:
                return stored
            # an attribute of a fallback object is read by Python too (measured, written/lax
            # probes `gf_pd_*`: `int(x.asnumpy().shape[0])` added to `x` before an `nn.Dense` fails
            # under LAX, "'int' object has no attribute '__len__'"; `x.shape[0]` compiles); so is
            # a field of a namedtuple holding one (`p = Pair(v, 1); p.a`)
            return self.value(e.value, func, env, depth)
        if isinstance(e, ast.JoinedStr):
            # an f-string of a run-time value: LAX formats it by JIT Fallback, as it does
            # `str(v)` (measured, written/gen18 probes `v20_fs_*`: `x + len(f"{float(x.mean())}")
            # * 0` then `ops.zeros_like(x)` / `ops.cast(x, x.dtype)` fail, "DtypeToEnum"; the
            # same f-string only printed, or of `x.shape[0]`, compiles; fresh v5 seeds
            # 10500090 and 10900075, where `map` over such an `x` compiles)
            return formats_value(e, self.ctx, func)
        if isinstance(e, ast.Call):
            if (
                not self.keyword_namedtuples
                and e.keywords
                and not e.args
                and isinstance(e.func, ast.Name)
                and e.func.id in namedtuple_classes(self.ctx)
            ):
                return False
            if self.in_place:
                seen = self._in_place_call(e, func, env, depth)
                if seen is not None:
                    return seen
            if runtime_fallback(e, self.ctx, func):
                return True
            if built_tensor(e, self.ctx, func):
                return True
            if typed_tensor_call(e, self.ctx):
                return False
            if text_of_value(e, self.ctx, func):
                # the text of a run-time value: STRICT refuses it ("cannot get attributes
                # __str__ or the Float32 object"), LAX makes it a Python object, and so is
                # what is computed from it (`x + len(str(s)) * 0` joins with a Python bool
                # under a tensor `and`; measured, fresh v5 seed 10500163, written/gen18 probes
                # `jn_and_*`: printing `str(s)` beside a plain `x` still fails)
                return True
            if (
                isinstance(e.func, ast.Name)
                and e.func.id in namedtuple_classes(self.ctx)
                and self._last_assignment(e.func, func) is None
            ):
                # measured (written/lax probes `gf_pi_nt_*`): LAX builds an instance of a
                # module's namedtuple class as Python, even of a tensor (`p = Pair(x, 1)`;
                # `self.dense(p.a + p.b)` fails, "'int' object has no attribute '__len__'");
                # of constants and tensors created from constants it is built while compiling,
                # a constant (written/heldout31a probes `fix31d_nt_*`: `State(z, z)` of `z =
                # ops.zeros((x.shape[0], 4), ms.float32)` given to `nn.LSTMCell` compiles)
                return not _built_while_compiling(e, self.ctx, func)
            if (
                isinstance(e.func, ast.Attribute)
                and isinstance(e.func.value, ast.Name)
                and self.value(e.func.value, func, env, depth)
            ):
                # a method of a fallback object, also one the file defines (`q.rsample()` of
                # `q = DiagNormal(mu, logvar)`, a plain class built from graph variables): the
                # object is Python, so its method runs as Python too (measured, written/heldout20a
                # case `r2_vae_encoder_returns_distribution_obj`, probes `st22_do_*`: its result
                # given to `nn.Dense` fails under LAX, "'int' object has no attribute
                # '__len__'"; added to a tensor and reduced, it compiles)
                return True
            callee = self._callee(e, func)
            if self.none_joins and isinstance(callee, ast.FunctionDef) and returns_none_joined(callee, self.ctx):
                return True
            if isinstance(callee, ast.FunctionDef) and depth < _DEPTH:
                callee, bound = self._entered(e, callee, func, env, depth)
                if self.graph_calls and self._runtime_loop(callee, bound):
                    return False
                # only the `return`s this call's constant arguments reach (`returns_reached`)
                through = self._class_called(e) is not None
                return any(
                    r.value is not None and self.value(r.value, callee, bound, depth + 1)
                    for r in returns_reached(callee, e, func, self.ctx, through)
                )
            if isinstance(e.func, ast.Attribute) and self.value(e.func.value, func, env, depth):
                return True  # a method of a fallback object: run as Python too
            return any(self.value(a, func, env, depth) for a in _queried_arguments(e, self.ctx))
        return False

    def _fallback_items(self, comp: ast.ListComp | ast.GeneratorExp, func: ast.AST, env: frozenset[str]) -> bool:
        """Does the comprehension `comp` make Python objects by JIT Fallback: the text of
        run-time values (`f'{v:.2f}' for v in vals`, `str(v) for v in vals` of `vals = [x[0,
        j].item() for j in range(3)]`), or the items of a fallback value (`[c for c in v.T]`)?
        Measured (written/gen18 probes `genfresh29_jn_*`, `genfresh29_st_*`, fresh v5 seeds
        11600096, 11600142): `x + len(', '.join(...)) * 0.0` then a dict of `x.abs().max()`
        indexed by key fails ("tuple indices must be integers or slices, not str"), and
        `ops.stack` of the rows of such a value given to `ops.zeros_like` fails ("DtypeToEnum");
        of constants, of a graph `x`, or `len(vals)` alone, they compile."""
        elt = comp.elt
        if isinstance(elt, ast.JoinedStr) and formats_value(elt, self.ctx, func):
            return True
        if isinstance(elt, ast.Call) and text_of_value(elt, self.ctx, func):
            return True
        over = self._comprehension_over_fallback(comp, func, env)
        return over is not None and isinstance(elt, ast.Name) and _target_names_of(comp) == {elt.id}

    def _runtime_loop(self, callee: ast.FunctionDef, env: frozenset[str]) -> bool:
        """Does `callee` hold a loop MindSpore cannot unroll while compiling (a `while`, a `for`
        over `range(n)` with `n` known only at run time)? Such a function stays a graph call,
        and what it returns reaches the caller as a graph value, a JIT Fallback value made in it
        too (measured, written/gen18 probes `genfresh24_full_*`: a sub-cell or helper running
        `for i in range(int(x.max().asnumpy()) % 3)` or `while x.sum() < 0`, also before `x = x
        + Tensor(x.asnumpy())`, returns an `x` whose `float(x.mean())` fills `ops.full` under LAX;
        without the loop, with `range(2)`, or with the loop and the fill in the same function,
        FillV2 fails; fresh v5 seed 11200029). Its shape stays unknown: `nn.Dense` of what
        such a sub-cell returns still fails (written/heldout21a case
        `specaug_time_warp_numpy_interp`, "'int' object is not subscriptable")."""
        a = analyzer(self.ctx)
        for n in own_nodes(callee):
            if isinstance(n, ast.While) and not isinstance(n.test, ast.Constant):
                return True
            if (
                isinstance(n, ast.For)
                and isinstance(n.iter, ast.Call)
                and self.ctx.qualname(n.iter.func) == "builtins.range"
                and any(
                    not isinstance(arg, ast.Starred) and (a.kind(arg, callee).dynamic or self.value(arg, callee, env))
                    for arg in n.iter.args
                )
            ):
                return True
        return False

    def _entered(
        self, e: ast.Call, callee: ast.FunctionDef, func: ast.AST, env: frozenset[str], depth: int
    ) -> tuple[ast.FunctionDef, frozenset[str]]:
        """The function `e` runs and what its parameters hold (`env` of the callee)."""
        # which class's instance runs the callee, as a marker in `env`: a base
        # class's `construct` calling `self.act(t)` runs the override of the held
        # subclass (`self.blk = Child()`), not the base's own `act`
        inst = next((m for m in env if m.startswith(_CLS)), None)
        f = e.func
        if isinstance(f, ast.Attribute) and self._self_attr(f) is not None:
            if callee.name == f.attr:  # a method of the same instance
                if inst is not None:
                    callee = self._method_of(inst.removeprefix(_CLS), f.attr) or callee
            else:  # a held cell: its class, when built here by name
                held = self._held(f.attr, func)
                made = held.func if isinstance(held, ast.Call) else None
                inst = _CLS + made.id if isinstance(made, ast.Name) else None
        bound = self._bind(e, callee, func, env, depth)
        if inst is not None:
            bound = bound | {inst}
        return callee, bound

    def _call_item(self, e: ast.expr, k: int, func: ast.AST, env: frozenset[str], depth: int) -> bool | None:
        """Is item `k` of what call `e` returns a fallback value, when every `return` of the
        callee (a helper, method or sub-cell `construct` of this file) is a tuple display of
        one length: `out, tbl = self.lookup(ids)` or `self.lookup(ids)[0]` takes one item,
        and MindSpore keeps each item of a returned tuple apart (measured, written/zoo14
        probes `z19_*`: `return out, self.table` with `self.table` stored under an `if`, the
        caller giving `out` to `nn.LayerNorm`, compiles under LAX). None: not such a call."""
        if not isinstance(e, ast.Call) or depth >= _DEPTH:
            return None
        if runtime_fallback(e, self.ctx, func) or text_of_value(e, self.ctx, func):
            return None
        callee = self._callee(e, func)
        if not isinstance(callee, ast.FunctionDef):
            return None
        if self.none_joins and returns_none_joined(callee, self.ctx):
            return None
        callee, bound = self._entered(e, callee, func, env, depth)
        items: list[ast.expr] = []
        size = -1
        for r in returns_reached(callee, e, func, self.ctx, self._class_called(e) is not None):
            v = r.value
            if not isinstance(v, ast.Tuple) or any(isinstance(x, ast.Starred) for x in v.elts):
                return None
            if size not in (-1, len(v.elts)) or not 0 <= k < len(v.elts):
                return None
            size = len(v.elts)
            items.append(v.elts[k])
        if not items:
            return None
        return any(self.value(x, callee, bound, depth + 1) for x in items)

    def _reversed_loop_index(self, index: ast.expr, func: ast.AST) -> bool:
        """Does `index` read the variable of a `for` over `reversed(...)` that LAX runs by JIT
        Fallback (`for t in reversed(range(x.shape[1]))`)? Each `t` is a Python int the graph
        gets at run time, so `x[:, t]` is a Python object whose shape is unknown while
        compiling (measured, written/heldout31a case `rnn_reverse_time_loop_reversed_range`,
        probes `fix31d_rv_*`: given to `nn.RNNCell` it fails, "Tensor(shape=[-2])", to
        `nn.Dense` "'int' object has no attribute '__len__'", also `x[:, t:t + 1]`; summed it
        compiles, and so do `reversed(range(4))` and `reversed(range(T))` with `T =
        x.shape[1]`, which MindSpore folds)."""
        if func is not self.ctx.function or not self.ctx.mentions("reversed"):
            return False  # (`host_iterable` reads the names of the function being checked)
        from npu_lsp.rules.graphmode.host_values import host_iterable  # cycle
        for n in ast.walk(index):
            if type(n) is not ast.Name or not isinstance(n.ctx, ast.Load):
                continue
            st = self._last_assignment(n, func)
            if (
                isinstance(st, ast.For)
                and isinstance(st.target, ast.Name)
                and st.target.id == n.id
                and isinstance(st.iter, ast.Call)
                and self.ctx.qualname(st.iter.func) == "builtins.reversed"
                and host_iterable(st.iter, self.ctx, 0)
            ):
                return True
        return False

    def _fallback_tensor_index(self, index: ast.expr, func: ast.AST, env: frozenset[str], depth: int) -> bool:
        """Is `index` a tensor LAX builds by JIT Fallback (`ms.Tensor(v)` of a fallback value
        `v`, or a name bound once to one)? A tensor indexed by it is a Python object too: its
        shape is unknown while compiling (measured, written/heldout18a probes `fti_*`:
        `x[ms.Tensor(np.argsort(x.asnumpy()[:, 0]))]` given to `nn.Dense` fails under LAX,
        "'int' object has no attribute '__len__'" at rank 2, "'int' object is not subscriptable"
        at rank 3; the same tensor in arithmetic or returned compiles, and so does an index
        `ms.Tensor(np.array([1, 0, 2]))` of constants). Not `Tensor(v, ms.int32)` by the bare
        name with a constant dtype (`typed_tensor_call`): the parser types that tensor, and a
        graph tensor indexed by it is a graph tensor, which `nn.LSTM`, `nn.Dense`,
        `nn.LayerNorm` take (measured, written/heldout28b probes `fix28c_idx_*`, case
        `rnn_lstm_numpy_lengths_sort`; `ms.Tensor(v, ms.int32)` or no dtype still fails)."""
        if isinstance(index, ast.Tuple):
            return any(self._fallback_tensor_index(i, func, env, depth) for i in index.elts)
        if isinstance(index, ast.Slice):
            # a bound JIT Fallback computes (`seq[0, :max(n, 1)]` with `n = int(seq[0, 0])`:
            # LAX runs that `max` as Python): the slice's length, and the result's rank, are
            # unknown while compiling (measured, written/heldout21a probes `tc22_*_slice_max`,
            # heldout15a `lb23_sl_*`: given to `nn.Embedding` it fails, "Kernel select failed:
            # Unsupported op [IsDimUnKnown] on CPU"; summed, or cut by `n` itself, it compiles)
            return any(
                b is not None and self.value(b, func, env, depth) for b in (index.lower, index.upper, index.step)
            )
        if isinstance(index, ast.Name):
            bound = analyzer(self.ctx).single_assignment(index.id, func)
            if bound is None:
                return False
            index = bound
        return (
            isinstance(index, ast.Call)
            and self.ctx.qualname(index.func) in TENSOR_CONSTRUCTORS
            and bool(index.args)
            and (self.typed_index or not typed_tensor_call(index, self.ctx))
            and not isinstance(index.args[0], ast.Starred)
            and self.value(index.args[0], func, env, depth)
        )

    def _tensor_attr_stored(self, e: ast.Attribute, func: ast.AST, env: frozenset[str], depth: int) -> bool | None:
        """`self.m` read in a function that stores it: LAX runs the store as a JIT Fallback
        `setattr`. A read that a store reaches in its block (`reaching_store`) is the value
        stored; a read across a join (in a loop's body, after an `if` or a loop, in a
        comprehension) is the attribute read back as a Python object, when `__init__` makes
        it `None`, a number, a tuple or a tensor (`joined_attr`; measured, written/heldout38b
        probes `fix40a_st_*`, `fix40a_st2_*`: `self.h = x; for ...: self.h =
        ops.tanh(self.dense(self.h))` fails, "'int' object has no attribute '__len__'").
        A plain Tensor `__init__` builds is a Python object read before the first store too
        (also in the store's own value; measured, written/zoo probes `ld23_ta_*`: `self.m =
        0.9 * self.m + 0.1 * x.mean(0)`, or `m = 0.9 * self.m + ...; self.m = m`, then
        `nn.Dense` of `x - self.m` / `x - m` fails; `self.m = x.mean(0)` then the same read
        compiles; written/heldout23b `r2_tensor_attr_running_update`, heldout23a
        `r2_rnn_hidden_zero_tensor_in_init_reassigned`). None when not such a read."""
        if not (isinstance(e.value, ast.Name) and e.value.id == "self"):
            return None
        # the per-file facts first (cached): most files have neither
        restored = e.attr in restored_tensor_attrs(self.ctx)
        state = e.attr in state_attrs(self.ctx)
        if not restored and not state and not stores_across_join(self.ctx, lax_scopes(self.ctx)):
            return None
        own = self_stores(func).get(e.attr)
        if not own:
            return None
        a = analyzer(self.ctx)
        owner = a.owner_class(func)
        info = a.self_info(owner)
        if e.attr in info.parameters:
            return None
        restored = restored and (
            e.attr in info.tensors or given_tensors(owner, e.attr, self.ctx) or numpy_attr(owner, e.attr, self.ctx)
        )
        # a state read only under `if self.<attr> is not None:` (or in a branch MindSpore folds
        # away) is not compiled while `__init__`'s `None` is what MindSpore sees (difftest
        # `st_last_none` seeds 10500000, 11400027; written/lax probes `fix33a_jn_prev_none_*`)
        state = (
            state
            and state_attr(owner, e.attr, self.ctx)
            and not none_guarded(e, func, self.ctx)
            and not in_dead_branch(self.ctx, func, self.ctx.span(e))
        )
        joined = joined_attr(owner, e.attr, self.ctx)
        if not (restored or joined or state):
            return None
        stores = [st for st in own if not in_dead_branch(self.ctx, func, self.ctx.span(st))]
        if not stores:
            return None
        reach = reaching_store(e, func, stores, self.ctx)
        if reach is ACROSS_JOIN:
            return not none_guarded(e, func, self.ctx)
        if reach is None and (restored or state):
            at = (e.lineno, e.col_offset)
            before = [st for st in stores if (st.end_lineno or 0, st.end_col_offset or 0) <= at]
            if not before:
                return True  # read before the first store (or in its own value)
            reach = max(before, key=lambda st: (st.lineno, st.col_offset))
        if not isinstance(reach, ast.stmt):
            return None
        if state and type(getattr(reach, "value", None)) is ast.Tuple:
            return True  # a tuple stored on a state attribute is read back by JIT Fallback
        value = getattr(reach, "value", None)
        return value is not None and self.value(value, func, env, depth)

    def opaque_params(self, func: ast.AST, depth: int = 0) -> frozenset[str]:
        """Parameters of `func` some call of it in this file gives a fallback value."""
        # keyed by `in_place` too: a parameter given a list changed in place is one only for
        # the join findings, and a plain query's answer must not hide it (fresh v6 seed 12002320)
        memo: dict[int, frozenset[str]] = self.ctx.cache.setdefault(
            ("opaque.params" if self.keyword_namedtuples else "opaque.params.nokw")
            + (".inplace" if self.in_place else ""),
            {},
        )
        hit = memo.get(id(func))
        if hit is not None:
            return hit
        memo[id(func)] = frozenset()  # cycles: nothing until shown
        out: set[str] = set()
        scope = self.ctx.scopes.scope_for(func)
        if isinstance(func, ast.FunctionDef) and depth < _DEPTH:
            for site in getattr(scope, "call_sites", ())[:8]:
                if site.path == self.ctx.path and site.call is not None and site.caller_node is not None:
                    outer = self.opaque_params(site.caller_node, depth + 1)
                    out |= self._bind(site.call, func, site.caller_node, outer, 0)
            if scope is not None and scope.kind == "jit" and self.ctx.scopes.info.functions.get(func.name) is func:
                # a module-level `@ms.jit` function called from other compiled code of this
                # file: MindSpore compiles it inside the caller's graph, given the caller's
                # value (fresh v5 seed 10900075: `map` over such an `x` compiles)
                for s in lax_scopes(self.ctx):
                    if s.function is func:
                        continue
                    for c in calls_in(s.function):
                        if type(c.func) is ast.Name and c.func.id == func.name:  # type: ignore[attr-defined]
                            outer = self.opaque_params(s.function, depth + 1)
                            out |= self._bind(c, func, s.function, outer, 0)  # type: ignore[arg-type]
        hit = memo[id(func)] = frozenset(out)
        return hit

    def _appended(self, name: ast.Name, bound: ast.stmt, func: ast.AST, env: frozenset[str], depth: int) -> bool:
        """Does `name.append(v)` / `.insert(i, v)` / `.extend(vs)` between its binding `bound`
        and this read give it a fallback value?"""
        start, read = (bound.lineno, bound.col_offset), (name.lineno, name.col_offset)
        return any(
            start < (c.lineno, c.col_offset) < read
            and any(self.value(a, func, env, depth) for a in c.args if not isinstance(a, ast.Starred))
            for c in self._grown_by(name.id, func)
        )

    def _changed_in_place(self, name: ast.Name, bound: ast.stmt, func: ast.AST) -> bool:
        """Is the list display (or comprehension) `name` was last bound to (at `bound`) changed by a method LAX
        runs by JIT Fallback (`_IN_PLACE_FALLBACK`) before this read?"""
        start, read = (bound.lineno, bound.col_offset), (name.lineno, name.col_offset)
        return any(
            not c.nested and c.how in _IN_PLACE_FALLBACK and start < (c.node.lineno, c.node.col_offset) < read
            for c in analyzer(self.ctx).changes(name.id, func)
        )

    def _in_place_call(self, e: ast.Call, func: ast.AST, env: frozenset[str], depth: int) -> bool | None:
        """With `in_place`: `lst.pop()` of a list display is itself a fallback value; `len(lst)`
        is not (its length stays known: measured, `x + len(lst)` after `lst.pop()` still
        fails the join), so it is asked without `in_place`. None: neither call."""
        f = e.func
        if type(f) is ast.Attribute and f.attr == "pop" and type(f.value) is ast.Name:
            st = self._last_assignment(f.value, func)
            if st is not None and isinstance(_bound_value(st, f.value.id), ast.List):
                return True
        if type(f) is ast.Name and f.id == "len" and self.ctx.qualname(f) == "builtins.len":
            plain = OpaqueValues(
                self.ctx, self.none_joins, self.tensor_index, self.graph_calls, self.typed_index, while_joins=self.while_joins
            )
            return plain.value(e, func, env, depth)
        return None

    def _grown_by(self, name: str, func: ast.AST) -> list[ast.Call]:
        """`name.append(...)` / `.extend` / `.insert` in `func`'s own body (flow's shared index)."""
        return [
            c.node  # type: ignore[misc]
            for c in analyzer(self.ctx).changes(name, func)
            if not c.nested and c.how in GROWERS
        ]

    def _item_stored(
        self, name: ast.Name, bound: ast.stmt | None, func: ast.AST, env: frozenset[str], depth: int
    ) -> bool:
        """Is an item of `name` set to a fallback value (`y[m] = v / max(s.item(), 1e-5)`)
        after its last binding `bound` and before this read? MindSpore runs that store as
        Python too, and the tensor it leaves is a fallback object (measured, written/heldout18a
        probes `fe19b_si_*`: a masked or row store of such a value, then `nn.Dense` of the
        tensor, fails under LAX with "'int' object has no attribute '__len__'"; the tensor
        only returned compiles)."""
        where = (name.lineno, name.col_offset)
        after = (bound.lineno, bound.col_offset) if bound is not None else (0, 0)
        for st in own_nodes(func):
            if type(st) is not ast.Assign or len(st.targets) != 1:
                continue
            target = st.targets[0]
            if not isinstance(target, ast.Subscript):
                continue
            base = target.value
            while isinstance(base, ast.Subscript):
                base = base.value
            if not isinstance(base, ast.Name) or base.id != name.id:
                continue
            start = (st.lineno, st.col_offset)
            if not after < start < where or (st.end_lineno or 0, st.end_col_offset or 0) > where:
                continue
            if in_dead_branch(self.ctx, func, self.ctx.span(st)):
                continue
            if self.value(st.value, func, env, depth):
                return True
        return False

    def _loop_carried(self, name: ast.Name, func: ast.AST, env: frozenset[str], depth: int) -> bool:
        """Is `name`, read inside a `for` or `while` body, bound after the read in that body
        to a fallback value? From the second pass on the read gets it (written/heldout23a
        case `rnn_step_counter_global_dict`: `h = self.cell(x, h)` first, `x = tgt[:, t] *
        STATE["tf_ratio"] + ...` after it, with `STATE["tf_ratio"]` set from an interpreted
        `max`: "For 'GRUCell', the 'x' should be one of [float32, float16], but got
        'Tensor(shape=[-2], dtype=Float64)'")."""
        where = (name.lineno, name.col_offset)
        for loop in own_nodes(func):
            if type(loop) is not ast.For and type(loop) is not ast.While:
                continue
            body = loop.body
            if not body or not (body[0].lineno, body[0].col_offset) <= where <= (body[-1].end_lineno or 0, body[-1].end_col_offset or 0):
                continue
            # in a `for` over `reversed(...)`, also the assignment whose value holds the read
            # (`out = lat + ops.interpolate(out, ...)`: the next pass reads what this one
            # bound; measured, written/heldout37a probes `fix37e_rv_*`); elsewhere only
            # later ones (other loops' readers, MS145's fill-value chains, were measured
            # with the first pass's value: written/gen18 probes `genfresh24_full_range_*`)
            own = type(loop) is ast.For and type(loop.iter) is ast.Call and self.ctx.qualname(loop.iter.func) == "builtins.reversed"
            for st in body:
                for n in ast.walk(st):
                    if type(n) is not ast.Assign or (
                        (n.end_lineno or n.lineno, n.end_col_offset or 0) if own else (n.lineno, n.col_offset)
                    ) <= where:
                        continue
                    if not any(t.id == name.id for t in n.targets for t in _target_names(t)):
                        continue
                    if in_dead_branch(self.ctx, func, self.ctx.span(n)):
                        continue
                    value = _bound_value(n, name.id)
                    if value is not None and self.value(value, func, env, depth):
                        return True
        return False

    def _tensor_while_entry(self, name: ast.Name, st: ast.stmt | None, func: ast.AST) -> ast.Name | None:
        """`name` as seen on entering the outermost `while` with a tensor test that holds its
        last binding `st` but not the read, when the name is bound before that loop too. LAX
        joins the loop's exit value with the entry's: a graph tensor rebound in the body to a
        JIT Fallback result (`s = x.max().asnumpy(); x = x + float(s)`) is a graph tensor
        after the loop, and `ops.ones_like(x)`, `nn.Dense` of it compile (measured, written/lax
        probes `genfresh40_fb_while_*`; the same without the loop, under a tensor `if` or in a
        `for`, even inside a counter `while k < 2:` that MindSpore unrolls, fail; fresh v6
        seed 12001723). None otherwise."""
        if st is None:
            return None
        where = (name.lineno, name.col_offset)
        a = analyzer(self.ctx)
        found: ast.While | None = None
        node = self.ctx.statement_parent(st)
        while node is not None and node is not func:
            if (
                type(node) is ast.While
                and not (node.lineno, node.col_offset) <= where <= (node.end_lineno or 0, node.end_col_offset or 0)
                and a.kind(node.test, func).dynamic
            ):
                found = node
            node = self.ctx.statement_parent(node)
        if found is None or not self._rebound_by_arithmetic(name.id, found):
            return None
        entry = ast.Name(id=name.id, ctx=ast.Load(), lineno=found.lineno, col_offset=found.col_offset)
        params = {p.arg for p in func.args.args + func.args.kwonlyargs} if isinstance(func, ast.FunctionDef) else set()
        if self._last_assignment(entry, func) is None and name.id not in params:
            return None  # bound in the loop only: no entry value to join with
        return entry

    @staticmethod
    def _rebound_by_arithmetic(name: str, loop: ast.While) -> bool:
        """Is every binding of `name` in `loop` arithmetic (`interpreted.rebound_by_arithmetic`)?"""
        return rebound_by_arithmetic(name, loop)

    def _last_assignment(self, name: ast.Name, func: ast.AST) -> ast.stmt | None:
        """The statement that last assigned `name` before it is read (source order) in `func`
        (branches MindSpore folds away left out)."""
        best: ast.stmt | None = None
        where = (name.lineno, name.col_offset)
        for st in own_nodes(func):
            if isinstance(st, ast.Assign):
                # `v, s = Out(x, 2.0)` binds `v` too
                targets: list[ast.expr] = [n for t in st.targets for n in _target_names(t)]
            elif isinstance(st, (ast.AugAssign, ast.AnnAssign)):
                targets = [st.target]
            elif isinstance(st, ast.For):
                targets = [n for n in ast.walk(st.target) if isinstance(n, ast.Name)]
            else:
                continue
            if not any(isinstance(t, ast.Name) and t.id == name.id for t in targets):
                continue
            start = (st.lineno, st.col_offset)
            if start >= where or st.end_lineno is None:
                continue
            if not isinstance(st, ast.For) and (st.end_lineno, st.end_col_offset or 0) > where:
                continue  # the read is inside this statement's own value
            if in_dead_branch(self.ctx, func, self.ctx.span(st)) or folded_away_binding(st, self.ctx, func):
                continue
            if best is None or start > (best.lineno, best.col_offset):
                best = st
        return best

    def _bind(
        self,
        call: ast.Call,
        callee: ast.FunctionDef,
        func: ast.AST,
        env: frozenset[str],
        depth: int,
    ) -> frozenset[str]:
        params = [a.arg for a in callee.args.posonlyargs + callee.args.args]
        if params and params[0] in ("self", "cls"):
            params = params[1:]  # a method or a construct: bound to its instance
        given = call.args[1:] if self._class_called(call) is not None else call.args
        out = {
            p
            for p, a in zip(params, given, strict=False)
            if not isinstance(a, ast.Starred) and self.value(a, func, env, depth)
        }
        out.update(k.arg for k in call.keywords if k.arg and self.value(k.value, func, env, depth))
        star = callee.args.vararg
        if star is not None and any(
            self.value(a.value if isinstance(a, ast.Starred) else a, func, env, depth)
            for i, a in enumerate(given)
            if isinstance(a, ast.Starred) or i >= len(params)
        ):
            # `def construct(self, *inputs)` called `self.head(*[x, x])` or `self.head(x, v)`:
            # the tuple holds the value (fresh v5 seed 11700046: `inputs[0]` summed over
            # `inputs[1:]` and given to `ops.zeros_like`, "DtypeToEnum")
            out.add(star.arg)
        return frozenset(out)

    # ------------------------------------------------------------------ what a call reaches
    def _callee(self, call: ast.Call, func: ast.AST) -> ast.FunctionDef | str | None:
        """The user function/construct a call compiles, or the MindSpore cell class it calls."""
        for fn in callees_by_call(self.ctx).get(id(call), ()):
            if isinstance(fn, ast.FunctionDef):
                return fn
        f = call.func
        if (
            isinstance(f, ast.Attribute)
            and isinstance(f.value, ast.Call)
            and isinstance(f.value.func, ast.Name)
            and f.value.func.id == "super"
            and not f.value.args
        ):
            return self._base_method(f.attr, func)  # `super().construct(x)`
        if self._class_called(call) is not None:
            # `Base.construct(self, x)`: the method of the file's class, run on `self`
            assert isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name)
            known = self.ctx.scopes.info.classes.get(f.value.id)
            method = known.methods.get(f.attr) if known is not None else None
            return method if isinstance(method, ast.FunctionDef) else None
        if isinstance(f, ast.Name):
            top = self.ctx.scopes.info.functions.get(f.id)
            if (
                isinstance(top, ast.FunctionDef)
                and top is not func
                and self.ctx.scopes.scope_for(top) is not None
                and not any(isinstance(d, _FUNCS) and d.name == f.id for d in ast.walk(func))
            ):
                return top  # a module-level `@ms.jit` function compiled from here
            local = next(
                (
                    d
                    for d in ast.walk(func)
                    if isinstance(d, _FUNCS) and d.name == f.id and d is not func
                ),
                None,
            )
            if isinstance(local, ast.FunctionDef):
                return local
            made = self._loop_element(f, func)
            if made is None:
                made = self._module_mindspore_cell(f, func)
                if made is not None and self._is_sequential(made):
                    return self._sequential_sink(made, func)
            return self._cell_of(made, func)
        if isinstance(f, ast.Attribute) and self._self_attr(f) is not None:
            held = self._held(f.attr, func)
            if isinstance(held, ast.Call) and self._is_sequential(held):
                return self._sequential_sink(held, func)
            first = self._element(held)
            return self._cell_of(first if first is not None else held, func)
        if (
            isinstance(f, ast.Subscript)
            and isinstance(f.value, ast.Attribute)
            and self._self_attr(f.value) is not None
        ):
            held = self._held(f.value.attr, func)
            if isinstance(held, (ast.List, ast.Tuple)):
                # `self.blocks = [nn.Dense(3, 3), nn.ReLU()]` then `self.blocks[0](x)`: the
                # element a constant index names (fresh v5 seed 10800008)
                i = f.slice.value if isinstance(f.slice, ast.Constant) else None
                if type(i) is int and -len(held.elts) <= i < len(held.elts):
                    return self._cell_of(held.elts[i], func)
                return None
            return self._cell_of(self._element(held), func)
        return None

    def _class_called(self, call: ast.Call) -> str | None:
        """The file's class whose method `call` runs on `self` spelt through the class
        (`Base.construct(self, x)`: the explicit `self` is no parameter the value binds)."""
        f = call.func
        if (
            isinstance(f, ast.Attribute)
            and isinstance(f.value, ast.Name)
            and f.value.id in self.ctx.scopes.info.classes
            and call.args
            and isinstance(call.args[0], ast.Name)
            and call.args[0].id == "self"
        ):
            return f.value.id
        return None

    def _base_method(self, name: str, func: ast.AST) -> ast.FunctionDef | None:
        """The method `name` that `super().name(...)` in `func` runs: the first base class of
        `func`'s class, among this file's, that defines it (fresh v5 seed 11600041: a
        namedtuple's field given to `super().construct(x)` reaches the base's `nn.Dense`)."""
        cls = analyzer(self.ctx).owner_class(func)
        info = self.ctx.scopes.info
        known = info.classes.get(cls.name) if cls is not None else None
        seen: set[str] = set()
        bases = list(known.bases) if known is not None else []
        while bases:
            base = bases.pop(0)
            if base in seen or not base.startswith(info.module + "."):
                continue
            seen.add(base)
            found = info.classes.get(base.removeprefix(info.module + "."))
            if found is None:
                continue
            method = found.methods.get(name)
            if isinstance(method, ast.FunctionDef):
                return method
            bases.extend(found.bases)
        return None

    def _partial_of(self, f: ast.expr, func: ast.AST) -> str | None:
        """The qualified name of the function `functools.partial(fn, ...)` wraps, when `f` is
        a name bound once to it in the compiled function itself. Not one built outside
        compiled code: a module-level partial or one held on `self` is a Python callable LAX
        calls by JIT Fallback, and the wrapped function then runs as Python (measured,
        written/gen18 probes `v20_pt_module_zeros_like`, `v20_pt_self_leaky` compile)."""
        made = analyzer(self.ctx).single_assignment(f.id, func) if isinstance(f, ast.Name) else None
        if (
            isinstance(made, ast.Call)
            and made.args
            and self.ctx.qualname(made.func) == "functools.partial"
        ):
            return self.ctx.qualname(made.args[0])
        return None

    @staticmethod
    def _self_attr(f: ast.Attribute) -> str | None:
        return f.attr if isinstance(f.value, ast.Name) and f.value.id == "self" else None

    def _held(self, attr: str, func: ast.AST) -> ast.expr | None:
        a = analyzer(self.ctx)
        cls = a.owner_class(func)
        if cls is None:
            return None
        values = a.self_values(cls).get(attr, [])
        if len(values) != 1:
            return None
        if isinstance(values[0], ast.Name):
            return _given_to_init(cls, attr, self.ctx) or values[0]
        return values[0]

    def sequential_successor(self, func: ast.AST) -> tuple[str, ast.Call] | None:
        """When `func` is the `construct` of a block of an `nn.SequentialCell(...)` built in
        this file: the MindSpore cell after it that reads its input's shape or dtype (past
        MindSpore blocks that do not, as `_sequential_sink`), with that SequentialCell call."""
        key = "opaque.sequential_calls"
        calls: list[ast.Call] | None = self.ctx.cache.get(key)
        if calls is None:
            calls = self.ctx.cache[key] = [n for n in ast.walk(self.ctx.tree) if type(n) is ast.Call and self._is_sequential(n)]
        cells = _queries()[0]
        for call in calls:
            blocks = [self._cell_of(b, func) for b in self._blocks(call)]
            for i, made in enumerate(blocks):
                if made is not func:
                    continue
                for later in blocks[i + 1 :]:
                    if isinstance(later, ast.FunctionDef) and self._passes_input(later):
                        continue  # a Cell of the file returning what it is given, `x * self.scale`
                    if not isinstance(later, str):
                        break  # unknown, or a Cell of the file that does not pass it on
                    if later in cells:
                        return later, call
        return None

    def _passes_input(self, construct: ast.FunctionDef) -> bool:
        """Does `construct` (a block of an `nn.SequentialCell`) return a JIT Fallback value
        when its input is one (measured, written/heldout41a probe
        `fix43a_sq_mod_leaky_plain_dense`: `x * self.scale` passes it on to `nn.Dense`)?"""
        params = [a.arg for a in construct.args.args[1:]]
        if not params:
            return False
        env = frozenset(params[:1])
        rets = [r.value for r in ast.walk(construct) if type(r) is ast.Return and r.value is not None]
        return bool(rets) and all(self.value(r, construct, env) for r in rets)

    def _is_sequential(self, held: ast.expr | None) -> bool:
        return isinstance(held, ast.Call) and self.ctx.qualname(held.func) == "mindspore.nn.SequentialCell"

    def _sequential_sink(self, held: ast.Call, func: ast.AST) -> ast.FunctionDef | str | None:
        """What gets the value `self.seq(x)` gives an `nn.SequentialCell`: its first block
        that reads its input's shape or dtype, past MindSpore blocks that do not (a fallback
        value stays one through them: measured, written/heldout16b probes `ls17_sq_*`:
        `nn.SequentialCell(nn.ReLU(), nn.Dense(4, 1))` and `(nn.Dropout(p=0.1), nn.Dense(4, 1))`
        fail under LAX as `nn.Dense` alone does), or its first block of the user's."""
        cells = _queries()[0]
        for block in self._blocks(held):
            made = self._cell_of(block, func)
            if made is None or not isinstance(made, str) or made in cells:
                return made
        return None

    def _blocks(self, held: ast.Call) -> list[ast.expr]:
        """The blocks of `nn.SequentialCell(a, b)` / `nn.SequentialCell([a, b])` in order."""
        if len(held.args) != 1 or isinstance(held.args[0], ast.Call):
            return [a for a in held.args if not isinstance(a, ast.Starred)]
        seq: ast.expr | None = held.args[0]
        if isinstance(seq, ast.Name):
            seq = self._local_list(seq, held)
        return list(seq.elts) if isinstance(seq, (ast.List, ast.Tuple)) else []

    def _element(self, held: ast.expr | None) -> ast.expr | None:
        """An element of `nn.CellList([...])` / `nn.SequentialCell([...])`."""
        if not (
            isinstance(held, ast.Call) and self.ctx.qualname(held.func) in _CONTAINERS and held.args
        ):
            return None
        seq: ast.expr | None = held.args[0]
        if isinstance(seq, ast.Call) and self._is_sequential(held):
            return seq  # `nn.SequentialCell(nn.Dense(4, 8), nn.ReLU())`: blocks as arguments
        if isinstance(seq, ast.Name):  # `layers = [...]` then `nn.SequentialCell(layers)`
            seq = self._local_list(seq, held)
        if isinstance(seq, (ast.List, ast.Tuple)) and seq.elts:
            return seq.elts[0]
        if isinstance(seq, ast.ListComp):
            return seq.elt
        return None

    def _local_list(self, name: ast.Name, where: ast.AST) -> ast.expr | None:
        """The list literal last assigned to `name` before `where`, in the function holding it."""
        func = self.ctx.parent(where)
        while func is not None and not isinstance(func, _FUNCS):
            func = self.ctx.parent(func)
        if func is None:
            return None
        best: ast.expr | None = None
        for st in ast.walk(func):
            if (
                isinstance(st, ast.Assign)
                and st.lineno < getattr(where, "lineno", 0)
                and any(isinstance(t, ast.Name) and t.id == name.id for t in st.targets)
                and (best is None or st.lineno > getattr(best, "lineno", 0))
            ):
                best = st.value
        return best if isinstance(best, (ast.List, ast.Tuple, ast.ListComp)) else None

    def _module_mindspore_cell(self, name: ast.Name, func: ast.AST) -> ast.Call | None:
        """`proj = nn.Dense(1, 4)` at module level, bound once there and not in `func`, called
        from a compiled function (`@ms.jit def embed(x, h): return proj(...)`): the MindSpore
        cell it builds, read as `self.proj` is (measured, written/heldout42a case
        `r2_time_np_cos_of_tensor_arg_in_jit` and probes `fix42a_jf_*`: a JIT Fallback input
        fails as in a Cell, "'int' object has no attribute '__len__'"). Only MindSpore's own
        cells: a class of the file is left to the resolver. Only in the decorated function
        itself: through a helper it calls (`grad_fn = ms.value_and_grad(loss_fn, ...)`, the cell
        called in `loss_fn`) `ms.Tensor(np.array(...), ms.float32)` compiled (written/heldout19b
        case `rl_replay_buffer_sample_in_jit`), a path not measured further."""
        if not any(
            (ctx_name := (self.ctx.qualname(d.func if type(d) is ast.Call else d) or "")).endswith(".jit") or ctx_name == "jit"
            for d in getattr(func, "decorator_list", ())
        ):
            return None
        if any(type(n) is ast.Name and n.id == name.id and type(n.ctx) is not ast.Load for n in ast.walk(func)):
            return None
        if name.id in {a.arg for a in ast.walk(func) if type(a) is ast.arg}:
            return None
        made: list[ast.Call] = []
        for st in self.ctx.tree.body:
            stored = {n.id for n in ast.walk(st) if type(n) is ast.Name and type(n.ctx) is ast.Store}
            if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and st.name == name.id:
                return None
            if name.id not in stored:
                continue
            if not (
                type(st) is ast.Assign
                and len(st.targets) == 1
                and type(st.targets[0]) is ast.Name
                and type(st.value) is ast.Call
            ):
                return None
            made.append(st.value)
        if len(made) != 1 or not (self.ctx.qualname(made[0].func) or "").startswith("mindspore."):
            return None
        return made[0]

    def _loop_element(self, name: ast.Name, func: ast.AST) -> ast.expr | None:
        """`for blk in self.blocks` (or `enumerate(self.blocks)`): the element `blk` names."""
        for st in ast.walk(func):
            if not isinstance(st, ast.For):
                continue
            it, target = st.iter, st.target
            if (
                isinstance(it, ast.Call)
                and isinstance(it.func, ast.Name)
                and it.func.id == "enumerate"
                and it.args
            ):
                it = it.args[0]
                target = (
                    target.elts[1]
                    if isinstance(target, ast.Tuple) and len(target.elts) == 2
                    else target
                )
            if (
                isinstance(target, ast.Name)
                and target.id == name.id
                and isinstance(it, ast.Attribute)
                and self._self_attr(it)
            ):
                return self._element(self._held(it.attr, func))
        return None

    def _cell_of(self, made: ast.expr | None, func: ast.AST) -> ast.FunctionDef | str | None:
        if not isinstance(made, ast.Call):
            return None
        q = self.ctx.qualname(made.func)
        if q is None:
            return None
        if q.startswith("mindspore."):
            return q
        cls = next(
            (
                c
                for c in self.ctx.tree.body
                if isinstance(c, ast.ClassDef) and q.endswith("." + c.name)
            ),
            None,
        )
        return self._construct(cls) if cls is not None else None

    def _method_of(self, cls_name: str, name: str, depth: int = 0) -> ast.FunctionDef | None:
        """The method `name` an instance of the file's class `cls_name` runs (its own, else
        the first base of the file defining it)."""
        cls = next(
            (c for c in self.ctx.tree.body if isinstance(c, ast.ClassDef) and c.name == cls_name),
            None,
        )
        if cls is None or depth >= _DEPTH:
            return None
        for item in cls.body:
            if isinstance(item, ast.FunctionDef) and item.name == name:
                return item
        for base in cls.bases:
            if isinstance(base, ast.Name):
                found = self._method_of(base.id, name, depth + 1)
                if found is not None:
                    return found
        return None

    def _construct(self, cls: ast.ClassDef, depth: int = 0) -> ast.FunctionDef | None:
        for item in cls.body:
            if isinstance(item, ast.FunctionDef) and item.name == "construct":
                return item
        for base in cls.bases:
            name = base.id if isinstance(base, ast.Name) else None
            parent = next(
                (c for c in self.ctx.tree.body if isinstance(c, ast.ClassDef) and c.name == name),
                None,
            )
            if parent is not None and depth < _DEPTH:
                return self._construct(parent, depth + 1)
        return None

    def looped_comprehension(self, comp: ast.ListComp | ast.GeneratorExp, func: ast.AST, env: frozenset[str]) -> str | None:
        """Why a comprehension over a JIT Fallback value in the body of a `for` loop fails, if
        it is one (measured, written/gen18 probes `v22_ab_*`: `for _ in range(2):` around
        `ops.stack([r * 2 for r in v])` or `[ms.Tensor(v) for v in list(x.asnumpy()...)]`
        fails, "The pointer[abs_base] is null"; the same comprehension outside a loop, a
        comprehension over constants in the loop, and one over a graph tensor compile)."""
        node: ast.AST | None = self.ctx.parent(comp)
        child: ast.AST = comp
        while node is not None and node is not func and not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            in_body = (isinstance(node, ast.For) and child is not node.iter and child is not node.target) or (
                isinstance(node, ast.While) and child is not node.test
            )
            if in_body:
                if isinstance(node, ast.For) and self.value(node.iter, func, env) and self._runtime(node.iter, func, env):
                    # a loop over a fallback value runs no pass while compiling: its body,
                    # the comprehension too, is never compiled (measured, written/heldout14
                    # probe `lx_tr_row_comp_tensor_items` compiles)
                    return None
                if isinstance(node, ast.For) and range_count(node.iter) == 1:
                    return None  # `for _ in range(1):` (measured, `genfresh28_ab_len_loop_once`)
                # also `range(len(v))` / `range(v.shape[0])` (measured, written/gen18 probes
                # `genfresh28_ab_*`: in a `for` over `range(2)` or a `while`, not in `range(1)`
                # or outside a loop; fresh v5 seed 11500012)
                over = self._comprehension_over_fallback(comp, func, env, ranges=True)
                if over is None or runs_only_if_reached(comp, self.ctx, func):
                    # run as Python under a run-time test: it fails only when it runs, and
                    # not this way (MS193 / MS173 say so; fresh v6 seeds 12001319, 12001340)
                    return None
                if isinstance(node, ast.While) and joined_in_tensor_while(over, comp, self.ctx, func):
                    return None
                loop = "for" if isinstance(node, ast.For) else "while"
                return (
                    f"a comprehension over `{ast.unparse(over)}`, read from a JIT Fallback value, inside a `{loop}` loop:"
                    " MindSpore 2.10 cannot compile it (\"The pointer[abs_base] is null\"); build it once"
                    " before the loop, or with tensor ops"
                )
            child, node = node, self.ctx.parent(node)
        return None

    def _item_of_fallback(self, e: ast.expr, func: ast.AST, env: frozenset[str], depth: int) -> bool:
        """Is `e` a Python number read from a fallback value by `.item()` (maybe through
        `float` / `int` and names bound once: `s = x.sum().item()` then `float(s)`)? The
        conversion runs as Python too (measured, fresh v5 seed 11000045: `x` made a Python
        object by `self.calls += 1` in a sub-cell, `ops.full((2, 3), float(s))` fails with
        FillV2's "must be Tensor but got Float32", as of `x.asnumpy()`)."""
        if depth > 4:
            return False
        if isinstance(e, ast.Name):
            bound = analyzer(self.ctx).single_assignment(e.id, func)
            return bound is not None and self._item_of_fallback(bound, func, env, depth + 1)
        if not isinstance(e, ast.Call):
            return False
        f = e.func
        if isinstance(f, ast.Attribute) and f.attr == "item" and not e.args:
            return self._numbers().value(f.value, func, env)
        if self.ctx.qualname(f) in ("builtins.float", "builtins.int") and len(e.args) == 1:
            arg = e.args[0]
            if self._item_of_fallback(arg, func, env, depth + 1):
                return True
            # `float(s)` with `s = x.sum()` of such an `x`: a method of the Python object
            # (not any expression computed from one: `len(ops.concat(outs))` is a number the
            # graph knows, famc probes `fl*`)
            if isinstance(arg, ast.Name):
                bound = analyzer(self.ctx).single_assignment(arg.id, func)
                if bound is None:
                    return False
                arg = bound
            if not (isinstance(arg, ast.Call) and isinstance(arg.func, ast.Attribute)):
                return False
            while isinstance(arg, ast.Call) and isinstance(arg.func, ast.Attribute):
                arg = arg.func.value
            return isinstance(arg, ast.Name) and self._numbers().value(arg, func, env)
        return False

    # ---------------------------------------------- the dtype LAX guesses for a fallback value
    # Each JIT Fallback step compiles to a PyInterpret / PyExecute node whose output is an
    # `AbstractAny` (MindSpore 2.10 ccsrc/pipeline/jit/ps/static_analysis/prim.cc,
    # `GetLocalArgsUniqueDtype`): given the dtype of its one tensor input (a graph tensor, or
    # an Any that got one: "supposed"), else the default Float64. The inputs' dtypes are
    # compared as objects (`res != dtype` on `TypePtr`), so two float32 tensors of different
    # origins (`x` and `x.sum(axis=0)`) may or may not count as one dtype, depending on how
    # MindSpore built their abstracts. `ops.fill` casts its fill value to float32 before FillV2,
    # and the cast is dropped only when the value's guessed dtype is already Float32: then a
    # Python float reaches FillV2 at run time and fails. Measured (written/gen18 probes
    # `genfresh26_fl_*`, `fix26d_*`, save_graphs): `x + float(np.mean(x.asnumpy()))` (one
    # origin) fills into a failure; `x + float(np.mean(x.sum(axis=0).asnumpy().tolist()))`
    # (two) gives Float64 and runs, unless `x` itself came from a sub-cell's `x * 1`.
    def _dtype_undecided(self, e: ast.expr, func: ast.AST, env: frozenset[str]) -> bool:
        """Does the JIT Fallback chain computing `e` hold a step that joins tensor dtypes of
        more than one origin (`x + float(np.mean(x.sum(axis=0).asnumpy().tolist()))`)? Then
        MindSpore's guess of its dtype cannot be told from the source, and the rule keeps
        silent (a miss rather than a false error)."""
        seen: set[int] = set()
        return self._chain_mixes(e, func, env, 0, seen) or self._dtype_less(e, func, env, 0)

    def _dtype_less(self, e: ast.expr, func: ast.AST, env: frozenset[str], depth: int) -> bool:
        """Does the fallback value `e` come, through steps that read no graph tensor, from a
        call whose inputs give no dtype (`_called_on_containers`)? Each such step's result is
        an Any of no known dtype, which LAX takes as Float64, so the cast `ops.fill` adds is
        kept; a step reading a graph tensor (`x + y * 0`) gives that tensor's Float32 again."""
        if depth > _STEPS:
            return False
        if isinstance(e, ast.Name):
            st = self._last_assignment(e, func)
            if st is None:
                # a parameter: what every call in this file gives it (also in this function's
                # own view, which takes it for a graph tensor)
                args = self._arguments_of(e.id, func)
                return bool(args) and all(self._dtype_less(a, c, cenv, depth + 1) for a, c, cenv in args)
            if not self.value(e, func, env):
                return False
            value = _bound_value(st, e.id)
            return isinstance(st, ast.Assign) and value is not None and self._dtype_less(value, func, env, depth + 1)
        if isinstance(e, ast.BinOp):
            sides = (e.left, e.right)
            flow = analyzer(self.ctx)
            if any(flow.kind(s, func) is Kind.TENSOR and not self.value(s, func, env) for s in sides):
                return False  # a graph tensor gives the step its dtype
            # the other side a number (`x + i`, `v / 3`): no dtype of its own
            return any(self._dtype_less(s, func, env, depth + 1) for s in sides)
        if isinstance(e, ast.Subscript):
            return self._dtype_less(e.value, func, env, depth + 1)
        if not isinstance(e, ast.Call):
            return False
        if self._called_on_containers(e, func):
            return True
        callee = self._callee(e, func)
        if isinstance(callee, ast.FunctionDef):
            inner, bound = self._entered(e, callee, func, env, depth)
            returns = [r.value for r in ast.walk(inner) if isinstance(r, ast.Return) and r.value is not None]
            return bool(returns) and all(self._dtype_less(r, inner, bound, depth + 1) for r in returns)
        if isinstance(e.func, ast.Attribute) and not e.args and not e.keywords:
            return self._dtype_less(e.func.value, func, env, depth + 1)  # `v.asnumpy()`, `v.max()`
        if len(e.args) == 1 and not e.keywords:
            return self._dtype_less(e.args[0], func, env, depth + 1)  # `np.abs(v)`, `float(v)`
        return False

    def _chain_mixes(self, e: ast.expr, func: ast.AST, env: frozenset[str], depth: int, seen: set[int]) -> bool:
        if depth > _DEPTH or len(seen) > 400:
            return False
        stack: list[ast.expr] = [e]
        while stack:
            n = stack.pop()
            if id(n) in seen:
                continue
            seen.add(id(n))
            if not self.value(n, func, env):
                # a graph value or a constant: not part of the fallback chain, but a graph
                # tensor it reads gives the chain its dtype
                if isinstance(n, ast.Attribute):
                    stack.append(n.value)  # `x.asnumpy`: the receiver is read
                elif self._not_float32(n, func) or self._param_source_mixes(n, func, depth, seen):
                    return True
                continue
            if isinstance(n, ast.BinOp) and len(self._origins(n, func, env, 0)) > 1:
                return True
            if isinstance(n, ast.Name):
                st = self._last_assignment(n, func)
                if st is None:
                    if n.id in env and self._params_mix(n, func, depth, seen):
                        return True
                    continue
                if self._runtime_if_join(st, n, func):
                    return True
                # `x += v`: a step joining `x` and `v`, as `x + v` is
                if (
                    isinstance(st, ast.AugAssign)
                    and isinstance(st.target, ast.Name)
                    and len(self._origins(st.value, func, env, 0) | self._name_origins(st.target, st, func)) > 1
                ):
                    return True
                value = _bound_value(st, n.id)
                if value is not None:
                    stack.append(value)
                continue
            if isinstance(n, ast.Call):
                callee = self._callee(n, func)
                if isinstance(callee, ast.FunctionDef) and depth < _DEPTH:
                    inner, bound = self._entered(n, callee, func, env, depth)
                    if any(
                        self._chain_mixes(r.value, inner, bound, depth + 1, seen)
                        for r in ast.walk(inner)
                        if isinstance(r, ast.Return) and r.value is not None
                    ):
                        return True
                    continue
            stack.extend(c for c in ast.iter_child_nodes(n) if isinstance(c, ast.expr))
        return False

    def _called_on_containers(self, call: ast.Call, func: ast.AST) -> bool:
        """Is `call` a JIT Fallback call of a Python library function given no tensor itself,
        only functions and containers of tensors (`functools.reduce(lambda a, b: a + b, [x, x,
        x])`)? LAX calls it as `__call_func_str__(__input_0__, __input_1__)` (STRICT names it),
        whose inputs give no tensor dtype: the result's guessed dtype is the default Float64,
        so the cast `ops.fill` adds is kept (measured, written/gen18 probes `genfresh29_fr_*`,
        `genfresh29_fc_*`, fresh v5 seed 11600057: `x = functools.reduce(...)`, then
        `ops.full(..., float(np.abs(x.asnumpy()).max()))` runs; `x + reduce(...) * 0`,
        `sorted([x, x * 2], key=...)[0]`, a script reading `x` itself, and `sum([x, x, x])`
        fail)."""
        q = self.ctx.qualname(call.func) or ""
        module = q.partition(".")[0]
        if "." not in q or module in _DTYPED_MODULES or module == self.ctx.scopes.info.module.partition(".")[0]:
            return False
        flow = analyzer(self.ctx)
        containers = 0
        for a in [*call.args, *(k.value for k in call.keywords)]:
            shown = flow.single_assignment(a.id, func) if isinstance(a, ast.Name) else a
            if isinstance(shown, (ast.List, ast.Tuple)):
                containers += 1  # a list the graph builds: one input, of no tensor dtype
            elif isinstance(a, ast.Starred) or flow.kind(a, func) is Kind.TENSOR:
                return False
        return containers > 0

    def _runtime_if_join(self, st: ast.stmt, read: ast.Name, func: ast.AST) -> bool:
        """Is `st` a binding inside an `if` on a run-time condition that `read` (after the
        `if`) sees joined with the other branch's value? The join gives the value a new
        abstract, whose dtype LAX no longer guesses as the fallback chain's Float32
        (measured, written/gen18 probes `genfresh28_fw_np_if*`, `genfresh28_fv_*`: `if
        x.max() > -1000: x = x + float(np.mean(x.asnumpy()))` then `ops.full(..., float(
        x.max().asnumpy()))` runs, also with a fallback value on both sides; the same under
        `if x.shape[0] > 1:`, folded while compiling, fails)."""
        flow = analyzer(self.ctx)
        node = self.ctx.parent(st)
        around_read: set[int] | None = None  # the nodes holding `read`, once an `if` asks
        while node is not None and node is not func:
            if isinstance(node, ast.If):
                if around_read is None:
                    around_read = self._around(read, func)
                if id(node) not in around_read and flow.kind(node.test, func).dynamic:
                    return True
            node = self.ctx.parent(node)
        return False

    def _around(self, node: ast.AST, func: ast.AST) -> set[int]:
        """The ids of the nodes that hold `node`, up to `func`."""
        out: set[int] = set()
        p = self.ctx.parent(node)
        while p is not None and p is not func:
            out.add(id(p))
            p = self.ctx.parent(p)
        return out

    def _param_source_mixes(self, e: ast.expr, func: ast.AST, depth: int, seen: set[int]) -> bool:
        """Is the graph tensor `e` (or the one whose dtype it keeps: `x` of `x.max()`) a
        parameter this function's own view takes for a graph tensor, given by a caller a
        fallback chain that joins two origins? (`float(x.max().asnumpy())` in a method given
        `x + math.tanh(x.mean())`: fresh v5 seed 11500010)"""
        src = _same_dtype_source(e)
        return (
            isinstance(src, ast.Name)
            and self._last_assignment(src, func) is None
            and self._params_mix(src, func, depth, seen)
        )

    def _params_mix(self, n: ast.Name, func: ast.AST, depth: int, seen: set[int]) -> bool:
        """Does a chain a caller gives the parameter `n` join dtypes of two origins?"""
        return any(
            self._chain_mixes(a, caller, cenv, depth + 1, seen) for a, caller, cenv in self._arguments_of(n.id, func)
        )

    def _not_float32(self, e: ast.expr, func: ast.AST) -> bool:
        """Is `e` a graph tensor of a dtype other than float32 (measured, written/gen18 probes
        `fix26d_float64_input`, `fix26d_int32_input`, `fix26d_astype64_origin`: a fallback value
        taking a float64 or int32 dtype keeps the cast `ops.fill` adds, and runs)?"""
        flow = analyzer(self.ctx)
        if flow.kind(e, func) is not Kind.TENSOR:
            return False
        dtype = flow.dtype_of(e, func)
        if dtype is None and isinstance(e, ast.Name):
            # `x = x.astype(ms.float64)`: the cast's dtype, when the flow model has none
            st = self._last_assignment(e, func)
            bound = _bound_value(st, e.id) if isinstance(st, ast.Assign) else None
            if isinstance(bound, ast.Call) and isinstance(bound.func, ast.Attribute) and bound.func.attr in ("astype", "to"):
                d = bound.args[0] if bound.args else None
                dtype = d.attr if isinstance(d, ast.Attribute) else None
            elif isinstance(bound, ast.Call) and self.ctx.qualname(bound.func) == "mindspore.ops.cast" and len(bound.args) == 2:
                d = bound.args[1]
                dtype = d.attr if isinstance(d, ast.Attribute) else None
        return dtype is not None and dtype not in ("float32", "Float32")

    def _origins(self, e: ast.expr, func: ast.AST, env: frozenset[str], depth: int) -> frozenset[object]:
        """Where the tensor dtypes reaching the fallback value `e` come from: each graph tensor
        JIT Fallback reads (a name's binding, or the expression itself), and each parameter
        given a fallback value by a caller."""
        if depth > 40:
            return frozenset({id(e)})  # too long to follow: taken as an origin of its own
        if not self.value(e, func, env):
            if analyzer(self.ctx).kind(e, func) is not Kind.TENSOR:
                return frozenset()  # a number or constant: no dtype of its own
            e = _same_dtype_source(e)
            if isinstance(e, ast.Name):
                return self._name_origins(e, None, func)
            return frozenset({id(e)})
        if isinstance(e, ast.Name):
            st = self._last_assignment(e, func)
            if st is None:
                return frozenset({("param", id(func), e.id)})
            value = _bound_value(st, e.id)
            if value is None:
                return frozenset({id(st)})
            bound = self._origins(value, func, env, depth + 1)
            if isinstance(st, ast.AugAssign) and isinstance(st.target, ast.Name):
                bound |= self._name_origins(st.target, st, func)
            return bound
        if isinstance(e, ast.Call) and isinstance(self._callee(e, func), ast.FunctionDef):
            return frozenset({id(e)})  # what a user function returns: its own chain
        out: frozenset[object] = frozenset()
        children: list[ast.expr] = [c for c in ast.iter_child_nodes(e) if isinstance(c, ast.expr)]
        if isinstance(e, ast.Call):
            # the function called is no input; a method's receiver is (`x.asnumpy()`)
            children.remove(e.func)
            if isinstance(e.func, ast.Attribute):
                children.append(e.func.value)
        for c in children:
            out |= self._origins(c, func, env, depth + 1)
        return out

    def _name_origins(self, name: ast.Name, at: ast.stmt | None, func: ast.AST) -> frozenset[object]:
        """The origin of a graph tensor read by name: its binding (one abstract, so one dtype
        object, for every read of it until the next binding)."""
        st = self._last_assignment(name, func) if at is None else self._last_assignment(
            ast.Name(id=name.id, ctx=ast.Load(), lineno=at.lineno, col_offset=at.col_offset), func
        )
        return frozenset({("name", id(func), name.id, id(st) if st is not None else None)})

    def _arguments_of(self, param: str, func: ast.AST) -> list[tuple[ast.expr, ast.AST, frozenset[str]]]:
        """The arguments calls of `func` in this file give its parameter `param`, with the
        calling function and what its own parameters hold."""
        out: list[tuple[ast.expr, ast.AST, frozenset[str]]] = []
        if not isinstance(func, ast.FunctionDef):
            return out
        params = [a.arg for a in func.args.posonlyargs + func.args.args]
        if params and params[0] in ("self", "cls"):
            params = params[1:]
        sites: list[tuple[ast.Call, ast.AST]] = []
        scope = self.ctx.scopes.scope_for(func)
        for site in getattr(scope, "call_sites", ())[:8]:
            if site.path == self.ctx.path and site.call is not None and site.caller_node is not None:
                sites.append((site.call, site.caller_node))
        if scope is not None and scope.kind == "jit" and self.ctx.scopes.info.functions.get(func.name) is func:
            for s in lax_scopes(self.ctx):
                if s.function is not func:
                    sites.extend(
                        (c, s.function)
                        for c in calls_in(s.function)
                        if isinstance(c, ast.Call) and isinstance(c.func, ast.Name) and c.func.id == func.name
                    )
        for call, caller in sites[:8]:
            arg: ast.expr | None = next((k.value for k in call.keywords if k.arg == param), None)
            if arg is None and param in params:
                i = params.index(param)
                if i < len(call.args) and not any(isinstance(a, ast.Starred) for a in call.args[: i + 1]):
                    arg = call.args[i]
            if arg is not None:
                out.append((arg, caller, self.opaque_params(caller)))
        return out

    def _numbers(self) -> OpaqueValues:
        """This model for a number read from a value (`graph_calls`: a call of a function
        holding a loop MindSpore cannot unroll gives a graph value)."""
        return OpaqueValues(self.ctx, self.none_joins, self.tensor_index, graph_calls=True, while_joins=self.while_joins)

    def _runtime(self, e: ast.expr, func: ast.AST, env: frozenset[str]) -> bool:
        """Is `e` known only at run time (a parameter holding a fallback value, or a value the
        flow analysis calls dynamic)? JIT Fallback on constants (`np.arange(3).tolist()`) is
        folded while compiling (written/lax probe `lp_n_loop_over_numpy_const_append_ok`)."""
        if isinstance(e, ast.Name) and e.id in env:
            return True
        a = analyzer(self.ctx)
        if a.kind(e, func).dynamic:
            return True
        # a name bound once to `self.<d>[<key>]` that a store of a run-time value reaches
        # (written/lax probe `fix43b_pc_cache_other_name_for`: the flow model does not follow
        # the dict)
        read = a.single_assignment(e.id, func) if type(e) is ast.Name else e
        if type(read) is ast.Subscript:
            stored = _self_item_stored(read, func, self.ctx)
            return stored is not None and a.kind(stored, func).dynamic
        return False

    def _filled_over_fallback(self, name: ast.Name, func: ast.AST, env: frozenset[str]) -> ast.For | None:
        """The `for` over a JIT Fallback value that alone grows the list `name` (bound to `[]`,
        then `.append`-ed only inside that loop) before it is read here: MindSpore runs no pass
        of such a loop while compiling, and the list it gives on is empty."""
        last = self._last_assignment(name, func)
        if not (isinstance(last, ast.Assign) and isinstance(last.value, ast.List) and not last.value.elts):
            return None
        bound_at = (last.lineno, last.col_offset)
        read_at = (name.lineno, name.col_offset)
        loop: ast.For | None = None
        for c in self._grown_by(name.id, func):
            if not bound_at < (c.lineno, c.col_offset) < read_at:
                continue
            node: ast.AST | None = self.ctx.parent(c)
            while node is not None and not isinstance(node, (ast.For, ast.While, ast.FunctionDef)):
                node = self.ctx.parent(node)
            if not isinstance(node, ast.For) or (node.lineno, node.col_offset) < bound_at:
                return None
            if loop is not None and node is not loop:
                return None
            loop = node
        if loop is None or not self.value(loop.iter, func, env) or not self._runtime(loop.iter, func, env):
            return None
        if isinstance(loop.iter, ast.Call) and self.ctx.qualname(loop.iter.func) == "builtins.range":
            return None
        return loop

    def _comprehension_over_fallback(
        self, comp: ast.ListComp | ast.GeneratorExp, func: ast.AST, env: frozenset[str], ranges: bool = False
    ) -> ast.expr | None:
        """The fallback value a comprehension iterates (`r for r in v`, also through
        `enumerate` / `zip` / `reversed` / `list` / `tuple` of it), if it iterates one; with
        `ranges`, also a `range` whose bound is read from one (`range(len(v))`)."""
        for gen in comp.generators:
            it = gen.iter
            if isinstance(it, ast.Call) and self.ctx.qualname(it.func) == "builtins.range":
                if ranges and any(self.value(a, func, env) for a in it.args if not isinstance(a, ast.Starred)):
                    return it
                continue  # numbers
            while isinstance(it, ast.Call) and self.ctx.qualname(it.func) in _ITERABLE_WRAPPERS and it.args:
                inner = [a for a in it.args if not isinstance(a, ast.Starred) and self.value(a, func, env)]
                if not inner:
                    break
                it = inner[0]
            if isinstance(it, ast.Call) and self.ctx.qualname(it.func) in _ITERABLE_WRAPPERS:
                continue
            if ranges and isinstance(it, ast.Name) and self._display_of_fallback(it, func):
                return it
            if (
                isinstance(it, (ast.Name, ast.Attribute, ast.Subscript, ast.BinOp, ast.Call))
                and self.value(it, func, env)
                and self._runtime(it, func, env)
            ):
                return it
        return None

    def _display_of_fallback(self, name: ast.Name, func: ast.AST) -> bool:
        """Is `name` last bound to a list or tuple display holding a number read from a JIT
        Fallback value (`vals = [x.shape[1] * 1.0, 0.5, 2.0]` of an interpreted `x`)? Iterated
        by a comprehension inside a loop it fails as the value itself does (measured,
        written/gen18 probes `fix29b_jn_*_loop_stack`, "The pointer[abs_base] is null";
        fresh v5 seed 11400104)."""
        last = self._last_assignment(name, func)
        built = _bound_value(last, name.id) if isinstance(last, ast.Assign) else None
        return isinstance(built, (ast.List, ast.Tuple)) and any(
            not isinstance(e, (ast.Constant, ast.Starred)) and interpreted(e, self.ctx, func) for e in built.elts
        )

    def placeholder_list(self, name: ast.expr, func: ast.AST, env: frozenset[str]) -> ast.expr | None:
        """The JIT Fallback value `name` reads numbers from when its last binding is a list
        comprehension of a number read from each item (`s = [float(v) for v in
        x.sum(axis=1)]`, `[r.sum().item() for r in x]`) of a fallback tensor: LAX compiles such
        a comprehension to one placeholder number, so indexing or iterating `s` fails
        (measured, written/lax probes `fix34c_fx_*`, `fix33a_fx_*`, fresh v6 seed 12000042:
        "'float' object is not subscriptable / is not iterable", "The pointer[seq_abs] is
        null"; over a graph tensor, returned as it is, or `[r * 2 for r in x]` indexed, it
        compiles). Not over host data (`t.tolist()`), which other rules follow."""
        if type(name) is not ast.Name:
            return None
        last = self._last_assignment(name, func)
        built = _bound_value(last, name.id) if last is not None else None
        if type(built) is not ast.ListComp or len(built.generators) != 1 or not self._number_read(built.elt):
            return None
        over = self._comprehension_over_fallback(built, func, env)
        if over is None or any(
            type(n) is ast.Attribute and n.attr in _HOST_DATA_METHODS for n in ast.walk(over)
        ):
            return None
        return over

    def _number_read(self, e: ast.expr) -> bool:
        """`float(v)`, `int(v)`, `bool(v)` or `v.item()`."""
        if type(e) is not ast.Call:
            return False
        f = e.func
        if type(f) is ast.Attribute:
            return f.attr == "item" and not e.args
        return len(e.args) == 1 and self.ctx.qualname(f) in _NUMBER_READS

    def placeholder_iterated(self, it: ast.expr, func: ast.AST, env: frozenset[str]) -> str | None:
        """Why iterating `it` (a `for`'s or a comprehension's iterable, also through `zip` /
        `enumerate` / `reversed` / `list` / `tuple`) fails: a `placeholder_list`."""
        parts = [it]
        while parts and type(parts[0]) is ast.Call and self.ctx.qualname(parts[0].func) in _ITERABLE_WRAPPERS:
            parts = [a for a in parts[0].args if type(a) is not ast.Starred] + parts[1:]
        for part in parts:
            over = self.placeholder_list(part, func, env)
            if over is not None:
                return _PLACEHOLDER_ITER_MESSAGE.format(name=ast.unparse(part), over=ast.unparse(over))
        return None

    def emptied_index(self, node: ast.Subscript, func: ast.AST) -> str | None:
        """Why `lst[0]` / `d[0]` fails when `lst` (bound to `[]`) or `d` (bound to `{}`) is
        filled only in a `for` over a JIT Fallback value (also a parameter a caller gives one),
        if it does: MindSpore runs no pass of that loop while compiling, so the container is
        still empty (measured, written/lax probes `genfresh38_it_*`: `for r in x:
        outs.append(r * 2)` then `outs[0]`, "cannot get item by index from an empty
        sequence"; `for i, r in enumerate(x): d[i] = r` then `d[0]`, "The key 0 does not
        exist in the dict:{}"; the same loops over a graph tensor compile; fresh v6 seed
        12001212). A message with `{name}` for the indexed name."""
        if type(node.ctx) is not ast.Load or type(node.value) is not ast.Name:
            return None
        key = node.slice
        if not (type(key) is ast.Constant and type(key.value) is int):
            return None
        name = node.value
        env = self.opaque_params(func)
        loop = self._filled_over_fallback(name, func, env)
        if loop is not None:
            return _empty_index(loop, "For primitive:'list_getitem', cannot get item by index from an empty sequence")
        loop = self._dict_filled_over_fallback(name, func, env)
        if loop is not None:
            return _empty_index(loop, f"The key {key.value} does not exist in the dict:{{}}")
        return None

    def _dict_filled_over_fallback(self, name: ast.Name, func: ast.AST, env: frozenset[str]) -> ast.For | None:
        """The `for` over a JIT Fallback value whose item stores (`d[k] = v`) alone fill the
        dict `name`, bound to `{}` before it and read here (`_filled_over_fallback` for a dict)."""
        last = self._last_assignment(name, func)
        if not (isinstance(last, ast.Assign) and type(last.value) is ast.Dict and not last.value.keys):
            return None
        bound_at = (last.lineno, last.col_offset)
        read_at = (name.lineno, name.col_offset)
        if any(not c.nested for c in analyzer(self.ctx).changes(name.id, func)):
            return None  # `d.update(...)`, `d.setdefault(...)`: filled another way too
        loop: ast.For | None = None
        for st in own_nodes(func):
            if type(st) is not ast.Assign or not bound_at < (st.lineno, st.col_offset) < read_at:
                continue
            if not any(type(t) is ast.Subscript and type(t.value) is ast.Name and t.value.id == name.id for t in st.targets):
                continue
            up: ast.AST | None = self.ctx.parent(st)
            while up is not None and not isinstance(up, (ast.For, ast.While, ast.FunctionDef, ast.If)):
                up = self.ctx.parent(up)
            if not isinstance(up, ast.For) or (up.lineno, up.col_offset) < bound_at or (loop is not None and up is not loop):
                return None
            loop = up
        if loop is None or not self.value(loop.iter, func, env) or not self._runtime(loop.iter, func, env):
            return None
        if isinstance(loop.iter, ast.Call) and self.ctx.qualname(loop.iter.func) == "builtins.range":
            return None
        return loop

    def failed_index(self, node: ast.Subscript, func: ast.AST, env: frozenset[str]) -> str | None:
        """Why indexing a local built from a fallback value fails, if it does (a message with
        `{name}` for the indexed name). Measured on 2.10 at LAX:
        - `lst = [f(d) for d in v.shape]` then `lst[i]`: MindSpore builds a scalar, not a list,
          from such a comprehension (`'float' object is not subscriptable`; `s = v.shape;
          s[0]` and `len(v.shape)` compile);
        - `d = {"a": v}` then `d["a"]`: the dict becomes a tuple of its values (`tuple indices
          must be integers or slices, not str`; `d.get("a")` and tuples or lists of `v`
          compile), unless the top graph returns a dict (`_top_outputs_dict`);
        - `vals, idx = ops.sort(v[0])` then `x[:, idx]` (`_tuple_op_index`)."""
        why = self._tuple_op_index(node, func, env)
        if why:
            return why
        name = node.value
        if not isinstance(name, ast.Name):
            return None
        last = self._last_assignment(name, func)
        built = _bound_value(last, name.id) if last is not None else None
        if isinstance(built, ast.ListComp) and built.generators:
            it = built.generators[0].iter
            if isinstance(it, ast.Attribute) and it.attr == "shape" and self.value(it.value, func, env):
                return _COMP_MESSAGE
            if type(node.ctx) is ast.Load:
                over = self.placeholder_list(name, func, env)
                if over is not None:
                    slice_or_index = _PLACEHOLDER_SLICE_MESSAGE if type(node.slice) is ast.Slice else _PLACEHOLDER_INDEX_MESSAGE
                    return slice_or_index.replace("{over}", ast.unparse(over))
        dicts = _dict_displays(built, self.ctx)
        if (
            (dicts or isinstance(built, ast.DictComp))
            and isinstance(node.slice, ast.Constant)
            and isinstance(node.slice.value, str)
            and (
                any(v is not None and self.value(v, func, env) for d in dicts for v in d.values)
                or isinstance(built, ast.DictComp) and self._dict_comprehension_of_fallback(built, func, env)
            )
            and not _top_outputs_dict(func, self.ctx)
        ):
            return _DICT_MESSAGE
        if (
            last is not None
            and isinstance(node.slice, ast.Constant)
            and isinstance(node.slice.value, str)
            and self._dict_beside_fallback(name.id, last, built, func, env)
        ):
            return _TUPLE_DICT_MESSAGE
        if isinstance(built, ast.Call) and self._appended_list_copy(name, built, func, env):
            return _APPENDED_MESSAGE
        if isinstance(built, ast.Call) and not (isinstance(built.func, ast.Name) and built.func.id == "list"):
            callee = self._callee(built, func)
            if isinstance(callee, ast.FunctionDef):
                bound = self._bind(built, callee, func, env, 0)
                for r in ast.walk(callee):
                    if isinstance(r, ast.Return) and isinstance(r.value, ast.Name):
                        last = self._last_assignment(r.value, callee)
                        made = _bound_value(last, r.value.id) if last is not None else None
                        if isinstance(made, ast.Call) and self._appended_list_copy(r.value, made, callee, bound):
                            return _APPENDED_MESSAGE
        return None

    def dict_read_as_tuple(self, name: ast.Name, func: ast.AST) -> bool:
        """`_dict_beside_fallback` for a read of `name` (`aux.get("scale")`)."""
        last = self._last_assignment(name, func)
        built = _bound_value(last, name.id) if last is not None else None
        return last is not None and self._dict_beside_fallback(name.id, last, built, func, frozenset())

    def _dict_beside_fallback(
        self, name: str, st: ast.stmt, built: ast.expr | None, func: ast.AST, env: frozenset[str]
    ) -> bool:
        """Is `name` the dict item of a tuple display that also holds a JIT Fallback value:
        unpacked from a call whose callee returns one (`x, aux = self.head(x)` with `return y,
        {'scale': 2.0}`), or read by a constant index from a local one (`pair = (y, {...});
        aux = pair[1]`)? LAX builds the whole tuple as a Python object and hands the dict back
        as a tuple of its values, even a dict of constants (measured, written/lax probes
        `fix30c_td_*`: `aux['scale']` fails with "tuple indices must be integers or slices,
        not str", `aux.get` with "'tuple' object has no attribute 'get'"; the same with a graph
        `y` compiles; difftest seeds 10100181, 10600181)."""
        if isinstance(built, ast.Call) and isinstance(st, ast.Assign):
            k = _unpacked_position(st, name)
            callee = self._callee(built, func) if k is not None else None
            if k is None or not isinstance(callee, ast.FunctionDef):
                return False
            callee, bound = self._entered(built, callee, func, env, 0)
            return any(
                isinstance(r, ast.Return) and self._fallback_beside_dict(r.value, k, callee, bound)
                for r in ast.walk(callee)
            )
        if (
            isinstance(built, ast.Subscript)
            and isinstance(built.value, ast.Name)
            and isinstance(built.slice, ast.Constant)
            and isinstance(built.slice.value, int)
        ):
            held = self._last_assignment(built.value, func)
            display = _bound_value(held, built.value.id) if isinstance(held, ast.Assign) else None
            return self._fallback_beside_dict(display, built.slice.value, func, env)
        return False

    def _fallback_beside_dict(self, display: ast.expr | None, k: int, func: ast.AST, env: frozenset[str]) -> bool:
        """Is `display` a tuple display whose item `k` is a dict display and whose other items
        hold a JIT Fallback value?"""
        if not isinstance(display, ast.Tuple) or not 0 <= k < len(display.elts):
            return False
        if not isinstance(display.elts[k], ast.Dict):
            return False
        return any(
            i != k and not isinstance(e, ast.Starred) and self.value(e, func, env) for i, e in enumerate(display.elts)
        )

    def _tuple_op_index(self, node: ast.Subscript, func: ast.AST, env: frozenset[str]) -> str | None:
        """An index of `node` unpacked from `ops.sort` / `ops.topk` of a fallback value held
        in a name the module or an enclosing function binds too (`vals, idx = ops.sort(x[0])`
        then `x[:, idx]` or `x[0][idx]`: fresh v5 seeds 11400101, 11700185;
        `_global_named_fallback`)."""
        sl = node.slice
        for i in sl.elts if isinstance(sl, ast.Tuple) else [sl]:
            if not isinstance(i, ast.Name):
                continue
            last = self._last_assignment(i, func)
            if not (isinstance(last, ast.Assign) and _unpacked_position(last, i.id) is not None):
                continue
            call = last.value
            if isinstance(call, ast.Call) and self.ctx.qualname(call.func) in _TUPLE_OPS and call.args and self._global_named_fallback(call.args[0], func, env):
                op = self.ctx.segment(call.func)
                return _TUPLE_OP_INDEX_MESSAGE.replace("{index}", i.id).replace("{op}", op)
        return None

    def _global_named_fallback(self, e: ast.expr, func: ast.AST, env: frozenset[str]) -> bool:
        """Is `e` (`v[0]`, `v`) read from a name holding a JIT Fallback value (also a mix of
        one with graph tensors, or a parameter a call gives one) that is also the name of a
        module-level variable? Measured (written/lax probes `fix31c_ti_*`, fresh seeds
        11400101, 11700185): `x = ms.Tensor(x.asnumpy()); vals, idx = ops.sort(x[0]); x[:,
        idx]` fails at LAX ("The tensor element in tuple index must be int or bool type, but
        got Float32") when the module also binds `x` (`x = Tensor(...)` at the bottom), and
        compiles when the module does not, or with the value held in another name (`v`);
        a function nested in one binding the name counts as well (fresh seed 11400101: a
        closure `stage3(x)` in a `construct` holding `x`); `ops.relu(v)` sorted, or
        `v.sort()`, compile (gen18 probes `fix29b_ti_*`)."""
        while isinstance(e, ast.Subscript):
            e = e.value
        if type(e) is not ast.Name or not (e.id in _module_names(self.ctx) or _bound_outside(e.id, func, self.ctx)):
            return False
        return self._fallback_step(e, func, 0)

    def _fallback_step(self, e: ast.expr, func: ast.AST, depth: int) -> bool:
        """Is `e` (or what it indexes) the very output of a JIT Fallback step: a call run by
        JIT Fallback (`ms.Tensor(np.clip(x.asnumpy(), -1, 1))`), or arithmetic with a Python
        object other than the tensor itself (`x + (0.5, 1.0)[int(s) % 2]`)? Followed through
        names and parameters. Arithmetic of such a tensor with a graph value (`v / 2`, `v +
        len(lst)`), a graph op or a compiled call of it give a graph tensor, which `ops.sort`
        takes (measured: fresh v5 seeds 10500153, 11000144 compile; written/gen18 probe
        `fix29b_ti_sort_fb_relu_first`)."""
        while isinstance(e, ast.Subscript):
            e = e.value
        if depth > 6:
            return False
        if isinstance(e, ast.Call):
            callee = self._callee(e, func)
            if isinstance(callee, ast.FunctionDef):
                # a helper returning the step's output (`return ms.Tensor(np.clip(...))`)
                rets = [r.value for r in ast.walk(callee) if isinstance(r, ast.Return) and r.value is not None]
                return bool(rets) and all(self._fallback_step(r, callee, depth + 1) for r in rets)
            if callee is None and (self.ctx.qualname(e.func) or "").endswith(".from_numpy") and e.args:
                # `ms.Tensor.from_numpy(np.ascontiguousarray(x.asnumpy()))` wraps the step's
                # numpy output (probe `ti_from_numpy_global_x`, fresh seed 11700185)
                return self._fallback_step(e.args[0], func, depth + 1) or interpreted(e.args[0], self.ctx, func)
            return callee is None and interpreted(e, self.ctx, func)
        if isinstance(e, ast.BinOp):
            # a Python object beside the tensor: `len(str(s))`, a constant tuple indexed by a
            # fallback number (`(0.5, 1.0)[int(s) % 2]`, MS145's own value)
            return any(
                not isinstance(x, ast.Name)
                and (interpreted(x, self.ctx, func) or (isinstance(x, ast.Subscript) and self.value(x, func, frozenset())))
                for x in (e.left, e.right)
            )
        if not isinstance(e, ast.Name):
            return False
        last = self._last_assignment(e, func)
        if isinstance(last, ast.Assign) and len(last.targets) == 1 and isinstance(last.targets[0], ast.Name):
            return self._fallback_step(last.value, func, depth + 1)
        if last is not None:
            return False
        args = self._arguments_of(e.id, func)
        return bool(args) and all(self._fallback_step(a, caller, depth + 1) for a, caller, _ in args)

    def _dict_comprehension_of_fallback(self, comp: ast.DictComp, func: ast.AST, env: frozenset[str]) -> bool:
        """Do the values of the dict comprehension `comp` hold a fallback value: read from one
        (`{f'c{i}': vals[i] for i in range(3)}`), or a target of a generator over one
        (`{f'c{i}': v for i, v in enumerate(vals)}`, also through `zip` / `list` / ...)?
        Measured (written/gen18 probes `genfresh27_dk_*`, fresh v5 seed 11300155): with
        `vals = [x.shape[1] * 1.0, 0.5, 2.0]` of a fallback `x`, indexing the dict by key
        fails at LAX ("make_dict evaluator key ... ValueAny", "tuple indices must be integers
        or slices, not str"); with constants in `vals`, or a graph `x`, it compiles."""
        if self.value(comp.value, func, env):
            return True
        read = {n.id for n in ast.walk(comp.value) if isinstance(n, ast.Name)}
        for gen in comp.generators:
            targets = {n.id for n in ast.walk(gen.target) if isinstance(n, ast.Name)}
            if not targets & read:
                continue
            it = gen.iter
            while isinstance(it, ast.Call) and self.ctx.qualname(it.func) in _ITERABLE_WRAPPERS and it.args:
                inner = [a for a in it.args if not isinstance(a, ast.Starred) and self.value(a, func, env)]
                if not inner:
                    break
                it = inner[0]
            if not (isinstance(it, ast.Call) and self.ctx.qualname(it.func) in _ITERABLE_WRAPPERS) and self.value(it, func, env):
                return True
        return False

    def _appended_list_copy(self, name: ast.Name, built: ast.Call, func: ast.AST, env: frozenset[str]) -> bool:
        """Is `name` bound to `list(v)` of a fallback value and then grown in place (`.append`,
        `.extend`, `.insert`) before `name` is read? LAX keeps such a list as a Python object
        whose in-place method returns None, and the name then holds None (measured, written/lax
        probes `gf_pe_*`: indexing it fails, "'NoneType' object is not subscriptable"; a list
        display grown the same way and `list(v)` left alone compile)."""
        if not (
            isinstance(built.func, ast.Name)
            and self.ctx.qualname(built.func) == "builtins.list"
            and len(built.args) == 1
            and self.value(built.args[0], func, env)
        ):
            return False
        bound_at = (built.lineno, built.col_offset)
        read_at = (name.lineno, name.col_offset)
        return any(bound_at < (c.lineno, c.col_offset) < read_at for c in self._grown_by(name.id, func))

    def typed_index_sink(self, call: ast.Call, func: ast.AST) -> str | None:
        """Why `call` fails on a graph tensor indexed by a typed `Tensor(v, dtype)` of a
        fallback value, if it is one of the few that do (`ms_typed_index_sinks.json`: `nn.GRU`,
        `ops.split`; `nn.LSTM`, `nn.Dense` and most others take it)."""
        cells, functions = _typed_index_queries()
        q = self.ctx.qualname(call.func)
        name = q if q in functions else None
        if name is None and isinstance(call.func, ast.Attribute):
            callee = self._callee(call, func)
            name = callee if isinstance(callee, str) and callee in cells else None
        if name is None:
            return None
        if not any(self.value(a, func, frozenset()) for a in call.args if not isinstance(a, ast.Starred)):
            return None
        return f"`{name.removeprefix('mindspore.')}` fails on a tensor indexed by `Tensor(...)` of a JIT Fallback value, whose length is unknown while compiling"

    def _fallback_in_list_shape(self, call: ast.Call, func: ast.AST, env: frozenset[str]) -> str | None:
        """`ops.zeros([b, period, n])` with `period` a number JIT Fallback computes
        (`_LIST_SHAPES`): why it fails, else None."""
        if not call.args or type(call.args[0]) is not ast.List:
            return None  # (cheap first: most calls give no list display)
        q = self.ctx.qualname(call.func) or ""
        at = _LIST_SHAPES.get(q)
        if at is None or len(call.args) <= at or type(shape := call.args[at]) is not ast.List:
            return None
        held = next((e for e in shape.elts if self.value(e, func, env)), None)
        if held is None:
            return None
        name = q.removeprefix("mindspore.")
        return (
            f"`{name}` is given a list shape holding `{ast.unparse(held)}`, a number from a JIT Fallback call; "
            "MindSpore reads a list shape as constants while compiling (\"Failed to get array value, expect sequence or "
            "tensor type, but got: Int64Imm\"); give the shape as a tuple"
        )

    def sink(self, call: ast.Call, func: ast.AST, env: frozenset[str], depth: int) -> str | None:
        """Why `call` (in `func`, parameters `env` opaque) fails on a fallback value, if it does."""
        args = _queried_arguments(call, self.ctx)
        listed = self._fallback_in_list_shape(call, func, env)
        if listed is not None:
            return listed
        if args and isinstance(args[0], ast.Name) and self.ctx.qualname(call.func) in _EMPTY_READERS:
            loop = self._filled_over_fallback(args[0], func, env)
            if loop is not None:
                return _EMPTY_MESSAGE.format(
                    name=args[0].id, over=ast.unparse(loop.iter), said=_EMPTY_READERS[self.ctx.qualname(call.func) or ""]
                )
        if len(args) in (1, 2) and self.ctx.qualname(call.func) in _COMPREHENSION_READERS:
            comp: ast.expr | None = args[0]
            if isinstance(comp, ast.Name):  # `norms = [float(r.norm()) for r in x]` then `max(norms)`
                last = self._last_assignment(comp, func)
                comp = _bound_value(last, comp.id) if isinstance(last, ast.Assign) else None
            over = (
                self._comprehension_over_fallback(comp, func, env)
                if isinstance(comp, (ast.ListComp, ast.GeneratorExp))
                else None
            )
            if over is not None and func is self.ctx.function:
                from npu_lsp.rules.graphmode.fallback_list_max import fallback_iterable
                from npu_lsp.rules.graphmode.host_list_iterated import tensor_items

                assert isinstance(comp, (ast.ListComp, ast.GeneratorExp))
                if fallback_iterable(over, self.ctx) and (
                    isinstance(comp, ast.GeneratorExp) or not tensor_items(comp.elt, self.ctx)
                ):
                    # over host data (`x.tolist()`), a generator is MS173's and a list of
                    # Python values MS193's; a list of tensor items stays here (heldout19b
                    # probe `lx20_sum_tensor_items_plain_len2`: "Cannot iterate over a scalar tensor")
                    over = None
            fn = (self.ctx.qualname(call.func) or "").removeprefix("builtins.")
            if (
                over is None
                and fn in ("max", "min")
                and isinstance(comp, (ast.ListComp, ast.GeneratorExp))
                and self.value(comp.elt, func, env)
            ):
                # `vals = [v[0, j].item() for j in range(3)]`: the items are Python numbers
                # JIT Fallback reads from such a value, and `max` / `min` of them compile to a
                # dynamic-length reduction as of a `tolist()` (MS201); `sum` compiles
                return _ITEMS_MESSAGE.format(fn=fn, elt=ast.unparse(comp.elt))
            if over is not None:
                said = _COMPREHENSION_READERS[f"builtins.{fn}"]
                return _ITERATED_MESSAGE.format(fn=fn, over=ast.unparse(over), said=said)
        typed = _TYPE_CHECKED_ARGUMENTS.get(self.ctx.qualname(call.func) or "")
        for name, position, want in typed or ():
            given = _argument(call, name, position)
            if given is not None and self.value(given, func, env):
                fn = (self.ctx.qualname(call.func) or "").removeprefix("mindspore.")
                return f"`{fn}` checks while compiling that its `{name}` is a Python {want}, and `{_short_segment(self.ctx, given)}` is a JIT Fallback value, which it sees as a Tensor (MindSpore: For '{fn.rsplit('.', 1)[-1]}', the type of '{name}' should be '{want}', but got type 'Tensor'); compute it in a local from a constant, or pass it in"
        if not args or not any(self.value(a, func, env) for a in args):
            return None
        cells, functions = _queries()
        q = self.ctx.qualname(call.func)
        if q in ("builtins.min", "builtins.max") and any(
            isinstance(a, ast.Attribute) and a.attr == "shape" for a in args
        ):
            # measured (written/lax probes `gf_pg_*`): `min(v.shape)` of such a value fails
            # under LAX ("Kernel select failed: Unsupported op [IsDimUnKnown]"); `v.shape[0]`,
            # `len(v.shape)` and `v.ndim` compile
            return f"`{q.removeprefix('builtins.')}` of the shape of a JIT Fallback value cannot be compiled (MindSpore: Unsupported op [IsDimUnKnown]); take the shape of a tensor the graph computes"
        at = _FILL_VALUES.get(q or "")
        if (
            at is not None
            and len(call.args) > at
            and (interpreted(call.args[at], self.ctx, func) or self._item_of_fallback(call.args[at], func, env, 0))
            # a number read from what a call holding a run-time loop returns is the graph's
            # (`_runtime_loop`)
            and self._numbers().value(call.args[at], func, env)
            and not _numpy_result(call.args[at], self.ctx, func)
            and not (builds_python_instances(self.ctx) and from_instance_fields(call.args[at], func, self.ctx))
            and not self._dtype_undecided(call.args[at], func, env)
        ):
            # `interpreted`, not `value`: a MindSpore op (`ops.concat(outs)`) gives a graph
            # tensor back, whose `len` is a number the graph knows (difftest seed 10100021)
            return f"`{q.removeprefix('mindspore.')}` is given a fill value from a JIT Fallback call; its FillV2 takes a tensor, and MindSpore converts only numbers it knows while compiling (\"the type of input argument[y] must be Tensor but got Float32\")"  # type: ignore[union-attr]
        if q in functions:
            if q in _dropped_when_unused() and _result_unused(call, func, self.ctx):
                return None
            return f"`{q.removeprefix('mindspore.')}` reads the shape or dtype of its input, which here comes from a JIT Fallback call"
        only = _argument_queries().get(q or "")
        if only is not None:
            # `ops.conv2d(x, w)`: only the weight's shape builds the primitive (measured,
            # written/heldout32a probes `fix32d_ta_*`: a JIT Fallback input compiles)
            given = _argument(call, *only)
            if given is not None and self.value(given, func, env):
                return f"`{q.removeprefix('mindspore.')}` reads the shape of its `{only[0]}`, which here comes from a JIT Fallback call (MindSpore: all arguments are required to be constants / Graph cycle exists)"  # type: ignore[union-attr]
            return None
        guard = _guarded_queries().get(q or "")
        if guard is not None and call.args and self.value(call.args[0], func, env) and _left_none(call, *guard):
            # `ops.norm(q)`: without `dim` it reads `q.ndim` in a compile-time check, and for a
            # JIT Fallback value the result is a graph cycle (measured, written/heldout25b
            # probes `fix25b_m_*`: "Graph cycle exists ... _norm_immediate"; `ops.norm(q,
            # dim=0)` and `q.norm()` compile)
            return f"`{q.removeprefix('mindspore.')}` without `{guard[0]}` reads the rank of its input, which here comes from a JIT Fallback call (give `{guard[0]}`)"  # type: ignore[union-attr]
        wrapped = self._partial_of(call.func, func)
        if wrapped in functions:
            # `act = functools.partial(ops.leaky_relu, alpha=0.1)` then `act(v)`: MindSpore
            # folds the partial of constants while compiling and compiles the wrapped
            # function on `v`, which reads its dtype as it does when called directly
            # (measured: v5 seeds 10000061, 10000066, 10500183, "Failed to infer for
            # primitive:DtypeToEnum"; written/gen18 probes `v20_pt_*`)
            return f"`{wrapped.removeprefix('mindspore.')}` (through `functools.partial`) reads the shape or dtype of its input, which here comes from a JIT Fallback call"
        callee = self._callee(call, func)
        if isinstance(callee, str):
            if callee in cells:
                return f"`{callee.removeprefix('mindspore.')}` reads the shape or dtype of its input, which here comes from a JIT Fallback call"
            return None
        if callee is None or depth >= _DEPTH:
            return None
        bound = self._bind(call, callee, func, env, 0)
        if not bound:
            return None
        for inner in ast.walk(callee):
            if (
                isinstance(inner, ast.Attribute)
                and inner.attr == "dtype"
                and isinstance(inner.ctx, ast.Load)
                and _dtype_given_to_op(inner, callee, self.ctx)
                and not _dtype_to_unused_call(inner, callee, self.ctx)
                and self.value(inner.value, callee, bound)
                and not in_dead_branch(self.ctx, callee, self.ctx.span(inner))
            ):
                return f"this call passes a JIT Fallback value to `{callee.name}`, which gives its dtype to an operator (line {inner.lineno})"
            if (
                isinstance(inner, ast.Subscript)
                and self.failed_index(inner, callee, bound)
                and not in_dead_branch(self.ctx, callee, self.ctx.span(inner))
            ):
                return f"this call passes a JIT Fallback value to `{callee.name}`, where indexing `{ast.unparse(inner.value)}` built from it fails (line {inner.lineno})"
            if (
                isinstance(inner, (ast.ListComp, ast.GeneratorExp))
                and self.looped_comprehension(inner, callee, bound)
                and not in_dead_branch(self.ctx, callee, self.ctx.span(inner))
            ):
                return f"this call passes a JIT Fallback value to `{callee.name}`, where a comprehension over it inside a `for` loop fails (line {inner.lineno}; MindSpore: \"The pointer[abs_base] is null\")"
            if (
                (type(inner) is ast.For or type(inner) is ast.ListComp or type(inner) is ast.GeneratorExp)
                and not in_dead_branch(self.ctx, callee, self.ctx.span(inner))
            ):
                it = inner.iter if type(inner) is ast.For else inner.generators[0].iter  # type: ignore[union-attr]
                why = self.placeholder_iterated(it, callee, bound)
                if why:
                    return f"this call passes a JIT Fallback value to `{callee.name}` (line {inner.lineno}): {why}"
            if (
                isinstance(inner, ast.Call)
                and inner is not call
                and not in_dead_branch(self.ctx, callee, self.ctx.span(inner))
            ):
                why = self.sink(inner, callee, bound, depth + 1)
                if why:
                    return f"this call passes a JIT Fallback value on to line {inner.lineno}: {why}"
        return None


#: tensor methods whose result keeps the dtype object of their input (measured, written/gen18
#: probes `genfresh24_full_*`, `st23_nt_scale_only`: `x + int(x.max().asnumpy()) % 3` guesses
#: Float32 like `x + int(x.asnumpy().max()) % 3`; `x.sum(axis=0)` and `x * 2` give another
#: object, `fix26d_other_tensor_origin`, `genfresh26_fl_inline`, and so does a graph
#: `x.mean()`: `x + math.tanh(x.mean())`, `x * math.exp(-x.abs().mean())` then a fill from
#: `float(x.max().asnumpy())` or `float(x.mean())` run, probes `genfresh28_fw_*`)
_DTYPE_KEEPING_METHODS = frozenset({"max", "min", "abs"})


def _target_names_of(comp: ast.ListComp | ast.GeneratorExp) -> set[str]:
    """The names a comprehension's generators bind."""
    return {n.id for g in comp.generators for n in ast.walk(g.target) if isinstance(n, ast.Name)}


def _same_dtype_source(e: ast.expr) -> ast.expr:
    """The tensor whose dtype object `e` carries (`x` of `-x.abs().mean()`), else `e`."""
    while True:
        if isinstance(e, ast.UnaryOp) and isinstance(e.op, (ast.USub, ast.UAdd)):
            e = e.operand
        elif (
            isinstance(e, ast.Call)
            and isinstance(e.func, ast.Attribute)
            and e.func.attr in _DTYPE_KEEPING_METHODS
            and not e.args
            and not e.keywords
        ):
            e = e.func.value
        else:
            return e


def _target_names(t: ast.expr) -> list[ast.Name]:
    """The names an assignment target binds (`v`, `s` of `v, s = ...`; not `a` of `a[0] = ...`)."""
    if isinstance(t, ast.Name):
        return [t]
    if isinstance(t, ast.Starred):
        return _target_names(t.value)
    if isinstance(t, (ast.Tuple, ast.List)):
        return [n for e in t.elts for n in _target_names(e)]
    return []


def _dict_displays(e: ast.expr | None, ctx: Context) -> list[ast.Dict]:
    """The dict displays `e` may be: itself, the one `ms.mutable(...)` wraps, or the branches
    of a conditional expression whose every branch is one (`{'a': v * 2} if c else {'a':
    v}`). Measured (written/gen18 probes `fix28b_dj_*`, fresh v5 seed 11400009): such a join
    holding a JIT Fallback value on either side is a tuple of its values too, whatever the
    condition (a tensor, a fallback value's sum, a shape); the same join of constants, or of
    graph tensors, and `.get()` compile. `ms.mutable({'a': v})` of a fallback `v` is one
    too (difftest seed 9970028; written/lax probes `fix30c_td_*`)."""
    if isinstance(e, ast.Dict):
        return [e]
    if (
        type(e) is ast.Call
        and len(e.args) == 1
        and type(e.args[0]) is ast.Dict
        and ctx.qualname(e.func) in ("mindspore.mutable", "mindspore.common.mutable")
    ):
        return [e.args[0]]
    if not isinstance(e, ast.IfExp):
        return []
    body, orelse = _dict_displays(e.body, ctx), _dict_displays(e.orelse, ctx)
    return body + orelse if body and orelse else []


def _bound_value(st: ast.stmt, name: str) -> ast.expr | None:
    """What `st` binds to `name`: the matching item when a display is unpacked (`a, b = v, 1`),
    else its whole value (an unpacked call or object: each name holds a piece of it), the
    iterable of a `for`."""
    if isinstance(st, ast.For):
        return st.iter
    value: ast.expr | None = getattr(st, "value", None)
    if not isinstance(st, ast.Assign) or value is None:
        return value
    for target in st.targets:
        if isinstance(target, ast.Name):
            if target.id == name:
                return value
            continue
        item = _unpacked(target, value, name)
        if item is not None:
            return item
    return value


def _unpacked_position(st: ast.Assign, name: str) -> int | None:
    """Where `name` stands in a flat tuple target of `st` (`a, b = call()`: 1 for `b`)."""
    if len(st.targets) != 1:
        return None
    target = st.targets[0]
    if not isinstance(target, (ast.Tuple, ast.List)):
        return None
    for i, t in enumerate(target.elts):
        if isinstance(t, ast.Starred):
            return None
        if isinstance(t, ast.Name) and t.id == name:
            return i
    return None


def _unpacked(target: ast.expr, value: ast.expr, name: str) -> ast.expr | None:
    """The item of display `value` that `target` (a tuple or list of names) binds to `name`."""
    if not (isinstance(target, (ast.Tuple, ast.List)) and isinstance(value, (ast.Tuple, ast.List))):
        return None
    if len(target.elts) != len(value.elts) or any(isinstance(e, ast.Starred) for e in (*target.elts, *value.elts)):
        return None
    for t, v in zip(target.elts, value.elts, strict=True):
        if isinstance(t, ast.Name) and t.id == name:
            return v
        item = _unpacked(t, v, name)
        if item is not None:
            return item
    return None


def _top_outputs_dict(func: ast.AST, ctx: Context, depth: int = 0) -> bool:
    """Is `func` the top graph (or a helper only such graphs call) and does it return a dict
    display, alone or inside its output? MindSpore then keeps the graph's dicts as dicts
    rather than tuples of their values, and indexing one holding a JIT Fallback value by key
    compiles (measured, written/gen18 probes `genfresh24_dict_*`: `feats = {'a': x}` with `x`
    from `Tensor(x.asnumpy())` or an interpreted `min(max(s, 0.1), 2.0)`, then `feats['a']`,
    compiles under LAX when `construct` / the `@ms.jit` function returns `{'out': x}`, `{'out':
    1}` or `x, {'out': x}`, and fails when it returns `x`, or when only a sub-cell returns a
    dict; fresh v5 seed 11200191)."""
    from npu_lsp.rules.graphmode.helpers import returns_in
    from npu_lsp.rules.graphmode.none_in_strict_output import is_outermost_compiled

    scope = ctx.scopes.scope_for(func) if isinstance(func, ast.FunctionDef) else None
    if scope is None or depth > 3:
        return False
    assert isinstance(func, ast.FunctionDef)
    if scope.kind == "helper" or (scope.kind in ("construct", "jit") and not is_outermost_compiled(func, scope.kind, ctx)):
        # the choice is the top graph's, for every graph it calls: a sub-cell's `construct`
        # or a module-level `@ms.jit` function called from a `construct` returning `x, {'n':
        # 1}` keeps its dicts too (written/lax probes `genfresh30_dk_*`; fresh v5 seed
        # 11700126)
        sites = _compiled_callers(func, scope, ctx)
        return bool(sites) and all(_top_outputs_dict(c, ctx, depth + 1) for c in sites)
    return scope.kind in ("construct", "jit") and any(
        r.value is not None and any(isinstance(n, ast.Dict) for n in ast.walk(r.value))
        for r in returns_in(func.body)
    )


def _compiled_callers(func: ast.FunctionDef, scope: GraphScope, ctx: Context) -> list[ast.AST]:
    """The compiled functions of this file that call `func`: its recorded call sites (a
    helper, a sub-cell's `construct`), or for a module-level `@ms.jit` function (whose sites
    are not recorded) the compiled functions around the calls of its name."""
    sites = [s.caller_node for s in scope.call_sites if s.path == ctx.path and s.caller_node is not None]
    if sites or scope.kind != "jit" or not isinstance(ctx.statement_parent(func), ast.Module):
        return sites
    out: list[ast.AST] = []
    for n in ast.walk(ctx.tree):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == func.name:
            caller = ctx.enclosing_function(n, lambdas=False)
            if caller is None or caller is func or ctx.scopes.scope_for(caller) is None:
                return []  # called from plain code too: a top graph of its own
            out.append(caller)
    return out


#: steps `_dtype_less` follows back (each name, call, argument or operand is one)
_STEPS = 30

#: modules whose calls JIT Fallback runs as a script reading the tensors themselves (or that
#: the graph runs): their results take a tensor input's dtype
_DTYPED_MODULES = frozenset({"builtins", "mindspore", "numpy", "math"})


def opaque_at_lax(e: ast.expr, func: ast.AST | None, ctx: Context) -> bool:
    """Does `e` (in `func`) hold a value LAX keeps as a Python object: a JIT Fallback result
    or a name joined with None under a tensor condition, also through a parameter some call
    in this file binds to one? (Such a value joins with anything under LAX: measured, a helper
    returning `x` or `1.0` under a tensor condition compiles when `x` is `x + Tensor(x.asnumpy())`
    and fails when it is a plain tensor; written/lax probes `gf_pj_*`.)"""
    if func is None or not has_fallback(ctx):
        return False
    o = OpaqueValues(ctx)
    return o.value(e, func, o.opaque_params(func))


#: list methods LAX runs by JIT Fallback on a list display (through `set_local_variable`),
#: whatever it holds: the list (its items, `sum` of it) and what `pop()` returns then join with
#: anything (measured, written/lax probes `fix34b_lm_*`: `lst = [4.0, 2.0]; lst.pop()` then
#: `x = x + sum(lst)` (also `lst[0]`, the popped value, a list of tensors; in the same
#: function, a helper or a base `construct`), before `y = x[0] if x.sum() > 0 and x.shape[0]
#: == 2 else x.sum()`, compiles at LAX; after `append`, `clear`, `remove`, `sort`, after
#: `list((4.0, 2.0)).reverse()`, with `len(lst)` or with the list read before the method, the
#: join fails ("Cannot join the return values of different branches"). Unlike other fallback
#: values these are no sink's trouble: `nn.Dense`, `ops.zeros_like`, `ops.cast` of them compile).
#: A list comprehension changed so counts as well (probes `genfresh43_wj_lc_*`), but what its
#: `pop()` returns does not: `x + lst.pop()` fails ("The Map operator don't support Closure ...")
_IN_PLACE_FALLBACK = frozenset({"pop", "insert", "extend", "reverse"})


def joins_anything_at_lax(e: ast.expr, func: ast.AST | None, ctx: Context) -> bool:
    """Does `e` (in `func`) hold a value LAX joins with anything: a Python object
    (`opaque_at_lax`), or read from a list display changed by a method LAX runs by JIT
    Fallback (`_IN_PLACE_FALLBACK`)? For the join findings (MS119) only."""
    if opaque_at_lax(e, func, ctx):
        return True
    if func is None or not _changes_lists_in_place(ctx):
        return False
    o = OpaqueValues(ctx, in_place=True)
    return o.value(e, func, o.opaque_params(func))


def _changes_lists_in_place(ctx: Context) -> bool:
    """Does the file's text call one of `_IN_PLACE_FALLBACK` (a cheap gate)?"""
    return any(ctx.mentions(name) for name in _IN_PLACE_FALLBACK) and any(
        f".{name}(" in ctx.text for name in _IN_PLACE_FALLBACK
    )


#: calls that run on the host with the Python object itself: a dtype given to them is never
#: converted for an operator. The tensor constructor is one: given a dtype that is not a
#: constant, LAX runs `ms.tensor(v, d)` / `Tensor(v, dtype=d)` as JIT Fallback (STRICT says
#: "When handling script '__call_func_str__(...)' ... the inputs should be constant"), so a
#: fallback value's dtype reaches it as the Python dtype (measured, written/gen18 probes
#: `dt_*`: `x * ms.tensor(2.0, y.dtype)` compiles under LAX with `y` read from a NamedTuple
#: built from `x`, from `Tensor(x.asnumpy())` or `x + x.tolist()[0][0]`; `ops.ones((2, 3),
#: y.dtype)`, `ops.zeros(..., dtype=y.dtype)`, `ops.cast`, `ops.scalar_to_tensor` fail with
#: DtypeToEnum; fresh v5 seed 10600043 was a false error)
_HOST_CALLS = TENSOR_CONSTRUCTORS | frozenset(
    {"builtins.print", "builtins.str", "builtins.repr", "builtins.format", "builtins.isinstance",
     "builtins.type", "builtins.id", "builtins.hash", "builtins.bool"}
)


@functools.cache
def _dropped_when_unused() -> frozenset[str]:
    """MindSpore functions MS145 counts as reading their input's shape or dtype whose call
    MindSpore does not infer at all when nothing uses its result (`ms_unused_results.json`,
    every row measured)."""
    data = json.loads(resources.files(__package__).joinpath("ms_unused_results.json").read_text("utf-8"))
    return frozenset(data["rows"])


def _result_unused(call: ast.Call, func: ast.AST, ctx: Context) -> bool:
    """Is the value of `call` dropped: the call is an expression statement, or the whole value
    of `name = call` where no read of `name` in `func` outside a branch MindSpore folds away
    can see this binding (`reaching_assignment` names another one)? MindSpore infers a
    graph from its outputs, so a pure operation nothing reads is never inferred (measured,
    written/lax probes `fix35c_dte_local_unused`, `fix36b_un_*`: `y = ops.ones_like(v)` of a
    JIT Fallback `v` compiles at LAX when `y` is never read, is rebound first, or is read
    only under a folded `if`; read, it fails with DtypeToEnum). Only asked of the functions
    in `_dropped_when_unused`: for most (`ops.pad`, `ops.gelu`, `nn.Dense`) the unused call
    fails the same way (probes `fix36b_uf_*`)."""
    stmt = ctx.parent(call)
    if type(stmt) is ast.Expr:
        return True
    if not (
        type(stmt) is ast.Assign
        and stmt.value is call
        and len(stmt.targets) == 1
        and type(stmt.targets[0]) is ast.Name
    ):
        return False
    name = stmt.targets[0].id
    for n in ast.walk(func):
        t = type(n)
        if (t is ast.Global or t is ast.Nonlocal) and name in n.names:  # type: ignore[attr-defined]
            return False
        if t is ast.AugAssign and type(n.target) is ast.Name and n.target.id == name:  # type: ignore[attr-defined]
            return False
        if t is not ast.Name or n.id != name or type(n.ctx) is not ast.Load:  # type: ignore[attr-defined]
            continue
        if in_dead_branch(ctx, func, ctx.span(n)):
            continue
        seen = reaching_assignment(n, ctx, func)  # type: ignore[arg-type]
        if seen is None or seen is call:
            return False
    return True


def _dtype_to_unused_call(read: ast.expr, func: ast.AST, ctx: Context) -> bool:
    """Does the dtype `read` (`v.dtype`) go straight into a call of `_dropped_when_unused`
    (`ops.cast(v, v.dtype)`) whose result is dropped (`_result_unused`)?"""
    e: ast.AST = read
    parent = ctx.parent(e)
    while parent is not None and not isinstance(parent, ast.stmt):
        if isinstance(parent, ast.Call) and e is not parent.func:
            return ctx.qualname(parent.func) in _dropped_when_unused() and _result_unused(parent, func, ctx)
        e, parent = parent, ctx.parent(parent)
    return False


def _dtype_given_to_op(read: ast.expr, func: ast.AST, ctx: Context, depth: int = 0) -> bool:
    """Does the dtype `read` (`v.dtype`) reach an operator's input (`ops.cast(v, v.dtype)`,
    `x.astype(d)` after `d = v.dtype`)? Only there does MindSpore convert it (primitive
    DtypeToEnum), which fails for a JIT Fallback value; printed, formatted or compared, the
    fallback object's own dtype is read (measured: written/famc probes dt_*: `print(v.dtype)`,
    `f"{v.dtype}"`, `v.dtype == ms.float32` compile under LAX, `ops.cast(v, v.dtype)` fails),
    and so is a dtype given to numpy or another package (`np.finfo(v.dtype)`)."""
    e: ast.AST = read
    parent = ctx.parent(e)
    while parent is not None and not isinstance(parent, ast.stmt):
        if isinstance(parent, (ast.JoinedStr, ast.Compare)):
            return False
        if isinstance(parent, ast.Call):
            if e is parent.func:
                return False
            q = ctx.qualname(parent.func)
            # numpy or another package runs on the host with the Python dtype itself
            # (measured, written/zoo14 probe `z20_np_finfo_of_asnumpy`:
            # `np.finfo(w.asnumpy().dtype).min` compiles under LAX)
            return q not in _HOST_CALLS and not (
                q is not None
                and not q.startswith(("mindspore", "builtins."))
                and calls_table.outside_project(q, ctx)
            )
        e, parent = parent, ctx.parent(parent)
    if not (
        depth < 2
        and isinstance(parent, ast.Assign)
        and e is parent.value
        and len(parent.targets) == 1
        and isinstance(parent.targets[0], ast.Name)
    ):
        return False
    name = parent.targets[0].id
    return any(
        isinstance(n, ast.Name)
        and n.id == name
        and isinstance(n.ctx, ast.Load)
        and _dtype_given_to_op(n, func, ctx, depth + 1)
        for n in own_nodes(func)
    )
