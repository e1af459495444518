"""MS215: a tensor-dependent `continue` in an unrolled loop forking compile-time constants."""

from __future__ import annotations

import ast
import operator
from collections.abc import Callable, Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode import abstract as av
from npu_lsp.rules.graphmode.abstract_eval import values
from npu_lsp.rules.graphmode.branch_type_mismatch import preceding_values
from npu_lsp.rules.graphmode.control import bindings
from npu_lsp.rules.graphmode.flow import analyzer
from npu_lsp.rules.graphmode.helpers import FUNCS, GraphRule
from npu_lsp.rules.graphmode.ranks import ranks
from npu_lsp.rules.graphmode.tensor_names import TENSOR_MAKERS
from npu_lsp.rules.graphmode.unrolled_loop_depth import UnrolledTurns, call_depth_limit

#: the tensor constructors and fills whose constant result MindSpore folds (`Tensor(1.0,
#: ms.float32)`, `ops.ones((), ms.float32)`): value given by the first argument, or fixed
_FILLS = {"mindspore.ops.ones": 1.0, "mindspore.ops.zeros": 0.0}

#: arithmetic on two Python numbers: folded, and equal results merge (measured)
_PY_OPS: dict[type[ast.operator], Callable[[float, float], float]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
}


class _Var:
    """A value known only at run time (or one not modelled): it never forks."""


class _Fresh:
    """A constant tensor MindSpore folds to a new value that never merges with another
    (each is its own object): the result of `-`, `/` or of `*` between two constant tensors."""


_VAR = _Var()
#: loops longer than this are left to MS137 (their turns alone pass the limit)
_MAX_TURNS = 2000
#: a value: a Python number (`float`), a foldable constant tensor that merges by value
#: (`("t", v)`), a `_Fresh` tensor, or `_VAR`
Value = object


def _number(v: object) -> Value:
    """A Python int or float constant as a number (bools and others: not followed)."""
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else _VAR


def _binop(op: ast.operator, a: Value, b: Value) -> Value:
    """Measured on 2.10 (written/heldout25b probes `fix25b_c_*` and direct runs): a constant
    tensor plus a number or a tensor, times a number, or negated, folds to a value that merges
    with an equal one; `-`, `/` and the product of two constant tensors fold to values that
    never merge; `ops.sqrt` and other calls are not followed."""
    if a is _VAR or b is _VAR:
        return _VAR
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        f = _PY_OPS.get(type(op))
        if f is None:
            return _VAR
        try:
            return f(a, b)
        except (ArithmeticError, ValueError):
            return _VAR
    if type(op) not in (ast.Add, ast.Sub, ast.Mult, ast.Div):
        return _VAR
    if isinstance(a, _Fresh) or isinstance(b, _Fresh):
        return _Fresh()
    both_tensors = isinstance(a, tuple) and isinstance(b, tuple)
    if type(op) is ast.Add or (type(op) is ast.Mult and not both_tensors):
        x = a[1] if isinstance(a, tuple) else a
        y = b[1] if isinstance(b, tuple) else b
        return ("t", x + y if type(op) is ast.Add else x * y)  # type: ignore[operator]
    return _Fresh()


