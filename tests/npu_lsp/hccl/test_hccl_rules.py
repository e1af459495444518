"""HCCL rank-table rules (HCCL3xx): each rule on failing and passing tables, at exact positions."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from npu_lsp.config import Config
from npu_lsp.engine import check_source
from npu_lsp.registry import RULES, load_all
from npu_lsp.rules.hccl import check_rank_table, is_rank_table

load_all()
FIXTURES = Path(__file__).parent / "fixtures"
VALID = (FIXTURES / "rank_table_16p.json").read_text(encoding="utf-8")


def table(**changes: object) -> dict:
    """A small valid one-server, two-device table, with top-level keys replaced."""
    doc: dict = {
        "version": "1.0",
        "server_count": "1",
        "server_list": [
            {
                "server_id": "10.0.0.1",
                "device": [
                    {"device_id": "0", "device_ip": "192.168.100.101", "rank_id": "0"},
                    {"device_id": "1", "device_ip": "192.168.101.101", "rank_id": "1"},
                ],
            }
        ],
        "status": "completed",
    }
    doc.update(changes)
    return doc


def found(text: str) -> list[tuple[str, int, int]]:
    return [(d.code, d.span.line, d.span.column) for d in check_rank_table(text, "rank_table.json")]


def position(text: str, needle: str, occurrence: int = 1) -> tuple[int, int]:
    """1-based (line, column) of the n-th occurrence of `needle`."""
    offset = -1
    for _ in range(occurrence):
        offset = text.index(needle, offset + 1)
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1


def test_every_hccl_rule_is_registered_with_docs() -> None:
    codes = sorted(c for c, r in RULES.items() if r.family == "hccl")
    assert codes == [f"HCCL{n}" for n in range(301, 308)]


def test_valid_tables_are_clean() -> None:
    assert found(VALID) == []
    assert found(json.dumps(table())) == []
    # Plain JSON integers are accepted as well as decimal strings.
    doc = table(server_count=1)
    doc["server_list"][0]["device"][0].update(device_id=0, rank_id=0)
    assert found(json.dumps(doc)) == []


@pytest.mark.parametrize(
    ("text", "expected_message"),
    [
        ('{"version": "1.0",}', "expected a property name"),
        ('{"version": "1.0" "status": 1}', "expected ',' or '}'"),
        ("[1, 2", "expected ',' or ']'"),
        ('{"a": tru}', "unexpected character 't'"),
        ("", "unexpected end of file"),
        ('{"a": 1} {"b": 2}', "extra data"),
        ('{"a": "unterminated}', "unterminated"),
    ],
)
def test_invalid_json_is_hccl301_at_the_stopping_point(text: str, expected_message: str) -> None:
    diags = check_rank_table(text, "hccl.json")
    assert [d.code for d in diags] == ["HCCL301"]
    assert expected_message in diags[0].message


def test_invalid_json_position() -> None:
    text = '{\n  "version": "1.0",\n  "server_count": "1",\n}\n'
    assert found(text) == [("HCCL301", 4, 1)]


def test_schema_violations_hccl302() -> None:
    doc = table()
    del doc["status"]
    device = doc["server_list"][0]["device"][1]
    del device["device_ip"]
    device["rank_id"] = "one"
    doc["server_list"][0]["server_id"] = 7
    text = json.dumps(doc, indent=2)
    diags = check_rank_table(text, "rank_table.json")
    messages = {d.message: (d.span.line, d.span.column) for d in diags if d.code == "HCCL302"}
    assert messages == {
        "the rank table is missing the required key `status`": (1, 1),
        "`server_id` in server_list[0] must be a string, found number 7": position(text, "7"),
        "server_list[0].device[1] is missing the required key `device_ip`": position(text, "{", 4),
        "`rank_id` in server_list[0].device[1] must be a non-negative integer (a JSON number or "
        "a decimal string), found string 'one'": position(text, '"one"'),
    }


def test_schema_wrong_root_and_elements() -> None:
    assert found("[]") == [("HCCL302", 1, 1)]
    text = '{"version": "1.0", "server_count": "1", "status": "completed", "server_list": [42]}'
    assert found(text) == [("HCCL302", *position(text, "42"))]


def test_duplicate_keys_and_bad_device_ip() -> None:
    text = '{"version": "1.0", "version": "1.1", "server_count": "1", "status": "completed", "server_list": []}'
    assert ("HCCL302", *position(text, '"version"', 2)) in found(text)
    doc = table()
    doc["server_list"][0]["device"][0]["device_ip"] = "192.168.1"
    assert [c for c, _, _ in found(json.dumps(doc))] == ["HCCL302"]


def test_rank_ids_must_run_from_zero_without_gaps_hccl303() -> None:
    doc = table()
    doc["server_list"][0]["device"][1]["rank_id"] = "2"
    text = json.dumps(doc)
    diags = check_rank_table(text, "rank_table.json")
    assert [(d.code, d.span.line, d.span.column) for d in diags] == [
        ("HCCL303", *position(text, '"2"'))
    ]
    assert (
        diags[0].message == "rank_id 2 is out of range: 2 devices need rank ids 0..1 (missing: 1)"
    )
    doc["server_list"][0]["device"][1]["rank_id"] = "0"
    text = json.dumps(doc)
    diags = check_rank_table(text, "rank_table.json")
    assert [d.code for d in diags] == ["HCCL303"]
    assert "already used by server_list[0].device[0]" in diags[0].message
    line, column = position(text, '"rank_id": "0"', 2)
    assert (diags[0].span.line, diags[0].span.column) == (line, column + len('"rank_id": '))


def test_rank_ids_span_servers() -> None:
    # Two servers each numbering ranks from 0: the second server's ranks collide.
    doc = table(server_count="2")
    second = json.loads(json.dumps(doc["server_list"][0]))
    second["server_id"] = "10.0.0.2"
    doc["server_list"].append(second)
    assert [c for c, _, _ in found(json.dumps(doc))] == ["HCCL303", "HCCL303"]


def test_duplicate_device_id_within_a_server_hccl304() -> None:
    doc = table()
    doc["server_list"][0]["device"][1]["device_id"] = "0"
    text = json.dumps(doc, indent=1)
    assert found(text) == [("HCCL304", *position(text, '"0"', 3))]
    # The same device ids on different servers are normal.
    assert found(VALID) == []


def test_server_count_mismatch_hccl305() -> None:
    text = json.dumps(table(server_count="3"), indent=2)
    diags = check_rank_table(text, "rank_table.json")
    assert [(d.code, d.span.line, d.span.column) for d in diags] == [
        ("HCCL305", *position(text, '"3"'))
    ]
    assert diags[0].message == "server_count is 3 but server_list has 1 entry"


@pytest.mark.parametrize(
    "server_id", ["localhost", "LOCALHOST", "127.0.0.1", "127.1.2.3", "::1", "0.0.0.0"]
)
def test_loopback_server_id_hccl306(server_id: str) -> None:
    doc = table()
    doc["server_list"][0]["server_id"] = server_id
    text = json.dumps(doc)
    assert found(text) == [("HCCL306", *position(text, json.dumps(server_id)))]


def test_real_host_names_are_fine() -> None:
    doc = table()
    doc["server_list"][0]["server_id"] = "node-01.cluster"
    assert found(json.dumps(doc)) == []


def test_status_not_completed_hccl307() -> None:
    text = json.dumps(table(status="initializing"))
    diags = check_rank_table(text, "rank_table.json")
    assert [(d.code, d.severity) for d in diags] == [("HCCL307", "warning")]


def test_legacy_group_list_layout_is_only_syntax_checked() -> None:
    assert (
        found('{"status": "completed", "group_count": "1", "group_list": [{"group_name": "x"}]}')
        == []
    )


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("rank_table_16p.json", True),
        ("/cfg/RANK_TABLE_8P.JSON", True),
        ("hccl_8p_01234567_10.0.0.1.json", True),
        ("hccl.json", True),
        ("config.json", False),
        ("rank_table.yaml", False),
        ("my_hccl.json", False),
    ],
)
def test_file_names_routed_as_rank_tables(path: str, expected: bool) -> None:
    assert is_rank_table(path) is expected


def test_engine_routes_rank_tables_and_applies_selection() -> None:
    text = json.dumps(table(server_count="2", status="pending"))
    assert [d.code for d in check_source(text, "rank_table_1.json", Config())] == [
        "HCCL305",
        "HCCL307",
    ]
    assert [
        d.code for d in check_source(text, "rank_table_1.json", Config(ignore=("HCCL307",)))
    ] == ["HCCL305"]
    # The same text under another JSON name is not a rank table (and is not Python either).
    assert [d.code for d in check_source(text, "settings.json", Config(select=("HCCL",)))] == []


def test_non_ascii_positions_are_code_points() -> None:
    text = '{"note": "ä😀", "version": "1.0", "server_count": "x", "status": "completed", "server_list": []}'
    assert ("HCCL302", *position(text, '"x"')) in found(text)
