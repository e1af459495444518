"""HCCL304: the same device_id listed twice within one server."""

from __future__ import annotations

from collections.abc import Iterator

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.registry import rule
from npu_lsp.rules.hccl.table import RankTable, RankTableRule, as_int


@rule(code="HCCL304", name="duplicate-device-id", severity="error", family="hccl")
class DuplicateDeviceId(RankTableRule):
    """## What it does
    Reports a `device_id` that appears more than once in the `device` list of one server.
    The same id on different servers is normal (each host numbers its own NPUs from 0).

    ## Why is this bad?
    Two ranks bound to one physical NPU on the same host fight over it: the second process
    fails to set the device or the collective deadlocks.

    ## Example
    ```json
    "device": [{"device_id": "0", "device_ip": "192.168.100.101", "rank_id": "0"},
               {"device_id": "0", "device_ip": "192.168.101.101", "rank_id": "1"}]
    ```

    ## Use instead
    ```json
    "device": [{"device_id": "0", "device_ip": "192.168.100.101", "rank_id": "0"},
               {"device_id": "1", "device_ip": "192.168.101.101", "rank_id": "1"}]
    ```

    ## Fix safety
    No fix is offered: which NPU was meant cannot be known from the file.

    ## References
    - `../shared/reference/migration.md`, "MindSpore on Ascend: set-up facts"
    """

    def check_table(self, table: RankTable) -> Iterator[Diagnostic]:
        for s_index, server in enumerate(table.servers()):
            seen: dict[int, int] = {}
            for d_index, device in enumerate(table.devices(server)):
                node = device.get("device_id")
                value = as_int(node)
                if node is None or value is None:
                    continue
                if value in seen:
                    yield table.diagnostic(
                        self,
                        table.node_span(node),
                        f"device_id {value} is already used by server_list[{s_index}]"
                        f".device[{seen[value]}] on the same server",
                    )
                else:
                    seen[value] = d_index
