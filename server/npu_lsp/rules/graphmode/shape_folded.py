"""Engine filter: inference-time findings under a branch that folds on the input's shape.

MindSpore compiles with static shapes, so `if seq_len > self.max_pos:` (with `seq_len =
ids.shape[1]`) is a compile-time constant, and only the side the actual input selects is
inferred (measured: `logger.warning(...)` from `mindspore.log`, which compiled code may not
call, compiles inside such a guard when the input is short). A linter does not see the
shapes the program feeds in, so it cannot tell which side is compiled: a finding made while
inferring (not while parsing) under such a condition is not an error we can stand behind.
"""

from __future__ import annotations

import ast
import operator

from npu_lsp.astutil import self_attr, store_names
from npu_lsp.diagnostics import Diagnostic, Span
from npu_lsp.engine import DIAGNOSTIC_FILTERS, Context
from npu_lsp.rules.graphmode.dynamic_shape import run_time_size_test, size_read
from npu_lsp.rules.graphmode.flow import Kind, analyzer
from npu_lsp.rules.graphmode.interpreted import rank_unknown
from npu_lsp.rules.graphmode.values import PARSE_TIME, UNKNOWN, instances, test_for_call
from npu_lsp.scope import ECHOED_KINDS, CallSite, GraphScope

#: tensor attributes that are compile-time constants under static shapes
_SHAPE_ATTRS = frozenset({"shape", "ndim", "size"})
#: functions that read a tensor's shape while compiling
_SHAPE_FUNCS = frozenset(
    {"builtins.len", "mindspore.ops.shape", "mindspore.ops.rank", "mindspore.ops.size"}
)
_DEPTH = 3
#: findings made before shapes are known although the parser folds constant conditions away:
#: measured on 2.10, `self.cache[n] = v` and `self.last = n` under `if n > 100:` with
#: `n = x.shape[0]` (3) are refused under STRICT, while under `if self.use_cache:` (False)
#: they compile
_BEFORE_SHAPES = frozenset({"MS132"})
#: rules that follow the input's shapes themselves (ranks.py), folding such conditions
_OWN_SHAPES = frozenset({"MS136"})
#: rules that fold `len(self.<list>)` in the conditions above their findings themselves
#: (MS185 knows the list is empty while compiling: `if len(self.items) < 2:` is true)
_FOLDS_SELF_LEN = frozenset({"MS185"})
#: findings about how MindSpore joins the two sides of a branch: under a condition on the
#: shape of a value JIT Fallback made (`interpreted`) both sides are compiled, but the join
#: is with a Python object, which MindSpore takes (MS119 compiles there: fresh v5 seed
#: 10300186); every other finding under such a condition is made while inferring a side
#: that is compiled (fresh v5 seeds 11100100, 11100111; written/gen18 probes
#: `v23_sf_hist_fb_*`: `self.history[-1]` after `append` under `if x.shape[0] > 5:` fails
#: for `x` built by `ms.Tensor(np.where(...))`, and compiles for `x * 1.0`)
#: (MS155 is not one: its list, grown under a `.item()` test in an unrolled loop on the
#: compiled side, fails while that side is inferred, "The pointer[seq_abs] is null", also
#: in a sub-cell under `if x.ndim == 2:` / `if x.shape[0] > 1:` of a JIT Fallback `x`;
#: written/lax probes `genfresh36_fs_*`, fresh v6 seed 12000844)
_JOIN_FINDINGS = frozenset({"MS118", "MS119", "MS133", "MS178", "MS211"})


def shape_folded(ctx: Context, scope: GraphScope, d: Diagnostic) -> bool:
    """Drop an inference-time error under an `if` / conditional expression whose condition
    depends only on input shapes (a constant MindSpore knows and we do not)."""
    if d.severity != "error" or not d.code.startswith("MS") or d.code in PARSE_TIME or d.code in _BEFORE_SHAPES | _OWN_SHAPES:
        return False
    func = scope.function
    own = d.code in _FOLDS_SELF_LEN
    # measured under such a condition: `g17_an_str_len_under_ndim_if`, `v23_sf_hist_fb_*`
    lax = scope.level == "lax" and d.code not in _JOIN_FINDINGS
    return any(
        shape_condition(test, func, ctx, own, lax) and not fed_shapes_take(test, side, func, ctx)
        and not _first_cache_miss(test, side, func, ctx)
        and not _declared_dynamic_test(test, func, ctx)
        for test, side in _enclosing_tests(func, d.span, ctx)
    )


