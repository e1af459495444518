"""NPU208: `torch.backends.cudnn` settings."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import Rule, rule
from npu_lsp.rules.migration.helpers import backend_settings, data, span_of


@rule(
    code="NPU208",
    name="cudnn-backend-setting",
    severity="info",
    family="migration",
    fix="sometimes",
)
class CudnnBackendSetting(Rule):
    """## What it does
    Finds uses of `torch.backends.cudnn.<name>`, such as `torch.backends.cudnn.benchmark = True`
    or `torch.backends.cudnn.deterministic = True`, also through aliases
    (`import torch.backends.cudnn as cudnn`, `backends = torch.backends`).

    ## Why is this bad?
    cuDNN is NVIDIA's kernel library; on an NPU these switches do nothing. Code that relies on
    them, for reproducibility (`deterministic`) or speed (`benchmark`), silently loses that
    behaviour after migration. `allow_tf32` has an Ascend counterpart,
    `torch.npu.conv.allow_hf32`.

    ## Example
    ```python
    torch.backends.cudnn.deterministic = True
    torch.backends.cudnn.allow_tf32 = False
    ```

    ## Use instead
    Remove the setting, or guard it with `if torch.cuda.is_available():` and use the Ascend
    equivalent where one exists (for determinism, `torch.use_deterministic_algorithms(True)`
    applies to every backend; for TF32 convolutions, `torch.npu.conv.allow_hf32 = False`).

    ## Fix safety
    Unsafe, and only for `allow_tf32` written as `torch.backends.cudnn.allow_tf32`: HF32
    rounds differently from TF32, so results change. Other settings have no fix: whether
    they are still needed elsewhere is for the author to decide.

    ## References
    - `../shared/reference/migration.md`, "PyTorch code: what changes on Ascend"
    - `torch_npu`: `torch.npu.conv.allow_hf32`
    """

    nodes = (ast.Module,)
    triggers = ("cudnn",)

    def check(self, node: ast.AST, ctx: Context) -> Iterator[Diagnostic]:
        table = data()["backend_settings"]
        for attr, name, fix in backend_settings(ctx, "cudnn"):
            entry = table.get(name)
            message = f"`{name}` has no effect on Ascend NPUs"
            if entry:
                message = f"`{name}`: {entry['why']}"
            yield ctx.diagnostic(self, span_of(ctx, attr), message, fix=fix)
