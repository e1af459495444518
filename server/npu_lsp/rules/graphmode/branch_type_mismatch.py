"""MS119: branches of a tensor-dependent `if` producing values of different types."""

from __future__ import annotations

import ast
from collections.abc import Iterable
from collections.abc import Set as AbstractSet
from dataclasses import replace

from npu_lsp.astutil import FIELDS, STATEMENT_BLOCKS, fields, range_count
from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context, called_name
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode import abstract as av
from npu_lsp.rules.graphmode.abstract_eval import Env, Values, values
from npu_lsp.rules.graphmode.control import (
    bindings,
    block_of,
    is_function,
)
from npu_lsp.rules.graphmode.dynamic_shape import (
    dynamic_shape,
    run_time_test,
    shape_read_of,
)
from npu_lsp.rules.graphmode.flow import Analyzer, Kind, analyzer
from npu_lsp.rules.graphmode.helpers import (
    GraphRule,
    body_statements,
    own_nodes,
    returns_in,
    terminates,
)
from npu_lsp.rules.graphmode.list_compare import (
    compared_list,
    equality_with_number,
    folded_bindings,
)
from npu_lsp.rules.graphmode.loop_exit_joins import loop_exit_join
from npu_lsp.rules.graphmode.none_join import none_tested_after_loop
from npu_lsp.rules.graphmode.opaque_value_query import joins_anything_at_lax, opaque_at_lax
from npu_lsp.rules.graphmode.parameter_arguments import (
    forwarded_gradients,
    number_or_tuple_argument,
)
from npu_lsp.scope import SITE_READS_PAUSED


def side_value(rets: list[ast.Return], vals: Values, env: Env | None = None) -> av.Value:
    """What one path of a branch returns: its returns joined (errors among them belong to the
    `if` that splits them). A bare `return` is None."""
    out: av.Value | None = None
    for r in rets:
        v = vals.of(r.value, None, env) if r.value is not None else av.NONE
        out = v if out is None else av.join(out, v, av.Site.RETURN).value
    return out if out is not None else av.UNKNOWN


def _returned_where_read(rets: list[ast.Return], vals: Values, env: Env | None, ctx: Context) -> av.Value:
    """`side_value`, with a returned name read as the assignment every path to its `return`
    runs last (`analyzer.dominating_assignment`) when there is one. `logits = None` before a
    `for i in range(3):` whose body binds `logits = self.exits[i](x)` before `if <tensor>:
    return logits`: that return reads the tensor, never the None (measured, written/heldout24a
    case `r2_exit_logits_none_before_loop_return` and probes `fe24_exit_*`: compiles under
    STRICT)."""
    a = analyzer(ctx)
    out: av.Value | None = None
    for r in rets:
        e = r.value
        if isinstance(e, ast.Name) and (bound := a.dominating_assignment(e, ctx.function)) is not None:
            e = bound.value
        v = vals.of(e, None, env) if e is not None else av.NONE
        out = v if out is None else av.join(out, v, av.Site.RETURN).value
    return out if out is not None else av.UNKNOWN


def false_path(node: ast.stmt, ctx: Context, depth: int = 0) -> tuple[list[ast.Return], bool] | None:
    """The returns reached when `node` (an `if` without `else`) is left by its false path, and
    whether that path can fall off the end of the function (an implicit `return None`);
    None when unknown. Follows the end of an enclosing branch (an `elif`, a nested `if`) and
    of an unrolled loop's body to what comes after them."""
    parent, block, index = block_of(node, ctx)
    if index < 0 or depth > 8:
        return None
    rest = block[index + 1 :]
    rets = returns_in(rest)
    if terminates(rest):
        return rets, False
    if parent is ctx.function:
        return rets, True
    if isinstance(parent, ast.While) and block is parent.body and _endless(parent):
        # `while True:` left only by a return: the false path goes round again and ends at
        # one of the loop's returns, never after the loop (measured: a tensor returned under
        # a tensor `if` in such a loop compiles under STRICT, no None is joined)
        return rets + returns_in(block[:index]), False
    if isinstance(parent, ast.If) or (isinstance(parent, (ast.For, ast.While)) and block is parent.body):
        outer = false_path(parent, ctx, depth + 1)
        return (rets + outer[0], outer[1]) if outer is not None else None
    return None


def _endless(loop: ast.While) -> bool:
    """`while True:` (any truthy constant) with no `break` of its own and no `else`."""
    test = loop.test
    if not (isinstance(test, ast.Constant) and test.value) or loop.orelse:
        return False
    todo: list[ast.AST] = list(loop.body)
    while todo:
        n = todo.pop()
        if isinstance(n, ast.Break):
            return False
        if isinstance(n, (ast.For, ast.AsyncFor, ast.While)):
            todo.extend(n.orelse)  # a `break` in an inner loop's body leaves that loop only
            continue
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        todo.extend(ast.iter_child_nodes(n))
    return True


def _assigned(block: list[ast.stmt]) -> dict[str, ast.expr]:
    """`name = value` statements directly in `block` (the last one per name wins), also
    each name of `a, b = x, y`."""
    out: dict[str, ast.expr] = {}
    for st in block:
        if type(st) is ast.Assign:
            targets = st.targets
            if len(targets) == 1 and type(targets[0]) is ast.Name:
                out[targets[0].id] = st.value  # `plain_pairs`' first case (most), without a list
            else:
                out.update(plain_pairs(st))
    return out


def _item_stores(block: list[ast.stmt]) -> dict[tuple[str, str], tuple[ast.expr, ast.stmt]]:
    """`d[key] = value` statements directly in `block`, `key` a name or a constant: (container
    name, the key's text) -> (value, statement); the last one per item wins."""
    out: dict[tuple[str, str], tuple[ast.expr, ast.stmt]] = {}
    for st in block:
        if type(st) is ast.Assign and len(st.targets) == 1:
            t = st.targets[0]
            if type(t) is ast.Subscript and type(t.value) is ast.Name:
                # a name or a constant key (`ast.dump` would leave a reference cycle per call)
                key = t.slice
                text = key.id if type(key) is ast.Name else repr(key.value) if type(key) is ast.Constant else None
                if text is not None:
                    out[(t.value.id, text)] = (st.value, st)
    return out


def _dict_item_join(
    node: ast.If, stored: list[tuple[str, str]], ctx: Context, env: Env | None
) -> tuple[str, ast.AST] | None:
    """An item of a dict stored on both paths of `node` (`results[name] = 0.0` / `results[name]
    = acc.item()`), the dict read afterwards: the two dicts are joined value by value, as
    returned values are (measured, written/heldout21b probes `st22_mc_*`: a Python float
    against an Int64 `.item()`, a `//` of two, or a tensor fails at both levels, against
    `.item() / n` (Float32) LAX compiles; `0` against an Int64 `.item()` compiles). Two
    constants are left alone (not measured). STRICT also refuses some joins of equal dtypes
    here (`0.0` against a Float32 `.item()` computed from a sub-cell's output, the heldout21b
    case `metric_per_class_acc_loop_item`), not modelled: its verdicts vary with where the
    value comes from."""
    body, other = _item_stores(node.body), _item_stores(node.orelse)
    vals = values(ctx)
    for key in stored:
        name = key[0]
        (left, _), (right, where) = body[key], other[key]
        x = vals.of(left, None, env)
        y = vals.of(right, None, env) if x.known else av.UNKNOWN
        if av.is_constant(x) and av.is_constant(y):
            continue
        error = av.join(x, y, av.Site.RETURN).error
        if error is None or error.strict_only or not isinstance(x, (av.Scalar, av.Tensor)):
            continue
        if not _dict_bound(name, ctx) or not _read_after(node, name, ctx):
            continue
        if not (ctx.scope and ctx.scope.strict) and any(joins_anything_at_lax(v, ctx.function, ctx) for v in (left, right)):
            continue  # LAX joins a Python object with anything
        target = where.targets[0]  # type: ignore[attr-defined]
        return f"`{ctx.segment(target)}`: {error.reason}", where
    return None


def _dict_bound(name: str, ctx: Context) -> bool:
    """Is `name` bound in the compiled function only to dict displays (`results = {}`)?"""
    func = ctx.function
    if func is None:
        return False
    binds = [
        st.value
        for st in ast.walk(func)
        if isinstance(st, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in st.targets)
    ]
    return bool(binds) and all(isinstance(v, ast.Dict) for v in binds)


def plain_pairs(st: ast.Assign) -> list[tuple[str, ast.expr]]:
    """(name, value) of `name = value`, and of each name of `a, b = x, y` (a tuple or list
    display of names given a display of as many values: `best_t, best = 0.5, -1.0`)."""
    if len(st.targets) != 1:
        return []
    target, value = st.targets[0], st.value
    if type(target) is ast.Name:
        return [(target.id, value)]
    if type(target) not in (ast.Tuple, ast.List) or type(value) not in (ast.Tuple, ast.List):
        return []
    names, items = target.elts, value.elts  # type: ignore[attr-defined]
    if len(names) != len(items) or not all(type(n) is ast.Name for n in names):
        return []
    if any(type(v) is ast.Starred for v in items):
        return []
    return [(n.id, v) for n, v in zip(names, items, strict=True)]


def _augmented(block: list[ast.stmt]) -> dict[str, ast.expr]:
    """`name += value` (and `-=`, `*=`, `/=`) directly in `block`: name -> the value added."""
    out: dict[str, ast.expr] = {}
    for st in block:
        if (
            type(st) is ast.AugAssign
            and isinstance(st.target, ast.Name)
            and isinstance(st.op, (ast.Add, ast.Sub, ast.Mult, ast.Div))
        ):
            out[st.target.id] = st.value
    return out


def _false_path_values(node: ast.If, ctx: Context, func: ast.AST | None) -> dict[str, ast.expr]:
    """`preceding_values` of the names an `if` without `else` binds in its body (with an
    `else`: of the names one path binds and the other leaves alone, `_one_sided`), in `func`
    (the function holding it), once per `if`: the rule's walk and its per-call
    specialisation both ask."""
    key = ("MS119.before", id(node))
    hit: dict[str, ast.expr] | None = ctx.cache.get(key)
    if hit is None:
        names = _one_sided(node) if node.orelse else set(_assigned(node.body)) | set(_augmented(node.body))
        hit = ctx.cache[key] = preceding_values(node, ctx, names, func) if names else {}
        if not node.orelse and _builds_gradients(ctx) and (missing := names - hit.keys()):
            hit.update(_unpacked_before(node, ctx, missing))
    return hit


def _builds_gradients(ctx: Context) -> bool:
    """Does the file build a gradient function (the only call whose unpacked items
    `_unpacked_before` gives a value to)? A cheap gate, once per file (`value_and_grad`,
    `grad`, `GradOperation` all hold the word)."""
    hit: bool | None = ctx.cache.get(_GRADS_KEY)
    if hit is None:
        hit = ctx.cache[_GRADS_KEY] = ctx.mentions("grad") or ctx.mentions("Grad")
    return hit


_GRADS_KEY = "MS119.builds_gradients"


def _unpacked_before(node: ast.If, ctx: Context, names: set[str]) -> dict[str, ast.expr]:
    """Those of `names` the statement just before `node`'s nearest binding of them, in its own
    block, unpacks from a call (`loss, grads = grad_fn(u)`): name -> `grad_fn(u)[1]`, an
    expression made here (located at the call, no parent in the tree) whose value is the
    call's item. Only the statements of the `if`'s own block, and only an `if` without
    `else`, are searched: the value the false path carries."""
    parent, block, index = block_of(node, ctx)
    out: dict[str, ast.expr] = {}
    if index < 0:
        return out
    wanted = set(names)
    for st in reversed(block[:index]):
        if not wanted:
            break
        found = bindings([st]) & wanted if type(st) not in _NO_BINDINGS else set()
        if not found:
            continue
        wanted -= found
        if type(st) is not ast.Assign or len(st.targets) != 1 or type(st.value) is not ast.Call:
            continue
        target = st.targets[0]
        if type(target) not in (ast.Tuple, ast.List) or any(type(e) is ast.Starred for e in target.elts):  # type: ignore[attr-defined]
            continue
        for i, e in enumerate(target.elts):  # type: ignore[attr-defined]
            if type(e) is ast.Name and e.id in found:
                item = ast.Subscript(value=st.value, slice=ast.Constant(i), ctx=ast.Load())
                out[e.id] = ast.copy_location(item, st.value)
    return out


#: the values before an `if`/`else` both of whose paths bind the same names (read only)
_NOTHING_BEFORE: dict[str, ast.expr] = {}


def _one_sided(node: ast.If) -> set[str]:
    """The names one path of an `if` with an `else` binds directly (`name = ...`, `name +=
    ...`) and the other path does not bind at all: that path carries the value bound
    before the `if`, and the two meet after it as for an `if` without `else` (measured,
    written/heldout25b case `r2_pid_antiwindup_if_clamp_short` and probes `fix25b_j_*`:
    `if u > lim: u = lim elif u < -lim: u = -lim else: integ = integ + e`, "Type Join
    Failed" at both levels). A path that leaves (`return`, `continue`...) meets nothing."""
    body, other = node.body, node.orelse
    mine, theirs = _direct_names(body), _direct_names(other)
    if mine == theirs:  # (also both empty: most `if`/`else`s) each name is bound on both paths
        return set()
    if terminates(body) or terminates(other):
        return set()
    return (mine - bindings(other)) | (theirs - bindings(body))