def _declared_dynamic_test(test: ast.expr, func: ast.AST, ctx: Context) -> bool:
    """Does `test` read a size of a tensor at a dimension `net.set_inputs(Tensor(shape=[None,
    3], ...))` leaves unknown (`ranks.declared_dynamic_size`: the input, or a value that
    keeps that dimension through sub-cells, methods and arithmetic)? MindSpore cannot fold
    such a test: both sides are compiled, and a finding on either is its error (measured,
    written/lax probes `genfresh41_dyn_*`: `max(hyps, key=...)` under `if x.shape[0] > 5:`
    or `if len(x) > 5:` fails for a declared `[None, 3]`, also after `x = x * 2 + 1`, and
    compiles for `[2, 3]`, without `set_inputs`, or under `if x.shape[1] > 5:`; fresh v6
    seed 12001773)."""
    if not ctx.mentions("set_inputs"):
        return False
    from npu_lsp.rules.graphmode.ranks import declared_dynamic_size

    inner: set[int] = set()  # `x.shape` of `x.shape[1]`: the read is of dimension 1 only
    for sub in ast.walk(test):
        read = size_read(sub) if isinstance(sub, ast.expr) and id(sub) not in inner else None
        if read is None:
            continue
        if isinstance(sub, ast.Subscript):
            inner.add(id(sub.value))
        if declared_dynamic_size(read[0], read[1] if type(read[1]) is int else None, func, ctx):
            return True
    return False


