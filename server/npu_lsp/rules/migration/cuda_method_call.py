"""NPU201: `.cuda()` on a tensor or module."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from npu_lsp.diagnostics import Diagnostic, Fix
from npu_lsp.engine import Context
from npu_lsp.registry import Rule, rule
from npu_lsp.rules.migration.apis import renames
from npu_lsp.rules.migration.groups import device_group, no_safe_fix, rendered
from npu_lsp.rules.migration.helpers import attr_name_span


@rule(
    code="NPU201", name="cuda-method-call", severity="warning", family="migration", fix="sometimes"
)
class CudaMethodCall(Rule):
    """## What it does
    Finds `.cuda()` calls that move a tensor or a module to a CUDA device, and reads of a
    tensor's `.is_cuda` (False on an NPU, where torch_npu adds `.is_npu`). Calls in code that
    already dispatches to the NPU (a branch of an `if`/`elif` chain one of whose tests names
    the NPU, a class's own `cuda()` method) are left alone, as for NPU204, and so is a
    CUDA query choosing code that only runs on CUDA (`if x.is_cuda:` before a Triton
    kernel, `if torch.cuda.is_available() and CUDA_HOME is not None:` before an nvcc build).

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
    `.is_cuda` has no fix: it guards either device placement (`.is_npu` is then right) or a
    CUDA-only kernel whose fallback is what an NPU needs (fairseq's fused LayerNorm), and
    only the author knows which. For `.cuda()` the fix is safe: the method is renamed and `import torch_npu` is added after `import torch` when the
    file does not import it yet; arguments are kept as written. The rename moves with the
    file's device strings (NPU203/NPU204) and other CUDA API uses in one fix, so `.npu()`
    never lands beside a `device="cuda"` that stays: when a device string of the file
    cannot be rewritten exactly there is no fix, and when its value is also used for
    something else (a path, an unseen call) the fix is unsafe; the message says which.

    ## References
    - `../shared/reference/migration.md`, "PyTorch code: what changes on Ascend"
    """

    nodes = (ast.Module,)

    def check(self, node: ast.AST, ctx: Context) -> Iterator[Diagnostic]:
        group = device_group(ctx)
        for found in renames(ctx):
            if found.code != self.code:
                continue
            if isinstance(found.node, ast.Attribute):  # `<tensor>.is_cuda`
                yield ctx.diagnostic(
                    self,
                    attr_name_span(ctx, found.node),
                    "`.is_cuda` is False for a tensor on an NPU; test `.is_npu` where the "
                    "branch is not a CUDA-only kernel path (no automatic fix: which one it "
                    "is decides the rewrite)",
                )
                continue
            call = found.node
            assert isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
            fix = group.fixes.get(id(call))
            why = no_safe_fix(group, fix)
            yield rendered(ctx, self.code, found, fix, why, self._made, ctx, call, fix, why)

    def _made(self, ctx: Context, call: ast.Call, fix: Fix | None, why: str) -> Diagnostic:
        assert isinstance(call.func, ast.Attribute)
        return ctx.diagnostic(
            self,
            attr_name_span(ctx, call.func),
            "`.cuda()` moves data to a CUDA device; use `.npu()` on Ascend" + why,
            fix=fix,
        )
