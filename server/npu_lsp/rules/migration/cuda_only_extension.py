"""NPU207: CUDA-only packages and CUDA C++ extensions."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import Rule, rule
from npu_lsp.rules.migration.helpers import data, head_span_of, span_of


def _cuda_module(name: str) -> str | None:
    """The CUDA-only package `name` belongs to (`cupy.linalg` -> `cupy`), if any."""
    for module in data()["cuda_only_modules"]:
        if name == module or name.startswith(module + "."):
            return str(module)
    return None


def _has_cu_source(call: ast.Call) -> bool:
    """Does a `load(...)`-style call name `.cu`/`.cuh` sources or pass `cuda_sources=`?"""
    if any(k.arg == "cuda_sources" for k in call.keywords):
        return True
    for node in ast.walk(call):
        if isinstance(node, ast.Constant) and str(node.value).endswith((".cu", ".cuh")):
            return True
    return False


@rule(code="NPU207", name="cuda-only-extension", severity="warning", family="migration")
class CudaOnlyExtension(Rule):
    """## What it does
    Finds code that only runs on NVIDIA hardware: imports of CUDA-only packages (CuPy, PyCUDA,
    Triton, Apex, Numba's CUDA target, flash-attn, xFormers; the list is in
    `data/migration.json`), `torch.utils.cpp_extension.CUDAExtension`, and
    `torch.utils.cpp_extension.load`/`load_inline` given `.cu` sources.

    ## Why is this bad?
    These kernels are compiled for NVIDIA GPUs and have no Ascend build. Each one has to be
    rewritten (in Ascend C, or as a composition of CANN operators) or replaced by a `torch_npu`
    fused operator before the model can run on an NPU; a migration plan should list them.

    ## Example
    ```python
    import cupy as cp
    from torch.utils.cpp_extension import CUDAExtension

    ext = CUDAExtension("fused", ["fused.cpp", "fused_kernel.cu"])
    ```

    ## Use instead
    Implement the kernel in Ascend C, or use an existing CANN / `torch_npu` operator (for
    attention: `torch_npu.npu_fusion_attention`).

    ## Fix safety
    No fix: replacing a custom kernel is a design decision.

    ## References
    - `../shared/reference/migration.md`, "PyTorch code: what changes on Ascend"
    """

    nodes = (ast.Import, ast.ImportFrom, ast.Call)
    # A file importing only `triton` or `cupy` mentions neither torch nor cuda.
    triggers = ("torch", "cuda", "cupy", "triton", "apex", "flash_attn", "xformers")
    #: Everything flagged is an import of a CUDA-only package or a call that resolves through
    #: an import to `torch.utils.cpp_extension`, so no torch import is required up front.
    requires_imports = ()

    def check(self, node: ast.AST, ctx: Context) -> Iterator[Diagnostic]:
        reasons: dict[str, str] = data()["cuda_only_modules"]
        if isinstance(node, ast.Import):
            for alias in node.names:
                module = _cuda_module(alias.name)
                if module:
                    yield ctx.diagnostic(
                        self, span_of(ctx, alias), f"`{alias.name}` is CUDA-only: {reasons[module]}"
                    )
        elif isinstance(node, ast.ImportFrom):
            if node.level or not node.module:
                return
            candidates = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            module = next((m for m in map(_cuda_module, candidates) if m), None)
            if module:
                yield ctx.diagnostic(
                    self, head_span_of(ctx, node), f"`{module}` is CUDA-only: {reasons[module]}"
                )
        elif isinstance(node, ast.Call):
            name = ctx.qualname(node.func)
            apis: dict[str, str] = data()["cuda_extension_apis"]
            if name not in apis:
                return
            if name.endswith("CUDAExtension") or _has_cu_source(node):
                yield ctx.diagnostic(
                    self,
                    span_of(ctx, node.func),
                    f"`{name.rsplit('.', 1)[-1]}` {apis[name]}, which has no Ascend build",
                )
