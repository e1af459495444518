"""HCCL307: a rank table whose `status` is not "completed"."""

from __future__ import annotations

from collections.abc import Iterator

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.registry import rule
from npu_lsp.rules.hccl.table import RankTable, RankTableRule


@rule(code="HCCL307", name="incomplete-rank-table-status", severity="warning", family="hccl")
class IncompleteRankTableStatus(RankTableRule):
    """## What it does
    Reports a rank table whose `status` is anything other than `"completed"`.

    ## Why is this bad?
    Cluster schedulers write rank tables in stages and set `status` to `"completed"` only when
    every server has been filled in. A table with another status was copied mid-way or edited
    by hand from a template, and is likely to be missing servers or devices.

    ## Example
    ```json
    {"status": "initializing", "version": "1.0", "server_count": "1", "server_list": [...]}
    ```

    ## Use instead
    ```json
    {"status": "completed", "version": "1.0", "server_count": "1", "server_list": [...]}
    ```

    ## Fix safety
    No fix is offered: the table has to be complete first, then marked so.

    ## References
    - `../shared/reference/migration.md`, "MindSpore on Ascend: set-up facts"
    """

    def check_table(self, table: RankTable) -> Iterator[Diagnostic]:
        node = table.root.get("status")
        if node is not None and node.kind == "string" and node.value != "completed":
            yield table.diagnostic(
                self, table.node_span(node), f'status is {node.value!r}, expected "completed"'
            )
