"""MS158: (STRICT) a compiled entry returns a tuple holding `None`, and Python unpacks it."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode import abstract as av
from npu_lsp.rules.graphmode.abstract_eval import values
from npu_lsp.rules.graphmode.entries import entry_callers
from npu_lsp.rules.graphmode.flow import UNPACK_AT, analyzer
from npu_lsp.rules.graphmode.helpers import GraphRule, is_root_body, own_nodes
from npu_lsp.rules.graphmode.values import in_dead_branch, instances
from npu_lsp.scope import module_statements


@rule(code="MS158", name="none-in-strict-output", severity="error", family="graphmode")
class NoneInStrictOutput(GraphRule):
    """## What it does
    Under the STRICT syntax level, flags a `return` of a tuple or list with a `None` element
    (`return out, None`) in a jit function or a `construct` that Python calls directly, when
    the module unpacks that call into as many names (`out, weights = attn(x)`). The element
    may be nested (`return out, (None, out)` unpacked by `a, (b, c) = net(x)`) or a name
    bound to None (`past = None`, or `attn_weights = None` under `if not
    output_attentions:` when that call leaves the flag at its default False). A sub-cell's
    call returned whole (`return self.inner(x)`) counts with the tuple every kept `return`
    of the sub-cell's `construct` gives (`return y, None`). A `return` the unpacked call never
    reaches is left alone: after `if keep: return x, tuple(hs)` with `keep=True` by default
    and the call leaving it, MindSpore folds the `if` and compiles nothing after it.

    Also, without such an unpacking, a `return` of the top compiled function (the
    `construct` of a network plain code builds and calls, or a jit function no other
    function of the file calls) whose tuple or list holds the literal `None`, nested too
    (`return x, None`, `return None, x`, `return x, (None, x)`), when that function itself
    branches or loops on a value known only at run time (`if x.sum() > 0:`, a `while` on a
    tensor, `if row.sum() > 0:` in `for row in x`, a conditional expression on a tensor, an
    `assert` on a tensor, a test on `ms.mutable(2)`), there or in a sub-cell, method or
    helper it calls. A `construct` compiled by `ms.jit(net.construct)` or `ms.jit(net)` is
    such a top function too. A conditional expression does not count when MindSpore folds
    its value: both sides give the same constant (`x.shape if x.mean() >= 0 else (2, 3)` of
    a `(2, 3)` `x`), every read of the name it is bound to picks an item both sides give
    alike (`y1[0]` of `x.shape` / `(2, 5)`), or nothing reads it. An `if` statement counts
    even then.

    ## Why is this bad?
    A STRICT graph's output drops its `None` elements: `(out, None)` comes back to Python as a
    tuple of one, and the unpacking fails with `ValueError: not enough values to unpack
    (expected 2, got 1)`. And once the graph has a branch it does not fold while
    compiling, the `None` element has no device value and compiling stops: `RuntimeError:
    Invalid abstract;AbstractNone(Value: None) for node:ValueNode<None> None`. The default LAX level returns `(out, None)` as written. A sub-cell
    returning `(y, None)` to another `construct` is not affected, nor is indexing the result
    (`net(x)[0]`).

    ## Example
    ```python
    class Attention(nn.Cell):
        def construct(self, x, need_weights=False):
            w = ops.softmax(ops.bmm(x, x.transpose(0, 2, 1)), axis=-1)
            if need_weights:
                return ops.bmm(w, x), w
            return ops.bmm(w, x), None

    out, w = Attention()(x)
    ```

    ## Use instead
    Return only what exists, or a placeholder tensor:
    ```python
    class Attention(nn.Cell):
        def construct(self, x):
            w = ops.softmax(ops.bmm(x, x.transpose(0, 2, 1)), axis=-1)
            return ops.bmm(w, x)

    out = Attention()(x)
    ```

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 2 (STRICT only); measured on MindSpore 2.10 with the written set
      `ported` (`self_attention_returns_none_weights`) and probes: `(x, None)` and
      `(None, x)` from a Cell, `(x, None, y)` into three names, a jit function's `(x, None)`
      and a `None` left in a variable are rejected under STRICT; `net(x)[0]`, `len(...)` and a
      sub-cell's `(y, None)` unpacked in `construct` compile.
    - MindSpore 2.10, measured (written/heldout18b probes `st19n_*`): `return x, None`,
      `return None, x` and `return x, (None, x)` after `if x.sum() > 0:`, after a `while`
      breaking on a tensor, after `if row.sum() > 0:` in `for row in x`, and after a helper
      with a tensor `if`, are rejected under STRICT ("Invalid abstract;AbstractNone") and
      compile under LAX; `return x, None` after `if x.shape[0] > 1:` or with no branch, and
      `return None` after a tensor `if`, compile. Difftest store seeds 9900173, 9970107,
      9990184, 10600046; v5 seed 11000163 and written/heldout18b probes `st23_nn_*`: the
      branch may sit in a sub-cell, method or helper the top function calls, and may be a
      conditional expression.
    - MindSpore 2.10, measured (written/heldout26a probes `fix26c_none_*`): lists and
      nested tuples lose their `None` too; a name bound to None (also on the side of an
      `if` on a constant attribute or a flag argument that the call leaves False) is
      dropped like the literal; a parameter the call gives a tensor is kept.
    - MindSpore 2.10, measured (written/lax probes `fix30c_nn_*`): `assert x.abs().max() <
      1e6` (in the top function, a helper, or under `if x.ndim == 2:`) and `n =
      ms.mutable(2); if n > 1:` (in the top function, a helper or a nested `@ms.jit`
      function) make `return x, None` fail under STRICT like a tensor `if`; `assert
      x.shape[0] == 2` does not; `ms.jit(net.construct)` (also inside a function) and
      `ms.jit(net)` of a `construct` with a tensor `if` fail, without the `if` they compile.
    - MindSpore 2.10, measured (written/lax probes `genfresh32_nn_*`, fresh v5 seed
      11900112): a conditional expression on a tensor whose value is folded (the same
      constant on both sides, an item both sides give alike, or an unread name), also in a
      sub-cell, leaves `return x, None` compiling under STRICT; other constants on the sides
      (`(4, 5)`, `2 if ... else 3`) fail, and so does an `if` statement binding 2 (or 0.5)
      on both sides.
      Difftest seeds 9900173, 9970107, 10500069, 10600046, 11200175.
    - MindSpore 2.10, measured (written/heldout35a case
      `conformer_encoder_layer_returns_none_cache`, probes `fix35f_none_inst_*`): the `if`
      that binds the name is folded for the one instance the unpacked call runs, also when
      the file builds others that differ (`self.conv = nn.Dense(d, d) if use_conv else
      None`, `if self.conv is not None: cache = ...`): `Layer()(x)` or `net = Layer(8,
      False); net(x)` fails even after a `Layer(use_conv=True)(x)` that compiles.
    """

    nodes = (ast.Return,)
    strict_only = True

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        assert isinstance(node, ast.Return)
        value = node.value
        if type(value) is ast.Call:
            yield from self._sub_cell_result_returned(node, value, ctx)
            return
        if not isinstance(value, (ast.Tuple, ast.List)):
            return
        scope = ctx.scope
        if scope is None or scope.kind not in ("jit", "construct") or not is_root_body(node, ctx):
            return
        func = ctx.function
        if not isinstance(func, ast.FunctionDef):
            return
        literal = _holds_none(value)
        if not literal and not any(type(e) in (ast.Name, ast.Tuple, ast.List) for e in value.elts):
            return
        site = _unpacked_call(func, scope.kind, value, ctx, node)
        if site is None:
            if not literal:
                return
            flow = _runtime_branch(func, ctx) if is_outermost_compiled(func, scope.kind, ctx) else None
            if flow is not None:
                yield ctx.diagnostic(
                    self,
                    node,
                    f"under STRICT, `{func.name}` is the top graph and compiles a branch on a run-time value "
                    f"(line {flow.lineno}), so the `None` in its output has no value "
                    f"(MindSpore: Invalid abstract;AbstractNone(Value: None) for node:ValueNode<None>); "
                    f"return only tensors, or a placeholder tensor",
                )
            return
        unpacking, shown, kept = site
        yield ctx.diagnostic(
            self,
            node,
            f"under STRICT the graph output drops `None`: `{ctx.segment(shown)}` reaches Python with {kept} item(s), and line {unpacking.lineno} unpacks it into {len(shown.elts)} (ValueError: not enough values to unpack)",
        )


    def _sub_cell_result_returned(self, node: ast.Return, call: ast.Call, ctx: Context) -> Iterable[Diagnostic]:
        """`return self.inner(x)` in the top `construct`: the sub-cell's `(y, None)` is the
        graph's output as it is, and STRICT drops its `None` as from a display written here
        (measured, written/heldout34c probe `fix34f_none_sub_result_returned_whole`: "not
        enough values to unpack (expected 2, got 1)")."""
        f = call.func
        if not (type(f) is ast.Attribute and type(f.value) is ast.Name and f.value.id == "self"):
            return
        scope, func = ctx.scope, ctx.function
        if scope is None or scope.kind != "construct" or not isinstance(func, ast.FunctionDef) or not is_root_body(node, ctx):
            return
        owner = analyzer(ctx).owner_class(func)
        sub = _sub_cell_class(owner, f.attr, ctx) if owner is not None else None
        display = _constant_none_display(sub, ctx) if sub is not None else None
        if display is None:
            return
        callers = entry_callers(func, scope.kind, ctx)
        if callers is None:
            return
        kept = sum(not (type(e) is ast.Constant and e.value is None) for e in display.elts)
        for st in module_statements(ctx.tree):
            if not (isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.value, ast.Call)):
                continue
            target = st.targets[0]
            if isinstance(target, (ast.Tuple, ast.List)) and len(target.elts) == len(display.elts) and callers.calls(st.value):
                yield ctx.diagnostic(
                    self,
                    node,
                    f"under STRICT the graph output drops `None`: `{ctx.segment(call)}` returns `{ast.unparse(display)}` "
                    f"(line {display.lineno}), which reaches Python with {kept} item(s), and line {st.lineno} unpacks it "
                    f"into {len(display.elts)} (ValueError: not enough values to unpack)",
                )
                return


