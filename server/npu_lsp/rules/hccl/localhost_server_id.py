"""HCCL306: a server_id that names the loopback host instead of the machine's address."""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.registry import rule
from npu_lsp.rules.hccl.table import RankTable, RankTableRule

_LOOPBACK_NAMES = frozenset({"localhost", "localhost.localdomain", "ip6-localhost"})


def is_loopback(server_id: str) -> bool:
    """True for `localhost` spellings and loopback or unspecified IP addresses."""
    text = server_id.strip().lower()
    if text in _LOOPBACK_NAMES:
        return True
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        return False
    return address.is_loopback or address.is_unspecified


@rule(code="HCCL306", name="localhost-server-id", severity="error", family="hccl")
class LocalhostServerId(RankTableRule):
    """## What it does
    Reports a `server_id` of `localhost`, a loopback address (`127.0.0.1`, `::1`) or
    `0.0.0.0`.

    ## Why is this bad?
    `server_id` identifies the host to every other rank and must be the host's real IP
    address. A loopback name is the same string on every machine, so ranks cannot tell servers
    apart, and each process matches the entry of every host whose id it is given.

    ## Example
    ```json
    {"server_id": "localhost", "device": [...]}
    ```

    ## Use instead
    ```json
    {"server_id": "10.0.0.1", "device": [...]}
    ```

    ## Fix safety
    No fix is offered: the host's address is not in the file.

    ## References
    - `../shared/reference/migration.md`, "MindSpore on Ascend: set-up facts"
    """

    def check_table(self, table: RankTable) -> Iterator[Diagnostic]:
        for server in table.servers():
            node = server.get("server_id")
            if node is not None and node.kind == "string" and is_loopback(node.value):
                yield table.diagnostic(
                    self,
                    table.node_span(node),
                    f"server_id {node.value!r} is a loopback address; use the host's real IP address",
                )
