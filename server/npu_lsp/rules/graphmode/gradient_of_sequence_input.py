"""MS234: the gradient with respect to tensors a top-level tuple or list input holds."""

from __future__ import annotations

import ast
from collections.abc import Iterable
from dataclasses import dataclass

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode import constructed
from npu_lsp.rules.graphmode.entries import entry_callers
from npu_lsp.rules.graphmode.helpers import GraphRule
from npu_lsp.rules.graphmode.parameter_list_entry_argument import module_calls
from npu_lsp.rules.graphmode.tensor_names import TENSOR_MAKERS

#: the builders of a gradient function, by the qualified name's last part
_GRAD = "grad"
_VALUE_AND_GRAD = "value_and_grad"
_GRAD_OPERATION = "GradOperation"
#: wrappers that keep the gradient function's results (one per mapped row)
_WRAPPERS = frozenset({"vmap"})
#: how deep helper calls are followed from the entry
_DEPTH = 5
#: sequence methods a tuple has, whatever its length
_TUPLE_METHODS = frozenset({"count", "index"})


# ---------------------------------------------------------------------------- values
# What the walk knows of a value: a tensor MindSpore folds as a constant (an element of a
# top-level tuple / list input), the tuple / list of such tensors (its length when known),
# the empty tuple the gradient of constants is, and the `(value, ())` of `value_and_grad`.
@dataclass(frozen=True)
class _Const:
    pass


@dataclass(frozen=True)
class _ConstSeq:
    n: int | None


@dataclass(frozen=True)
class _ConstMap:
    """A top-level dict input of tensors (its string keys): its values are constants too."""

    keys: tuple[str, ...]


@dataclass(frozen=True)
class _Empty:
    made: ast.Call  # the gradient call that gave it
    derived: bool = False  # a sequence built from it (`tuple(... for p, g in zip(params, grads))`)
    mapping: bool = False  # a dict built from it (`dict(zip(names, grads))`)

    @property
    def what(self) -> str:
        if self.mapping:
            return "the dict built from it"
        return "the sequence built from it" if self.derived else "it"


@dataclass(frozen=True)
class _NewList:
    """A `[]` display bound in the graph: empty until something is appended to it."""


@dataclass(frozen=True)
class _ValueAndEmpty:
    made: ast.Call


_Value = _Const | _ConstSeq | _ConstMap | _Empty | _ValueAndEmpty | _NewList | None
_CONST = _Const()
_NEW_LIST = _NewList()
#: list methods that put items in a list
_GROWERS = frozenset({"append", "extend", "insert"})
#: builtins that give a sequence as long as their argument (empty when it is)
_SAME_LENGTH = frozenset({"tuple", "list", "zip", "enumerate", "reversed", "dict"})


@dataclass(frozen=True)
class _Failure:
    node: ast.AST
    made: ast.Call
    why: str


