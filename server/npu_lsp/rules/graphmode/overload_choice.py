"""Which registration of a `MultitypeFuncGraph` a call in compiled code runs.

A `MultitypeFuncGraph` with several `@g.register(...)` functions is compiled, per call, as the
one whose registered types fit the argument types; the others are never compiled. Scope
resolution (scope.py, `multitype_overloads`) follows a graph's function only when it has one
registration, where no types need telling; for a graph with several, `admit_chosen_overloads`
runs once the rules' value model exists (it tells a tensor from a Python number, a bool from an
int) and has the resolver compile the one each call selects.

MindSpore 2.10's choice, measured (written/heldout36d probes `fix37a_mo_*`, both levels): of the
registrations whose types all fit, the one registered LAST is compiled (`("Number", ...)` after
`("Bool", ...)` takes `True`; `("Number", ...)` registered twice compiles the second); a type
fits its subtypes (`"Number"` takes an int, a float and a bool, `"Float"` a float only), and a
tensor never fits `"Number"` nor a number `"Tensor"`. The same through `ops.HyperMap` /
`ops.Map` (`ops.partial(g, lr)` binding the first arguments, the mapped sequences' elements
the others) and called directly.
"""

from __future__ import annotations

import ast

from npu_lsp.engine import Context
from npu_lsp.rules.graphmode import abstract as av
from npu_lsp.rules.graphmode.abstract_eval import Env, values
from npu_lsp.rules.graphmode.flow import Kind, analyzer
from npu_lsp.rules.graphmode.map_closure_free_variable import optimizer_class
from npu_lsp.rules.graphmode.mappers import mapper_of
from npu_lsp.rules.graphmode.optimizer_facts import optimizer_mappers

FuncDef = ast.FunctionDef | ast.AsyncFunctionDef
#: graph name -> its registrations in order: (function, registered type names)
Registrations = dict[str, list[tuple[ast.FunctionDef, tuple[str, ...]]]]

#: MindSpore's scalar types under "Number" (mindspore/_c_expression typing: Bool, Int and
#: Float are siblings), by the Python type of a scalar
_SCALAR_SIGS = {"Bool": "bool", "Int": "int", "Float": "float"}


def registrations(ctx: Context) -> Registrations:
    """Module-level `g = ...MultitypeFuncGraph(...)` with more than one function registered by
    `@g.register("<type>", ...)` (every type a string): its registrations in order."""
    key = "overload-choice:registrations"
    hit: Registrations | None = ctx.cache.get(key)
    if hit is not None:
        return hit
    graphs: Registrations = {}
    for st in ctx.tree.body:
        if (
            type(st) is ast.Assign
            and len(st.targets) == 1
            and type(st.targets[0]) is ast.Name
            and type(st.value) is ast.Call
            and (ctx.qualname(st.value.func) or "").endswith(".MultitypeFuncGraph")
        ):
            graphs[st.targets[0].id] = []
    computed: set[str] = set()
    for st in ctx.tree.body:
        if type(st) is not ast.FunctionDef:
            continue
        for d in st.decorator_list:
            if not (
                type(d) is ast.Call
                and type(d.func) is ast.Attribute
                and d.func.attr == "register"
                and type(d.func.value) is ast.Name
                and d.func.value.id in graphs
            ):
                continue
            names = tuple(a.value for a in d.args if type(a) is ast.Constant and isinstance(a.value, str))
            if len(names) != len(d.args) or d.keywords:
                computed.add(d.func.value.id)  # a type given as a value: not told here
            graphs[d.func.value.id].append((st, names))
    hit = {g: regs for g, regs in graphs.items() if len(regs) > 1 and g not in computed}
    ctx.cache[key] = hit
    return hit


def fits(name: str, v: av.Value | None) -> bool | None:
    """Does a value fit the registered type `name` (None: not told)?"""
    if v is None or not v.known:
        return None
    if name == "Tensor":
        return isinstance(v, av.Tensor)
    if isinstance(v, av.Tensor):
        # a tensor fits no scalar or container type (measured: probes `fix37a_mo_hm_lrT_*`)
        return False if name in ("Number", "Tuple", "List", "String", "None") or name in _SCALAR_SIGS else None
    if name == "Number":
        return isinstance(v, av.Scalar)
    if name in _SCALAR_SIGS:
        if not isinstance(v, av.Scalar):
            return False if isinstance(v, (av.Sequence, av.Str, av.NoneValue)) else None
        return None if not v.py else v.py == _SCALAR_SIGS[name]
    if name in ("Tuple", "List"):
        return isinstance(v, av.Sequence) and v.kind == name.lower()
    if name == "None":
        return isinstance(v, av.NoneValue)
    if name == "String":
        return isinstance(v, av.Str)
    return None


def choose(regs: list[tuple[ast.FunctionDef, tuple[str, ...]]], given: list[av.Value | None]) -> ast.FunctionDef | None:
    """The registration a call with these argument values runs: the last one registered whose
    types all fit. Positions where every registration of the call's arity names the same type
    do not decide (the elements of mapped sequences, often not known: Parameters and
    gradients); None when a deciding position is not known, or nothing fits (the call is then
    interpreted as Python, see MS187)."""
    same = [sig for _fn, sig in regs if len(sig) == len(given)]
    deciding = [i for i in range(len(given)) if len({sig[i] for sig in same}) > 1]
    for fn, sig in reversed(regs):
        if len(sig) != len(given):
            continue
        told = [fits(sig[i], given[i]) for i in deciding]
        if False in told:
            continue
        return fn if all(told) else None
    return None


