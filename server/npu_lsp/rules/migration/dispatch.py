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

from npu_lsp.engine import Context

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
