"""NPU202: `torch.cuda.*` functions and classes."""

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
    data,
    head_span_of,
    rewrite_fix,
    span_of,
)
from npu_lsp.rules.migration.values import resolve

_FROM_CUDA = re.compile(r"\bfrom\s+(torch\s*\.\s*cuda)\b")


def same_name_on_npu(name: str) -> bool:
    """Does `torch.npu` offer `name` with the same meaning as `torch.cuda.<name>`?"""
    return name in data()["torch_cuda_same_name"]


@rule(code="NPU202", name="torch-cuda-api", severity="warning", family="migration", fix="sometimes")
class TorchCudaApi(Rule):
    """## What it does
    Finds uses of `torch.cuda.<name>` (also through aliases such as `import torch as th` or
    `from torch import cuda`) and `from torch.cuda import <name>`. `torch.cuda.amp` has its own
    rule (NPU206).

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
    adds `import torch_npu` when missing. Other names are reported without a fix.

    ## References
    - `../shared/reference/migration.md`, "PyTorch code: what changes on Ascend"
    """

    nodes = (ast.Attribute, ast.ImportFrom)

    def check(self, node: ast.AST, ctx: Context) -> Iterator[Diagnostic]:
        if isinstance(node, ast.ImportFrom):
            yield from self._import_from(node, ctx)
            return
        assert isinstance(node, ast.Attribute)
        if node.attr == "amp" or resolve(ctx, node.value) != "torch.cuda":
            return
        fix = None
        if same_name_on_npu(node.attr) and isinstance(node.value, ast.Attribute):
            edit = Edit(attr_name_span(ctx, node.value), "npu")
            fix = rewrite_fix(
                ctx, f"Replace `torch.cuda.{node.attr}` with `torch.npu.{node.attr}`", edit
            )
        yield ctx.diagnostic(
            self,
            span_of(ctx, node),
            f"`torch.cuda.{node.attr}` targets CUDA devices; use `torch.npu.{node.attr}`",
            fix=fix,
        )

    def _import_from(self, node: ast.ImportFrom, ctx: Context) -> Iterator[Diagnostic]:
        if node.module != "torch.cuda" or node.level:
            return
        names = [a.name for a in node.names if a.name != "amp"]
        if not names:
            return
        fix = None
        line = ctx.lines[node.lineno - 1] if node.lineno - 1 < len(ctx.lines) else ""
        match = _FROM_CUDA.search(line, char_column(ctx, node.lineno, node.col_offset) - 1)
        if match and all(same_name_on_npu(n) for n in names) and len(names) == len(node.names):
            span = Span(node.lineno, match.start(1) + 1, node.lineno, match.end(1) + 1)
            fix = rewrite_fix(ctx, "Import from `torch.npu` instead", Edit(span, "torch.npu"))
        listed = ", ".join(f"`{n}`" for n in names)
        yield ctx.diagnostic(
            self,
            head_span_of(ctx, node),
            f"{listed} imported from `torch.cuda`; import from `torch.npu`",
            fix=fix,
        )
