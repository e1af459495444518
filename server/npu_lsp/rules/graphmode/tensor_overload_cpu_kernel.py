"""MS259: a Tensor method called with a keyword only its new overload takes, whose primitive
the CPU backend has no kernel for (`x.chunk(2, dim=1)` in a script that runs on the CPU)."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.flow import Kind, analyzer
from npu_lsp.rules.graphmode.helpers import GraphRule, runs_on_cpu

#: method -> (the parameters of MindSpore 2.10's deprecated overload after `self`, from
#: `mindspore/graph/_parse/deprecated/deprecated_tensor_method.py` and
#: `ops/tensor_method.py`; the primitive the other overload compiles to). The graph compiler
#: tries the deprecated overload first: a call whose keywords it does not take goes to the
#: new one. Measured (written/heldout43a probes `h43a_ck_*`): these primitives have no CPU
#: kernel; `sum` / `mean` (`dim=`, `keepdim=`), `max(dim=)`, `unbind(dim=)`, `split` of a
#: list of sizes (`SplitWithSize`) and `mint.chunk` compile.
_NEW_OVERLOADS: dict[str, tuple[tuple[str, ...], str]] = {
    "chunk": (("chunks", "axis"), "Chunk"),
    "split": (("split_size_or_sections", "axis"), "SplitTensor"),
    "cumsum": (("axis", "dtype"), "CumsumExt"),
}


@rule(code="MS259", name="tensor-overload-without-cpu-kernel", severity="error", family="graphmode")
class TensorOverloadWithoutCpuKernel(GraphRule):
    """## What it does
    In a script that runs on the CPU (`ms.set_device("CPU")`, `ms.set_context(device_target=
    "CPU")`), flags Tensor methods in compiled code called with a keyword that only their
    new (torch-style) overload takes, when that overload is a primitive the CPU backend has
    no kernel for: `x.chunk(2, dim=1)` (`Chunk`), `x.split(2, dim=1)` with an int size
    (`SplitTensor`), `x.cumsum(dim=1)` (`CumsumExt`).

    ## Why is this bad?
    MindSpore 2.10's graph compiler resolves such a method by trying its deprecated
    overload (`chunk(chunks, axis=0)`, `split(split_size_or_sections, axis=0)`,
    `cumsum(axis=None, dtype=None)`) first; `dim=` does not bind there, so it takes the
    new overload, compiled to a primitive with no CPU kernel: `RuntimeError: Kernel select
    failed: Unsupported op [Chunk] on CPU`, at every syntax level. PyNative runs it.
    A script naming no device may run on Ascend, which has these kernels: not flagged.

    ## Example
    ```python
    ms.set_device("CPU")

    class SimpleGate(nn.Cell):
        def construct(self, x):
            x1, x2 = x.chunk(2, dim=1)
            return x1 * x2
    ```

    ## Use instead
    ```python
    class SimpleGate(nn.Cell):
        def construct(self, x):
            x1, x2 = x.chunk(2, axis=1)  # or x.chunk(2, 1)
            return x1 * x2
    ```

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 0 (what gets compiled) and the CPU-backend rules (MS257).
    - Measured on MindSpore 2.10 CPU: the written heldout43a cases
      `nafnet_simplegate_chunk_dim_kwarg`, `r2_chunk_dim_kwarg_*`,
      `r2_split_size_dim_kwarg_torch_style` and probes `h43a_ck_*` (`chunk(2, dim=1)`,
      `chunk(chunks=2, dim=1)`, `split(2, dim=1)`, `split(split_size=2, dim=1)`, an int
      local as the size, `cumsum(dim=1)`: rejected at LAX and STRICT; by position, with
      `axis=`, `chunk(chunks=2)`, `split([1, 3], dim=1)`, `split((2, 2), dim=1)`,
      `cumsum(1)`, `sum(dim=1, keepdim=True)`, `max(dim=1)`, `unbind(dim=0)` and
      `mint.chunk(x, 2, dim=1)` compile).
    """

    nodes = (ast.Call,)
    calls = frozenset(_NEW_OVERLOADS)

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        assert isinstance(node, ast.Call)
        f = node.func
        if not isinstance(f, ast.Attribute) or f.attr not in _NEW_OVERLOADS or not ctx.scope:
            return
        if not node.keywords or any(k.arg is None for k in node.keywords):
            return
        if any(isinstance(a, ast.Starred) for a in node.args):
            return
        params, prim = _NEW_OVERLOADS[f.attr]
        extra = [k.arg for k in node.keywords if k.arg not in params]
        if not extra or not runs_on_cpu(ctx):
            return
        if f.attr == "split":
            size = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "split_size"), None)
            if size is None or not _int_like(size, ctx, 3):
                return  # a list of sizes compiles (`SplitWithSize`); unknown: silent
        if analyzer(ctx).kind(f.value) != Kind.TENSOR:
            return
        yield ctx.diagnostic(
            self,
            node,
            f"`{extra[0]}=` does not bind to the deprecated `Tensor.{f.attr}` overload, so MindSpore compiles the new one, the `{prim}` primitive, which the CPU backend has no kernel for (\"Kernel select failed: Unsupported op [{prim}] on CPU\"); write `axis=` or pass it by position",
        )


def _int_like(e: ast.expr, ctx: Context, depth: int) -> bool:
    """Is `e` an int the compiler knows: a literal, a shape item, `len(...)`, arithmetic of
    those, or a local the compiled function binds once to one of them?"""
    if isinstance(e, ast.Constant):
        return type(e.value) is int
    if isinstance(e, ast.BinOp) and isinstance(e.op, (ast.FloorDiv, ast.Mult, ast.Add, ast.Sub, ast.Mod)):
        return _int_like(e.left, ctx, depth) and _int_like(e.right, ctx, depth)
    if isinstance(e, ast.Subscript) and isinstance(e.value, ast.Attribute) and e.value.attr == "shape":
        return isinstance(e.slice, ast.Constant) and type(e.slice.value) is int
    if isinstance(e, ast.Call) and isinstance(e.func, ast.Name) and e.func.id == "len":
        return True
    if isinstance(e, ast.Name) and depth > 0 and ctx.function is not None:
        bound = [
            n
            for n in ast.walk(ctx.function)
            if isinstance(n, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.For, ast.comprehension, ast.arg))
            and _binds(n, e.id)
        ]
        if len(bound) != 1 or not isinstance(bound[0], ast.Assign) or len(bound[0].targets) != 1:
            return False
        target = bound[0].targets[0]
        return isinstance(target, ast.Name) and _int_like(bound[0].value, ctx, depth - 1)
    return False


def _binds(n: ast.AST, name: str) -> bool:
    if isinstance(n, ast.arg):
        return n.arg == name
    targets = n.targets if isinstance(n, ast.Assign) else [n.target]  # type: ignore[attr-defined]
    return any(isinstance(t, ast.Name) and t.id == name for tgt in targets for t in ast.walk(tgt))