def _constant_none_display(sub: ast.ClassDef, ctx: Context) -> ast.Tuple | None:
    """The tuple display every `return` of `sub.construct` MindSpore keeps gives, when they
    all have one length and a literal `None` at the same places (at least one): the first
    such display, else None."""
    construct = next((m for m in sub.body if type(m) is ast.FunctionDef and m.name == "construct"), None)
    if construct is None:
        return None
    kept = [r for r in own_nodes(construct) if type(r) is ast.Return and not in_dead_branch(ctx, construct, ctx.span(r))]
    shapes = set()
    for r in kept:
        if type(r.value) is not ast.Tuple or any(type(x) is ast.Starred for x in r.value.elts):
            return None
        shapes.add(tuple(type(x) is ast.Constant and x.value is None for x in r.value.elts))
    if len(shapes) != 1:
        return None
    (nones,) = shapes
    first = kept[0].value
    return first if any(nones) and type(first) is ast.Tuple else None


def _unpacked_call(
    func: ast.FunctionDef, kind: str, value: ast.Tuple | ast.List, ctx: Context, ret: ast.Return | None = None
) -> tuple[ast.Assign, ast.Tuple | ast.List, int] | None:
    """A module-level `a, b = entry(...)` (also nested, `a, (b, c) = ...`), calling this jit
    function or a module-level instance of the Cell whose `construct` this is (or
    `Cls(...)(...)`), whose names match the returned display `value` only while its `None`
    items are kept: (the assignment, the display losing items, how many it keeps).
    Measured (written/heldout26a probes `fix26c_none_*`): STRICT drops `None` from a
    returned tuple or list, nested ones too, and from a name bound to None (`past = None;
    return out, w, past`)."""
    callers = entry_callers(func, kind, ctx)
    if callers is None:
        return None
    for st in module_statements(ctx.tree):
        if not (isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.value, ast.Call)):
            continue
        target = st.targets[0]
        if not isinstance(target, (ast.Tuple, ast.List)) or not callers.calls(st.value):
            continue
        if ret is not None and _dead_for_call(ret, func, st.value, ctx):
            continue
        lost = _short(target, value, func, ctx, st.value)
        if lost is not None:
            return st, *lost
    return None


