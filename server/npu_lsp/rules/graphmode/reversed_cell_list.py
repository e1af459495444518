"""MS160: `reversed()` over a CellList (or over its indices) in compiled code."""

from __future__ import annotations

import ast
import builtins
import itertools
from collections.abc import Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode import calls_table
from npu_lsp.rules.graphmode.flow import analyzer
from npu_lsp.rules.graphmode.helpers import GraphRule

#: the functions of `itertools` (`itertools.chain(self.stem, self.body)`), by name
_ITERTOOLS = frozenset(n for n in dir(itertools) if not n.startswith("_"))


@rule(code="MS160", name="reversed-cell-list", severity="error", family="graphmode")
class ReversedCellList(GraphRule):
    """## What it does
    Flags `reversed(self.layers)` in compiled code when `self.layers` is an `nn.CellList`
    (in a `for`, a `zip`, a comprehension), also of a slice of it (`reversed(self.laterals[:-1])`,
    itself a CellList), and `reversed()` of anything that reads the CellList as a whole
    (`for i in reversed(range(len(self.layers)))`, whatever the body does: the script is given
    the CellList; `reversed(range(self.n))` and `reversed(range(n))` of `n = len(self.layers)`
    compile, with `self.layers[i]` in the body); also `reversed()` of a Python container holding the
    CellList, a slice of it or cells of it (`reversed(list(zip(feats, self.lateral)))`,
    `reversed(list(self.up))`, `reversed(list(zip(feats[:2], self.up[:2])))`,
    `reversed((self.up[0], self.up[2]))`; a display of plain sub-cells compiles) and a
    `zip` of the CellList or a slice of it with a `reversed()` list (`zip(self.up, reversed(skips))`). The same
    holds for any builtin the graph does not implement, for the functions of `itertools`
    (`itertools.chain(self.stem, self.body)`, `islice(self.body, 1)`) and for `functools.reduce` given the
    CellList itself or a generator expression over it (`any(isinstance(m, nn.Dropout)
    for m in self.body)`, `functools.reduce(lambda h, f: f(h), self.layers, x)`); a list
    comprehension is compiled first and hands over its items, not the cells. Also such a
    builtin (or a builtin type the parser refuses, such as `type`) given the loop variable
    of a `for` over the CellList (`type(layer).__name__` for `layer` in `self.layers`: "name
    'layer' is not defined"; `isinstance(layer, ...)` compiles).

    ## Why is this bad?
    The graph has no `reversed`: MindSpore interprets the call as Python and gets back
    objects it cannot type, and the compile stops at every syntax level with `RuntimeError:
    Unsupported element type[unknown] to set element data type for KernelTensor.` PyTorch's
    `reversed(self.blocks)` over an `nn.ModuleList` works, so ported decoders and U-Nets hit
    this. A slice (`self.layers[::-1]`) compiles, and so does `reversed` of an
    `nn.SequentialCell`.

    ## Example
    ```python
    def construct(self, x):
        for layer in reversed(self.up):
            x = layer(x)
        return x
    ```

    ## Use instead
    ```python
    def construct(self, x):
        for layer in self.up[::-1]:
            x = layer(x)
        return x
    ```

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 1 (rejected at every level); measured on MindSpore 2.10 with the
      written set `ported` (`reversed_celllist_decoder`) and probes: `reversed(self.layers)`
      in a `for`, inside `zip` and in a list comprehension, and `self.layers[i]` for `i` in
      `reversed(range(len(self.layers)))`, are rejected at both levels; `self.layers[::-1]`
      and `reversed(self.body)` of a SequentialCell compile. Written set `structure`
      (`any_isinstance_generator_in_construct`, `functools_reduce_over_layers`), written/heldout23b
      `cnn_itertools_chain_construct` and written/zoo probes `ld23_chain_*`, and its
      probes: `all`/`any` of a generator over a CellList and `functools.reduce` over it (with
      a lambda or a module-level function) are rejected at both levels; `sum` of a generator
      over it and `list(self.layers)` compile. Written/heldout30a case
      `r2_topdown_reversed_zip_prev_first_lateral` and probes `fix30e_rz_*`: `reversed` of a
      slice of a CellList fails the same way; a slice of a slice (`self.laterals[:-1][::-1]`)
      and `reversed` of a tuple slice compile. Written/heldout37b case
      `r2_misc_reversed_range_index_clean` and probes `fix37d_rr_*`: `reversed(range(len(self.layers)))`
      fails even when the body never indexes the cells; `reversed(range(self.n))`, `reversed(range(3))`,
      `reversed(range(n))` of a local `n = len(self.layers)`, and `range(len(self.layers) - 1, -1, -1)`
      compile with `self.layers[i]` in the body, alike or different cells. Written/heldout42b case
      `r2_fused_none_reversed_range_clean_start` and probes `fix42b_rz_*`: `reversed` of a list / tuple /
      `enumerate` / `zip` holding a slice of a CellList (sliced once or twice), of a local bound to one,
      and of a display of CellList items (`(self.proj[0], self.proj[2])`) fails at both levels, as does
      `zip(self.proj[:2], reversed(...))`; `reversed([self.fc1, self.fc2])` of plain sub-cells (also
      zipped), a SequentialCell's slice in the same `zip` and `[self.proj[0], self.proj[2]][::-1]` compile.
    """

    nodes = (ast.Call,)

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        assert type(node) is ast.Call
        # not a generator itself: of the attribute calls (most calls of compiled code) only
        # `functools.reduce` is followed (a resolved name keeps the last attribute)
        f = node.func
        if type(f) is ast.Attribute:
            if f.attr != "reduce" and f.attr not in _ITERTOOLS:
                return ()
        elif type(f) is not ast.Name:
            return ()  # `f(x)(y)`, `fs[0](x)`: nothing to follow
        elif f.id != "zip" and f.id != "reversed" and _interpreted_name(f, ctx) is None:
            return ()  # a call the graph compiles (`range`, a helper)
        return self._check(node, ctx)

    def wants_call(self, callee: type[ast.AST], called: str, receiver: str) -> bool:
        # `check`'s first tests: `functools.reduce` / `itertools.*` of the attribute calls,
        # any call by name
        return callee is ast.Name or (callee is ast.Attribute and (called == "reduce" or called in _ITERTOOLS))

    def _check(self, node: ast.Call, ctx: Context) -> Iterable[Diagnostic]:
        f = node.func
        if isinstance(f, ast.Name) and f.id == "zip" and ctx.qualname(f) in (None, "builtins.zip", "zip"):
            yield from self._zip_with_reversed(node, ctx)
            return
        if isinstance(f, ast.Name) and f.id != "reversed" or isinstance(f, ast.Attribute):
            yield from self._interpreted_call(node, ctx)
            return
        if not (isinstance(f, ast.Name) and f.id == "reversed" and len(node.args) == 1):
            return
        if ctx.qualname(f) not in (None, "builtins.reversed", "reversed"):
            return
        arg = node.args[0]
        held = _cell_list_attr(arg, ctx)
        if held is None and isinstance(arg, ast.Subscript) and isinstance(arg.slice, ast.Slice):
            # a slice of a CellList is a CellList: `reversed(self.laterals[:-1])` fails as
            # `reversed(self.laterals)` does (measured, written/heldout30a case
            # `r2_topdown_reversed_zip_prev_first_lateral` and probes `fix30e_rz_*`)
            held = _cell_list_slice(arg, ctx)
            if held is not None:
                yield ctx.diagnostic(
                    self,
                    node,
                    f"`{ctx.segment(node)}` reverses a slice of the CellList `self.{held}`, itself a CellList: it is interpreted, not compiled, and its items cannot be typed (Unsupported element type[unknown]); slice it backwards instead (`self.{held}[-2::-1]`)",
                )
                return
        if held is None and not isinstance(arg, ast.Attribute):
            inner = _holds_cell_list(arg, ctx, 0)
            if inner is not None:
                yield ctx.diagnostic(
                    self,
                    node,
                    f"`{ctx.segment(node)}` reverses a Python container holding the CellList `self.{inner}` (or a slice or cells of it): it is interpreted, not compiled, and its items cannot be typed (Unsupported element type[unknown]); slice instead (`list(zip(...))[::-1]`, `self.{inner}[::-1]`)",
                )
                return
        if held is not None:
            yield ctx.diagnostic(
                self,
                node,
                f"`reversed(self.{held})` of a CellList is interpreted, not compiled, and its items cannot be typed (Unsupported element type[unknown]); iterate `self.{held}[::-1]`",
            )
            return
        mentioned = _cell_list_mentioned(arg, ctx)
        if mentioned is not None:
            yield ctx.diagnostic(
                self,
                node,
                f"`{ctx.segment(node)}` is interpreted, not compiled, and its script is given the CellList `self.{mentioned}` "
                f"(through `{ctx.segment(arg)}`), which it cannot type (Unsupported element type[unknown]); "
                f"take `n = len(self.{mentioned})` first and reverse `range(n)`, or iterate `self.{mentioned}[::-1]`",
            )


    def _interpreted_call(self, node: ast.Call, ctx: Context) -> Iterable[Diagnostic]:
        """`any(... for layer in self.layers)`, `functools.reduce(f, self.layers, x)`: a
        builtin the graph does not implement (or `functools.reduce`) is interpreted, and a
        CellList reaching it (itself, or through a generator expression over it) fails
        as `reversed(self.layers)` does (measured: `all`/`any` of a generator over the cells,
        `reduce` with a lambda and with a module-level function; `sum` of a generator, `list`,
        `zip` and `enumerate` are compiled and compile)."""
        name = _interpreted_name(node.func, ctx)
        if name is None:
            return
        for arg in node.args:
            held = _cell_list_attr(arg, ctx)
            looped = _cell_list_loop_target(arg, node, ctx) if held is None else None
            if looped is not None:
                target, attr = looped
                # measured (written/everyday `inherit_type_name_dispatch`, probe
                # `type_name_of_celllist_loop_var`): `type(layer).__name__` for `layer` in
                # `self.layers` fails at both levels with "name 'layer' is not defined";
                # `type(self.fc)` and `isinstance(layer, nn.LayerNorm)` compile
                yield ctx.diagnostic(
                    self,
                    node,
                    f"`{name}` is interpreted, not compiled, and cannot be given `{target}`, a cell of the CellList `self.{attr}` the loop unrolls (MindSpore: name '{target}' is not defined); use `isinstance`, or a flag set on the cell in `__init__`",
                )
                return
            # a generator hands the cells themselves to the interpreter; a list comprehension
            # is compiled first and passes its items (measured: `reduce(f, [h(x) for h in
            # self.heads])` compiles at LAX)
            if held is None and isinstance(arg, ast.GeneratorExp):
                held = next(
                    (h for g in arg.generators if (h := _cell_list_attr(g.iter, ctx)) is not None), None
                )
            if held is not None:
                yield ctx.diagnostic(
                    self,
                    node,
                    f"`{name}` is interpreted, not compiled, and the cells of the CellList `self.{held}` it is given cannot be typed (Unsupported element type[unknown]); loop over `self.{held}` instead",
                )
                return

    def _zip_with_reversed(self, node: ast.Call, ctx: Context) -> Iterable[Diagnostic]:
        """`zip(self.layers, reversed(skips))`: measured, the interpreted `reversed` object
        zipped with a CellList fails as `reversed(self.layers)` does."""
        rev = _zip_reversed_arg(node)
        if rev is None:
            return
        held = next((h for a in node.args if a is not rev and (h := _cell_list_slice(a, ctx)) is not None), None)
        if held is None:
            return
        yield ctx.diagnostic(
            self,
            node,
            f"`{ctx.segment(rev)}` zipped with the CellList `self.{held}` is interpreted, not compiled, and the items cannot be typed (Unsupported element type[unknown]); slice instead (`{ctx.segment(rev.args[0]) if rev.args else '...'}[::-1]`)",
        )

