"""HCCL302: a rank table whose structure does not match the HCCL schema."""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.registry import rule
from npu_lsp.rules.hccl.jsonpos import JsonNode
from npu_lsp.rules.hccl.table import RankTable, RankTableRule, as_int

# Required members per level: key -> expected kind ("str", "int", "ip", "list").
_TOP = {"version": "str", "server_count": "int", "server_list": "list", "status": "str"}
_SERVER = {"server_id": "str", "device": "list"}
_DEVICE = {"device_id": "int", "device_ip": "ip", "rank_id": "int"}

_KIND_TEXT = {
    "str": "a string",
    "int": "a non-negative integer (a JSON number or a decimal string)",
    "ip": "an IPv4 address string",
    "list": "an array of objects",
}


def _describe(node: JsonNode) -> str:
    if node.kind in ("object", "array"):
        return "an object" if node.kind == "object" else "an array"
    return f"{node.kind} {node.plain()!r}" if node.kind != "null" else "null"


def _kind_ok(node: JsonNode, kind: str) -> bool:
    if kind == "str":
        return node.kind == "string"
    if kind == "int":
        return as_int(node) is not None
    if kind == "list":
        return node.kind == "array"
    try:
        ipaddress.IPv4Address(node.value if node.kind == "string" else "")
    except ValueError:
        return False
    return True


@rule(code="HCCL302", name="rank-table-schema-violation", severity="error", family="hccl")
class RankTableSchemaViolation(RankTableRule):
    """## What it does
    Checks the structure of an HCCL rank table: the top level needs `version`, `server_count`,
    `server_list` and `status`; each server needs `server_id` and a `device` array; each device
    needs `device_id`, `device_ip` (an IPv4 address) and `rank_id`. Numbers may be JSON integers
    or decimal strings, as HCCL accepts both. Keys repeated within one object are reported too.
    Unknown keys are allowed, so newer fields do not cause noise.

    ## Why is this bad?
    A missing or mistyped field is only discovered when the job starts on every node, and HCCL's
    error does not say which field of which server is wrong.

    ## Example
    ```json
    {"version": "1.0", "server_count": "1", "status": "completed",
     "server_list": [{"server_id": "10.0.0.1",
                      "device": [{"device_id": "0", "rank_id": "0"}]}]}
    ```

    ## Use instead
    ```json
    {"version": "1.0", "server_count": "1", "status": "completed",
     "server_list": [{"server_id": "10.0.0.1",
                      "device": [{"device_id": "0", "device_ip": "192.168.100.101",
                                  "rank_id": "0"}]}]}
    ```

    ## Fix safety
    No fix is offered: device addresses and ids come from the cluster, not from the file.

    ## References
    - `../shared/reference/migration.md`, "MindSpore on Ascend: set-up facts" (rank table fields)
    """

    def check_table(self, table: RankTable) -> Iterator[Diagnostic]:
        root = table.root
        if root.kind != "object":
            yield table.diagnostic(
                self,
                table.node_span(root),
                f"a rank table must be a JSON object, found {_describe(root)}",
            )
            return
        yield from self._members(table, root, _TOP, "the rank table")
        for server_index, server in enumerate(self._objects(table, root, "server_list")):
            if server is None:
                continue
            where = f"server_list[{server_index}]"
            yield from self._members(table, server, _SERVER, where)
            for device_index, device in enumerate(self._objects(table, server, "device")):
                if device is not None:
                    yield from self._members(
                        table, device, _DEVICE, f"{where}.device[{device_index}]"
                    )
        yield from self._bad_elements(table, root, "server_list")
        for server in table.servers():
            yield from self._bad_elements(table, server, "device")

    def _members(
        self, table: RankTable, obj: JsonNode, required: dict[str, str], where: str
    ) -> Iterator[Diagnostic]:
        for key, start, end in obj.duplicate_keys:
            yield table.diagnostic(
                self, table.span(start, end), f"key `{key}` appears more than once in {where}"
            )
        for key, kind in required.items():
            member = obj.get(key)
            if member is None:
                yield table.diagnostic(
                    self, table.node_span(obj), f"{where} is missing the required key `{key}`"
                )
            elif not _kind_ok(member, kind):
                yield table.diagnostic(
                    self,
                    table.node_span(member),
                    f"`{key}` in {where} must be {_KIND_TEXT[kind]}, found {_describe(member)}",
                )

    @staticmethod
    def _objects(table: RankTable, parent: JsonNode, key: str) -> Iterator[JsonNode | None]:
        """The elements of the array `parent[key]`, with None standing in for non-objects."""
        array = parent.get(key)
        if array is not None and array.kind == "array":
            for element in array.value:
                yield element if element.kind == "object" else None

    def _bad_elements(self, table: RankTable, parent: JsonNode, key: str) -> Iterator[Diagnostic]:
        array = parent.get(key)
        if array is None or array.kind != "array":
            return
        for index, element in enumerate(array.value):
            if element.kind != "object":
                yield table.diagnostic(
                    self,
                    table.node_span(element),
                    f"`{key}[{index}]` must be an object, found {_describe(element)}",
                )