def _dead_for_call(ret: ast.Return, func: ast.FunctionDef, call: ast.Call, ctx: Context) -> bool:
    """Is the `return` never reached by `call`, because a root statement before it is an `if`
    on an argument the call gives a constant (a flag left at its default) whose side taken
    always returns? MindSpore folds that `if` and compiles nothing after it (measured,
    written/heldout37b case `textenc_hidden_states_list_append` and probes `fix37d_dr_*`:
    `if keep: return x, tuple(hs)` then `return x, None` compiles under STRICT when `keep`
    defaults to True and the call leaves it; given False, the `None` is dropped and the
    unpacking fails)."""
    env = values(ctx).call_env(call, func, None)
    site = _instance_site(call, ctx)
    if not env and site is None:
        return False
    for st in func.body:
        if st.lineno <= ret.lineno <= (st.end_lineno or st.lineno):
            return False  # reached the statement holding the `return`
        if type(st) is not ast.If:
            continue
        truth = _test_in_env(st.test, env, func, ctx, site)
        if truth is not None and _always_returns(st.body if truth else st.orelse):
            return True
    return False


def _always_returns(block: list[ast.stmt]) -> bool:
    """Does every path through `block` end in a `return` or a `raise`?"""
    if not block:
        return False
    last = block[-1]
    if type(last) in (ast.Return, ast.Raise):
        return True
    return type(last) is ast.If and _always_returns(last.body) and _always_returns(last.orelse)


