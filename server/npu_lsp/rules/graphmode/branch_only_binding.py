"""MS118: a name bound on only one path of an `if`, or only in a loop body, then used after it."""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable, Iterator

from npu_lsp.astutil import is_name_char
from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.control import bindings, block_of, name_events, param_names
from npu_lsp.rules.graphmode.helpers import GraphRule, terminates
from npu_lsp.rules.graphmode.values import UNKNOWN, instances


@rule(code="MS118", name="branch-only-binding", severity="error", family="graphmode")
class BranchOnlyBinding(GraphRule):
    """## What it does
    Flags a local name that is assigned on only one side of an `if`, or only inside a
    `while` or `for` loop body, and is then read after the branch or loop.

    ## Why is this bad?
    The graph parser builds both branches of an `if`, and each must define the names used
    afterwards. MindSpore stops with `UnboundLocalError: The local variable 'y' is not
    defined in true branch, but defined in false branch.` (or `... defined in the 'for' loop
    body cannot be used outside of the loop body.`), even when the path taken at run time
    would define it. This happens before types are known, so it applies to conditions on
    shapes, `isinstance`, `is None` on an argument, globals and even `if True:`, and to
    loops over tuples or `range(3)`. Only conditions the parser folds itself are fine: an
    attribute of `self` (`if self.use_bias:`, `if not self.training:`, `if self.bias is
    None:`), one attribute of a global module, class or object (`if cfg.device_target ==
    "Ascend":`), a local bound only to a literal (`flag = True`), `not` or comparisons of those,
    and `and`/`or` of such conditions read as Python reads them: each operand reached must
    fold to a bool, and the first one deciding the result ends it (`self.flag and x.sum() >
    0` with flag True builds both branches, with flag False it is folded; written/heldout42a
    probes `fix43a_ao_*`). A bare attribute of `self` is folded only when it holds a bool:
    `if self.shift:` with `self.shift = (3, 6)` or `None` (an int, a float, a str too) builds
    both branches, so `if self.shift: sh, sw = self.shift` then `if self.shift: x = roll(x,
    -sh)` fails, while `if self.shift is not None:` is folded (written/heldout42a probes
    `fix42a_sb_*`); each instance built in the file counts, also those built in a loop over
    literals (`for shift in (None, (3, 6)): Block(4, shift)`, probes `fix43a_il_*`).

    ## Example
    ```python
    def construct(self, x):
        if x.sum() > 0:
            y = x * 2
        return y
    ```

    ## Use instead
    Bind the name on every path before using it:
    ```python
    def construct(self, x):
        y = x
        if x.sum() > 0:
            y = x * 2
        return y
    ```

    ## Fix safety
    No automatic fix: the right default value depends on the program.

    ## References
    - RULES.md, section 1: a name bound on only one path of a tensor-dependent `if`, or only
      inside a loop body, then used afterwards.
    """

    nodes = (ast.If, ast.While, ast.For)

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        # not a generator itself: nearly every `if` and loop stops at the filters below
        func = ctx.function
        if func is None:
            return ()
        end = node.end_lineno or node.lineno  # type: ignore[attr-defined]
        if type(node) is ast.If:
            # a rebound parameter can never be flagged (parameters are bound before every branch)
            if terminates(node.body) or (node.orelse and terminates(node.orelse)):
                return ()
            body = _parsed_bindings(node.body, func, ctx)
            other = _parsed_bindings(node.orelse, func, ctx) if node.orelse else set()
            if body is None or other is None:
                return ()  # the side the parser keeps ends in `raise` / `return`
            only = body ^ other
            if not only or not only - _params(func, ctx):
                return ()
            folded = folded_by_parser(node.test, func)
            bare = _bare_self_attr(node.test) if folded else None
            either = _bool_op(node.test) if folded and bare is None else None
            if folded and bare is None and either is None:
                return ()
            if not only - _assigned_before(node, ctx):  # `h = ...` then `if c: h = ...`
                return ()
            where = "true branch" if body - other else "false branch"
            if bare is not None:
                # the instance model only when a name is used after the `if` (it is costly)
                return self._report(node, ctx, func, only, where, end, unfolded=lambda: _known_non_bool(bare, func, ctx))
            if either is not None:
                return self._report(node, ctx, func, only, where, end, unfolded=lambda: _bool_op_unfolded(either, func, ctx))
        elif type(node) is ast.For:
            # the loop's own target and its body's bindings; cheap filters before the name
            # index: most loops only rebind names assigned just before them, and their
            # target is not mentioned after the loop
            only = bindings([node]) - _assigned_before(node, ctx)
            if only:
                after = "\n".join(ctx.lines[end : getattr(func, "end_lineno", None) or end])
                only = {n for n in only if _mentions(after, n)}
            where = "'for' loop body"
        else:
            assert isinstance(node, ast.While)
            only = bindings(node.body)
            where = "'while' loop body"
        if not only:
            return ()
        return self._report(node, ctx, func, only, where, end)

    def _report(
        self,
        node: ast.AST,
        ctx: Context,
        func: ast.AST,
        only: set[str],
        where: str,
        end: int,
        unfolded: Callable[[], bool] | None = None,
    ) -> Iterator[Diagnostic]:
        events = name_events(ctx, func)
        # an `elif` starts where its chain starts: the earlier branches do not bind before it
        top: ast.AST = node
        while (p := ctx.parent(top)) is not None and isinstance(p, ast.If) and p.orelse == [top]:
            top = p
        before = events.bound_before(top.lineno)  # type: ignore[attr-defined]
        for name in sorted(only - before):
            use = events.first_use_after(name, end)
            if use is None:
                continue
            if unfolded is not None:
                if not unfolded():
                    return
                unfolded = None
            if isinstance(node, ast.If):
                msg = f"`{name}` is only bound in the {where} of this `if`, but used after it (graph mode compiles both branches)"
            else:
                msg = f"`{name}` is first bound inside the {where} and cannot be used after the loop in graph mode"
            yield ctx.diagnostic(self, use, msg)


