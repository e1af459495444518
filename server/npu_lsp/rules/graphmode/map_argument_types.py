"""MS187: the sequences a `HyperMap` / `Map` call maps over together are of different kinds."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode import abstract as av
from npu_lsp.rules.graphmode.abstract_eval import Env, values
from npu_lsp.rules.graphmode.helpers import GraphRule
from npu_lsp.rules.graphmode.mappers import mapper_class, mapper_of
from npu_lsp.rules.graphmode.result_kinds import TUPLE_RESULTS

_KIND = {"AbstractTuple": "a tuple", "AbstractList": "a list", "AbstractDictionary": "a dict"}


@rule(code="MS187", name="map-argument-types", severity="error", family="graphmode")
class MapArgumentTypes(GraphRule):
    """## What it does
    Flags a call of `ops.HyperMap` / `ops.Map` (or of Python's `map`, which the graph
    compiles as Map) inside compiled code whose mapped arguments are sequences of different
    kinds: a tuple with a list (`self.hyper_map(fn, self.weights, [g * s for g in grads])`),
    tuples of different lengths, a nested element that is a list on one side and a tuple
    on the other, or, for Map, a sequence with a tensor. The kinds are followed where the
    values come from: tuple and list displays and comprehensions, `tuple(...)`/`list(...)`,
    a name's last binding before the call (also through an `if` MindSpore folds), the
    Parameters a Cell keeps (`ParameterTuple(...)`, `net.trainable_params()`, an optimizer's
    `parameters` and their `clone(...)`: a tuple in compiled code), results of HyperMap, Map
    and `ops.clip_by_global_norm` (the kind of what they map), and the arguments a user
    optimizer's `construct` is given by the train step that calls it. Python's `map` over a
    tensor is flagged also when the tensor is a parameter of compiled code known only from
    the tensors the program's module-level calls pass (`map(lambda r: r * 2, x)` in an
    `@ms.jit` function or a helper it calls); `map` over `ops.unstack(x)` / `ops.split(...)`
    (tuples) is not.

    Under the STRICT syntax level it also flags a call of a `MultitypeFuncGraph` of this
    file (directly, or as what a HyperMap / Map applies, with `ops.partial` arguments)
    whose argument types fit none of the type lists it is registered with, when a tensor
    is among them.

    ## Why is this bad?
    HyperMap recurses into its arguments only when all of them are of one sequence type;
    MindSpore stops, at every syntax level, with `RuntimeError: In a nonleaf situation,
    the types of arguments in HyperMap must be consistent, but the types of arguments are
    inconsistent` (or `The tuples in HyperMap should have the same length`). Map requires
    the same of all its arguments (`The types of arguments in Map must be consistent`) and
    maps over tuples and lists only (`Map can only be applied to list, tuple`). PyNative
    runs the Python fallback and accepts all of these. A list of Parameters kept on `self`
    (`self.weights = net.trainable_params()`) is a tuple in the graph, so it maps with the
    gradients a `value_and_grad` returns but not with a list comprehension of them.

    A `MultitypeFuncGraph` called with types none of its registered functions takes
    (`_add(t, 1.0)` with only `("Tensor", "Tensor")` registered; HyperMap's leaf case
    `hyper_map(_add, (a, b), a)`) is run as interpreted Python: LAX compiles it, STRICT
    stops with `When handling script '...' in graph mode, the inputs should be constant`.

    ## Example
    ```python
    class MySGD(nn.Cell):
        def __init__(self, params, lr=0.01):
            super().__init__()
            self.params = ParameterTuple(params)
            self.hyper_map = ops.HyperMap()
            self.lr = lr

        def construct(self, grads):
            return self.hyper_map(ops.partial(_update, self.lr), self.params, grads)

    # in the train step
    grads = [g / scale for g in grads]
    self.optimizer(grads)
    ```

    ## Use instead
    ```python
    grads = tuple(g / scale for g in grads)
    self.optimizer(grads)
    ```

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 1 (rejected at every level) and section 2 (STRICT only: what LAX
      hands to JIT Fallback).
    - MindSpore 2.10, `HyperMap::Make` / `Map::Make` (mindspore/ccsrc/frontend/operator/composite).
    - Measured on MindSpore 2.10 (written set `trainsteps`, probes `mh_*`: tuple with list,
      lengths, nested elements, Parameters kept on `self`, user optimizers given a list; a
      tensor argument with a tuple is HyperMap's leaf case and compiles at LAX; `mh_mtf_*`:
      unregistered types refused under STRICT, constant numbers folded).
    - Measured on MindSpore 2.10 with the `written/zoo` probes `lead29_optimizer_*` (from
      mindcv's AdamW / Lion): an `nn.Optimizer` subclass whose `get_lr` returns
      `self.learning_rate` or, on a side MindSpore folds, a tuple built with `lr += (...,)`
      compiles under STRICT; a name is taken for a tuple only when all its bindings are.
    """

    nodes = (ast.Call,)

    def applies(self, ctx: Context) -> bool:
        return bool(_candidates(ctx))  # `file_calls`: no mapper, no MultitypeFuncGraph here

    def file_calls(self, ctx: Context) -> frozenset[str] | None:
        return _candidates(ctx)

    def wants_call(self, callee: type[ast.AST], called: str, receiver: str) -> bool:
        # `mapper_of`: a mapper built inline, a name, or `self.<attr>`
        return callee is ast.Call or callee is ast.Name or (callee is ast.Attribute and receiver == "self")

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        assert isinstance(node, ast.Call)
        if not node.args or ctx.function is None or node.keywords:
            return ()
        f = node.func
        if any(isinstance(a, ast.Starred) for a in node.args):
            return ()
        if isinstance(f, ast.Name) and f.id in _overloads(ctx):
            return self._check(node, node.args, None, (f.id, []), ctx)  # `_add(x, y)` itself
        found = mapper_of(f, ctx.function, ctx)
        if found is None:
            return ()
        mapper, fixed = found
        seqs = node.args if fixed else node.args[1:]
        if not seqs:
            return ()
        mapped = None if fixed else _multitype(node.args[0], ctx)
        if mapper == "HyperMap" and len(seqs) < 2 and mapped is None:
            return ()  # one sequence is always consistent with itself
        return self._check(node, seqs, mapper, mapped, ctx)

    def _check(
        self,
        node: ast.Call,
        seqs: list[ast.expr],
        mapper: str | None,
        mapped: tuple[str, list[ast.expr]] | None,
        ctx: Context,
    ) -> Iterable[Diagnostic]:
        v = values(ctx)
        func = ctx.function
        if mapper == "Map" and ctx.scope is not None and not ctx.scope.strict:
            from npu_lsp.rules.graphmode.opaque_value_query import opaque_at_lax

            if any(opaque_at_lax(s, func, ctx) for s in seqs):
                # a Python object under LAX (a NamedTuple's field, a JIT Fallback result):
                # `map` over it runs as Python (measured, fresh v5 seed 10800050:
                # `map(lambda r: r * 2, o.value)` with `o` a NamedTuple built from `x` compiles)
                return
        envs: list[Env | None] = [*v.reaching_contexts(func)] or [None]
        for env in envs:
            args = [v.reaching(a, func, env) for a in seqs]
            problem = None
            if mapper is not None:
                problem = _hypermap(args) if mapper == "HyperMap" else _map(args)
            if mapper == "Map" and len(seqs) == 1:
                if problem is not None and _tuple_call(seqs[0], ctx):
                    problem = None  # `map(f, ops.unstack(x))` maps over a tuple (written/gen18 `mp_net_unstack`)
                elif problem is None and not args[0].known and _fed_tensor(seqs[0], ctx):
                    problem = _map([av.Tensor()])
            if problem is None and mapped is not None and ctx.scope is not None and ctx.scope.strict:
                bound = [v.reaching(b, func, env) for b in mapped[1]]
                problem = _unmatched(mapped[0], bound, args, mapper, ctx)
            if problem is not None:
                yield ctx.diagnostic(self, node, problem)
                return


def _overloads(ctx: Context) -> dict[str, list[tuple[str, ...]]]:
    """Module-level `name = MultitypeFuncGraph(...)` -> the type lists its functions are
    registered under (`@name.register("Tensor", "Tensor")`), found once per file."""
    key = "ms187-overloads"
    hit: dict[str, list[tuple[str, ...]]] | None = ctx.cache.get(key)
    if hit is None:
        hit = {}
        if ctx.mentions("MultitypeFuncGraph"):
            for st in ctx.tree.body:
                if (
                    isinstance(st, ast.Assign)
                    and len(st.targets) == 1
                    and isinstance(st.targets[0], ast.Name)
                    and isinstance(st.value, ast.Call)
                    and (ctx.qualname(st.value.func) or "").endswith(".MultitypeFuncGraph")
                ):
                    hit[st.targets[0].id] = []
            for st in ctx.tree.body:
                if isinstance(st, ast.FunctionDef):
                    for d in st.decorator_list:
                        _add_overload(d, hit)
        ctx.cache[key] = hit
    return hit


def _add_overload(d: ast.expr, table: dict[str, list[tuple[str, ...]]]) -> None:
    if not (
        isinstance(d, ast.Call)
        and isinstance(d.func, ast.Attribute)
        and d.func.attr == "register"
        and isinstance(d.func.value, ast.Name)
        and d.func.value.id in table
    ):
        return
    names = [a.value for a in d.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
    if len(names) != len(d.args) or d.keywords:
        table.pop(d.func.value.id)  # a computed type: the overloads are not known
        return
    table[d.func.value.id].append(tuple(names))


def _multitype(fn: ast.expr, ctx: Context) -> tuple[str, list[ast.expr]] | None:
    """(the MultitypeFuncGraph, the arguments bound to it) for `_f` or `ops.partial(_f, a)`."""
    if isinstance(fn, ast.Name):
        return (fn.id, []) if fn.id in _overloads(ctx) else None
    if (
        isinstance(fn, ast.Call)
        and (ctx.qualname(fn.func) or "").rsplit(".", 1)[-1] == "partial"
        and fn.args
        and not fn.keywords
        and isinstance(fn.args[0], ast.Name)
        and fn.args[0].id in _overloads(ctx)
        and not any(isinstance(a, ast.Starred) for a in fn.args)
    ):
        return fn.args[0].id, list(fn.args[1:])
    return None


#: a registered type name -> does a value of the lattice fit it (None: not known here)
def _fits(name: str, v: av.Value) -> bool | None:
    if not v.known:
        return None
    if name == "Tensor":
        return isinstance(v, av.Tensor)
    if name == "Number":
        return isinstance(v, av.Scalar)
    if name in ("Tuple", "List"):
        return isinstance(v, av.Sequence) and v.kind == name.lower()
    if name == "None":
        return isinstance(v, av.NoneValue)
    if name == "String":
        return isinstance(v, av.Str)
    return None


def _leaf_calls(args: list[av.Value], mapper: str | None, depth: int = 0) -> list[list[av.Value]] | None:
    """The argument lists the mapped function is called with (None: not all known)."""
    if mapper is None:
        return [args]  # a direct call
    if not all(a.known for a in args):
        return None  # leaf or not depends on what is not known
    seqs = [a for a in args if isinstance(a, av.Sequence)]
    if len(seqs) != len(args):
        return [args] if mapper == "HyperMap" else None  # HyperMap's leaf situation
    if depth > 4:
        return None
    if any(a.elements is None for a in seqs):
        # lengths not known: every position gives the sequences' items (`tuple(zip(ps, qs))`
        # of Parameter tuples is a tuple of (tensor, tensor) pairs)
        if any(a.item is None for a in seqs):
            return None
        rows = [tuple(a.item for a in seqs if a.item is not None)]
    else:
        rows = list(zip(*(a.elements or () for a in seqs), strict=False))
    if mapper == "Map":
        return [list(r) for r in rows]
    out: list[list[av.Value]] = []
    for r in rows:
        inner = _leaf_calls(list(r), mapper, depth + 1)
        if inner is None:
            return None
        out.extend(inner)
    return out


def _unmatched(name: str, bound: list[av.Value], args: list[av.Value], mapper: str | None, ctx: Context) -> str | None:
    """STRICT: a call of the MultitypeFuncGraph `name` whose argument types fit none of its
    registered type lists is run as interpreted Python (JIT fallback), which STRICT refuses
    for inputs that are not constants (measured, probes `mh_mtf_*`, `mh_hm_tensor_tuple`)."""
    sigs = _overloads(ctx).get(name)
    calls = _leaf_calls(args, mapper)
    if calls is None and mapper is not None and not all(a.known for a in args):
        calls = _partly_known_calls(bound, args, mapper, sigs or [])
    if not sigs or calls is None:
        return None
    for call in calls:
        given = bound + call
        if not any(isinstance(g, av.Tensor) for g in given):
            continue  # constant inputs: the interpreted call is folded while compiling
        fits = [_sig_fits(sig, given) for sig in sigs]
        if any(f is None or f for f in fits):
            continue
        shown = ", ".join(g.describe() for g in given)
        listed = "; ".join("(" + ", ".join(sig) + ")" for sig in sigs)
        return (
            f"`{name}` is called with ({shown}), which fits none of the types it is registered for "
            f"({listed}): MindSpore runs it as interpreted Python, which the STRICT syntax level refuses "
            "for inputs that are not constants; register the types it is given"
        )
    return None


def _partly_known_calls(
    bound: list[av.Value], args: list[av.Value], mapper: str, sigs: list[tuple[str, ...]]
) -> list[list[av.Value]] | None:
    """The calls to judge when some mapped arguments are not known (`grads` given by the
    caller) but the others are sequences whose elements are: an unknown one may be a sequence
    (the function is called per element, the unknown one's element unknown) or, for HyperMap,
    a leaf (called with the arguments whole). Only when the per-element call and the
    arguments-whole call both fit no registered types is one returned; None otherwise."""
    known = [a for a in args if a.known]
    if not known or not all(isinstance(a, av.Sequence) for a in known):
        return None
    per_elem: list[av.Value] = []
    for a in args:
        if not a.known:
            per_elem.append(av.UNKNOWN)
            continue
        assert isinstance(a, av.Sequence)
        if a.elements is not None:
            if not a.elements or len({e for e in a.elements}) != 1:
                return None
            per_elem.append(a.elements[0])
        elif a.item is not None:
            per_elem.append(a.item)
        else:
            return None
    alternatives = [per_elem] + ([list(args)] if mapper == "HyperMap" else [])
    if sigs and all(not any(_sig_fits(sig, bound + alt) is not False for sig in sigs) for alt in alternatives):
        return [per_elem]
    return None


def _sig_fits(sig: tuple[str, ...], given: list[av.Value]) -> bool | None:
    if len(sig) != len(given):
        return False
    out: bool | None = True
    for name, v in zip(sig, given, strict=True):
        f = _fits(name, v)
        if f is False:
            return False
        if f is None:
            out = None
    return out


def _candidates(ctx: Context) -> frozenset[str]:
    """The called names (`engine.called_name`) of the calls that may run a mapper or a
    MultitypeFuncGraph in this file: Python's `map`, the MultitypeFuncGraphs, the names and
    attributes bound to `HyperMap(...)` / `Map(...)`, and "" for one built inline."""
    key = "ms187-candidates"
    hit: frozenset[str] | None = ctx.cache.get(key)
    if hit is None:
        names: set[str] = set(_overloads(ctx))
        if ctx.mentions("map"):
            names.add("map")
        if ctx.mentions("Map"):
            names.add("")
            for n in ast.walk(ctx.tree):
                if isinstance(n, ast.Assign) and isinstance(n.value, ast.Call) and mapper_class(ctx.qualname(n.value.func)):
                    for t in n.targets:
                        if isinstance(t, ast.Name):
                            names.add(t.id)
                        elif isinstance(t, ast.Attribute):
                            names.add(t.attr)
        hit = ctx.cache[key] = frozenset(names)
    return hit


def _kinds(args: list[av.Value]) -> str:
    return ", ".join(_KIND.get(a.abstract, a.describe()) for a in args)


def _hypermap(args: list[av.Value], depth: int = 0) -> str | None:
    """MindSpore's complaint about HyperMap over these arguments, if it has one. Every
    argument must be known: one that is not a sequence makes it a leaf call."""
    if depth > 4 or not all(a.known for a in args):
        return None
    if not all(isinstance(a, (av.Sequence, av.Dict)) for a in args):
        return None  # the leaf situation: the function is called with the arguments as they are
    if len({a.abstract for a in args}) > 1:
        where = " (in nested elements)" if depth else ""
        return (
            f"HyperMap maps over {_kinds(args)}{where}: the types of its arguments must be consistent "
            "(all tuples or all lists); convert with `tuple(...)`"
        )
    seqs = [a for a in args if isinstance(a, av.Sequence)]
    if len(seqs) != len(args) or any(s.elements is None for s in seqs):
        return None
    lengths = {len(s.elements or ()) for s in seqs}
    if len(lengths) > 1:
        shown = ", ".join(str(len(s.elements or ())) for s in seqs)
        return f"HyperMap maps over {seqs[0].kind}s of lengths {shown}: the tuples in HyperMap should have the same length"
    for i in range(lengths.pop()):
        inner = _hypermap([s.elements[i] for s in seqs if s.elements is not None], depth + 1)
        if inner is not None:
            return inner
    return None


#: tensor methods giving a tuple of tensors
_TUPLE_METHODS = frozenset({"split", "chunk", "tensor_split", "unbind"})


def _tuple_call(e: ast.expr, ctx: Context) -> bool:
    """A call of a `mindspore.ops` function `ms_result_kinds.json` lists as giving a tuple
    (`ops.unstack(x)`, `ops.split(x, 1)`), or a tensor method giving one (`x.split(1)`)."""
    if type(e) is not ast.Call:
        return False
    f = e.func
    q = ctx.qualname(f) or ""
    if q.startswith("mindspore.") and q.rpartition(".")[2] in TUPLE_RESULTS:
        return True
    return not q and type(f) is ast.Attribute and f.attr in _TUPLE_METHODS


def _fed_tensor(e: ast.expr, ctx: Context) -> bool:
    """Is `e` a tensor in every call context the shapes model (ranks.py) follows from the
    program's module-level calls (a jit function's parameter the values model leaves
    unknown: `map(lambda r: r * 2, x)` with `step(Tensor(...))`, fresh v5 seeds
    `lambda_map`, "Map can only be applied to list, tuple, but got Tensor[Float32]" at both
    levels)? On a loop's first pass, which MindSpore compiles first: `x = ops.stack(list(map(
    lambda r: r * 2, x))) / 2` in `for _ in range(2):` fails there, whatever the second pass
    is given (fresh v5 seed 11400024)."""
    from npu_lsp.rules.graphmode.ranks import is_tensor, ranks

    assert ctx.function is not None
    while type(e) is ast.Subscript:
        e = e.value
    if type(e) is not ast.Name:
        return False  # what a call returns (`ops.unstack(x)`: a tuple) is the values model's
    got = ranks(ctx).value_at(e, ctx.function, first=True)
    return bool(got) and all(is_tensor(v) for v in got)


def _map(args: list[av.Value]) -> str | None:
    """MindSpore's complaint about Map over these arguments (not recursive), if it has one."""
    if not all(a.known for a in args) or any(isinstance(a, av.Dict) for a in args):
        return None
    if not any(isinstance(a, av.Sequence) for a in args):
        if len(args) == 1 and isinstance(args[0], av.Tensor):
            return "Map can only be applied to list, tuple, but it is given a Tensor; map over a tuple of tensors"
        return None
    if len({a.abstract for a in args}) > 1:
        return (
            f"Map maps over {_kinds(args)}: the types of its arguments must be consistent "
            "(all tuples or all lists); convert with `tuple(...)`"
        )
    return None
