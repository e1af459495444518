"""NPU201: `.cuda()` on a tensor or module."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from npu_lsp.diagnostics import Diagnostic, Edit
from npu_lsp.engine import Context
from npu_lsp.registry import Rule, rule
from npu_lsp.rules.migration.helpers import attr_name_span, rewrite_fix
from npu_lsp.rules.migration.values import resolve


@rule(code="NPU201", name="cuda-method-call", severity="warning", family="migration", fix="always")
class CudaMethodCall(Rule):
    """## What it does
    Finds `.cuda()` calls that move a tensor or a module to a CUDA device.

    ## Why is this bad?
    There is no CUDA device on an Ascend machine: `.cuda()` fails with "Torch not compiled
    with CUDA enabled". With `torch_npu` imported, tensors and modules gain an `.npu()`
    method that takes the same arguments.

    ## Example
    ```python
    import torch

    model = Net().cuda()
    x = x.cuda(non_blocking=True)
    ```

    ## Use instead
    ```python
    import torch
    import torch_npu

    model = Net().npu()
    x = x.npu(non_blocking=True)
    ```

    ## Fix safety
    Safe: the method is renamed and `import torch_npu` is added after `import torch` when the
    file does not import it yet; arguments are kept as written.

    ## References
    - `../shared/reference/migration.md`, "PyTorch code: what changes on Ascend"
    """

    nodes = (ast.Call,)

    def check(self, node: ast.AST, ctx: Context) -> Iterator[Diagnostic]:
        assert isinstance(node, ast.Call)
        func = node.func
        if not isinstance(func, ast.Attribute) or func.attr != "cuda":
            return
        if (resolve(ctx, func) or "").startswith("torch.cuda"):
            return  # `torch.cuda(...)` is not a tensor method
        edit = Edit(attr_name_span(ctx, func), "npu")
        fix = rewrite_fix(ctx, "Replace `.cuda()` with `.npu()`", edit)
        yield ctx.diagnostic(
            self,
            attr_name_span(ctx, func),
            "`.cuda()` moves data to a CUDA device; use `.npu()` on Ascend",
            fix=fix,
        )
