"""NPU203: `torch.device("cuda")`."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import Rule, rule
from npu_lsp.rules.migration.helpers import (
    is_cuda_device_string,
    literal_edit,
    rewrite_fix,
    span_of,
)


def device_literal(call: ast.Call) -> ast.Constant | None:
    """The `"cuda..."` literal given to `torch.device(...)` (positional or `type=`), if any."""
    candidates = call.args[:1] + [k.value for k in call.keywords if k.arg == "type"]
    for arg in candidates:
        if is_cuda_device_string(arg):
            assert isinstance(arg, ast.Constant)
            return arg
    return None


@rule(code="NPU203", name="cuda-torch-device", severity="warning", family="migration", fix="always")
class CudaTorchDevice(Rule):
    """## What it does
    Finds `torch.device("cuda")`, `torch.device("cuda:N")` and `torch.device("cuda", N)`.

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
    `import torch_npu` is added when missing. Literals that are concatenated or contain
    escapes are reported without a fix.

    ## References
    - `../shared/reference/migration.md`, "PyTorch code: what changes on Ascend"
    """

    nodes = (ast.Call,)

    def check(self, node: ast.AST, ctx: Context) -> Iterator[Diagnostic]:
        assert isinstance(node, ast.Call)
        if ctx.qualname(node.func) != "torch.device":
            return
        literal = device_literal(node)
        if literal is None:
            return
        old = str(literal.value)
        new = old.replace("cuda", "npu", 1)
        fix = rewrite_fix(ctx, f'Replace "{old}" with "{new}"', literal_edit(ctx, literal, new))
        yield ctx.diagnostic(
            self,
            span_of(ctx, literal),
            f'`torch.device("{old}")` names a CUDA device; use "{new}"',
            fix=fix,
        )
