"""MS180: a str known only at run time: two str constants joined under a tensor condition
and then used, or a str repeated a run-time number of times (both levels)."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.flow import Analyzer, Kind, analyzer
from npu_lsp.rules.graphmode.helpers import (
    GraphRule,
    inside_while,
    module_function,
    own_nodes,
    quoted,
)
from npu_lsp.rules.graphmode.opaque_value_query import opaque_at_lax

#: builtins whose argument may be a run-time str (it is printed by the runtime, not read)
_HARMLESS_CALLS = frozenset({"builtins.print"})


@rule(code="MS180", name="runtime-str", severity="error", family="graphmode")
class RuntimeStr(GraphRule):
    """## What it does
    Flags a name bound to one str constant on one side of a tensor condition and to a
    different one on the other (an `if`/`else`, a lone `if` over an earlier binding, a
    conditional expression, or a helper or method of the cell returning different strs from a
    tensor `if`), when the str is then read as a str: compared (`==`, `!=`, `if s == "a":`,
    `"a" in s`), tested for truth (`if s:`),
    measured with `len`, formatted in an f-string, used as a dict key, passed to a helper,
    returned inside a tuple, list or dict, given to a str method (`s.upper()`) or to
    `getattr`; a str built from it with `+` is followed. Returned alone it compiles (the
    caller receives a wrong value, not an error), so that is not flagged. Also a str constant repeated a number of times read from a tensor
    (`"ab" * int(t.max())`), used or not; under LAX not when that number is read from a JIT
    Fallback result (`int(v.sum())` with `v` from a `functools.partial` object's call),
    which LAX repeats at run time.

    ## Why is this bad?
    A tensor condition is compiled as a branch, so MindSpore joins the two constants into a
    str known only at run time (`ValueAny`). MindSpore 2.10 cannot use that value at either
    syntax level: `==` has no CPU kernel ("Unsupported op [string_eq]"), `len` and f-strings
    fail in the runtime fallback ("Invalid host tensor size:1 and kernel tensor size:0 for
    pyexecute"), returning it in a tuple or dict fails ("The input shape size 1 exceeds
    device address data size 0"), `s.upper()` and `getattr` refuse it ("StringUpper expected to get a string",
    "Cast failed, original value: ValueAny"), a dict refuses it as a key. `str * n` is
    computed while compiling, so a run-time `n` stops it ("string_mul requires the input to
    be a string and an integer, but got ab and ValueAny"). Leaving a joined str unused,
    printing it, testing `s in ("a", "b")`, equal strs on both sides, and conditions known
    while compiling (shapes, flags on `self`) compile.

    ## Example
    ```python
    def construct(self, x):
        mode = "shrink" if x.abs().max() > 1 else "keep"
        if mode == "shrink":
            return x / x.abs().max()
        return x
    ```

    ## Use instead
    Branch on the tensor condition itself (`if x.abs().max() > 1:`), or keep a tensor flag
    (`shrink = x.abs().max() > 1`) and select with `ops.select`.

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 3 (a tensor `if` joins the values of both branches). Measured on
      MindSpore 2.10 with the probes in `tests/npu_lsp/fixtures/written/strings/` (strs
      joined by `if`/`else`, lone `if`, conditional expressions and helpers, used by
      comparison, `in`, `len`, `+`, f-strings, dict keys, returns, helpers, `upper`,
      `getattr`, beside accepted neighbours: unused, printed, equal strs, shape and flag
      conditions), and `str * int(t)` beside `str * n` with `n` from a shape; the written
      heldout16b probes `fe_sm_*` (a count from a JIT Fallback value compiles under LAX).
    """

    nodes = (ast.If, ast.Assign, ast.BinOp)

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        # not a generator itself: most nodes are dismissed on their shape alone, for the
        # cost of a call rather than of a generator each
        if ctx.scope is None or ctx.function is None or not _candidate(node, ctx):
            return ()
        return self._check(node, ctx)

    def wants_assign(self, target: type[ast.AST] | None, value: type[ast.AST]) -> bool:
        # `_candidate`'s shape: one name bound to a conditional expression or a call
        return target is ast.Name and (value is ast.IfExp or value is ast.Call)

    def _check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        a = analyzer(ctx)
        if isinstance(node, ast.BinOp):
            yield from self._repeated(node, ctx, a)
            return
        if isinstance(node, ast.If):
            found = _if_join(node, ctx, a)
        else:
            assert isinstance(node, ast.Assign)
            found = _assign_join(node, ctx, a)
        if found is None:
            return
        name, values = found
        use = _used(name, node, ctx)
        if use is None:
            return
        yield ctx.diagnostic(
            self,
            node,
            f"`{name}` is {values[0]!r} on one side of this tensor condition and {values[1]!r} on "
            "the other, so MindSpore joins it into a str known only at run time; MindSpore 2.10 "
            f"cannot use it: `{ctx.segment(use)}` on line {getattr(use, 'lineno', 0)} fails at both "
            "syntax levels",
        )


    def _repeated(self, node: ast.BinOp, ctx: Context, a: Analyzer) -> Iterable[Diagnostic]:
        """`"ab" * n` with `n` a Python number read from a run-time tensor."""
        if not isinstance(node.op, ast.Mult):
            return
        for text, count in ((node.left, node.right), (node.right, node.left)):
            if _str_const(text) is not None and a.kind(count) == Kind.VAR:
                if ctx.scope is not None and ctx.scope.level == "lax" and opaque_at_lax(count, ctx.function, ctx):
                    # read from a JIT Fallback object (`int(v.sum())` with `v` made by a
                    # `functools.partial` call): the count is a Python object too, and LAX
                    # repeats the str by JIT Fallback at run time (measured, written/heldout16b
                    # probes `fe_sm_seed*`: compiles; the same from a plain tensor fails)
                    return
                yield ctx.diagnostic(
                    self,
                    node,
                    f"`{ctx.segment(count)}` is a number read from a run-time tensor, but MindSpore "
                    f"2.10 repeats a str while compiling: `{ctx.segment(node)}` fails at both syntax levels "
                    '("string_mul requires the input to be a string and an integer, but got ... ValueAny")',
                )
                return


def _candidate(node: ast.AST, ctx: Context) -> bool:
    """Could `node` be flagged, judged on its shape alone (no data flow)? A str constant
    repeated, an `if` whose text holds a str literal (without a quote it holds no str
    constant), a name bound to a conditional expression of two different strs or to the
    result of a helper or a method of the cell."""
    # dispatched on the node's exact type (the walk hands this rule parsed `If`, `Assign`
    # and `BinOp` nodes only, ~1,800 on a 5,000-line file): one test per step, not an
    # `isinstance` call each
    t = type(node)
    if t is _BINOP:
        if type(node.op) is not _MULT:  # type: ignore[attr-defined]
            return False
        # `_str_const(side) is not None` inlined (a str value is never None): every product
        # of compiled code comes here, nearly all of tensors
        lhs, rhs = node.left, node.right  # type: ignore[attr-defined]
        return (type(lhs) is _CONSTANT and isinstance(lhs.value, str)) or (
            type(rhs) is _CONSTANT and isinstance(rhs.value, str)
        )
    if t is _IF:
        return quoted(node, ctx)
    if t is not _ASSIGN:
        return False
    targets = node.targets  # type: ignore[attr-defined]
    if len(targets) != 1 or type(targets[0]) is not _NAME:
        return False
    v = node.value  # type: ignore[attr-defined]
    vt = type(v)
    if vt is _IFEXP:
        left, right = _str_const(v.body), _str_const(v.orelse)
        return left is not None and right is not None and left != right
    if vt is not _CALL:
        return False
    # a call joins strs only through a helper of this file (`_assign_join`): a compiled
    # module function, or a method of the cell (most `x = self.f(...)` call a sub-cell)
    f = v.func
    ft = type(f)
    if ft is _NAME:
        return module_function(f.id, ctx) is not None
    if not (ft is _ATTRIBUTE and type(f.value) is _NAME and f.value.id == "self"):
        return False
    cls = analyzer(ctx).owner_class(ctx.function)
    return cls is not None and f.attr in _methods(cls, ctx)


_BINOP, _MULT, _CONSTANT, _IF, _ASSIGN = ast.BinOp, ast.Mult, ast.Constant, ast.If, ast.Assign
_NAME, _IFEXP, _CALL, _ATTRIBUTE = ast.Name, ast.IfExp, ast.Call, ast.Attribute


def _str_const(e: ast.AST | None) -> str | None:
    return e.value if isinstance(e, ast.Constant) and isinstance(e.value, str) else None


def _folded(e: ast.expr, name: str, value: str | None) -> str | None:
    """The str constant `e` is, with `name` holding `value` (`"a"`, `name + "b"`)."""
    if isinstance(e, ast.BinOp) and isinstance(e.op, ast.Add):
        left, right = _folded(e.left, name, value), _folded(e.right, name, value)
        return left + right if left is not None and right is not None else None
    if isinstance(e, ast.Name) and e.id == name:
        return value
    return _str_const(e)


def _last_str(block: list[ast.stmt], name: str, start: str | None = None) -> tuple[bool, str | None]:
    """(bound, value): whether `block` (top level) binds `name`, and the str constant it holds
    after the block when every binding is a plain assignment of a constant, or of the name
    plus constants (`s = s + "b"`), from `start` (None otherwise)."""
    bound = False
    value: str | None = start
    for st in block:
        stores = [
            n for n in ast.walk(st) if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store)
        ]
        if not stores:
            continue
        bound = True
        if isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name):
            value = _folded(st.value, name, value)
        elif isinstance(st, ast.AugAssign) and isinstance(st.op, ast.Add) and isinstance(st.target, ast.Name):
            right = _str_const(st.value)
            value = value + right if value is not None and right is not None else None
        else:
            value = None
    return bound, value


def _before(node: ast.stmt, name: str, ctx: Context) -> str | None:
    """The str constant `name` holds just before `node` (same block only)."""
    parent = ctx.parent(node)
    block = getattr(parent, "body", None)
    if not isinstance(block, list) or node not in block:
        return None
    bound, value = _last_str(block[: block.index(node)], name)
    return value if bound else None


def _if_join(node: ast.If, ctx: Context, a: Analyzer) -> tuple[str, tuple[str, str]] | None:
    inner = [n for st in (*node.body, *node.orelse) for n in ast.walk(st)]
    if not any(isinstance(n, ast.Constant) and isinstance(n.value, str) for n in inner):
        return None  # no side binds a str constant: both sides hold what came before
    if not a.kind(node.test).dynamic or (inside_while(node, ctx) and not _in_unrolled_whiles(node, ctx, a)):
        return None  # a value joined across a while's iterations is MS119's
    names = sorted({n.id for n in inner if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)})
    for name in names:
        sides: list[str | None] = []
        for block in (node.body, node.orelse):
            if any(isinstance(n, (ast.Return, ast.Raise)) for st in block for n in ast.walk(st)):
                sides.append(None)
                continue
            start = _before(node, name, ctx)
            bound, value = _last_str(block, name, start)
            sides.append(value if bound else start)
        left, right = sides
        if left is not None and right is not None and left != right:
            return name, (left, right)
    return None


def _in_unrolled_whiles(node: ast.AST, ctx: Context, a: Analyzer) -> bool:
    """Is every `while` around `node` one MindSpore unrolls while compiling (a test known then,
    `while True:` / `while w < 2:`, and each `break` / `continue` in it under such a test)?
    Each pass is then straight-line code, and a str joined in one is joined as outside a loop
    (measured, written/lax probes `genfresh38_sw_*`; fresh v6 seed 12001318)."""
    p = ctx.parent(node)
    while p is not None and p is not ctx.function:
        if isinstance(p, ast.While):
            if a.kind(p.test) != Kind.CONST:
                return False
            for n in ast.walk(p):
                if isinstance(n, (ast.Break, ast.Continue)) and not _const_guarded(n, p, ctx, a):
                    return False
        p = ctx.parent(p)
    return True


def _const_guarded(n: ast.AST, loop: ast.While, ctx: Context, a: Analyzer) -> bool:
    """Does every `if` between `n` and `loop` test a value known while compiling?"""
    p = ctx.parent(n)
    while p is not None and p is not loop:
        if isinstance(p, ast.If) and a.kind(p.test) != Kind.CONST:
            return False
        p = ctx.parent(p)
    return True


def _assign_join(node: ast.Assign, ctx: Context, a: Analyzer) -> tuple[str, tuple[str, str]] | None:
    if len(node.targets) != 1 or not isinstance(target := node.targets[0], ast.Name):
        return None
    v = node.value
    if isinstance(v, ast.IfExp):
        left, right = _str_const(v.body), _str_const(v.orelse)
        if left is None or right is None or left == right or not a.kind(v.test).dynamic:
            return None  # (the strs first: the test's kind is a data-flow solve)
    elif isinstance(v, ast.Call) and isinstance(v.func, ast.Name):
        left, right = _helper_returns(module_function(v.func.id, ctx), ctx, a)
    elif (
        isinstance(v, ast.Call)
        and isinstance(f := v.func, ast.Attribute)
        and isinstance(f.value, ast.Name)
        and f.value.id == "self"
        and (cls := a.owner_class(ctx.function)) is not None
    ):
        left, right = _helper_returns(_methods(cls, ctx).get(f.attr), ctx, a)
    else:
        return None
    if left is None or right is None or left == right:
        return None
    return target.id, (left, right)


def _methods(cls: ast.ClassDef, ctx: Context) -> dict[str, ast.FunctionDef]:
    """The first `def` of each name in `cls`'s body, once per class and run (every
    `x = self.m(...)` of its compiled methods asks)."""
    key = (_methods, id(cls))
    hit: dict[str, ast.FunctionDef] | None = ctx.cache.get(key)
    if hit is None:
        hit = {}
        for d in cls.body:
            if type(d) is ast.FunctionDef:
                hit.setdefault(d.name, d)
        ctx.cache[key] = hit
    return hit


def _helper_returns(fdef: ast.FunctionDef | None, ctx: Context, a: Analyzer) -> tuple[str | None, str | None]:
    """Two different str constants a helper (a module function or a method of the cell)
    returns, one of them from inside a tensor `if` (its only returns); once per helper."""
    if fdef is None:
        return None, None
    key = ("MS180.helper", id(fdef))
    hit: tuple[str | None, str | None] | None = ctx.cache.get(key)
    if hit is None:
        hit = ctx.cache[key] = _returned_strs(fdef, a)
    return hit


def _returned_strs(fdef: ast.FunctionDef, a: Analyzer) -> tuple[str | None, str | None]:
    values = [_str_const(n.value) for n in own_nodes(fdef) if isinstance(n, ast.Return)]
    if not values or any(v is None for v in values) or len(set(values)) < 2:
        return None, None
    if not any(
        isinstance(n, ast.If) and a.kind(n.test, fdef).dynamic and any(isinstance(r, ast.Return) for r in ast.walk(n))
        for n in own_nodes(fdef)
    ):
        return None, None
    return values[0], next(v for v in values if v != values[0])


def _used(name: str, after: ast.stmt, ctx: Context, depth: int = 0) -> ast.AST | None:
    """The first read of `name` after `after` (before it is bound again) that needs the str;
    a str built from it with `+` and bound to a name is followed (`t = s + "_x"`)."""
    func = ctx.function
    if func is None:
        return None
    end = after.end_lineno or after.lineno
    rebound = min(
        (
            n.lineno
            for n in own_nodes(func)
            if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store) and n.lineno > end
        ),
        default=None,
    )
    best: ast.AST | None = None
    for n in own_nodes(func):
        if not (isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)):
            continue
        if n.lineno <= end or (rebound is not None and n.lineno > rebound):
            continue
        use = _needs_str(n, ctx, depth)
        if use is not None and (best is None or getattr(use, "lineno", 0) < getattr(best, "lineno", 0)):
            best = use
    return best


def _needs_str(read: ast.Name, ctx: Context, depth: int) -> ast.AST | None:
    """The expression around the read `read` when it needs the str's value (None when it does
    not, or when we do not know)."""
    n: ast.expr = read
    p = ctx.parent(n)
    while isinstance(p, ast.BinOp) and isinstance(p.op, ast.Add):
        n, p = p, ctx.parent(p)  # `s + "_x"` is again a run-time str
    if n is not read and isinstance(p, ast.Assign) and len(p.targets) == 1:
        t = p.targets[0]
        if isinstance(t, ast.Name) and depth < 3:
            return _used(t.id, p, ctx, depth + 1)
        return None
    if (isinstance(p, (ast.If, ast.IfExp, ast.While)) and p.test is n) or (
        isinstance(p, ast.UnaryOp) and isinstance(p.op, ast.Not)
    ):
        return p.test if not isinstance(p, ast.UnaryOp) else p  # `if s:`: its truth is read
    if isinstance(p, ast.Compare):
        if n is p.left and all(isinstance(op, (ast.In, ast.NotIn)) for op in p.ops):
            return None  # `s in ("a", "b")` compiles
        if any(isinstance(op, (ast.Is, ast.IsNot)) for op in p.ops):
            return None
        return p
    if isinstance(p, ast.FormattedValue):
        return ctx.parent(p) or p
    if isinstance(p, ast.Dict) and any(k is n for k in p.keys):
        return p
    if isinstance(p, ast.Attribute) and isinstance(ctx.parent(p), ast.Call):
        call = ctx.parent(p)
        assert isinstance(call, ast.Call)
        return call if call.func is p else None
    if isinstance(p, ast.Return):
        # Returned alone it compiles (the caller gets a wrong value, but no error); inside a
        # returned tuple, list or dict the output's device buffer is sized 0 and the run fails.
        return None
    if isinstance(p, (ast.Tuple, ast.List)) and isinstance(ctx.parent(p), ast.Return):
        return p
    if isinstance(p, ast.Dict) and isinstance(ctx.parent(p), ast.Return) and any(v is n for v in p.values):
        return p
    if isinstance(p, ast.Call) and n in p.args:
        q = ctx.qualname(p.func) or ""
        if q in ("builtins.len", "builtins.getattr"):
            return p
        if q in _HARMLESS_CALLS:
            return None
        if isinstance(p.func, ast.Name) and any(
            isinstance(d, ast.FunctionDef) and d.name == p.func.id for d in ctx.tree.body
        ):
            return p  # a helper of the module: its body is compiled with the run-time str
    return None