def _direct_names(block: list[ast.stmt]) -> set[str]:
    """The names `name = ...`, `a, b = ...` and `name += ...` (`-=`, `*=`, `/=`) directly in
    `block` bind: those of `_assigned` and `_augmented`, and a few more unpacked."""
    out: set[str] = set()
    name_t = ast.Name
    for st in block:
        t = type(st)
        if t is ast.Assign:
            for target in st.targets:  # type: ignore[attr-defined]
                tt = type(target)
                if tt is name_t:
                    out.add(target.id)
                elif tt is ast.Tuple or tt is ast.List:
                    for e in target.elts:
                        if type(e) is name_t:
                            out.add(e.id)
        elif t is ast.AugAssign and type(st.target) is name_t and type(st.op) in _GROWING:  # type: ignore[attr-defined]
            out.add(st.target.id)  # type: ignore[attr-defined]
    return out


_GROWING = (ast.Add, ast.Sub, ast.Mult, ast.Div)


def preceding_values(
    node: ast.stmt, ctx: Context, names: set[str], func: ast.AST | None = None
) -> dict[str, ast.expr]:
    """Those of `names` last bound by a plain `name = value` before `node` (in its block, then
    before the loops and branches around it): the value the false path carries. A name
    rebound any other way in between (unpacking, a loop, `+=`) is left out; a parameter
    bound nowhere before carries the Python number every call in the file passes for it.
    `func` is the function holding `node` (default: the one being checked)."""
    if func is None:
        func = ctx.function
    out: dict[str, ast.expr] = {}
    wanted = set(names)
    current: ast.AST = node
    while wanted:
        parent, block, index = block_of(current, ctx)  # type: ignore[arg-type]
        if index < 0:
            break
        # backwards from `node`: the nearest binding of each name decides, and the scan
        # stops as soon as every name is decided (compound statements cost a walk)
        found: dict[str, ast.expr] = {}
        settled: set[str] = set()
        open_names = set(wanted)
        for st in reversed(block[:index]):
            t = type(st)
            pairs = plain_pairs(st) if t is ast.Assign else None  # type: ignore[arg-type]
            if pairs:
                for name, value in pairs:
                    if name in open_names:
                        found[name] = value
                        open_names.discard(name)
            elif t not in _NO_BINDINGS:
                hit = bindings([st]) & open_names
                settled |= hit
                open_names -= hit
            if not open_names:
                break
        out.update(found)
        wanted -= found.keys() | settled
        if parent is not None and parent is func:
            # bound nowhere before: a parameter holds what the calls pass (a Python number, a tuple)
            for name in sorted(wanted):
                arg = number_or_tuple_argument(parent, name, ctx)
                if arg is not None:
                    out[name] = arg
            break
        if parent is None or not isinstance(parent, (ast.For, ast.While, ast.If, ast.With)):
            break
        current = parent
    return out


_NO_BINDINGS = frozenset({ast.Expr, ast.Return, ast.Pass, ast.Raise, ast.Assert, ast.Break, ast.Continue})


#: arithmetic whose result is a tensor when either operand is one
_TENSOR_ARITHMETIC = frozenset({ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow})


def _tensor_arithmetic_after(loop: ast.While, name: str, ctx: Context) -> bool:
    """Is every read of `name` after `loop` (a statement of the function's own body, no
    `else`) an operand of arithmetic with a tensor (`loss / (max_t - 1)`), and `name` never
    rebound there? MindSpore compiles a tensor-dependent `while` as a recursive graph whose
    exit runs the rest of the function, and joins what the function returns, not the value
    carried around the loop: a Python number before the loop and a tensor after a turn meet
    only if they reach the return unchanged. Measured (written/zoo probes
    `zoo33_while_float_sum_*`, mindspore-lab/mindrl coma.py): `loss = 0.0` grown by a tensor
    in `while t >= 0:` and returned as `loss / (max_t - 1)` or `x.sum() + loss` compiles at
    both levels, also in a helper method; returned as it is, as `loss * 2`, beside the
    divided value in a tuple, or with the loop under a tensor `if`, it fails ("Type Join
    Failed: Abstract type AbstractTensor cannot join with AbstractScalar")."""
    if type(loop.test) is ast.BoolOp:
        # `while x.sum() > -100 and i0 < 2:` with a counter `i0`: the test joins a tensor
        # with a Python bool and fails whatever the body carries ("Type Join Failed: dtype1
        # = Bool, dtype2 = Any", probes `zoo33_while_and_counter_*`, 16 difftest seeds)
        return False
    parent, block, index = block_of(loop, ctx)
    if parent is not ctx.function or index < 0 or loop.orelse:
        return False
    a = analyzer(ctx)
    for st in block[index + 1 :]:
        for n in ast.walk(st):
            if type(n) is not ast.Name or n.id != name:
                continue
            if type(n.ctx) is not ast.Load:
                return False
            op = ctx.parent(n)
            if type(op) is not ast.BinOp or type(op.op) not in _TENSOR_ARITHMETIC:
                return False
            other = op.right if op.left is n else op.left
            if a.kind(other) != Kind.TENSOR:
                return False
    return True


def _read_after(node: ast.stmt, name: str, ctx: Context) -> bool:
    """Is the value `name` has after `node` read: its next occurrence after `node` is a read
    (a rebinding first kills it), or a loop around `node` reads it on its next turn? Only the
    statements after `node` are looked at, nearest first."""
    func = ctx.function
    current: ast.AST = node
    while True:
        parent, block, index = block_of(current, ctx)  # type: ignore[arg-type]
        if index < 0:
            return True  # not in a block we can follow: assume it is read
        for st in block[index + 1 :]:
            first: tuple[int, int, int] | None = None
            for n in ast.walk(st):
                if type(n) is ast.Name and n.id == name:
                    # on one line a read comes before a store (`y = y + 1`)
                    key = (n.lineno, 1 if type(n.ctx) is not ast.Load else 0, n.col_offset)
                    first = key if first is None or key < first else first
            if first is not None:
                return first[1] == 0
        if parent is None or parent is func or isinstance(parent, ast.Module):
            return False
        if isinstance(parent, (ast.For, ast.While)) and (
            any(
                type(n) is ast.Name and n.id == name and type(n.ctx) is ast.Load and n.lineno < node.lineno
                for n in ast.walk(parent)
            )
            or _read_first_in(node, name)
        ):
            return True  # read again on the loop's next turn
        current = parent


def _read_first_in(node: ast.stmt, name: str) -> bool:
    """Is the first occurrence of `name` in `node` (an `if`, its test included) a read? On a
    loop's next turn that read sees the value the previous turn's branches joined: `if c <
    best: best = c` in an unrolled `for` joins `best = 1e9` with the tensor `c` even when
    nothing after the loop reads `best` (measured, written/heldout25b case
    `r2_mpc_best_cost_inf_float` and probes `fix25b_j_*`: "Type Join Failed: dtype1 =
    Float32, dtype2 = Float64" at both levels)."""
    if type(node) is not ast.If or _none_tested(node.test, name):
        return False
    first: tuple[int, int, int] | None = None
    for n in ast.walk(node):
        if type(n) is ast.Name and n.id == name:
            key = (n.lineno, 1 if type(n.ctx) is not ast.Load else 0, n.col_offset)
            first = key if first is None or key < first else first
    return first is not None and first[1] == 0


def _none_tested(test: ast.expr, name: str) -> bool:
    """Does `test` compare `name` by identity or with None (`best is None or s > best`)? With
    the value the loop starts from (`best = None`) such a test folds on the first turn, so
    that turn's paths never meet (written/algorithms case `enumerate_zip_scores` compiles under
    STRICT)."""
    for n in ast.walk(test):
        if type(n) is ast.Compare:
            operands = [n.left, *n.comparators]
            if any(type(o) is ast.Name and o.id == name for o in operands) and (
                any(type(op) in (ast.Is, ast.IsNot) for op in n.ops)
                or any(type(o) is ast.Constant and o.value is None for o in operands)
            ):
                return True
    return False


def _only_returned(node: ast.IfExp, ctx: Context) -> bool:
    """Is the value of the conditional expression `node` only handed out by `return` (itself,
    in a returned tuple, or through the one name it is bound to)? Two Python numbers of two
    types joined under a tensor test make a value STRICT can output but not compute with
    (measured, written/zoo probes `ld23_ifexp_int_float_*`: `return x, k` compiles, `x * k`
    is refused, "When handling script ... the inputs should be constant")."""

    def returned(e: ast.AST) -> bool:
        p = ctx.parent(e)
        if isinstance(p, ast.Tuple):
            p = ctx.parent(p)
        return isinstance(p, ast.Return)

    parent = ctx.parent(node)
    if not (isinstance(parent, ast.Assign) and len(parent.targets) == 1 and isinstance(parent.targets[0], ast.Name)):
        return returned(node)
    name, func = parent.targets[0].id, ctx.function
    if func is None:
        return False
    reads = [n for n in ast.walk(func) if type(n) is ast.Name and n.id == name and type(n.ctx) is ast.Load]
    return bool(reads) and all(returned(n) for n in reads)


_EQUALITY = (ast.Eq, ast.NotEq)
_COMPARE_T, _UNARY_T = ast.Compare, ast.UnaryOp


def _returned_directly(node: ast.stmt, name: str, ctx: Context) -> bool:
    """Does a later `return name` hand the name out as is? (Measured: returned inside a
    tuple, `return x, name`, two constants of different types are accepted.)"""
    func = ctx.function
    if func is None:
        return False
    end = node.end_lineno or node.lineno
    return any(
        r.lineno > end and isinstance(r.value, ast.Name) and r.value.id == name
        for r in returns_in(getattr(func, "body", []))
    )


def _graph_output(ctx: Context) -> bool:
    """Is the function being checked a compiled entry (`construct`, `@ms.jit`) that no
    compiled code calls, whose return is the graph's output?"""
    scope = ctx.scope
    return (
        scope is not None
        and scope.kind in ("construct", "jit")
        and ctx.function is scope.function
        and not scope.call_sites
    )


def _numpy_scalar_mix(x: av.Value, y: av.Value) -> bool:
    return isinstance(x, av.Scalar) and isinstance(y, av.Scalar) and (x.numpy or y.numpy)


def _only_output(node: ast.stmt, name: str, ctx: Context) -> bool:
    """Is every read of `name` after `node` returned, itself or as an item of a returned
    tuple or list display?"""
    func = ctx.function
    if func is None:
        return False
    end = node.end_lineno or node.lineno
    reads = [n for n in ast.walk(func) if type(n) is ast.Name and n.id == name and type(n.ctx) is ast.Load and n.lineno > end]
    for n in reads:
        p = ctx.parent(n)
        if isinstance(p, (ast.Tuple, ast.List)):
            p = ctx.parent(p)
        if not isinstance(p, ast.Return):
            return False
    return bool(reads)


def _only_returned_in_display(node: ast.stmt, name: str, ctx: Context) -> bool:
    """Is every read of `name` after `node` an item of a returned tuple or list display
    (`return x, name`)?"""
    func = ctx.function
    if func is None:
        return False
    end = node.end_lineno or node.lineno
    reads = [
        n for n in ast.walk(func) if type(n) is ast.Name and n.id == name and type(n.ctx) is ast.Load and n.lineno > end
    ]
    for n in reads:
        display = ctx.parent(n)
        if not (isinstance(display, (ast.Tuple, ast.List)) and isinstance(ctx.parent(display), ast.Return)):
            return False
    return bool(reads)


def _nested(ctx: Context) -> bool:
    """Is the function being checked nested in another function? (Once per function: every
    `if` asks.)"""
    func = ctx.function
    if func is None:
        return False
    key = ("MS119.nested", id(func))
    hit = ctx.cache.get(key)
    if hit is None:
        # `_ancestors` of the function, read as they are found (no list, no generator)
        hit = False
        p = ctx.parent(func)
        while p is not None and p is not func:
            if is_function(p):
                hit = True
                break
            p = ctx.parent(p)
        ctx.cache[key] = hit
    return bool(hit)


def phi_error(node: ast.stmt, name: str, left: av.Value, right: av.Value, ctx: Context) -> av.JoinError | None:
    """The join MindSpore makes of `name` bound to `left`/`right` on the two paths of `node`.

    A name nobody reads after the branch is never joined (its phi is dropped), except a
    sequence against a tensor inside a nested function (measured on 2.10: closures keep
    the sequence's element uses alive). Two constants are not joined either: the code after
    the branch is specialised per constant, and only meets again where it is returned."""
    if not left.known or not right.known:
        return None
    if av.is_constant(left) and av.is_constant(right):
        if not _returned_directly(node, name, ctx):
            j = av.join(left, right, av.Site.PHI)
            if j.error is None and _numbers_joined_again(node, name, left, right, ctx):
                return av.JoinError(
                    f"constant {left.py} vs {right.py} joined again in a loop",  # type: ignore[attr-defined]
                    f"dtype1 = {left.ms_dtype}, dtype2 = {right.ms_dtype}",  # type: ignore[attr-defined]
                )
            return j.error  # None against a constant: STRICT only
        return av.join(left, right, av.Site.RETURN).error
    if not _read_after(node, name, ctx):
        pair = {type(left), type(right)}
        if not (pair == {av.Sequence, av.Tensor} and _nested(ctx)):
            return None
    if (
        isinstance(left, av.Tensor)
        and isinstance(right, av.Tensor)
        and left.folded
        and right.folded
        and _returned_directly(node, name, ctx)
        and _graph_output(ctx)
    ):
        # constant tensors of two dtypes: the graph's output as they are, they fail at both
        # levels (measured, `mh_join_dtype_E`); read otherwise, under STRICT only (the PHI
        # join), except handed out inside a returned tuple, as two constants are (`_N`)
        error = av.join(left, right, av.Site.PHI).error
        return av.folded_output_error(left, right, error) if error is not None else None
    if (
        isinstance(left, av.Tensor)
        and left.folded
        and isinstance(right, av.Tensor)
        and right.folded
        and _only_returned_in_display(node, name, ctx)
    ):
        return None
    return av.join(left, right, av.Site.PHI).error or dtype_cast_error(node, name, left, right, ctx)


