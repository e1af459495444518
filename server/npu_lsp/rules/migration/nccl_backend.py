"""NPU205: the `"nccl"` backend for torch.distributed."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from npu_lsp.diagnostics import Diagnostic, Edit
from npu_lsp.engine import Context
from npu_lsp.registry import Rule, rule
from npu_lsp.rules.migration.dispatch import npu_aware
from npu_lsp.rules.migration.groups import Finding, findings, message, rendered
from npu_lsp.rules.migration.helpers import attr_name_span, data, rewrite_fix, span_of
from npu_lsp.rules.migration.values import Flow, qualnames, resolve

_BACKEND_NCCL = "torch.distributed.Backend.NCCL"


@rule(code="NPU205", name="nccl-backend", severity="warning", family="migration", fix="sometimes")
class NcclBackend(Rule):
    """## What it does
    Finds the `"nccl"` backend wherever it reaches `torch.distributed.init_process_group`
    (first positional argument or `backend=`), `new_group`, any other call's `backend=`,
    DeepSpeed's `dist_backend=` or Hugging Face's `ddp_backend=`:
    written there, or through a variable, an argparse option's `default=`/`choices=`
    (`backend=args.dist_backend`), `os.environ.get("BACKEND", "nccl")`, a conditional
    expression or a dict entry. Also `dist.Backend.NCCL`, the `"nccl"` literals such a
    value is compared with (`dist.get_backend() == "nccl"`), and NCCL-specific queries and
    bindings through any alias: `torch.distributed.is_nccl_available()` (False on Ascend,
    so a `backend = "nccl" if dist.is_nccl_available() else "gloo"` silently falls back to
    Gloo), `torch.distributed.ProcessGroupNCCL` and `torch.cuda.nccl.*` (the list is in
    `data/migration.json`).

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
    them cannot be rewritten exactly. `is_nccl_available` written as an attribute
    (`dist.is_nccl_available()`) becomes `is_hccl_available` (torch_npu adds it to
    `torch.distributed`); a name imported with `from ... import is_nccl_available`,
    `ProcessGroupNCCL` and `torch.cuda.nccl` are reported without a fix, and the message
    says why.

    ## References
    - `../shared/reference/migration.md`, "PyTorch code: what changes on Ascend"
    """

    nodes = (ast.Module,)
    #: also modules that never import torch: a config module's backend value another module
    #: of the project reads as one (`values.Flow.torch_module`)
    requires_imports = ()
    triggers = ("nccl", "NCCL")

    def _made(self, ctx: Context, f: Finding) -> Diagnostic:
        return ctx.diagnostic(self, span_of(ctx, f.node), message(f), fix=f.fix)

    def check(self, node: ast.AST, ctx: Context) -> Iterator[Diagnostic]:
        for f in findings(ctx, "backend"):
            yield rendered(ctx, self.code, f.source, f.fix, f.why, self._made, ctx, f)
        if "nccl" in ctx.text:
            yield from self._nccl_apis(ctx)
        if "NCCL" not in ctx.text:
            return
        for attr in Flow.of(ctx).b.nodes.get(ast.Attribute, []):
            if (
                isinstance(attr, ast.Attribute)
                and attr.attr == "NCCL"
                and resolve(ctx, attr) == _BACKEND_NCCL
                and not npu_aware(ctx, attr)
            ):
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

    def _nccl_apis(self, ctx: Context) -> Iterator[Diagnostic]:
        """`is_nccl_available`, `ProcessGroupNCCL`, `torch.cuda.nccl` through any alias,
        each once at the expression naming it (not again for `.version` after it)."""
        table: dict[str, dict[str, str]] = data()["nccl_apis"]
        flow = Flow.of(ctx)
        for node in [*flow.b.nodes.get(ast.Attribute, []), *flow.b.nodes.get(ast.Name, [])]:
            last = node.attr if isinstance(node, ast.Attribute) else getattr(node, "id", "")
            if "nccl" not in last.lower() or not isinstance(node.ctx, ast.Load):  # type: ignore[attr-defined]
                continue
            names = qualnames(ctx, node) & table.keys()
            if not names or npu_aware(ctx, node):
                continue
            name = sorted(names)[0]
            entry = table[name]
            short = name.removeprefix("torch.distributed.distributed_c10d.")
            short = short.removeprefix("torch.distributed.")
            shown = name if short == name else f"torch.distributed.{short}"
            fix = None
            if "npu" in entry and isinstance(node, ast.Attribute):
                fix = rewrite_fix(
                    ctx,
                    f"Replace `{node.attr}` with `{entry['npu']}`",
                    Edit(attr_name_span(ctx, node), entry["npu"]),
                )
            elif "npu" in entry:
                why = f"use `torch.distributed.{entry['npu']}` (no automatic fix: imported by name)"
                yield ctx.diagnostic(
                    self, span_of(ctx, node), f"`{shown}` asks for NCCL, absent on Ascend; {why}"
                )
                continue
            if "npu" in entry:
                message_text = (
                    f"`{shown}` asks for NCCL, absent on Ascend (always False there); "
                    f"use `torch.distributed.{entry['npu']}`"
                )
            else:
                message_text = f"`{shown}` is NCCL-only: {entry['why']} (no automatic fix)"
            yield ctx.diagnostic(self, span_of(ctx, node), message_text, fix=fix)