@rule(code="MS234", name="gradient-of-sequence-input", severity="error", family="graphmode")
class GradientOfSequenceInput(GraphRule):
    """## What it does
    Flags, in an `@ms.jit` function or a network's `construct` that Python calls with a
    tuple or list of tensors (`run(params, x)` with `params = (ms.Tensor(...),
    ms.Tensor(...))`, a list grown by `append`s of them) or a dict of them (`{"w": ...}`),
    a gradient taken only with respect to those tensors (the tuple itself, `params[0]`,
    `params["w"]`, `*params`, names unpacked from it, also in the helpers and the
    differentiated functions it reaches) when the gradients are then used: unpacked
    (`gw, gb = ms.grad(f, grad_position=(0, 1))(params[0], params[1], x)`), indexed, used
    as a tensor, or zipped with the parameters into a new tuple, list or dict
    (`dict(zip(names, grads))`, a list a loop over them would `append` to) that is indexed,
    unpacked or spread into a call (`f(*fast, x)`) later, also on the second pass of an
    unrolled loop (`for _ in range(2)`: the functional MAML inner step).

    ## Why is this bad?
    MindSpore makes every top-level input that is not a tensor (a tuple, a list, a
    scalar) a constant of the graph, and constants are not differentiated: the gradient
    with respect to them is an empty tuple. Unpacking or indexing it stops compiling at
    every syntax level (`ValueError: For primitive:'TupleGetItem', cannot get item by index
    from an empty sequence`, `list_getitem` for a list, `can't multiply sequence by
    non-int of type 'float'`); a `zip` with it is empty, so the tuple of updated parameters
    is too, and a helper unpacking it fails the same way (or a starred call of it gets too
    few arguments: `The parameters number of the function is 6, but the number of provided
    arguments is 2`). The same tensors given as separate arguments, `ms.mutable(params)`,
    or a copy made in the graph (`params[0] + 0.0`) compile.

    ## Example
    ```python
    @ms.jit
    def outer(params, x):
        gw, gb = ms.grad(loss_wb, grad_position=(0, 1))(params[0], params[1], x)
        return gw, gb

    outer((w, b), x)
    ```

    ## Use instead
    Pass the tensors as separate arguments (or wrap the tuple in `ms.mutable`):
    ```python
    @ms.jit
    def outer(w, b, x):
        gw, gb = ms.grad(loss_wb, grad_position=(0, 1))(w, b, x)
        return gw, gb

    outer(w, b, x)
    ```

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md has no row for it (a limit of MindSpore's automatic differentiation of
      top-level inputs, rejected at every level).
    - MindSpore `mindspore.mutable`: "all top-level network inputs other than Tensor, such
      as scalar, tuple, list and dict, are treated as constants; constants cannot be
      differentiated".
    - Measured on MindSpore 2.10 (CPU), LAX and STRICT: written set `heldout30b`
      (`maml_first_order_stop_gradient_clean`, `maml_tasks_python_list_loop_mean`,
      `maml_functional_inner_loop_clean`, `psg_vmap_value_and_grad_tuple_params_clean`)
      and its probes `fix31b_h_*`, `fix31b_m_*`, `fix31b_f_*`: the gradient with respect
      to `params[0]`, `*params`, names unpacked from `params`, a list input, through a
      helper, a sub-cell, `value_and_grad`, an outer `value_and_grad` or `ms.vmap` is
      rejected once unpacked or used; returning it or taking `len` compiles, and so do
      `ms.mutable(params)`, `params[0] + 0.0`, separate arguments, and a tuple built in the
      graph from tensor inputs.
    - Written set `heldout40a` (`maml_enumerate_names_print_norms`,
      `maml_inner_grad_clip_by_value_clean`, `maml_dict_fast_weights_comprehension`) and its
      probes `fix40c_*`: a dict input (`The key w1 does not exist in the dict:{}` once
      `dict(zip(names, grads))` is read), a module-level list grown by `append`, a list a
      `for` over `enumerate(zip(names, grads))` appends to then indexed by a helper
      (`list_getitem ... empty sequence`), the tuple zipped from the empty gradient spread
      into the next call (`The parameters number of the function is 4, but the number of
      provided arguments is 2`: a second loop pass, or a plain call after the update) and a
      nested `@ms.jit` given the tuple are rejected; one loop pass (`range(1)`), the
      zipped tuple only returned, and `len` of the appended list compile.
    """

    nodes = (ast.FunctionDef,)
    words = ("grad", "GradOperation")

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        assert isinstance(node, ast.FunctionDef)
        scope = ctx.scope
        if scope is None or scope.kind not in ("jit", "construct") or scope.function is not node:
            return
        env = _entry_env(node, scope.kind, ctx)
        if not env:
            return  # no tuple or list of tensors given to this entry by Python
        failure = _Walk(ctx).function(node, env, 0)[1]
        if failure is None:
            return
        reported: set[int] = ctx.cache.setdefault("gradient-of-sequence-input:reported", set())
        if id(failure.made) in reported:
            return
        reported.add(id(failure.made))
        where = "" if failure.node.lineno == failure.made.lineno else f" (line {failure.node.lineno})"  # type: ignore[attr-defined]
        yield ctx.diagnostic(
            self,
            failure.made,
            f"this gradient is taken only with respect to tensors of a tuple or list that Python gives the compiled `{node.name}`: MindSpore makes such inputs constants and their gradient an empty tuple, so {failure.why}{where}; pass the tensors as separate arguments or wrap the tuple in `ms.mutable(...)`",
        )