def _element(v: av.Value, mapper: str) -> av.Value | None:
    """The value a mapper hands the function for each element of the argument `v`."""
    if not v.known:
        return None
    if isinstance(v, av.Sequence):
        if v.elements is not None:
            return v.elements[0] if v.elements and len(set(v.elements)) == 1 else None
        return v.item
    return v if mapper == "HyperMap" else None  # HyperMap's leaf situation: given whole


def _graph_call(node: ast.Call, func: FuncDef, graphs: Registrations, ctx: Context) -> tuple[str, list[ast.expr], list[ast.expr], str | None] | None:
    """(graph, arguments given whole, mapped sequences, mapper) for a call of a graph or a
    mapper applying one (`self.hyper_map(ops.partial(_opt, lr), self.parameters, grads)`)."""
    if node.keywords or any(type(a) is ast.Starred for a in node.args):
        return None
    f = node.func
    if type(f) is ast.Name and f.id in graphs:
        return f.id, list(node.args), [], None
    if not node.args:
        return None
    found = mapper_of(f, func, ctx) or _optimizer_mapper(f, func, ctx)
    if found is None or found[1]:
        return None
    fn = node.args[0]
    if type(fn) is ast.Name and fn.id in graphs:
        return fn.id, [], list(node.args[1:]), found[0]
    if (
        type(fn) is ast.Call
        and (ctx.qualname(fn.func) or "").rpartition(".")[2] == "partial"
        and fn.args
        and type(fn.args[0]) is ast.Name
        and fn.args[0].id in graphs
        and not fn.keywords
        and not any(type(a) is ast.Starred for a in fn.args)
    ):
        return fn.args[0].id, list(fn.args[1:]), list(node.args[1:]), found[0]
    return None


def _optimizer_mapper(f: ast.expr, func: FuncDef, ctx: Context) -> tuple[str, bool] | None:
    """`self.hyper_map` / `self.map_` of an `nn.Optimizer` subclass, which the base's
    `__init__` binds (not this file's)."""
    if not (type(f) is ast.Attribute and type(f.value) is ast.Name and f.value.id == "self"):
        return None
    mapper = optimizer_mappers().get(f.attr)
    a = analyzer(ctx)
    cls = a.owner_class(func)
    if mapper is None or cls is None or a.self_values(cls).get(f.attr):
        return None
    return (mapper, False) if optimizer_class(cls, ctx) else None


def _given(e: ast.expr, got: av.Value, func: FuncDef, ctx: Context) -> av.Value:
    """The value of an argument given whole, a tensor when the flow model says it is one and
    the value model does not know it (`lr = self.get_lr()` of an `nn.Optimizer`: the
    learning-rate Parameter, measured in probes `fix37a_mo_hm_lrT_*`)."""
    if got.known:
        return got
    a = analyzer(ctx)
    params = {p.arg for p in (*func.args.posonlyargs, *func.args.args)}
    if type(e) is ast.Name and e.id in params:
        # what the callers give it, not the guess `kind` makes for a compiled root's input
        kind = a.param_kind_seen(e.id, func)
    else:
        kind = a.kind(e, func)
    return av.Tensor() if kind == Kind.TENSOR else got


def _chosen(node: ast.Call, func: FuncDef, graphs: Registrations, ctx: Context) -> ast.FunctionDef | None:
    """The registration `node` runs, the same in every call context of `func`."""
    hit = _graph_call(node, func, graphs, ctx)
    if hit is None:
        return None
    graph, whole, seqs, mapper = hit
    v = values(ctx)
    picked: set[ast.FunctionDef | None] = set()
    envs: list[Env | None] = [*v.reaching_contexts(func)] or [None]
    for env in envs:
        given: list[av.Value | None] = [_given(a, v.reaching(a, func, env), func, ctx) for a in whole]
        if mapper is not None:
            given += [_element(v.reaching(s, func, env), mapper) for s in seqs]
        picked.add(choose(graphs[graph], given))
    return picked.pop() if len(picked) == 1 else None


def admit_chosen_overloads(ctx: Context) -> bool:
    """Have scope resolution compile, at the calling function's level, the registration of a
    multi-registration `MultitypeFuncGraph` each call in this file's compiled code selects (a
    direct call is a call site of it; a mapper's is not, as in scope.py). True when any was
    admitted that was not compiled already (the caller then drops what rules cached)."""
    if not ctx.mentions("MultitypeFuncGraph") or ctx.scopes is None:
        return False
    graphs = registrations(ctx)
    if not graphs:
        return False
    resolver = ctx.scopes
    admitted = False
    for func, _owner in resolver.local_roots():
        scope = resolver.scope_for(func)
        if scope is None or scope.kind == "constexpr":
            continue
        for node in ast.walk(func):
            if type(node) is not ast.Call:
                continue
            fn = _chosen(node, func, graphs, ctx)
            if fn is None:
                continue
            direct = type(node.func) is ast.Name and node.func.id in graphs
            admitted |= resolver.admit(fn, scope.level, (node, func, scope.qualname) if direct else None)
    return admitted
