"""NPU209: NPU APIs used without `import torch_npu`."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from npu_lsp.diagnostics import Diagnostic, Fix
from npu_lsp.engine import Context
from npu_lsp.registry import Rule, rule
from npu_lsp.rules.migration.helpers import imports_torch_npu, span_of, torch_npu_import_edit


def first_npu_use(tree: ast.Module, ctx: Context) -> ast.AST | None:
    """The first expression that needs torch_npu: `.npu()`, `torch.npu.*`, an "npu" device."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            if node.attr == "npu" and ctx.qualname(node) in (None, "torch.npu"):
                return node
            if ctx.qualname(node.value) == "torch.npu":
                return node
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            value = node.value
            if value == "npu" or (value.startswith("npu:") and value[4:].isdigit()):
                return node
    return None


@rule(
    code="NPU209",
    name="missing-torch-npu-import",
    severity="warning",
    family="migration",
    fix="sometimes",
)
class MissingTorchNpuImport(Rule):
    """## What it does
    Reports a module that imports `torch` and uses NPU features (`.npu()`, `torch.npu.*`, or an
    `"npu"` device string) but never imports `torch_npu`.

    ## Why is this bad?
    `torch_npu` registers the NPU backend when it is imported. Without the import,
    `tensor.npu()` raises `AttributeError`, `torch.npu` does not exist and `"npu"` is an unknown
    device type.

    ## Example
    ```python
    import torch

    x = torch.ones(4).npu()
    ```

    ## Use instead
    ```python
    import torch
    import torch_npu

    x = torch.ones(4).npu()
    ```

    ## Fix safety
    Safe: `import torch_npu` is inserted after the first top-level `import torch`. Offered only
    when such an import exists to anchor on.

    ## References
    - `../shared/reference/migration.md`, "PyTorch code: what changes on Ascend"
    """

    nodes = (ast.Module,)

    def check(self, node: ast.AST, ctx: Context) -> Iterator[Diagnostic]:
        assert isinstance(node, ast.Module)
        if "npu" not in ctx.text or imports_torch_npu(node, ctx.text):
            return
        use = first_npu_use(node, ctx)
        if use is None:
            return
        edit = torch_npu_import_edit(ctx)
        fix = Fix("Add `import torch_npu`", (edit,)) if edit else None
        yield ctx.diagnostic(
            self, span_of(ctx, use), "NPU API used but `torch_npu` is never imported", fix=fix
        )