class _Simulation:
    """The constants a loop carries, turn by turn, along the two paths of its tensor `continue`."""

    def __init__(self, loop: ast.For | ast.While, func: ast.AST, ctx: Context) -> None:
        self.loop, self.func, self.ctx = loop, func, ctx

    def value(self, e: ast.expr, env: dict[str, Value], depth: int = 0) -> Value:
        if depth > 20:
            return _VAR
        if isinstance(e, ast.Constant):
            return _number(e.value)
        if isinstance(e, ast.UnaryOp) and isinstance(e.op, (ast.USub, ast.UAdd)):
            inner = self.value(e.operand, env, depth + 1)
            if isinstance(e.op, ast.UAdd) or inner is _VAR:
                return inner
            if isinstance(inner, float):
                return -inner
            return ("t", -inner[1]) if isinstance(inner, tuple) else inner
        if isinstance(e, ast.BinOp):
            return _binop(e.op, self.value(e.left, env, depth + 1), self.value(e.right, env, depth + 1))
        if isinstance(e, ast.Name):
            if e.id in env:
                return env[e.id]
            return self._outer(e.id, depth)
        if isinstance(e, ast.Attribute) and isinstance(e.value, ast.Name) and e.value.id == "self":
            v = values(self.ctx).of(e, self.func)
            return _number(v.value) if isinstance(v, av.Scalar) and v.constant else _VAR
        if isinstance(e, ast.Call):
            return self._call(e, env, depth)
        return _VAR

    def _outer(self, name: str, depth: int) -> Value:
        """A name the loop does not bind: a local bound once, or a module constant."""
        bound = analyzer(self.ctx).single_assignment(name, self.func)
        if bound is None:
            binds = self.ctx.module_bindings().get(name, ())
            if len(binds) == 1 and type(binds[0]) is ast.Assign and len(binds[0].targets) == 1:
                bound = binds[0].value
        return self.value(bound, {}, depth + 1) if bound is not None else _VAR

    def _call(self, call: ast.Call, env: dict[str, Value], depth: int) -> Value:
        q = self.ctx.qualname(call.func) or ""
        if q in TENSOR_MAKERS and call.args and not isinstance(call.args[0], (ast.List, ast.Tuple)):
            v = self.value(call.args[0], env, depth + 1)
            return ("t", v) if isinstance(v, float) else _VAR
        if q in _FILLS and call.args and isinstance(call.args[0], (ast.Tuple, ast.Constant)):
            return ("t", _FILLS[q])
        return _VAR

    def run(self, block: list[ast.stmt], env: dict[str, Value]) -> dict[str, Value] | None:
        """`env` after `block`; None when a statement is not followed."""
        env = dict(env)
        for st in block:
            t = type(st)
            if t is ast.Assign and len(st.targets) == 1:  # type: ignore[attr-defined]
                target, value = st.targets[0], st.value  # type: ignore[attr-defined]
                if type(target) is ast.Name:
                    env[target.id] = self.value(value, env)
                    continue
                if type(target) in (ast.Tuple, ast.List) and type(value) in (ast.Tuple, ast.List):
                    names, items = target.elts, value.elts
                    if len(names) == len(items) and all(type(n) is ast.Name for n in names):
                        new = [self.value(v, env) for v in items]
                        env.update({n.id: v for n, v in zip(names, new, strict=True)})
                        continue
            elif t is ast.AugAssign and type(st.target) is ast.Name:  # type: ignore[attr-defined]
                name = st.target.id  # type: ignore[attr-defined]
                env[name] = _binop(st.op, env.get(name, _VAR), self.value(st.value, env))  # type: ignore[attr-defined]
                continue
            elif t in (ast.Expr, ast.Pass):
                continue
            # anything else (a branch, a loop, unpacking): what it binds is not followed
            for name in bindings([st]):
                env[name] = _VAR
        return env