# ---------------------------------------------------------------------------- entry
def _entry_env(func: ast.FunctionDef, kind: str, ctx: Context) -> dict[str, _Value]:
    """The entry's parameters every Python call gives a tuple or list display of tensors."""
    callers = entry_callers(func, kind, ctx)
    if callers is None:
        return {}
    calls = [c for c in module_calls(ctx) if callers.calls(c)]
    if not calls:
        return {}
    params = [a.arg for a in (*func.args.posonlyargs, *func.args.args)]
    if kind == "construct" and params and params[0] == "self":
        params = params[1:]
    env: dict[str, _Value] = {}
    for i, name in enumerate(params):
        values = {_tensor_container(c.args[i], ctx) if i < len(c.args) and not _starred_before(c, i) else None for c in calls}
        if len(values) == 1 and (value := values.pop()) is not None:
            env[name] = value
    return env


def _starred_before(call: ast.Call, i: int) -> bool:
    return any(isinstance(a, ast.Starred) for a in call.args[: i + 1])


def _tensor_container(e: ast.expr, ctx: Context, depth: int = 0) -> _ConstSeq | _ConstMap | None:
    """What `e`, evaluated at module level, is when it is a tuple or list of tensors built
    from host data (`(ms.Tensor(...), ms.Tensor(...))`, a name bound to one, `list(...)` /
    `tuple(...)` of one, a list grown only by `append`s of such tensors: length unknown) or
    a dict display of them with string keys; None otherwise (`ms.mutable(...)`, Parameters)."""
    if depth > 3:
        return None
    if isinstance(e, ast.Name):
        bound = constructed.built(e, None, ctx)
        if isinstance(bound, ast.List) and not bound.elts:
            return _appended_tensors(e.id, ctx)
        return _tensor_container(bound, ctx, depth + 1) if bound is not None else None
    if isinstance(e, ast.Call) and isinstance(e.func, ast.Name) and e.func.id in ("list", "tuple") and len(e.args) == 1 and not e.keywords:
        value = _tensor_container(e.args[0], ctx, depth + 1)
        return value if isinstance(value, _ConstSeq) else None
    if isinstance(e, (ast.Tuple, ast.List)) and e.elts and all(_host_tensor(x, ctx) for x in e.elts):
        return _ConstSeq(len(e.elts))
    if isinstance(e, ast.Dict) and e.keys:
        keys = [k.value for k in e.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)]
        if len(keys) == len(e.keys) and all(_host_tensor(v, ctx) for v in e.values):
            return _ConstMap(tuple(keys))
    return None


def _appended_tensors(name: str, ctx: Context) -> _ConstSeq | None:
    """A module-level `name = []` that module-level code grows only by `name.append(t)` of
    host tensors (measured: probe fix40c_list_built_module_tuple_arg_unpacked)."""
    grown = [c for c in module_calls(ctx) if isinstance(c.func, ast.Attribute) and isinstance(c.func.value, ast.Name) and c.func.value.id == name]
    if not grown or any(c.func.attr != "append" or len(c.args) != 1 or not _host_tensor(c.args[0], ctx) for c in grown):  # type: ignore[attr-defined]
        return None
    return _ConstSeq(None)


def _host_tensor(e: ast.expr, ctx: Context) -> bool:
    """`ms.Tensor(...)` (or a module-level name bound to one, or either of them in both
    branches of a conditional expression)."""
    if isinstance(e, ast.IfExp):
        return _host_tensor(e.body, ctx) and _host_tensor(e.orelse, ctx)
    if isinstance(e, ast.Name):
        bound = constructed.built(e, None, ctx)
        if bound is None:
            return False
        e = bound
    if not isinstance(e, ast.Call):
        return False
    q = ctx.qualname(e.func) or ""
    return q in TENSOR_MAKERS


