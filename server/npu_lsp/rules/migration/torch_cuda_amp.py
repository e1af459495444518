"""NPU206: `torch.cuda.amp` (autocast, GradScaler)."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from npu_lsp.diagnostics import Diagnostic, Edit, Span
from npu_lsp.engine import Context
from npu_lsp.registry import Rule, rule
from npu_lsp.rules.migration.helpers import (
    attr_name_span,
    char_column,
    head_span_of,
    rewrite_fix,
    span_of,
)
from npu_lsp.rules.migration.values import resolve

_FROM_CUDA_AMP = re.compile(r"\bfrom\s+(torch\s*\.\s*cuda)\s*\.\s*amp\b")


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
    when missing. `from torch.cuda import amp` is reported without a fix.

    ## References
    - `../shared/reference/migration.md`, "PyTorch code: what changes on Ascend"
    """

    nodes = (ast.Attribute, ast.ImportFrom)

    def check(self, node: ast.AST, ctx: Context) -> Iterator[Diagnostic]:
        if isinstance(node, ast.ImportFrom):
            yield from self._import_from(node, ctx)
            return
        assert isinstance(node, ast.Attribute)
        if node.attr != "amp" or resolve(ctx, node.value) != "torch.cuda":
            return
        fix = None
        if isinstance(node.value, ast.Attribute):
            fix = rewrite_fix(
                ctx,
                "Replace `torch.cuda.amp` with `torch.npu.amp`",
                Edit(attr_name_span(ctx, node.value), "npu"),
            )
        yield ctx.diagnostic(
            self,
            span_of(ctx, node),
            "`torch.cuda.amp` is CUDA mixed precision; use `torch.npu.amp`",
            fix=fix,
        )

    def _import_from(self, node: ast.ImportFrom, ctx: Context) -> Iterator[Diagnostic]:
        if node.level:
            return
        if node.module == "torch.cuda.amp":
            line = ctx.lines[node.lineno - 1] if node.lineno - 1 < len(ctx.lines) else ""
            match = _FROM_CUDA_AMP.search(line, char_column(ctx, node.lineno, node.col_offset) - 1)
            fix = None
            if match:
                span = Span(node.lineno, match.start(1) + 1, node.lineno, match.end(1) + 1)
                fix = rewrite_fix(
                    ctx, "Import from `torch.npu.amp` instead", Edit(span, "torch.npu")
                )
            yield ctx.diagnostic(
                self,
                head_span_of(ctx, node),
                "imports from `torch.cuda.amp`; use `torch.npu.amp`",
                fix=fix,
            )
        elif node.module == "torch.cuda" and any(a.name == "amp" for a in node.names):
            yield ctx.diagnostic(
                self,
                head_span_of(ctx, node),
                "`amp` imported from `torch.cuda`; use `from torch.npu import amp`",
            )
