"""MS237: (LAX) an operator's tuple result of a JIT Fallback value, unpacked in a closure and read as a sequence."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.helpers import GraphRule, own_nodes
from npu_lsp.rules.graphmode.opaque_value_query import opaque_at_lax

_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)


@rule(code="MS237", name="fallback-closure-unpack", severity="error", family="graphmode")
class FallbackClosureUnpack(GraphRule):
    """## What it does
    Under the default LAX syntax level, flags `vals, idx = ops.topk(x[0], 2)` (any
    `mindspore.ops` function whose tuple result is unpacked into names: `ops.split`...) in
    a function defined inside a compiled function (a closure: `def stage(x):` in
    `construct`) when the operator's first argument is a JIT Fallback value (`x = x +
    math.log1p(x.abs().sum())` before the call, in the closure or in the function that
    hands it `x`), and the closure then reads one of the names as a sequence: its
    `tolist()` measured or indexed (`len(idx.tolist())`, `toks = idx.tolist(); toks[0]`), its
    `shape` indexed (`idx.shape[0]`), or the name itself indexed (`idx[0]`).

    ## Why is this bad?
    MindSpore 2.10 gives the names such an unpacking binds in a closure a scalar
    placeholder while compiling, not the operator's tensors, so every read that needs their
    length or items fails: `'float' object has no attribute '__len__'`, `'float' object is
    not subscriptable`, `tuple index out of range`, `Cannot iterate over a scalar tensor`.
    The same lines in `construct` itself, in a method or a module-level helper, with an
    index instead of the unpacking (`ops.topk(x[0], 2)[1]`), with the tensor method
    (`x[0].topk(2)`) or on a graph `x` compile; so do arithmetic and reductions of the
    names (`vals.sum()`). STRICT has no JIT Fallback and refuses the fallback call itself.

    ## Example
    ```python
    def construct(self, x):
        x = x + math.log1p(x.abs().sum())
        def stage(x):
            vals, idx = ops.topk(x[0], 2)
            return x + len(idx.tolist())
        return stage(x)
    ```

    ## Use instead
    Index the operator's result, or keep the value in the graph:
    ```python
    def construct(self, x):
        x = x + ops.log1p(x.abs().sum())
        def stage(x):
            idx = ops.topk(x[0], 2)[1]
            return x + idx.shape[0]
        return stage(x)
    ```

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 2 (JIT Fallback at LAX).
    - Measured on MindSpore 2.10 with the written/lax probes `fix33a_fl_*` (difftest v6 seed
      12000114): `len` / `[0]` of `idx.tolist()`, `idx.shape[0]`, `int(idx[0])` and
      `len(b.tolist())` after `a, b = ops.split(x[0], 2)` fail in a closure given a
      fallback `x` (or making one itself); the same in `construct`, a method or a module
      helper, with `[1]`, with `x[0].topk(2)`, on a graph `x`, or reading only `vals.sum()`
      or nothing compile.
    """

    nodes = (ast.Assign,)
    words = ("ops",)

    def wants_assign(self, target: type[ast.AST] | None, value: type[ast.AST]) -> bool:
        # `check`'s shape test, once per shape: one tuple or list target, a call value
        return (target is ast.Tuple or target is ast.List) and value is ast.Call

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        assert isinstance(node, ast.Assign)
        value = node.value
        if type(value) is not ast.Call or not value.args or len(node.targets) != 1:
            return
        target = node.targets[0]
        if type(target) not in (ast.Tuple, ast.List) or ctx.scope is None or ctx.scope.level != "lax":
            return
        names = [t.id for t in target.elts if type(t) is ast.Name]  # type: ignore[attr-defined]
        fn = ctx.function
        if not names or fn is None or not (ctx.qualname(value.func) or "").startswith("mindspore.ops."):
            return
        if not _closure(fn, ctx) or not opaque_at_lax(value.args[0], fn, ctx):
            return
        read = _sequence_read(fn, node, set(names))
        if read is None:
            return
        yield ctx.diagnostic(
            self,
            node,
            f"`{ctx.segment(value.args[0])}` is a JIT Fallback value: under LAX the names this closure unpacks from `{ctx.segment(value.func)}(...)` are scalar placeholders while compiling, and `{ctx.segment(read)}` on line {read.lineno} needs their items (MindSpore fails, e.g. \"'float' object has no attribute '__len__'\"); index the result (`[1]`) or keep the value in the graph",
        )


def _closure(fn: ast.AST, ctx: Context) -> bool:
    """Is `fn` defined inside another function (not a method or a module function)?"""
    p = ctx.parent(fn)
    while p is not None and not isinstance(p, (ast.Module, ast.ClassDef)):
        if isinstance(p, _FUNCS):
            return True
        p = ctx.parent(p)
    return False


def _sequence_read(fn: ast.AST, assign: ast.Assign, names: set[str]) -> ast.expr | None:
    """The first read after `assign` in `fn` of one of `names` as a sequence: `n[...]`,
    `n.shape[...]`, `len(n.tolist())` / `n.tolist()[...]`, or `len(t)` / `t[...]` of a name
    `t` bound to `n.tolist()`."""
    after = (assign.end_lineno or assign.lineno, assign.end_col_offset or 0)

    def at(n: ast.AST) -> tuple[int, int]:
        return getattr(n, "lineno", 0), getattr(n, "col_offset", 0)

    nodes = sorted((n for n in own_nodes(fn) if at(n) > after), key=at)
    listed: set[str] = set()
    for n in nodes:
        if type(n) is ast.Assign and _tolist_of(n.value, names) and len(n.targets) == 1:
            t = n.targets[0]
            if type(t) is ast.Name:
                listed.add(t.id)
                continue
        if type(n) is ast.Subscript and type(n.ctx) is ast.Load:
            base = n.value
            if type(base) is ast.Name and base.id in names | listed:
                return n
            if type(base) is ast.Attribute and base.attr == "shape" and type(base.value) is ast.Name and base.value.id in names:
                return n
            if _tolist_of(base, names):
                return n
        if type(n) is ast.Call and type(n.func) is ast.Name and n.func.id == "len" and len(n.args) == 1:
            arg = n.args[0]
            if (type(arg) is ast.Name and arg.id in listed) or _tolist_of(arg, names):
                return n
    return None


def _tolist_of(e: ast.expr, names: set[str]) -> bool:
    """`n.tolist()` of one of `names`."""
    return (
        type(e) is ast.Call
        and not e.args
        and type(e.func) is ast.Attribute
        and e.func.attr == "tolist"
        and type(e.func.value) is ast.Name
        and e.func.value.id in names
    )
