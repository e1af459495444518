"""NPU206: `torch.cuda.amp` (autocast, GradScaler)."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from npu_lsp.diagnostics import Diagnostic, Fix
from npu_lsp.engine import Context
from npu_lsp.registry import Rule, rule
from npu_lsp.rules.migration.apis import renames
from npu_lsp.rules.migration.groups import api_fix, rendered
from npu_lsp.rules.migration.helpers import head_span_of, span_of


@rule(code="NPU206", name="torch-cuda-amp", severity="warning", family="migration", fix="sometimes")
class TorchCudaAmp(Rule):
    """## What it does
    Finds `torch.cuda.amp` (for example `torch.cuda.amp.autocast()` and
    `torch.cuda.amp.GradScaler()`) and `from torch.cuda.amp import ...` /
    `from torch.cuda import amp`.

    ## Why is this bad?
    CUDA's mixed-precision helpers cast for and scale on CUDA devices. `torch_npu` provides the
    same classes under `torch.npu.amp`, which pick the NPU's fp16/bf16 paths.

    ## Example
    ```python
    import torch

    scaler = torch.cuda.amp.GradScaler()
    with torch.cuda.amp.autocast():
        loss = model(x)
    ```

    ## Use instead
    ```python
    import torch
    import torch_npu

    scaler = torch.npu.amp.GradScaler()
    with torch.npu.amp.autocast():
        loss = model(x)
    ```

    ## Fix safety
    Safe when offered: `cuda` becomes `npu` in the module path and `import torch_npu` is added
    when missing. `from torch.cuda import amp` is reported without a fix. The rename moves
    with the file's device strings and other CUDA API uses in one fix (see NPU201).

    ## References
    - `../shared/reference/migration.md`, "PyTorch code: what changes on Ascend"
    """

    nodes = (ast.Module,)

    def _made(self, ctx: Context, use: ast.AST, text: str, fix: Fix | None) -> Diagnostic:
        return ctx.diagnostic(self, span_of(ctx, use), text, fix=fix)

    def check(self, node: ast.AST, ctx: Context) -> Iterator[Diagnostic]:
        for found in renames(ctx):
            if found.code != self.code:
                continue
            use = found.node
            fix, why = api_fix(ctx, use, found.edit is not None)
            if not isinstance(use, ast.ImportFrom):
                text = "`torch.cuda.amp` is CUDA mixed precision; use `torch.npu.amp`"
                yield rendered(
                    ctx, self.code, found, fix, why, self._made, ctx, use, text + why, fix
                )
            elif use.module == "torch.cuda.amp":
                text = "imports from `torch.cuda.amp`; use `torch.npu.amp`"
                yield ctx.diagnostic(self, head_span_of(ctx, use), text + why, fix=fix)
            else:
                text = "`amp` imported from `torch.cuda`; use `from torch.npu import amp`"
                yield ctx.diagnostic(self, head_span_of(ctx, use), text + why, fix=fix)
