"""NPU205: `backend="nccl"` for torch.distributed."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import Rule, rule
from npu_lsp.rules.migration.helpers import literal_edit, rewrite_fix, span_of

_POSITIONAL_BACKEND = frozenset(
    {"torch.distributed.init_process_group", "torch.distributed.new_group"}
)


def _is_nccl(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and node.value.lower() == "nccl"
    )


@rule(code="NPU205", name="nccl-backend", severity="warning", family="migration", fix="always")
class NcclBackend(Rule):
    """## What it does
    Finds the `"nccl"` backend passed to `torch.distributed.init_process_group` (first
    positional argument or `backend=`) and to any other call taking `backend="nccl"`.

    ## Why is this bad?
    NCCL is NVIDIA's collective library. Ascend's is HCCL, which `torch_npu` registers as the
    `"hccl"` backend; `"nccl"` fails at start-up on an NPU machine.

    ## Example
    ```python
    import torch.distributed as dist

    dist.init_process_group(backend="nccl")
    ```

    ## Use instead
    ```python
    import torch.distributed as dist

    dist.init_process_group(backend="hccl")
    ```

    ## Fix safety
    Safe: the backend name is replaced and `import torch_npu` (which registers `hccl`) is added
    when missing.

    ## References
    - `../shared/reference/migration.md`, "PyTorch code: what changes on Ascend"
    """

    nodes = (ast.Call,)

    def check(self, node: ast.AST, ctx: Context) -> Iterator[Diagnostic]:
        assert isinstance(node, ast.Call)
        literals = [k.value for k in node.keywords if k.arg == "backend" and _is_nccl(k.value)]
        if node.args and _is_nccl(node.args[0]) and ctx.qualname(node.func) in _POSITIONAL_BACKEND:
            literals.append(node.args[0])
        for literal in literals:
            assert isinstance(literal, ast.Constant)
            fix = rewrite_fix(ctx, 'Replace "nccl" with "hccl"', literal_edit(ctx, literal, "hccl"))
            yield ctx.diagnostic(
                self,
                span_of(ctx, literal),
                'the "nccl" backend is CUDA-only; use "hccl" on Ascend',
                fix=fix,
            )