def _parsed_bindings(stmts: list[ast.stmt], func: ast.AST, ctx: Context) -> set[str] | None:
    """`bindings(stmts)` as MindSpore's parser builds them: a nested `if` (an `elif` too)
    whose test the parser folds keeps only the side it takes, so `elif self.mode ==
    "wgangp": loss = ...` with `mode` "lsgan" binds nothing. Measured (written/heldout32a
    cases `loss_gan_mode_string_in_construct`, `r2_loss_mode_in_*_elif_no_else*`, probes
    `fix32d_in_*`, `fix32d_tensor_test_*`): `if self.mode in ["lsgan", "vanilla"]: loss =
    ... elif self.mode == "wgangp": loss = ...` fails at LAX and STRICT ("The local variable
    'loss' is not defined in false branch, but defined in true branch"): `in` / `not in`
    (a list, a tuple, `self.modes`, a substring) and a tensor test are not folded, and the
    folded `elif` gives the false branch no `loss`; with the `elif` matching, or an `else`,
    it compiles, and so does a folded `else: raise ...` (written/heldout32a
    `r2_loss_mode_in_list_else_raise`: None, the block never falls through). Only a test
    whose value the instance model knows is narrowed."""
    for st in stmts:  # a plain loop, not `any(...)`: every `if` of compiled code asks
        if type(st) is ast.If:
            break
    else:
        return bindings(stmts)  # most blocks: no nested `if` at their top
    out: set[str] = set()
    for st in stmts:
        if type(st) is ast.If and folded_by_parser(st.test, func):
            value = instances(ctx).evaluate(st.test, func)
            if value is not UNKNOWN and not (_bare_self_attr(st.test) is not None and _plain_non_bool(value)):
                taken = st.body if value else st.orelse
                if taken and terminates(taken):
                    return None  # `else: raise NotImplementedError(...)` kept: no fall-through
                inner = _parsed_bindings(taken, func, ctx)
                if inner is None:
                    return None
                out |= inner
                continue
        out |= bindings([st])
    return out


def _params(func: ast.AST, ctx: Context) -> set[str]:
    """`param_names` of `func`, once per function (every `if` in it asks)."""
    key = ("MS118.params", id(func))
    hit: set[str] | None = ctx.cache.get(key)
    if hit is None:
        hit = ctx.cache[key] = param_names(func)
    return hit


