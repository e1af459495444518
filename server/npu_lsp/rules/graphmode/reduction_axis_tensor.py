"""MS171: a reduction in compiled code whose axis is a Tensor built from constants."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.flow import analyzer
from npu_lsp.rules.graphmode.helpers import GraphRule
from npu_lsp.rules.graphmode.tensor_names import TENSOR_CLASS

#: reductions measured on MindSpore 2.10 with a Tensor axis (written/apisurface probes
#: `av_axis_tensor_*`): Tensor methods and `mindspore.ops` functions, axis as the first
#: (method) or second (function) argument or the keyword `axis` / `dim`
_REDUCTIONS = frozenset({"sum", "mean", "amax"})
#: reduction primitives applied as `ops.ReduceSum()(x, axis)`
_REDUCE_PRIMITIVES = frozenset({"ReduceSum"})


@rule(code="MS171", name="reduction-axis-tensor", severity="error", family="graphmode")
class ReductionAxisTensor(GraphRule):
    """## What it does
    Flags a reduction in compiled code (`x.sum(axis=...)`, `x.mean(...)`, `ops.sum`,
    `ops.mean`, `ops.amax`, `ops.ReduceSum()(x, ...)`) whose axis is a `Tensor` made from a
    constant: `Tensor(1, ms.int32)` written in place, a local bound to one, or a `self`
    attribute `__init__` binds to one.

    ## Why is this bad?
    The graph folds a constant Tensor and then expects the axis to be an int or a tuple of
    ints: compiling stops at both syntax levels with `TypeError: 'int' object is not
    iterable`. A Tensor axis given to the network as an input compiles, and so do `argmax`
    and `ops.concat` with a Tensor axis, and an axis tuple holding one.

    ## Example
    ```python
    class Net(nn.Cell):
        def construct(self, x):
            return x.sum(axis=Tensor(1, ms.int32))
    ```

    ## Use instead
    ```python
    class Net(nn.Cell):
        def construct(self, x):
            return x.sum(axis=1)
    ```

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 1 (rejected at every level).
    - Measured on MindSpore 2.10 with the written set `apisurface` (`ops_sum__axis_tensor`)
      and its probes `av_axis_*`.
    """

    nodes = (ast.Call,)
    calls = _REDUCTIONS | {""}

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        assert type(node) is ast.Call
        axis = _axis_argument(node, ctx)
        if axis is None or not _constant_tensor(axis, ctx):
            return ()
        return [
            ctx.diagnostic(
                self,
                axis,
                f"the axis `{ctx.segment(axis)}` of this reduction is a Tensor of a constant, which MindSpore refuses (TypeError: 'int' object is not iterable); give the axis as an int",
            )
        ]


def _axis_argument(node: ast.Call, ctx: Context) -> ast.expr | None:
    f = node.func
    kw = next((k.value for k in node.keywords if k.arg in ("axis", "dim")), None)
    if type(f) is ast.Call:
        q = ctx.qualname(f.func) or ""
        if q.startswith("mindspore.ops.") and q.rsplit(".", 1)[-1] in _REDUCE_PRIMITIVES:
            return node.args[1] if len(node.args) > 1 else None
        return None
    if type(f) is ast.Attribute and f.attr in _REDUCTIONS:
        if type(f.value) is ast.Name and f.value.id in ctx.scopes.info.imports:
            q = ctx.qualname(f) or ""
            if not q.startswith("mindspore.ops."):
                return None
            return kw if kw is not None else (node.args[1] if len(node.args) > 1 else None)
        return kw if kw is not None else (node.args[0] if node.args else None)
    if isinstance(f, ast.Name) and f.id in _REDUCTIONS:
        q = ctx.qualname(f) or ""
        if q.startswith("mindspore.ops."):
            return kw if kw is not None else (node.args[1] if len(node.args) > 1 else None)
    return None


def _tensor_call(e: ast.expr | None, ctx: Context) -> bool:
    """`Tensor(1, ms.int32)`, `Tensor((0, 1))`: a Tensor of literal numbers."""
    if not (type(e) is ast.Call and e.args and ctx.qualname(e.func) in TENSOR_CLASS):
        return False
    data = e.args[0]
    items = data.elts if isinstance(data, (ast.Tuple, ast.List)) else [data]
    return all(isinstance(i, ast.Constant) and isinstance(i.value, int) for i in items)


def _constant_tensor(e: ast.expr, ctx: Context) -> bool:
    """`Tensor(1)` in place, a local bound only to one, or `self.ax` bound to one in `__init__`."""
    if _tensor_call(e, ctx):
        return True
    a = analyzer(ctx)
    if type(e) is ast.Name:
        return _tensor_call(a.single_assignment(e.id, ctx.function), ctx)
    if type(e) is ast.Attribute and type(e.value) is ast.Name and e.value.id == "self" and ctx.function is not None:
        cls = a.owner_class(ctx.function)
        values = a.self_values(cls).get(e.attr, []) if cls is not None else []
        return bool(values) and all(_tensor_call(v, ctx) for v in values)
    return False
