"""NPU210: `F.scaled_dot_product_attention`, which has a fused Ascend form."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import Rule, rule
from npu_lsp.rules.migration.helpers import span_of
from npu_lsp.rules.migration.values import Flow, resolve

_SDPA = "torch.nn.functional.scaled_dot_product_attention"


@rule(code="NPU210", name="scaled-dot-product-attention", severity="info", family="migration")
class ScaledDotProductAttention(Rule):
    """## What it does
    Finds calls to `torch.nn.functional.scaled_dot_product_attention` (usually written
    `F.scaled_dot_product_attention`).

    ## Why is this bad?
    It runs on an NPU, but on CUDA it dispatches to fused FlashAttention kernels. On Ascend
    the fused kernel is a separate operator, `torch_npu.npu_fusion_attention`, with its own
    arguments: the head count, the input layout (for example `"BSH"` or `"BNSD"`), and
    `atten_mask`/`sparse_mode` in place of `attn_mask`/`is_causal`. Ported attention code that
    keeps the generic call can be much slower, and use more memory, than on the GPU it came
    from.

    ## Example
    ```python
    import torch.nn.functional as F

    out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    ```

    ## Use instead
    ```python
    import torch_npu

    out = torch_npu.npu_fusion_attention(
        q, k, v, head_num, "BNSD", scale=scale, atten_mask=causal_mask, sparse_mode=2
    )[0]
    ```

    ## Fix safety
    No fix: the layout, head count and mask have to be chosen for the model.

    ## References
    - `../shared/reference/migration.md`, "PyTorch code: what changes on Ascend"
    """

    nodes = (ast.Module,)
    triggers = ("scaled_dot_product_attention",)

    def check(self, node: ast.AST, ctx: Context) -> Iterator[Diagnostic]:
        for call in Flow.of(ctx).b.nodes.get(ast.Call, []):
            assert isinstance(call, ast.Call)
            if resolve(ctx, call.func) == _SDPA:
                yield ctx.diagnostic(
                    self,
                    span_of(ctx, call.func),
                    "`scaled_dot_product_attention` has a fused Ascend form: "
                    "`torch_npu.npu_fusion_attention`",
                )
