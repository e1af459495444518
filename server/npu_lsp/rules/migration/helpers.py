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
_SIMPLE_LITERAL = re.compile(r"(?P<prefix>[rRuU]?)(?P<q>['\"])(?P<body>[^'\"\\\\]*)(?P=q)")


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


def char_column(ctx: Context, line: int, byte_offset: int) -> int:
    """The 1-based code-point column of a 0-based UTF-8 byte offset (see `columns.py`)."""
    return ctx.column(line, byte_offset)


def span_of(ctx: Context, node: ast.AST) -> Span:
    """The node's span with code-point columns (the engine's one conversion)."""
    return ctx.span(node)


def head_span_of(ctx: Context, node: ast.AST) -> Span:
    """The span of a statement's first line only (e.g. a multi-line `from x import (...)`)."""
    span = span_of(ctx, node)
    if span.end_line == span.line:
        return span
    text = ctx.lines[span.line - 1] if span.line <= len(ctx.lines) else ""
    return Span(span.line, span.column, span.line, max(len(text.rstrip()) + 1, span.column + 1))


def literal_edit(ctx: Context, node: ast.Constant, new_value: str) -> Edit | None:
    """Rewrite a one-line string literal's content, keeping its prefix and quotes.

    Returns None for literals we cannot rewrite exactly (implicit concatenation, escapes,
    literals spanning lines).
    """
    span = span_of(ctx, node)
    if span.end_line != span.line or span.line > len(ctx.lines):
        return None
    # Sliced from the cached lines: ast.get_source_segment re-splits the whole text per call.
    segment = ctx.lines[span.line - 1][span.column - 1 : span.end_column - 1]
    match = _SIMPLE_LITERAL.fullmatch(segment)
    # The text between the quotes must be the value itself: no escapes, no "cu" "da".
    if match is None or match.group("body") != str(node.value):
        return None
    return Edit(span, match.group("prefix") + match.group("q") + new_value + match.group("q"))


def attr_name_span(ctx: Context, node: ast.Attribute) -> Span:
    """The span of just the attribute name in `value.attr` (the last token of the node)."""
    end = span_of(ctx, node)
    return Span(end.end_line, end.end_column - len(node.attr), end.end_line, end.end_column)


def imports_torch_npu(tree: ast.Module, text: str) -> bool:
    """Does the module import torch_npu anywhere (any form)?"""
    if "torch_npu" not in text:  # the common case, without walking the tree
        return False
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


def _imports_torch(stmt: ast.stmt) -> bool:
    """`import torch`, `import torch.nn as nn`, `from torch import nn`, `from torch.x import y`."""
    if isinstance(stmt, ast.Import):
        return any(a.name == "torch" or a.name.startswith("torch.") for a in stmt.names)
    if isinstance(stmt, ast.ImportFrom) and not stmt.level and stmt.module:
        return stmt.module == "torch" or stmt.module.startswith("torch.")
    return False


def torch_npu_import_edit(ctx: Context) -> Edit | None:
    """An edit adding `import torch_npu` right after the first import of torch
    (`import torch`, `import torch.distributed as dist`, `from torch import nn`...), at its
    indentation: a top-level one if there is one, else one inside a top-level `try`/`if`/
    `with` block (not `if TYPE_CHECKING:`), else one inside a function.

    None when torch_npu is already imported or no torch import starts its own line. The edit
    is identical for every diagnostic in a file, so a fix-all that applies many fixes
    deduplicates it and the import is added once.
    """
    key = ("migration", "torch_npu_import_edit")
    if key in ctx.cache:
        cached: Edit | None = ctx.cache[key]
        return cached
    edit: Edit | None = None
    if not imports_torch_npu(ctx.tree, ctx.text):
        anchor = _torch_import_anchor(ctx)
        if anchor is not None:
            line = anchor.end_lineno or anchor.lineno
            end_col = len(ctx.lines[line - 1]) + 1 if line - 1 < len(ctx.lines) else 1
            first = ctx.lines[anchor.lineno - 1]
            indent = first[: len(first) - len(first.lstrip())]
            # Insert at the end of the line (not the start of the next) so that in a notebook
            # the import stays in the cell that imports torch, and a file without a final
            # newline still gets a separate line.
            newline = "\r\n" if "\r\n" in ctx.text else "\n"
            edit = Edit(Span(line, end_col, line, end_col), f"{newline}{indent}import torch_npu")
    ctx.cache[key] = edit
    return edit


