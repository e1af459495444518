"""MS211: an item of a list of constants stored on one side of a tensor `if`, then read."""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.flow import Analyzer, Kind, analyzer
from npu_lsp.rules.graphmode.helpers import FUNCS, GraphRule

#: what reads the whole list item by item, with MindSpore 2.10's words; `all` / `any` fail
#: at both levels, the others under LAX only (measured)
_BOTH = {"builtins.all": "'bool' object is not iterable", "builtins.any": "'bool' object is not iterable"}
_LAX = {
    "builtins.sum": "'bool' object is not subscriptable",
    "builtins.max": "For 'tuple_setitem', input[0] should be Tuple, but got Int64",
    "builtins.min": "For 'tuple_setitem', input[0] should be Tuple, but got Int64",
}
_INDEX = "'bool' object is not subscriptable"


@rule(code="MS211", name="list-item-stored-under-tensor-if", severity="error", family="graphmode")
class ListItemStoredUnderTensorIf(GraphRule):
    """## What it does
    Flags a list of Python constants (`done = [False] * n`, `[False for _ in range(n)]`)
    whose item is stored (`done[b] = True`) only on one side of an `if` whose test is known
    only at run time (a tensor or a number read from one), when the list is then given to
    `all` or `any` (both levels), or, under LAX, to `sum`, `max` or `min`, or indexed at
    the stored item (any item when the stored index is not a literal). Under LAX also an
    item read inside the `for` loop around the `if`, before it too, when a Python constant
    is stored: the "finished" flags of a generation loop, `if not finished[i]: ... if
    seq[i, j] == eos: finished[i] = True` (the loop is unrolled, so each later iteration
    reads the joined list).

    ## Why is this bad?
    The tensor `if` is compiled as a branch, and MindSpore 2.10 joins the list the store
    changed with the list the other side left alone into a value it can no longer read item
    by item: `TypeError: 'bool' object is not iterable` for `all(done)` / `any(done)` at
    every syntax level, `'bool' object is not subscriptable` for `done[0]` or `sum(done)`
    under LAX, `max(vals)` stops with `For 'tuple_setitem', input[0] should be Tuple, but got
    Int64`. Reading another item (`vals[0]` after `vals[1] = 5`), `len(done)` and returning
    the list compile, and so do a store on both sides
    (`else: done[b] = False`; under STRICT `all` of that list still needs constant inputs),
    a store under a condition known while compiling, and a store made unconditionally.

    ## Example
    ```python
    def construct(self, toks):
        done = [False for _ in range(toks.shape[0])]
        for b in range(toks.shape[0]):
            if (toks[b] == self.eos).any():
                done[b] = True
        return all(done)
    ```

    ## Use instead
    Keep the flags in a tensor: `done = (toks == self.eos).any(axis=1)`, then `done.all()`.

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 3 (a tensor `if` joins the values of both branches).
    - Measured on MindSpore 2.10 CPU, LAX and STRICT: written set `heldout19a`
      (`beam_done_flags_python_list`) and the `heldout21a` probes `tc22_flags_*`: one-sided
      stores in an unrolled `for` and outside a loop, read by `all`, `any` (rejected at both
      levels), `sum` and `done[0]` (rejected under LAX); `len`, the list returned, an
      `if`/`else` storing on both sides, a constant condition and an unconditional store
      compile at LAX; written set `famc` probes `mx_list_store_tensor_if_*` (the stored item
      read, `min` of it, `sum`, `max` of the list rejected under LAX; another item compiles).
    - Reads inside the loop: written set `heldout42d` (`gen_finished_python_list_flags`,
      `r2_gen_finished_list_comprehension_flags`) and its probes `fix42d_bl_*`: a read before
      the store in a nested or single loop, after it in the same iteration, a list bound in an
      outer loop and read in the inner one, a list of ints (`'int' object is not
      subscriptable`) rejected under LAX, compiled under STRICT; a `range(1)` loop reading
      before the store, another item read and a store on both sides compile.
    """

    nodes = (ast.If,)
    words = ("] = ",)  # a store into an item, in the file's text

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        assert isinstance(node, ast.If)
        if ctx.scope is None or ctx.function is None:
            return ()
        stored = set(_stored(node.body)) - set(_stored(node.orelse))
        if not stored:
            return ()
        return self._check(node, stored, ctx)

    def _check(self, node: ast.If, stored: set[str], ctx: Context) -> Iterator[Diagnostic]:
        assert ctx.scope is not None and ctx.function is not None
        a = analyzer(ctx)
        if not a.kind(node.test).dynamic or _inside_while(node, ctx):
            return
        end = _after(node, ctx)
        strict = ctx.scope.strict
        for name in sorted(stored):
            start = a.single_assignment(name, ctx.function)
            if start is None or not _constant_list(start, a, ctx) or start.lineno >= node.lineno:
                continue
            read = _first_read(name, end, ctx.function, strict, ctx, _stored(node.body)[name])
            if read is None and not strict:
                read = _loop_read(name, node, start, ctx, _stored(node.body)[name])
            if read is None:
                continue
            use, why = read
            yield ctx.diagnostic(
                self,
                use,
                f"an item of `{name}` is stored only when the run-time condition on line {node.lineno} holds, "
                f"so MindSpore joins the changed list with the unchanged one into a value it cannot read item "
                f'by item: `{ctx.segment(use)}` fails ("{why}"); keep the flags in a tensor instead',
            )