def _numbers_joined_again(node: ast.stmt, name: str, left: av.Value, right: av.Value, ctx: Context) -> bool:
    """An int and a float constant met at the `if` `node` (`y0 = 1`, then `if x.max() > 1:
    y0 = 2.0`, no `else`) inside a `for` over `range(N)`, N >= 2, `name` read after: the
    code after one such `if` is specialised per constant and compiles, but the next turn
    joins the two and fails at both levels ("Type Join Failed: dtype1 = Float32, dtype2 =
    Int64"), as two constant tensors of two dtypes do (`_constants_joined_again`). Measured,
    written/lax probes `fix33b_cj_*` (seed 9940017): `range(2)`, `range(3)`, float first or
    int first, bool and int fail; one turn, one `if`, an `if`/`else`, int/int, float/float,
    a folded test, `y0` bound afresh in the body and `y0` unread after the loop compile.
    (Left: two such `if`s in a row, read between or not, fail too: `cj_intfloat_two_ifs*`.)"""
    if not (isinstance(left, av.Scalar) and isinstance(right, av.Scalar) and {left.py, right.py} in _JOINED_AGAIN):
        return False
    if not isinstance(node, ast.If) or name in bindings(node.orelse) or not _read_after(node, name, ctx):
        return False
    child: ast.AST = node
    parent = ctx.parent(node)
    while parent is not None and parent is not ctx.function and not is_function(parent):
        if type(parent) is ast.For and (range_count(parent.iter) or 0) >= 2:
            # carried from turn to turn: bound afresh in the body (`for ...: y0 = 1; if t:
            # y0 = 2.0`), each turn starts from the constant and compiles (probe
            # `fix33b_cj_intfloat_loop2_afresh`)
            return name not in bindings([st for st in parent.body if st is not child])
        child, parent = parent, ctx.parent(parent)
    return False


def _joined_twice(node: ast.If, ctx: Context) -> tuple[str, ast.AST] | None:
    """Two tensor `if`s in a row, without `else`, rebinding one name to constant numbers
    (`y0 = c0`, `if t1: y0 = c1`, `if t2: y0 = c2`, `y0` read after): the first join makes
    `y0` a variable of `c0`'s type, and the second join fails when `c2` has another type,
    unless `c2` is `c1` itself. Measured, written/lax probes `fix33b_cj_intfloat_two_ifs*`
    and `fix34b_ti_*` (both levels: "Type Join Failed: dtype1 = Float32, dtype2 = Int64"):
    (1, 2.0, 3.0), (1.0, 2, 3), (1, 2, 3.0), (1.0, 2.0, 3), (True, 2, 3) fail, read between
    the two `if`s or not; (1, 2.0, 5) and (1, 2.0, 2.0) compile at LAX (STRICT refuses the
    variable in `x + y0`, which MS131's family reports or misses); an `else` on the second
    `if`, or `y0` unread after it, compile. Inside a loop the turns join too
    (`_numbers_joined_again`): not asked there."""
    second = _constant_number_bound(node)
    if second is None:
        return None
    name, c2 = second
    parent, block, index = block_of(node, ctx)
    if index < 0 or _in_loop(node, ctx):
        return None
    first = _previous_binding_if(block, index, name)
    if first is None:
        return None
    bound = _constant_number_bound(first)
    if bound is None or bound[0] != name:
        return None
    c1 = bound[1]
    c0 = preceding_values(first, ctx, {name}).get(name)
    if type(c0) is not ast.Constant or type(c0.value) not in _NUMBER_TYPES:
        return None
    if type(c2.value) is type(c0.value) or (type(c2.value) is type(c1.value) and c2.value == c1.value):
        third = _third_join(node, name, block[index + 1 :], ctx)
        if third is None or {type(c0.value).__name__, type(c1.value).__name__} not in _JOINED_AGAIN:
            return None
        if not _both_run_time(node, first, ctx):
            return None
        return (
            f"`{name}`: `{ast.unparse(c0)}` ({_NUMBER_DTYPES[type(c0.value)]}) joined with `{ast.unparse(c1)}` "
            f"({_NUMBER_DTYPES[type(c1.value)]}) under the tensor `if` on line {first.lineno} cannot be joined "
            f"again here while the tensor `if` on line {third.lineno} rebinds it once more",
            node,
        )
    if not _read_after(node, name, ctx) or not _both_run_time(node, first, ctx):
        return None
    return (
        f"`{name}`: after the tensor `if` on line {first.lineno}, `{name}` is a variable of "
        f"{_NUMBER_DTYPES[type(c0.value)]} (its value `{ast.unparse(c0)}` before it), which cannot join the "
        f"{_NUMBER_DTYPES[type(c2.value)]} `{ast.unparse(c2)}`",
        node,
    )


def _both_run_time(second: ast.If, first: ast.If, ctx: Context) -> bool:
    """Are both `if` tests decided at run time (tensor tests MindSpore does not fold)? Asked
    last, after the cheap syntactic checks, since it runs the flow model."""
    a = analyzer(ctx)
    return run_time_test(second.test, a, ctx) and run_time_test(first.test, a, ctx)


def _third_join(node: ast.If, name: str, rest: list[ast.stmt], ctx: Context) -> ast.If | None:
    """The next statement of `rest` binding `name` when it is a third tensor `if` without
    `else` rebinding it to a number (`y0 = 1`, `if t1: y0 = 2.0`, `if t2: y0 = 5`, `if t3:
    y0 = 7`) and `name` is read after it: then the second join fails at both levels, with
    any numbers on the second and third `if`s, returned or computed with (measured, written/
    lax probes `fix35d_ti_three_ifs_*`: "Type Join Failed: dtype1 = Int64, dtype2 =
    Float32" at the second `if`; all ints compile)."""
    for st in rest:
        if name not in bindings([st]):
            continue
        if type(st) is not ast.If or st.orelse:
            return None
        bound = _constant_number_bound(st)
        if bound is None or bound[0] != name or not _read_after(st, name, ctx):
            return None
        return st if run_time_test(st.test, analyzer(ctx), ctx) else None
    return None


#: Python number types of a constant joined by `_joined_twice`
_NUMBER_TYPES = (bool, int, float)
#: the graph dtype each of them becomes, as MindSpore's join messages name it
_NUMBER_DTYPES = {bool: "Bool", int: "Int64", float: "Float32"}


def _previous_binding_if(block: list[ast.stmt], index: int, name: str) -> ast.If | None:
    """The last statement before `block[index]` that binds `name`, when it is an `if`
    without `else` (the first of two joins of `name`)."""
    for st in reversed(block[:index]):
        if name in bindings([st]):
            return st if type(st) is ast.If and not st.orelse else None
    return None


def _strict_cross_joined(node: ast.If, ctx: Context) -> tuple[str, ast.AST] | None:
    """STRICT only: a name joined from constant numbers of two types under a tensor `if`
    (`y0 = 1`, `if t: y0 = 2.0`) and then joined once more where the join succeeds, and
    computed with afterwards (`x + y0`, `x * y0`, `x + y0 * 2`): MindSpore keeps it a
    variable that an interpreted script adds, which STRICT refuses ("When handling script
    '__input_key_0__ + __input_key_1__ in graph mode', the inputs should be constant").
    The second join is a second tensor `if` without `else` rebinding the name to a number
    of the first value's type, or to the first `if`'s value itself (`_joined_twice` is the
    failing rest), or the back edge of a one-turn `for` around the `if` (`range(N)`, N >= 2,
    fails at both levels: `_numbers_joined_again`). Measured, written/lax probes
    `fix33b_cj_intfloat_loop1`, `fix34b_ti_int_float_*`, `fix35d_ti_*`: (1, 2.0, 5), (1, 2.0,
    2.0), (1.0, 2, 5.0), (1, True, 5), read between the two `if`s or not, and the one-turn
    loop of (1.0, 2) are refused; one `if` alone, int/int, `return x, y0` and `y0` unread
    compile. LAX compiles them all."""
    if not (ctx.scope and ctx.scope.strict) or node.orelse:
        return None
    second = _constant_number_bound(node)
    if second is None:
        return None
    name, c2 = second
    parent, block, index = block_of(node, ctx)
    if index < 0:
        return None
    loop = _one_turn_loop(node, ctx)
    if loop is not None:
        # the `if` is the first join; the loop's back edge the second
        if name in bindings([st for st in loop.body if st is not node]):
            return None
        c0, c1 = preceding_values(loop, ctx, {name}).get(name), c2
        after: ast.stmt = loop
    else:
        if _in_loop(node, ctx):
            return None
        first = _previous_binding_if(block, index, name)
        bound = _constant_number_bound(first) if first is not None else None
        if first is None or bound is None or bound[0] != name:
            return None
        c1 = bound[1]
        c0, after = preceding_values(first, ctx, {name}).get(name), node
        if type(c0) is not ast.Constant:
            return None
        if not (type(c2.value) is type(c0.value) or (type(c2.value) is type(c1.value) and c2.value == c1.value)):
            return None  # a failing second join is `_joined_twice`'s
        if not run_time_test(first.test, analyzer(ctx), ctx):
            return None
    if type(c0) is not ast.Constant or type(c0.value) not in _NUMBER_TYPES or type(c1.value) is type(c0.value):
        return None
    if {type(c0.value).__name__, type(c1.value).__name__} not in _JOINED_AGAIN:
        return None
    read = _computed_after(after, name, ctx)
    if read is None or not run_time_test(node.test, analyzer(ctx), ctx):
        return None
    how = f"the one-turn loop on line {loop.lineno}" if loop is not None else f"the tensor `if` on line {node.lineno}"
    return (
        WholeMessage(
            f"`{name}` joins `{ast.unparse(c0)}` ({_NUMBER_DTYPES[type(c0.value)]}) with `{ast.unparse(c1)}` "
            f"({_NUMBER_DTYPES[type(c1.value)]}) under a tensor `if` and again at {how}: under STRICT it is then a "
            f"variable that can only be handed out, and computing with it (line {read.lineno}) runs an "
            f"interpreted script that needs constant inputs (MindSpore: the inputs should be constant, but "
            f"found variable); give `{name}` one number type on every path"
        ),
        node,
    )


class WholeMessage(str):
    """A finding's reason that is its whole message (not a type mismatch of two branches)."""


def _one_turn_loop(node: ast.If, ctx: Context) -> ast.For | None:
    """The `for ... in range(1)` whose body holds `node` directly, or None."""
    parent = ctx.parent(node)
    if type(parent) is ast.For and node in parent.body and range_count(parent.iter) == 1:
        return parent
    return None


def _computed_after(node: ast.stmt, name: str, ctx: Context) -> ast.Name | None:
    """A read of `name` after `node` (in its function, on a later line) that computes with
    it: not the value of a `return`, alone or as an item of a returned tuple."""
    func = ctx.function
    if func is None or not _read_after(node, name, ctx):
        return None
    end = node.end_lineno or node.lineno
    for n in own_nodes(func):
        if type(n) is ast.Name and n.id == name and type(n.ctx) is ast.Load and n.lineno > end:
            p = ctx.parent(n)
            if type(p) is ast.Tuple:
                p = ctx.parent(p)
            if type(p) is not ast.Return:
                return n
    return None


def _constant_number_bound(node: ast.If) -> tuple[str, ast.Constant] | None:
    """(name, constant) when the body of `node` binds exactly one name, once, by a plain
    `name = <number constant>`."""
    found: tuple[str, ast.Constant] | None = None
    for st in node.body:
        if type(st) is ast.Assign and len(st.targets) == 1 and type(st.targets[0]) is ast.Name:
            if found is not None or type(st.value) is not ast.Constant or type(st.value.value) not in _NUMBER_TYPES:
                return None
            found = (st.targets[0].id, st.value)
        elif type(st) is not ast.Expr:
            return None
    return found


def _in_loop(node: ast.stmt, ctx: Context) -> bool:
    """Is `node` inside a `for` / `while` of its function?"""
    parent = ctx.parent(node)
    while parent is not None and not is_function(parent):
        if type(parent) in (ast.For, ast.While, ast.AsyncFor):
            return True
        parent = ctx.parent(parent)
    return False


#: the pairs of constant number types measured to fail when joined again (`_numbers_joined_again`)
_JOINED_AGAIN = ({"int", "float"}, {"bool", "int"})


def _constants_joined_again(node: ast.If, name: str, error: av.JoinError, ctx: Context) -> bool:
    """Is the LAX-only join of two constant tensors of two dtypes at `node` (`y =
    ops.zeros((2, 3))`, then `if t: y = ops.zeros((2, 3), ms.int32)`, no `else`) made inside
    a `for` over `range(N)`, N >= 2? Measured (written/lax probes `fix31c_cj_*`, fresh seed
    11700144): LAX holds one such join as a Python object and compiles, also two of them in
    a row written out (`cj_two_ifs_read_between`, `cj_two_names`), but in such a loop it
    fails at both levels ("Type Join Failed: dtype1 = Int32, dtype2 = Float32"), even with
    `y` bound afresh at the top of each turn; a loop of one turn, an `if`/`else`, a `y` not
    read after the `if` compile. (Left: two `if`s in a row rebinding one name, unread in
    between, also fail: probe `cj_two_ifs`.)"""
    if not error.reason.startswith("constant tensors") or name in bindings(node.orelse):
        return False  # (an `else` binding it too: the value kept from before is not joined)
    parent = ctx.parent(node)
    while parent is not None and parent is not ctx.function and not is_function(parent):
        if type(parent) is ast.For and (range_count(parent.iter) or 0) >= 2:
            return True
        parent = ctx.parent(parent)
    return False