def _short(
    target: ast.Tuple | ast.List,
    value: ast.Tuple | ast.List,
    func: ast.FunctionDef,
    ctx: Context,
    call: ast.Call,
    depth: int = 0,
) -> tuple[ast.Tuple | ast.List, int] | None:
    """The display (`value` or one nested in it) that the unpacking `target` takes apart into
    as many names as it has items, while STRICT hands back fewer (its `None` items dropped)."""
    if depth > 3 or len(target.elts) != len(value.elts) or any(isinstance(e, ast.Starred) for e in (*target.elts, *value.elts)):
        return None
    nones = sum(_is_none(e, func, ctx, call) for e in value.elts)
    if nones:
        return value, len(value.elts) - nones
    for t, v in zip(target.elts, value.elts, strict=True):
        if isinstance(t, (ast.Tuple, ast.List)) and isinstance(v, (ast.Tuple, ast.List)):
            found = _short(t, v, func, ctx, call, depth + 1)
            if found is not None:
                return found
    return None


def _is_none(e: ast.expr, func: ast.FunctionDef, ctx: Context, call: ast.Call) -> bool:
    """`None`, or a local name every path to this read binds to None (`past = None`), also
    once the `if`s on arguments that `call` gives constants are folded (`if not
    output_attentions: attn_weights = None` for `sa(x)`, the flag False by default)."""
    if isinstance(e, ast.Constant):
        return e.value is None
    if not isinstance(e, ast.Name):
        return False
    if isinstance(values(ctx).reaching(e, func), av.NoneValue):
        return True
    if _none_from_sub_cell(e, func, ctx):
        return True
    env = values(ctx).call_env(call, func, None)
    site = _instance_site(call, ctx)
    return (bool(env) or site is not None) and _bound_none(func.body, e, env, func, ctx, site) is True


def _instance_site(call: ast.Call, ctx: Context) -> ast.Call | None:
    """The `Cls(...)` that built the instance `call` calls: `Cls(...)(x)`, or `net(x)` with
    `net = Cls(...)` bound once at module level; None for a jit function or anything else."""
    f = call.func
    if type(f) is ast.Call and type(f.func) is ast.Name:
        return f
    if type(f) is not ast.Name:
        return None
    built = [
        st.value
        for st in module_statements(ctx.tree)
        if isinstance(st, (ast.Assign, ast.AnnAssign, ast.AugAssign))
        and any(type(t) is ast.Name and t.id == f.id for t in (st.targets if isinstance(st, ast.Assign) else [st.target]))
    ]
    if len(built) == 1 and type(built[0]) is ast.Call and type(built[0].func) is ast.Name:
        return built[0]
    return None


