"""MS235: a subscript store with the empty-tuple index on a 0-d tensor (`self.ptr[()] = v`)."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.helpers import GraphRule
from npu_lsp.rules.graphmode.ranks import Ranks, ranks


@rule(code="MS235", name="zero-dim-setitem", severity="error", family="graphmode")
class ZeroDimSetitem(GraphRule):
    """## What it does
    Flags `x[()] = v` (also `x[()] += v`) in compiled code when `x` is a tensor of rank 0:
    a 0-d Parameter held on `self` (the MoCo queue pointer `self.queue_ptr =
    Parameter(Tensor(0, ms.int32))`), or a local 0-d tensor.

    ## Why is this bad?
    MindSpore compiles the empty-tuple index store into a scatter whose input must have
    between one and eight dimensions; on a 0-d tensor compiling stops at every syntax level
    with `The input data's dim must in the range of [1, 8], but got 0`. PyNative runs it.
    `x[...] = v` and `ops.assign(x, v)` compile, as does `[()]` on a tensor of rank 1 or
    more, and reading `x[()]`.

    ## Example
    ```python
    def construct(self, keys):
        ptr = int(self.queue_ptr)
        ...
        self.queue_ptr[()] = (ptr + keys.shape[0]) % self.K
        return keys
    ```

    ## Use instead
    ```python
        ops.assign(self.queue_ptr, ms.Tensor((ptr + keys.shape[0]) % self.K, ms.int32))
    ```
    or `self.queue_ptr[...] = ...`.

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 1 (rejected at every level).
    - Measured on MindSpore 2.10 CPU with the written set `heldout34b`
      (`moco_queue_slice_assign_ptr_int`, `r2_queue_ptr_zero_dim_setitem_empty_tuple_only`)
      and its probes `fix34d_zd_*`, `fix34d_od_*`, `fix35a_zd_*`.
    """

    nodes = (ast.Assign, ast.AugAssign)

    def wants_assign(self, target: type[ast.AST] | None, value: type[ast.AST]) -> bool:
        return target is ast.Subscript

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        assert isinstance(node, (ast.Assign, ast.AugAssign))
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        func = ctx.function
        if func is None or ctx.scope is None or len(targets) != 1:
            return
        target = targets[0]
        # the cheap test first: the index is a tuple of Ellipses at most
        if not isinstance(target, ast.Subscript) or not _tuple_index(target.slice, func):
            return
        if not _zero_dim(target.value, func, ctx):
            return
        yield ctx.diagnostic(
            self,
            node,
            f"`{ctx.segment(target.value)}` is a 0-d tensor: MindSpore compiles the store `[{ctx.segment(target.slice)}] = ...` into a scatter that needs 1 to 8 dimensions ('The input data's dim must in the range of [1, 8], but got 0'); use `ops.assign({ctx.segment(target.value)}, ...)` or `[...]`",
        )


def _zero_dim(e: ast.expr, func: ast.AST, ctx: Context) -> bool:
    """Is `e` surely a tensor of rank 0 in every call context of `func`? A tensor `__init__`
    stores once on `self` with shape `()` (`Parameter(Tensor(0, ms.int32))`), or a local name
    of shape `()` whose bindings make no arithmetic (the shapes model takes an operand of
    unknown shape to broadcast into the known one: `x.sum() + self.b` may be wider) unless
    reduced whole (`(x * w).sum()`), or a parameter of the compiled entry itself (the
    tensor Python passes)."""
    model = ranks(ctx)
    if type(e) is ast.Attribute and type(e.value) is ast.Name and e.value.id == "self":
        return model.held_tensor(e.attr, func) == ()
    if type(e) is not ast.Name:
        return False
    if not _bindings(e.id, func) and _module_parameter(e.id, ctx, model):
        return True
    got = model.value_at(e, func)
    if not got or any(v != () for v in got):
        return False
    bound = _bindings(e.id, func)
    if not bound:
        scope = ctx.scope
        return scope is not None and scope.function is func and scope.kind in ("construct", "jit")
    return all(v is not None and (_whole_reduction(v) or not any(type(n) is ast.BinOp for n in ast.walk(v))) for v in bound)


def _module_parameter(name: str, ctx: Context, model: Ranks) -> bool:
    """Is `name` bound once at module level to a 0-d `Parameter(...)` (`ptr =
    Parameter(Tensor(0, ms.int32))`)?"""
    found = model.host.only_binding(name, ctx.tree)
    if found is None or type(found[0]) is not ast.Call:
        return False
    call = found[0]
    return ctx.qualname(call.func) == "mindspore.Parameter" and model.host.of(call, ctx.tree) == ()


def _bindings(name: str, func: ast.AST) -> list[ast.expr | None]:
    """The values `name` is bound to in `func` (None for a binding that is not `name = v`)."""
    out: list[ast.expr | None] = []
    stores = 0
    for n in ast.walk(func):
        if type(n) is ast.Assign and len(n.targets) == 1 and type(n.targets[0]) is ast.Name and n.targets[0].id == name:
            out.append(n.value)
        elif type(n) is ast.Name and n.id == name and type(n.ctx) is ast.Store:
            stores += 1
    # a store that is no `name = v` (a loop target, a tuple unpacked, `+=`): not known
    return out if stores == len(out) else [*out, None]


def _whole_reduction(v: ast.expr) -> bool:
    """`t.sum()` / `t.mean()` / ... with no argument: a 0-d tensor whatever `t` is."""
    return type(v) is ast.Call and type(v.func) is ast.Attribute and v.func.attr in _WHOLE and not v.args and not v.keywords


_WHOLE = frozenset({"sum", "mean", "max", "min", "prod", "all", "any"})


def _tuple_index(e: ast.expr, func: ast.AST) -> bool:
    """Is the index a tuple holding nothing but `...`: `()`, `tuple()`, `(...,)`, or a local
    name bound only to one (`idx = ()`)? Measured (written/heldout34b probes `fix35a_zd_*`):
    these fail on a 0-d tensor; a bare `...`, `None` and `True` compile."""
    if type(e) is ast.Name:
        bound = _bindings(e.id, func)
        return len(bound) == 1 and bound[0] is not None and type(bound[0]) is not ast.Name and _tuple_index(bound[0], func)
    if type(e) is ast.Tuple:
        return all(type(x) is ast.Constant and x.value is Ellipsis for x in e.elts)
    return type(e) is ast.Call and type(e.func) is ast.Name and e.func.id == "tuple" and not e.args and not e.keywords
