"""NPU202: `torch.cuda.*` functions and classes."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from npu_lsp.diagnostics import Diagnostic, Fix
from npu_lsp.engine import Context
from npu_lsp.registry import Rule, rule
from npu_lsp.rules.migration.apis import OWN_RULE, renames
from npu_lsp.rules.migration.groups import api_fix, rendered
from npu_lsp.rules.migration.helpers import head_span_of, span_of


@rule(code="NPU202", name="torch-cuda-api", severity="warning", family="migration", fix="sometimes")
class TorchCudaApi(Rule):
    """## What it does
    Finds uses of `torch.cuda.<name>` (also through aliases such as `import torch as th` or
    `from torch import cuda`) and `from torch.cuda import <name>`. `torch.cuda.amp` has its own
    rule (NPU206), and so has `torch.cuda.nccl` (NPU205). Uses in code that already
    dispatches to the NPU (a branch of an `if`/`elif` chain one of whose tests names the
    NPU, a class's own `cuda()` method) are left alone, as for NPU204, and so is a CUDA
    query choosing code that only runs on CUDA (`if torch.cuda.is_available() and
    CUDA_HOME is not None:` before an nvcc build, `if x.is_cuda:` before a Triton kernel).

    ## Why is this bad?
    `torch.cuda` answers for NVIDIA devices only: on an Ascend machine
    `torch.cuda.is_available()` is `False` and the device functions fail. `torch_npu` provides
    the same functions under `torch.npu`.

    ## Example
    ```python
    import torch

    if torch.cuda.is_available():
        torch.cuda.set_device(local_rank)
    ```

    ## Use instead
    ```python
    import torch
    import torch_npu

    if torch.npu.is_available():
        torch.npu.set_device(local_rank)
    ```

    ## Fix safety
    Offered when `torch.npu` has a function of the same name and meaning (the list lives in
    `data/migration.json`) and the name is written as `<module>.cuda.<name>`; it is safe and
    adds `import torch_npu` when missing. Other names are reported without a fix. The
    rename moves with the file's device strings and other CUDA API uses in one fix (see
    NPU201): none is offered when a device string cannot be rewritten exactly, and it is
    unsafe when one's value is also used for something else; the message says which.

    ## References
    - `../shared/reference/migration.md`, "PyTorch code: what changes on Ascend"
    """

    nodes = (ast.Module,)

    def check(self, node: ast.AST, ctx: Context) -> Iterator[Diagnostic]:
        for found in renames(ctx):
            if found.code != self.code:
                continue
            use = found.node
            fix, why = api_fix(ctx, use, found.edit is not None)
            if isinstance(use, ast.ImportFrom):
                listed = ", ".join(f"`{a.name}`" for a in use.names if a.name not in OWN_RULE)
                yield ctx.diagnostic(
                    self,
                    head_span_of(ctx, use),
                    f"{listed} imported from `torch.cuda`; import from `torch.npu`" + why,
                    fix=fix,
                )
                continue
            assert isinstance(use, ast.Attribute)
            if found.edit is None:  # say why there is no fix
                why = (
                    f" (no automatic fix: `torch.npu` has no `{use.attr}` of the same meaning)"
                    if isinstance(use.value, ast.Attribute)
                    else " (no automatic fix: `cuda` is used through a name imported from torch)"
                )
            yield rendered(ctx, self.code, found, fix, why, self._made, ctx, use, fix, why)

    def _made(self, ctx: Context, use: ast.Attribute, fix: Fix | None, why: str) -> Diagnostic:
        return ctx.diagnostic(
            self,
            span_of(ctx, use),
            f"`torch.cuda.{use.attr}` targets CUDA devices; use `torch.npu.{use.attr}`" + why,
            fix=fix,
        )
