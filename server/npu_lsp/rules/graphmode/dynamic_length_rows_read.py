"""MS243: a comprehension over the rows of a tensor of run-time length, read as a whole."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.flow import Kind, analyzer
from npu_lsp.rules.graphmode.helpers import GraphRule
from npu_lsp.rules.graphmode.list_grown_in_tensor_loop import (
    computed_length_rows,
    dynamic_length_rows,
    iterated_declared_dynamic,
)
from npu_lsp.rules.graphmode.ranks import run_time_sizes

# Every consumer below was measured on MindSpore 2.10 (CPU, LAX and STRICT): written/lax
# probes `genfresh34_dy_comp_*` and `fix35b_dy_comp_*`. What both levels refuse:
#: the builtins refusing the whole sequence at both levels ("The pointer[seq_abs] is null";
#: `max` / `min` of tensors: "When the input to max() is dynamic length sequence, only
#: support scalar type input")
_BOTH_LEVELS = frozenset({"sum", "max", "min"})  # dy_comp_sum, fix35b_dy_comp_max / comp_min
#: what LAX alone refuses ("The pointer[seq_abs] is null"); STRICT compiles it
_LAX_ONLY = frozenset({"len"})  # dy_comp_len, fix35b_dy_comp_return_len / comp_derived_len


@rule(code="MS243", name="dynamic-length-rows-read", severity="error", family="graphmode")
class DynamicLengthRowsRead(GraphRule):
    """## What it does
    Flags a list comprehension over the rows of a tensor whose shape is known only at run
    time, read as a whole. Over a `construct` input `set_inputs` declares with a `None`
    dimension (`[r * 2 for r in x]` under `net.set_inputs(Tensor(shape=[None, 3], ...))`,
    any dimension; also a tensor computed from such an input that keeps it, `enumerate` of
    one, or a helper's `return [... for r in t]` given one): given to `sum` (also a
    generator expression), to `max` / `min` when its items are tensors, or indexed at `[1]`
    or beyond, at every syntax level; under LAX also given to `len`, iterated by a `for`,
    or indexed from the end (`rows[-1]`). `zip` given such a tensor, at every level. Over
    the result of a dynamic-shape operation (`v = ops.masked_select(x, x > 0)`), given to
    `len` or `sum`, at every level. A slice `x[:n]` of an `ms.mutable(2)` the entry call
    gives (an `@ms.jit` function, `ms.jit(net.construct)`) is such a tensor too, and so is
    what keeps its first dimension; over it `rows[-1]` compiles.

    ## Why is this bad?
    MindSpore 2.10 cannot unroll a comprehension over rows it cannot count while compiling,
    so the comprehension becomes a sequence of dynamic length, which few operations take:
    `sum` stops with the framework error `RuntimeError: The pointer[seq_abs] is null`,
    `max` of tensors with "When the input to max() is dynamic length sequence, only support
    scalar type input", `rows[1]` with "index 1 is out of bounds for dimension with size 1"
    and `zip` with "For 'zip', the dynamic length input is unsupported in graph mode".
    Under LAX `len` and a `for` over it fail with the same `seq_abs` error and `rows[-1]`
    with "list index out of range" (STRICT compiles those three). Returned by the network
    (its root `construct`), alone or in a tuple, it fails at every level when its item calls
    something or indexes (`[r.sum() for r in x]`, `[ops.relu(r) * 2 for r in x]`, `[r[0]
    for r in x]`: "For 'StridedSlice', the 'strides[0]' cannot be negative number"; `tuple`
    of such a generator: "The pointer[seq_abs] is null"); returning `[r * 2 for r in x]`
    or indexing it at `[0]` compiles; `ops.stack` of it is MS152's.
    `ops.concat` / `ops.cat` / `mint.cat` (or a held `ops.Concat`) of it fails under LAX
    ("Tuple to TupleUnfold pattern should have TupleGetItem as user node") and compiles
    under STRICT, except over `enumerate(x)` or a tensor computed from the input, or
    through `tuple(...)`, which fail at both levels.

    ## Example
    ```python
    def construct(self, x):      # net.set_inputs(Tensor(shape=[None, 3], ...))
        return x + sum([r.sum() for r in x])
    ```

    ## Use instead
    Reduce the tensor itself (`x.sum()`, `x.max(axis=1)`, `x.shape[0]`, `x[-1]`), or
    declare the size in `set_inputs` when it is fixed.

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 3 (what a graph can unroll while compiling).
    - Measured on MindSpore 2.10 (CPU), LAX and STRICT: written/lax probes
      `genfresh34_dy_comp_*` and `fix35b_dy_comp_*`, `fix35b_dy_col_*` (a declared `[2, 3]`
      compiles; so do `rows[0]` and a comprehension of arithmetic returned); returned
      comprehensions: `genfresh39_si_ret_*`, `genfresh39_si_return_*`; over `x[:n]` of an
      `ms.mutable` int: `genfresh42_sl_*` (a plain `2` compiles); concatenation:
      `fix35b_dy_comp_concat`, `fix36b_cc_*`.
    """

    nodes = (ast.Call, ast.Subscript, ast.For, ast.Return)
    calls = frozenset({"sum", "max", "min", "len", "zip", "concat", "cat"})

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        if ctx.function is None or ctx.scope is None:
            return ()
        t = type(node)
        if t is ast.Call:
            return self._call(node, ctx)  # type: ignore[arg-type]
        if not run_time_sizes(ctx):
            return ()  # (a `for` or an index reads only a comprehension over a declared input's rows)
        lax = not ctx.scope.strict
        if t is ast.For and lax and _rows_of(node.iter, ctx) is not None:  # type: ignore[attr-defined]
            return [ctx.diagnostic(self, node.iter, _message("a `for` over it", "The pointer[seq_abs] is null", lax_only=True))]  # type: ignore[attr-defined]
        if t is ast.Subscript and type(node.ctx) is ast.Load:  # type: ignore[attr-defined]
            return self._indexed(node, lax, ctx)  # type: ignore[arg-type]
        if t is ast.Return and node.value is not None:  # type: ignore[attr-defined]
            return self._returned(node.value, ctx)  # type: ignore[attr-defined]
        return ()

    def _returned(self, value: ast.expr, ctx: Context) -> Iterable[Diagnostic]:
        """Such a list comprehension returned by the network's root `construct` (alone or in a
        returned tuple; also `tuple(...)` of such a generator) whose item calls something or
        indexes (`[r.sum() for r in x]`, `[ops.relu(r) * 2 for r in x]`, `[r[0] for r in x]`):
        measured at both levels, written/lax probes `genfresh39_si_ret_*`,
        `genfresh39_si_return_*` ("For 'StridedSlice', the 'strides[0]' cannot be negative
        number and 'begin[0]' must be in [-0, 0)"; `tuple(...)`: "The pointer[seq_abs] is
        null"); arithmetic alone on the row (`[r * 2 for r in x]`, `[r + 1 for r in x]`,
        `[-r for r in x]`) compiles. Only the root's return is flagged: a sub-cell returning
        it to the root that returns it fails too (probe `genfresh39_si_ret_comp_subcell`),
        but what else a caller does with it is not measured."""
        scope = ctx.scope
        if scope is None or scope.kind not in ("construct", "jit") or scope.function is not ctx.function or getattr(scope, "call_sites", None):
            return ()
        out = []
        for item in value.elts if type(value) is ast.Tuple else [value]:
            copied = type(item) is ast.Call and type(item.func) is ast.Name and item.func.id in ("tuple", "list") and len(item.args) == 1
            comp = _rows_of(item.args[0] if copied else item, ctx)  # type: ignore[attr-defined]
            if comp is not None and (type(comp) is ast.ListComp or copied) and _reads_row(comp.elt):
                out.append(
                    ctx.diagnostic(
                        self,
                        item,
                        _message(
                            f"returning it from the network with items `{ctx.segment(comp.elt)}`",
                            "The pointer[seq_abs] is null" if copied else "For 'StridedSlice', the 'strides[0]' cannot be negative number",
                            lax_only=False,
                        ),
                    )
                )
        return out

    def _indexed(self, node: ast.Subscript, lax: bool, ctx: Context) -> Iterable[Diagnostic]:
        """`rows[1]` at every level ("index 1 is out of bounds for dimension with size 1"),
        `rows[-1]` under LAX ("list index out of range"); `rows[0]` compiles (written/lax
        probes `fix35b_dy_comp_idx1`, `comp_idx_neg`, `genfresh34_dy_comp_cat`)."""
        i = _int_index(node.slice)
        if i is None or i == 0 or (i < 0 and not lax):
            return ()
        if i < 0 and ctx.mentions("mutable"):
            # over `x[:n]` of an `ms.mutable` int, `rows[-1]` compiles (written/lax probe
            # `genfresh42_sl_jit_idxneg_comp`); only a `set_inputs` dimension was measured to fail
            return ()
        if type(node.value) is not ast.Name or _rows_of(node.value, ctx) is None:
            return ()
        said = "list index out of range" if i < 0 else f"index {i} is out of bounds for dimension with size 1"
        return [ctx.diagnostic(self, node, _message(f"`{ctx.segment(node)}`", said, lax_only=i < 0))]

    def _call(self, node: ast.Call, ctx: Context) -> Iterable[Diagnostic]:
        f = node.func
        if type(f) is ast.Attribute and f.attr in ("concat", "cat"):
            return self._concat(node, ctx)
        if type(f) is not ast.Name or not node.args or node.keywords:
            return ()
        name = f.id
        if name == "zip":
            return self._zip(node, ctx)
        if len(node.args) != 1 or not (name in _BOTH_LEVELS or name in _LAX_ONLY):
            return ()
        if ctx.qualname(f) != "builtins." + name:
            return ()
        if name in _LAX_ONLY and ctx.scope is not None and ctx.scope.strict:
            if computed_length_rows(node.args[0], ctx) is not None:
                return [ctx.diagnostic(self, node, _computed_message(name))]
            return ()
        comp = _rows_of(node.args[0], ctx)
        if comp is None:
            if name in ("len", "sum") and computed_length_rows(node.args[0], ctx) is not None:
                # over a dynamic-shape operator's result: at both levels
                return [ctx.diagnostic(self, node, _computed_message(name))]
            return ()
        if name in ("max", "min"):
            if analyzer(ctx).kind(comp.elt) != Kind.TENSOR:
                return ()  # (measured with tensor items only)
            said = f"When the input to {name}() is dynamic length sequence, only support scalar type input"
        else:
            said = "The pointer[seq_abs] is null"
        return [ctx.diagnostic(self, node, _message(f"`{name}` of it", said, lax_only=name in _LAX_ONLY))]

    def _concat(self, node: ast.Call, ctx: Context) -> Iterable[Diagnostic]:
        """`ops.concat(rows)` / `ops.cat` / `mint.cat` / a held `ops.Concat(...)` of such a
        comprehension (measured, written/lax probes `fix35b_dy_comp_concat`,
        `fix36b_cc_*`): under LAX it fails ("Tuple to TupleUnfold pattern should have
        TupleGetItem as user node, but got Default/Concat"), and STRICT compiles it, unless
        the comprehension runs over `enumerate(x)` or over a tensor computed from the input,
        or is given through `tuple(...)`: those fail at both levels."""
        if len(node.args) < 1 or not ctx.mentions("set_inputs") or not _concatenates(node.func, ctx):
            return ()
        arg = node.args[0]
        wrapped = type(arg) is ast.Call and ctx.qualname(arg.func) == "builtins.tuple" and len(arg.args) == 1
        comp = _rows_of(arg.args[0] if wrapped else arg, ctx)  # type: ignore[attr-defined]
        if comp is None:
            return ()
        assert ctx.scope is not None
        both = wrapped or not _over_input_itself(comp, ctx)
        if ctx.scope.strict and not both:
            return ()
        said = (
            "Tuple to TupleUnfold pattern should have TupleGetItem as user node"
            if not both
            else "The pointer[seq_abs] is null, or a RealTupleGetItem / StridedSlice kernel error"
        )
        return [ctx.diagnostic(self, node, _message(f"`{ctx.segment(node.func)}` of it", said, lax_only=not both))]

    def _zip(self, node: ast.Call, ctx: Context) -> Iterable[Diagnostic]:
        if ctx.qualname(node.func) != "builtins.zip":
            return ()
        for a in node.args:
            if iterated_declared_dynamic(a, ctx, comprehension=True):
                return [
                    ctx.diagnostic(
                        self,
                        node,
                        f"`{ctx.segment(a)}` is a tensor whose shape is known only at run time (`set_inputs` declares a dimension `None`, or `x[:n]` of an `ms.mutable` int): MindSpore 2.10 cannot zip a sequence of dynamic length (\"For 'zip', the dynamic length input is unsupported in graph mode\"); index the rows with `range` of a fixed size or compute on the tensors themselves",
                    )
                ]
        return ()


#: the concatenations measured on such a comprehension (probes `fix36b_cc_*`)
_CONCATS = frozenset({"mindspore.ops.concat", "mindspore.ops.cat", "mindspore.mint.cat"})


def _concatenates(f: ast.expr, ctx: Context) -> bool:
    """`ops.concat` / `ops.cat` / `mint.cat`, or `self.<attr>` that `__init__` binds only to
    `ops.Concat(...)`."""
    if ctx.qualname(f) in _CONCATS:
        return True
    if not (type(f) is ast.Attribute and type(f.value) is ast.Name and f.value.id == "self"):
        return False
    a = analyzer(ctx)
    cls = a.owner_class(ctx.function)
    held = a.self_values(cls).get(f.attr, []) if cls is not None else []
    return len(held) == 1 and type(held[0]) is ast.Call and ctx.qualname(held[0].func) == "mindspore.ops.Concat"


def _over_input_itself(comp: ast.ListComp | ast.GeneratorExp, ctx: Context) -> bool:
    """Does the comprehension run over a parameter of the function it sits in, never bound
    again there (`[r.reshape(1, 3) for r in x]` in `construct`)?"""
    it = comp.generators[0].iter
    func = ctx.function
    if type(it) is not ast.Name or not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    params = {p.arg for p in (*func.args.posonlyargs, *func.args.args)}
    return it.id in params and analyzer(ctx).first_binding_line(it.id, func) is None


def _rows_of(e: ast.expr, ctx: Context) -> ast.ListComp | ast.GeneratorExp | None:
    """The comprehension `e` is (inline, or a name bound once to one) when it runs over the
    rows of a tensor of run-time length."""
    return dynamic_length_rows(e, ctx)


def _reads_row(elt: ast.expr) -> bool:
    """Does a comprehension's item call something or index (`r.sum()`, `ops.relu(r) * 2`,
    `r[0]`)? Measured returned from the root (written/lax probes `genfresh39_si_ret_*`):
    those fail, arithmetic alone on the row (`r * 2`, `r + 1`, `-r`) compiles."""
    return any(type(n) is ast.Call or type(n) is ast.Subscript for n in ast.walk(elt))


def _int_index(e: ast.expr) -> int | None:
    """`1`, `-1`: an int written in the source."""
    if type(e) is ast.UnaryOp and type(e.op) is ast.USub and type(e.operand) is ast.Constant:
        v = e.operand.value
        return -v if type(v) is int else None
    if type(e) is ast.Constant and type(e.value) is int:
        return e.value
    return None


def _computed_message(name: str) -> str:
    return (
        "this list comprehension runs over the rows of a tensor a dynamic-shape operation made (`masked_select`, `nonzero`...), whose length is known only at run time:"
        f" MindSpore 2.10 cannot measure or fold it while compiling, and `{name}` of it fails (\"The pointer[seq_abs] is null\"); compute on the tensor itself (`v.shape[0]`, `v.sum()`)"
    )


def _message(how: str, said: str, lax_only: bool) -> str:
    level = "under LAX " if lax_only else ""
    return (
        f"this list comprehension runs over the rows of a tensor whose shape is known only at run time (`set_inputs` declares a dimension `None`,"
        f" or `x[:n]` of an `ms.mutable` int): MindSpore 2.10 makes it a sequence of dynamic length, and {how} fails {level}(\"{said}\");"
        " compute on the tensor itself (`x.sum()`, `x.shape[0]`, `x[-1]`) or give the size as a constant"
    )