def _interpreted_name(f: ast.expr, ctx: Context) -> str | None:
    """`all`, `any`, `sorted`...: a builtin function the graph compiler does not implement,
    a builtin type its parser refuses to build (`type`, `dict`, `set`...), `functools.reduce`
    or an `itertools` function; None for the rest."""
    q = ctx.qualname(f)
    if q == "functools.reduce":
        return "functools.reduce"
    if q is not None and q.startswith("itertools."):
        return q  # `itertools.chain(self.stem, self.body)`: run by JIT Fallback
    if type(f) is not ast.Name or q not in (None, f"builtins.{f.id}", f.id):
        return None
    obj = getattr(builtins, f.id, None)
    if obj is None or f.id in calls_table.graph_builtins():
        return None
    if isinstance(obj, type) and f.id not in calls_table.refused_builtin_types():
        return None
    return f.id


def _loop_of(arg: ast.expr, node: ast.AST, ctx: Context) -> ast.For | None:
    """The `for` enclosing `node` whose target is the name `arg`."""
    if not isinstance(arg, ast.Name):
        return None
    p = ctx.parent(node)
    while p is not None and p is not ctx.function:
        if isinstance(p, ast.For) and isinstance(p.target, ast.Name) and p.target.id == arg.id:
            return p
        p = ctx.parent(p)
    return None


