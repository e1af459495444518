"""MS178: a list of constants whose length depends on a tensor condition, then measured (LAX)."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.flow import Analyzer, Kind, analyzer
from npu_lsp.rules.graphmode.helpers import (
    FUNCS,
    GraphRule,
    inside_while,
    leaves_loop,
    module_function,
    own_nodes,
)
from npu_lsp.rules.graphmode.interpreted import run_time_test
from npu_lsp.rules.graphmode.list_grown_in_tensor_loop import scalar_range_comprehension

#: calls that measure a list (what MindSpore 2.10 cannot do with a joined length under LAX)
_MEASURES = frozenset({"builtins.len", "builtins.sum"})
_GROW = {"append": 1, "insert": 1}
_BLOCKS = ("body", "orelse", "finalbody")


@rule(code="MS178", name="list-length-joined", severity="error", family="graphmode")
class ListLengthJoined(GraphRule):
    """## What it does
    Flags a list of Python constants that has one length on one side of a tensor condition
    and another length on the other (an `if`/`else` or a lone `if` binding or growing it, a
    conditional expression, or a helper returning lists of different lengths from a tensor
    `if`), when the list is then measured with `len` or `sum` or iterated by a `for` (LAX),
    there or in a module-level helper it is given to. A condition LAX decides at run time
    because it reads a JIT Fallback value or the shape of one (`if x.shape[0] > 0:` after
    `x = x + Tensor(x.asnumpy())`) counts as a tensor condition (its rank, `x.ndim`, does not).
    Also a list comprehension over a
    `range` whose bound is known only at run time (`int(t)` of a tensor, a size read of
    `masked_select` / `argwhere` / `unique` results) measured the same way.

    ## Why is this bad?
    A tensor condition is compiled as a branch, so MindSpore joins the list of each side into
    one list whose length is only known at run time. Under LAX (the default syntax level),
    MindSpore 2.10 then stops measuring it with a framework error (`RuntimeError: The
    pointer[seq_abs] is null`, "Framework Unexpected Exception Raised"). STRICT compiles the
    same code. Indexing the joined list (`y[0]`), testing `v in y`, comparing it, printing it
    or returning it compile at both levels, as do lists of the same length on both sides,
    lists of tensors, tuples, and conditions known while compiling (shapes, flags). So does
    an `if` in a loop that holds a `break` or `continue` (`if t: out.append("<EOS>"); break`,
    `else: break`, under a nested `if`): MindSpore makes it a loop exit, not a join; a
    separate `if t2: break` in the loop does not help. A comprehension over a run-time `range` has a length known only at run time too: `len`,
    `sum` and a `for` over it fail the same way under LAX, while indexing or returning it,
    and comprehensions over an input's shape or a `range` of a Python int, compile.

    ## Example
    ```python
    def construct(self, x):
        if x.sum() > 0:
            sizes = [1, 2]
        else:
            sizes = [3]
        return x + len(sizes)
    ```

    ## Use instead
    Keep the length fixed (pad the shorter list, or count with a tensor:
    `ops.select(x.sum() > 0, 2, 1)`), or decide on a value known while compiling.

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 3 (a tensor `if` joins the values of both branches). Measured on MindSpore 2.10 with probes of list joins of different
      lengths (if/else, lone if, conditional expression, helper returns, an `if` in an
      unrolled `for`, a lone `append`) measured by `len`, `sum` and `for`, beside accepted
      neighbours (index, `in`, `==`, `max`, `print`, returned, equal lengths, tuples, lists of
      tensors, a shape condition); helpers measuring the list and comprehensions over a
      run-time `range`: the written set `famb` (probes `hj_*`, `lc_*`); an `if` holding a
      `break` or `continue`: written/heldout38b probes `fix39a_brk_*` (LAX compiles `len` of
      the list after the loop; with the `break` in a separate `if` it fails).
    """

    nodes = (ast.If, ast.Assign)

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        # not a generator itself: most nodes are dismissed on their shape alone, for the
        # cost of a call rather than of a generator each
        if type(node) is ast.Assign:
            v = node.value
            if type(v) is ast.Call and type(v.func) is not ast.Name:
                return ()  # `_candidate`'s test for `x = self.f(...)`, most calls, without a call
        if ctx.scope is None or ctx.function is None or ctx.scope.strict or not _candidate(node):
            return ()
        return self._check(node, ctx)

    def wants_assign(self, target: type[ast.AST] | None, value: type[ast.AST]) -> bool:
        # `_candidate`'s shape: one name bound to a conditional expression, a call or a
        # list comprehension
        return target is ast.Name and (value is ast.IfExp or value is ast.Call or value is ast.ListComp)

    def wants_assigned_call(self, target: type[ast.AST] | None, callee: type[ast.AST]) -> bool:
        return callee is ast.Name  # `check`'s first test of `x = f(...)`

    def _check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        a = analyzer(ctx)
        if type(node) is ast.Assign and type(node.value) is ast.ListComp:
            yield from self._comprehension(node, node.value, ctx)
            return
        if type(node) is ast.If:
            found = _if_join(node, ctx, a)
        else:
            assert type(node) is ast.Assign
            found = _assign_join(node, ctx, a)
        if found is None:
            return
        name, lengths, after = found
        use = _measured(name, after, ctx)
        if use is None:
            return
        yield ctx.diagnostic(
            self,
            node,
            f"`{name}` is a list of {lengths[0]} items on one side of this tensor condition and "
            f"{lengths[1]} on the other, so its length is only known at run time; under LAX, "
            f"MindSpore 2.10 cannot measure it: `{ctx.segment(use)}` on line {getattr(use, 'lineno', 0)} fails "
            '("The pointer[seq_abs] is null")',
        )


    def _comprehension(self, node: ast.Assign, comp: ast.ListComp, ctx: Context) -> Iterable[Diagnostic]:
        """`items = [... for i in range(n)]` with `n` a run-time scalar or a size read of a
        tensor whose shape is known only at run time (MS152's `scalar_range_comprehension`),
        then measured: LAX builds the list with a length known only at run time and cannot
        measure it. Measured on MindSpore 2.10 (written/famb probes `lc_*`, written/reach2
        `lc_range_shape_sum`, written/runtime `jit_list_len_from_tensor`): `len`, `sum` and a
        `for` over it fail under LAX with "The pointer[seq_abs] is null" and compile under
        STRICT; `items[0]`, returning it, a comprehension over an input's shape or a `range`
        of literals or of a Python int compile at both levels (stacking it is MS152's)."""
        target = node.targets[0]
        assert isinstance(target, ast.Name)
        if scalar_range_comprehension(comp, ctx) is None:
            return
        use = _measured(target.id, node, ctx)
        if use is None:
            return
        yield ctx.diagnostic(
            self,
            node,
            f"`{target.id}` is built by a comprehension over `{ctx.segment(comp.generators[0].iter)}`, whose bound is known only at run time, so its length is too; under LAX, "
            f"MindSpore 2.10 cannot measure it: `{ctx.segment(use)}` on line {getattr(use, 'lineno', 0)} fails "
            '("The pointer[seq_abs] is null")',
        )


def _candidate(node: ast.AST) -> bool:
    """Could `node` be flagged, judged on its shape alone (no data flow)? An `if` that sets a
    list's length on a side, a name bound to a conditional expression of two list displays
    or to the result of a module function."""
    if type(node) is ast.If:
        # no length set on either side: both leave every list as it was or unknown, so no
        # name has two known lengths
        for block in (node.body, node.orelse):  # (a loop, not a generator: every `if` asks)
            for st in block:
                if _sizes_a_list(st):
                    return True
        return False
    if type(node) is not ast.Assign or len(node.targets) != 1 or type(node.targets[0]) is not ast.Name:
        return False
    v = node.value
    if type(v) is ast.IfExp:
        return isinstance(v.body, ast.List) and isinstance(v.orelse, ast.List)
    if type(v) is ast.ListComp:
        # over `range(...)`: the only comprehensions `_comprehension` follows
        it = v.generators[0].iter
        return len(v.generators) == 1 and isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "range"
    return type(v) is ast.Call and type(v.func) is ast.Name


def _const_list(e: ast.AST | None, a: Analyzer, ctx: Context) -> int | None:
    """The length of a list display of compile-time values (None for anything else)."""
    if not isinstance(e, ast.List) or any(isinstance(v, ast.Starred) for v in e.elts):
        return None
    if any(a.kind(v, ctx.function) != Kind.CONST for v in e.elts):
        return None
    return len(e.elts)


def _binds(st: ast.stmt, name: str) -> bool:
    """Does `st` bind `name` or call a method of it (other than a query)?"""
    for n in ast.walk(st):
        if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store):
            return True
        if (
            isinstance(n, ast.Call)
            and isinstance(f := n.func, ast.Attribute)
            and isinstance(f.value, ast.Name)
            and f.value.id == name
            and f.attr not in ("index", "count", "copy")
        ):
            return True
    return False


_UNTOUCHED = -1


def _run(
    stmts: list[ast.stmt], name: str, before: int | None, a: Analyzer, ctx: Context
) -> int | None:
    """The list's length after `stmts` (top level only), from `before`; `_UNTOUCHED` when they
    leave it alone, None when they change it in a way not followed."""
    length: int | None = before
    touched = False
    for st in stmts:
        if not _binds(st, name):
            continue
        touched = True
        if (
            isinstance(st, ast.Assign)
            and len(st.targets) == 1
            and isinstance(st.targets[0], ast.Name)
        ):
            v = st.value
            if (n := _const_list(v, a, ctx)) is not None:
                length = n
                continue
            if (
                isinstance(v, ast.BinOp)
                and isinstance(v.op, ast.Add)
                and isinstance(v.left, ast.Name)
                and v.left.id == name
                and (n := _const_list(v.right, a, ctx)) is not None
                and length is not None
            ):
                length += n
                continue
            return None
        if (
            isinstance(st, ast.AugAssign)
            and isinstance(st.op, ast.Add)
            and isinstance(st.target, ast.Name)
            and (n := _const_list(st.value, a, ctx)) is not None
            and length is not None
        ):
            length += n
            continue
        if (
            isinstance(st, ast.Expr)
            and isinstance(c := st.value, ast.Call)
            and isinstance(f := c.func, ast.Attribute)
        ):
            grow = _GROW.get(f.attr)
            args_const = all(a.kind(v, ctx.function) == Kind.CONST for v in c.args)
            if grow is not None and args_const and length is not None:
                length += grow
                continue
            if (
                f.attr == "extend"
                and len(c.args) == 1
                and (n := _const_list(c.args[0], a, ctx)) is not None
                and length is not None
            ):
                length += n
                continue
        return None
    return length if touched else _UNTOUCHED


def _before(node: ast.stmt, name: str, ctx: Context, a: Analyzer) -> int | None:
    """The length the list has before `node`: the statements before it in its block and the
    blocks around it, up to the function (a `for` around it is unrolled: its body starts with
    what came before the loop)."""
    child: ast.AST = node
    parent = ctx.parent(node)
    while parent is not None:
        for field in _BLOCKS:
            block = getattr(parent, field, None)
            if isinstance(block, list) and child in block:
                prior = block[: block.index(child)]
                if any(_binds(st, name) for st in prior):
                    got = _run(prior[-_last_bound(prior, name) :], name, None, a, ctx)
                    return None if got == _UNTOUCHED else got
        if parent is ctx.function or isinstance(parent, (ast.While, *FUNCS)):
            return None
        child, parent = parent, ctx.parent(parent)
    return None


def _last_bound(prior: list[ast.stmt], name: str) -> int:
    """How many statements of `prior` to replay: from its last plain assignment of `name`."""
    for i in range(len(prior) - 1, -1, -1):
        st = prior[i]
        if isinstance(st, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == name for t in st.targets
        ):
            return len(prior) - i
    return len(prior)


def _sizes_a_list(st: ast.stmt) -> bool:
    """Could `_run` follow `st` as a change of a list's length (a list display bound or
    added, `append` / `insert` / `extend`)? Every other statement that touches a name
    leaves its length unknown."""
    if type(st) is ast.Assign:
        v = st.value
        return type(v) is ast.List or (type(v) is ast.BinOp and type(v.right) is ast.List)
    if isinstance(st, ast.AugAssign):
        return isinstance(st.value, ast.List)
    return (
        isinstance(st, ast.Expr)
        and isinstance(c := st.value, ast.Call)
        and isinstance(f := c.func, ast.Attribute)
        and (f.attr in _GROW or f.attr == "extend")
    )


def _if_join(
    node: ast.If, ctx: Context, a: Analyzer
) -> tuple[str, tuple[int, int], ast.stmt] | None:
    if inside_while(node, ctx) or not _run_time_condition(node.test, ctx, a):
        return None  # a value joined across a while's iterations is MS119's
    if leaves_loop(node):
        return None
    names = sorted(
        {
            n.id
            for st in (*node.body, *node.orelse)
            for n in ast.walk(st)
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
        }
        | {
            f.value.id
            for st in (*node.body, *node.orelse)
            if isinstance(st, ast.Expr)
            and isinstance(st.value, ast.Call)
            and isinstance(f := st.value.func, ast.Attribute)
            and isinstance(f.value, ast.Name)
        }
    )
    for name in names:
        before = _before(node, name, ctx, a)
        sides = [_run(node.body, name, before, a, ctx), _run(node.orelse, name, before, a, ctx)]
        if None in sides or sides == [_UNTOUCHED, _UNTOUCHED]:
            continue
        lengths = [before if s == _UNTOUCHED else s for s in sides]
        if lengths[0] is None or lengths[1] is None or lengths[0] == lengths[1]:
            continue
        return name, (lengths[0], lengths[1]), node
    return None


def _run_time_condition(test: ast.expr, ctx: Context, a: Analyzer) -> bool:
    """A tensor condition, or one LAX decides at run time because it reads a JIT Fallback
    value or its shape (`run_time_test`: `if x.shape[0] > 0:` after `x = x +
    any(v > 100 for v in x.shape)`, fresh v5 seeds 9850198 and 9970041). STRICT never makes
    such values, and the rule runs at LAX only."""
    if a.kind(test).dynamic:
        return True
    return ctx.function is not None and run_time_test(test, ctx, ctx.function)


def _assign_join(
    node: ast.Assign, ctx: Context, a: Analyzer
) -> tuple[str, tuple[int, int], ast.stmt] | None:
    if len(node.targets) != 1 or not isinstance(target := node.targets[0], ast.Name):
        return None
    v = node.value
    if type(v) is ast.IfExp:
        if not _run_time_condition(v.test, ctx, a):
            return None
        lengths = (_const_list(v.body, a, ctx), _const_list(v.orelse, a, ctx))
    elif type(v) is ast.Call and type(v.func) is ast.Name:
        lengths = _helper_returns(v.func.id, ctx, a)
    else:
        return None
    if lengths[0] is None or lengths[1] is None or lengths[0] == lengths[1]:
        return None
    return target.id, (lengths[0], lengths[1]), node


def _helper_returns(fname: str, ctx: Context, a: Analyzer) -> tuple[int | None, int | None]:
    """Two different lengths of list displays a module-level helper returns, one of them from
    inside a tensor `if`."""
    fdef = module_function(fname, ctx)
    if fdef is None:
        return None, None
    key = ("MS178.helper", id(fdef))  # the same for every call of the helper
    hit: tuple[int | None, int | None] | None = ctx.cache.get(key)
    if hit is None:
        hit = ctx.cache[key] = _returned_lengths(fdef, a)
    return hit


def _returned_lengths(fdef: ast.FunctionDef, a: Analyzer) -> tuple[int | None, int | None]:
    returns = [n for n in own_nodes(fdef) if isinstance(n, ast.Return)]
    lens: list[int] = []
    under_tensor_if = False
    for r in returns:
        if not isinstance(r.value, ast.List) or any(
            not isinstance(e, ast.Constant) for e in r.value.elts
        ):
            return None, None
        lens.append(len(r.value.elts))
    for n in own_nodes(fdef):
        if (
            isinstance(n, ast.If)
            and any(isinstance(s, ast.Return) for s in ast.walk(n))
            and a.kind(n.test, fdef).dynamic
        ):
            under_tensor_if = True
    if not under_tensor_if or len(set(lens)) < 2:
        return None, None
    return lens[0], next(n for n in lens if n != lens[0])


def _measured(name: str, after: ast.stmt, ctx: Context) -> ast.AST | None:
    """The first `len(name)` / `sum(name)` / `for _ in name` after `after`, before `name` is
    bound again."""
    func = ctx.function
    if func is None:
        return None
    end = after.end_lineno or after.lineno
    rebound = min(
        (
            n.lineno
            for n in own_nodes(func)
            if isinstance(n, (ast.Assign, ast.AugAssign, ast.AnnAssign))
            and n.lineno > end
            and any(
                isinstance(t, ast.Name) and t.id == name
                for t in ast.walk(n)
                if isinstance(t, ast.Name) and isinstance(t.ctx, ast.Store)
            )
        ),
        default=None,
    )
    best: ast.AST | None = None
    for n in own_nodes(func):
        line = getattr(n, "lineno", 0)
        if line <= end or (rebound is not None and line > rebound):
            continue
        measures = (
            isinstance(n, ast.Call)
            and len(n.args) == 1
            and isinstance(n.args[0], ast.Name)
            and n.args[0].id == name
            and ctx.qualname(n.func) in _MEASURES
        ) or (isinstance(n, ast.For) and isinstance(n.iter, ast.Name) and n.iter.id == name)
        measures = measures or (isinstance(n, ast.Call) and _measured_in_helper(n, name, ctx))
        if measures and (best is None or line < getattr(best, "lineno", 0)):
            best = n
    if isinstance(best, ast.For):
        return best.iter
    return best


def _measured_in_helper(call: ast.Call, name: str, ctx: Context) -> bool:
    """Is `name` given (positionally) to a module-level helper that measures that parameter
    (`len(seq)`, `sum(seq)`, `for v in seq`) without binding it again? Measured on MindSpore
    2.10 (written/famb probes `hj_*`, written/listjoin `helper_len`): the helper is inlined,
    so it fails under LAX as the same measure in the caller does; a helper indexing it
    (`seq[0]`) compiles."""
    if not isinstance(call.func, ast.Name):
        return False
    positions = [i for i, v in enumerate(call.args) if isinstance(v, ast.Name) and v.id == name]
    if not positions or any(isinstance(v, ast.Starred) for v in call.args[: positions[0]]):
        return False
    fdef = module_function(call.func.id, ctx)
    if fdef is None:
        return False
    params = [p.arg for p in (*fdef.args.posonlyargs, *fdef.args.args)]
    measured = _helper_measured_params(fdef, ctx)
    return any(i < len(params) and params[i] in measured for i in positions)


def _helper_measured_params(fdef: ast.FunctionDef, ctx: Context) -> frozenset[str]:
    """The parameters of `fdef` it measures and never rebinds (once per helper)."""
    key = ("MS178.measured-params", id(fdef))
    hit: frozenset[str] | None = ctx.cache.get(key)
    if hit is None:
        params = {p.arg for p in (*fdef.args.posonlyargs, *fdef.args.args)}
        measured: set[str] = set()
        rebound: set[str] = set()
        for n in own_nodes(fdef):
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                rebound.add(n.id)
            elif (
                isinstance(n, ast.Call)
                and len(n.args) == 1
                and isinstance(n.args[0], ast.Name)
                and ctx.qualname(n.func) in _MEASURES
            ):
                measured.add(n.args[0].id)
            elif isinstance(n, ast.For) and isinstance(n.iter, ast.Name):
                measured.add(n.iter.id)
            elif (
                isinstance(n, ast.Call)
                and isinstance(n.func, ast.Attribute)
                and isinstance(n.func.value, ast.Name)
                and n.func.attr not in ("index", "count", "copy")
            ):
                rebound.add(n.func.value.id)  # grown or changed in place: not followed
        hit = ctx.cache[key] = frozenset((measured & params) - rebound)
    return hit