def _bound_none(
    block: list[ast.stmt],
    name: ast.Name,
    env: dict[str, av.Value],
    func: ast.FunctionDef,
    ctx: Context,
    site: ast.Call | None = None,
) -> bool | None:
    """Does the last binding of `name` before it is read (in `block`, root statements and the
    sides of `if`s folded with `env`) bind None? None when `block` binds it nowhere before."""
    before = [st for st in block if st.lineno < name.lineno]
    for st in reversed(before):
        if not any(isinstance(n, ast.Name) and n.id == name.id and isinstance(n.ctx, ast.Store) for n in ast.walk(st)):
            continue
        if isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name):
            return isinstance(st.value, ast.Constant) and st.value.value is None
        if not isinstance(st, ast.If):
            return False
        truth = _test_in_env(st.test, env, func, ctx, site)
        if truth is None:
            return False
        found = _bound_none(st.body if truth else st.orelse, name, env, func, ctx, site)
        if found is not None:
            return found
    return None


def _test_in_env(
    test: ast.expr, env: dict[str, av.Value], func: ast.FunctionDef, ctx: Context, site: ast.Call | None = None
) -> bool | None:
    """The truth of an `if` test on a parameter the call gives a constant (`flag`, `not
    flag`, `p is None`, `p is not None`), or one folded anyway; else None."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = _test_in_env(test.operand, env, func, ctx, site)
        return None if inner is None else not inner
    if isinstance(test, ast.Name) and test.id in env and analyzer(ctx).first_binding_line(test.id, func) is None:
        v = env[test.id]
        if isinstance(v, av.NoneValue):
            return False
        if isinstance(v, av.Scalar) and v.constant:
            return bool(v.value)
        return None
    if (
        isinstance(test, ast.Compare)
        and len(test.ops) == 1
        and isinstance(test.ops[0], (ast.Is, ast.IsNot))
        and isinstance(test.left, ast.Name)
        and isinstance(test.comparators[0], ast.Constant)
        and test.comparators[0].value is None
        and test.left.id in env
        and analyzer(ctx).first_binding_line(test.left.id, func) is None
    ):
        v = env[test.left.id]
        if not v.known:
            return None
        is_none = isinstance(v, av.NoneValue)
        return is_none if isinstance(test.ops[0], ast.Is) else not is_none
    from npu_lsp.rules.graphmode.values import UNKNOWN, instances

    inst = instances(ctx)
    got = inst.evaluate(test, func)
    if got is UNKNOWN and site is not None:
        # the instances of the file disagree (`self.conv` a layer or None by a constructor
        # flag): the one the unpacked call runs decides
        got = inst.evaluate_for_instance(test, func, site)
    return None if got is UNKNOWN else bool(got)


def _runtime_branch(fn: ast.FunctionDef, ctx: Context) -> ast.stmt | ast.expr | None:
    """The first `if` / `while` / conditional expression whose test is known only at run time,
    in `fn` or in what it compiles with it (a sub-cell's `construct`, a method, a helper,
    followed a few calls deep): MindSpore inlines them into the top graph, whose output then
    passes a switch (measured, difftest seed 11000163 and written/heldout18b probes
    `st23_nn_*`: `x * (1.0 if x.sum() > 0 else 0.5)` or `if x.sum() > 0:` in a sub-cell, then
    `return x, None`, "Invalid abstract;AbstractNone"; a test on a shape compiles)."""
    a = analyzer(ctx)
    vals = values(ctx)
    todo: list[tuple[ast.FunctionDef, int]] = [(fn, 0)]
    seen = {id(fn)}
    while todo:
        f, depth = todo.pop(0)
        calls: list[ast.Call] = []
        for n in own_nodes(f):
            t = type(n)
            if (
                (t is ast.If or t is ast.While or t is ast.IfExp or t is ast.Assert)
                and (
                    a.kind(n.test, f).dynamic  # type: ignore[attr-defined]
                    or _reduces_host_scalars(n.test, f, ctx)  # type: ignore[attr-defined]
                    or _reads_mutable_scalar(n.test, f, ctx)  # type: ignore[attr-defined]
                )
                and not (t is ast.IfExp and _ifexp_folded(n, f, ctx))  # type: ignore[arg-type]
            ):
                return n  # type: ignore[return-value]
            if t is ast.Call and depth < 3:
                calls.append(n)  # type: ignore[arg-type]
        for c in calls:
            callee = vals.callee(c, f)
            if callee is not None and id(callee) not in seen:
                seen.add(id(callee))
                todo.append((callee, depth + 1))
    return None


#: an expression whose value MindSpore does not know while compiling
_NOT_CONSTANT = object()


def _ifexp_folded(n: ast.IfExp, f: ast.FunctionDef, ctx: Context) -> bool:
    """Does no run-time switch of the conditional expression `n` reach the graph? Unlike an
    `if` statement, whose continuation is a graph both sides call, a conditional expression is
    a value: when both sides give the same constant, or every read of the name it is bound to
    picks an item both sides give alike, or nothing reads it, MindSpore folds the reads and
    drops the switch (measured, written/lax probes `genfresh32_nn_*`: `y1 = x.shape if x.mean()
    >= 0 else (2, 3)` or `(2, 5)`, then `x + y1[0]`; `2 if ... else 2`; an unread `y1 = x * 2
    if ... else x`; then `return x, None` compiles under STRICT, while `(4, 5)`, `2 if ... else
    3` and an `if` statement binding 2 on both sides fail: "Invalid abstract;AbstractNone";
    fresh v5 seed 11900112)."""
    body, orelse = _constant(n.body, f, ctx), _constant(n.orelse, f, ctx)
    if _same(body, orelse):
        return True
    up = ctx.parent(n)
    if not (type(up) is ast.Assign and len(up.targets) == 1 and type(up.targets[0]) is ast.Name):
        return False
    name = up.targets[0].id
    for m in own_nodes(f):
        if type(m) is not ast.Name or m.id != name or type(m.ctx) is not ast.Load:
            continue
        read = ctx.parent(m)
        if not (type(read) is ast.Subscript and read.value is m and type(read.slice) is ast.Constant):
            return False
        i = read.slice.value
        if not (type(i) is int and type(body) is tuple and type(orelse) is tuple):
            return False
        if not (-len(body) <= i < len(body) and -len(orelse) <= i < len(orelse) and _same(body[i], orelse[i])):
            return False
    return True


def _constant(e: ast.expr, f: ast.FunctionDef, ctx: Context) -> object:
    """The value of `e` MindSpore knows while compiling `f` (the same in every call of it): a
    literal, a tuple of such values (an item may be `_NOT_CONSTANT`), a tensor's `shape` of
    known dims, an int the shapes model knows (`x.shape[0]`, `x.ndim`), a folded constant."""
    t = type(e)
    if t is ast.Constant:
        return e.value  # type: ignore[attr-defined]
    if t is ast.Tuple:
        return tuple(_constant(x, f, ctx) for x in e.elts)  # type: ignore[attr-defined]
    from npu_lsp.rules.graphmode.ranks import ranks

    if t is ast.Attribute and e.attr == "shape":  # type: ignore[attr-defined]
        shapes = ranks(ctx).value_at(e.value, f)  # type: ignore[attr-defined]
        first = shapes[0] if shapes else None
        if type(first) is tuple and all(type(d) is int for d in first) and all(s == first for s in shapes):
            return first
        return _NOT_CONSTANT
    got = ranks(ctx).value_at(e, f)
    if got and type(got[0]) is int and all(type(v) is int and v == got[0] for v in got):
        return got[0]
    return _NOT_CONSTANT


def _same(a: object, b: object) -> bool:
    """Are `a` and `b` one constant, of one type all through (MindSpore joins them into it)?"""
    if type(a) is not type(b) or a is _NOT_CONSTANT:
        return False
    if type(a) is tuple and type(b) is tuple:
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def _reads_mutable_scalar(test: ast.expr, fn: ast.FunctionDef, ctx: Context) -> bool:
    """Does `test` read a name `fn` binds once to `ms.mutable(<number>)`? The flow model keeps
    such a number a constant (`range(ms.mutable(2))` compiles), but a test on it is decided at
    run time: STRICT then compiles both sides (measured, written/lax probes
    `fix30c_nn_mutable_*`: `n = ms.mutable(2); if n > 1:` in the top `@ms.jit` function, a
    helper or a nested `@ms.jit` function, then `return x, None`: "Invalid
    abstract;AbstractNone"; difftest seed 9900173)."""
    a = analyzer(ctx)
    for n in ast.walk(test):
        if type(n) is not ast.Name:
            continue
        bound = a.single_assignment(n.id, fn)
        if (
            type(bound) is ast.Call
            and len(bound.args) == 1
            and type(bound.args[0]) is ast.Constant
            and ctx.qualname(bound.func) in ("mindspore.mutable", "mindspore.common.mutable")
        ):
            return True
    return False


def _reduces_host_scalars(test: ast.expr, fn: ast.FunctionDef, ctx: Context) -> bool:
    """Does `test` read `max` / `min` / `sum` of a comprehension converting a tensor's items
    to Python scalars (`vals = [float(v) for v in x[0]]`, then `max(vals) > 0`), inline or
    through a name bound once? Its items are run-time scalars under STRICT, so the test is
    decided at run time (difftest seed 11000163); the flow model leaves such a list unknown."""
    a = analyzer(ctx)
    for c in ast.walk(test):
        if not (type(c) is ast.Call and type(c.func) is ast.Name and c.func.id in ("max", "min", "sum") and len(c.args) == 1):
            continue
        if ctx.qualname(c.func) != f"builtins.{c.func.id}":
            continue
        arg: ast.expr | None = c.args[0]
        if type(arg) is ast.Name:
            arg = a.single_assignment(arg.id, fn)
        if type(arg) in (ast.ListComp, ast.GeneratorExp) and a._host_scalars_of_elements(
            arg,  # type: ignore[arg-type]
            a._indexed(a._fn(fn)),
        ):
            return True
    return False


def _holds_none(e: ast.expr) -> bool:
    for elt in e.elts:  # type: ignore[attr-defined]
        if isinstance(elt, ast.Constant) and elt.value is None:
            return True
        if isinstance(elt, (ast.Tuple, ast.List)) and _holds_none(elt):
            return True
    return False


def is_outermost_compiled(fn: ast.FunctionDef, kind: str, ctx: Context) -> bool:
    """Is `fn` the outermost compiled function? A `construct` counts when its class is
    named nowhere in another class (no sub-cell, no base) and plain code binds or calls an
    instance directly (`net = Net()`, `Net()(x)`); a jit function when no other function of
    the file calls it."""
    tree = ctx.tree
    if kind == "construct" or (kind == "jit" and fn.name == "construct" and isinstance(ctx.parent(fn), ast.ClassDef)):
        # `ms.jit(net.construct)` / `ms.jit(net)` compile the cell's `construct` as the top
        # graph too (measured, written/lax probes `fix30c_nn_jit_*`; difftest seeds 9970107,
        # 10500069)
        owner = analyzer(ctx).owner_class(fn)
        if owner is None or not isinstance(ctx.parent(owner), ast.Module):
            return False
        name = owner.name
        made = False
        for st in ast.walk(tree):
            if isinstance(st, ast.ClassDef) and st is not owner:
                if any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(st)):
                    return False
            elif isinstance(st, ast.Call) and isinstance(st.func, ast.Name) and st.func.id == name:
                up = ctx.parent(st)
                # `net = Net()`, `Net()(x)`, `ms.jit(Net())`: not an item of a container or
                # the argument of a builder (`Seq(Block())` makes a sub-cell)
                if isinstance(up, ast.Assign) or (
                    isinstance(up, ast.Call)
                    and (up.func is st or ctx.qualname(up.func) == "mindspore.jit")
                ):
                    made = True
            elif isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                scope = ctx.scopes.scope_for(st) if not isinstance(st, ast.Lambda) else None
                if scope is not None and any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(st)):
                    return False  # built or named inside compiled code
        return made
    if not isinstance(ctx.parent(fn), ast.Module):
        return False
    for other in ast.walk(tree):
        if isinstance(other, (ast.FunctionDef, ast.AsyncFunctionDef)) and other is not fn:
            if ctx.scopes.scope_for(other) is None:
                continue
            if any(isinstance(n, ast.Name) and n.id == fn.name for n in ast.walk(other)):
                return False
    return True


