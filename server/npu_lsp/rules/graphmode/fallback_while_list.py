"""MS205: (LAX) a `while` loop over a Python list JIT Fallback made, growing a list."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.fallback_list_max import (
    fallback_list,
    maybe_constant,
)
from npu_lsp.rules.graphmode.helpers import GraphRule
from npu_lsp.rules.graphmode.interpreted import interpreted


def _grown_in(body: list[ast.stmt]) -> ast.AST | None:
    """The first list growth (`lst.append(...)`, `extend`, `insert`, `lst += [...]`) in a loop
    body, or a comprehension over a name rebound to it (`order = [j for j in order[1:] ...]`)."""
    for st in body:
        for s in ast.walk(st):
            t = type(s)
            if t is ast.Call and type(s.func) is ast.Attribute and s.func.attr in ("append", "extend", "insert"):  # type: ignore[attr-defined]
                if type(s.func.value) is ast.Name:  # type: ignore[attr-defined]
                    return s
            elif t is ast.AugAssign and type(s.op) is ast.Add and type(s.value) in (ast.List, ast.ListComp):  # type: ignore[attr-defined]
                return s
            elif t is ast.Assign and type(s.value) is ast.ListComp:  # type: ignore[attr-defined]
                names = {n.id for n in ast.walk(s.value.generators[0].iter) if type(n) is ast.Name}  # type: ignore[attr-defined]
                if any(type(tg) is ast.Name and tg.id in names for tg in s.targets):  # type: ignore[attr-defined]
                    return s
    return None


def _list_before(name: str, loop: ast.While, ctx: Context) -> bool:
    """Is `name`, when `loop` starts, a Python list JIT Fallback made (`fallback_list`: the
    value of its last plain assignment before the loop)? A numpy array is not one: the numpy
    NMS loop `while order.size > 0` compiles in one program (written/algorithms
    `nms_keep_numpy_fallback`) and fails in its near twins (heldout14b `hv_while_numpy_*`),
    for a reason not measured, so it is left alone."""
    last: ast.Assign | None = None
    for n in ast.walk(ctx.function):  # type: ignore[arg-type]
        if (
            type(n) is ast.Assign
            and n.lineno < loop.lineno
            and any(type(t) is ast.Name and t.id == name for t in n.targets)
            and (last is None or n.lineno > last.lineno)
        ):
            last = n
    return last is not None and fallback_list(last.value, ctx)


def _changes_tested(loop: ast.While, ctx: Context) -> bool:
    """Does the loop body rebind or change in place (`pop`, `remove`, `del`) a name its test
    reads (`while order:` ... `order = order[1:]`)? A `while i < len(a)` over host data `a`
    the loop leaves alone compiles (written/heldout14b probe `hv_while_numpy_len_cond_append`)."""
    tested = {n.id for n in ast.walk(loop.test) if type(n) is ast.Name and _list_before(n.id, loop, ctx)}
    if not tested:
        return False
    for st in loop.body:
        for s in ast.walk(st):
            t = type(s)
            if t is ast.Name and type(s.ctx) in (ast.Store, ast.Del) and s.id in tested:  # type: ignore[attr-defined]
                return True
            if (
                t is ast.Call
                and type(s.func) is ast.Attribute  # type: ignore[attr-defined]
                and s.func.attr in ("pop", "remove", "clear")  # type: ignore[attr-defined]
                and type(s.func.value) is ast.Name  # type: ignore[attr-defined]
                and s.func.value.id in tested  # type: ignore[attr-defined]
            ):
                return True
    return False


@rule(code="MS205", name="fallback-while-list", severity="error", family="graphmode")
class FallbackWhileList(GraphRule):
    """## What it does
    Under the default LAX syntax level, flags a `while` loop in compiled code whose test
    reads host data of a run-time tensor (`while order:` / `while len(order) > 0:` with
    `order = scores.asnumpy().argsort().tolist()`, `while order.size > 0:` with a numpy
    array from `asnumpy()`, also in a helper every call of which passes such data) and whose
    body grows a list (`keep.append(i)`, `extend`, `insert`, `+= [...]`) or rebinds the tested
    list to a comprehension over it (`order = [j for j in order[1:] if ...]`), when the body
    also changes the tested host data (rebinds it, `pop`, `remove`): the greedy NMS loop
    written in Python lists. `while i < len(a)` with a graph counter `i` and `a` left alone
    compiles (written/heldout14b probe `hv_while_numpy_len_cond_append`). The tested data
    must be a Python list (`tolist()`, `sorted(...)` of host data): the same loop over a numpy
    array (`while order.size > 0`) compiles in one measured program and fails in its near
    twins, so it is not flagged.

    ## Why is this bad?
    Under LAX MindSpore 2.10 cannot unroll a `while` loop whose test is known only at run
    time, and the host list the loop works on is a sequence of unknown length: compiling
    stops with `'float' object has no attribute 'append'` (or `'int' object ...`), or
    `Getitem can not get element from an empty dynamic length sequence`, even when the list
    is only returned. The same loop counting a number (`k = k + 1`, `t = t + 5.0`) compiles,
    and so does a `while` over a list the graph builds itself (`stack = [(0, 0)]`, `while
    stack: a, b = stack.pop()`). STRICT refuses `tolist` / `asnumpy` themselves (MS130).

    ## Example
    ```python
    class NMS(nn.Cell):
        def construct(self, boxes, scores):
            order = scores.asnumpy().argsort()[::-1]
            keep = []
            while order.size > 0:
                keep.append(int(order[0]))
                order = order[1:]
            return boxes[ms.Tensor(keep)]
    ```

    ## Use instead
    Use the graph's NMS (`ops.NMSWithMask`) or run the numpy NMS outside the network, on
    the tensors it returns.

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 2 (JIT Fallback makes LAX run `tolist` / `asnumpy` as Python).
    - Measured on MindSpore 2.10 CPU with the written set `fallbackflows` (generated by
      tests/npu_lsp/difftest/gen_fallback_flows.py): `ff5_while_*` (a list grown, or the
      tested list rebound to a comprehension, in a `while` over host data: rejected, also
      when only returned; a counter, a float accumulator, a `while` over a graph list and a
      `while` on graph numbers: compile).
    """

    nodes = (ast.While,)
    words = ("tolist", "asnumpy")

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        assert isinstance(node, ast.While)
        if ctx.function is None or not ctx.scope or ctx.scope.level != "lax":
            return
        grown = _grown_in(node.body)
        if grown is None or not _changes_tested(node, ctx) or not interpreted(node.test, ctx, ctx.function) or maybe_constant(node.test, ctx):
            return
        yield ctx.diagnostic(
            self,
            grown,
            f"this `while` (line {node.lineno}) runs on `{ctx.segment(node.test)}`, host data JIT Fallback makes from a tensor at run time: MindSpore cannot unroll it, and growing a list in it fails under LAX ('float' object has no attribute 'append'), even when the list is only returned; use the graph's NMS (`ops.NMSWithMask`) or loop outside the network",
        )

