"""Conversions between the engine's plain types and LSP types (lsprotocol).

The engine speaks 1-based lines and code-point columns with exclusive ends; LSP speaks
0-based lines and columns in the negotiated encoding (UTF-16 unless the client chose
otherwise). Every crossing of that border goes through this module.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from lsprotocol import types as lsp
from pygls.uris import from_fs_path
from pygls.workspace.position_codec import PositionCodec

from npu_lsp.diagnostics import Diagnostic, Edit, Related, Span
from npu_lsp.notebook import Located

SOURCE = "ascend-lens"
FIX_ALL_KIND = "source.fixAll.ascend-lens"

_SEVERITY = {
    "error": lsp.DiagnosticSeverity.Error,
    "warning": lsp.DiagnosticSeverity.Warning,
    "info": lsp.DiagnosticSeverity.Information,
    "hint": lsp.DiagnosticSeverity.Hint,
}


def to_range(span: Span, lines: Sequence[str], codec: PositionCodec) -> lsp.Range:
    """An engine span as an LSP range in the client's position encoding."""
    return lsp.Range(
        start=to_position(span.line - 1, span.column - 1, lines, codec),
        end=to_position(span.end_line - 1, span.end_column - 1, lines, codec),
    )


def to_position(line: int, column: int, lines: Sequence[str], codec: PositionCodec) -> lsp.Position:
    """0-based line and code-point column as an LSP position in the client's encoding.

    Same answers as pygls' `position_to_client_units`, which counts units one character at
    a time in Python; here an ASCII prefix (the common case) costs one `isascii`, and other
    text one `encode`. That loop was a visible share of publishing many diagnostics.
    """
    line, column = max(line, 0), max(column, 0)
    if line >= len(lines):
        return lsp.Position(line=len(lines), character=0)
    prefix = lines[line][:column]
    if prefix.isascii() or codec.encoding == lsp.PositionEncodingKind.Utf32:
        return lsp.Position(line=line, character=len(prefix))
    if codec.encoding == lsp.PositionEncodingKind.Utf8:
        units = len(prefix.encode("utf-8", "surrogatepass"))
    else:  # UTF-16, also pygls' fallback for encodings it does not know
        units = len(prefix.encode("utf-16-le", "surrogatepass")) // 2
    return lsp.Position(line=line, character=units)


def from_position(
    position: lsp.Position, lines: Sequence[str], codec: PositionCodec
) -> tuple[int, int]:
    """An LSP position as the engine's 1-based (line, code-point column)."""
    server = codec.position_from_client_units(
        lines, lsp.Position(position.line, position.character)
    )
    return server.line + 1, server.character + 1


def location_uri(path: str) -> str:
    """Related locations carry a file path, or already a URI (notebook cells)."""
    if "://" in path or path.startswith(("vscode-notebook-cell:", "untitled:")):
        return path
    return from_fs_path(path) or path


def to_diagnostic(
    diag: Diagnostic,
    lines: Sequence[str],
    codec: PositionCodec,
    *,
    uri: str | None = None,
    related_support: bool = True,
) -> lsp.Diagnostic:
    """One engine diagnostic of the document `uri` (whose `lines` these are) in LSP form."""
    related = None
    if related_support and diag.related:
        related = [_related(r, uri, lines, codec) for r in diag.related]
    return lsp.Diagnostic(
        range=to_range(diag.span, lines, codec),
        message=diag.message,
        severity=_SEVERITY.get(diag.severity, lsp.DiagnosticSeverity.Warning),
        code=diag.code,
        source=diag.source or SOURCE,
        related_information=related,
        data={"fixable": diag.fix is not None} if diag.fix is not None else None,
    )


def _related(
    rel: Related, uri: str | None, lines: Sequence[str], codec: PositionCodec
) -> lsp.DiagnosticRelatedInformation:
    target = location_uri(rel.path)
    if target == uri:
        rng = to_range(rel.span, lines, codec)
    else:
        # Another file's lines are not at hand; code points equal UTF-16 units outside
        # astral-plane characters, which is as close as we can get without reading it.
        span = rel.span
        rng = lsp.Range(
            start=lsp.Position(max(span.line - 1, 0), max(span.column - 1, 0)),
            end=lsp.Position(max(span.end_line - 1, 0), max(span.end_column - 1, 0)),
        )
    return lsp.DiagnosticRelatedInformation(
        location=lsp.Location(uri=target, range=rng), message=rel.message
    )