def _none_from_sub_cell(name: ast.Name, func: ast.FunctionDef, ctx: Context) -> bool:
    """Is `name` bound once, by unpacking a sub-cell's result (`out, attn =
    self.inner_attention(q, k, v, mask)`), to an item that every return of the sub-cell's
    `construct` MindSpore keeps (its `if`s on constants of the instances folded) gives as
    `None` (`return V, None` when `self.output_attention` is False)? STRICT drops that `None`
    from the caller's output as from a literal one (measured, written/heldout34c case
    `informer_scale_or_default_none`, probes `fix34f_none_sub_*`: "not enough values to
    unpack (expected 2, got 1)"; the same sub-cell built with `output_attention=True`, or
    the `None` not returned, compiles)."""
    a = analyzer(ctx)
    binds = a.bindings_of(name.id, func)
    if len(binds) != 1 or binds[0][0] != UNPACK_AT:
        return False
    bound = binds[0][1]
    if not isinstance(bound, tuple) or len(bound[1]) != 1:
        return False
    call, (index,) = bound
    f = call.func if type(call) is ast.Call else None
    if not (type(f) is ast.Attribute and type(f.value) is ast.Name and f.value.id == "self"):
        return False
    owner = a.owner_class(func)
    sub = _sub_cell_class(owner, f.attr, ctx) if owner is not None else None
    construct = next((m for m in sub.body if type(m) is ast.FunctionDef and m.name == "construct"), None) if sub else None
    if construct is None:
        return False
    kept = [r for r in own_nodes(construct) if type(r) is ast.Return and not in_dead_branch(ctx, construct, ctx.span(r))]
    return bool(kept) and all(
        type(r.value) is ast.Tuple
        and len(r.value.elts) > index
        and not any(type(x) is ast.Starred for x in r.value.elts)
        and type(r.value.elts[index]) is ast.Constant
        and r.value.elts[index].value is None
        for r in kept
    )


