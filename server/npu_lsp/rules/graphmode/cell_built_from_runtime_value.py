"""MS183: an `nn` Cell created in compiled code from a value known only at run time."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.flow import Kind, analyzer
from npu_lsp.rules.graphmode.helpers import GraphRule


@rule(code="MS183", name="cell-built-from-runtime-value", severity="error", family="graphmode")
class CellBuiltFromRuntimeValue(GraphRule):
    """## What it does
    Flags the creation of a built-in `mindspore.nn` Cell inside compiled code (`construct`, a
    method it calls, an `@ms.jit` function) when an argument is computed from a tensor:
    `nn.AvgPool1d(kernel_size=int(k))`, `nn.Dropout(p=rate.item())`,
    `nn.LeakyReLU(alpha=float(scale))`, or a tensor itself; also a list of cells given to
    a container Cell there (`nn.SequentialCell([self.a, self.b])`, `nn.CellList([nn.ReLU()])`,
    a local or `self` list of cells): measured, "input 0 is a variable, which is
    AbstractList{...}" at both levels (the cells given one by one compile).

    ## Why is this bad?
    MindSpore builds the Cell while compiling, so every constructor argument must be a
    constant. A Python number taken from a tensor (`int(t)`, `float(t)`, `t.item()`) is a
    run-time value in the graph, and compiling stops at every syntax level with `TypeError:
    When creating an instance of 'AvgPool1d', all arguments are required to be constants,
    but input 0 is a variable`. Constants, attributes set in `__init__` (`self.k`) and
    shapes (`x.shape[-1] // 2`) compile.

    ## Example
    ```python
    class Decomp(nn.Cell):
        def construct(self, x, kernel):
            pool = nn.AvgPool1d(kernel_size=int(kernel), stride=1)
            return pool(x)
    ```

    ## Use instead
    Build the Cell in `__init__` from a Python number:
    ```python
    class Decomp(nn.Cell):
        def __init__(self, kernel):
            super().__init__()
            self.pool = nn.AvgPool1d(kernel_size=kernel, stride=1)

        def construct(self, x):
            return self.pool(x)
    ```

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 1 (rejected at every level).
    - Measured on MindSpore 2.10 with the written set `domains`
      (`ts_dlinear_conv_kernel_from_tensor`) and its probes: `nn.AvgPool1d` from `int(k)`,
      `nn.Dropout` from `k.item()`, `nn.LeakyReLU` from `float(t)` and `nn.MaxPool1d` built in
      a helper method from `int(k.item())` are rejected at LAX and STRICT; built from a
      constant, from `self.k` or from `x.shape[-1] // 2` they compile. Primitives are not
      flagged: `ops.TopK(sorted=bool(k > 0))` is rejected but `ops.Softmax(int(axis))` and
      `ops.ReduceSum(keep_dims=bool(flag))` compile.
    - Measured on MindSpore 2.10 with the `written/zoo` probes (`gumbel_*`, `normal_*`): a
      distribution Cell built in a helper of `construct` from `Tensor(0.0, dtype=x.dtype)` /
      `Tensor(1.0, ms.float32)` compiles at both levels (a tensor made from constants is a
      constant while compiling); from `x.mean()` or `Tensor(x.max(), ...)` it is rejected.
    """

    nodes = (ast.Call,)

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        # a list or `()`, not a generator: every call of compiled code comes here
        assert isinstance(node, ast.Call)
        if not node.args and not node.keywords:
            return ()
        q = ctx.qualname(node.func) or ""
        if not q.startswith("mindspore.nn.") or not q.rsplit(".", 1)[-1][:1].isupper():
            return ()
        a = analyzer(ctx)
        for arg in [*node.args, *(k.value for k in node.keywords)]:
            if _list_of_cells(arg, ctx):
                # measured (written/apisurface probes `av_seq_*`, `av_celllist_*`):
                # `nn.SequentialCell([self.a, self.b])`, `nn.CellList([nn.ReLU()])`, a local
                # or `self` list of cells given as the argument fail at both levels ("input 0
                # is a variable, which is AbstractList{... FuncGraph}"); the cells given one
                # by one (`nn.SequentialCell(nn.ReLU(), nn.Tanh())`) compile
                return [
                    ctx.diagnostic(
                        self,
                        node,
                        f"`{q.rsplit('.', 1)[-1]}` is built while compiling and needs constant arguments, but the list of cells `{ctx.segment(arg)}` is a graph variable there; build it in `__init__`",
                    )
                ]
            if a.kind(arg).dynamic and not _constant_tensor(arg, ctx):
                return [
                    ctx.diagnostic(
                        self,
                        node,
                        f"`{q.rsplit('.', 1)[-1]}` is built while compiling and needs constant arguments, but `{ctx.segment(arg)}` is known only at run time; build it in `__init__`",
                    )
                ]
        return ()

    def wants_call(self, callee: type[ast.AST], called: str, receiver: str) -> bool:
        # `check`'s name test: a class of `mindspore.nn` (its resolved name, whose last part
        # is the called name, starts with a capital)
        return (callee is ast.Name or callee is ast.Attribute) and called[:1].isupper()


_TENSOR_CLASS = frozenset({"mindspore.Tensor", "mindspore.common.tensor.Tensor", "mindspore.common.Tensor"})


def _constant_tensor(arg: ast.expr, ctx: Context) -> bool:
    """`Tensor(0.0, dtype=x.dtype)` (directly, or through a local bound once to it): a tensor
    made from constants, which MindSpore builds while compiling, so a Cell may take it."""
    a = analyzer(ctx)
    e: ast.expr | None = arg
    if isinstance(e, ast.Name):
        e = a.single_assignment(e.id, ctx.function)
    if not isinstance(e, ast.Call) or not e.args or ctx.qualname(e.func) not in _TENSOR_CLASS:
        return False
    return all(a.kind(x) == Kind.CONST for x in [*e.args, *(k.value for k in e.keywords)])


def _is_cell(e: ast.expr, ctx: Context) -> bool:
    """A new instance of a Cell class (`nn.ReLU()`) or a sub-cell (`self.act`)."""
    if isinstance(e, ast.Call):
        q = ctx.qualname(e.func)
        return q is not None and ctx.scopes.is_cell_class(q)
    if isinstance(e, ast.Attribute) and isinstance(e.value, ast.Name) and e.value.id == "self" and ctx.function is not None:
        cls = analyzer(ctx).owner_class(ctx.function)
        if cls is None:
            return False
        made = ctx.scopes.attribute_class(f"{ctx.scopes.info.module}.{cls.name}", e.attr)
        return made is not None and ctx.scopes.is_cell_class(made)
    return False


def _list_of_cells(arg: ast.expr, ctx: Context) -> bool:
    """A list display of Cells, given directly, through a local bound once to one, or as a
    `self` attribute `__init__` binds to one."""
    e: ast.expr | None = arg
    if isinstance(e, ast.Name):
        e = analyzer(ctx).single_assignment(e.id, ctx.function)
    elif isinstance(e, ast.Attribute) and isinstance(e.value, ast.Name) and e.value.id == "self" and ctx.function is not None:
        a = analyzer(ctx)
        cls = a.owner_class(ctx.function)
        values = a._self_values(cls).get(e.attr, []) if cls is not None else []
        if len(values) != 1 or not isinstance(values[0], ast.List):
            return False
        return any(isinstance(el, ast.Call) and _is_cell(el, ctx) for el in values[0].elts)
    return isinstance(e, ast.List) and any(_is_cell(el, ctx) for el in e.elts)
