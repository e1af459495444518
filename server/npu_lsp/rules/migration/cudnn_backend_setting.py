"""NPU208: `torch.backends.cudnn` settings."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import Rule, rule
from npu_lsp.rules.migration.helpers import span_of


@rule(code="NPU208", name="cudnn-backend-setting", severity="info", family="migration")
class CudnnBackendSetting(Rule):
    """## What it does
    Finds uses of `torch.backends.cudnn.<name>`, such as `torch.backends.cudnn.benchmark = True`
    or `torch.backends.cudnn.deterministic = True`.

    ## Why is this bad?
    cuDNN is NVIDIA's kernel library; on an NPU these switches do nothing. Code that relies on
    them, for reproducibility (`deterministic`) or speed (`benchmark`), silently loses that
    behaviour after migration.

    ## Example
    ```python
    torch.backends.cudnn.deterministic = True
    ```

    ## Use instead
    Remove the setting, or guard it with `if torch.cuda.is_available():` and use the Ascend
    equivalent where one exists (for determinism, `torch.use_deterministic_algorithms(True)`
    applies to every backend).

    ## Fix safety
    No fix: whether the setting is still needed elsewhere is for the author to decide.

    ## References
    - `../shared/reference/migration.md`, "PyTorch code: what changes on Ascend"
    """

    nodes = (ast.Attribute,)

    def check(self, node: ast.AST, ctx: Context) -> Iterator[Diagnostic]:
        assert isinstance(node, ast.Attribute)
        if ctx.qualname(node.value) == "torch.backends.cudnn":
            yield ctx.diagnostic(
                self,
                span_of(ctx, node),
                f"`torch.backends.cudnn.{node.attr}` has no effect on Ascend NPUs",
            )
