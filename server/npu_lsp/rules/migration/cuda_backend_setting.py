"""NPU212: `torch.backends.cuda` settings (TF32 matmuls, SDPA kernel switches...)."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import Rule, rule
from npu_lsp.rules.migration.helpers import backend_settings, data, span_of


@rule(
    code="NPU212",
    name="cuda-backend-setting",
    severity="info",
    family="migration",
    fix="sometimes",
)
class CudaBackendSetting(Rule):
    """## What it does
    Finds uses of `torch.backends.cuda.*`: `matmul.allow_tf32`, the reduced-precision
    reduction switches, the scaled-dot-product-attention kernel switches (`sdp_kernel`,
    `enable_flash_sdp`, `enable_mem_efficient_sdp`...), `preferred_linalg_library`,
    `cufft_plan_cache`, also through aliases (`from torch.backends import cuda as tbc`,
    `backends = torch.backends`) and, where they are read, the known settings imported by
    name (`from torch.backends.cuda import flash_sdp_enabled`).

    ## Why is this bad?
    These switches steer NVIDIA libraries (cuBLAS, cuDNN, FlashAttention kernels). On an NPU
    they do nothing, so the speed or precision they were set for is silently lost.
    `torch.backends.cuda.matmul.allow_tf32` has an Ascend counterpart,
    `torch.npu.matmul.allow_hf32`; attention kernels are chosen by calling
    `torch_npu.npu_fusion_attention`.

    ## Example
    ```python
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cuda.enable_flash_sdp(True)
    ```

    ## Use instead
    ```python
    torch.npu.matmul.allow_hf32 = True
    ```

    ## Fix safety
    Unsafe, and only for `matmul.allow_tf32` written as `torch.backends.cuda.matmul...`:
    HF32 rounds differently from TF32, so results change. The other settings have no fix:
    whether to drop them is the author's call.

    ## References
    - `../shared/reference/migration.md`, "PyTorch code: what changes on Ascend"
    - `torch_npu`: `torch.npu.matmul.allow_hf32`, `torch.npu.conv.allow_hf32`
    """

    nodes = (ast.Module,)
    triggers = ("backends",)

    def check(self, node: ast.AST, ctx: Context) -> Iterator[Diagnostic]:
        table = data()["backend_settings"]
        for attr, name, fix in backend_settings(ctx, "cuda"):
            entry = next((table[k] for k in table if name.startswith(k)), None)
            why = entry["why"] if entry else "steers CUDA libraries and has no effect on Ascend"
            yield ctx.diagnostic(self, span_of(ctx, attr), f"`{name}`: {why}", fix=fix)
