"""NPU207: CUDA-only packages and CUDA C++ extensions."""

from __future__ import annotations

import ast
import unicodedata
from collections.abc import Iterator
from functools import cache

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import Rule, rule
from npu_lsp.rules.migration.bindings import const_str
from npu_lsp.rules.migration.helpers import data, head_span_of, span_of
from npu_lsp.rules.migration.values import Flow, qualnames, string_values


def _cuda_module(name: str) -> str | None:
    """The CUDA-only package `name` belongs to (`cupy.linalg` -> `cupy`), if any."""
    for module in data()["cuda_only_modules"]:
        if name == module or name.startswith(module + "."):
            return str(module)
    return None


@cache
def _package_roots() -> tuple[str, ...]:
    """The top-level names of the CUDA-only packages (`numba.cuda` -> `numba`)."""
    return tuple(sorted({m.split(".", 1)[0] for m in data()["cuda_only_modules"]}))


def _may_import_cuda_package(text: str) -> bool:
    """Can the file import a CUDA-only package at all? An import spells the package's
    top-level name out; identifiers are NFKC-normalised, so a non-ASCII text is looked at
    normalised. A cheap test that spares files merely mentioning "torch" or "cuda" the
    module's whole value flow."""
    if not text.isascii():
        text = unicodedata.normalize("NFKC", text)
    return any(root in text for root in _package_roots())


_CUDA_SUFFIXES = (".cu", ".cuh")
#: Keyword arguments of `load`/`load_inline` that only mean something for CUDA builds.
_CUDA_KEYWORDS = frozenset({"cuda_sources", "extra_cuda_cflags"})


def _builds_cuda(call: ast.Call, ctx: Context) -> bool:
    """Does a `load(...)`-style call compile CUDA: `.cu`/`.cuh` sources (also through
    variables, lists grown later, `os.path.join`, `glob`), `cuda_sources=`,
    `extra_cuda_cflags=` or `with_cuda=True`?"""
    for kw in call.keywords:
        if kw.arg in _CUDA_KEYWORDS:
            return True
        if (
            kw.arg == "extra_compile_args"
            and isinstance(kw.value, ast.Dict)
            and any(const_str(k) == "nvcc" for k in kw.value.keys)
        ):
            return True  # flags for nvcc: the extension has CUDA sources
        if kw.arg == "with_cuda" and isinstance(kw.value, ast.Constant) and kw.value.value:
            return True
    parts = [*call.args, *(k.value for k in call.keywords if k.arg in ("sources", None))]
    return any(
        value.endswith(_CUDA_SUFFIXES) for part in parts for value in string_values(ctx, part)
    )


@rule(code="NPU207", name="cuda-only-extension", severity="warning", family="migration")
class CudaOnlyExtension(Rule):
    """## What it does
    Finds code that only runs on NVIDIA hardware: imports of CUDA-only packages (CuPy, PyCUDA,
    Triton, Apex, Numba's CUDA target, flash-attn, xFormers, TensorRT, NVML; the list is in
    `data/migration.json`), `torch.utils.cpp_extension.CUDAExtension`, and
    `torch.utils.cpp_extension.load`/`load_inline` given `.cu` sources, `cuda_sources=`,
    `extra_cuda_cflags=` or `with_cuda=True`, and `CppExtension` given `.cu` sources or
    `extra_compile_args={"nvcc": ...}` (`BuildExtension` compiles `.cu` files with nvcc
    whatever the extension class). The builder is recognised through import
    aliases and local names (`extension = CUDAExtension`,
    `ext = CUDAExtension if with_cuda else CppExtension`), and sources through variables,
    lists grown with `+=`/`append`, `os.path.join(...)` and `glob` patterns.
    `BuildExtension` is not reported: it builds C++ (and `torch_npu`) extensions too.

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

    nodes = (ast.Module,)
    # A file importing only `triton` or `cupy` mentions neither torch nor cuda.
    triggers = (
        "torch",
        "cuda",
        "cupy",
        "triton",
        "apex",
        "flash_attn",
        "xformers",
        "tensorrt",
        "pynvml",
    )
    #: Everything flagged is an import of a CUDA-only package or a call that resolves through
    #: an import to `torch.utils.cpp_extension`, so no torch import is required up front.
    requires_imports = ()

    def check(self, node: ast.AST, ctx: Context) -> Iterator[Diagnostic]:
        # every builder is imported from torch.utils.cpp_extension: no calls to look at
        # in a file that never names it
        builders = "cpp_extension" in ctx.text
        if not builders and not _may_import_cuda_package(ctx.text):
            return  # nothing this rule reports can be in the file
        index = Flow.of(ctx).b.nodes
        kinds = (ast.Import, ast.ImportFrom, ast.Call)
        for kind in kinds if builders else kinds[:2]:
            for found in index.get(kind, []):
                yield from self._check_node(found, ctx)

    def _check_node(self, node: ast.AST, ctx: Context) -> Iterator[Diagnostic]:
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
            key = ("migration", "mentions cpp_extension")
            if key not in ctx.cache:  # every builder is imported from torch.utils.cpp_extension
                ctx.cache[key] = "cpp_extension" in ctx.text
            if not ctx.cache[key]:
                return
            apis: dict[str, str] = data()["cuda_extension_apis"]
            names = qualnames(ctx, node.func) & apis.keys()
            if not names:
                return
            name = sorted(names)[0]  # CUDAExtension before load when an alias may be both
            if name.endswith("CUDAExtension") or _builds_cuda(node, ctx):
                yield ctx.diagnostic(
                    self,
                    span_of(ctx, node.func),
                    f"`{name.rsplit('.', 1)[-1]}` {apis[name]}, which has no Ascend build",
                )