def closure_dead_binding(node: ast.If, ctx: Context) -> tuple[str, ast.stmt, str] | None:
    """A name a tensor-dependent `if` of a nested function binds on one path and nobody reads
    afterwards: (name, binding statement, why the paths differ), or None.

    Measured on 2.10 (closures in `construct`, in `@ms.jit` functions, in helpers and in
    `jit_class` methods): such a dead name fails to join at every level ("Abstract type
    AbstractTuple cannot join with AbstractTensor") when it is bound on one path only to
    anything but a literal or another name (`y = x.max()`, `y = x.shape[0]`, `y = [x]`;
    `y = x` compiles), or on both
    paths to a value and a literal (`x.max()` / `None`, / `0`) or to tensors of two dtypes.
    It compiles when the name is read after the `if` or later in its branch, when the branch
    returns, when both paths bind literals or tensors of one dtype, and outside nested
    functions (the dead name is dropped there)."""
    if returns_in(node.body) or returns_in(node.orelse):
        return None
    body, orelse = _branch_bindings(node.body, ctx), _branch_bindings(node.orelse, ctx)
    if not body and not orelse:
        return None
    func = ctx.function
    if func is None or not analyzer(ctx).kind(node.test).dynamic:
        return None
    vals = values(ctx)
    for name, st in sorted({**orelse, **body}.items(), key=lambda item: item[1].lineno):
        if _read_later(name, st, node, func, ctx):
            continue
        here = body.get(name) or orelse[name]
        there = orelse.get(name) if name in body else None
        if there is None:
            if _new_value(here):
                return name, here, "bound on one path only"
            continue
        if _unpacks(here) or _unpacks(there):
            continue  # an item of an unpacked value on either path: not measured, not compared
        a, b = _bound_value(here), _bound_value(there)
        if a is None or b is None or not (_new_value(here) or _new_value(there)):
            continue
        if isinstance(a, ast.Constant) or isinstance(b, ast.Constant):
            return name, here, "a value on one path, a literal on the other"
        left, right = vals.of(a), vals.of(b)
        if isinstance(left, av.Tensor) and isinstance(right, av.Tensor):
            error = av.join(left, right, av.Site.PHI).error
            if error is not None:
                return name, here, error.reason
    return None


def _branch_bindings(block: list[ast.stmt], ctx: Context) -> dict[str, ast.stmt]:
    """The names a branch binds by assignment (first binding each), looking into `if`s folded
    while compiling but not into loops, `with`, or tensor-dependent `if`s (visited on their own)."""
    out: dict[str, ast.stmt] = {}
    for st in block:
        if isinstance(st, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = st.targets if isinstance(st, ast.Assign) else [st.target]
            if isinstance(st, ast.AnnAssign) and st.value is None:
                continue
            for t in targets:
                if isinstance(t, ast.Name):
                    out.setdefault(t.id, st)
                elif isinstance(t, (ast.Tuple, ast.List)):
                    # each name unpacked is a new value MindSpore takes out of the tuple, also
                    # from a display of names (`a, b = y, x`; measured, written/lax probes
                    # `genfresh37_cu2_tensor_if_*`, `genfresh37_cu_tensor_if_*`: `out, vjp_fn =
                    # ms.vjp(f, x)`, `vals, idx = ops.sort(x[0])` with one name unused fail
                    # the join; fresh v6 seed 12001044)
                    for name in _unpacked(t):
                        out.setdefault(name, st)
        elif isinstance(st, ast.If) and not analyzer(ctx).kind(st.test).dynamic:
            for name, inner in {**_branch_bindings(st.orelse, ctx), **_branch_bindings(st.body, ctx)}.items():
                out.setdefault(name, inner)
    return out


def _unpacked(t: ast.Tuple | ast.List) -> list[str]:
    """The names an unpacking target binds, nested ones too (`(loss, aux), grads = ...`)."""
    out: list[str] = []
    for e in t.elts:
        if isinstance(e, ast.Name):
            out.append(e.id)
        elif isinstance(e, (ast.Tuple, ast.List)):
            out.extend(_unpacked(e))
        elif isinstance(e, ast.Starred) and isinstance(e.value, ast.Name):
            out.append(e.value.id)
    return out


def _unpacks(st: ast.stmt) -> bool:
    return isinstance(st, ast.Assign) and any(isinstance(t, (ast.Tuple, ast.List)) for t in st.targets)


def _bound_value(st: ast.stmt) -> ast.expr | None:
    """What a binding statement gives its name (an augmented one: the name itself, whose
    kind `+=` keeps; never a node made here, as values are memoised by node identity)."""
    if isinstance(st, ast.AugAssign):
        return st.target
    return getattr(st, "value", None)


def _new_value(st: ast.stmt) -> bool:
    """Does the binding compute a value (`y = x.max()`, `y += 1`), rather than bind a literal
    or another name (`y = 0`, `y = x`: measured to compile; the branch makes no new node)?"""
    if isinstance(st, ast.AugAssign):
        return True
    e = getattr(st, "value", None)
    if isinstance(e, ast.UnaryOp) and isinstance(e.op, (ast.USub, ast.UAdd)):
        e = e.operand
    return e is not None and not isinstance(e, (ast.Constant, ast.Name))


def _read_later(name: str, st: ast.stmt, node: ast.If, func: ast.AST, ctx: Context) -> bool:
    """Is `name` read after its binding `st` (later in the function, or anywhere in a loop
    around the `if`), or declared global/nonlocal? Reads inside `st` itself do not count."""
    end = (st.end_lineno or st.lineno, st.end_col_offset or 0)
    for n in ast.walk(func):
        if isinstance(n, (ast.Global, ast.Nonlocal)) and name in n.names:
            return True
        if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load) and (n.lineno, n.col_offset) >= end:
            return True
    p = ctx.parent(node)
    while p is not None and p is not func:
        if isinstance(p, (ast.For, ast.AsyncFor, ast.While)) and any(
            isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load) for n in ast.walk(p)
        ):
            return True
        p = ctx.parent(p)
    return False


def dtype_cast_error(node: ast.stmt, name: str, left: av.Value, right: av.Value, ctx: Context) -> av.JoinError | None:
    """Two different dtypes joined into `name` join (a variable dtype), but a cast to it after
    `node` needs a constant one: MindSpore fails at every level (measured on 2.10: `d = x.dtype
    if t else ms.int32` then `ops.cast(x, d)` or `x.astype(d)`; one dtype on both paths, or
    `d` never used by a cast, compiles)."""
    if not (isinstance(left, av.DType) and isinstance(right, av.DType)) or left == right:
        return None
    func = ctx.function
    end = node.end_lineno or node.lineno
    for n in ast.walk(func) if func is not None else ():
        if type(n) is not ast.Call or n.lineno <= end:
            continue
        f = n.func
        if isinstance(f, ast.Attribute) and f.attr in ("astype", "to"):
            target = n.args[0] if n.args else None
        elif (ctx.qualname(f) or "").startswith("mindspore.") and (ctx.qualname(f) or "").lower().endswith("cast"):
            target = n.args[1] if len(n.args) > 1 else None
        else:
            continue
        if isinstance(target, ast.Name) and target.id == name:
            return av.JoinError(
                f"a dtype joined from both paths ({left.name or 'a dtype'} / {right.name or 'a dtype'}) is cast to at line {n.lineno}",
                "Failed to infer for primitive:DtypeToEnum",
            )
    return None


