"""The CUDA API renames of a module: `.cuda()` -> `.npu()` (NPU201), `torch.cuda.<name>` ->
`torch.npu.<name>` and `from torch.cuda import ...` (NPU202), `torch.cuda.amp` ->
`torch.npu.amp` and its imports (NPU206).

Each rename's edit is made here once, for the rule that reports it and for the device group
(`groups.device_fixes`), which fixes the renames together with the device strings: moving
`.cuda()` to `.npu()` while a `device="cuda"` of the same file is held back would split one
tensor flow over two devices.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from functools import cache

from npu_lsp.diagnostics import Edit, Span
from npu_lsp.engine import Context
from npu_lsp.rules.migration.dispatch import npu_aware
from npu_lsp.rules.migration.helpers import attr_name_span, char_column, data
from npu_lsp.rules.migration.values import Flow, resolution_value, resolve

_FROM_CUDA = re.compile(r"\bfrom\s+(torch\s*\.\s*cuda)\b")
_FROM_CUDA_AMP = re.compile(r"\bfrom\s+(torch\s*\.\s*cuda)\s*\.\s*amp\b")
#: `torch.cuda.amp` is NPU206, `torch.cuda.nccl` NPU205 (NCCL, not a device API)
OWN_RULE = frozenset({"amp", "nccl"})
_KEY = ("migration", "api renames")


@dataclass(frozen=True)
class Rename:
    """One CUDA API use of the module and the edit that moves it (None: reported, no fix)."""

    node: ast.AST
    code: str
    edit: Edit | None
    title: str


def same_name_on_npu(name: str) -> bool:
    """Does `torch.npu` offer `name` with the same meaning as `torch.cuda.<name>`?"""
    return name in _same_names()


@cache
def _same_names() -> frozenset[str]:
    """The data table's list as a set (asked once per CUDA API use)."""
    return frozenset(data()["torch_cuda_same_name"])


def cuda_call(ctx: Context, node: ast.AST) -> Rename | None:
    """`<x>.cuda(...)` on a tensor or module (not `torch.cuda(...)`)."""
    if not isinstance(node, ast.Call):
        return None
    func = node.func
    if not isinstance(func, ast.Attribute) or func.attr != "cuda":
        return None
    if (resolve(ctx, func) or "").startswith("torch.cuda"):
        return None
    edit = Edit(attr_name_span(ctx, func), "npu")
    return Rename(node, "NPU201", edit, "Replace `.cuda()` with `.npu()`")


def is_cuda_read(ctx: Context, node: ast.AST) -> Rename | None:
    """`<tensor>.is_cuda` (NPU201, no edit): False for NPU tensors. Not when the module
    binds an attribute or defines a function of that name (timm's loader sets its own
    `self.is_cuda` flag)."""
    if not isinstance(node, ast.Attribute) or node.attr != "is_cuda":
        return None
    if not isinstance(node.ctx, ast.Load):
        return None
    b = Flow.of(ctx).b
    if "is_cuda" in b.attrs or "is_cuda" in b.functions:
        return None
    parent = b.parents.get(id(node))
    if isinstance(parent, ast.Call) and parent.func is node:
        return None  # `x.is_cuda()`: some other object's method
    return Rename(node, "NPU201", None, "")


def cuda_attribute(ctx: Context, node: ast.AST) -> Rename | None:
    """`torch.cuda.<name>` (NPU202) or `torch.cuda.amp` (NPU206), through any alias."""
    if not isinstance(node, ast.Attribute) or node.attr == "nccl":
        return None
    if resolve(ctx, node.value) != "torch.cuda":
        return None
    spelled = isinstance(node.value, ast.Attribute)  # `<torch>.cuda.x`, not `cuda.x`
    if node.attr == "amp":
        edit = Edit(attr_name_span(ctx, node.value), "npu") if spelled else None  # type: ignore[arg-type]
        return Rename(node, "NPU206", edit, "Replace `torch.cuda.amp` with `torch.npu.amp`")
    edit = None
    if same_name_on_npu(node.attr) and isinstance(node.value, ast.Attribute):
        edit = Edit(attr_name_span(ctx, node.value), "npu")
    title = f"Replace `torch.cuda.{node.attr}` with `torch.npu.{node.attr}`"
    return Rename(node, "NPU202", edit, title)