def _first_cache_miss(test: ast.expr, side: bool, func: ast.AST, ctx: Context) -> bool:
    """Is `side` the miss of a lazy cache the first compile takes: `key not in self.cache`
    (True) / `key in self.cache` (False), with `__init__` making `self.cache = {}` and only
    the class's own methods touching it? However the key is built from shapes, the dict is
    empty when MindSpore first compiles the method, so the miss side is compiled (measured,
    written/lax probes `fix35c_dte_*`: `key2 = tuple(x.shape)`, `if key2 not in
    self.cache2: self.cache2[key2] = ops.ones_like(x)` of a JIT Fallback `x` fails at LAX
    with DtypeToEnum as it does without the `if`; v6 seed 12000430)."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and type(test.ops[0]) in (ast.In, ast.NotIn)):
        return False
    if side != isinstance(test.ops[0], ast.NotIn):
        return False
    attr = self_attr(test.comparators[0])
    cls = analyzer(ctx).owner_class(func)
    stores = instances(ctx).attr_stores(attr) if attr is not None and cls is not None else None
    if not stores or cls is None:
        return False
    first, last = cls.lineno, cls.end_lineno or cls.lineno
    made_empty = [
        st for st in stores
        if isinstance(st, ast.Assign) and len(st.targets) == 1 and self_attr(st.targets[0]) == attr
        and isinstance(st.value, ast.Dict) and not st.value.keys
    ]
    if len(made_empty) != 1 or any(not first <= getattr(st, "lineno", 0) <= last for st in stores):
        return False
    init = ctx.parent(made_empty[0])
    if not (isinstance(init, ast.FunctionDef) and init.name == "__init__" and ctx.parent(init) is cls):
        return False
    # nothing outside the class reads or fills it (`net.cache[k] = v` before the call)
    needle = f".{attr}"
    if any(needle in line for i, line in enumerate(ctx.lines, 1) if not first <= i <= last):
        return False
    # and the method reads the cache after the `if`: a value stored and never read is never
    # inferred (probe `fix35c_dte_store_unused` compiles at LAX)
    branch = ctx.parent(test)
    inside = {id(n) for n in ast.walk(branch)} if branch is not None else set()
    return any(
        isinstance(n, ast.Subscript) and isinstance(n.ctx, ast.Load) and self_attr(n.value) == attr and id(n) not in inside
        for n in ast.walk(func)
    )


def reached_only_under_folded_test(ctx: Context, scope: GraphScope, d: Diagnostic) -> bool:
    """Engine filter: an error in a helper (a method, a plain object's `__call__`) whose every
    call site sits on one side of a condition MindSpore decides while compiling (shapes,
    constant arguments, attributes) without us knowing that it selects that side.
    MindSpore parses and infers a callee only when a call of it is inferred, so the helper
    may never be compiled: measured (written/heldout26a case
    `r2_pos_rope_extend_cache_branch_not_taken`, probes `fix26c_rope_*`), `self.m = ...` in a
    method called under `if seq_len > self.max_seq_len_cached:` (a shape or an int argument,
    False) compiles under STRICT, and is refused when the input makes it True, under a
    tensor condition, or written in `construct` itself under the false condition."""
    if d.code not in _BEFORE_SHAPES or d.severity != "error" or scope.kind not in ECHOED_KINDS or not scope.call_sites:
        return False
    return _maybe_never_reached(ctx, scope.call_sites, 0)


#: a condition a call site is reached under: (id of the test, the side), or ("caller", id of
#: the calling function) for "the function holding the site is compiled"
_Literal = tuple[object, object]


def _maybe_never_reached(ctx: Context, sites: list[CallSite], depth: int) -> bool:
    """May no call among `sites` be compiled? A site is reached when every compile-time test
    above it that we cannot evaluate selects its side (and its function is compiled); the
    sites together surely are when those conditions cover every case: sites on the two
    sides of one test (mindone's wan / qwenimage VAE `encode`: `if self.use_slicing and
    x.shape[0] > 1: [self._encode(s) for s in x.split(1)]` else `self._encode(x)`, so
    `_encode` and the `clear_cache` it calls are compiled whatever the test gives; written/zoo
    probes `fix31a_both_sides_*`)."""
    clauses: list[frozenset[_Literal]] = []
    for site in sites:
        conditions = _site_conditions(ctx, site, depth)
        if conditions is None:
            continue  # a test we evaluate selects the other side
        if not conditions:
            return False  # reached whatever the tests give
        clauses.append(conditions)
    return not _cover_every_case(clauses)


def _site_conditions(ctx: Context, site: CallSite, depth: int) -> frozenset[_Literal] | None:
    """The conditions the call at `site` is reached under (empty: always, None: never),
    in its caller and, for a helper caller, that caller's own sites, a few calls up."""
    if site.path != ctx.path or site.caller_node is None:
        return frozenset()
    caller = ctx.scopes.scope_for(site.caller_node)
    func = caller.function if caller is not None else site.caller_node
    a = analyzer(ctx)
    where = Span(site.line, site.column, site.end_line, site.end_column)
    out: set[_Literal] = set()
    for test, side in _enclosing_tests(func, where, ctx):
        if a.kind(test, func) != Kind.CONST or run_time_size_test(test, ctx, func):
            continue
        value = instances(ctx).evaluate(test, func)
        if value is UNKNOWN:
            value = instances(ctx).evaluate_at_first_compile(test, func, lambda st: _set_in_compiled_method(st, ctx))
        if value is UNKNOWN and _side_of_some_instance(test, side, func, ctx):
            continue
        if value is not UNKNOWN:
            if bool(value) != side:
                return None
            continue
        if not fed_shapes_take(test, side, func, ctx) and not _compare_taken(test, side, func, ctx) and not _argument_taken(test, side, func, ctx):
            out.add((id(test), side))
    helper = caller is not None and caller.kind in ECHOED_KINDS and bool(caller.call_sites) and depth < _DEPTH
    if helper and _maybe_never_reached(ctx, caller.call_sites, depth + 1):  # type: ignore[union-attr]
        out.add(("caller", id(site.caller_node)))
    return frozenset(out)


def _side_of_some_instance(test: ast.expr, side: bool, func: ast.AST, ctx: Context) -> bool:
    """Instances of `func`'s class disagree on `test` at their first compile, and one of
    them takes `side`: MindSpore compiles each instance's graph, so that side is compiled
    (measured, written/heldout35a probe `fix35f_once_both_instances`: `Net(ready=True)` then
    `Net(ready=False)`, the second compiles `if not self.ready: self.prepare()`, refused
    under STRICT)."""
    got = instances(ctx).first_compile_values(test, func, lambda st: _set_in_compiled_method(st, ctx))
    return len(got) > 1 and any(v is not UNKNOWN and bool(v) == side for v in got)


def _set_in_compiled_method(st: ast.AST, ctx: Context) -> bool:
    """Is the store `st` in a method that only compiled code calls: a graph scope, called
    as `self.<name>(...)` from graph scopes alone, never by name anywhere else in the file
    (`net.prepare()` at module level runs it as Python before the first compile)? Measured
    (written/heldout35a case `hifigan_remove_weight_norm_method_call_in_construct`, probes
    `fix35f_once_*`)."""
    method = ctx.enclosing_function(st, lambdas=False)
    if not isinstance(method, ast.FunctionDef) or ctx.scopes.scope_for(method) is None:
        return False
    for node in ast.walk(ctx.tree):
        if type(node) is not ast.Attribute or node.attr != method.name:
            continue
        call = ctx.parent(node)
        if not (type(call) is ast.Call and call.func is node and self_attr(node) == method.name):
            return False
        caller = ctx.enclosing_function(call, lambdas=False)
        if caller is None or ctx.scopes.scope_for(caller) is None:
            return False
    return True


def _cover_every_case(clauses: list[frozenset[_Literal]]) -> bool:
    """Does one of the conjunctions `clauses` hold whatever the tests give? Resolution: two
    clauses differing in one test's side leave what they share, down to the empty clause.
    Bounded (a helper has few call sites); an answer not found in time is No."""
    known = set(clauses)
    todo = list(known)
    steps = 0
    while todo and steps < 200:
        c = todo.pop()
        for other in list(known):
            steps += 1
            for test, side in c:
                if test == "caller" or (test, not side) not in other:
                    continue
                merged = (c | other) - {(test, side), (test, not side)}
                if not merged:
                    return True
                if merged not in known:
                    known.add(merged)
                    todo.append(merged)
    return False


_COMPARE = {ast.Gt: operator.gt, ast.GtE: operator.ge, ast.Lt: operator.lt, ast.LtE: operator.le, ast.Eq: operator.eq, ast.NotEq: operator.ne}


def _compare_taken(test: ast.expr, side: bool, func: ast.AST, ctx: Context) -> bool:
    """Does some known call context make `a > self.m` (one comparison of ints) select
    `side`: `a` from the shapes or numbers the program passes (ranks.py), `self.m` the int
    `__init__` leaves in it (written/heldout19a `rope_cache_grow_self`: `seq_len` 9 against
    the cache length 4, set by a method `__init__` calls; MindSpore compiles the call)?"""
    from npu_lsp.rules.graphmode.ranks import ranks

    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and type(test.ops[0]) in _COMPARE):
        return False
    op = _COMPARE[type(test.ops[0])]
    sides = []
    for e in (test.left, test.comparators[0]):
        if isinstance(e, ast.Constant) and type(e.value) is int:
            sides.append([e.value])
        elif self_attr(e) is not None:
            v = _init_time_value(self_attr(e), func, ctx)  # type: ignore[arg-type]
            sides.append([v] if type(v) is int else [])
        else:
            sides.append([v for v in ranks(ctx).value_at(e, func) if type(v) is int])
    return any(op(a, b) == side for a in sides[0] for b in sides[1])


def _argument_taken(test: ast.expr, side: bool, func: ast.AST, ctx: Context) -> bool:
    """Does some call of `func` in this file give constant arguments that make `test`
    select `side` (`if mode == "norm":` in a sub-cell's `construct` called
    `self.revin(x, "norm")`)? That call's graph compiles the side (measured, written/
    heldout34c probes `fix34e_rv_helper_store_init_tensor`: a method storing a Tensor on
    `self`, called under the test, is refused under STRICT)."""
    if not isinstance(func, ast.FunctionDef) or not any(
        isinstance(n, ast.Name) and n.id in {a.arg for a in func.args.args} for n in ast.walk(test)
    ):
        return False
    scope = ctx.scopes.scope_for(func)
    for site in getattr(scope, "call_sites", ())[:8]:
        if site.path != ctx.path or site.call is None:
            continue
        v = test_for_call(test, func, site.call, site.caller_node, ctx)
        if v is not UNKNOWN and bool(v) == side:
            return True
    return False


def _init_time_value(attr: str, func: ast.AST, ctx: Context) -> object:
    """The value `self.<attr>` holds after `__init__` (what compiling reads), when `__init__`'s
    own statements set it, directly (`self.m = n`) or through a method they call that sets
    it from a parameter (`self._set_cache(n)` with `self.m = seq_len`), and every instance
    built here gives it the same value; else UNKNOWN."""
    cls = analyzer(ctx).owner_class(func)
    init = next((m for m in cls.body if isinstance(m, ast.FunctionDef) and m.name == "__init__"), None) if cls else None
    if cls is None or init is None:
        return UNKNOWN
    methods = {m.name: m for m in cls.body if isinstance(m, ast.FunctionDef)}
    value: object = UNKNOWN
    for st in init.body:
        if isinstance(st, ast.Assign) and len(st.targets) == 1 and self_attr(st.targets[0]) == attr:
            value = instances(ctx).init_value(st.value, cls, init)
            continue
        call = st.value if isinstance(st, ast.Expr) else None
        f = call.func if isinstance(call, ast.Call) else None
        m = methods.get(f.attr) if isinstance(f, ast.Attribute) and self_attr(f) is not None else None
        if m is not None and isinstance(call, ast.Call):
            stores = [x for x in m.body if isinstance(x, ast.Assign) and len(x.targets) == 1 and self_attr(x.targets[0]) == attr]
            if stores:
                value = _argument_value(stores[-1].value, m, call, cls, init, ctx)
            continue
        if any(isinstance(n, ast.Attribute) and n.attr == attr and isinstance(n.ctx, ast.Store) for n in ast.walk(st)):
            return UNKNOWN  # set under an `if`, in a loop...
    return value


def _argument_value(
    e: ast.expr, method: ast.FunctionDef, call: ast.Call, cls: ast.ClassDef, init: ast.FunctionDef, ctx: Context
) -> object:
    """`e` (a parameter of `method`, or a constant) for the call `call` `__init__` makes."""
    if isinstance(e, ast.Constant):
        return e.value
    if not isinstance(e, ast.Name) or any(isinstance(a, ast.Starred) for a in call.args):
        return UNKNOWN
    params = [a.arg for a in method.args.args][1:]
    if e.id not in params:
        return UNKNOWN
    i = params.index(e.id)
    given = next((k.value for k in call.keywords if k.arg == e.id), call.args[i] if i < len(call.args) else None)
    if given is None:
        return UNKNOWN
    return instances(ctx).init_value(given, cls, init)


def fed_shapes_take(test: ast.expr, side: bool, func: ast.AST, ctx: Context) -> bool:
    """Do the shapes the program feeds in (ranks.py, from the tensors its module-level calls
    pass) decide `test` to select `side` (True: the body) in every call context of `func`
    known? Then the finding's side is the one MindSpore compiles (fresh v5 seeds: a finding
    under `if x.shape[0] > 1:` with `x` of shape (2, 3) is MindSpore's error)."""
    from npu_lsp.rules.graphmode.ranks import ranks

    got = ranks(ctx).value_at(test, func)
    return bool(got) and all(type(v) in (int, bool) and bool(v) == side for v in got)


def _enclosing_tests(func: ast.AST, where: Span, ctx: Context) -> list[tuple[ast.expr, bool]]:
    """Conditions of the `if`s and conditional expressions of `func` whose body or else
    side holds `where` (nested functions are left to their own scope), each with the side
    (True: the body)."""
    out: list[tuple[ast.expr, bool]] = []
    start, end = (where.line, where.column), (where.end_line, where.end_column)

    def holds(nodes: list[ast.AST]) -> bool:
        if not nodes:
            return False
        first, last = ctx.span(nodes[0]), ctx.span(nodes[-1])
        return (first.line, first.column) <= start and end <= (last.end_line, last.end_column)

    stack: list[ast.AST] = list(getattr(func, "body", []))
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        if isinstance(node, ast.If) and (holds(list(node.body)) or holds(list(node.orelse))):
            out.append((node.test, holds(list(node.body))))
        elif isinstance(node, ast.IfExp) and (holds([node.body]) or holds([node.orelse])):
            out.append((node.test, holds([node.body])))
        stack.extend(ast.iter_child_nodes(node))
    return out


def shape_condition(test: ast.expr, func: ast.AST, ctx: Context, own: bool = False, lax: bool = False) -> bool:
    """A compile-time condition we cannot evaluate, built from input shapes (with `own`,
    `len(self.<attr>)` does not count: the rule folded it itself)."""
    if analyzer(ctx).kind(test, func) != Kind.CONST:
        return False
    if instances(ctx).evaluate(test, func) is not UNKNOWN:
        return False
    if run_time_size_test(test, ctx, func):
        return False  # `sel.shape[0]` of `sel = x[mask]`: not folded, both sides compiled
    if lax and _interpreted_shape(test, func, ctx):
        return False  # the shape of a tensor LAX holds as a Python object: known at run time
    return _from_shape(test, func, ctx, _DEPTH, own, _own_branch(test, ctx))


def _own_branch(test: ast.expr, ctx: Context) -> ast.AST | None:
    """The `if` / conditional expression `test` decides, when no loop encloses it: what its
    sides bind is not what the test reads (`mask = None; if mask is None: mask =
    ops.ones_like(x)` does not test `x`'s shape; fresh v5 seed 11800138, where `x` had gone
    through `len(str(...))`)."""
    owner = ctx.parent(test)
    p = owner
    while p is not None and not isinstance(p, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        if isinstance(p, (ast.For, ast.AsyncFor, ast.While, ast.comprehension)):
            return None
        p = ctx.parent(p)
    return owner


def _interpreted_shape(test: ast.expr, func: ast.AST, ctx: Context) -> bool:
    """`x.ndim == 2` with `x` a value JIT Fallback made, or an operator's result on one
    (`rank_unknown`): MindSpore compiles both sides (measured, written/famc probes
    `g17_an_*_under_ndim_if`, written/gen18 probes `fix28b_nk_*`)."""
    return any(
        isinstance(sub, ast.Attribute) and sub.attr in _SHAPE_ATTRS and rank_unknown(sub.value, ctx, func)
        for sub in ast.walk(test)
    )


def _from_shape(e: ast.AST, func: ast.AST, ctx: Context, depth: int, own: bool = False, branch: ast.AST | None = None) -> bool:
    for sub in ast.walk(e):
        if own and isinstance(sub, ast.Call) and len(sub.args) == 1 and self_attr(sub.args[0]) is not None:
            continue  # `len(self.items)`: folded by the rule (MS185's `_guarded`)
        if isinstance(sub, ast.Attribute) and sub.attr in _SHAPE_ATTRS:
            on_self = isinstance(sub.value, ast.Name) and sub.value.id == "self"
            if not on_self:
                return True
        elif isinstance(sub, ast.Call) and ctx.qualname(sub.func) in _SHAPE_FUNCS or (
            isinstance(sub, ast.Name)
            and isinstance(sub.ctx, ast.Load)
            and depth > 0
            and any(_from_shape(v, func, ctx, depth - 1, own, branch) for v in _assigned(func, sub.id) if not _inside(v, branch))
        ):
            return True
    return False


def _inside(v: ast.expr, branch: ast.AST | None) -> bool:
    """Is `v` within the lines of `branch` (after its test, on one of its sides)?"""
    if branch is None:
        return False
    test = getattr(branch, "test", None)
    after = test.end_lineno if test is not None and test.end_lineno is not None else branch.lineno  # type: ignore[attr-defined]
    return after < v.lineno <= (branch.end_lineno or branch.lineno)  # type: ignore[attr-defined]


def _assigned(func: ast.AST, name: str) -> list[ast.expr]:
    """Values `func` assigns to `name` (`n = x.shape[1]`, `b, n, _ = x.shape`)."""
    out: list[ast.expr] = []
    for node in ast.walk(func):
        if isinstance(node, ast.Assign):
            bound: set[str] = set()
            for t in node.targets:  # names bound, not read (`self.grid[i] = ...` binds none)
                store_names(t, bound)
            if name in bound:
                out.append(node.value)
        elif (
            isinstance(node, (ast.AugAssign, ast.AnnAssign))
            and isinstance(node.target, ast.Name)
            and node.target.id == name
            and node.value is not None
        ):
            out.append(node.value)
    return out


DIAGNOSTIC_FILTERS.append(shape_folded)
DIAGNOSTIC_FILTERS.append(reached_only_under_folded_test)
