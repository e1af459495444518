"""MS269: a str in the output of a top network whose `construct` keeps a run-time loop or
branch, when plain code prints that output whole."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.flow import Kind, analyzer
from npu_lsp.rules.graphmode.helpers import GraphRule, own_nodes
from npu_lsp.rules.graphmode.none_in_strict_output import is_outermost_compiled
from npu_lsp.rules.graphmode.values import in_dead_branch

#: `jit` spelled by MindSpore: `ms.jit(net)` compiles the network another way, and its str
#: output comes back (measured, probe `fix42b_rs_jit_net_while`)
_JIT = frozenset({"mindspore.jit", "mindspore.common.jit", "mindspore.common.api.jit"})


@rule(code="MS269", name="str-in-control-flow-output", severity="error", family="graphmode")
class StrInControlFlowOutput(GraphRule):
    """## What it does
    Flags a `return` of the top network's `construct` (a Cell plain code builds and calls,
    `net = Net(); print(net(x))`) whose tuple or list holds a str (a literal, an f-string
    without fields, a name bound only to str literals, or `self.mode` that `__init__` sets to
    a str literal), nested too, when that `construct` itself keeps a loop or a branch
    MindSpore decides at run time, and plain code prints the call's result whole
    (`print(net(x))`, `out = net(x); print(out)`). Kept control flow is a `while` on a tensor
    or on a `ms.mutable` number (also a tensor counter, `i = Tensor(0)`), a `for` over
    `range(n)` of such a number, an `assert` on a tensor, and an `if` on a tensor whose side
    raises, returns, breaks or continues, or binds a name that the other path binds to a
    value of another kind (a number or a tuple on one side, a tensor on the other). Under
    STRICT a returned dict holding a str counts too.

    ## Why is this bad?
    MindSpore 2.10 compiles such a network, runs it, and fails when Python reads the str out
    of the output: `RuntimeError: Failure info [The input shape size 1 exceeds device address
    data size 0.]`, at both syntax levels. The top graph's str output has no device data once
    the graph keeps its control flow. A plain tensor `if` (MindSpore turns it into a select),
    a `while` on a Python counter or a `for` over a constant range (unrolled), loops in a
    sub-cell, method or helper, a jit function, `ms.jit(net)`, and reading the items
    (`y, status = net(x)`, `net(x)[1]`) compile and run.

    ## Example
    ```python
    class Net(nn.Cell):
        def construct(self, x):
            while x.abs().max() > 10:
                x = x * 0.5
            return x, "done"

    print(Net()(x))
    ```

    ## Use instead
    Return tensors only and keep the status in Python (`print(net(x), "done")`), or unpack
    the result (`y, status = net(x)`).

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 3 (a tensor condition is compiled as a run-time branch). Measured
      on MindSpore 2.10 (CPU), written/lax probes `fix42b_rs_*`: the loops, asserts and
      branches above fail with `print(net(x))`; a plain tensor `if` (also with a `print` or a
      sub-cell call in it), a conditional expression, the control flow in a sub-cell, method,
      helper or jit function, `ms.jit(net)`, an int returned, a str returned alone, and
      `net(x)[0]`, `net(x)[1]`, `y, s = net(x)` compile. Difftest seeds 9880118, 9940012,
      9990163, 12001746.
    """

    nodes = (ast.Return,)

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        scope = ctx.scope
        if scope is None or scope.kind != "construct" or ctx.function is not scope.function:
            return ()
        value = getattr(node, "value", None)
        t = type(value)
        if not (t is ast.Tuple or t is ast.List or (t is ast.Dict and scope.strict)):
            return ()
        func = ctx.function
        if not isinstance(func, ast.FunctionDef):
            return ()
        assert value is not None
        item = _str_item(value, func, ctx, scope.strict)
        if item is None:
            return ()
        owner = analyzer(ctx).owner_class(func)
        if owner is None or not is_outermost_compiled(func, "construct", ctx):
            return ()
        printed = _printed_whole(owner.name, ctx)
        if printed is None:
            return ()
        kept = _kept_flow(func, ctx)
        if kept is None:
            return ()
        return [
            ctx.diagnostic(
                self,
                node,
                f"`{ctx.segment(item)}` is a str in the output of the top network, whose `construct` keeps a "
                f"run-time {_what(kept)} (line {kept.lineno}): printing the output (line {printed.lineno}) fails "
                "at both syntax levels (MindSpore: The input shape size 1 exceeds device address data size 0); "
                "return tensors only, or unpack the result",
            )
        ]


def _what(n: ast.AST) -> str:
    if isinstance(n, (ast.While, ast.For)):
        return "loop"
    if isinstance(n, ast.Assert):
        return "assert"
    return "branch"


def _str_item(e: ast.expr, func: ast.FunctionDef, ctx: Context, strict: bool) -> ast.expr | None:
    """The first str in the returned display `e` (nested tuples and lists, a dict's values
    under STRICT)."""
    items = list(e.values) if isinstance(e, ast.Dict) else list(getattr(e, "elts", []))
    for x in items:
        if isinstance(x, (ast.Tuple, ast.List)) or (strict and isinstance(x, ast.Dict)):
            inner = _str_item(x, func, ctx, strict)
            if inner is not None:
                return inner
        elif _is_str(x, func, ctx):
            return x
    return None


def _is_str(x: ast.expr, func: ast.FunctionDef, ctx: Context) -> bool:
    if isinstance(x, ast.Constant):
        return isinstance(x.value, str)
    if isinstance(x, ast.JoinedStr):
        return all(isinstance(v, ast.Constant) for v in x.values)
    if isinstance(x, ast.Name):
        bound = analyzer(ctx).single_assignment(x.id, func)
        return isinstance(bound, ast.Constant) and isinstance(bound.value, str)
    if isinstance(x, ast.Attribute) and isinstance(x.value, ast.Name) and x.value.id == "self":
        owner = analyzer(ctx).owner_class(func)
        return owner is not None and _init_str_attribute(owner, x.attr)
    return False


def _init_str_attribute(owner: ast.ClassDef, attr: str) -> bool:
    """Does `__init__` set `self.<attr>` to a str literal, and nothing else in the class store
    it?"""
    found = False
    for m in owner.body:
        if not isinstance(m, ast.FunctionDef):
            continue
        for n in ast.walk(m):
            targets: list[ast.expr] = []
            if isinstance(n, ast.Assign):
                targets = n.targets
            elif isinstance(n, (ast.AugAssign, ast.AnnAssign)):
                targets = [n.target]
            for tgt in targets:
                hit = any(
                    isinstance(s, ast.Attribute) and s.attr == attr and isinstance(s.value, ast.Name) and s.value.id == "self"
                    for s in ast.walk(tgt)
                )
                if not hit:
                    continue
                plain = (
                    m.name == "__init__"
                    and isinstance(n, ast.Assign)
                    and len(n.targets) == 1
                    and isinstance(tgt, ast.Attribute)
                    and isinstance(n.value, ast.Constant)
                    and isinstance(n.value.value, str)
                )
                if not plain:
                    return False
                found = True
    return found


#: builtins that turn a whole network output into text (measured, probes `fix42b_rs_use_*`)
_SHOWN = frozenset({"print", "str", "repr"})


def _printed_whole(cls_name: str, ctx: Context) -> ast.Call | ast.FormattedValue | None:
    """Where plain code turns the whole result of calling an instance of `cls_name` into
    text (`print(net(x))`, `print("out", net(x))`, `out = net(x); print(out)`, `str(...)`,
    an f-string field); None also when the file wraps an instance or the class with
    `ms.jit`. Measured (probes `fix42b_rs_use_*`): indexing, unpacking or `list(...)` of the
    result, `print(*net(x))`, or not reading it, run."""
    key = ("MS269.printed", cls_name)
    if key in ctx.cache:
        hit: ast.Call | ast.FormattedValue | None = ctx.cache[key]
        return hit
    ctx.cache[key] = hit = _find_printed(cls_name, ctx)
    return hit


def _find_printed(cls_name: str, ctx: Context) -> ast.Call | ast.FormattedValue | None:
    tree = ctx.tree
    instances: set[str] = set()
    calls: list[ast.Call] = []
    assigns: list[ast.Assign] = []
    #: where the result is turned into text: `print(...)`, `str(...)`, `repr(...)`, `f"{...}"`
    shown: list[ast.Call | ast.FormattedValue] = []
    for n in _plain_nodes(tree, ctx):
        if isinstance(n, ast.FormattedValue):
            shown.append(n)
        elif isinstance(n, ast.Call):
            calls.append(n)
            if isinstance(n.func, ast.Name) and n.func.id in _SHOWN:
                shown.append(n)
        elif isinstance(n, ast.Assign):
            assigns.append(n)
            v = n.value
            if isinstance(v, ast.Call) and isinstance(v.func, ast.Name) and v.func.id == cls_name:
                instances.update(t.id for t in n.targets if isinstance(t, ast.Name))

    def runs(c: ast.expr) -> bool:
        if not isinstance(c, ast.Call):
            return False
        f = c.func
        if isinstance(f, ast.Name):
            return f.id in instances
        return isinstance(f, ast.Call) and isinstance(f.func, ast.Name) and f.func.id == cls_name

    for c in calls:
        if (
            ctx.qualname(c.func) in _JIT
            and c.args
            and any(isinstance(s, ast.Name) and (s.id in instances or s.id == cls_name) for s in ast.walk(c.args[0]))
        ):
            return None
    # names plain code binds only to a call's whole result (`out = net(x)`, not rebound to
    # `out[0]` later)
    results = {t.id for a in assigns if runs(a.value) for t in a.targets if isinstance(t, ast.Name)}
    results -= {t.id for a in assigns if not runs(a.value) for t in a.targets if isinstance(t, ast.Name)}
    results -= {
        t.id
        for n in _plain_nodes(tree, ctx)
        if isinstance(n, (ast.AugAssign, ast.AnnAssign, ast.For))
        for t in ast.walk(n.target)
        if isinstance(t, ast.Name)
    }
    for at in shown:
        got = [at.value] if isinstance(at, ast.FormattedValue) else at.args
        if any(runs(a) or (isinstance(a, ast.Name) and a.id in results) for a in got):
            return at
    return None


def _plain_nodes(tree: ast.Module, ctx: Context) -> list[ast.AST]:
    """The nodes of the file outside compiled functions (module code, `main()`, `__init__`)."""
    out: list[ast.AST] = []
    stack: list[ast.AST] = [tree]
    while stack:
        n = stack.pop()
        out.append(n)
        for child in ast.iter_child_nodes(n):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) and ctx.scopes.scope_for(child) is not None:
                continue
            stack.append(child)
    return out


def _kept_flow(func: ast.FunctionDef, ctx: Context) -> ast.stmt | None:
    """The first loop or branch of `func`'s own code MindSpore keeps at run time and does
    not turn into a select (see the rule's docstring); cached per function."""
    key = ("MS269.kept", id(func))
    if key in ctx.cache:
        hit: ast.stmt | None = ctx.cache[key]
        return hit
    ctx.cache[key] = hit = _find_kept(func, ctx)
    return hit


def _find_kept(func: ast.FunctionDef, ctx: Context) -> ast.stmt | None:
    for n in own_nodes(func):
        if (
            isinstance(n, (ast.While, ast.Assert, ast.For, ast.If))
            and _keeps(n, func, ctx)
            and not in_dead_branch(ctx, func, ctx.span(n))
        ):
            return n
    return None


def _keeps(n: ast.While | ast.Assert | ast.For | ast.If, func: ast.FunctionDef, ctx: Context) -> bool:
    a = analyzer(ctx)

    def dynamic(e: ast.expr) -> bool:
        return a.kind(e, func) >= Kind.VAR

    if isinstance(n, ast.For):
        it = n.iter
        return (
            isinstance(it, ast.Call)
            and isinstance(it.func, ast.Name)
            and it.func.id == "range"
            and any(dynamic(x) for x in it.args)
        )
    if not dynamic(n.test):
        return False
    return not isinstance(n, ast.If) or _leaves(n) or _mismatched(n, func, ctx)


def _leaves(n: ast.If) -> bool:
    """Does a side of `n` raise or return, or break or continue the loop around the `if`?"""
    return any(_exits(st, False) for st in (*n.body, *n.orelse))


def _exits(st: ast.AST, in_loop: bool) -> bool:
    if isinstance(st, (ast.Raise, ast.Return)):
        return True
    if isinstance(st, (ast.Break, ast.Continue)):
        return not in_loop  # an inner loop's own `break` leaves only that loop
    if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
        return False
    inner = in_loop or isinstance(st, (ast.For, ast.While))
    return any(_exits(c, inner) for c in ast.iter_child_nodes(st) if isinstance(c, ast.stmt))


def _mismatched(n: ast.If, func: ast.FunctionDef, ctx: Context) -> bool:
    """Does a side of `n` bind a name (directly in it) to a value of another kind than the
    other side, or than the statement just before the `if` when the other side leaves it
    (`y = 0` then `if t: y = x`; `y = (x, x)` / `y = x`)? MindSpore joins the two and keeps
    the branch (measured, probes `fix42b_rs_if_*`)."""
    body, orelse = _direct_bindings(n.body), _direct_bindings(n.orelse)
    before = _bindings_before(n, func, ctx)
    for name in body.keys() | orelse.keys():
        one = body.get(name, before.get(name))
        other = orelse.get(name, before.get(name))
        if one is None or other is None:
            continue
        k1, k2 = _sort_of(one, func, ctx), _sort_of(other, func, ctx)
        if k1 is not None and k2 is not None and k1 != k2:
            return True
    return False


def _direct_bindings(block: list[ast.stmt]) -> dict[str, ast.expr]:
    out: dict[str, ast.expr] = {}
    for st in block:
        if isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name):
            out[st.targets[0].id] = st.value
    return out


def _bindings_before(n: ast.If, func: ast.FunctionDef, ctx: Context) -> dict[str, ast.expr]:
    """The plain bindings of the statements before `n` in its block (the last one wins)."""
    parent = ctx.parent(n)
    for field in ("body", "orelse", "finalbody"):
        block = getattr(parent, field, None)
        if isinstance(block, list) and n in block:
            return _direct_bindings(block[: block.index(n)])
    return {}


def _sort_of(e: ast.expr, func: ast.FunctionDef, ctx: Context) -> str | None:
    """"number", "sequence" or "tensor" when known; None otherwise."""
    if isinstance(e, ast.Constant) and type(e.value) in (int, float):
        return "number"
    if isinstance(e, (ast.Tuple, ast.List)):
        return f"sequence{len(e.elts)}"
    if analyzer(ctx).kind(e, func) == Kind.TENSOR:
        return "tensor"
    return None