@rule(code="MS119", name="branch-type-mismatch", severity="error", family="graphmode")
class BranchTypeMismatch(GraphRule):
    """## What it does
    Flags the places where MindSpore joins two values of a tensor-dependent branch and the
    join fails: the results of an `if` (its returns, or the continuation after it), a name
    bound differently on the two paths and read afterwards (also `y = 0` followed by
    `if ...: y = x`), a conditional expression, `and` / `or`, and a value carried around a
    tensor-dependent `while` (also a Python number grown by a tensor with `total += t`), or
    around a `for` over a tensor whose length is known only at run time (`for c in
    ops.unique(y)[0]`, a masked select: compiled as a loop, not unrolled).
    Failing joins: a Tensor against a tuple, list, number or str;
    tensors of different dtypes (`Type Join Failed: dtype1 = Int32, dtype2 = Float32`),
    also when the dtype follows from a cast (`astype`, `ops.cast`, the torch-style
    `.int()`, `.long()`, `.float()`, `.half()`, `.bool()`...), from an index-returning
    `ops` function (`ops.argmax` gives Int64, `ops.multinomial`, `ops.argsort`,
    `ops.argmin` give Int32: a sampled token against a greedy one) or from MindSpore's type
    promotion (two tensors MindSpore computes from constants, `ops.zeros((2, 3))` against
    `ops.zeros((2, 3), ms.int32)`, join into a Python object at LAX: the STRICT level refuses
    the interpreted arithmetic on it, and only the graph's own output fails at both, as does
    such a join made by an `if` without `else` in a `for` over `range(N)`, N >= 2); a tuple
    against a list (also the gradients an `nn.Optimizer` subclass's `construct` passes to a
    helper that rebinds them to a list under a tensor `if`; from a plain Cell or a jit
    function the same helper compiles); returned Python numbers of different types, also a Python number
    bound to a name on one path and a number of another type known only at run time on the
    other (`acc = 0.0` / `acc = (p == y).sum().item()`, an Int64 `.item()`; `.item()` of a
    float32 tensor, or `... .item() / n`, is Float32 and joins with `0.0`); an item of a
    dict stored on both paths (`results[name] = 0.0` / `results[name] = k.item()`, the
    dict read afterwards), joined as returned values are; a tensor, number or str in a
    tuple or list against None there on the second path (`return probs, loss` in the `if`,
    `return probs, None` after it: `dtype1 = Float32, dtype2 = Float64`); a dtype joined
    from two paths and then given to `ops.cast` / `astype` (`DtypeToEnum`); and, under
    STRICT only, None against a value (bound to a name, returned first, inside a tuple).
    Inside a nested function (a closure in compiled code), also a name the `if` binds and
    nobody reads afterwards (also one of the names an unpacking binds: `out, vjp_fn =
    ms.vjp(f, x)` with `out` unused), bound on one path only (to anything but a literal), or to a
    value on one path and a literal or a tensor of another dtype on the other: a closure's
    branches keep such names, and MindSpore cannot join them. Under LAX a side holding a
    Python object (a JIT Fallback result, also one a call passes in) joins with anything and
    is not reported. An `else` that returns while the body falls through counts too: its
    return meets the returns after the `if` (`if t: a = x * 2 else: return 0` then
    `return a`). A condition on the first dimension of a tensor whose shape is known only
    at run time is a branch of the graph too, not folded: `sel.shape[0] == 0`, `len(sel)`,
    `sel.size` with `sel = x[mask]`, `ops.nonzero(m)`, `ops.masked_select(...)` (measured,
    written/heldout17b probes `st18_dyn_*`: `return main, None` beside `return main, aux`
    fails under STRICT, a Python float beside a tensor under both levels; `sel.shape[1]`,
    a static dimension, folds).
    A loop left early counts as well: a Python number bound before a `for`
    (`total = 0.0`), a tensor-dependent `if ...: break` (or `continue`, also on `.item()`)
    before the loop makes it a tensor (`total += loss`), and the number returned right
    after the loop (alone or in a returned tuple): the path that leaves on the first turn
    keeps the number (measured, written/heldout18b probes `fe18b_ex_*`; accumulating
    before the `if`, or combining the result with a tensor before returning it, compiles).
    Lists grown in an unrolled `for` (over `range(N)`, N >= 2) are joined item by item too:
    with `if <tensor>: out.append(a); break` (or `if <tensor>: break` alone) and
    `out.append(b)` in the body, `out` returned right after the loop (alone, in a tuple or
    list display, `out[-1]`) holds lists of different lengths on the ways out of the loop,
    so every item, those of the display it started as included, must join with every other:
    a str marker against an `.item()` int or a tensor, `-1.0` against an Int64 `.item()`,
    `["<s>"]` grown with ints, fail at both levels; `-1` against `.item()`, two strs, the
    list measured with `len`, stacked or not returned compile. With `continue` instead of
    `break`, or an `else` that appends `b`, the two lists meet before the next turn appends
    again, and fail even when the list is not read afterwards (measured, written/heldout38b
    case `greedy_decode_eos_item_break_single`, probes `fix38b_ej_*`, `fix39b_ej_*`). Under
    LAX also `"".join(word)` after such a loop, `word = []` grown only after the `if ...:
    break` with strs picked by a run-time index (`self.character[c]`): the path that leaves
    before any append makes the constant `""`, the others a Python object, and inside a
    returned tuple or dict, or a returned list it is appended to, they do not join ("Type
    Join Failed: dtype1 = String, dtype2 = Any"); returned alone, in a list display, or as
    `words[0]` it compiles (written/heldout38c probes `fix38c_brk*`, `fix39b_sj_*`).
    Under LAX, `==` / `!=` between a Python list and a number is a branch of the graph as
    well: MindSpore has no graph overload for it and interprets it at run time, so `if f !=
    -1: x = [x, y[0]]` with `f` a list joins a list with the tensor `x` held before (the
    YOLOv5 `froms` loop: `f = self.froms[i]` over a table mixing ints and lists, with
    `isinstance(f, int)` in the branch folded for the list's turn). STRICT folds it; a
    tuple, a str, an int, a list against a list or None compare while compiling.
    Python numbers of two types joined under tensor `if`s without `else` (`y0 = 1`, `if t1:
    y0 = 2.0`): a second such `if` rebinding the name to a number of another type than the
    first value's fails, and so does the second of three such `if`s whatever their numbers;
    under STRICT, where the second join succeeds (`if t2: y0 = 5`, or the back edge of a
    one-turn `for` around the first `if`), the name is a variable STRICT can only hand out,
    and computing with it (`x + y0`, `x * y0`) is refused ("the inputs should be constant, but
    found variable"); `return x, y0` and one `if` alone compile.

    ## Why is this bad?
    Both sides of a tensor-dependent branch are compiled and their results are joined into
    one abstract value. MindSpore stops with `TypeError: Cannot join the return values of
    different branches, perhaps you need to make them equal.` at every syntax level. Results
    that differ only in shape are fine, tuples of different lengths join (unless their
    elements differ in dtype or rank, or mix tensors and numbers), and branches on
    shapes or Python constants are folded while compiling. A name nobody reads after the
    branch is not joined, and two constants bound to a name (`y = 1` / `y = 2.0`) are not
    either: the code after the branch is compiled once per constant, and they only meet
    where the name itself is returned. LAX (not STRICT) also joins a Python number with a
    random draw made in the branch (`noise = ops.randn_like(x)` / `noise = 0`, then
    `x + sigma * noise`), unless the name is returned as is or the `if` is in a loop.
    See docs/graphmode-values.md for the whole table.

    ## Example
    ```python
    def construct(self, x):
        if x.sum() > 0:
            return x
        return (x, x)
    ```

    ## Use instead
    Return the same structure on every path:
    ```python
    def construct(self, x):
        if x.sum() > 0:
            return (x, x * 0)
        return (x, x)
    ```

    `and` / `or` join their operands the same way (`a and b` is `b if a else a`): with a
    tensor operand first, a later Python value (`x.sum() > 0 and n > 2`, `while t < 30 and
    i < 5`) cannot be joined with it either. Combine tensors with `&` / `|` or test the
    Python condition separately. A Python value carried around a tensor-dependent `while`
    (`i += 1` in its body) is a variable there, so `while i < n and delta > tol` fails too.
    A size read of a carried tensor is not (`while seq.shape[0] < 4 and seq.sum() < t`,
    `len(seq)`, `seq.size`): the loop is specialised on its shapes, so the read folds, unless
    the body gives the tensor a shape known only at run time (a boolean mask, `nonzero`...).
    Under LAX a tensor operand whose names enter the loop as constants (`se = Tensor(1.0)`)
    and that the body last rebinds to a JIT Fallback value (`se = (t / np.sqrt(n)).max()`)
    is not reported: the entry test folds, the body's test is a Python object.

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 1: tensor-dependent branches yielding different dtype, or Tensor vs tuple.
    - Measured on MindSpore 2.10: a str (or a list / tuple of str) indexed by a tensor is a
      Python str under LAX (JIT Fallback), which joins with a str (written/heldout18b case
      `r2_ocr_charset_index_tensor_str`, probes `fe18b_stj_*`); a loop left early by a
      tensor-dependent `break` / `continue` with a Python-number accumulator returned after
      it (case `rl_ppo_kl_early_stop_item`, probes `fe18b_ex_*`, written/reach2 probe
      `ct_float_total_continue_return`).
    - An unused name unpacked in a tensor-dependent `if` of a closure (`l, g =
      ms.value_and_grad(f)(x)`, `out, vjp_fn = ms.vjp(f, x)`, `vals, idx = ops.sort(x[0])`,
      `a, b = y, x`): written/lax probes `genfresh37_cu_*`, `genfresh37_cu2_*` (both names
      read compiles), fresh v6 seed 12001044.
    - The join table: `mindspore/core/abstract/abstract_value.cc` (`AbstractBase::Join` and
      its overrides), measured per join kind at LAX and STRICT in
      tests/npu_lsp/fixtures/joins/joins.py.
    - Measured on MindSpore 2.10 with the written/zoo probes `ld23_ifexp_*` and `z22_layerdrop_*`
      (Hugging Face LayerDrop): `skip = True if p < self.layerdrop else False` is a Python
      bool known only at run time, so `not skip or synced` (a Python bool) compiles and `skip
      or big` (a tensor) fails ("Cannot join ..."); `k = 2 if t > 0 else 0.5` compiles under
      STRICT when only returned, and is refused in arithmetic ("the inputs should be
      constant").
    - Measured on MindSpore 2.10: `x.sum() > 0 and n > 2` (n a constant) and
      `while x.sum() < 30 and i < 5` are rejected with `Cannot join the return values of
      different branches ... dtype1 = Bool, dtype2 = Any`; two tensor operands are accepted;
      `x.sum() > 0 and "a" or "b"` likewise (`dtype1 = String, dtype2 = Any`), even unused.
    - Measured on MindSpore 2.10 with the written/heldout17b probes `fe17_wh_*` (case
      `r2_bayes_mc_samples_while_converge`): `while se > tol and n < m` (either order)
      compiles under LAX when `se` enters as `Tensor(1.0)` / `ops.ones(())` /
      `Tensor(np.array(1.0))` and the body ends with `se = ...np.sqrt(n)...` or
      `Tensor(t.asnumpy())...`; `se = x.sum()` before the loop, `n ** 0.5` in the body or
      a constant-only `np.sqrt(2.0)` fail ("dtype1 = Bool, dtype2 = Any").
    - Measured on MindSpore 2.10 with the `reach2` probes bk_*: under STRICT, `idx = None`
      then `if x[i] < 0: idx = i` in an unrolled `for i in range(4)` (the loop variable is
      a constant int) fails when `idx` is returned or used after the loop; with `break`
      (or `continue`) after the binding and the first statement reading `idx` after the
      loop reading it only under a None test (`is`, `is not`, `==`, `!=`; either side of a
      conditional expression, famc probes `nj_*`), it compiles.
    - Measured on MindSpore 2.10 with the written/heldout30a cases `r2_parse_froms_*`,
      `parse_yolo_list_outputs_none`, `parse_cell_attrs_i_f_yolov5` and probes `fix30e_ne_*`,
      `fix30e_eq_*`, `fix30e_loop_*`: a list compared with a number by `==` / `!=` fails the
      join at LAX only; `equal_impl.py` / `not_equal_impl.py` (mindspore/ops/composite/
      multitype_ops) register no (List, Number) overload.
    """

    def _bool_op(self, node: ast.BoolOp, ctx: Context) -> Iterable[Diagnostic]:
        for d in self._bool_op_join(node, ctx):
            if not (ctx.scope and ctx.scope.strict) and (
                any(joins_anything_at_lax(v, ctx.function, ctx) for v in node.values) or _folds_then_opaque(node, ctx)
            ):
                return  # LAX joins a Python object (a JIT Fallback value) with anything
            yield d
            return

    def _bool_op_join(self, node: ast.BoolOp, ctx: Context) -> Iterable[Diagnostic]:
        a = analyzer(ctx)
        vals = values(ctx)
        seen_tensor: ast.expr | None = None
        variable: tuple[ast.expr, str] | None = None
        op = "and" if isinstance(node.op, ast.And) else "or"
        for operand in node.values:
            if isinstance(operand, ast.BoolOp) and any(a.kind(v) == Kind.CONST for v in operand.values[:-1]):
                # `(len(x) == 3) and x.max() or 0`: MindSpore folds the constant, so the inner
                # operation gives either it or the tensor, which depends on values (an input's
                # shape) not known here (measured: famc probes bo_*, accepted for a (2, 3) input,
                # "Cannot join" for (3, 3))
                return
            kind = a.kind(operand)
            if kind == Kind.TENSOR:
                if seen_tensor is None and variable is not None:
                    # `b if a else a` with `a` a Python bool that is not a constant: not
                    # folded, so the tensor `b` meets the bool `a` (AbstractTensor vs AbstractScalar)
                    first, name = variable
                    why = (
                        f"`{name}` changes around the tensor-dependent `while`, so the Python value is a variable"
                        if name
                        else "the Python value is known only at run time"
                    )
                    yield ctx.diagnostic(
                        self,
                        node,
                        f"`{op}` joins the Python value `{ctx.segment(first)}` with the tensor `{ctx.segment(operand)}`; {why} and graph mode cannot join it with a Tensor (make it a tensor and use `&`/`|`, or test it separately)",
                    )
                    return
                if seen_tensor is not None:
                    # `t1 and t2` is `t2 if t1 else t1`: two tensors join by dtype (a side
                    # whose value is a Python scalar, e.g. `stop` bound to False and then to
                    # `stop or crit(ids)`, may be a constant MindSpore folds: written/heldout26a
                    # probes `fix26c_crit_*_or_loop` compile; a tuple or dict meeting a tensor
                    # fails, difftest seeds 10700197, 9950186)
                    left, right = vals.of(seen_tensor), vals.of(operand)
                    error = av.join(left, right, av.Site.BOOLOP).error
                    if (
                        error is not None
                        and not error.strict_only
                        and not isinstance(left, av.Scalar)
                        and not isinstance(right, av.Scalar)
                    ):
                        yield ctx.diagnostic(
                            self,
                            node,
                            f"`{op}` joins the tensors `{ctx.segment(seen_tensor)}` and `{ctx.segment(operand)}` of different types ({error.reason}); MindSpore cannot join them (use `&`/`|` on tensors of one dtype)",
                        )
                        return
                seen_tensor = seen_tensor or operand
            elif seen_tensor is None and variable is None and kind in (Kind.CONST, Kind.VAR) and _python_scalar(operand, a):
                carried = _loop_carried(operand, node, ctx)
                if carried is not None:
                    variable = operand, carried
                elif kind == Kind.VAR:
                    # `use = True if t > p else False`: a bool known only at run time
                    variable = operand, ""
            elif seen_tensor is not None and kind in (Kind.CONST, Kind.VAR) and (
                _python_scalar(operand, a)
                or _str_constant(operand)
                or type(operand) is ast.Tuple
                or (type(operand) is ast.Call and isinstance(vals.of(operand), av.Scalar))
            ):
                # `t and "a"` is `"a" if t else t`: measured, a str meets the tensor too
                # ("Type Join Failed: dtype1 = String, dtype2 = Any"), and so does a tuple
                # display (`(x[0, 0] < 0) and (2, 3) or x.shape`: "AbstractTuple cannot join
                # with AbstractTensor" at both levels, written/lax probes `fix32b_gj_tuple_*`;
                # fresh v4 seed 9910014)
                what = "str" if _str_constant(operand) else "tuple" if type(operand) is ast.Tuple else "bool"
                yield ctx.diagnostic(
                    self,
                    node,
                    f"`{op}` joins the tensor `{ctx.segment(seen_tensor)}` with the Python value `{ctx.segment(operand)}`; graph mode cannot join a Tensor with a Python {what} (use `&`/`|` on tensors or test them separately)",
                )
                return

    def _if_exp(self, node: ast.IfExp, ctx: Context) -> Iterable[Diagnostic]:
        vals = values(ctx)
        left = vals.of(node.body)
        right = vals.of(node.orelse) if left.known else av.UNKNOWN
        if not right.known:
            return
        error = av.join(left, right, av.Site.IFEXP).error
        strict = bool(ctx.scope and ctx.scope.strict)
        parent = ctx.parent(node)
        if error is None and isinstance(parent, ast.Return):
            error = _none_out_of_branch(left, right)
        elif (
            error is None
            and isinstance(parent, ast.Assign)
            and len(parent.targets) == 1
            and isinstance(parent.targets[0], ast.Name)
        ):
            name = parent.targets[0].id
            error = dtype_cast_error(parent, name, left, right, ctx)
            if error is None and (none := _none_out_of_branch(left, right)) is not None and _returned_directly(parent, name, ctx):
                error = none  # (the cheap test first: the other walks the function)
        if error is None or not error.applies(strict):
            return
        if not analyzer(ctx).kind(node.test).dynamic and (strict or compared_list(node.test, ctx.function, ctx) is None):
            return  # (under LAX, `==` / `!=` of a list and a number is a run-time value)
        if (
            not strict
            and isinstance(parent, ast.Assign)
            and len(parent.targets) == 1
            and isinstance(parent.targets[0], ast.Name)
            and lax_random_scalar_join(parent, parent.targets[0].id, (left, right), (node.body, node.orelse), ctx)
        ):
            return
        if (
            isinstance(parent, ast.Assign)
            and len(parent.targets) == 1
            and isinstance(parent.targets[0], ast.Name)
            and not _read_after(parent, parent.targets[0].id, ctx)
        ):
            return  # `y = a if t else b` with `y` never read: the join is dropped
        if strict and error.strict_only and isinstance(left, av.Scalar) and _only_returned(node, ctx):
            return
        yield ctx.diagnostic(
            self,
            node,
            f"the two values of this tensor-dependent conditional expression have different types ({error.reason}); MindSpore cannot join them",
        )

    def _while(self, node: ast.While | ast.For, ctx: Context) -> Iterable[Diagnostic]:
        """Values carried around a tensor-dependent `while` (or a `for` over a tensor whose
        length is known only at run time, which MindSpore compiles as such a loop, not
        unrolled): the value before the loop meets the value the body leaves for the next
        turn. Measured (written/heldout17a probes `fe19b_fd_*`): `loss = 0.0` then `loss =
        loss + t` (or `+=`) in `for c in ops.unique(y)[0]` fails ("Cannot join ...
        AbstractTensor cannot join with AbstractScalar"); started as a tensor, or over a
        tensor of static shape (unrolled), it compiles."""
        assigned = _assigned(node.body)
        grown = _augmented(node.body)
        if not assigned and not grown:
            return
        before = preceding_values(node, ctx, set(assigned) | set(grown))
        if not before:
            return
        if isinstance(node, ast.While):
            if not analyzer(ctx).kind(node.test).dynamic:
                return
        elif not dynamic_shape(node.iter, ctx):
            return
        vals = values(ctx)
        strict = bool(ctx.scope and ctx.scope.strict)
        for name in sorted(before):
            left = vals.of(before[name])
            right: av.Value
            if name not in assigned:
                # `total += t` with `total = 0.0` before the loop: a Python number plus a
                # tensor leaves a tensor (measured: "Cannot join ... Type Join Failed" as for
                # `total = total + t`); other augmented values are left to the plain rule
                added = vals.of(grown[name]) if isinstance(left, av.Scalar) else av.UNKNOWN
                right = added if isinstance(added, av.Tensor) else av.UNKNOWN
            else:
                right = vals.of(assigned[name]) if left.known else av.UNKNOWN
            if not right.known or not _read_after(node, name, ctx):
                continue
            error = av.join(left, right, av.Site.LOOP).error
            if error is None or not error.applies(strict):
                continue
            if (
                type(node) is ast.While
                and isinstance(left, av.Scalar)
                and isinstance(right, av.Tensor)
                and _tensor_arithmetic_after(node, name, ctx)
            ):
                continue
            yield ctx.diagnostic(
                self,
                ctx.head_span(node),
                f"`{name}` changes type around this tensor-dependent `{'while' if type(node) is ast.While else 'for'}` ({error.reason}); MindSpore cannot join the value before the loop with the one its body leaves",
            )
            return

    nodes = (ast.If, ast.BoolOp, ast.IfExp, ast.While, ast.For, ast.Call)

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        # not a generator itself: the ~2,000 calls of a 5,000-line file that reach no
        # function of ours cost one lookup, not a generator each
        if type(node) is ast.Call:
            hit = ctx.cache.get("MS119.calls")
            sites, jit_names, _called = hit if hit is not None else _call_candidates(ctx)
            f = node.func
            if id(node) in sites or (type(f) is ast.Name and f.id in jit_names):
                return self._call(node, ctx)
            return ()
        if type(node) is ast.If:
            return self._if_node(node, ctx)  # (the walk's nodes are of `nodes`' exact types)
        if type(node) is ast.BoolOp:
            return self._bool_op(node, ctx)
        if type(node) is ast.IfExp:
            return self._if_exp(node, ctx)
        if type(node) is ast.While:
            return self._while(node, ctx)
        if type(node) is ast.For:
            # only a loop over a tensor of run-time length is compiled as a loop: its
            # iterable is a name or a call (`for c in present`, `for c in ops.unique(y)[0]`)
            it = node.iter
            if type(it) is ast.Name or type(it) is ast.Subscript or type(it) is ast.Call:
                return self._while(node, ctx)
            return ()
        return self._if_node(node, ctx)

    def file_calls(self, ctx: Context) -> frozenset[str] | None:
        # `check`'s test on a call, by the names of the calls it accepts
        return frozenset(_call_candidates(ctx)[2])

    def _if_node(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        # a list or `()`, not a generator: every `if` of compiled code comes here, and
        # each finds one diagnostic at most
        assert type(node) is ast.If
        if _nested(ctx):
            dead = closure_dead_binding(node, ctx)
            if dead is not None:
                name, st, reason = dead
                # at the binding, as MindSpore names it, unless it sits in a folded `if`
                # (whose unknown condition would hide the finding): then at this `if`
                direct = st in node.body or st in node.orelse
                return [ctx.diagnostic(
                    self,
                    st if direct else ctx.head_span(node),
                    f"`{name}` is bound in this tensor-dependent `if` of a nested function and never read afterwards ({reason}); "
                    "MindSpore cannot join the branches of such a closure (Type Join Failed: Abstract type AbstractTuple "
                    "cannot join with AbstractTensor); drop the unused binding",
                )]
        exit_join = loop_exit_join(node, ctx)
        if exit_join is not None:
            return [ctx.diagnostic(self, ctx.head_span(node), exit_join)]
        found = self._if(node, ctx, None)
        # (the test's shape first, inline: two type tests for most `if`s of the file)
        t = node.test
        if (
            not found
            and (type(t) is _COMPARE_T and type(t.ops[0]) in _EQUALITY or type(t) is _UNARY_T)
            and equality_with_number(t)
            and not (ctx.scope and ctx.scope.strict)
        ):
            listed = _list_compare_join(node, ctx)
            if listed is not None:
                name, reason = listed
                return [ctx.diagnostic(
                    self,
                    ctx.head_span(node),
                    f"`{ctx.segment(node.test)}` compares a Python list with a number: MindSpore has no graph overload for that, so under LAX it is interpreted at run time and this `if` becomes a branch of the graph; `{name}` is then {reason}, and MindSpore cannot join them (Type Join Failed); test `isinstance(..., int)` first or compare with a list",
                )]
        if not found:
            return ()
        reason, where = found
        # MindSpore names the false branch: the else block's return or first statement,
        # or the `if` itself when the false path is what follows it
        return [
            ctx.diagnostic(
                self,
                ctx.head_span(where) if isinstance(where, ast.If) else where,
                reason
                if isinstance(reason, WholeMessage)
                else f"branches of this tensor-dependent `if` produce different types ({reason}); MindSpore cannot join them",
            )
        ]

    def _call(self, node: ast.Call, ctx: Context) -> Iterable[Diagnostic]:
        """A call of the user's own function compiles it for this call's arguments (MindSpore
        specialises per call signature): a join that fails only with these values is reported
        here, at the call, naming the line inside the callee."""
        st = ctx.parent(node)
        if type(st) is ast.Expr and st.value is node:
            return  # a call as a statement: its result, so its returns, are never inferred
        vals = values(ctx)
        callee = vals.callee(node, ctx.function)
        if callee is None:
            return
        saved = ctx.scope, ctx.function
        ctx.scope, ctx.function = ctx.scopes.scope_for(callee) or saved[0], callee
        try:
            ifs = _joining_ifs(callee, ctx)
            env = vals.call_env(node, callee, saved[1]) if ifs else {}
            if not any(v.known for v in env.values()):
                return
            for if_node in ifs:
                found = self._if(if_node, ctx, env)
                if found and self._if(if_node, ctx, None) is None:
                    reason, where = found
                    message = (
                        f"this call compiles `{callee.name}` with arguments for which the branches of its tensor-dependent "
                        f"`if` (line {if_node.lineno}) produce different types ({reason}); MindSpore cannot join them"
                    )
                    break
            else:
                return
        finally:
            ctx.scope, ctx.function = saved
        yield ctx.diagnostic(self, node, message)

    def _if(self, node: ast.If, ctx: Context, env: Env | None) -> tuple[str, ast.AST] | None:
        # Structure first: only returns in a branch or a name bound on both paths can
        # disagree, and the tensor-dependence test below needs the function's data flow,
        # the dearest step of the analysis.
        before: dict[str, ast.expr] = {}
        # the `else` side first: most have no item store, and then the body is not scanned
        if node.orelse and (other := _item_stores(node.orelse)) and (stored := _item_stores(node.body).keys() & other.keys()):
            found = _dict_item_join(node, sorted(stored), ctx, env)
            if found is not None and run_time_test(node.test, analyzer(ctx), ctx):
                return found
        if not returns_in(node.body) and not returns_in(node.orelse):
            # `y = 0` then `if t: y = x`: the value bound before is the false path's (with
            # an `else`, the value of a path that leaves `y` alone); no data flow yet
            if node.orelse:
                # (the plain bindings first, as the join below needs them: when both paths
                # bind the same names, as most do, no name is left alone by one of them)
                mine, theirs = _assigned(node.body).keys(), _assigned(node.orelse).keys()
                before = _false_path_values(node, ctx, ctx.function) if mine != theirs else _NOTHING_BEFORE
                both = bool(mine & theirs)
            else:
                before, both = _false_path_values(node, ctx, ctx.function), False
            if not both:
                if not before:
                    return (_joined_twice(node, ctx) or _strict_cross_joined(node, ctx)) if env is None else None
                if not run_time_test(node.test, analyzer(ctx), ctx):
                    return None
        a = analyzer(ctx)
        # what the paths produce first: when they agree (the usual case) the condition's
        # kind, which can take solving every name it reads, is never needed
        found = self._returns(node, ctx, env) or self._assigns(node, ctx, before, env)
        if found is None and not node.orelse and env is None:
            return _joined_twice(node, ctx) or _strict_cross_joined(node, ctx)
        return found if found and run_time_test(node.test, a, ctx) else None

    @staticmethod
    def _returns(node: ast.If, ctx: Context, env: Env | None) -> tuple[str, ast.AST] | None:
        body = returns_in(node.body)
        where: ast.AST
        if not body:
            # `if c: a = t  else: return 0` then `return a`: the body falls through to the
            # returns after the `if`, which meet the `else`'s (MindSpore's test_join_failed
            # `test_if_branch_has_one_return`: "Cannot join the return values of different
            # branches" at both levels; written/mstests probes `p119_*`)
            other = returns_in(node.orelse)
            if not other or not terminates(node.orelse) or terminates(node.body):
                return None
            cont = false_path(node, ctx)
            if cont is None or not cont[0] or cont[1]:
                return None
            body, where = cont[0], min(other, key=lambda r: r.lineno)
        elif node.orelse:
            other = returns_in(node.orelse)
            where = min(other, key=lambda r: r.lineno) if other else node
        else:
            cont = false_path(node, ctx)
            if cont is None:
                return None
            other, where = cont[0], node
        if not other:
            return None
        if result_unused(ctx):
            return None
        vals = values(ctx)
        x = side_value(body, vals, env)
        y = side_value(other, vals, env) if x.known else av.UNKNOWN
        error = av.join(x, y, av.Site.RETURN).error or _none_out_of_branch(x, y)
        if error is None:
            return None
        # a finding in hand: read each returned name where it is returned (the values above
        # join all of the name's bindings in the function)
        x = _returned_where_read(body, vals, env, ctx)
        y = _returned_where_read(other, vals, env, ctx) if x.known else av.UNKNOWN
        error = av.join(x, y, av.Site.RETURN).error or _none_out_of_branch(x, y)
        if error is None:
            return None
        if _graph_output(ctx):
            error = av.folded_output_error(x, y, error)
        if not (ctx.scope and ctx.scope.strict) and any(
            r.value is not None and joins_anything_at_lax(r.value, ctx.function, ctx) for r in (*body, *other)
        ):
            return None  # LAX joins a Python object with anything
        if error.strict_only:
            # None against a value is STRICT only; MS133 reports a value returned by the
            # body against None on the false path after it, this rule the other shapes
            # (None returned first, None inside a tuple, an `else` returning None)
            covered = not node.orelse and isinstance(y, av.NoneValue) and not isinstance(x, av.NoneValue)
            if covered or not (ctx.scope and ctx.scope.strict):
                return None
        return error.reason, where

    @staticmethod
    def _assigns(
        node: ast.If, ctx: Context, before: dict[str, ast.expr], env: Env | None
    ) -> tuple[str, ast.AST] | None:
        left = _assigned(node.body)
        right, where = (_assigned(node.orelse), node.orelse[0]) if node.orelse else (before, node)
        # `total += t` under the `if` with `total = 0.0` before it: a Python number plus a
        # tensor leaves a tensor, joined with the number the false path keeps (measured:
        # "Type Join Failed: Abstract type AbstractTensor cannot join with AbstractScalar", as
        # for `total = total + t`); any other augmented value is left alone
        grown = {} if node.orelse else {n: v for n, v in _augmented(node.body).items() if n not in left}
        grown_right: dict[str, ast.expr] = {}
        kept: AbstractSet[str] = before.keys()  # the names whose value bound before the `if` meets
        if node.orelse and before:
            # a name one path binds and the other leaves alone: that path keeps `before`
            left_alone: set[str] = set()
            for block, mine, plus in ((node.body, left, grown), (node.orelse, right, grown_right)):
                for n, v in _augmented(block).items():
                    if n in before and n not in mine:
                        plus[n] = v
                for n in before.keys() - bindings(block):
                    mine[n] = before[n]
                    left_alone.add(n)
            kept = left_alone
        vals = values(ctx)
        strict = bool(ctx.scope and ctx.scope.strict)
        both = (left.keys() | grown.keys()) & (right.keys() | grown_right.keys() if grown_right else right.keys())
        for name in sorted(both):
            if name in grown or name in grown_right:
                side, added = (left, grown[name]) if name in grown else (right, grown_right[name])
                x = vals.of(added, None, env)
                if not (isinstance(x, av.Tensor) and isinstance(vals.of(before.get(name) or right[name], None, env), av.Scalar)):
                    continue
                side[name] = added
            elif _same_sub_cell_call(left[name], right[name], node, vals, ctx):
                continue  # one value on both paths: it joins, and its dtype (a solve) is never asked
            # the other side is asked only when this one is known (a dtype costs a solve)
            x = vals.of(left[name], None, env)
            if not x.known and _range_loop_variable(left[name], node, ctx):
                x = _UNROLLED_INT  # `idx = i` in `for i in range(4)`: a constant per turn
            y = vals.of(right[name], None, env) if x.known else av.UNKNOWN
            error = phi_error(node, name, x, y, ctx)
            if error is None and (none := _none_out_of_branch(x, y)) is not None and _returned_directly(node, name, ctx):
                error = none  # (the cheap test first: the other walks the function)
            # the values bound in the branches (not one kept from before the `if`)
            if not node.orelse:
                drawn: tuple[ast.expr, ...] = (left[name],)
            elif name in kept:
                drawn = (left[name],) if right[name] is before[name] else (right[name],)
            else:
                drawn = (left[name], right[name])
            if (
                error is not None
                and (not strict or _strict_passes_on(node, name, ctx))
                and lax_random_scalar_join(node, name, (x, y), drawn, ctx)
            ):
                continue
            if error is not None and error.strict_only and none_tested_after_loop(node, name, ctx):
                continue
            if error is not None and error.strict_only and _numpy_scalar_mix(x, y) and _only_output(node, name, ctx):
                # a numpy scalar and a Python number of two kinds: STRICT refuses to compute
                # with the joined value, not to output it (measured, written/heldout41d probe
                # `fix42a_np_literal_f32_vs_int_returned_only`: `return x, weight` compiles)
                continue
            if error is not None and error.strict_only and not strict and _constants_joined_again(node, name, error, ctx):
                error = replace(error, strict_only=False)
            if error is not None and not error.strict_only and _carried_out_of_loop(node, name, ctx):
                continue
            if error is not None and error.applies(strict):
                if not strict and any(joins_anything_at_lax(v, ctx.function, ctx) for v in (left[name], right[name])):
                    continue  # LAX joins a Python object with anything
                if (
                    _sequence_kinds_differ(x, y)
                    and any(_folded_items(v, ctx.function, frozenset()) for v in drawn)
                    and not forwarded_gradients(ctx.function, name, ctx)  # type: ignore[arg-type]
                ):
                    continue  # a list of folded constants joins a tuple (see `_folded_items`)
                return f"`{name}`: {error.reason}", node if name in kept else where
        return None


def _list_compare_join(node: ast.If, ctx: Context) -> tuple[str, str] | None:
    """Under LAX, an `if` on `f != -1` (or `==`) where `f` is a Python list on some turn of
    the loops around it (`list_compare.compared_list`): on that turn the test is a run-time
    value, and a name the two paths bind to values that cannot join fails (a list against
    the tensor kept from before: the YOLOv5 `froms` loop, written/heldout30a). `isinstance`
    tests of `f` in the branch fold for the list. Returns (name, the two values)."""
    if not _assigned(node.body) and not any(isinstance(st, ast.If) for st in node.body):
        return None  # nothing bound on the true path (the cheap test first)
    func = ctx.function
    operand = compared_list(node.test, func, ctx)
    if operand is None or func is None:
        return None
    body = folded_bindings(node.body, operand)
    other = folded_bindings(node.orelse, operand) if node.orelse else {}
    if body is None or other is None:
        return None
    vals = values(ctx)
    for name in sorted(body.keys() | other.keys()):
        if not _read_after(node, name, ctx):
            continue  # a name nobody reads is never joined (probe `fix30e_ne_list_unread_binding`)
        sides: list[av.Value] = []
        for bound in (body, other):
            e = bound.get(name)
            if e is None:
                e = _read_before_or_in(name, node, func)  # the path keeps what the name held
            sides.append(vals.of(e) if e is not None else av.UNKNOWN)
        x, y = sides
        if not (x.known and y.known):
            continue
        error = av.join(x, y, av.Site.PHI).error
        # (measured: a list against a tensor; other pairs are not)
        if error is not None and not error.strict_only and isinstance(x, av.Sequence) != isinstance(y, av.Sequence):
            return name, error.reason
    return None


def _read_before_or_in(name: str, node: ast.If, func: ast.AST) -> ast.Name | None:
    """A read of `name` whose value is the one `name` holds when `node` runs: in the `if`
    itself (`[x, y[0]]` reads the `x` from before), else the function's first read."""
    for scope in (node, func):
        for n in ast.walk(scope):
            if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load):
                return n
    return None


