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
class _Empty:
    made: ast.Call  # the gradient call that gave it
    derived: bool = False  # a sequence built from it (`tuple(... for p, g in zip(params, grads))`)

    @property
    def what(self) -> str:
        return "the sequence built from it" if self.derived else "it"


@dataclass(frozen=True)
class _ValueAndEmpty:
    made: ast.Call


_Value = _Const | _ConstSeq | _Empty | _ValueAndEmpty | None
_CONST = _Const()


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
    ms.Tensor(...))`), a gradient taken only with respect to those tensors (the tuple
    itself, `params[0]`, `*params`, names unpacked from it, also in the helpers and the
    differentiated functions it reaches) when the gradients are then used: unpacked
    (`gw, gb = ms.grad(f, grad_position=(0, 1))(params[0], params[1], x)`), indexed, used
    as a tensor, or zipped with the parameters into a new tuple that is unpacked later
    (the functional MAML inner step).

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
        lengths = {_tensor_sequence(c.args[i], ctx) if i < len(c.args) and not _starred_before(c, i) else None for c in calls}
        if len(lengths) == 1 and (n := lengths.pop()) is not None:
            env[name] = _ConstSeq(n)
    return env


def _starred_before(call: ast.Call, i: int) -> bool:
    return any(isinstance(a, ast.Starred) for a in call.args[: i + 1])


def _tensor_sequence(e: ast.expr, ctx: Context, depth: int = 0) -> int | None:
    """The length of `e`, evaluated at module level, when it is a tuple or list display of
    tensors built from host data (`(ms.Tensor(...), ms.Tensor(...))`, a name bound to one,
    `list(...)` / `tuple(...)` of one); None otherwise (`ms.mutable(...)`, Parameters)."""
    if depth > 3:
        return None
    if isinstance(e, ast.Name):
        bound = constructed.built(e, None, ctx)
        return _tensor_sequence(bound, ctx, depth + 1) if bound is not None else None
    if isinstance(e, ast.Call) and isinstance(e.func, ast.Name) and e.func.id in ("list", "tuple") and len(e.args) == 1 and not e.keywords:
        return _tensor_sequence(e.args[0], ctx, depth + 1)
    if isinstance(e, (ast.Tuple, ast.List)) and e.elts and all(_host_tensor(x, ctx) for x in e.elts):
        return len(e.elts)
    return None


def _host_tensor(e: ast.expr, ctx: Context) -> bool:
    """`ms.Tensor(...)` (or a module-level name bound to one)."""
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
            value, failure = self._expr(st.iter, s)
            if failure is not None:
                return failure
            if isinstance(value, _Empty):
                return self._block(st.orelse, s)  # the loop never runs
            self._bind(st.target, _CONST if isinstance(value, _ConstSeq) else None, s)
            return self._block(st.body, s) or self._block(st.orelse, s)
        if isinstance(st, (ast.If, ast.While)):
            return self._expr(st.test, s)[1] or self._block(st.body, s) or self._block(st.orelse, s)
        if isinstance(st, (ast.With, ast.AsyncWith)):
            return self._block(st.body, s)
        if isinstance(st, ast.Try):
            return self._block(st.body, s) or self._block(st.orelse, s) or self._block(st.finalbody, s)
        if isinstance(st, ast.Expr):
            return self._expr(st.value, s)[1]
        return None

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
                return None, _Failure(e, value.made, f"indexing {value.what} (`{self.ctx.segment(e)}`) fails (cannot get item by index from an empty sequence)")
            if isinstance(value, _ConstSeq) and isinstance(e.slice, ast.Constant) and isinstance(e.slice.value, int):
                return _CONST, None
            return None, self._exprs([e.slice], s)
        if isinstance(e, ast.Attribute):
            value, failure = self._expr(e.value, s)
            if failure is None and isinstance(value, _Empty) and e.attr not in _TUPLE_METHODS:
                failure = _Failure(e, value.made, f"`.{e.attr}` of {value.what} fails ('tuple' object has no attribute '{e.attr}')")
            return None, failure
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
        if isinstance(e, (ast.GeneratorExp, ast.ListComp)):
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

    def _comprehension(self, e: ast.GeneratorExp | ast.ListComp, s: _State) -> tuple[_Value, _Failure | None]:
        """Empty when one of its sequences is: an empty gradient, or a `zip` with one."""
        for gen in e.generators:
            value, failure = self._expr(gen.iter, s)
            if failure is not None:
                return None, failure
            if isinstance(value, _Empty):
                return _Empty(value.made, True), None
        return None, None

    def _call(self, e: ast.Call, s: _State) -> tuple[_Value, _Failure | None]:
        f = e.func
        if isinstance(f, ast.Name) and f.id in ("tuple", "list", "zip") and f.id not in s.env:
            return self._sequence_builtin(e, s)
        if isinstance(f, ast.Name) and f.id == "len":
            return None, self._exprs(e.args, s)
        args, failure = self._arguments(e, s)
        if failure is not None:
            return None, failure
        grad = _gradient_function(f, s.fn, self.ctx)
        if grad is not None:
            return self._gradient(e, grad, args, s)
        callee = self._callee(e, s)
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
        if empty is not None and (len(values) == 1 or (isinstance(e.func, ast.Name) and e.func.id == "zip")):
            return _Empty(empty.made, True), None
        if len(values) == 1 and isinstance(values[0], _ConstSeq):
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
