"""Code of a module that already takes the Ascend path: what the migration rules leave alone.

Device-generic code (Accelerate, MMEngine, Lightning, timm...) dispatches on the backend:

    if is_npu_available():
        torch.npu.empty_cache()
    elif is_cuda_available():
        torch.cuda.empty_cache()

On an Ascend machine the NPU branch runs and the CUDA branch never does (its test is a CUDA
query, false there, or it comes after the NPU branch). Moving the CUDA branch to `npu`
changes nothing on Ascend and breaks the code on the GPUs it still supports, so an `if`/`elif`
chain or a conditional expression any of whose tests names the NPU (`is_npu_available()`,
`hasattr(torch, "npu")`, `device.type == "npu"`, `torch.npu.is_available()`) is left as it
is, and so are the flags such a chain tests, computed ahead of it
(`self.is_cuda = device.type == "cuda" and torch.cuda.is_available()` for
`if self.is_cuda: ... elif self.is_npu: ...`). So is the body of a method named `cuda`: a class's own implementation of `.cuda()`
(`super().cuda(device)`, `torch.device("cuda", index)`) beside its `.npu()`; its callers are
what moves.

The CUDA query choosing a branch that runs CUDA-only code is left alone too:
`if torch.cuda.is_available() and CUDA_HOME is not None: extension = CUDAExtension ...` in
a setup.py (Deformable-DETR's `models/ops/setup.py`), `if x.is_cuda:` before a Triton
kernel whose fallback is what an NPU needs (whisper's `timing.py`). The query asks whether
the CUDA code can run, not where the tensors live: renamed to the NPU it would send the
NPU into nvcc builds and Triton kernels, and break the CUDA build it was written for. Not
Apex (replaced on Ascend, `cuda_only_replaced` in data/migration.json), and not a branch
that also moves data with `.cuda()`: that is the program's GPU path, which the NPU takes.
So is a function's returned "is it on CUDA?" (`return e.device.type == "cuda"`) in a module
that imports CUDA-only kernels (litgpt's thunder executor: its checkers route tensors to the
Triton kernels of a sibling package).

The NPU uses in such code need `torch_npu` only once the NPU branch is taken, and a test
that can only be true with `torch_npu` loaded (an availability query of the project, a
device that is an NPU, the left side of `device.type == "npu" and torch.npu...`) guards them: `import torch_npu` at the top would break the module
on every machine without it (NPU209 skips them, `npu_guarded`). A test that itself reads
`torch.npu` guards nothing: without `torch_npu` it fails first.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING

from npu_lsp.engine import Context
from npu_lsp.locate import folder_of_file, locate

if TYPE_CHECKING:
    from npu_lsp.scope import ModuleInfo

_KEY = ("migration", "npu-aware regions")
_NPU_NAME = re.compile(r"(?:^|_)npu(?:$|_)", re.IGNORECASE)
_NPU_DEVICE = re.compile(r"npu(?::\d*)?")
Position = tuple[int, int]


@dataclass(frozen=True)
class Region:
    start: Position
    end: Position
    #: does the region's test prove `torch_npu` loaded (no `torch.npu` read in the test)?
    guards: bool


def _span(node: ast.AST) -> tuple[Position, Position]:
    return (
        (node.lineno, node.col_offset),  # type: ignore[attr-defined]
        (node.end_lineno or node.lineno, node.end_col_offset or 0),  # type: ignore[attr-defined]
    )


def _names_npu(test: ast.AST) -> tuple[bool, bool]:
    """(does `test` name the NPU, does it read `torch.npu` itself)."""
    names = reads_torch_npu = False
    for node in ast.walk(test):
        if isinstance(node, ast.Name) and _NPU_NAME.search(node.id):
            names = True
        elif isinstance(node, ast.Attribute) and _NPU_NAME.search(node.attr):
            names = True
            if node.attr == "npu" and isinstance(node.value, ast.Name) and node.value.id == "torch":
                reads_torch_npu = True
        elif (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and _NPU_DEVICE.fullmatch(node.value)
        ):
            names = True
    return names, reads_torch_npu


def _chain_tests(node: ast.If) -> list[ast.expr]:
    tests = [node.test]
    while len(node.orelse) == 1 and isinstance(node.orelse[0], ast.If):
        node = node.orelse[0]
        tests.append(node.test)
    return tests


def regions(ctx: Context) -> list[Region]:
    """The NPU-aware regions of the module, computed once per run."""
    cached: list[Region] | None = ctx.cache.get(_KEY)
    if cached is not None:
        return cached
    out: list[Region] = []
    text = ctx.text
    if _may_run_cuda_only(ctx):
        out += _cuda_only_branches(ctx)
    if "npu" in text or "NPU" in text or "def cuda" in text:
        elifs: set[int] = set()
        flags: set[tuple[str, str]] = set()
        assigns: list[ast.Assign | ast.AnnAssign] = []
        for node in ast.walk(ctx.tree):
            if isinstance(node, (ast.Assign, ast.AnnAssign)):
                assigns.append(node)
                continue
            if isinstance(node, ast.If):
                if len(node.orelse) == 1 and isinstance(node.orelse[0], ast.If):
                    elifs.add(id(node.orelse[0]))
                if id(node) in elifs:
                    continue  # part of the chain of the `if` above it
                tests = _chain_tests(node)
            elif isinstance(node, ast.IfExp):
                tests = [node.test]
            elif isinstance(node, ast.BoolOp) and isinstance(node.op, ast.And):
                # `device.type == "npu" and torch.npu.is_available()`: the right side runs
                # only once the left has named the NPU
                tests = [node.values[0]]
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == "cuda":
                out.append(Region(*_span(node), guards=False))
                continue
            else:
                continue
            named = [_names_npu(t) for t in tests]
            if any(n for n, _ in named):
                guards = not any(r for _, r in named)
                out.append(Region(*_span(node), guards=guards))
                for t in tests:
                    flags |= _flags(t)
        # `self.is_cuda = device.type == "cuda" and torch.cuda.is_available()` beside
        # `self.is_npu = ...`, tested by `if self.is_cuda: ... elif self.is_npu: ...`: the
        # flag is the dispatch's own test, computed ahead of it
        for a in assigns:
            targets = a.targets if isinstance(a, ast.Assign) else [a.target]
            if len(targets) == 1 and _flag_key(targets[0]) in flags:
                out.append(Region(*_span(a), guards=False))
    ctx.cache[_KEY] = out
    return out


# ---- branches that run CUDA-only code
_CUDA_SOURCES = (".cu", ".cuh")
#: an extension build names one of these (`from torch.utils.cpp_extension import ...`)
_BUILD_WORDS = ("cpp_extension", "CUDA_HOME")
_CPP_EXTENSION = "torch.utils.cpp_extension."


def _may_run_cuda_only(ctx: Context) -> bool:
    """Can the module hold a CUDA-only branch at all? Without a CUDA query there is none;
    without an extension build word, a CUDA-only package's name or an import of a module
    of the project, it cannot run CUDA-only code."""
    text = ctx.text
    if "cuda" not in text:
        return False
    if any(w in text for w in _BUILD_WORDS):
        return True
    from npu_lsp.rules.migration.helpers import data

    if any(root.split(".")[0] in text for root in data()["cuda_only_modules"]):
        return True
    return "from ." in text or getattr(ctx.scopes, "workspace", None) is not None


def _cuda_only_branches(ctx: Context) -> list[Region]:
    """The tests of `if <CUDA query>: <CUDA-only code>` and of `<CUDA-only> if <CUDA query>
    else ...`. Only the test: what the branch holds besides is migrated as anywhere."""
    out: list[Region] = []
    local = _local_functions(ctx)
    for node in ast.walk(ctx.tree):
        if isinstance(node, ast.If):
            branch: list[ast.stmt] | list[ast.expr] = node.body
        elif isinstance(node, ast.IfExp):
            branch = [node.body]
        else:
            continue
        if _queries_cuda(ctx, node.test) and _cuda_only(ctx, branch, local, 1):
            out.append(Region(*_span(node.test), guards=False))
    if _module_imports_cuda_only(ctx):
        out += [Region(*_span(v), guards=False) for v in _device_predicates(ctx)]
    return out


def _module_imports_cuda_only(ctx: Context) -> bool:
    """Does the module import CUDA-only kernels at its top level (itself, or through a
    module or package of the project: litgpt's unsloth executor `import kernels`, a package
    whose `__init__` re-exports Triton kernels)?"""
    for st in ctx.tree.body:
        tops = st.body + st.orelse if isinstance(st, (ast.If, ast.Try)) else [st]
        for top in tops:
            if isinstance(top, (ast.Import, ast.ImportFrom)) and _imports_cuda_only(ctx, top):
                return True
    return False


def _device_predicates(ctx: Context) -> list[ast.expr]:
    """The returned values of functions that answer "is this tensor on CUDA?" (`return
    e.device.type == "cuda" and g.device.type == "cuda"`): in a module running CUDA-only
    kernels they route tensors to those kernels (thunder executors' checkers), so the
    question is whether the kernels can run, as `if x.is_cuda:` before a Triton call is."""
    out: list[ast.expr] = []
    for node in ast.walk(ctx.tree):
        if isinstance(node, ast.Return) and node.value is not None and _compares_cuda(node.value):
            out.append(node.value)
    return out


def _compares_cuda(e: ast.expr) -> bool:
    """Is `e` a comparison with "cuda", or an `and` / `or` / `not` of tests holding one?"""
    if isinstance(e, ast.BoolOp):
        return any(_compares_cuda(v) for v in e.values)
    if isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.Not):
        return _compares_cuda(e.operand)
    return isinstance(e, ast.Compare) and any(
        isinstance(c, ast.Constant) and c.value == "cuda" for c in (e.left, *e.comparators)
    )


def _queries_cuda(ctx: Context, test: ast.expr) -> bool:
    """Does the test ask about CUDA: `torch.cuda.<query>`, `<tensor>.is_cuda`, `CUDA_HOME`?"""
    from npu_lsp.rules.migration.values import resolve

    for node in ast.walk(test):
        if isinstance(node, ast.Attribute) and (
            node.attr == "is_cuda" or resolve(ctx, node.value) == "torch.cuda"
        ):
            return True
        if isinstance(node, (ast.Name, ast.Attribute)) and resolve(ctx, node) == (
            _CPP_EXTENSION + "CUDA_HOME"
        ):
            return True
    return False


def _local_functions(ctx: Context) -> dict[str, list[ast.FunctionDef | ast.AsyncFunctionDef]]:
    out: dict[str, list[ast.FunctionDef | ast.AsyncFunctionDef]] = {}
    for st in ctx.tree.body:
        if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef)):
            out.setdefault(st.name, []).append(st)
    return out


def _cuda_only(
    ctx: Context,
    body: list[ast.stmt] | list[ast.expr],
    local: dict[str, list[ast.FunctionDef | ast.AsyncFunctionDef]],
    hops: int,
) -> bool:
    """Does the branch run code with no Ascend build: a CUDA extension build (the
    `CUDAExtension` builder, `.cu` sources, flags for nvcc), a CUDA-only package or a module
    of the project that imports one, or (`hops` deep) a call of a function of this module
    that does? Not when it also moves data with `.cuda()`: that is the GPU path of the
    program, which an NPU takes once migrated."""
    found = False
    for top in body:
        for node in ast.walk(top):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "cuda"
            ):
                return False
            if found:
                continue
            found = _uses_cuda_only(ctx, node, local, hops)
    return found


def _uses_cuda_only(
    ctx: Context,
    node: ast.AST,
    local: dict[str, list[ast.FunctionDef | ast.AsyncFunctionDef]],
    hops: int,
) -> bool:
    """Is this node of a branch CUDA-only code (see `_cuda_only`)?"""
    from npu_lsp.rules.migration.values import resolve

    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value.endswith(_CUDA_SOURCES) or node.value == "nvcc"
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return _imports_cuda_only(ctx, node)
    if isinstance(node, ast.Name):
        qual = resolve(ctx, node)
        if qual == _CPP_EXTENSION + "CUDAExtension" or _in_packages(qual, _kernel_roots()):
            return True  # the builder, or `cupy.asarray(x)` of a module-level import
        if hops and isinstance(node.ctx, ast.Load) and node.id in local:
            return any(_cuda_only(ctx, fn.body, local, hops - 1) for fn in local[node.id])
    return False


def _imports_cuda_only(ctx: Context, node: ast.Import | ast.ImportFrom) -> bool:
    roots = _kernel_roots()
    if isinstance(node, ast.Import):
        names = [a.name for a in node.names]
    elif node.level:
        names = [_absolute(ctx, node)]
    else:
        names = [node.module or ""]
    for name in names:
        if _in_packages(name, roots):
            return True
        relative = isinstance(node, ast.ImportFrom) and node.level
        info = _project_module(ctx, name if relative else _located(ctx, name))
        if info is not None and _imports_kernels(ctx, info, roots):
            return True  # whisper's `from .triton_ops import median_filter_cuda`
    return False


def _imports_kernels(ctx: Context, info: ModuleInfo, roots: tuple[str, ...]) -> bool:
    """Does the project module import a CUDA-only package, itself or (a package) through
    the submodules its `__init__` re-exports from?"""
    found = info.imports.values()
    if any(_in_packages(q, roots) for q in found):
        return True
    inner = {q.rpartition(".")[0] for q in found if q.startswith(info.module + ".")}
    for name in inner:
        sub = _project_module(ctx, name)
        if sub is not None and any(_in_packages(q, roots) for q in sub.imports.values()):
            return True
    return False


def _located(ctx: Context, name: str) -> str:
    """The module of the project an absolute import finds, as Python does from the file's
    folder when no top-level module has the name (`locate`): litgpt's unsloth executor
    `sys.path.append(str(Path(__file__).parent))` then `import kernels`."""
    index = getattr(ctx.scopes, "workspace", None)
    if index is None or not name:
        return name
    return locate(name, folder_of_file(ctx.scopes.info.module, ctx.path), index.has_package)


@cache
def _kernel_roots() -> tuple[str, ...]:
    """The CUDA-only packages a CUDA-only branch may use. Not Apex: it is replaced on
    Ascend (torch_npu's AMP and fused optimizers), so a branch using it is code to migrate."""
    from npu_lsp.rules.migration.helpers import data

    replaced = set(data()["cuda_only_replaced"])
    return tuple(m for m in data()["cuda_only_modules"] if m not in replaced)


def _in_packages(name: str | None, roots: tuple[str, ...]) -> bool:
    return name is not None and any(name == m or name.startswith(m + ".") for m in roots)


def _absolute(ctx: Context, node: ast.ImportFrom) -> str:
    """The module a relative import names (`from .triton_ops import x` in `whisper.timing`)."""
    module = ctx.scopes.info.module
    package = module if ctx.path.endswith("__init__.py") else module.rpartition(".")[0]
    for _ in range(node.level - 1):
        package = package.rpartition(".")[0]
    return f"{package}.{node.module}" if node.module else package


def _project_module(ctx: Context, name: str) -> ModuleInfo | None:
    """The summary of module `name` of the project, if the index has it."""
    index = getattr(ctx.scopes, "workspace", None)
    if index is None or not name:
        return None
    found: ModuleInfo | None = index.module(name)
    return found


def _flag_key(node: ast.AST) -> tuple[str, str] | None:
    if isinstance(node, ast.Name):
        return ("name", node.id)
    if isinstance(node, ast.Attribute):
        return ("attr", node.attr)
    return None


def _flags(test: ast.AST) -> set[tuple[str, str]]:
    """The names and attributes a test reads as truth values (`if self.is_cuda:`,
    `elif use_npu and not cpu:`), not as operands of a comparison."""
    if isinstance(test, ast.BoolOp):
        return set().union(*(_flags(v) for v in test.values))
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return _flags(test.operand)
    key = _flag_key(test)
    return {key} if key is not None else set()


def _inside(node: ast.AST, region: Region) -> bool:
    at = (getattr(node, "lineno", 0), getattr(node, "col_offset", 0))
    return region.start <= at < region.end


def npu_aware(ctx: Context, node: ast.AST) -> bool:
    """Is `node` in a dispatch that already has an NPU branch, or in a `cuda` method?"""
    found = regions(ctx)
    return bool(found) and any(_inside(node, r) for r in found)


def npu_guarded(ctx: Context, node: ast.AST) -> bool:
    """Is `node` only reached once a test has shown `torch_npu` loaded (see module doc)?"""
    if any(r.guards and _inside(node, r) for r in regions(ctx)):
        return True
    # the NPU implementation of a method (`def npu(self)`: `v.npu()` for each tensor)
    return _in_npu_method(ctx, node)


def _in_npu_method(ctx: Context, node: ast.AST) -> bool:
    from npu_lsp.rules.migration.values import Flow

    methods = Flow.of(ctx).b.functions.get("npu", [])
    return any(_inside(node, Region(*_span(fn), guards=True)) for fn in methods)
