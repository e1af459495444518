"""Shared pieces of the migration rules: the data table, literal rewrites, `import torch_npu`."""

from __future__ import annotations

import ast
import json
import re
from functools import cache
from importlib import resources
from typing import Any

from npu_lsp.diagnostics import Edit, Fix, Span
from npu_lsp.engine import Context

CUDA_DEVICE = re.compile(r"cuda(:\d+)?")


@cache
def data() -> dict[str, Any]:
    """data/migration.json, loaded once."""
    text = resources.files("npu_lsp.data").joinpath("migration.json").read_text(encoding="utf-8")
    loaded: dict[str, Any] = json.loads(text)
    return loaded


def is_cuda_device_string(node: ast.AST) -> bool:
    """`"cuda"` or `"cuda:N"` as a plain string literal."""
    return (
        isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and CUDA_DEVICE.fullmatch(node.value) is not None
    )


def literal_edit(ctx: Context, node: ast.Constant, new_value: str) -> Edit | None:
    """Rewrite a one-piece string literal's content, keeping its prefix and quotes.

    Returns None for literals we cannot rewrite exactly (implicit concatenation, escapes).
    """
    segment = ctx.segment(node)
    old = str(node.value)
    if not segment or segment.count(old) != 1 or "\\" in segment:
        return None
    try:
        if ast.literal_eval(segment) != old:  # e.g. "cu" "da"
            return None
    except (ValueError, SyntaxError):
        return None
    return ctx.edit(node, segment.replace(old, new_value, 1))


def attr_name_span(node: ast.Attribute) -> Span:
    """The span of just the attribute name in `value.attr` (the last token of the node)."""
    end_line = node.end_lineno or node.lineno
    end_col = (node.end_col_offset or 0) + 1
    return Span(end_line, end_col - len(node.attr), end_line, end_col)


def imports_torch_npu(tree: ast.Module) -> bool:
    """Does the module import torch_npu anywhere (any form)?"""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import) and any(
            a.name == "torch_npu" or a.name.startswith("torch_npu.") for a in node.names
        ):
            return True
        if (
            isinstance(node, ast.ImportFrom)
            and node.module
            and (node.module == "torch_npu" or node.module.startswith("torch_npu."))
        ):
            return True
    return False


def torch_npu_import_edit(ctx: Context) -> Edit | None:
    """An edit adding `import torch_npu` right after the first top-level `import torch`.

    None when torch_npu is already imported or there is no top-level `import torch` to anchor
    on. The edit is identical for every diagnostic in a file, so a fix-all that applies many
    fixes deduplicates it and the import is added once.
    """
    key = ("migration", "torch_npu_import_edit")
    if key in ctx.cache:
        cached: Edit | None = ctx.cache[key]
        return cached
    edit: Edit | None = None
    if not imports_torch_npu(ctx.tree):
        for stmt in ctx.tree.body:
            if isinstance(stmt, ast.Import) and any(a.name == "torch" for a in stmt.names):
                line = stmt.end_lineno or stmt.lineno
                end_col = len(ctx.lines[line - 1]) + 1 if line - 1 < len(ctx.lines) else 1
                # Insert at the end of the line (not the start of the next) so that in a notebook
                # the import stays in the cell that imports torch, and a file without a final
                # newline still gets a separate line.
                newline = "\r\n" if "\r\n" in ctx.text else "\n"
                edit = Edit(Span(line, end_col, line, end_col), f"{newline}import torch_npu")
                break
    ctx.cache[key] = edit
    return edit


def rewrite_fix(ctx: Context, title: str, edit: Edit | None, *, safe: bool = True) -> Fix | None:
    """A fix applying `edit` plus, when needed, the one `import torch_npu` edit."""
    if edit is None:
        return None
    edits = [edit]
    extra = torch_npu_import_edit(ctx)
    if extra is not None:
        edits.append(extra)
    return Fix(title, tuple(edits), safe)