@rule(code="MS215", name="constant-forked-by-continue", severity="error", family="graphmode")
class ConstantForkedByContinue(GraphRule):
    """## What it does
    Flags a loop MindSpore unrolls (a `for` over a constant `range`, tuple or list, a `while`
    on a Python int counter) whose body skips the rest of a turn with `continue` under a
    tensor-dependent `if`, while it carries a compile-time constant that the two paths leave
    with different values: a constant tensor (`p = Tensor(1.0, ms.float32)`, `ops.ones(())`)
    that the turn updates with `-`, `/` or a product of two constant tensors (`g = p / (p +
    r)`, `p = (1 - g) * p`), or a Python number (or such a tensor) updated both before the
    `if` and after it so that the order of the paths matters (`p = p + q` then `p = p *
    0.5`).

    ## Why is this bad?
    A `continue` under a tensor-dependent `if` makes each turn call the next one from two
    places, and MindSpore specialises the rest of the loop for the constants each call
    passes. Equal Python numbers, and constant tensors folded by `+`, by `*` with a number or
    by negation, share a specialisation; values that differ, and constant tensors folded by
    `-`, `/` or a tensor product (each a new object), do not, so the specialisations double
    with every turn. Past about 2^9 of them MindSpore 2.10 stops with `RuntimeError: Exceed
    function call depth limit 1000` at every syntax level (a Kalman filter that starts its
    covariance as `Tensor(1.0)` and gates outliers with `continue` over 10 samples). An
    `if`/`else` instead of the `continue`, or a `break`, joins the paths and compiles.

    ## Example
    ```python
    def construct(self, zs):
        x, p = zs[0], Tensor(1.0, ms.float32)
        for k in range(10):
            if ops.abs(zs[k] - x) > 1.0:
                continue
            g = p / (p + 0.1)
            x = x + g * (zs[k] - x)
            p = (1 - g) * p
        return x
    ```

    ## Use instead
    Keep the update in the `if` (the paths then join), or start the carried value from the
    input so that it is not a constant:
    ```python
    def construct(self, zs):
        x, p = zs[0], Tensor(1.0, ms.float32)
        for k in range(10):
            if ops.abs(zs[k] - x) <= 1.0:
                g = p / (p + 0.1)
                x = x + g * (zs[k] - x)
                p = (1 - g) * p
        return x
    ```

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 1 (rejected at every level); MS137 counts the turns of such loops.
    - Measured on MindSpore 2.10 with the written/heldout25b probes `fix25b_c_*` (cases
      `r2_kf_continue_on_tensor_list_out`, `kf_gain_clamp_and_skip_nan`): `p / (p + 0.1)`
      fails from 9 turns on and compiles at 8; `p * 0.5`, `p + 0.1`, `-p`, `ops.sqrt(p)`
      compile at 10 and 12 turns, `p - 0.1`, `p / 2.0`, `p * p` fail at 10; a Python float
      updated only after the `if` compiles at 12 turns, updated before and after it fails at
      10; a carried value computed from the input, an `if`/`else`, a `break` compile.
    """

    nodes = (ast.For, ast.While)

    def applies(self, ctx: Context) -> bool:
        # once per file: a file without `continue` has nothing to fork
        return ctx.mentions("continue")

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        # not a generator itself: most loops have no `continue`
        if ctx.function is None or ctx.scope is None:
            return ()
        assert isinstance(node, (ast.For, ast.While))
        found = _forking_continue(node, ctx)
        if found is None:
            return ()
        return self._check(node, found, ctx)

    def _check(self, loop: ast.For | ast.While, gate: ast.If, ctx: Context) -> Iterable[Diagnostic]:
        func = ctx.function
        assert func is not None
        if not analyzer(ctx).kind(gate.test).dynamic:
            return
        walker = UnrolledTurns(func, ctx, [], fold=False)  # type: ignore[arg-type]
        turns = _turn_values(loop, walker, ctx)
        limit = call_depth_limit(ctx)
        if turns is None or limit is None or len(turns) < 2:
            return
        carried = _carried(loop)
        if not carried:
            return
        sim = _Simulation(loop, func, ctx)
        before = preceding_values(loop, ctx, carried, func)
        entry = {n: sim.value(before[n], {}) if n in before else _VAR for n in sorted(carried)}
        if all(v is _VAR for v in entry.values()):
            return
        at = loop.body.index(gate)
        pre, post = loop.body[:at], gate.orelse + loop.body[at + 1 :]
        skipped = gate.body[:-1]
        target = loop.target.id if isinstance(loop, ast.For) and isinstance(loop.target, ast.Name) else None
        states: dict[object, dict[str, Value]] = {_key(entry): entry}
        total = widest = 1
        forked: set[str] = set()
        for turn in turns:
            following: dict[object, dict[str, Value]] = {}
            for env in states.values():
                env = dict(env)
                if target is not None:
                    env[target] = turn
                start = sim.run(pre, env)
                if start is None:
                    return
                for path in (skipped, post):
                    out = sim.run(path, start)
                    if out is None:
                        return
                    kept = {n: out.get(n, _VAR) for n in entry}
                    following.setdefault(_key(kept), kept)
            if len(following) > len(states):
                forked.update(n for n in entry if len({_key({n: s[n]}) for s in following.values()}) > 1)
            states = following
            total += len(states)
            widest = max(widest, len(states))
            if total > limit:
                break
        # only a doubling fork is measured (2^k specialisations at turn k); a loop long enough
        # to pass the limit with few of them per turn is MS137's (its depth is the turns')
        if total <= limit or widest * 4 <= limit:
            return
        names = ", ".join(f"`{n}`" for n in sorted(forked)) or "the carried constants"
        yield ctx.diagnostic(
            self,
            ctx.head_span(gate),
            f"this tensor-dependent `continue` makes MindSpore specialise the rest of the unrolled loop for each value of "
            f"{names}, compile-time constants the two paths leave different: the specialisations double every turn and "
            f"pass its call-depth limit {limit} within {len(turns)} turns (Exceed function call depth limit); put the "
            "update in an `if`/`else` instead of the `continue`, or start the value from the input",
        )


def _key(env: dict[str, Value]) -> object:
    """What makes two states one specialisation: equal numbers and mergeable tensors, the
    same fresh tensor object, or both run-time values."""
    return tuple((n, v if isinstance(v, (float, tuple)) else id(v)) for n, v in sorted(env.items()))