def _sequence_kinds_differ(x: av.Value, y: av.Value) -> bool:
    """A list against a tuple."""
    return isinstance(x, av.Sequence) and isinstance(y, av.Sequence) and x.kind != y.kind


def _folded_items(e: ast.expr, func: ast.AST | None, assumed: frozenset[str]) -> bool:
    """Is `e` a list made only of the items of the function's parameters (or of a local made
    so) and constants, `[g * 0.5 for g in grads]`, `list(grads)`, `[grads[0] * 0.5, ...]`?
    The tuples of tensors a module-level call gives a `construct` are constants of the
    graph, MindSpore folds such a list, and the folded list joins the tuple under a tensor
    `if`; a list holding a run-time value (`[g * clip for g in grads]`, `clip` computed)
    does not ("AbstractList cannot join with AbstractTuple"). Measured with MindSpore 2.10,
    written/heldout29a probes `fix29c_join_*`. `assumed`: locals taken as made so."""
    if len(assumed) > 2 or not isinstance(func, ast.FunctionDef):
        return False
    params = {a.arg for a in (*func.args.posonlyargs, *func.args.args)}

    def folded_name(name: str) -> bool:
        return name in params or name in assumed or _folded_local(name, func, assumed | {name})

    if isinstance(e, ast.Call) and isinstance(e.func, ast.Name) and e.func.id in ("list", "tuple") and len(e.args) == 1 and not e.keywords:
        e = e.args[0]
        if isinstance(e, ast.Name):
            return folded_name(e.id)
    if isinstance(e, (ast.ListComp, ast.GeneratorExp)):
        names: set[str] = set()
        for g in e.generators:
            if g.ifs or not isinstance(g.iter, ast.Name) or not folded_name(g.iter.id):
                return False
            names.update(n.id for n in ast.walk(g.target) if isinstance(n, ast.Name))
        return _constant_of(e.elt, names)
    if isinstance(e, (ast.List, ast.Tuple)):
        return bool(e.elts) and all(_constant_of(x, params) and _items_only(x) for x in e.elts)
    return False