def _sub_cell_class(owner: ast.ClassDef, attr: str, ctx: Context) -> ast.ClassDef | None:
    """The Cell class of this file `self.<attr>` of `owner` holds: `__init__` builds it
    (`self.inner = Inner()`), or stores a parameter that every construction of `owner` in
    the file gives a new instance of that class (`Outer(Inner())`)."""
    init = next((m for m in owner.body if type(m) is ast.FunctionDef and m.name == "__init__"), None)
    if init is None:
        return None
    stored = analyzer(ctx).self_values(owner).get(attr, [])
    if len(stored) != 1:
        return None
    value = stored[0]
    classes = {c.name: c for c in ctx.tree.body if type(c) is ast.ClassDef}
    if type(value) is ast.Call and type(value.func) is ast.Name:
        return classes.get(value.func.id)
    if type(value) is not ast.Name:
        return None
    params = [p.arg for p in (*init.args.posonlyargs, *init.args.args)][1:]
    if value.id not in params or analyzer(ctx).rebinds(value.id, init):
        return None
    at = params.index(value.id)
    found: ast.ClassDef | None = None
    sites = instances(ctx).instantiations(owner.name)
    for site in sites:
        given = site.args[at] if len(site.args) > at else next((k.value for k in site.keywords if k.arg == value.id), None)
        if not (type(given) is ast.Call and type(given.func) is ast.Name and given.func.id in classes):
            return None
        cls = classes[given.func.id]
        if found is not None and cls is not found:
            return None
        found = cls
    if found is None or not ctx.scopes.is_cell_class(f"{ctx.scopes.info.module}.{found.name}"):
        return None
    return found