def _forking_continue(loop: ast.For | ast.While, ctx: Context) -> ast.If | None:
    """The one `if ...: continue` directly in the loop's body (the `continue` last in its
    body), when the loop has no other `continue`, no `break` and no `return`."""
    if loop.orelse:
        return None
    gate: ast.If | None = None
    for st in loop.body:
        if type(st) is ast.If and st.body and type(st.body[-1]) is ast.Continue:
            if gate is not None:
                return None
            gate = st
    if gate is None:
        return None
    todo: list[ast.AST] = [*loop.body]
    while todo:
        n = todo.pop()
        if isinstance(n, (ast.Break, ast.Return)) or (isinstance(n, ast.Continue) and n is not gate.body[-1]):
            return None
        if isinstance(n, (*FUNCS, ast.Lambda, ast.ClassDef)):
            continue
        if isinstance(n, (ast.For, ast.While)):
            todo.extend(r for r in ast.walk(n) if isinstance(r, ast.Return))
            continue
        todo.extend(c for c in ast.iter_child_nodes(n) if isinstance(c, ast.stmt))
    return gate


def _turn_values(loop: ast.For | ast.While, walker: UnrolledTurns, ctx: Context) -> list[Value] | None:
    """The value of the loop variable on each unrolled turn (`_VAR` when not a number);
    None when MindSpore does not unroll the loop or the count is unknown."""
    if isinstance(loop, ast.While):
        n = walker.turns(loop)
        return [_VAR] * n if n is not None and n <= _MAX_TURNS else None
    it = loop.iter
    if isinstance(it, (ast.Tuple, ast.List)):
        if any(isinstance(e, ast.Starred) for e in it.elts):
            return None
        out: list[Value] = []
        for e in it.elts:
            out.append(_number(e.value) if isinstance(e, ast.Constant) else _VAR)
        return out
    if isinstance(it, ast.Call) and ctx.qualname(it.func) == "builtins.range" and not it.keywords:
        bounds = [walker._int(a) for a in it.args]
        if len(bounds) == 1 and bounds[0] is None:
            bounds = [_static_size(it.args[0], ctx)]
        if any(b is None for b in bounds) or not 1 <= len(bounds) <= 3 or (len(bounds) == 3 and bounds[2] == 0):
            return None
        span = range(*bounds)  # type: ignore[arg-type]
        return [float(i) for i in span] if len(span) <= _MAX_TURNS else None
    return None


def _static_size(e: ast.expr, ctx: Context) -> int | None:
    """`x.shape[i]` (or `len(x)`) of a tensor whose shape every call of the function gives
    it (`ranks`: the inputs the program builds, `Tensor(np.linspace(0, 3, 10))`): the graph
    is compiled for that shape, so the loop unrolls that many turns. The least of them when
    the calls differ; None when one is unknown."""
    func = ctx.function
    if func is None:
        return None
    if isinstance(e, ast.Subscript) and isinstance(e.value, ast.Attribute) and e.value.attr == "shape":
        tensor, at = e.value.value, e.slice
    elif isinstance(e, ast.Call) and ctx.qualname(e.func) == "builtins.len" and len(e.args) == 1:
        tensor, at = e.args[0], ast.Constant(0)
    else:
        return None
    if not (isinstance(at, ast.Constant) and type(at.value) is int):
        return None
    sizes: list[int] = []
    for shape in ranks(ctx).value_at(tensor, func):
        if not isinstance(shape, tuple) or not -len(shape) <= at.value < len(shape):
            return None
        dim = shape[at.value]
        if dim is None:
            return None
        sizes.append(dim)
    return min(sizes) if sizes else None


def _carried(loop: ast.For | ast.While) -> set[str]:
    """Names the loop's body binds and reads before binding them on a turn: the values one
    turn hands to the next."""
    bound = bindings(loop.body)
    assigned: set[str] = set()
    carried: set[str] = set()
    for st in loop.body:
        reads = {n.id for n in ast.walk(st) if type(n) is ast.Name and type(n.ctx) is ast.Load}
        if type(st) is ast.AugAssign and type(st.target) is ast.Name:
            reads.add(st.target.id)
        carried |= (reads & bound) - assigned
        if type(st) is ast.Assign:
            for t in st.targets:
                assigned |= {n.id for n in ast.walk(t) if type(n) is ast.Name}
        elif type(st) is ast.AugAssign and type(st.target) is ast.Name:
            assigned.add(st.target.id)
    if isinstance(loop, ast.For):
        carried -= {n.id for n in ast.walk(loop.target) if type(n) is ast.Name}
    return carried