def _bare_self_attr(test: ast.expr) -> ast.Attribute | None:
    """`self.<attr>` when `test` is it, or `not` of it. Measured on 2.10 (written/heldout42a
    cases `r2_window_shift_undefined_else_*`, probes `fix42a_sb_*`): the parser folds such a
    test only when the attribute holds a bool; with `None`, an int (0 or 1), a float, a str,
    a tuple or an empty list it builds both branches ("The local variable 'k' is not defined
    in false branch, but defined in true branch", LAX and STRICT), while `self.flag is not
    None` and `self.flag > 0` fold."""
    while type(test) is ast.UnaryOp and type(test.op) is ast.Not:
        test = test.operand
    return test if type(test) is ast.Attribute and _self_attribute(test) else None


def _bool_op(test: ast.expr) -> ast.BoolOp | None:
    """`test` when it is an `and` / `or` (or `not` of one)."""
    while type(test) is ast.UnaryOp and type(test.op) is ast.Not:
        test = test.operand
    return test if type(test) is ast.BoolOp else None


def _bool_op_unfolded(test: ast.BoolOp, func: ast.AST, ctx: Context) -> bool:
    """Does the parser build both branches of `if a and b:` / `if a or b:` although an
    operand is one it folds? It reads the operands in turn as Python would: each one it
    reaches must fold to a bool, and the first that decides the result (False for `and`,
    True for `or`) ends it. Measured on 2.10 (written/heldout42a probes `fix43a_ao_*`,
    `fix42a_sb_tuple_and_training`): `self.flag and x.sum() > 0` with flag True, `self.flag
    or x.sum() > 0` with flag False, `x.sum() > 0 and self.flag`, `self.flag and
    self.other` with other `(3, 6)` or flag 1, `(3, 6) or True`, `False or None` build both
    branches at both levels ("The local variable 'k' is not defined in false branch");
    `False and x.sum() > 0`, `True or x.sum() > 0`, `False and (3, 6)`, `True or None`,
    `self.other is not None and x.sum() > 0` with other None fold. Unknown values: silence."""
    decides = type(test.op) is ast.Or
    inst = instances(ctx)
    for operand in test.values:
        if _bool_op(operand) is not None:
            return False  # nested `and` / `or`: not measured
        if not folded_by_parser(operand, func):
            return True  # reached, and left to the graph
        bare = _bare_self_attr(operand)
        if bare is not None and _known_non_bool(bare, func, ctx):
            return True
        value = inst.evaluate(operand, func)
        if type(value) is not bool or value is decides:
            return False  # not known, or decides the test: folded
    return False


def _plain_non_bool(v: object) -> bool:
    return v is not UNKNOWN and (v is None or type(v) in (int, float, str, tuple, list))


def _known_non_bool(e: ast.expr, func: ast.AST, ctx: Context) -> bool:
    """Is `e` (`self.<attr>`) a plain Python value other than a bool, joined over every
    instance of its class built in the file, or else for each one (at most eight; a call in
    a loop over literals once per turn): each instance compiles its own graph. Measured
    (written/heldout42a case `pangu_shift_window_concat_if_shift`, probes `fix43a_il_*`):
    `for shift in (None, (3, 6)): Block(4, shift)`, the same in a comprehension, over
    `range(2)` or `[0, 2]`, and a parent's `CellList([Block(4, 0 if i % 2 == 0 else 2) for i
    in range(2)])` fail at both levels; with `(False, True)` or `i % 2 == 1` they compile."""
    inst = instances(ctx)
    joined = inst.evaluate(e, func)
    if joined is not UNKNOWN:
        return _plain_non_bool(joined)
    cls = inst.owner_of(func)
    sites = inst.instance_sites(cls) if cls is not None else None
    return bool(sites) and all(_plain_non_bool(inst.evaluate_for_instance(e, func, s)) for s in sites or ())