def cuda_import(ctx: Context, node: ast.AST) -> Rename | None:
    """`from torch.cuda import <names>` (NPU202), `from torch.cuda.amp import ...` and
    `from torch.cuda import amp` (NPU206)."""
    if not isinstance(node, ast.ImportFrom) or node.level:
        return None
    line = ctx.lines[node.lineno - 1] if node.lineno - 1 < len(ctx.lines) else ""
    start = char_column(ctx, node.lineno, node.col_offset) - 1
    if node.module == "torch.cuda.amp":
        match = _FROM_CUDA_AMP.search(line, start)
        edit = None
        if match:
            span = Span(node.lineno, match.start(1) + 1, node.lineno, match.end(1) + 1)
            edit = Edit(span, "torch.npu")
        return Rename(node, "NPU206", edit, "Import from `torch.npu.amp` instead")
    if node.module != "torch.cuda":
        return None
    names = [a.name for a in node.names if a.name not in OWN_RULE]
    if not names:
        if any(a.name == "amp" for a in node.names):
            return Rename(node, "NPU206", None, "")
        return None
    match = _FROM_CUDA.search(line, start)
    edit = None
    if match and all(same_name_on_npu(n) for n in names) and len(names) == len(node.names):
        span = Span(node.lineno, match.start(1) + 1, node.lineno, match.end(1) + 1)
        edit = Edit(span, "torch.npu")
    return Rename(node, "NPU202", edit, "Import from `torch.npu` instead")


def renames(ctx: Context) -> list[Rename]:
    """Every CUDA API use of the module, in source order (computed once per run). A use is
    found from its own node, the module's imports and definitions and the imports of the
    function it is in, so when the bindings were joined from chunks (the language server's
    incremental analysis) each chunk keeps its renames while those are unchanged; a chunk
    that moved has their edits moved with it."""
    cached: list[Rename] | None = ctx.cache.get(_KEY)
    if cached is not None:
        return cached
    out: list[Rename] = []
    flow = Flow.of(ctx) if "cuda" in ctx.text else None
    if flow is not None and flow.torch_module:
        imports = ctx.scopes.info.imports
        aliases = {n for n, q in imports.items() if q == "torch.cuda"}
        aliases |= {n for local in flow.b.local_imports.values() for n in local}
        if not flow.b.parts:
            out = _renames_in(ctx, flow.b.nodes, aliases)
        else:
            resolution = resolution_value(ctx)
            for part in flow.b.parts:
                hit = part.memo.get(_KEY)
                first = part.first_line()
                if (
                    hit is None
                    or (hit[0][0] is not resolution and hit[0][0] != resolution)
                    or hit[0][1] != aliases
                ):
                    found = _renames_in(ctx, part.nodes, aliases)
                    part.memo[_KEY] = ((resolution, aliases), first, found)
                else:
                    found = hit[2]
                    if first != hit[1]:  # the chunk moved (its trees were renumbered)
                        found = [_shifted(r, first - hit[1]) for r in found]
                        part.memo[_KEY] = (hit[0], first, found)
                out += found
        # `.is_cuda` reads depend on the whole module's bindings: never kept per chunk
        for node in flow.b.nodes.get(ast.Attribute, []):
            if node.attr == "is_cuda" and (read := is_cuda_read(ctx, node)) is not None:  # type: ignore[attr-defined]
                out.append(read)
    out = [r for r in out if not npu_aware(ctx, r.node)]
    out.sort(key=lambda r: (r.node.lineno, r.node.col_offset))  # type: ignore[attr-defined]
    ctx.cache[_KEY] = out
    return out


def _renames_in(
    ctx: Context, nodes: dict[type[ast.AST], list[ast.AST]], aliases: set[str]
) -> list[Rename]:
    out: list[Rename] = []
    for node in nodes.get(ast.Call, []):
        func = node.func  # type: ignore[attr-defined]
        if (
            type(func) is ast.Attribute
            and func.attr == "cuda"
            and (found := cuda_call(ctx, node)) is not None
        ):
            out.append(found)
    for node in nodes.get(ast.Attribute, []):
        if node.attr == "is_cuda":  # type: ignore[attr-defined]
            continue  # `renames` finds these from the whole module's bindings
        value = getattr(node, "value", None)
        if isinstance(value, ast.Attribute) and value.attr != "cuda":
            continue  # cannot name `torch.cuda` (the common case, without resolving)
        if isinstance(value, ast.Name) and value.id not in aliases:
            continue  # `x.y` where `x` is no import of `torch.cuda` (nor a local one)
        if (found := cuda_attribute(ctx, node)) is not None:
            out.append(found)
    for node in nodes.get(ast.ImportFrom, []):
        if (found := cuda_import(ctx, node)) is not None:
            out.append(found)
    return out


def _shifted(r: Rename, delta: int) -> Rename:
    if r.edit is None:
        return r
    s = r.edit.span
    edit = Edit(Span(s.line + delta, s.column, s.end_line + delta, s.end_column), r.edit.new_text)
    return Rename(r.node, r.code, edit, r.title)