def _stored(body: list[ast.stmt]) -> dict[str, set[object]]:
    """Names of lists an item of which the top-level statements of `body` store into
    (`done[b] = v`), with the indexes stored: an int written in the source, or None for
    any other index."""
    out: dict[str, set[object]] = {}
    for st in body:
        if type(st) is ast.Assign:
            for t in st.targets:
                if type(t) is ast.Subscript and type(t.value) is ast.Name:
                    out.setdefault(t.value.id, set()).add(_literal_index(t.slice))
    return out


def _literal_index(e: ast.expr) -> int | None:
    if isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.USub) and isinstance(e.operand, ast.Constant):
        v = e.operand.value
        return -v if type(v) is int else None
    return e.value if isinstance(e, ast.Constant) and type(e.value) is int else None


def _inside_while(node: ast.AST, ctx: Context) -> bool:
    p = ctx.parent(node)
    while p is not None and p is not ctx.function:
        if isinstance(p, ast.While):
            return True
        p = ctx.parent(p)
    return False


def _after(node: ast.If, ctx: Context) -> int:
    """The last line of the outermost `for` around `node` in the function (the `if` itself
    when none): reads after it see the joined list."""
    end = node.end_lineno or node.lineno
    p = ctx.parent(node)
    while p is not None and p is not ctx.function and not isinstance(p, FUNCS):
        if isinstance(p, ast.For):
            end = p.end_lineno or p.lineno
        p = ctx.parent(p)
    return end


def _stores_constants(name: str, body: list[ast.stmt], ctx: Context) -> bool:
    """Do the top-level stores of `body` into an item of `name` all store Python constants?"""
    a = analyzer(ctx)
    values = [
        st.value
        for st in body
        if type(st) is ast.Assign
        and any(type(t) is ast.Subscript and type(t.value) is ast.Name and t.value.id == name for t in st.targets)
    ]
    return bool(values) and all(a.kind(v) == Kind.CONST for v in values)


def _outermost_for(node: ast.AST, after: int, ctx: Context) -> ast.For | None:
    """The outermost `for` around `node` in its function that starts after line `after`."""
    loop: ast.For | None = None
    p = ctx.parent(node)
    while p is not None and p is not ctx.function and not isinstance(p, FUNCS):
        if isinstance(p, ast.For) and p.lineno > after:
            loop = p
        p = ctx.parent(p)
    return loop


def _one_pass(loop: ast.For) -> bool:
    """`for _ in range(1)`: no later iteration reads what an earlier one stored."""
    it = loop.iter
    return (
        isinstance(it, ast.Call)
        and isinstance(it.func, ast.Name)
        and it.func.id == "range"
        and len(it.args) == 1
        and isinstance(it.args[0], ast.Constant)
        and it.args[0].value == 1
    )


