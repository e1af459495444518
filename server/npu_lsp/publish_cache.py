"""What the server keeps per document between two publishes, so an edit converts and encodes
only the diagnostics that changed.

After an edit most of a dense file's diagnostics are the same objects as last time (the
worker sends only new entries and the server's `transfer.Mirror` hands back the same
`Located` for the others). `DocumentCache` keeps, by identity, each diagnostic's LSP form
(valid while the texts of the lines its positions fall on are unchanged: columns become
UTF-16 units there) and the JSON text of that LSP form.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from lsprotocol import types as lsp
from pygls.workspace.position_codec import PositionCodec

from npu_lsp import convert
from npu_lsp.diagnostics import Diagnostic
from npu_lsp.notebook import Located


class DocumentCache:
    """The LSP form and JSON of each diagnostic of one document's last publish."""

    def __init__(self) -> None:
        #: id of an engine diagnostic -> (it, the line texts it was converted on, LSP form)
        self._lsp: dict[int, tuple[Diagnostic, tuple[Any, ...], lsp.Diagnostic]] = {}
        #: id of an LSP diagnostic -> (it, its JSON)
        self._json: dict[int, tuple[lsp.Diagnostic, str]] = {}

    def convert(
        self,
        uri: str,
        located: Sequence[Located],
        lines: Sequence[str],
        codec: PositionCodec,
        related_support: bool,
    ) -> list[lsp.Diagnostic]:
        """The LSP form of `located` (diagnostics of `uri`, whose `lines` these are)."""
        previous = self._lsp
        current: dict[int, tuple[Diagnostic, tuple[Any, ...], lsp.Diagnostic]] = {}
        out: list[lsp.Diagnostic] = []
        for item in located:
            diag = item.diagnostic
            key = id(diag)
            texts = _line_texts(diag, lines, uri)
            hit = current.get(key) or previous.get(key)
            if hit is None or hit[0] is not diag or hit[1] != texts:
                converted = convert.to_diagnostic(
                    diag, lines, codec, uri=uri, related_support=related_support
                )
                hit = (diag, texts, converted)  # the diagnostic kept alive: its id stays unique
            current[key] = hit
            out.append(hit[2])
        self._lsp = current
        return out

    def params_json(
        self,
        uri: str,
        diagnostics: Sequence[lsp.Diagnostic],
        version: int | None,
        unstructure: Callable[[Any], Any],
    ) -> str:
        """The JSON of publishDiagnostics' params, encoding only diagnostics not published
        last time (`unstructure`: the protocol's converter, as pygls encodes them)."""
        previous = self._json
        current: dict[int, tuple[lsp.Diagnostic, str]] = {}
        parts: list[str] = []
        for diag in diagnostics:
            key = id(diag)
            hit = current.get(key) or previous.get(key)
            if hit is None or hit[0] is not diag:
                hit = (diag, json.dumps(unstructure(diag)))
            current[key] = hit
            parts.append(hit[1])
        self._json = current
        head = f'{{"uri": {json.dumps(uri)}, "diagnostics": [{", ".join(parts)}]'
        return head + ("}" if version is None else f', "version": {int(version)}}}')


def _line_texts(diag: Diagnostic, lines: Sequence[str], uri: str) -> tuple[Any, ...]:
    """The texts of the lines the positions of `diag` in this document fall on (a position
    past the end depends on the line count)."""
    n = len(lines)
    span = diag.span
    out: list[Any] = [
        lines[line - 1] if line <= n else (line, n)
        for line in (max(span.line, 1), max(span.end_line, 1))
    ]
    for r in diag.related:
        if convert.location_uri(r.path) == uri:
            s = r.span
            out += [
                lines[line - 1] if line <= n else (line, n)
                for line in (max(s.line, 1), max(s.end_line, 1))
            ]
    return tuple(out)


__all__ = ["DocumentCache"]
