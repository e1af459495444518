"""Tensors compiled code builds from constants only (`Tensor([1, 2])`,
`Tensor(np.arange(6).reshape(2, 3))`): MindSpore folds them while compiling, so they are
constants where the graph needs one (a dict key: "make_dict evaluator key only supports
string, number, type, none, constant tensor and tuple"), and their shapes are known."""

from __future__ import annotations

import ast

from npu_lsp.engine import Context
from npu_lsp.rules.graphmode.flow import analyzer
from npu_lsp.rules.graphmode.tensor_names import TENSOR_MAKERS


def constant_data(e: ast.expr, ctx: Context, depth: int = 0) -> bool:
    """Is `e` built from literals only: numbers, strings, lists / tuples of those, numpy
    calls and methods on such data (`np.arange(6).reshape(1, 2, 3)`), MindSpore dtypes?"""
    if depth > 8:
        return False
    if isinstance(e, ast.Constant):
        return True
    if isinstance(e, ast.Name):  # bound once, in the function, to constant data
        bound = analyzer(ctx).single_assignment(e.id, ctx.function)
        return bound is not None and constant_data(bound, ctx, depth + 1)
    if isinstance(e, (ast.List, ast.Tuple)):
        return all(constant_data(x, ctx, depth + 1) for x in e.elts)
    if isinstance(e, ast.UnaryOp):
        return constant_data(e.operand, ctx, depth + 1)
    if isinstance(e, ast.BinOp):
        return constant_data(e.left, ctx, depth + 1) and constant_data(e.right, ctx, depth + 1)
    if isinstance(e, ast.Attribute):
        q = ctx.qualname(e) or ""
        return q.startswith(("numpy.", "mindspore."))
    if isinstance(e, ast.Call):
        args = [*e.args, *(k.value for k in e.keywords)]
        if not all(constant_data(a, ctx, depth + 1) for a in args):
            return False
        q = ctx.qualname(e.func) or ""
        if q.startswith("numpy.") and not q.startswith("numpy.random"):
            return True
        # a method of constant numpy data (`.reshape(...)`, `.astype(...)`)
        return isinstance(e.func, ast.Attribute) and isinstance(e.func.value, ast.Call) and constant_data(e.func.value, ctx, depth + 1)
    return False


def constant_tensor(e: ast.expr, ctx: Context) -> ast.Call | None:
    """The `Tensor(<constant data>)` call `e` is, or that a name `e` is bound to once in the
    function being checked; None otherwise."""
    if isinstance(e, ast.Name):
        value = analyzer(ctx).single_assignment(e.id, ctx.function)
        if value is None:
            return None
        e = value
    if not isinstance(e, ast.Call) or (ctx.qualname(e.func) or "") not in TENSOR_MAKERS:
        return None
    args = [*e.args, *(k.value for k in e.keywords)]
    return e if args and all(constant_data(a, ctx) for a in args) else None


#: Builtins that turn their inputs into a string: of constants (constant tensors included,
#: which MindSpore folds first) the result is a constant string.
_STRING_MAKERS = frozenset({"builtins.str", "builtins.repr", "builtins.format", "builtins.ascii"})


def constant_string(e: ast.expr, ctx: Context, depth: int = 0) -> bool:
    """Is `e` a string made by `str` / `repr` / `format` / `ascii` of constant data and
    constant tensors only (or a name bound once, in the function, to one)? MindSpore folds
    it while compiling: `format(format(Tensor([1])), "4")` compiles under STRICT
    (MindSpore's test_str_format `test_fallback_str_format_input`; probes `p131_format_*`)."""
    if depth > 8:
        return False
    if isinstance(e, ast.Name):
        bound = analyzer(ctx).single_assignment(e.id, ctx.function)
        return bound is not None and constant_string(bound, ctx, depth + 1)
    if not isinstance(e, ast.Call) or (ctx.qualname(e.func) or "") not in _STRING_MAKERS:
        return False
    args = [*e.args, *(k.value for k in e.keywords)]
    return all(
        constant_data(a, ctx) or constant_tensor(a, ctx) is not None or constant_string(a, ctx, depth + 1)
        for a in args
    )


def scalar_shaped(call: ast.Call) -> bool:
    """Does the constant `Tensor(...)` call make a tensor of shape () or (1,)? (Its data is a
    number or a one-element list / tuple.)"""
    if not call.args:
        return False
    data = call.args[0]
    if isinstance(data, ast.Constant):
        return isinstance(data.value, (int, float, bool))
    return isinstance(data, (ast.List, ast.Tuple)) and len(data.elts) == 1 and isinstance(data.elts[0], ast.Constant)
