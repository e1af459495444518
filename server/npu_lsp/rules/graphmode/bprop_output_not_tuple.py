"""MS181: a Cell's custom `bprop` returns a tensor or a list instead of a tuple."""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.flow import python_number
from npu_lsp.rules.graphmode.helpers import GraphRule, returns_in
from npu_lsp.rules.graphmode.result_kinds import TUPLE_RESULTS, gives_tensor

#: what a file must spell for a gradient to be taken at all (a bprop runs only under one)
GRAD_WORDS = ("grad", "Grad", "TrainOneStep")


def custom_bprops(module: ast.Module, ctx: Context) -> Iterator[tuple[ast.ClassDef, ast.FunctionDef, ast.FunctionDef]]:
    """(class, its `bprop`, its `construct`) for every class defining both, in a file that
    defines a `bprop` and takes a gradient somewhere (the bprop rules' shared walk: a
    `bprop` is no graph scope of its own, each rule asks whether the Cell compiles)."""
    if not ctx.mentions("def bprop") or not any(ctx.mentions(w) for w in GRAD_WORDS):
        return
    for cls in ast.walk(module):
        if isinstance(cls, ast.ClassDef):
            methods = {f.name: f for f in cls.body if isinstance(f, ast.FunctionDef)}
            bprop, construct = methods.get("bprop"), methods.get("construct")
            if bprop is not None and construct is not None:
                yield cls, bprop, construct


@rule(code="MS181", name="bprop-output-not-tuple", severity="error", family="graphmode")
class BpropOutputNotTuple(GraphRule):
    """## What it does
    Flags a `return` of a Cell's custom `bprop` whose value is a tensor (`return dout`,
    `return dout * 0.5`, `return -dout`, `return ops.clamp(dout, -1, 1)`: a `mindspore.ops`
    function of a tensor other than those `ms_result_kinds.json` lists as giving a tuple or a
    Python value) or a list (`return [dout]`,
    `return [dout * y, dout * x]`) when the Cell's `construct` is compiled.

    ## Why is this bad?
    MindSpore compiles `bprop` into the backward graph and requires one gradient per input of
    `construct`, as a tuple. Anything else stops compiling at every syntax level:
    `TypeError: For bprop function, output should be a tuple, but got AbstractTensor(...)`
    (or `AbstractList{...}`). PyNative runs the same code, so the mistake shows only when the
    gradient is compiled.

    ## Example
    ```python
    class StraightThrough(nn.Cell):
        def construct(self, x):
            return ops.round(x)

        def bprop(self, x, out, dout):
            return dout
    ```

    ## Use instead
    ```python
        def bprop(self, x, out, dout):
            return (dout,)
    ```

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 1 (rejected at every level); section 0 (what gets compiled: a
      custom `bprop` is compiled with the gradient of its Cell).
    - MindSpore 2.10: custom `bprop` of a Cell (`bprop(self, *inputs, out, dout)` returns a
      tuple of gradients, one per input); measured in fixtures/written/functional/probes.
    """

    # The bprop method is not a graph scope of its own: the rule looks at the classes whose
    # `construct` is one, once per module.
    nodes = (ast.Module,)
    graph_only = False

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        assert isinstance(node, ast.Module)
        for _cls, bprop, construct in custom_bprops(node, ctx):
            if ctx.scopes.scope_for(construct) is None:
                continue
            for ret in returns_in(bprop.body):
                what = _not_a_tuple(ret.value, bprop, construct, ctx)
                if what is not None:
                    yield ctx.diagnostic(
                        self,
                        ret,
                        f"`bprop` returns {what}; MindSpore needs a tuple of gradients, one per input "
                        "(`For bprop function, output should be a tuple`), e.g. `return (dout,)` for one input",
                    )


def _not_a_tuple(
    value: ast.expr | None, bprop: ast.FunctionDef, construct: ast.FunctionDef, ctx: Context
) -> str | None:
    """'a list' or 'a tensor' when `value` certainly is one, else None."""
    if value is None:
        return None
    if isinstance(value, (ast.List, ast.ListComp)):
        return "a list"
    if isinstance(value, ast.Name):
        bound = _single_binding(value.id, bprop)
        if bound is not None:
            return _not_a_tuple(bound, bprop, construct, ctx)
    return "a tensor" if _tensor(value, _tensor_params(bprop, construct), bprop, ctx) else None


def _tensor_params(bprop: ast.FunctionDef, construct: ast.FunctionDef) -> set[str]:
    """The bprop's parameters that hold tensors: the inputs, and `out`/`dout` unless
    `construct` returns a tuple (then they are tuples)."""
    args = [a.arg for a in (*bprop.args.posonlyargs, *bprop.args.args)][1:]
    if bprop.args.vararg is not None or len(args) < 2:
        return set()
    inputs, grads = args[:-2], args[-2:]
    tuple_out = any(isinstance(r.value, (ast.Tuple, ast.List)) for r in returns_in(construct.body))
    return set(inputs) if tuple_out else set(inputs) | set(grads)


def _tensor(e: ast.expr, params: set[str], bprop: ast.FunctionDef, ctx: Context, depth: int = 0) -> bool:
    """Is `e` built only from tensor parameters and numbers, so that it is one tensor?"""
    if depth > 4:
        return False
    if isinstance(e, ast.Name):
        if e.id in params:
            return not _rebound(e.id, bprop)
        bound = _single_binding(e.id, bprop)
        return bound is not None and _tensor(bound, params, bprop, ctx, depth + 1)
    if isinstance(e, ast.UnaryOp) and isinstance(e.op, (ast.USub, ast.UAdd)):
        return _tensor(e.operand, params, bprop, ctx, depth + 1)
    if isinstance(e, ast.BinOp):
        sides = (e.left, e.right)
        return any(_tensor(s, params, bprop, ctx, depth + 1) for s in sides) and all(
            _tensor(s, params, bprop, ctx, depth + 1) or python_number(s) for s in sides
        )
    if not isinstance(e, ast.Call):
        return False
    q = ctx.qualname(e.func) or ""
    if q.startswith("mindspore."):
        # `ops.clamp(dout, -1, 1)`: an ops function of a tensor gives one tensor
        # (`ms_result_kinds.json`; measured: the `reach2` probes bp_*)
        items = (x for a in e.args for x in (a.elts if isinstance(a, (ast.Tuple, ast.List)) else [a]))
        return gives_tensor(q) and any(_tensor(x, params, bprop, ctx, depth + 1) for x in items)
    if isinstance(e.func, ast.Attribute) and e.func.attr not in TUPLE_RESULTS:
        return _tensor(e.func.value, params, bprop, ctx, depth + 1)  # `dout.clip(-1, 1)`
    return False


def _stores(name: str, fn: ast.FunctionDef) -> list[ast.AST]:
    return [n for n in ast.walk(fn) if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store)]


def _rebound(name: str, fn: ast.FunctionDef) -> bool:
    return bool(_stores(name, fn))


def _single_binding(name: str, fn: ast.FunctionDef) -> ast.expr | None:
    """The value of `name = value` when that is the name's only binding in `fn`."""
    if len(_stores(name, fn)) != 1:
        return None
    for n in ast.walk(fn):
        if (
            isinstance(n, ast.Assign)
            and len(n.targets) == 1
            and isinstance(n.targets[0], ast.Name)
            and n.targets[0].id == name
        ):
            return n.value
    return None
