"""MS248: a run-time branch whose output is `t.contiguous()` of a tensor from outside it (CPU)."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.flow import Kind, analyzer
from npu_lsp.rules.graphmode.helpers import GraphRule, runs_on_cpu
from npu_lsp.rules.graphmode.ranks import ranks
from npu_lsp.rules.graphmode.values import in_dead_branch

#: tensor methods that only re-view the data: after `contiguous()`, a chain of them that ends
#: at the receiver's own shape is folded away and the branch still outputs the `Contiguous`
#: node (`x.contiguous().view(3, 2).view(2, 3)`, `.reshape(...)` alike; one to another shape
#: compiles: written/lax probes `fix40b_ct_view_same_shape`, `_reshape_round_trip`, `_view_after`)
_VIEWS = frozenset({"view", "reshape"})
_LOOPS = (ast.For, ast.AsyncFor, ast.While)
_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)


@rule(code="MS248", name="contiguous-branch-output", severity="error", family="graphmode")
class ContiguousBranchOutput(GraphRule):
    """## What it does
    Flags `t.contiguous()` in compiled code, in a script that runs on the CPU, when it is
    what a branch decided at run time outputs and `t` comes from outside that branch: a
    side of an `if` (or the body of a `while`, or a side of a conditional expression) whose
    condition is a tensor's value or a mutable scalar (`if x.sum() > 0:`, `if n > 1:` of
    `n = ms.mutable(2)`) binds a name to `t.contiguous()` (also followed by `.view(...)` /
    `.reshape(...)` back to `t`'s shape, or by another `.contiguous()`) that the code
    reads after the branch, or returns it; `t` is a parameter, a name bound before the
    branch (or another name for one), or `self.<attr>`.

    ## Why is this bad?
    MindSpore 2.10 compiles each side of such a branch as a graph of its own. There,
    `Contiguous` of a value that enters the graph from outside, as the graph's output, is
    left without its input: compiling fails with `Failed to find input: ... PrimFunc_Contiguous,
    [1]: param_x ... for node ... Return` (a `while` body: `The pointer[graph] is null`), at
    both syntax levels, in a Cell or an `@ms.jit` function. The same call outside a run-time
    branch, in a branch MindSpore folds while compiling (`if x.shape[0] > 1:`,
    `if self.training:`), of a tensor computed inside the branch (`(x + 1).contiguous()`,
    `x.transpose(1, 0).contiguous()`), followed by an operation (`x.contiguous() + 1`), or
    bound to a name nothing reads after the branch, compiles.

    ## Example
    ```python
    class Net(nn.Cell):
        def construct(self, x):
            if x.sum() > 0:
                x = x.contiguous()
            return x * 2
    ```

    ## Use instead
    A tensor in a graph is already contiguous: drop `.contiguous()`, or call it before the
    `if`.

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md has no row for it (a graph compiler failure, not a syntax rule).
    - Measured on MindSpore 2.10 (CPU), LAX and STRICT: difftest v6 seed 12001266, written/lax
      probes `genfresh39_ct_*` and `fix40b_ct_*` (an `if` with or without `else`, either
      side, `return`, a conditional expression, a `while` body, an `if` in a `for` over
      `range`, a parameter, an alias, `self.w`, `.contiguous().contiguous()`; a `for` over
      `range` without an `if`, `self.training`, a consumed result, `x.contiguous() + 1` and
      a view to another shape compile). Not followed: a helper returning `t.contiguous()`
      called in the branch, and `x.contiguous() * 1` (the compiler folds `* 1` and fails
      too).
    """

    nodes = (ast.Call,)
    calls = frozenset({"contiguous"})
    callee = (ast.Attribute,)
    words = ("contiguous",)

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        assert isinstance(node, ast.Call)
        f = node.func
        func = ctx.function
        if node.args or node.keywords or not isinstance(f, ast.Attribute) or f.attr != "contiguous":
            return ()
        if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)) or _contiguous_call(f.value):
            return ()  # (in a chain `t.contiguous().contiguous()`, the first call reports)
        base = f.value
        if not (type(base) is ast.Name or _self_attribute(base)):
            return ()
        top, viewed = _chain_top(node, ctx)
        found = _branch_output(top, ctx, func)
        if found is None or not runs_on_cpu(ctx) or in_dead_branch(ctx, func, ctx.span(node)):
            return ()
        test, side = found
        if not _from_outside(base, top, side):
            return ()
        if analyzer(ctx).kind(base, func) != Kind.TENSOR and not _tensor_shapes(base, func, ctx):
            return ()
        if viewed and not _same_shape(base, top, func, ctx):
            return ()
        return [
            ctx.diagnostic(
                self,
                node,
                f"`{ctx.segment(node)}` of a tensor from outside the branch is an output of the branch "
                f"taken at run time on `{ctx.segment(test)}` (line {test.lineno}): MindSpore compiles the "
                "branch as a graph of its own, where the `Contiguous` node loses its input (\"Failed to find "
                "input: ... PrimFunc_Contiguous\"); a tensor in a graph is already contiguous: drop "
                "`.contiguous()` or call it before the branch",
            )
        ]


def _contiguous_call(e: ast.expr) -> bool:
    return (
        type(e) is ast.Call and type(e.func) is ast.Attribute and e.func.attr == "contiguous" and not e.args
    )


def _self_attribute(e: ast.expr) -> bool:
    return type(e) is ast.Attribute and type(e.value) is ast.Name and e.value.id == "self"


def _chain_top(call: ast.Call, ctx: Context) -> tuple[ast.expr, bool]:
    """The last call of `t.contiguous()` followed by `.contiguous()` / `.view(...)` /
    `.reshape(...)` calls, and whether a view or reshape is among them."""
    top: ast.expr = call
    viewed = False
    while True:
        attr = ctx.parent(top)
        outer = ctx.parent(attr) if type(attr) is ast.Attribute else None
        if type(attr) is not ast.Attribute or type(outer) is not ast.Call or outer.func is not attr:
            return top, viewed
        if attr.attr == "contiguous" and not outer.args and not outer.keywords:
            top = outer
        elif attr.attr in _VIEWS:
            top, viewed = outer, True
        else:
            return top, viewed


def _dynamic(test: ast.expr, func: ast.AST, ctx: Context) -> bool:
    """A condition MindSpore decides at run time (a tensor's value, a mutable scalar)."""
    return analyzer(ctx).kind(test, func).dynamic


def _branch_output(top: ast.expr, ctx: Context, func: ast.AST) -> tuple[ast.expr, list[ast.stmt]] | None:
    """When `top` is what a run-time branch outputs: the branch's condition and the side's
    statements (for a conditional expression, the statement it is in, alone)."""
    parent = ctx.parent(top)
    if type(parent) is ast.IfExp and top is not parent.test and _dynamic(parent.test, func, ctx):
        st = ctx.parent(parent)
        if type(st) is ast.Return or (type(st) is ast.Assign and _live_after(st, ctx, func, [st])):
            return parent.test, [st]
        return None
    if type(parent) is ast.Tuple and type(ctx.parent(parent)) is ast.Return:
        parent = ctx.parent(parent)  # `return x.contiguous(), x + 1`
    if type(parent) is not ast.Return and type(parent) is not ast.Assign:
        return None
    st = parent
    assert isinstance(st, (ast.Return, ast.Assign))
    owner = ctx.parent(st)
    if type(owner) is ast.If:
        side = owner.body if st in owner.body else owner.orelse
    elif type(owner) is ast.While and st in owner.body:
        side = owner.body
    else:
        return None
    if not _dynamic(owner.test, func, ctx):
        return None
    if type(st) is ast.Assign and not _live_after(st, ctx, func, side, owner):
        return None
    return owner.test, side


def _target(st: ast.Assign) -> str | None:
    if len(st.targets) == 1 and type(st.targets[0]) is ast.Name:
        return st.targets[0].id
    return None


def _binds(st: ast.stmt, name: str) -> bool:
    return any(type(n) is ast.Name and isinstance(n.ctx, ast.Store) and n.id == name for n in ast.walk(st))


def _live_after(st: ast.Assign, ctx: Context, func: ast.AST, side: list[ast.stmt], owner: ast.stmt | None = None) -> bool:
    """Does the branch output the name `st` binds: no later statement of the side binds it
    again, and the function reads it after the branch (or anywhere in a loop around it,
    or in the `while` that is the branch)? A name the next statement after the branch
    binds without reading it is not output."""
    name = _target(st)
    if name is None:
        return False
    later = side[side.index(st) + 1:] if st in side else []
    if any(_binds(s, name) for s in later):
        return False
    branch = owner or st
    if type(branch) is ast.While and _reads(branch, name):
        return True
    for loop in _enclosing(branch, ctx, func):
        if _reads(loop, name):
            return True
    return _read_next(branch, name, ctx, func)


def _enclosing(st: ast.AST, ctx: Context, func: ast.AST) -> list[ast.stmt]:
    out: list[ast.stmt] = []
    p = ctx.parent(st)
    while p is not None and p is not func:
        if isinstance(p, _LOOPS):
            out.append(p)
        p = ctx.parent(p)
    return out


def _reads(scope: ast.AST, name: str) -> bool:
    return any(type(n) is ast.Name and isinstance(n.ctx, ast.Load) and n.id == name for n in ast.walk(scope))


def _read_next(branch: ast.stmt, name: str, ctx: Context, func: ast.AST) -> bool:
    """Is `name` read by a statement after `branch`, in its block or the blocks around it,
    before one binds it without reading it?"""
    node: ast.AST = branch
    while node is not func:
        block_of = ctx.parent(node)
        if block_of is None:
            return False
        for field in ("body", "orelse", "finalbody"):
            block = getattr(block_of, field, None)
            if isinstance(block, list) and node in block:
                for s in block[block.index(node) + 1:]:
                    if isinstance(s, _FUNCS) or type(s) is ast.ClassDef:
                        continue
                    if _reads(s, name):
                        return True
                    if _binds(s, name):
                        return False
                break
        node = block_of
    return False


def _from_outside(base: ast.expr, top: ast.expr, side: list[ast.stmt]) -> bool:
    """Does `base` hold a value from outside the side: no statement of the side before the
    one holding `top` binds it, other than to another name (`t = x` then `t.contiguous()`),
    which is followed in turn?"""
    here = next((i for i, s in enumerate(side) if _contains(s, top)), None)
    if here is None:
        return False
    if _self_attribute(base):
        assert isinstance(base, ast.Attribute)
        return not any(_stores_attribute(s, base.attr) for s in side[:here])
    assert isinstance(base, ast.Name)
    name = base.id
    for s in reversed(side[:here]):
        if not _binds(s, name):
            continue
        if type(s) is ast.Assign and _target(s) == name and type(s.value) is ast.Name:
            name = s.value.id  # an alias: follow the name it copies
            continue
        return False
    return True


def _contains(st: ast.stmt, e: ast.expr) -> bool:
    return any(n is e for n in ast.walk(st))


def _stores_attribute(st: ast.stmt, attr: str) -> bool:
    return any(
        type(n) is ast.Attribute and isinstance(n.ctx, ast.Store) and n.attr == attr and _self_attribute(n)
        for n in ast.walk(st)
    )


def _tensor_shapes(e: ast.expr, func: ast.AST, ctx: Context) -> list[tuple[int | None, ...]]:
    """The shapes `e` has in each call context the shapes model knows (empty unless every
    one is a tensor's)."""
    vals = ranks(ctx).value_at(e, func)
    if not vals or not all(isinstance(v, tuple) for v in vals):
        return []
    return [v for v in vals if isinstance(v, tuple)]


def _same_shape(base: ast.expr, top: ast.expr, func: ast.AST, ctx: Context) -> bool:
    """Does the view chain end at `base`'s own shape in every call context (all sizes known)?"""
    before, after = _tensor_shapes(base, func, ctx), _tensor_shapes(top, func, ctx)
    if not before or len(before) != len(after):
        return False
    return all(a == b and None not in a for a, b in zip(before, after, strict=True))