def _torch_import_anchor(ctx: Context) -> ast.stmt | None:
    """The torch import to put `import torch_npu` after (see `torch_npu_import_edit`)."""
    nested: ast.stmt | None = None
    in_function: ast.stmt | None = None
    todo: list[tuple[ast.stmt, int]] = [(stmt, 0) for stmt in reversed(ctx.tree.body)]
    while todo:
        stmt, depth = todo.pop()
        if _imports_torch(stmt) and _starts_line(ctx, stmt):
            if depth == 0:
                return stmt
            if depth == 1 and nested is None:
                nested = stmt
            elif depth == 2 and in_function is None:
                in_function = stmt
            continue
        if isinstance(stmt, ast.If) and "TYPE_CHECKING" in ast.dump(stmt.test):
            continue  # never runs
        inner = 2 if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) else 1
        blocks: list[list[ast.stmt]] = [
            getattr(stmt, name)
            for name in ("body", "orelse", "finalbody")
            if isinstance(getattr(stmt, name, None), list)
        ]
        blocks += [h.body for h in getattr(stmt, "handlers", [])]
        for block in reversed(blocks):
            todo.extend((s, max(depth, inner)) for s in reversed(block))
    return nested or in_function


def _starts_line(ctx: Context, stmt: ast.stmt) -> bool:
    """Is `stmt` the first thing on its line (not `try: import torch`, not after a `;`)?"""
    if stmt.lineno > len(ctx.lines):
        return False
    column = ctx.column(stmt.lineno, stmt.col_offset)
    return not ctx.lines[stmt.lineno - 1][: column - 1].strip()


def rewrite_fix(
    ctx: Context,
    title: str,
    edit: Edit | None,
    *,
    safe: bool = True,
    extra: tuple[Edit, ...] = (),
) -> Fix | None:
    """A fix applying `edit` (and `extra`) plus, when needed, the one `import torch_npu` edit."""
    if edit is None:
        return None
    edits = [edit, *extra]
    import_edit = torch_npu_import_edit(ctx)
    if import_edit is not None:
        edits.append(import_edit)
    return Fix(title, tuple(edits), safe)


_FSTRING_HEAD = re.compile(r"(?P<prefix>[fFrR]{1,2})(?P<q>'''|\"\"\"|'|\")")