def folded_by_parser(test: ast.expr, func: ast.AST) -> bool:
    """Does MindSpore's parser fold this `if` condition itself (so only one branch is built)?
    Measured on 2.10: attributes of `self`, one attribute of a global module, class or
    object, locals bound only to literals, `not`, comparisons of those (not `in` / `not
    in`) and `and`/`or` with one of those; not a bare literal (`if True:`), bare globals, arguments or calls
    (`getattr(self, ...)`, `len(...)`)."""
    if type(test) is ast.UnaryOp and type(test.op) is ast.Not:
        return folded_by_parser(test.operand, func)
    if type(test) is ast.BoolOp:
        # a folded operand may decide the whole test (`self.flag or extra` with flag True);
        # its value is unknown here, so err towards silence
        return any(folded_by_parser(v, func) for v in test.values)
    if type(test) is ast.Compare:
        if any(type(op) in (ast.In, ast.NotIn) for op in test.ops):
            # measured (written/heldout32a probes `fix32d_in_*`, `fix32d_str_contains_elif`):
            # `self.mode in self.modes`, `"gan" in self.mode`, `self.mode in ["a", "b"]` and
            # `not in` are left to the graph, both branches built, at LAX and STRICT
            return False
        operands = (test.left, *test.comparators)
        return all(_parse_constant(e) or folded_by_parser(e, func) for e in operands) and not all(
            _parse_constant(e) for e in operands
        )
    if type(test) is ast.Attribute:
        return _self_attribute(test) or _global_attribute(test, func)
    if type(test) is ast.Name:
        return _local_constant(test.id, func)
    return False


def _parse_constant(e: ast.expr) -> bool:
    return type(e) is ast.Constant


def _self_attribute(e: ast.expr) -> bool:
    while type(e) is ast.Attribute:
        e = e.value
    return type(e) is ast.Name and e.id == "self"


def _global_attribute(e: ast.Attribute, func: ast.AST) -> bool:
    """One attribute of a global name: a module, class or object the function does not bind
    (`cfg.device_target == "Ascend"`, `consts.USE`, `Cfg.mode != 0`). Measured on 2.10: the
    parser folds these like `self.` attributes, also for an object imported from another
    module; it does not fold two levels (`cfg.sub.device`, `pkg.config.device_target`),
    subscripts (`CFG["device"]`) or bare globals. Bare, it folds only a bool value (a str
    attribute as the whole condition is not folded); the value is not known here, so err
    towards silence."""
    root = e.value
    if not isinstance(root, ast.Name) or root.id == "self" or root.id in param_names(func):
        return False
    return not any(
        isinstance(n, ast.Name) and n.id == root.id and not isinstance(n.ctx, ast.Load) for n in ast.walk(func)
    )


def _local_constant(name: str, func: ast.AST) -> bool:
    """A local (not a parameter) whose every binding is a literal (`flag = True`; measured:
    `use = self.use_bias` is not folded)."""
    if name in param_names(func):
        return False
    simple = stores = 0
    for n in ast.walk(func):
        if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store):
            stores += 1
        elif isinstance(n, (ast.Assign, ast.AnnAssign)):
            targets = n.targets if isinstance(n, ast.Assign) else [n.target]
            if any(isinstance(t, ast.Name) and t.id == name for t in targets):
                value = n.value
                if value is None or not _parse_constant(value):
                    return False
                simple += 1
    # any other store (loop target, unpacking, `+=`, `with ... as`) makes it a variable
    return simple > 0 and simple == stores


def _mentions(text: str, name: str) -> bool:
    """Does `name` occur in `text` as a whole word (a superset of its uses there)?"""
    i = text.find(name)
    while i >= 0:
        j = i + len(name)
        if not is_name_char(text[i - 1 : i]) and not is_name_char(text[j : j + 1]):
            return True
        i = text.find(name, j)
    return False


def _assigned_before(node: ast.stmt, ctx: Context) -> set[str]:
    """Names assigned by the statements before `node` in its own block (so bound on every
    path that reaches it)."""
    _parent, block, index = block_of(node, ctx)
    out: set[str] = set()
    for st in block[:index]:
        # (exact types, no `isinstance` calls: every `if` and `for` of compiled code asks)
        t = type(st)
        if t is ast.Assign:
            for target in st.targets:  # type: ignore[attr-defined]  # (a loop, not a generator)
                if type(target) is ast.Name:
                    out.add(target.id)
        elif (t is ast.AugAssign or t is ast.AnnAssign) and type(st.target) is ast.Name:  # type: ignore[attr-defined]
            out.add(st.target.id)  # type: ignore[attr-defined]
    return out
