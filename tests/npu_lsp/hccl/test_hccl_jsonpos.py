"""The position-tracking JSON parser: same values as json.loads, exact source extents."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from npu_lsp.rules.hccl.jsonpos import JsonSyntaxError, LineIndex, parse

JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6), children, max_size=4)
    ),
    max_leaves=20,
)


@settings(max_examples=150, deadline=None)
@given(JSON_VALUES, st.sampled_from([None, 0, 2]))
def test_values_round_trip_like_json_loads(value: object, indent: int | None) -> None:
    text = json.dumps(value, indent=indent, ensure_ascii=False)
    assert parse(text).plain() == json.loads(text)


def test_extents_of_values_and_keys() -> None:
    text = '{\n  "a": [1, "x\\n", true],\n  "b": {"c": null}\n}'
    root = parse(text)
    a = root.get("a")
    assert a is not None and text[a.start : a.end] == '[1, "x\\n", true]'
    assert [text[n.start : n.end] for n in a.value] == ["1", '"x\\n"', "true"]
    start, end = root.key_spans["b"]
    assert text[start:end] == '"b"'
    index = LineIndex(text)
    assert index.position(a.start) == (2, 8)
    assert index.position(start) == (3, 3)


def test_duplicate_keys_are_recorded_last_one_wins() -> None:
    root = parse('{"k": 1, "k": 2}')
    assert root.plain() == {"k": 2}
    assert [(key, start) for key, start, _ in root.duplicate_keys] == [("k", 9)]


@pytest.mark.parametrize(
    ("text", "offset"),
    [
        ("{", 1),
        ('{"a" 1}', 5),
        ("[1,]", 3),
        ("01", 1),
        ("nul", 0),
        ('"\\x"', 0),
        ("[1] 2", 4),
        ("// comment\n{}", 0),
    ],
)
def test_syntax_errors_report_the_offset(text: str, offset: int) -> None:
    with pytest.raises(JsonSyntaxError) as info:
        parse(text)
    assert info.value.offset == offset


def test_deep_nesting_is_refused_not_a_crash() -> None:
    with pytest.raises(JsonSyntaxError, match="nested too deeply"):
        parse("[" * 5000 + "]" * 5000)


def test_line_index_handles_crlf_and_cr() -> None:
    index = LineIndex("a\r\nb\rc\nd")
    assert [index.position(i) for i in (0, 3, 5, 7)] == [(1, 1), (2, 1), (3, 1), (4, 1)]