# ---------------------------------------------------------------------------- walk
@dataclass(frozen=True)
class _Grad:
    """A gradient function: what it differentiates, which inputs, what it returns."""

    fn: ast.expr
    positions: tuple[int, ...]
    value_and_grad: bool
    mapped: bool = False  # under `ms.vmap`


class _Walk:
    """Follows constant tensors from an entry through the statements of the functions it
    reaches, in source order (a loop body once), to the gradients they give."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.memo: dict[tuple[int, tuple[tuple[str, _Value], ...]], tuple[_Value, _Failure | None]] = {}
        self.functions = {st.name: st for st in ctx.tree.body if isinstance(st, ast.FunctionDef)}

    def function(self, fn: ast.FunctionDef, env: dict[str, _Value], depth: int) -> tuple[_Value, _Failure | None]:
        """What `fn` returns and the first failure in it, its parameters holding `env`."""
        key = (id(fn), tuple(sorted((k, v) for k, v in env.items() if v is not None)))
        hit = self.memo.get(key)
        if hit is not None:
            return hit
        self.memo[key] = (None, None)  # recursion: nothing known
        state = _State(dict(env), fn, depth)
        failure = self._block(fn.body, state)
        self.memo[key] = hit = (state.returned if state.returns == 1 else None, failure)
        return hit

    # -- statements
    def _block(self, body: list[ast.stmt], s: _State) -> _Failure | None:
        for st in body:
            failure = self._statement(st, s)
            if failure is not None:
                return failure
        return None

    def _statement(self, st: ast.stmt, s: _State) -> _Failure | None:
        if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            s.env.pop(st.name, None)
            return None
        if isinstance(st, ast.Assign):
            value, failure = self._expr(st.value, s)
            if failure is not None:
                return failure
            for t in st.targets:
                failure = self._bind(t, value, s)
                if failure is not None:
                    return failure
            return None
        if isinstance(st, (ast.AugAssign, ast.AnnAssign)):
            failure = self._expr(st.value, s)[1] if st.value is not None else None
            self._bind(st.target, None, s)
            return failure
        if isinstance(st, ast.Return):
            value, failure = self._expr(st.value, s) if st.value is not None else (None, None)
            s.returns += 1
            s.returned = value
            return failure
        if isinstance(st, (ast.For, ast.AsyncFor)):
            return self._for(st, s)
        if isinstance(st, (ast.If, ast.While)):
            return self._expr(st.test, s)[1] or self._block(st.body, s) or self._block(st.orelse, s)
        if isinstance(st, (ast.With, ast.AsyncWith)):
            return self._block(st.body, s)
        if isinstance(st, ast.Try):
            return self._block(st.body, s) or self._block(st.orelse, s) or self._block(st.finalbody, s)
        if isinstance(st, ast.Expr):
            return self._expr(st.value, s)[1]
        return None

    def _for(self, st: ast.For | ast.AsyncFor, s: _State) -> _Failure | None:
        value, failure = self._expr(st.iter, s)
        if failure is not None:
            return failure
        if isinstance(value, _Empty):
            # the loop never runs: a new list it would have grown stays empty (measured:
            # probes fix40c_for_grads_append_index, fix40c_enumerate_zip_append_index)
            for name in _grown_lists(st.body):
                if isinstance(s.env.get(name), _NewList):
                    s.env[name] = _Empty(value.made, True)
            return self._block(st.orelse, s)
        # MindSpore unrolls the loop: a body that rebinds what it reads sees the first
        # pass's values on the second (probes fix40c_starred_tuple_arg_loop2 / _range1_clean)
        passes = 2 if _runs_twice(st, value) else 1
        for _ in range(passes):
            self._bind(st.target, _CONST if isinstance(value, _ConstSeq) else None, s)
            failure = self._block(st.body, s)
            if failure is not None:
                return failure
        return self._block(st.orelse, s)

    def _bind(self, target: ast.expr, value: _Value, s: _State) -> _Failure | None:
        if isinstance(target, ast.Name):
            s.env[target.id] = value
            return None
        if isinstance(target, (ast.Tuple, ast.List)):
            if isinstance(value, _Empty) and target.elts:
                return _Failure(target, value.made, f"unpacking {value.what} into `{self.ctx.segment(target)}` fails (For primitive:'TupleGetItem', cannot get item by index from an empty sequence)")
            parts: list[_Value] = [None] * len(target.elts)
            if isinstance(value, _ConstSeq) and value.n == len(target.elts):
                parts = [_CONST] * len(target.elts)
            elif isinstance(value, _ValueAndEmpty) and len(target.elts) == 2:
                parts = [None, _Empty(value.made)]
            for t, v in zip(target.elts, parts, strict=True):
                failure = self._bind(t.value if isinstance(t, ast.Starred) else t, v, s)
                if failure is not None:
                    return failure
            return None
        if isinstance(target, (ast.Subscript, ast.Attribute)):
            return self._expr(target.value, s)[1]
        return None

    # -- expressions
    def _expr(self, e: ast.expr, s: _State) -> tuple[_Value, _Failure | None]:
        if isinstance(e, ast.Name):
            return s.env.get(e.id), None
        if isinstance(e, ast.Subscript):
            value, failure = self._expr(e.value, s)
            if failure is not None:
                return None, failure
            if isinstance(value, _Empty):
                why = "The key ... does not exist in the dict:{}" if value.mapping else "cannot get item by index from an empty sequence"
                return None, _Failure(e, value.made, f"indexing {value.what} (`{self.ctx.segment(e)}`) fails ({why})")
            if isinstance(value, _ConstSeq) and isinstance(e.slice, ast.Constant) and isinstance(e.slice.value, int):
                return _CONST, None
            if isinstance(value, _ConstMap) and isinstance(e.slice, ast.Constant) and e.slice.value in value.keys:
                return _CONST, None
            return None, self._exprs([e.slice], s)
        if isinstance(e, ast.Attribute):
            value, failure = self._expr(e.value, s)
            if failure is None and isinstance(value, _Empty) and e.attr not in _TUPLE_METHODS:
                failure = _Failure(e, value.made, f"`.{e.attr}` of {value.what} fails ('tuple' object has no attribute '{e.attr}')")
            return None, failure
        if isinstance(e, ast.List) and not e.elts:
            return _NEW_LIST, None
        if isinstance(e, (ast.Tuple, ast.List)):
            values = []
            for x in e.elts:
                value, failure = self._expr(x.value if isinstance(x, ast.Starred) else x, s)
                if failure is not None:
                    return None, failure
                values.append(None if isinstance(x, ast.Starred) else value)
            if values and all(isinstance(v, _Const) for v in values):
                return _ConstSeq(len(values)), None
            return None, None
        if isinstance(e, ast.BinOp):
            return self._binop(e, s)
        if isinstance(e, (ast.GeneratorExp, ast.ListComp, ast.SetComp, ast.DictComp)):
            return self._comprehension(e, s)
        if isinstance(e, ast.Call):
            return self._call(e, s)
        if isinstance(e, (ast.Lambda, ast.Constant)):
            return None, None
        return None, self._exprs([c for c in ast.iter_child_nodes(e) if isinstance(c, ast.expr)], s)

    def _exprs(self, es: Iterable[ast.expr], s: _State) -> _Failure | None:
        for x in es:
            failure = self._expr(x.value if isinstance(x, ast.Starred) else x, s)[1]
            if failure is not None:
                return failure
        return None

    def _binop(self, e: ast.BinOp, s: _State) -> tuple[_Value, _Failure | None]:
        left, failure = self._expr(e.left, s)
        if failure is not None:
            return None, failure
        right, failure = self._expr(e.right, s)
        if failure is not None:
            return None, failure
        for side, other in ((left, e.right), (right, e.left)):
            if isinstance(side, _Empty) and isinstance(other, ast.Constant) and isinstance(other.value, float):
                return None, _Failure(e, side.made, f"`{self.ctx.segment(e)}` fails (can't multiply sequence by non-int of type 'float')")
        return None, None

    def _comprehension(self, e: ast.GeneratorExp | ast.ListComp | ast.SetComp | ast.DictComp, s: _State) -> tuple[_Value, _Failure | None]:
        """Empty when one of its sequences is: an empty gradient, or a `zip` with one. Its
        items are followed only when every sequence surely has some (a tuple / dict input):
        an item read there is read by the graph (probe fix40c_dict_arg_dict_zip_comp)."""
        sure = True
        for gen in e.generators:
            value, failure = self._expr(gen.iter, s)
            if failure is not None:
                return None, failure
            if isinstance(value, _Empty):
                return _Empty(value.made, True, isinstance(e, ast.DictComp)), None
            sure = sure and not gen.ifs and (isinstance(value, _ConstMap) or (isinstance(value, _ConstSeq) and bool(value.n)))
        if not sure:
            return None, None
        bound = {n.id for gen in e.generators for n in ast.walk(gen.target) if isinstance(n, ast.Name)}
        saved = {n: s.env[n] for n in bound if n in s.env}
        for n in bound:
            s.env.pop(n, None)  # a comprehension's own names (their values are not followed)
        items = [e.key, e.value] if isinstance(e, ast.DictComp) else [e.elt]
        failure = self._exprs(items, s)
        for n in bound:
            s.env.pop(n, None)
        s.env.update(saved)
        return None, failure

    def _call(self, e: ast.Call, s: _State) -> tuple[_Value, _Failure | None]:
        f = e.func
        if isinstance(f, ast.Name) and f.id in _SAME_LENGTH and f.id not in s.env:
            return self._sequence_builtin(e, s)
        if isinstance(f, ast.Attribute) and f.attr in _GROWERS and isinstance(f.value, ast.Name) and isinstance(s.env.get(f.value.id), (_NewList, _Empty)):
            s.env[f.value.id] = None  # grown: no longer known to be empty
        if isinstance(f, ast.Name) and f.id == "len":
            return None, self._exprs(e.args, s)
        args, failure = self._arguments(e, s)
        if failure is not None:
            return None, failure
        grad = _gradient_function(f, s.fn, self.ctx)
        if grad is not None:
            return self._gradient(e, grad, args, s)
        callee = self._callee(e, s)
        if callee is not None and args is not None and (short := self._too_few(e, callee, args, s)) is not None:
            return None, short
        if callee is not None and args is not None and s.depth < _DEPTH:
            env = _call_env(callee, args, self._is_method(callee))
            if env is not None:
                return self.function(callee, env, s.depth + 1)
        if isinstance(f, ast.Attribute):
            return None, self._expr(f.value, s)[1]
        return None, None

    def _sequence_builtin(self, e: ast.Call, s: _State) -> tuple[_Value, _Failure | None]:
        values = []
        for a in e.args:
            value, failure = self._expr(a.value if isinstance(a, ast.Starred) else a, s)
            if failure is not None:
                return None, failure
            values.append(value)
        empty = next((v for v in values if isinstance(v, _Empty)), None)
        name = e.func.id if isinstance(e.func, ast.Name) else ""
        if empty is not None and (len(values) == 1 or name == "zip") and not e.keywords:
            return _Empty(empty.made, True, name == "dict"), None
        if len(values) == 1 and isinstance(values[0], _ConstSeq) and name in ("tuple", "list", "reversed"):
            return values[0], None
        return None, None

    def _arguments(self, e: ast.Call, s: _State) -> tuple[list[_Value] | None, _Failure | None]:
        """The values of the positional arguments (a starred sequence of known length
        spread); None when their number is not known."""
        out: list[_Value] | None = []
        for a in e.args:
            value, failure = self._expr(a.value if isinstance(a, ast.Starred) else a, s)
            if failure is not None:
                return None, failure
            if out is None:
                continue
            if isinstance(a, ast.Starred):
                if isinstance(value, _ConstSeq) and value.n is not None:
                    out.extend([_CONST] * value.n)
                elif isinstance(value, _Empty):
                    continue
                else:
                    out = None
            else:
                out.append(value)
        failure = self._exprs([k.value for k in e.keywords], s)
        return out, failure

    def _gradient(self, e: ast.Call, grad: _Grad, args: list[_Value] | None, s: _State) -> tuple[_Value, _Failure | None]:
        if args is None:
            return None, None
        fn = self._function_of(grad.fn, s)
        if fn is not None and (short := self._too_few(e, fn, args, s)) is not None:
            return None, short
        if fn is not None and s.depth < _DEPTH:
            env = _call_env(fn, args, False)
            if env is not None:
                failure = self.function(fn, env, s.depth + 1)[1]
                if failure is not None:
                    return None, failure
        if any(p >= len(args) or not isinstance(args[p], (_Const, _ConstSeq)) for p in grad.positions):
            return None, None
        if grad.mapped:
            # measured (probe fix30d_tg_vmap_vag_tuple_arg_unused): vmap cannot map the
            # empty gradients back, used or not
            return None, _Failure(e, e, "`ms.vmap` of it fails (The input to VmapMatchOutAxis is empty)")
        return (_ValueAndEmpty(e) if grad.value_and_grad else _Empty(e)), None

    def _too_few(self, e: ast.Call, fn: ast.FunctionDef, args: list[_Value], s: _State) -> _Failure | None:
        """A call spreading an empty gradient (`f(*fast, x)`) that gives `fn` fewer
        arguments than its parameters (measured: probes fix40c_starred_update_then_call,
        fix40c_starred_tuple_arg_loop2: `The parameters number of the function is 4, but
        the number of provided arguments is 2`)."""
        if e.keywords or fn.args.vararg is not None or fn.args.defaults or fn.args.kwonlyargs:
            return None
        spread = [a for a in e.args if isinstance(a, ast.Starred)]
        if len(spread) != 1:
            return None
        empty = self._expr(spread[0].value, s)[0]
        if not isinstance(empty, _Empty):
            return None
        n = len(fn.args.posonlyargs) + len(fn.args.args) - (1 if self._is_method(fn) else 0)
        if len(args) >= n:
            return None
        return _Failure(e, empty.made, f"`{self.ctx.segment(spread[0])}` spreads {empty.what}, so `{fn.name}` gets {len(args)} arguments for its {n} parameters (The parameters number of the function is {n}, but the number of provided arguments is {len(args)})")

    # -- resolution
    def _function_of(self, e: ast.expr, s: _State) -> ast.FunctionDef | None:
        if isinstance(e, ast.Name) and e.id not in s.env:
            return self.functions.get(e.id)
        return None

    def _callee(self, e: ast.Call, s: _State) -> ast.FunctionDef | None:
        """A module-level function, or the `construct` of a module-level Cell instance."""
        f = e.func
        if not isinstance(f, ast.Name) or f.id in s.env:
            return None
        fn = self.functions.get(f.id)
        if fn is not None:
            return fn
        qual = self.ctx.scopes.info.instances.get(f.id)
        if qual is None:
            return None
        cls = next((c for c in self.ctx.tree.body if isinstance(c, ast.ClassDef) and qual.endswith("." + c.name)), None)
        if cls is None:
            return None
        return next((m for m in cls.body if isinstance(m, ast.FunctionDef) and m.name == "construct"), None)

    @staticmethod
    def _is_method(fn: ast.FunctionDef) -> bool:
        return bool(fn.args.args) and fn.args.args[0].arg == "self"


@dataclass
class _State:
    env: dict[str, _Value]
    fn: ast.FunctionDef
    depth: int
    returned: _Value = None
    returns: int = 0


def _call_env(fn: ast.FunctionDef, args: list[_Value], method: bool) -> dict[str, _Value] | None:
    params = [a.arg for a in (*fn.args.posonlyargs, *fn.args.args)]
    if method:
        params = params[1:]
    if fn.args.vararg is not None or len(args) > len(params):
        return None
    env: dict[str, _Value] = {p: v for p, v in zip(params, args, strict=False) if v is not None}
    return env or None


def _gradient_function(f: ast.expr, func: ast.AST, ctx: Context) -> _Grad | None:
    """The gradient function `f` is: `ms.grad(fn, ...)`, `ms.value_and_grad(fn, ...)` or
    `ops.GradOperation()(fn)` (over inputs only, without `has_aux`), built in place or
    bound once to a local or module-level name, also under `ms.vmap`."""
    mapped = False
    for _ in range(4):
        if isinstance(f, ast.Name):
            bound = constructed.built(f, func, ctx)
            if bound is None:
                return None
            f = bound
        if not isinstance(f, ast.Call):
            return None
        q = ctx.qualname(f.func) or ""
        last = q.rsplit(".", 1)[-1]
        if q.startswith("mindspore.") and last in _WRAPPERS and f.args:
            f, mapped = f.args[0], True
            continue
        if q.startswith("mindspore.") and last in (_GRAD, _VALUE_AND_GRAD):
            return _grad_builder(f, last == _VALUE_AND_GRAD, mapped)
        if isinstance(f.func, ast.Call) and len(f.args) == 1 and not f.keywords:
            op = f.func
            oq = ctx.qualname(op.func) or ""
            if oq.startswith("mindspore.") and oq.rsplit(".", 1)[-1] == _GRAD_OPERATION and not op.args and not op.keywords:
                return _Grad(f.args[0], (0,), False, mapped)
        return None
    return None


def _grad_builder(b: ast.Call, value_and_grad: bool, mapped: bool) -> _Grad | None:
    if not b.args:
        return None
    keywords = {k.arg: k.value for k in b.keywords}
    if any(k not in ("grad_position", "weights") for k in keywords):
        return None  # has_aux, return_ids: other results
    weights = b.args[2] if len(b.args) > 2 else keywords.get("weights")
    if len(b.args) > 3 or not (weights is None or (isinstance(weights, ast.Constant) and weights.value is None)):
        return None
    position = b.args[1] if len(b.args) > 1 else keywords.get("grad_position")
    positions = _positions(position)
    return _Grad(b.args[0], positions, value_and_grad, mapped) if positions else None


def _positions(e: ast.expr | None) -> tuple[int, ...] | None:
    if e is None:
        return (0,)
    if isinstance(e, ast.Constant) and isinstance(e.value, int) and not isinstance(e.value, bool):
        return (e.value,)
    if isinstance(e, ast.Tuple) and e.elts:
        ints = [x.value for x in e.elts if isinstance(x, ast.Constant) and type(x.value) is int]
        return tuple(ints) if len(ints) == len(e.elts) else None
    return None


def _grown_lists(body: list[ast.stmt]) -> set[str]:
    """The names `body` calls `.append` / `.extend` / `.insert` on (not in nested functions)."""
    out: set[str] = set()
    stack: list[ast.AST] = list(body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _GROWERS and isinstance(node.func.value, ast.Name):
            out.add(node.func.value.id)
        stack.extend(ast.iter_child_nodes(node))
    return out


def _runs_twice(st: ast.For | ast.AsyncFor, value: _Value) -> bool:
    """Does the loop's body surely run at least twice (`range(2)` or more, a tuple input of
    two or more tensors, a display of two or more items), with no `break` / `return` that
    could end it after the first pass?"""
    it = st.iter
    if isinstance(value, _ConstSeq):
        count = value.n or 0
    elif isinstance(it, (ast.Tuple, ast.List)) and not any(isinstance(x, ast.Starred) for x in it.elts):
        count = len(it.elts)
    elif isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "range" and not it.keywords and 1 <= len(it.args) <= 2:
        ints = [a.value for a in it.args if isinstance(a, ast.Constant) and type(a.value) is int]
        if len(ints) != len(it.args):
            return False
        count = ints[0] if len(ints) == 1 else ints[1] - ints[0]
    else:
        return False
    return count >= 2 and not _exits(st.body)


def _exits(body: list[ast.stmt]) -> bool:
    """A `break` of this loop or a `return` / `raise` anywhere in `body`."""
    stack: list[ast.AST] = list(body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Return, ast.Raise, ast.Break)):
            return True
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        if isinstance(node, (ast.For, ast.AsyncFor, ast.While)):
            # a `break` there ends that loop only
            stack.extend(n for n in ast.walk(node) if isinstance(n, (ast.Return, ast.Raise)))
            continue
        stack.extend(n for n in ast.iter_child_nodes(node) if isinstance(n, (ast.stmt, ast.excepthandler)))
    return False