def head_edit(ctx: Context, node: ast.expr, old: str, new: str) -> Edit | None:
    """Replace the leading `old` of a literal's text with `new` (`"cuda:0"` -> `"npu:0"`,
    `f"cuda:{rank}"` -> `f"npu:{rank}"`); None when the source is not that simple (escapes,
    implicit concatenation, a literal split over lines)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        if not node.value.startswith(old):
            return None
        return literal_edit(ctx, node, new + node.value[len(old) :])
    if not isinstance(node, ast.JoinedStr):
        return None
    span = span_of(ctx, node)
    if span.line > len(ctx.lines):
        return None
    text = ctx.lines[span.line - 1][span.column - 1 :]
    match = _FSTRING_HEAD.match(text)
    if match is None or "f" not in match.group("prefix").lower():
        return None
    start = match.end()
    if text[start : start + len(old)] != old:
        return None
    column = span.column + start
    return Edit(Span(span.line, column, span.line, column + len(old)), new)


def backend_settings(ctx: Context, prefix: str) -> list[tuple[ast.expr, str, Fix | None]]:
    """Uses of `torch.backends.<prefix>.*` (through imports and local aliases), each once at
    its longest attribute chain, with its fix; also the known settings imported by name
    (`from torch.backends.cuda import flash_sdp_enabled`, litgpt's tests) where they are read.

    A setting that has an Ascend counterpart (`allow_tf32` -> `torch.npu.*.allow_hf32`) gets
    an unsafe fix when written `<torch>.backends....`: HF32 rounds differently from TF32, so
    the numbers change."""
    key = ("migration", "backend_settings", prefix)
    cached: list[tuple[ast.expr, str, Fix | None]] | None = ctx.cache.get(key)
    if cached is not None:
        return cached
    from npu_lsp.rules.migration.dispatch import npu_aware
    from npu_lsp.rules.migration.values import Flow, qualnames

    table: dict[str, dict[str, str]] = data()["backend_settings"]
    base = f"torch.backends.{prefix}"
    out: list[tuple[ast.expr, str, Fix | None]] = []
    seen: set[int] = set()
    flow = Flow.of(ctx)
    parents = flow.b.parents
    imports = ctx.scopes.info.imports
    # the module itself: `torch.backends.cudnn`, `backends.cuda`, or an alias of it
    aliases = {n for n, q in imports.items() if q == base}
    # settings imported by name; only those the table knows (not `SDPBackend`, an enum
    # that `torch.nn.attention.sdpa_kernel` takes on any device)
    members = {
        n: q
        for n, q in imports.items()
        if q.startswith(base + ".") and any(q == k or q.startswith(k + ".") for k in table)
    }
    if members:
        for n in flow.b.nodes.get(ast.Name, []):
            assert isinstance(n, ast.Name)
            if n.id in members and isinstance(n.ctx, ast.Load) and not npu_aware(ctx, n):
                out.append((n, members[n.id], None))
    candidates: list[ast.AST] = [
        n
        for n in flow.b.nodes.get(ast.Attribute, [])
        if n.attr == prefix  # type: ignore[attr-defined]
    ]
    if aliases:
        candidates += [n for n in flow.b.nodes.get(ast.Name, []) if n.id in aliases]  # type: ignore[attr-defined]
    candidates.sort(key=lambda n: (n.lineno, n.col_offset))  # type: ignore[attr-defined]
    for node in candidates:
        if base not in qualnames(ctx, node):
            continue
        chain: ast.AST = node  # climb to the longest attribute chain on it
        parent = parents.get(id(chain))
        while isinstance(parent, ast.Attribute) and parent.value is chain:
            chain, parent = parent, parents.get(id(parent))
        if chain is node or id(chain) in seen or not isinstance(chain, ast.Attribute):
            continue  # the bare module (an import alias target, `x = torch.backends.cudnn`)
        if npu_aware(ctx, chain):
            continue  # set in the CUDA branch of a dispatch that has an NPU one
        seen.add(id(chain))
        name = sorted(q for q in qualnames(ctx, chain) if q.startswith(base + "."))[0]
        entry = next(
            (table[k] for k in sorted(table, key=len, reverse=True) if name.startswith(k)), None
        )
        fix = _setting_fix(ctx, chain, name, entry["npu"]) if entry and "npu" in entry else None
        out.append((chain, name, fix))
    out.sort(key=lambda item: (item[0].lineno, item[0].col_offset))
    ctx.cache[key] = out
    return out


def _setting_fix(ctx: Context, node: ast.Attribute, name: str, npu: str) -> Fix | None:
    span = span_of(ctx, node)
    if span.line != span.end_line:
        return None
    written = ctx.lines[span.line - 1][span.column - 1 : span.end_column - 1]
    head, _, rest = written.partition(".")
    if rest != name.removeprefix("torch.") or ctx.scopes.info.resolve(ast.Name(id=head)) != "torch":
        return None  # only the plain `<torch alias>.backends...` spelling is rewritten
    start = span.column + len(head) + 1
    edit = Edit(Span(span.line, start, span.line, span.end_column), npu)
    return rewrite_fix(
        ctx, f"Replace with `torch.{npu}` (unsafe: HF32 rounds differently)", edit, safe=False
    )
