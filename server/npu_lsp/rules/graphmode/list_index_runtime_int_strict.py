"""MS225: (STRICT) a tensor read through a Python list index holding a run-time number."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.dynamic_shape import declared_dynamic_read, dynamic_shape
from npu_lsp.rules.graphmode.flow import Kind, analyzer
from npu_lsp.rules.graphmode.helpers import GraphRule
from npu_lsp.rules.graphmode.runtime_scalars import runtime_scalar


@rule(code="MS225", name="list-index-runtime-int-strict", severity="error", family="graphmode")
class ListIndexRuntimeIntStrict(GraphRule):
    """## What it does
    Under the STRICT syntax level, flags reading a tensor through a Python list index that
    holds a number read from a run-time tensor: `boxes[[i, m]]` with `m = int(s.argmax())`
    (or `t.item()`, also through arithmetic, `int(rest.argmax()) + i`), also a list bound
    to a name first (`idx = [0, m]`, then `x[idx]`). The row swap of hand-written soft-NMS,
    `boxes[[i, m]] = boxes[[m, i]]`, reads that way on its right-hand side.

    ## Why is this bad?
    MindSpore 2.10 reads a tensor by a list in Python code of its own
    (`tensor_index_by_list`), which first asks `all(isinstance(i, bool) for i in
    list_index)`; with a run-time number in the list that is a script STRICT cannot run:
    `When handling script 'all(isinstance(i, bool) for i in list_index) in graph mode',
    the inputs should be constant, but found variable 'list_index' to be nonconstant`.
    LAX runs it, and STRICT compiles a list of constants or `for` variables over a
    `range` (`x[[i, 2]]`), a run-time number used alone or in a tuple index (`x[m]`,
    `x[m, 0]`), a list inside a tuple index (`x[:, [0, m]]`), a store through the list
    with a number value (`x[[0, m]] = 0.0`), and a tensor whose first dimension is known
    only at run time (the question is skipped then).

    ## Example
    ```python
    def construct(self, boxes, scores):
        m = int(scores.argmax())
        boxes[[0, m]] = boxes[[m, 0]]
        return boxes
    ```

    ## Use instead
    Index with a tensor (`boxes[ops.stack([m, z])]` with tensor `m` and `z`), or gather
    the two rows with `ops.gather`; or use the default LAX level.

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 2 (STRICT only: what LAX hands to JIT Fallback).
    - Measured on MindSpore 2.10 CPU: written/heldout29b case `nms_soft_gaussian_python_loop`
      and probes `fix30b_getitem_listidx_*`, `fix30b_getitem_listvar_runtime`,
      `fix30b_setitem_listidx_*` (`int(t)`, `.item()`, a list bound to a name, in a loop:
      refused under STRICT, compiled under LAX; a constant list, a shape read, a `range`
      variable, a tuple index, a list inside a tuple index, a store of a number and a
      dynamic first dimension compile).
    """

    nodes = (ast.Subscript,)
    strict_only = True
    words = ("int", "item")

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        assert isinstance(node, ast.Subscript)
        # not a generator itself: almost every subscript stops at these tests
        if type(node.ctx) is not ast.Load or type(node.slice) not in (ast.List, ast.Name):
            return ()
        if not ctx.scope or not ctx.scope.strict or ctx.function is None:
            return ()
        return self._check(node, ctx)

    def _check(self, node: ast.Subscript, ctx: Context) -> Iterable[Diagnostic]:
        index = node.slice
        a = analyzer(ctx)
        if type(index) is ast.Name:
            bound = a.single_assignment(index.id, ctx.function)
            if type(bound) is not ast.List:
                return
            index = bound
        assert isinstance(index, ast.List)
        number = next((e for e in index.elts if runtime_scalar(e, ctx) is not None), None)
        if number is None or a.kind(node.value) != Kind.TENSOR or _first_dim_unknown(node.value, ctx):
            return
        yield ctx.diagnostic(
            self,
            node,
            f"`{ctx.segment(node)}` reads a tensor through a Python list holding `{ctx.segment(number)}`, a number read from a run-time tensor: under STRICT MindSpore's list indexing asks `all(isinstance(i, bool) for i in list_index)` as a script, which needs constant inputs; index with a tensor (`ops.stack([...])`) or `ops.gather`",
        )


def _first_dim_unknown(t: ast.expr, ctx: Context) -> bool:
    """Is `t`'s first dimension known only at run time? MindSpore then skips the question
    (`F.isconstant(data_shape[0]) and all(...)`; measured, probe
    `fix30b_getitem_listidx_dyn_first_dim`: compiles)."""
    if dynamic_shape(t, ctx):
        return True
    read = ast.Subscript(value=ast.Attribute(value=t, attr="shape", ctx=ast.Load()), slice=ast.Constant(0), ctx=ast.Load())
    return declared_dynamic_read(read, ctx)
