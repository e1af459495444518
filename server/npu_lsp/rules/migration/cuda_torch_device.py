"""NPU203: `torch.device("cuda")`."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import Rule, rule
from npu_lsp.rules.migration.groups import Finding, findings, rendered, shown
from npu_lsp.rules.migration.helpers import span_of


@rule(
    code="NPU203", name="cuda-torch-device", severity="warning", family="migration", fix="sometimes"
)
class CudaTorchDevice(Rule):
    """## What it does
    Finds `torch.device("cuda")`, `torch.device("cuda:N")`, `torch.device("cuda", N)` and
    `torch.device("cuda" if ... else "cpu")`: a CUDA device type written in the call itself.
    Device strings that reach `torch.device` through a variable are NPU204.

    ## Why is this bad?
    The device type names the backend. On Ascend it is `"npu"` (registered by `torch_npu`);
    a `cuda` device object fails as soon as a tensor is placed on it.

    ## Example
    ```python
    import torch

    device = torch.device("cuda:0")
    ```

    ## Use instead
    ```python
    import torch
    import torch_npu

    device = torch.device("npu:0")
    ```

    ## Fix safety
    Safe: only the device type in the string changes (the index is kept) and
    `import torch_npu` is added when missing. The fix moves every device string of the
    file together (see NPU204), and is not offered when one of them cannot be rewritten
    exactly (escapes, implicit concatenation).

    ## References
    - `../shared/reference/migration.md`, "PyTorch code: what changes on Ascend"
    """

    nodes = (ast.Module,)

    def check(self, node: ast.AST, ctx: Context) -> Iterator[Diagnostic]:
        for f in findings(ctx, "device"):
            if f.code != self.code:
                continue
            yield rendered(ctx, self.code, f.source, f.fix, f.why, self._made, ctx, f)

    def _made(self, ctx: Context, f: Finding) -> Diagnostic:
        return ctx.diagnostic(
            self,
            span_of(ctx, f.node),
            f"`torch.device({shown(f.node, f.old)})` names a CUDA device; "
            f"use {shown(f.node, f.new)}{f.why}",
            fix=f.fix,
        )
