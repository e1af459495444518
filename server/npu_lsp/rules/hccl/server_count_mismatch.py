"""HCCL305: `server_count` differs from the number of entries in `server_list`."""

from __future__ import annotations

from collections.abc import Iterator

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.registry import rule
from npu_lsp.rules.hccl.table import RankTable, RankTableRule, as_int


@rule(code="HCCL305", name="server-count-mismatch", severity="error", family="hccl")
class ServerCountMismatch(RankTableRule):
    """## What it does
    Checks that `server_count` equals the number of entries in `server_list`.

    ## Why is this bad?
    HCCL trusts `server_count` when it sizes the cluster. When a server is added to or
    removed from the list without updating the count, ranks wait for hosts that do not exist
    or ignore hosts that do.

    ## Example
    ```json
    {"server_count": "2", "server_list": [{"server_id": "10.0.0.1", "device": []}]}
    ```

    ## Use instead
    ```json
    {"server_count": "1", "server_list": [{"server_id": "10.0.0.1", "device": []}]}
    ```

    ## Fix safety
    No fix is offered: either the count or the list may be the wrong one.

    ## References
    - `../shared/reference/migration.md`, "MindSpore on Ascend: set-up facts"
    """

    def check_table(self, table: RankTable) -> Iterator[Diagnostic]:
        count_node = table.root.get("server_count")
        server_list = table.root.get("server_list")
        count = as_int(count_node)
        if (
            count_node is None
            or count is None
            or server_list is None
            or server_list.kind != "array"
        ):
            return
        actual = len(server_list.value)
        if count != actual:
            yield table.diagnostic(
                self,
                table.node_span(count_node),
                f"server_count is {count} but server_list has {actual} "
                f"entr{'y' if actual == 1 else 'ies'}",
            )