def _cell_list_loop_target(arg: ast.expr, node: ast.AST, ctx: Context) -> tuple[str, str] | None:
    """(`layer`, `layers`) when `arg` is the name `layer` bound by an enclosing `for layer in
    self.layers` over a CellList (the loop is unrolled and `layer` is a cell, not a graph value)."""
    loop = _loop_of(arg, node, ctx)
    attr = _cell_list_attr(loop.iter, ctx) if loop is not None else None
    if attr is None or not isinstance(arg, ast.Name):
        return None
    return arg.id, attr


#: builtins that wrap their arguments in a new Python container
_WRAPPERS = frozenset({"list", "tuple", "zip", "enumerate"})


def _zip_reversed_arg(call: ast.Call) -> ast.Call | None:
    for a in call.args:
        if isinstance(a, ast.Call) and isinstance(a.func, ast.Name) and a.func.id == "reversed":
            return a
    return None


def _holds_cell_list(e: ast.expr, ctx: Context, depth: int) -> str | None:
    """The CellList attribute `e` wraps: `self.layers` itself or a slice of it
    (`self.layers[:2]`, `self.layers[1:][:2]`), `list(self.layers)`, `zip(feats, self.layers[1:])`,
    `list(zip(...))`, a list or tuple display of those or of items of the CellList
    (`[self.layers[0], self.layers[2]]`), or a local bound once to one of those.
    Measured (written/heldout42b case `r2_fused_none_reversed_range_clean_start`, probes
    `fix42b_rz_*`): `reversed()` of each of these fails at both levels with Unsupported element
    type[unknown] (a local bound to one: "Cast-op0 does not support this kernel data type"), while
    a display of plain sub-cells (`reversed([self.fc1, self.fc2])`, zipped too) and containers of
    a SequentialCell's slice compile."""
    if depth > 3:
        return None
    held = _cell_list_slice(e, ctx)
    if held is not None:
        return held
    if isinstance(e, (ast.List, ast.Tuple)):
        for elt in e.elts:
            inner = _cell_list_item(elt, ctx) or _holds_cell_list(elt, ctx, depth + 1)
            if inner is not None:
                return inner
    elif isinstance(e, ast.Call) and isinstance(e.func, ast.Name) and e.func.id in _WRAPPERS and not e.keywords:
        for a in e.args:
            inner = _holds_cell_list(a, ctx, depth + 1)
            if inner is not None:
                return inner
    elif isinstance(e, ast.Name) and ctx.function is not None:
        bound = analyzer(ctx).single_assignment(e.id, ctx.function)
        if isinstance(bound, ast.Call):
            return _holds_cell_list(bound, ctx, depth + 1)
    return None


