"""HCCL303: rank ids that are not exactly 0..N-1."""

from __future__ import annotations

from collections.abc import Iterator

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.registry import rule
from npu_lsp.rules.hccl.jsonpos import JsonNode
from npu_lsp.rules.hccl.table import RankTable, RankTableRule, as_int


@rule(code="HCCL303", name="non-contiguous-rank-ids", severity="error", family="hccl")
class NonContiguousRankIds(RankTableRule):
    """## What it does
    Checks that the `rank_id`s of all devices in the table, across every server, are exactly
    0, 1, ..., N-1 for N devices: each id used once, none missing, none out of range.

    ## Why is this bad?
    HCCL derives the communicator's rank layout from these ids. A repeated id gives two
    processes the same rank and a gap leaves the collective waiting for a rank that never
    joins, which shows up as a hang and then a connection timeout rather than a clear error.

    ## Example
    ```json
    "device": [{"device_id": "0", "device_ip": "192.168.100.101", "rank_id": "0"},
               {"device_id": "1", "device_ip": "192.168.101.101", "rank_id": "2"}]
    ```

    ## Use instead
    ```json
    "device": [{"device_id": "0", "device_ip": "192.168.100.101", "rank_id": "0"},
               {"device_id": "1", "device_ip": "192.168.101.101", "rank_id": "1"}]
    ```

    ## Fix safety
    No fix is offered: renumbering ranks changes which process owns which shard.

    ## References
    - `../shared/reference/migration.md`, "MindSpore on Ascend: set-up facts"
    """

    def check_table(self, table: RankTable) -> Iterator[Diagnostic]:
        ranks: list[tuple[int, JsonNode, str]] = []
        for s_index, server in enumerate(table.servers()):
            for d_index, device in enumerate(table.devices(server)):
                node = device.get("rank_id")
                value = as_int(node)
                if node is not None and value is not None:
                    ranks.append((value, node, f"server_list[{s_index}].device[{d_index}]"))
        count = len(ranks)
        missing = sorted(set(range(count)) - {value for value, _, _ in ranks})
        missing_text = (
            f" (missing: {', '.join(map(str, missing[:8]))}{'...' if len(missing) > 8 else ''})"
        )
        first_use: dict[int, str] = {}
        for value, node, where in ranks:
            if value in first_use:
                yield table.diagnostic(
                    self,
                    table.node_span(node),
                    f"rank_id {value} is already used by {first_use[value]}; "
                    f"rank ids must run 0..{count - 1} without repeats",
                )
                continue
            first_use[value] = where
            if value >= count:
                yield table.diagnostic(
                    self,
                    table.node_span(node),
                    f"rank_id {value} is out of range: {count} devices need rank ids "
                    f"0..{count - 1}{missing_text if missing else ''}",
                )
