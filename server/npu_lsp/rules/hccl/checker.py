"""Run the HCCL rules over one rank-table file: `check_rank_table(text, path)`."""

from __future__ import annotations

from npu_lsp.diagnostics import Diagnostic, Span
from npu_lsp.filetypes import RANK_TABLE_PATTERNS, is_rank_table
from npu_lsp.registry import RULES
from npu_lsp.rules.hccl.invalid_rank_table_json import InvalidRankTableJson
from npu_lsp.rules.hccl.jsonpos import JsonSyntaxError, LineIndex, parse
from npu_lsp.rules.hccl.table import RankTable, RankTableRule

__all__ = ["RANK_TABLE_PATTERNS", "check_rank_table", "is_rank_table", "table_rules"]


def table_rules() -> list[RankTableRule]:
    """An instance of every registered HCCL rule, in code order."""
    return [
        cls()
        for code, cls in sorted(RULES.items())
        if issubclass(cls, RankTableRule) and cls is not InvalidRankTableJson
    ]


def check_rank_table(text: str, path: str) -> list[Diagnostic]:
    """Every HCCL diagnostic for one rank table, sorted by position.

    Selection, per-file ignores and severity overrides are the engine's job; this returns all.
    """
    lines = LineIndex(text)
    try:
        root = parse(text)
    except JsonSyntaxError as exc:
        line, col = lines.position(exc.offset)
        span = Span(line, col, line, col + 1)
        return [
            Diagnostic(
                code=InvalidRankTableJson.code,
                message=f"invalid JSON: {exc.message}",
                severity=InvalidRankTableJson.severity,
                span=span,
            )
        ]
    # The pre-2020 `group_list` layout is a different schema; we only check JSON syntax there.
    if root.kind == "object" and root.get("server_list") is None and root.get("group_list"):
        return []
    table = RankTable(text=text, path=path, root=root, lines=lines)
    found = [d for rule in table_rules() for d in rule.check_table(table)]
    return sorted(found, key=Diagnostic.sort_key)