def _items_only(e: ast.expr) -> bool:
    """Does `e` read its names only through constant indexes (`grads[0] * 0.5`)? A bare
    parameter is the tensor the call passes, a graph variable: `[x, x]` joined with `(x, x)`
    under a tensor `if` fails (fixtures/joins `tuple_list`)."""
    indexed = {id(n.value) for n in ast.walk(e) if isinstance(n, ast.Subscript)}
    return all(id(n) in indexed for n in ast.walk(e) if isinstance(n, ast.Name))


def _folded_local(name: str, func: ast.FunctionDef, assumed: frozenset[str]) -> bool:
    """A local of `func` every binding of which `_folded_items` accepts."""
    bound: list[ast.expr | None] = []
    for n in ast.walk(func):
        if isinstance(n, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in n.targets):
            bound.append(n.value if len(n.targets) == 1 else None)
        elif isinstance(n, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == name for target in n.targets for t in ast.walk(target)
        ):
            bound.append(None)  # unpacked (`loss, grads = grad_fn(u)`): not a folded display
        elif isinstance(n, (ast.AugAssign, ast.For, ast.AnnAssign)) and any(
            isinstance(t, ast.Name) and t.id == name for t in ast.walk(n.target)
        ):
            bound.append(None)
    return bool(bound) and all(v is not None and _folded_items(v, func, assumed) for v in bound)


def _constant_of(e: ast.expr, names: set[str]) -> bool:
    """Arithmetic of `names`, their items at constant indexes, and constants (no call)."""
    for n in ast.walk(e):
        if isinstance(n, ast.Name):
            if n.id not in names:
                return False
        elif isinstance(n, ast.Subscript):
            if not isinstance(n.slice, ast.Constant):
                return False
        elif not isinstance(n, (ast.BinOp, ast.UnaryOp, ast.Constant, ast.Load, ast.operator, ast.unaryop)):
            return False
    return True


def _same_sub_cell_call(a: ast.expr, b: ast.expr, node: ast.If, vals: Values, ctx: Context) -> bool:
    """Are `a` and `b` one call of a held sub-cell or primitive (`self.dense2(h)` and
    `-self.dense2(h)`) on names neither path of `node` rebinds? Both then evaluate to the
    same value (a tensor keeps its dtype under unary `-`/`+`; anything else becomes
    unknown), so they join without error whatever that value is."""
    core_a, core_b = _unsigned(a), _unsigned(b)
    if not (type(core_a) is ast.Call and type(core_b) is ast.Call and not core_a.keywords):
        return False
    f = core_a.func
    if not (type(f) is ast.Attribute and type(f.value) is ast.Name and f.value.id == "self"):
        return False
    g = core_b.func
    if (
        f.attr in ("astype", "to")
        or core_b.keywords
        or not (type(g) is ast.Attribute and type(g.value) is ast.Name and g.value.id == "self" and g.attr == f.attr)
        or len(core_a.args) != len(core_b.args)
        or not all(_same_leaf(x, y) for x, y in zip(core_a.args, core_b.args, strict=True))
    ):
        return False
    names = {x.id for x in core_a.args if type(x) is ast.Name}
    # no store to an argument's name or to the held attribute on either path
    if _stores_to(node, names, f.attr, ctx):
        return False
    # a user function is inlined per call context: keep to calls that are not
    return vals.callee(core_a, ctx.function) is None


def _stores_to(node: ast.If, names: set[str], attr: str, ctx: Context) -> bool:
    """Does a path of `node` store to (or delete) one of `names`, or an attribute `attr`?

    A name or attribute is stored to only as the target of an assignment, `for`, `with`,
    `del`, comprehension or `:=`. Without "for" and ":=" on the `if`'s lines (no `for`
    loop, no comprehension, no `:=`), the targets of the statements of its paths (nested
    ones too) are the only places to look; else every node of both paths is."""
    text = "\n".join(ctx.lines[node.lineno - 1 : node.end_lineno or node.lineno])
    if "for" in text or ":=" in text:
        return _stores_in(node.body + node.orelse, names, attr)
    stack: list[ast.AST] = [*node.body, *node.orelse]
    pop, extend = stack.pop, stack.extend
    while stack:
        st = pop()
        t = type(st)
        if t is ast.Assign or t is ast.Delete:
            targets = st.targets  # type: ignore[attr-defined]
        elif t is ast.AugAssign or t is ast.AnnAssign or t is ast.For or t is ast.AsyncFor:
            targets = [st.target]  # type: ignore[attr-defined]
        elif t is ast.With or t is ast.AsyncWith:
            targets = [i.optional_vars for i in st.items if i.optional_vars is not None]  # type: ignore[attr-defined]
        else:
            targets = ()
        if targets and _stores_in(targets, names, attr):
            return True
        blocks = _STORE_BLOCKS.get(t)  # (most statements: none, and no `getattr` per name)
        if blocks is not None:
            for block in blocks:
                extend(getattr(st, block))
    return False


#: the fields among `body`, `orelse`, `finalbody`, `handlers` and `cases` each statement
#: type `_stores_to` meets has (its `except` clauses and `case`s too, and nested definitions,
#: whose bodies it reads as well); the answer does not depend on the order
_STORE_BLOCKS: dict[type, tuple[str, ...]] = {
    **STATEMENT_BLOCKS,
    ast.FunctionDef: ("body",),
    ast.AsyncFunctionDef: ("body",),
    ast.ClassDef: ("body",),
}


def _stores_in(nodes: Iterable[ast.AST], names: set[str], attr: str) -> bool:
    """Is one of `nodes`, or a node under them (as `ast.walk` finds them, names tested
    where they are found and constants skipped), a store to one of `names` or to an
    attribute `attr`?"""
    name_t, attr_t, load_t, leaf_t = ast.Name, ast.Attribute, ast.Load, ast.Constant
    get_fields, node_t = FIELDS.get, ast.AST
    stack: list[ast.AST] = list(nodes)
    pop, push = stack.pop, stack.append
    while stack:
        n = pop()
        t = type(n)
        if t is name_t:
            if type(n.ctx) is not load_t and n.id in names:  # type: ignore[attr-defined]
                return True
            continue
        if t is attr_t and type(n.ctx) is not load_t and n.attr == attr:  # type: ignore[attr-defined]
            return True
        for field in get_fields(t) or fields(t):
            v = getattr(n, field, None)
            for x in v if type(v) is list else (v,):
                xt = type(x)
                if xt is name_t:
                    if type(x.ctx) is not load_t and x.id in names:  # type: ignore[union-attr]
                        return True
                elif xt is not leaf_t and isinstance(x, node_t):
                    push(x)
    return False


def _same_leaf(x: ast.expr, y: ast.expr) -> bool:
    """One name, or one constant of one type."""
    if type(x) is ast.Name:
        return type(y) is ast.Name and x.id == y.id
    return type(x) is ast.Constant and type(y) is ast.Constant and type(x.value) is type(y.value) and x.value == y.value


def _unsigned(e: ast.expr) -> ast.expr:
    while type(e) is ast.UnaryOp and type(e.op) in (ast.USub, ast.UAdd):
        e = e.operand
    return e


def random_rooted(e: ast.expr, ctx: Context) -> bool:
    """Is `e` a random draw (`ops.randn_like(x)`) or an expression whose leftmost operand or
    method receiver is one (`ops.randn_like(x) * 0.5`, `ops.randn(shape).sum()`)?"""
    while True:
        if isinstance(e, ast.BinOp):
            e = e.left
        elif isinstance(e, ast.Call):
            if av.is_random_source(ctx.qualname(e.func) or ""):
                return True
            if not isinstance(e.func, ast.Attribute):
                return False
            e = e.func.value
        else:
            return False


def lax_random_scalar_join(
    node: ast.stmt, name: str, joined: tuple[av.Value, av.Value], drawn: tuple[ast.expr, ...], ctx: Context
) -> bool:
    """Does LAX accept `name` joined from a tensor and a Python number at `node` because the
    tensor is a random draw made on one of the paths (`drawn`: the expressions bound in the
    branches)? Measured on 2.10 (ms_join.json, "random_sources_about"): it does unless the
    name is returned as is or the `if` sits in a loop; STRICT still fails where Python
    arithmetic reads the joined name (see `_strict_passes_on`)."""
    if {type(joined[0]), type(joined[1])} != {av.Tensor, av.Scalar}:
        return False
    if not any(random_rooted(e, ctx) for e in drawn):
        return False
    if any(isinstance(p, (ast.For, ast.While, ast.AsyncFor)) for p in ctx.ancestors(node, ctx.function)):
        return False
    return not _returned_directly(node, name, ctx)