def _loop_read(name: str, node: ast.If, start: ast.expr, ctx: Context, stored: set[object]) -> tuple[ast.expr, str] | None:
    """Under LAX, an item read inside the outermost `for` around `node` but outside `node`
    itself (before it too: MindSpore unrolls the loop, so the read of each later iteration
    sees the list joined by the earlier ones; not before it in a `range(1)` loop), the list
    bound once before that loop (the loop may sit inside another that binds it). The
    "finished" flags of a generation loop, `if not finished[i]: ... if seq[i, j] == eos:
    finished[i] = True` (measured, written/heldout42d cases `gen_finished_python_list_flags`,
    `r2_gen_finished_list_comprehension_flags` and probes `fix42d_bl_*`: "'bool' object is not
    subscriptable" (`'int'` for a list of ints) under LAX; STRICT compiles the probes, and so
    do a `range(1)` loop reading before the `if`, another item read, a store on both sides).
    Only Python constants stored count here (a tensor stored is left alone)."""
    loop = _outermost_for(node, start.lineno, ctx)
    if loop is None or not _stores_constants(name, node.body, ctx):
        return None
    inside = range(node.lineno, (node.end_lineno or node.lineno) + 1)
    earliest = (node.end_lineno or node.lineno) if _one_pass(loop) else 0
    for n in ast.walk(loop):
        if isinstance(n, ast.Name) and n.id == name and not isinstance(n.ctx, ast.Load):
            return None  # bound again in the loop: each iteration may start afresh
    for n in ast.walk(loop):
        if (
            isinstance(n, ast.Subscript)
            and isinstance(n.ctx, ast.Load)
            and isinstance(n.value, ast.Name)
            and n.value.id == name
            and n.lineno not in inside
            and n.lineno > earliest
            and (None in stored or _literal_index(n.slice) in stored or _literal_index(n.slice) is None)
        ):
            return n, _INDEX
    return None


def _constant_list(e: ast.expr, a: Analyzer, ctx: Context) -> bool:
    """A list of Python constants: a display, `[c] * n`, or a comprehension of a constant."""
    if isinstance(e, ast.List):
        return bool(e.elts) and all(a.kind(v) == Kind.CONST for v in e.elts)
    if isinstance(e, ast.BinOp) and isinstance(e.op, ast.Mult):
        seq = e.left if isinstance(e.left, ast.List) else e.right
        n = e.right if seq is e.left else e.left
        return isinstance(seq, ast.List) and _constant_list(seq, a, ctx) and a.kind(n) == Kind.CONST
    if isinstance(e, ast.ListComp):
        return isinstance(e.elt, ast.Constant) and all(a.kind(g.iter) == Kind.CONST for g in e.generators)
    return False


def _first_read(
    name: str, end: int, func: ast.AST, strict: bool, ctx: Context, stored: set[object]
) -> tuple[ast.expr, str] | None:
    """The first read of `name` after line `end` MindSpore cannot make of the joined list,
    with its words, before `name` is bound again. An item read by a literal index no store
    used (`vals[0]` after `vals[1] = 5`) compiles (measured, written/famc probe
    `mx_list_store_tensor_if_other_item_ok`)."""
    nodes = [n for n in ast.walk(func) if getattr(n, "lineno", 0) > end]
    rebound = min(
        (n.lineno for n in nodes if isinstance(n, ast.Name) and n.id == name and not isinstance(n.ctx, ast.Load)),
        default=None,
    )
    best: tuple[ast.expr, str] | None = None
    for n in nodes:
        assert isinstance(n, (ast.expr, ast.stmt))
        if (rebound is not None and n.lineno >= rebound) or (best is not None and n.lineno >= best[0].lineno):
            continue
        if isinstance(n, ast.Call) and len(n.args) == 1 and isinstance(n.args[0], ast.Name) and n.args[0].id == name:
            q = ctx.qualname(n.func) or ""
            why = _BOTH.get(q) or (None if strict else _LAX.get(q))
            if why is not None:
                best = (n, why)
        elif (
            not strict
            and isinstance(n, ast.Subscript)
            and isinstance(n.ctx, ast.Load)
            and isinstance(n.value, ast.Name)
            and n.value.id == name
            and (None in stored or _literal_index(n.slice) in stored or _literal_index(n.slice) is None)
        ):
            best = (n, _INDEX)
    return best
