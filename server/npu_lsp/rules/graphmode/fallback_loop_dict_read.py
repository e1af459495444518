"""MS204: (LAX) a dict filled in a `for` over host data of a run-time tensor, then returned, printed or indexed."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.fallback_list_max import (
    fallback_iterable,
    maybe_constant,
)
from npu_lsp.rules.graphmode.fallback_loop_list_read import returned_or_printed
from npu_lsp.rules.graphmode.flow import analyzer
from npu_lsp.rules.graphmode.helpers import GraphRule


def _dict_stores(loop: ast.For) -> set[str]:
    """Names a loop body stores an item into under a key that reads the loop's own
    variables (`d[c] = v`, `d[i] += v`, `d['k' + str(i)] = v`). A constant key (`m['n'] =
    m['n'] + v`) compiles (written/heldout15b probe `ls_hl_dict_const_key_accum`)."""
    own = {n.id for n in ast.walk(loop.target) if type(n) is ast.Name}
    out: set[str] = set()
    for st in loop.body:
        for s in ast.walk(st):
            t = type(s)
            targets = s.targets if t is ast.Assign else [s.target] if t is ast.AugAssign else ()  # type: ignore[attr-defined]
            for tg in targets:
                if (
                    type(tg) is ast.Subscript
                    and type(tg.value) is ast.Name
                    and any(type(k) is ast.Name and k.id in own for k in ast.walk(tg.slice))
                ):
                    out.add(tg.value.id)
    return out


def _jumps(loop: ast.For) -> bool:
    """Does the loop's own body hold a `continue` or `break` (not one of a nested loop)?"""
    todo: list[ast.AST] = list(loop.body)
    while todo:
        n = todo.pop()
        if type(n) in (ast.Continue, ast.Break):
            return True
        if not isinstance(n, (ast.For, ast.AsyncFor, ast.While, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            todo.extend(ast.iter_child_nodes(n))
    return False


def _whole(n: ast.Name, ctx: Context) -> bool:
    """Is this read the dict returned alone (`return d`) or printed (`print(d)`)?"""
    parent = ctx.parent(n)
    if type(parent) is ast.Return:
        return True
    return type(parent) is ast.Call and ctx.qualname(parent.func) == "builtins.print" and n in parent.args


def _dict_read_after(loop: ast.For, name: str, ctx: Context) -> ast.Name | None:
    """The first read of `name` after `loop` that returns it (as it is or in a tuple), prints
    it or indexes it; None when there is none or `name` is bound again after the loop.
    When the loop's body holds a `continue` or `break` (`if lab == 0: continue`), the dict
    returned alone or printed compiles (measured, written/heldout24b case
    `metric_volume_stats_tolist_keys` and probes `fe24_dict_*`: it comes back as an empty
    tuple, silently wrong), while indexing it or returning it in a tuple still fails."""
    whole_ok = _jumps(loop)
    end = loop.end_lineno or loop.lineno
    first: ast.Name | None = None
    for n in ast.walk(ctx.function):  # type: ignore[arg-type]
        if type(n) is not ast.Name or n.id != name or n.lineno <= end:
            continue
        if type(n.ctx) is not ast.Load:
            return None
        parent = ctx.parent(n)
        indexed = type(parent) is ast.Subscript and parent.value is n and type(parent.ctx) is ast.Load
        if not indexed and whole_ok and _whole(n, ctx):
            continue
        if (indexed or returned_or_printed(n, ctx)) and (first is None or (n.lineno, n.col_offset) < (first.lineno, first.col_offset)):
            first = n
    return first


@rule(code="MS204", name="fallback-loop-dict-read", severity="error", family="graphmode")
class FallbackLoopDictRead(GraphRule):
    """## What it does
    Under the default LAX syntax level, flags the read of a local dict (`d = {}`, or a
    display with items) that compiled code fills (`d[k] = v`, `d[k] += v`) in a `for` over a
    tensor's values turned into Python data (`for c in labels.tolist()`, `for i, v in
    enumerate(t.asnumpy())`, a name bound to one), when the dict is then returned (as it is
    or in a tuple), printed or indexed (`d[k]`), when the key stored reads the loop's own
    variables (`d[c] = v`); a constant key (`m['n'] = m['n'] + v`) compiles (written/heldout15b
    probe `ls_hl_dict_const_key_accum`).

    ## Why is this bad?
    Under LAX MindSpore 2.10 runs such a loop by JIT Fallback, and the dict it fills is not
    one the graph can hand on: returning or printing it fails with `'tuple' object does not
    support item assignment`, and indexing it with `The key 1 does not exist in the
    dict:{}` (the graph's dict is still empty), whatever the number of items (1 already) and
    whatever the keys (numbers or strings). A dict never read after the loop, or only
    measured (`len(d)`), compiles, and so does one filled in a `for` over a literal `range`
    or over `self.c.tolist()` of a tensor attribute (folded while compiling). When the loop
    holds its own `continue` or `break` (`if lab == 0: continue`), the dict returned alone or
    printed compiles too (it comes back as an empty tuple: silently wrong), while indexing it
    or returning it in a tuple still fails (written/heldout24b probes `fe24_dict_*`). STRICT
    refuses `tolist` / `asnumpy` themselves (MS130).

    ## Example
    ```python
    class Count(nn.Cell):
        def construct(self, x, labels):
            counts = {}
            for c in labels.tolist():
                counts[c] = counts.get(c, 0) + 1
            return x, counts
    ```

    ## Use instead
    Count with tensor operations (`ops.bincount`, `ops.one_hot(labels, n).sum(0)`) and return
    the tensor; build the dict outside the network.

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 2 (JIT Fallback makes LAX run `tolist` / `asnumpy` as Python).
    - Measured on MindSpore 2.10 CPU with the written set `fallbackflows` (generated by
      tests/npu_lsp/difftest/gen_fallback_flows.py): `ff_*__dict_fill`, `ff2_dict_fill_print`,
      `ff2_dict_fill_tensor_loop`, `ff3_dict_fill_len1`, `ff3_dict_fill_len3`,
      `ff3_dict_fill_str_keys`, `ff3_dict_update_loop` (rejected); `ff2_dict_fill_len`,
      `ff2_dict_fill_key_value`, `ff2_dict_fill_const_loop`, `ff2_dict_setitem_no_loop` (compile).
    """

    nodes = (ast.For,)
    words = ("tolist", "asnumpy")

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        assert isinstance(node, ast.For)
        if ctx.function is None or not ctx.scope or ctx.scope.level != "lax":
            return
        stored = _dict_stores(node)
        if not stored or not fallback_iterable(node.iter, ctx) or maybe_constant(node.iter, ctx):
            return
        a = analyzer(ctx)
        for name in sorted(stored):
            start = a.single_assignment(name, ctx.function)
            if type(start) is not ast.Dict or start.lineno >= node.lineno:
                continue
            read = _dict_read_after(node, name, ctx)
            if read is None:
                continue
            yield ctx.diagnostic(
                self,
                read,
                f"`{name}` is filled in the `for` over `{ctx.segment(node.iter)}` (line {node.lineno}), a tensor's values JIT Fallback runs as Python under LAX: the graph cannot return, print or index the dict it fills ('tuple' object does not support item assignment); count with tensor operations, or build the dict outside the network",
            )