def _strict_passes_on(node: ast.stmt, name: str, ctx: Context) -> bool:
    """Is every read of `name` after `node` an argument of a `mindspore` call (`ops.mul(s,
    name)`, `ops.relu(name)`) or an element of a returned tuple (`return x, name`), and is the
    name not bound again? Measured on 2.10 at STRICT (written/generative probes `join_ts_*`):
    the random-draw join is accepted there too, and fails only where Python evaluates the
    joined value (`name * 2`, `x + name`, `name.sum()`: "When handling script ... the inputs
    should be constant")."""
    func = ctx.function
    if func is None:
        return False
    end = node.end_lineno or node.lineno
    reads = 0
    for n in own_nodes(func):
        if not (isinstance(n, ast.Name) and n.id == name and n.lineno > end):
            continue
        if not isinstance(n.ctx, ast.Load):
            return False
        parent = ctx.parent(n)
        if isinstance(parent, ast.Call) and n in parent.args:
            if not (ctx.qualname(parent.func) or "").startswith("mindspore."):
                return False
        elif not (isinstance(parent, ast.Tuple) and isinstance(ctx.parent(parent), ast.Return)):
            return False
        reads += 1
    return reads > 0


#: The value of an unrolled `range` loop's variable: a Python int constant on each turn (its
#: value differs per turn; joins only look at it being a constant int).
_UNROLLED_INT = av.Scalar("int", 0)


def _range_loop_variable(e: ast.expr, node: ast.AST, ctx: Context) -> bool:
    """Is `e` the variable of a `for ... in range(...)` around `node` (unrolled while compiling)?"""
    if not isinstance(e, ast.Name):
        return False
    p = ctx.parent(node)
    while p is not None and p is not ctx.function:
        if (
            isinstance(p, ast.For)
            and isinstance(p.target, ast.Name)
            and p.target.id == e.id
            and isinstance(p.iter, ast.Call)
            and isinstance(p.iter.func, ast.Name)
            and ctx.qualname(p.iter.func) == "builtins.range"
        ):
            return True
        p = ctx.parent(p)
    return False


def _carried_out_of_loop(node: ast.If, name: str, ctx: Context) -> bool:
    """`if t: name = value; continue` (or `break`) in a loop, `name` bound to another type
    before, read after the loop but not returned as it is. Measured (difftest v4 seeds
    9900047, 9900051, 9900184, both levels): a Tensor and a float meet there without
    error; returned directly after such a loop they do not (reach2 ct_float_total_continue_return)."""
    if not node.body or not isinstance(node.body[-1], (ast.Break, ast.Continue)) or node.orelse:
        return False
    loop = ctx.parent(node)
    while loop is not None and isinstance(loop, ast.If):
        loop = ctx.parent(loop)
    return isinstance(loop, (ast.For, ast.While)) and not _returned_directly(node, name, ctx)


def _call_candidates(ctx: Context) -> tuple[set[int], set[str], set[str]]:
    """Calls in this file's compiled code of a compiled function with an `if` where values
    may meet (by call node), and the names of such module-level `@ms.jit` functions (their
    calls are not recorded as sites): the only calls worth specialising; and the called
    names (`called_name`) of both (`Rule.file_calls`)."""
    hit = ctx.cache.get("MS119.calls")
    if hit is None:
        with SITE_READS_PAUSED:  # keyed by call: a chunk asks about its own calls only
            hit = ctx.cache["MS119.calls"] = _index_call_candidates(ctx)
    return hit


def _index_call_candidates(ctx: Context) -> tuple[set[int], set[str], set[str]]:
    """`_call_candidates` built (one pass over the graph scopes of the file)."""
    sites: set[int] = set()
    names: set[str] = set()
    called: set[str] = set()
    for scope in ctx.scopes.scopes.values():
        func = scope.function
        if type(func) is not ast.FunctionDef or ctx.parent(func) is None:
            continue
        if not scope.call_sites and not (scope.kind == "jit" and ctx.parent(func) is ctx.tree):
            continue
        # structure alone: the values before an `if` (`_may_join`) would ask for the
        # parents of functions the walk has not reached, a map of the whole file
        if not any(type(st) is ast.If and (returns_in(st.body) or _assigned(st.body)) for st in body_statements(func.body, ctx)):
            continue
        if scope.call_sites:
            for c in scope.call_sites:
                if c.path == ctx.path and c.call is not None:
                    sites.add(id(c.call))
                    called.add(called_name(c.call, ctx))
        else:
            names.add(func.name)
    for name in names:  # what a call `name(...)` is called (an import may rename it)
        called.add(called_name(ast.Call(func=ast.Name(id=name, ctx=ast.Load()), args=[], keywords=[]), ctx))
    return sites, names, called


def _may_join(st: ast.If, func: ast.AST, ctx: Context) -> bool:
    """Structure alone (no data flow), as `_joining_ifs` asks it: returns in the true branch,
    a name bound on both paths, or (without `else`) a name bound in the body whose value
    before the `if` is known."""
    if returns_in(st.body):
        return True
    if st.orelse:
        return bool(_assigned(st.body).keys() & _assigned(st.orelse).keys())
    return bool(_false_path_values(st, ctx, func))


def _joining_ifs(func: ast.FunctionDef, ctx: Context) -> list[ast.If]:
    """The `if` statements of a function's own body (`ctx.function`) where values can meet:
    a tensor-dependent test, and returns or a name bound on both paths. The same for every
    call context (the test's kind is what all calls have in common), so cached."""
    key = ("MS119.ifs", id(func))
    hit = ctx.cache.get(key)
    if hit is None:
        a = analyzer(ctx)
        hit = []
        for st in body_statements(func.body, ctx):
            if type(st) is not ast.If or not _may_join(st, func, ctx):
                continue
            if a.kind(st.test, func).dynamic:
                hit.append(st)
        ctx.cache[key] = hit
    return hit


def _str_constant(e: ast.expr) -> bool:
    return isinstance(e, ast.Constant) and isinstance(e.value, str)


def _python_scalar(e: ast.expr, a: Analyzer) -> bool:
    """A Python bool / number (a comparison of non-tensors, a literal, a scalar name)."""
    if isinstance(e, ast.Compare):
        return all(a.kind(x) != Kind.TENSOR and a.kind(x) != Kind.UNKNOWN for x in (e.left, *e.comparators))
    if isinstance(e, ast.Constant):
        return isinstance(e.value, (bool, int, float))
    if isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.Not):
        return _python_scalar(e.operand, a)
    return a.type_class(e) == "scalar"


def _loop_carried(e: ast.expr, node: ast.AST, ctx: Context) -> str | None:
    """A name `e` reads that a tensor-dependent `while` around `node` (or whose test `node`
    is) rebinds in its body: carried around the loop, it is a variable, not a constant
    (measured: `while i < 5 and d > 0: ...; i += 1` fails, without the `i += 1` it compiles)."""
    names = {n.id for n in ast.walk(e) if type(n) is ast.Name}
    if not names:
        return None
    sized = _size_read_only(e, names)
    p = ctx.parent(node)
    while p is not None and not is_function(p):
        if type(p) is ast.While:
            hit = {n for n in names & bindings(p.body) if n not in sized or _made_dynamic(n, p, ctx)}
            if hit and analyzer(ctx).kind(p.test).dynamic:
                return min(hit)
        p = ctx.parent(p)
    return None


def _folds_then_opaque(node: ast.BoolOp, ctx: Context) -> bool:
    """`while se > tol and n < m:` with every tensor operand reading names that enter the loop
    as constants (`se = Tensor(1.0)`, `ops.ones(())`) and that the body last rebinds to a JIT
    Fallback value (`se = (t / np.sqrt(n)).max()`). LAX evaluates the test twice: with the
    entry values the tensor comparison folds to a constant, and with the body's values the
    operand is a Python object, which joins with anything (measured, written/heldout17b
    probes `fe17_wh_*`: accepted; a plain tensor in the body or a variable entry value
    (`se = x.sum()`) fails with "Type Join Failed: dtype1 = Bool, dtype2 = Any")."""
    loop = ctx.parent(node)
    func = ctx.function
    if type(loop) is not ast.While or loop.test is not node or func is None:
        return False
    a = analyzer(ctx)
    tensors = [v for v in node.values if a.kind(v) == Kind.TENSOR]
    if not tensors:
        return False
    carried = bindings(loop.body)
    for operand in tensors:
        names = {n.id for n in ast.walk(operand) if type(n) is ast.Name} - {"self"}  # `self.tol`: a constant
        if not names or not names <= carried:
            return False  # a name read but not rebound keeps its (maybe variable) value
        for name in names:
            entry, last = _entry_binding(name, loop, ctx), _last_top_binding(name, loop.body)
            if entry is None or last is None or not _constant_tensor(entry, func, ctx):
                return False
            if not opaque_at_lax(last, func, ctx):
                return False
    return True


def _entry_binding(name: str, loop: ast.While, ctx: Context) -> ast.expr | None:
    """The value of the last plain `name = ...` in the block holding `loop`, before it."""
    _parent, block, i = block_of(loop, ctx)
    out: ast.expr | None = None
    for st in block[:max(i, 0)]:
        if bindings([st]) & {name}:
            single = type(st) is ast.Assign and len(st.targets) == 1 and type(st.targets[0]) is ast.Name
            out = st.value if single else None  # type: ignore[attr-defined]
    return out


def _last_top_binding(name: str, body: list[ast.stmt]) -> ast.expr | None:
    """The value of the last statement of `body` binding `name`, when it is a plain `name = ...`."""
    for st in reversed(body):
        if bindings([st]) & {name}:
            single = type(st) is ast.Assign and len(st.targets) == 1 and type(st.targets[0]) is ast.Name
            return st.value if single else None  # type: ignore[attr-defined]
    return None


def _constant_tensor(e: ast.expr, func: ast.AST, ctx: Context) -> bool:
    """A tensor built from constants only (`Tensor(1.0, ms.float32)`, `ops.ones((), ms.float32)`,
    `Tensor(np.array(1.0))`): no local name, parameter or `self` read, so MindSpore folds it."""
    if type(e) is not ast.Call or analyzer(ctx).kind(e) != Kind.TENSOR:
        return False
    local = bindings(getattr(func, "body", [])) | {arg.arg for arg in ast.walk(func) if type(arg) is ast.arg}
    return all(not (type(n) is ast.Name and (n.id in local or n.id == "self")) for n in ast.walk(e))


def _size_read_only(e: ast.expr, names: set[str]) -> set[str]:
    """Those of `names` that `e` reads only for a tensor's size (`seq.shape[0]`, `len(seq)`,
    `seq.size`). A loop-carried tensor's shape is part of the abstract value the loop is
    specialised on, not a carried Python value: measured on 2.10, `while seq.shape[0] < 4 and
    seq.sum() < t` compiles (also with `len(seq)`, `seq.size`, `ops.shape(seq)[0]`, the
    shape growing by `concat` or not) while `while i < 4 and seq.sum() < t` with `i += 1`,
    or `n = seq.shape[0]` rebound in the body, fails."""
    receivers: set[ast.Name] = set()  # the Name nodes read for a size (`seq.shape[0]` is two reads of one)
    for n in ast.walk(e):
        t = shape_read_of(n) if isinstance(n, ast.expr) else None
        if t is None and isinstance(n, ast.Call) and len(n.args) == 1 and _is_shape_call(n):
            t = n.args[0]
        if isinstance(t, ast.Name):
            receivers.add(t)
    other = {n.id for n in ast.walk(e) if type(n) is ast.Name and n not in receivers}
    return names - other


def _is_shape_call(call: ast.Call) -> bool:
    f = call.func
    return isinstance(f, ast.Attribute) and f.attr == "shape" and isinstance(f.value, ast.Name) and f.value.id in ("ops", "P", "F")


def _made_dynamic(name: str, loop: ast.While, ctx: Context) -> bool:
    """Does the loop's body bind `name` to a tensor whose shape is known only at run time
    (a boolean mask, `masked_select`...)? Then its size is a run-time value."""
    return any(
        isinstance(st, ast.Assign)
        and any(isinstance(t, ast.Name) and t.id == name for t in st.targets)
        and dynamic_shape(st.value, ctx)
        for st in ast.walk(loop)
        if isinstance(st, ast.Assign)
    )


def _holds_none(v: av.Value) -> bool:
    return isinstance(v, av.NoneValue) or (
        isinstance(v, av.Sequence) and v.elements is not None and any(_holds_none(e) for e in v.elements)
    )


def _none_out_of_branch(x: av.Value, y: av.Value) -> av.JoinError | None:
    """None on both paths, leaving the branch as its result (returned, or bound to a name that
    is returned): STRICT cannot hold None in a graph variable, even when the paths agree
    (measured on 2.10: `return x, None` on both paths, `y = (x, None)` / `(x * 2, None)` then
    `return y`, `return None` twice: "Invalid abstract;AbstractNone"; `return y[0]` compiles).
    Lax accepts."""
    if x == y and _holds_none(x):
        return av.JoinError("None on both paths, as the branch's result", "Invalid abstract;AbstractNone", strict_only=True)
    return None


def result_unused(ctx: Context) -> bool:
    """Is the compiled function `ctx.function` a helper whose result no call uses (every call
    is a statement of its own, `helper(x)`)? Then its returns are never joined (measured on
    2.10: a helper returning None or a tensor, or `(x, x)` or `(x, None)`, on the two paths
    of a tensor-dependent `if`, called as a statement, compiles at both levels)."""
    scope = ctx.scope
    if scope is None or scope.kind != "helper" or not scope.call_sites:
        return False
    for site in scope.call_sites:
        if site.path != ctx.path or site.call is None:
            return False
        st = ctx.parent(site.call)
        if not (isinstance(st, ast.Expr) and st.value is site.call):
            return False
    return True
