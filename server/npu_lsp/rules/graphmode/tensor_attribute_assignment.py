"""MS128: assigning an attribute of a tensor (`x.shape = ...`)."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.flow import Analyzer, Kind, analyzer
from npu_lsp.rules.graphmode.helpers import GraphRule

#: properties of mindspore.Tensor without a setter (MindSpore 2.10)
_READ_ONLY = frozenset(
    {"shape", "dtype", "ndim", "size", "itemsize", "nbytes", "strides", "T", "H", "mT", "mH"}
)


#: Parameters the `mindspore.nn` layers create themselves (Dense, Conv*, norms, Embedding)
_LAYER_PARAMETERS = frozenset({"weight", "bias", "gamma", "beta", "embedding_table"})


@rule(code="MS128", name="tensor-attribute-assignment", severity="error", family="graphmode")
class TensorAttributeAssignment(GraphRule):
    """## What it does
    Flags assignments to the read-only attributes of a tensor in compiled code, such as
    `x.shape = (3, 1)` or `x.dtype = ms.float16` (its shape, dtype, size and the views
    `T`/`H`/`mT`/`mH`). Attributes a tensor lets Python set (`x.requires_grad = False`,
    a new attribute) compile: measured, MindSpore 2.10 accepts them at both levels. Also
    PyTorch's `p.data = ...` / `p.data *= mask` on a Parameter or tensor (`self.weight`, a
    tensor name, the loop name over a `ParameterTuple`): the graph makes it a `SetData`,
    which 2.10 cannot compile at either level (measured on CPU: `Unsupported op [SetData]`);
    reading `p.data` and `p.data.mul_(...)` / `p.data.copy_(...)` compile.

    ## Why is this bad?
    These attributes are read-only in graph mode and in PyNative alike: compilation stops
    with an `AttributeError`.

    ## Example
    ```python
    def construct(self, x):
        x.shape = (3, 1)
        return x
    ```

    ## Use instead
    ```python
    def construct(self, x):
        return x.reshape((3, 1))
    ```

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 1 (rows that also fail in PyNative): `x.shape = …`.
    - Measured on MindSpore 2.10 (CPU): probes `data_*` in
      tests/npu_lsp/fixtures/written/generative/probes.
    """

    nodes = (ast.Assign, ast.AugAssign, ast.AnnAssign)

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        # not a generator itself: most nodes stop at these tests, for the cost of a call
        # rather than of a generator each
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]  # type: ignore[attr-defined]
        stores = [
            t
            for t in targets
            if isinstance(t, ast.Attribute)
            and (
                t.attr == "data"
                or (t.attr in _READ_ONLY and isinstance(t.value, ast.Name) and t.value.id != "self")
            )
        ]
        return self._check(stores, isinstance(node, ast.Assign), ctx) if stores else ()

    def wants_assign(self, target: type[ast.AST] | None, value: type[ast.AST]) -> bool:
        return target is ast.Attribute or target is None  # an attribute among the targets

    def _check(self, stores: list[ast.Attribute], assign: bool, ctx: Context) -> Iterable[Diagnostic]:
        a = analyzer(ctx)
        for t in stores:
            if t.attr == "data":
                if _parameter_or_tensor(t.value, a, ctx):
                    yield ctx.diagnostic(
                        self,
                        t,
                        f"`{ctx.segment(t)} {'=' if assign else 'op='} ...` sets a tensor's data in a graph"
                        " (SetData), which MindSpore 2.10 cannot compile; use `ops.assign(p, value)`",
                    )
                continue
            if a.kind(t.value) == Kind.TENSOR:
                yield ctx.diagnostic(
                    self,
                    t,
                    f"tensor attribute `{ctx.segment(t)}` cannot be assigned in graph mode",
                )


def _parameter_or_tensor(e: ast.expr, a: Analyzer, ctx: Context) -> bool:
    """A tensor name, a Parameter or tensor `__init__` puts on `self`, or the loop name of
    `for p in self.params` over a `ParameterTuple` there."""
    if isinstance(e, ast.Attribute) and isinstance(e.value, ast.Name) and e.value.id == "self":
        owner = a.owner_class(ctx.function)
        info = a.self_info(owner)
        if e.attr in info.parameters or e.attr in info.tensors:
            return True
        # `class MaskedConv(nn.Conv2d)`: the layer's own Parameters, made by its base
        return e.attr in _LAYER_PARAMETERS and owner is not None and any(
            (ctx.qualname(b) or "").startswith("mindspore.nn.") for b in owner.bases
        )
    if not isinstance(e, ast.Name):
        return False
    if a.kind(e) == Kind.TENSOR:
        return True
    loop = _loop_over(e.id, ctx)
    if loop is None or not isinstance(loop.iter, ast.Attribute):
        return False
    it = loop.iter
    if not (isinstance(it.value, ast.Name) and it.value.id == "self"):
        return False
    owner = a.owner_class(ctx.function)
    values = (a.self_values(owner).get(it.attr) if owner is not None else None) or []
    return bool(values) and all(
        isinstance(v, ast.Call) and (ctx.qualname(v.func) or "").rsplit(".", 1)[-1] == "ParameterTuple" for v in values
    )


def _loop_over(name: str, ctx: Context) -> ast.For | None:
    """The `for name in ...` of the current function binding `name` (its only binding)."""
    func = ctx.function
    if func is None:
        return None
    loops = [n for n in ast.walk(func) if isinstance(n, ast.For) and isinstance(n.target, ast.Name) and n.target.id == name]
    return loops[0] if len(loops) == 1 else None
