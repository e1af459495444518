"""MS119: branches of a tensor-dependent `if` producing values of different types."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.control import bindings, block_of, continuation_returns
from npu_lsp.rules.graphmode.flow import Analyzer, Kind, analyzer
from npu_lsp.rules.graphmode.helpers import GraphRule, returns_in

_SEQUENCES = frozenset({"tuple", "list"})
_NON_TENSORS = _SEQUENCES | {"scalar"}


def _classes(rets: list[ast.Return], a: Analyzer) -> set[str]:
    out: set[str] = set()
    for r in rets:
        if r.value is None:
            out.add("none")
        else:
            t = a.type_class(r.value)
            if t is not None:
                out.add(t)
    return out


def _dtypes(rets: list[ast.Return], a: Analyzer) -> set[str | None]:
    return {a.dtype_of(r.value) if r.value is not None else None for r in rets}


def _assigned(block: list[ast.stmt]) -> dict[str, ast.expr]:
    """`name = value` statements directly in `block` (the last one per name wins)."""
    out: dict[str, ast.expr] = {}
    for st in block:
        if (
            isinstance(st, ast.Assign)
            and len(st.targets) == 1
            and isinstance(st.targets[0], ast.Name)
        ):
            out[st.targets[0].id] = st.value
    return out


def incompatible(x: set[str], y: set[str]) -> str | None:
    """A human-readable reason the two sets of type classes cannot be joined, if any.
    A Python number does not join with a Tensor either (measured on 2.10)."""
    if "tensor" in x and y & _NON_TENSORS:
        return f"Tensor vs {sorted(y & _NON_TENSORS)[0]}"
    if "tensor" in y and x & _NON_TENSORS:
        return f"{sorted(x & _NON_TENSORS)[0]} vs Tensor"
    return None


def _preceding_numbers(node: ast.If, ctx: Context, names: set[str]) -> dict[str, ast.expr]:
    """Those of `names` last bound to a number literal by the statements just before `node`
    in its block (`y = 0` then `if ...: y = x`: the `if` joins 0 with a Tensor)."""
    _parent, block, index = block_of(node, ctx)
    out: dict[str, ast.expr] = {}
    for st in block[:index]:
        if isinstance(st, ast.Assign) and len(st.targets) == 1:
            target = st.targets[0]
            if isinstance(target, ast.Name) and target.id in names:
                value = st.value
                if isinstance(value, ast.Constant) and type(value.value) in (int, float):
                    out[target.id] = value
                else:
                    out.pop(target.id, None)
                continue
        if out:  # any other rebinding in between (loops, `+=`, unpacking) cancels it
            for name in bindings([st]) & out.keys():
                del out[name]
    return out


@rule(code="MS119", name="branch-type-mismatch", severity="error", family="graphmode")
class BranchTypeMismatch(GraphRule):
    """## What it does
    Flags an `if` whose condition depends on a tensor's value when its two paths return (or
    assign to the same name) values of different kinds: a Tensor on one side and a tuple,
    list or Python number on the other (also `y = 0` followed by `if ...: y = x`), or tensors
    of different explicit dtypes.

    ## Why is this bad?
    Both sides of a tensor-dependent branch are compiled and their results are joined into
    one type. MindSpore stops with `TypeError: Cannot join the return values of different
    branches, perhaps you need to make them equal.` at every syntax level. Results that
    differ only in shape are fine, and so are branches on shapes or Python constants, which
    are folded while compiling.

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
    Python condition separately.

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 1: tensor-dependent branches yielding different dtype, or Tensor vs tuple.
    - Measured on MindSpore 2.10: `x.sum() > 0 and n > 2` (n a constant) and
      `while x.sum() < 30 and i < 5` are rejected with `Cannot join the return values of
      different branches ... dtype1 = Bool, dtype2 = Any`; two tensor operands are accepted.
    """

    def _bool_op(self, node: ast.BoolOp, ctx: Context) -> Iterable[Diagnostic]:
        a = analyzer(ctx)
        seen_tensor: ast.expr | None = None
        for operand in node.values:
            kind = a.kind(operand)
            if kind == Kind.TENSOR:
                seen_tensor = seen_tensor or operand
            elif seen_tensor is not None and kind in (Kind.CONST, Kind.VAR) and _python_scalar(operand, a):
                op = "and" if isinstance(node.op, ast.And) else "or"
                yield ctx.diagnostic(
                    self,
                    node,
                    f"`{op}` joins the tensor `{ctx.segment(seen_tensor)}` with the Python value `{ctx.segment(operand)}`; graph mode cannot join a Tensor with a Python bool (use `&`/`|` on tensors or test them separately)",
                )
                return

    nodes = (ast.If, ast.BoolOp)

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        if isinstance(node, ast.BoolOp):
            yield from self._bool_op(node, ctx)
            return
        assert isinstance(node, ast.If)
        # Structure first: only returns in the true branch or a name assigned in both
        # branches can disagree, and the tensor-dependence test below needs the function's
        # data flow, the dearest step of the analysis.
        before: dict[str, ast.expr] = {}
        if not returns_in(node.body) and not (
            node.orelse and _assigned(node.body).keys() & _assigned(node.orelse).keys()
        ):
            # `y = 0` then `if t: y = x`: the number bound before is the false branch
            assigned = {} if node.orelse else _assigned(node.body)
            if not assigned:
                return
            before = _preceding_numbers(node, ctx, set(assigned))  # cheap: no data flow
            if not before:
                return
            a = analyzer(ctx)
            if not a.kind(node.test).dynamic:
                return
        else:
            a = analyzer(ctx)
        # what the branches produce first: when they agree (the usual case) the condition's
        # kind, which can take solving every name it reads, is never needed
        found = self._returns(node, ctx, a) or self._assigns(node, a, before)
        if found and a.kind(node.test).dynamic:
            reason, where = found
            # MindSpore names the false branch: the else block's return or first statement,
            # or the `if` itself when the false path is what follows it
            yield ctx.diagnostic(
                self,
                ctx.head_span(where) if isinstance(where, ast.If) else where,
                f"branches of this tensor-dependent `if` produce different types ({reason}); MindSpore cannot join them",
            )

    @staticmethod
    def _returns(node: ast.If, ctx: Context, a: Analyzer) -> tuple[str, ast.AST] | None:
        body = returns_in(node.body)
        if not body:
            return None
        if node.orelse:
            other = returns_in(node.orelse)
            where: ast.AST = min(other, key=lambda r: r.lineno) if other else node
        else:
            cont = continuation_returns(node, ctx)
            if cont is None:
                return None
            other, where = cont[0], node
        x, y = _classes(body, a), _classes(other, a)
        reason = incompatible(x, y)
        if reason:
            return reason, where
        dx, dy = _dtypes(body, a), _dtypes(other, a)
        if len(dx) == 1 and len(dy) == 1 and None not in dx | dy and dx != dy:
            return f"dtype {next(iter(dx))} vs {next(iter(dy))}", where
        return None

    @staticmethod
    def _assigns(
        node: ast.If, a: Analyzer, before: dict[str, ast.expr]
    ) -> tuple[str, ast.AST] | None:
        left = _assigned(node.body)
        right, where = (_assigned(node.orelse), node.orelse[0]) if node.orelse else (before, node)
        for name in sorted(left.keys() & right.keys()):
            # the other side is asked only when this one is known (a dtype costs a solve)
            x = a.type_class(left[name])
            y = a.type_class(right[name]) if x else None
            if x and y:
                reason = incompatible({x}, {y})
                if reason:
                    return f"`{name}`: {reason}", where
            dx = a.dtype_of(left[name])
            dy = a.dtype_of(right[name]) if dx else None
            if dx and dy and dx != dy:
                return f"`{name}`: dtype {dx} vs {dy}", where
        return None


def _python_scalar(e: ast.expr, a: Analyzer) -> bool:
    """A Python bool / number (a comparison of non-tensors, a literal, a scalar name)."""
    if isinstance(e, ast.Compare):
        return all(a.kind(x) != Kind.TENSOR and a.kind(x) != Kind.UNKNOWN for x in (e.left, *e.comparators))
    if isinstance(e, ast.Constant):
        return isinstance(e.value, (bool, int, float))
    if isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.Not):
        return _python_scalar(e.operand, a)
    return a.type_class(e) == "scalar"
