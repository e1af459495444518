"""Tuples and lists of Python numbers that compiled LAX code reads with a Tensor index
(`SCALES[i]`, `self.lr_table[self.step]`): a JIT Fallback value, and a float one is float64
(MS145). The reads themselves are `runtime_index_into_constants.tensor_read_of_numbers`';
here, the file's gate before it is asked and what is computed from such a read."""

from __future__ import annotations

import ast
import re

from npu_lsp.astutil import find_branches
from npu_lsp.engine import Context
from npu_lsp.rules.graphmode.flow import analyzer
from npu_lsp.rules.graphmode.lax_functions import lax_scopes
from npu_lsp.rules.graphmode.runtime_index_into_constants import tensor_read_of_numbers

#: how far `from_float_table` follows arithmetic, calls and names
_DEPTH = 4


#: what a Python table may be built as (`[0.1, 0.2]`, `[... for ...]`, `list(...)`,
#: `warmup + decay`, a constructor argument)
_TABLE_VALUES = (ast.List, ast.Tuple, ast.ListComp, ast.Call, ast.BinOp, ast.Name)


#: a subscript in the text whose index does not start with a number, a slice or a string
#: (`SCALES[i`, `self.lr_table[self.step`); led by the literal `[`: a pattern led by `\w`
#: is tried at every position (200 times slower on bench_lsp_engine's file)
_SUBSCRIPT_OPEN = re.compile(r"\[(?![\d:\]'\"-])")


_SUBSCRIPT = frozenset({ast.Subscript})


def reads_tables(ctx: Context) -> bool:
    """Does compiled LAX code of this file read a tuple or list of Python numbers with a
    Tensor index (`tensor_read_of_numbers`)? Once per file; each LAX function is asked as
    the function being checked (the table's owner class and the index's kind depend on it)."""
    hit = ctx.cache.get("opaque.tables")
    if hit is None and not _table_candidates_read(ctx):
        hit = ctx.cache["opaque.tables"] = False
    if hit is None:
        hit = False
        saved = ctx.function
        try:
            for s in lax_scopes(ctx):
                reads = [
                    n for n in find_branches(s.function, _SUBSCRIPT)
                    if type(n.slice) is not ast.Constant and type(n.slice) is not ast.Slice  # type: ignore[attr-defined]
                ]
                if not reads:
                    continue
                ctx.function = s.function
                if any(tensor_read_of_numbers(n, ctx) for n in reads):  # type: ignore[arg-type]
                    hit = True
                    break
        finally:
            ctx.function = saved
        ctx.cache["opaque.tables"] = hit
    return bool(hit)


def _table_candidates_read(ctx: Context) -> bool:
    """The text test before `reads_tables` walks the compiled functions: some module-level
    list or tuple display, or some `self` attribute an `__init__` may set to a table, is
    subscripted in the text (`SCALES[`, `self.lr_table[`)."""
    read = _subscripted_names(ctx.text)
    if not read:
        return False
    for st in ctx.tree.body:
        if type(st) is ast.Assign and type(st.value) in (ast.List, ast.Tuple):
            for t in st.targets:
                if type(t) is ast.Name and t.id in read:
                    return True
    a = analyzer(ctx)
    for c in ctx.scopes.info.classes.values():
        for attr, values in a.self_values(c.node).items():
            if attr in read and any(isinstance(v, _TABLE_VALUES) for v in values):
                return True
    return False


def _subscripted_names(text: str) -> set[str]:
    """The names right before each `_SUBSCRIPT_OPEN` of the text (`SCALES`, `lr_table`)."""
    names: set[str] = set()
    for m in _SUBSCRIPT_OPEN.finditer(text):
        end = j = m.start()
        while j > 0 and (text[j - 1].isalnum() or text[j - 1] == "_"):
            j -= 1
        if j < end:
            names.add(text[j:end])
    return names


def from_float_table(e: ast.expr, func: ast.AST, ctx: Context, depth: int) -> bool:
    """Is `e` computed from a float a Tensor index reads from a Python table
    (`tensor_read_of_numbers`): the read itself, arithmetic or a call on it, a name bound
    to one in the same function?"""
    if depth > _DEPTH:
        return False
    if isinstance(e, ast.Subscript):
        return tensor_read_of_numbers(e, ctx, floats=True)
    if isinstance(e, ast.BinOp):
        return from_float_table(e.left, func, ctx, depth + 1) or from_float_table(e.right, func, ctx, depth + 1)
    if isinstance(e, ast.UnaryOp):
        return from_float_table(e.operand, func, ctx, depth + 1)
    if isinstance(e, ast.Call):
        return any(from_float_table(a, func, ctx, depth + 1) for a in e.args if not isinstance(a, ast.Starred))
    if isinstance(e, ast.Name):
        bound = analyzer(ctx).single_assignment(e.id, func)
        return bound is not None and from_float_table(bound, func, ctx, depth + 1)
    return False
