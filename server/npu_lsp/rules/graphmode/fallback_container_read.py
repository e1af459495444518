"""MS232: (LAX) a graph container read through a JIT Fallback value: a sub-cell picked from a
`CellList` / `CellDict` by one and called, or the `has_aux` dict of a gradient given one read as a dict."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.flow import analyzer
from npu_lsp.rules.graphmode.helpers import GraphRule
from npu_lsp.rules.graphmode.opaque_value_query import opaque_at_lax

#: what only a dict answers (measured on an aux dict: `.values()`)
_DICT_VIEWS = frozenset({"values", "items", "keys"})

#: the cell containers measured (`self.blocks = nn.CellList([...])`, `nn.CellDict({...})`)
_CONTAINERS = frozenset(
    {
        "mindspore.nn.CellList",
        "mindspore.nn.CellDict",
    }
)


@rule(code="MS232", name="fallback-container-read", severity="error", family="graphmode")
class FallbackContainerRead(GraphRule):
    """## What it does
    Under the default LAX syntax level, flags a call of a sub-cell picked from an
    `nn.CellList` or `nn.CellDict` on `self` by an index or key that is a JIT Fallback
    value: a number read from a tensor JIT Fallback made (`self.blocks[int(x.asnumpy().sum()
    > 0)](x)`), or from a tensor that went through a fallback value first (`x = x +
    len(str(x.mean())) * 0`, also in a sub-cell that returns it), or a name of a constant
    list picked by such a number (`self.heads[self.names[int(x.sum() > 0)]](x)`), a number
    stored on `self` in `construct` (`self.active_index = random.randint(0, 2)`, also a
    constant), or a `numpy.random` draw given a run-time value (`np.random.choice(3,
    p=probs.asnumpy())`). Also `zip()` of such a value with an `nn.CellList` on `self`
    (`for keep, blk in zip(mask.asnumpy().tolist(), self.blocks)`).
    Also the auxiliary dict of `(loss, aux), g = ms.value_and_grad(f, has_aux=True)(x)`
    (`f` returning `loss, {"out": ...}`) read by a str key or `.values()` / `.items()` /
    `.keys()` when `x` is such a JIT Fallback value.

    ## Why is this bad?
    MindSpore 2.10 hands such a pick to Python (the index is a Python object), gets the
    `Cell` back as a Python object and cannot run it: the call fails at run time with
    `RuntimeError: Unsupported element type[unknown] to set element data type for
    KernelTensor`. Without the fallback value the same pick behaves as in a graph: a
    `CellList` indexed by `int(x.sum() > 0)` or `(x.sum() > 0).item()` compiles, and a
    `CellDict` key read from a run-time tensor fails while compiling (MS121). STRICT has
    no JIT Fallback and rejects the fallback value itself. The `zip()` is run as Python
    too and the cells it hands out cannot be typed: `Default/Cast-op0 does not support this
    kernel data type`; a graph tensor or a list of `.item()`s zipped with the CellList, or
    the fallback list walked by `range`, compile.
    Given a JIT Fallback value, the gradient function does not hand its auxiliary dict
    back as a dict either: `aux["out"]` fails with `TypeError: tuple indices must be
    integers or slices, not str` and `aux.values()` with "'Tensor' object has no attribute
    'values'". With a graph `x` (also in a `for` or `while`), with the fallback made after
    the gradient, or with the dict not read, it compiles.

    ## Example
    ```python
    def construct(self, x):
        x = x + len(str(x.mean())) * 0
        return self.blocks[int(x.sum() > 0)](x)
    ```

    ## Use instead
    Keep the index in the graph (compute it from the tensor, not from a JIT Fallback
    value), or run every branch and select with a mask:
    ```python
    def construct(self, x):
        return self.blocks[int(x.sum() > 0)](x)
    ```

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 1 (JIT Fallback values in compiled code).
    - Measured on MindSpore 2.10 (written/lax probes `fix32e_cl_*`, `fix32e_cd_*`: a
      `CellList` index or `CellDict` key from `x.asnumpy()` or from `x` after `len(str(...))`
      fails at LAX with "Unsupported element type[unknown] ... KernelTensor"; `int(x.sum() >
      0)`, a local bound to it and `.item()` on a graph `x` compile for a `CellList`), and
      difftest seeds 12000023, 12000047; probes `fix32e_ad_*` and `gen6_ad_*`: the aux
      dict read by key or `.values()` after `x = Tensor(x.asnumpy())`, also in a `for`,
      fails, while unread, a graph `x`, or `float(bool((x > 0).any()))` added to `x`
      compile; difftest seeds 12000049, 12000124).
    - Written/heldout40c cases `proxyless_set_active_in_construct_random`,
      `proxyless_sample_numpy_choice_in_construct`, `gate_blockdrop_policy_tolist_in_construct`
      (and their `r2_` neighbours) and probes `fix40e_rnd_self_*`, `fix40e_rnd_np_*`,
      `fix40e_zip_*`: a random draw or a constant stored on `self` then picking a cell (also
      through a local), `np.random.choice(3, p=...asnumpy())` or `np.random.randint` of a
      run-time bound picking one, and `zip(mask.asnumpy().tolist(), self.blocks)` fail at
      LAX; a draw left unread or scaling a tensor, a constant `p`, and the mask zipped with a
      list of floats compile.
    """

    nodes = (ast.Call, ast.Subscript)
    callee = (ast.Subscript, ast.Attribute, ast.Name)
    words = ("CellList", "CellDict", "has_aux")

    def wants_call(self, callee: type[ast.AST], called: str, receiver: str) -> bool:
        # `check`'s first test, once per callee shape: a method call only of a dict view
        # (`aux.values()`), a name only `zip`; most calls of compiled code are of others
        if callee is ast.Name:
            return called == "zip"
        return callee is not ast.Attribute or called in _DICT_VIEWS

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        if type(node) is ast.Subscript:
            key = node.slice
            if type(key) is ast.Constant and type(key.value) is str and isinstance(node.ctx, ast.Load):
                return self._aux_read(node, node.value, ctx)
            return ()
        assert type(node) is ast.Call
        f = node.func
        if type(f) is ast.Attribute:
            return self._aux_read(node, f.value, ctx) if f.attr in _DICT_VIEWS else ()
        if type(f) is ast.Name:
            return self._zipped_cells(node, ctx)
        return self._picked_cell(node, ctx)

    def _zipped_cells(self, node: ast.Call, ctx: Context) -> Iterable[Diagnostic]:
        """`zip(v, self.blocks)` of a JIT Fallback value `v` and a `CellList` on `self`:
        LAX runs the zip as Python, and the cells it hands out cannot be typed (measured,
        written/heldout40c cases `gate_blockdrop_policy_tolist_in_construct`,
        `r2_gate_policy_int_tolist_zip` and probes `fix40e_zip_*`: `(p > 0.5).asnumpy()`,
        `.tolist()` of it or of the tensor, zipped with a CellList, fail with "Default/Cast-op0
        does not support this kernel data type", also with no `if` on the item; a graph
        tensor or a list of `.item()`s zipped with it, or the fallback list zipped with a list
        of floats or walked by `range`, compile)."""
        if ctx.qualname(node.func) != "builtins.zip" or not ctx.scope or ctx.scope.level != "lax":
            return
        held = next(
            (
                a
                for a in node.args
                if type(a) is ast.Attribute
                and type(a.value) is ast.Name
                and a.value.id == "self"
                and _cell_container(a, ctx, _CELL_LISTS)
            ),
            None,
        )
        if held is None:
            return
        given = next(
            (a for a in node.args if a is not held and not isinstance(a, ast.Starred) and opaque_at_lax(a, ctx.function, ctx)),
            None,
        )
        if given is None:
            return
        yield ctx.diagnostic(
            self,
            node,
            f"`{ctx.segment(given)}` is a JIT Fallback value: under LAX Python runs the `zip()` with `{ctx.segment(held)}`, and the cells it hands out cannot be typed (MindSpore: Default/Cast-op0 does not support this kernel data type); keep the mask a graph tensor and index the cells by `range`",
        )

    def _aux_read(self, node: ast.expr, holder: ast.expr, ctx: Context) -> Iterable[Diagnostic]:
        """`aux["out"]` (or `aux.values()`) of `(loss, aux), g = ms.value_and_grad(f,
        has_aux=True)(x)` with `x` a JIT Fallback value: the gradient runs on the Python
        object and the dict does not come back as a dict (measured: by key "tuple indices
        must be integers or slices, not str", `.values()` "'Tensor' object has no attribute
        'values'")."""
        if type(holder) is not ast.Name:
            return
        fn = ctx.function
        if fn is None or not ctx.scope or ctx.scope.level != "lax":
            return
        call = _aux_dict_source(holder, ctx)
        given = next((x for x in call.args if opaque_at_lax(x, fn, ctx)), None) if call is not None else None
        if given is None:
            return
        yield ctx.diagnostic(
            self,
            node,
            f"`{holder.id}` is the dict a `has_aux` function returns, but the gradient is given `{ctx.segment(given)}`, a JIT Fallback value: under LAX the dict does not come back as a dict and `{ctx.segment(node)}` fails (by key: \"tuple indices must be integers or slices, not str\"); give the gradient a graph tensor, or return the auxiliary outputs as a tuple",
        )

    def _picked_cell(self, node: ast.Call, ctx: Context) -> Iterable[Diagnostic]:
        pick = node.func
        assert isinstance(pick, ast.Subscript)
        holder = pick.value
        if type(holder) is not ast.Attribute or type(holder.value) is not ast.Name or holder.value.id != "self":
            return
        if type(pick.slice) in (ast.Constant, ast.Slice) or not ctx.scope or ctx.scope.level != "lax":
            return
        if not _cell_container(holder, ctx) or not opaque_at_lax(pick.slice, ctx.function, ctx):
            return
        yield ctx.diagnostic(
            self,
            pick.slice,
            f"`{ctx.segment(pick.slice)}` is a JIT Fallback value: under LAX Python picks the sub-cell from `self.{holder.attr}` and MindSpore cannot call the Python object it gets back (\"Unsupported element type[unknown] to set element data type for KernelTensor\"); compute the index from a graph tensor, not from a JIT Fallback value",
        )


def _aux_dict_source(holder: ast.Name, ctx: Context) -> ast.Call | None:
    """The gradient call (`ms.value_and_grad(f, has_aux=True)(x)`) whose output `holder`
    is bound to (unpacked from) where that part of the output is the dict `f` returns."""
    from npu_lsp.rules.graphmode.dict_output_strict import grad_output_part

    fn = ctx.function
    a = analyzer(ctx)
    if () not in grad_output_part(holder, fn, a, ctx, 0):  # type: ignore[arg-type]
        return None
    bound = a.single_assignment(holder.id, fn)
    if isinstance(bound, ast.Call):
        return bound
    unpacked = a.single_unpacking(holder.id, fn)
    return unpacked[0] if unpacked is not None else None


#: the one container measured in a `zip()` with a JIT Fallback value
_CELL_LISTS = frozenset({"mindspore.nn.CellList"})


def _cell_container(holder: ast.Attribute, ctx: Context, kinds: frozenset[str] = _CONTAINERS) -> bool:
    """Is `self.<attr>` bound in `__init__` only to one of `kinds` (`nn.CellList(...)` /
    `nn.CellDict(...)`)?"""
    a = analyzer(ctx)
    cls = a.owner_class(ctx.function)
    if cls is None:
        return False
    values = a.self_values(cls).get(holder.attr, [])
    return bool(values) and all(
        isinstance(v, ast.Call) and ctx.qualname(v.func) in kinds for v in values
    )