def _cell_list_slice(e: ast.expr, ctx: Context) -> str | None:
    """`attr` when `e` is the CellList `self.attr` or a slice of it, sliced any number of times
    (a slice of a CellList is a CellList)."""
    while isinstance(e, ast.Subscript) and isinstance(e.slice, ast.Slice):
        e = e.value
    return _cell_list_attr(e, ctx)


def _cell_list_item(e: ast.expr, ctx: Context) -> str | None:
    """`attr` when `e` is one cell of a CellList picked by an index (`self.layers[0]`, of a
    slice too)."""
    if isinstance(e, ast.Subscript) and not isinstance(e.slice, ast.Slice):
        return _cell_list_slice(e.value, ctx)
    return None


def _cell_list_attr(e: ast.expr, ctx: Context) -> str | None:
    """`attr` when `e` is `self.attr` and `__init__` builds it as an `nn.CellList`."""
    if not (isinstance(e, ast.Attribute) and isinstance(e.value, ast.Name) and e.value.id == "self"):
        return None
    cls = analyzer(ctx).owner_class(ctx.function)
    if cls is None:
        return None
    info = ctx.scopes.info.classes.get(cls.name)
    qual = info.attr_types.get(e.attr) if info is not None else None
    return e.attr if qual is not None and qual.rpartition(".")[2] == "CellList" else None


def _cell_list_mentioned(arg: ast.expr, ctx: Context) -> str | None:
    """The CellList attribute `self.layers` that the argument of `reversed` reads as a whole
    (`range(len(self.layers))`, `range(len(self.layers) - 1)`), not an item of it. MindSpore
    interprets `reversed(...)` as a script and hands it every graph value the argument
    reads: given the CellList it stops with "Unsupported element type[unknown]", whether
    or not the loop then indexes the cells. Measured on 2.10 (written/heldout37b probes
    `fix37d_rr_*`, case `r2_misc_reversed_range_index_clean`): `reversed(range(len(self.layers)))`
    is rejected at both levels even when the body never touches the cells; `reversed(range(self.n))`,
    `reversed(range(3))` and `n = len(self.layers)` before `reversed(range(n))` compile, with
    `self.layers[i]` picked in the body, alike or different cells; so does
    `range(len(self.layers) - 1, -1, -1)`, and `reversed(range(len(self.body)))` of a SequentialCell."""
    if type(arg) is not ast.Call:
        return None
    items = {id(n.value) for n in ast.walk(arg) if type(n) is ast.Subscript}
    for n in ast.walk(arg):
        if type(n) is ast.Attribute and id(n) not in items:
            held = _cell_list_attr(n, ctx)
            if held is not None:
                return held
    return None
