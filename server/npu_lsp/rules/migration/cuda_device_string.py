"""NPU204: `"cuda"` device strings (`.to("cuda")`, `device="cuda:0"`, comparisons)."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import Rule, rule
from npu_lsp.rules.migration.cuda_torch_device import device_literal
from npu_lsp.rules.migration.helpers import (
    is_cuda_device_string,
    literal_edit,
    rewrite_fix,
    span_of,
)


@rule(
    code="NPU204", name="cuda-device-string", severity="warning", family="migration", fix="always"
)
class CudaDeviceString(Rule):
    """## What it does
    Finds the string literals `"cuda"` and `"cuda:N"` wherever they name a device:
    `.to("cuda")`, `device="cuda:0"` arguments, `torch.autocast("cuda")`, and comparisons such
    as `x.device.type == "cuda"`. `torch.device("cuda")` is NPU203.

    ## Why is this bad?
    On Ascend the device type is `"npu"`; moving a tensor to `"cuda"` fails, and a comparison
    with `"cuda"` is silently false, so the NPU branch never runs.

    ## Example
    ```python
    batch = batch.to("cuda")
    mask = torch.ones(8, device="cuda:1")
    ```

    ## Use instead
    ```python
    batch = batch.to("npu")
    mask = torch.ones(8, device="npu:1")
    ```

    ## Fix safety
    Safe: only the device type in the literal changes (the index is kept) and
    `import torch_npu` is added when missing.

    ## References
    - `../shared/reference/migration.md`, "PyTorch code: what changes on Ascend"
    """

    nodes = (ast.Constant,)

    def check(self, node: ast.AST, ctx: Context) -> Iterator[Diagnostic]:
        if not is_cuda_device_string(node):
            return
        assert isinstance(node, ast.Constant)
        parent = ctx.parent(node)
        if isinstance(parent, ast.keyword):
            parent = ctx.parent(parent)
        if (
            isinstance(parent, ast.Call)
            and ctx.qualname(parent.func) == "torch.device"
            and device_literal(parent) is node
        ):
            return  # NPU203 reports these
        if isinstance(parent, ast.JoinedStr):
            return  # a fragment of an f-string, not a whole device name
        old = str(node.value)
        new = old.replace("cuda", "npu", 1)
        fix = rewrite_fix(ctx, f'Replace "{old}" with "{new}"', literal_edit(ctx, node, new))
        yield ctx.diagnostic(
            self, span_of(ctx, node), f'"{old}" names a CUDA device; use "{new}" on Ascend', fix=fix
        )
