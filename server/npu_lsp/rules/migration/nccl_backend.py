"""NPU205: the `"nccl"` backend for torch.distributed."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from npu_lsp.diagnostics import Diagnostic, Edit
from npu_lsp.engine import Context
from npu_lsp.registry import Rule, rule
from npu_lsp.rules.migration.groups import findings, message
from npu_lsp.rules.migration.helpers import attr_name_span, rewrite_fix, span_of
from npu_lsp.rules.migration.values import resolve

_BACKEND_NCCL = "torch.distributed.Backend.NCCL"


@rule(code="NPU205", name="nccl-backend", severity="warning", family="migration", fix="sometimes")
class NcclBackend(Rule):
    """## What it does
    Finds the `"nccl"` backend wherever it reaches `torch.distributed.init_process_group`
    (first positional argument or `backend=`), `new_group`, any other call's `backend=`,
    DeepSpeed's `dist_backend=` or Hugging Face's `ddp_backend=`:
    written there, or through a variable, an argparse option's `default=`/`choices=`
    (`backend=args.dist_backend`), `os.environ.get("BACKEND", "nccl")`, a conditional
    expression or a dict entry. Also `dist.Backend.NCCL`, and the `"nccl"` literals such a
    value is compared with (`dist.get_backend() == "nccl"`).

    ## Why is this bad?
    NCCL is NVIDIA's collective library. Ascend's is HCCL, which `torch_npu` registers as the
    `"hccl"` backend (and as `Backend.HCCL`); `"nccl"` fails at start-up on an NPU machine.

    ## Example
    ```python
    import torch.distributed as dist

    parser.add_argument("--dist-backend", default="nccl", type=str)
    args = parser.parse_args()
    dist.init_process_group(backend=args.dist_backend)
    ```

    ## Use instead
    ```python
    import torch.distributed as dist

    parser.add_argument("--dist-backend", default="hccl", type=str)
    args = parser.parse_args()
    dist.init_process_group(backend=args.dist_backend)
    ```

    ## Fix safety
    Safe: the backend name is replaced and `import torch_npu` (which registers `hccl`) is added
    when missing. Every `"nccl"` of the file moves in one fix; none is fixed when one of
    them cannot be rewritten exactly.

    ## References
    - `../shared/reference/migration.md`, "PyTorch code: what changes on Ascend"
    """

    nodes = (ast.Module,)
    triggers = ("nccl", "NCCL")

    def check(self, node: ast.AST, ctx: Context) -> Iterator[Diagnostic]:
        for f in findings(ctx, "backend"):
            yield ctx.diagnostic(
                self,
                span_of(ctx, f.node),
                message(f),
                fix=f.fix,
            )
        if "NCCL" not in ctx.text:
            return
        for attr in ast.walk(ctx.tree):
            if isinstance(attr, ast.Attribute) and resolve(ctx, attr) == _BACKEND_NCCL:
                fix = rewrite_fix(
                    ctx,
                    "Replace `Backend.NCCL` with `Backend.HCCL`",
                    Edit(attr_name_span(ctx, attr), "HCCL"),
                )
                yield ctx.diagnostic(
                    self,
                    span_of(ctx, attr),
                    "`Backend.NCCL` is CUDA-only; use `Backend.HCCL` on Ascend",
                    fix=fix,
                )
