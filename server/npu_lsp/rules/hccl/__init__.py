"""HCCL rank-table rules (HCCL3xx): one module per rule, run by `checker.check_rank_table`.

Importing the family registers the rules and routes `rank_table*.json` / `hccl*.json` files
to the checker through the engine's file-type dispatch.
"""

from __future__ import annotations

from npu_lsp.config import Config
from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import WorkspaceIndex, register_checker
from npu_lsp.rules.hccl import (  # noqa: F401  (imported to register the rules)
    duplicate_device_id,
    incomplete_rank_table_status,
    invalid_rank_table_json,
    localhost_server_id,
    non_contiguous_rank_ids,
    rank_table_schema_violation,
    server_count_mismatch,
)
from npu_lsp.rules.hccl.checker import check_rank_table, is_rank_table

__all__ = ["check_rank_table", "is_rank_table"]


def _engine_checker(
    text: str, path: str, config: Config, workspace: WorkspaceIndex | None
) -> list[Diagnostic]:
    # Selection and ignores are applied by the engine's post-processing.
    return check_rank_table(text, path)


register_checker(is_rank_table, _engine_checker)