def ranges_overlap(a: lsp.Range, b: lsp.Range) -> bool:
    """Do two ranges touch or overlap (a cursor inside or at the edge of a diagnostic counts)?"""
    a_start, a_end = (a.start.line, a.start.character), (a.end.line, a.end.character)
    b_start, b_end = (b.start.line, b.start.character), (b.end.line, b.end.character)
    return a_start <= b_end and b_start <= a_end


def workspace_edit(
    edits: Iterable[tuple[str, Edit]], lines_of: dict[str, Sequence[str]], codec: PositionCodec
) -> lsp.WorkspaceEdit:
    """Edits (uri, Edit) as one WorkspaceEdit; duplicates merged, overlapping ones dropped.

    Duplicates are expected: every migration fix carries the same `import torch_npu`
    insertion, which must land once when several fixes are applied together.
    """
    per_uri: dict[str, list[Edit]] = {}
    for uri, edit in edits:
        bucket = per_uri.setdefault(uri, [])
        if edit not in bucket:
            bucket.append(edit)
    changes: dict[str, list[lsp.TextEdit]] = {}
    for uri, bucket in per_uri.items():
        kept: list[Edit] = []
        for edit in sorted(
            bucket, key=lambda e: (e.span.line, e.span.column, e.span.end_line, e.span.end_column)
        ):
            if kept and _overlaps(kept[-1].span, edit.span):
                continue  # the next run of the server offers it again, on fresh text
            kept.append(edit)
        lines = lines_of.get(uri, ())
        changes[uri] = [
            lsp.TextEdit(range=to_range(e.span, lines, codec), new_text=e.new_text) for e in kept
        ]
    return lsp.WorkspaceEdit(changes=changes)


def _overlaps(a: Span, b: Span) -> bool:
    """Does `b` (sorted after `a`) start before `a` ends? Two insertions at one point conflict."""
    if (b.line, b.column) < (a.end_line, a.end_column):
        return True
    same_point = (a.line, a.column) == (a.end_line, a.end_column) == (b.line, b.column)
    return same_point and (b.end_line, b.end_column) == (b.line, b.column)


def edit_uris(located: Iterable[Located]) -> set[str]:
    """The documents the fix edits of `located` touch. The diagnostics of one group share
    one tuple of edits (`notebook.locate_document`): each tuple is read once."""
    shared = {id(item.edits): item.edits for item in located}
    return {u for edits in shared.values() for u, _ in edits}


def quick_fixes(
    located: Iterable[tuple[Located, lsp.Diagnostic]],
    request_range: lsp.Range,
    lines_of: dict[str, Sequence[str]],
    codec: PositionCodec,
) -> list[lsp.CodeAction]:
    """One quick-fix action per fixable diagnostic touching `request_range`."""
    actions = []
    for item, lsp_diag in located:
        fix = item.diagnostic.fix
        if fix is None or not item.edits or not ranges_overlap(lsp_diag.range, request_range):
            continue
        actions.append(
            lsp.CodeAction(
                title=f"{fix.title} ({item.diagnostic.code})",
                kind=lsp.CodeActionKind.QuickFix,
                diagnostics=[lsp_diag],
                edit=workspace_edit(item.edits, lines_of, codec),
                is_preferred=fix.safe,
            )
        )
    return actions


def fix_all(
    located: Iterable[Located], lines_of: dict[str, Sequence[str]], codec: PositionCodec
) -> lsp.CodeAction | None:
    """A source action applying, in one round, the safe fixes `npu_lsp.fixing.choose` takes
    (used for notebooks, whose cells were analysed as one text); None when nothing applies."""
    from npu_lsp.fixing import choose

    items = [item for item in located if item.edits]
    chosen = {id(d) for d in choose([item.diagnostic for item in items])}
    edits = [e for item in items if id(item.diagnostic) in chosen for e in item.edits]
    if not edits:
        return None
    return fix_all_action(workspace_edit(edits, lines_of, codec))


def fix_all_action(edit: lsp.WorkspaceEdit) -> lsp.CodeAction:
    """The `source.fixAll.ascend-lens` action carrying `edit`."""
    return lsp.CodeAction(
        title="Ascend Lens: fix all auto-fixable problems", kind=FIX_ALL_KIND, edit=edit
    )


def document_edit(
    uri: str, edit: Edit, lines: Sequence[str], codec: PositionCodec
) -> lsp.WorkspaceEdit:
    """One engine edit of document `uri` as a WorkspaceEdit."""
    text_edit = lsp.TextEdit(range=to_range(edit.span, lines, codec), new_text=edit.new_text)
    return lsp.WorkspaceEdit(changes={uri: [text_edit]})
