"""The parsed rank table handed to every HCCL rule: the JSON tree plus span helpers.

Rank tables written by hand or by `hccl_tools.py` store numbers as decimal strings
("device_id": "0"); HCCL accepts those, and so do we, along with plain JSON integers.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from npu_lsp.diagnostics import Diagnostic, Span
from npu_lsp.registry import Rule
from npu_lsp.rules.hccl.jsonpos import JsonNode, LineIndex


@dataclass
class RankTable:
    """A rank-table document: its text, root node and line index."""

    text: str
    path: str
    root: JsonNode
    lines: LineIndex

    def span(self, start: int, end: int) -> Span:
        line, col = self.lines.position(start)
        end_line, end_col = self.lines.position(max(end, start))
        return Span(line, col, end_line, end_col)

    def node_span(self, node: JsonNode) -> Span:
        # Underline only the first line of a multi-line object/array: the whole block is noise.
        if node.kind in ("object", "array"):
            line, col = self.lines.position(node.start)
            return Span(line, col, line, col + 1)
        return self.span(node.start, node.end)

    def key_span(self, parent: JsonNode, key: str) -> Span:
        start, end = parent.key_spans[key]
        return self.span(start, end)

    def diagnostic(self, rule: type[Rule] | Rule, span: Span, message: str) -> Diagnostic:
        return Diagnostic(code=rule.code, message=message, severity=rule.severity, span=span)

    def servers(self) -> Iterator[JsonNode]:
        """Each object in `server_list` (non-objects are the schema rule's business)."""
        server_list = self.root.get("server_list")
        if server_list is not None and server_list.kind == "array":
            yield from (s for s in server_list.value if s.kind == "object")

    @staticmethod
    def devices(server: JsonNode) -> Iterator[JsonNode]:
        """Each object in a server's `device` list."""
        device_list = server.get("device")
        if device_list is not None and device_list.kind == "array":
            yield from (d for d in device_list.value if d.kind == "object")


def as_int(node: JsonNode | None) -> int | None:
    """A non-negative integer written as a JSON integer or a decimal string, else None."""
    if node is None:
        return None
    if node.kind == "number" and isinstance(node.value, int) and node.value >= 0:
        return node.value
    if node.kind == "string" and node.value.isascii() and node.value.isdigit():
        return int(node.value)
    return None


class RankTableRule(Rule):
    """Base of the HCCL rules: they read a parsed `RankTable` instead of Python AST nodes."""

    def check_table(self, table: RankTable) -> Iterator[Diagnostic]:
        """Yield diagnostics for one parsed rank table."""
        return iter(())
