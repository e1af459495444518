"""A strict JSON parser that remembers where every value and key came from.

The standard library's decoder throws positions away, and rank-table diagnostics must point at
the offending key or value, so this parser builds a small tree of `JsonNode`s carrying source
offsets. It accepts exactly RFC 8259 JSON (what HCCL itself reads): no comments, no trailing
commas. Syntax errors raise `JsonSyntaxError` with the offset where parsing stopped.
"""

from __future__ import annotations

import bisect
import json
import re
from dataclasses import dataclass, field
from typing import Any

__all__ = ["JsonNode", "JsonSyntaxError", "LineIndex", "parse"]

_WS = re.compile(r"[ \t\n\r]*")
_NUMBER = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?")
_LITERALS = {"true": True, "false": False, "null": None}
# A string token as JSON defines it; decoded by json.loads so escapes follow the standard exactly.
_STRING = re.compile(r'"(?:[^"\\\x00-\x1f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"')


class JsonSyntaxError(ValueError):
    """The text is not valid JSON; `offset` is where the parser gave up."""

    def __init__(self, message: str, offset: int) -> None:
        super().__init__(message)
        self.message = message
        self.offset = offset


@dataclass
class JsonNode:
    """One JSON value with its source extent [start, end) as character offsets.

    For objects `value` maps each key to its node, and `key_spans` gives each key's own extent
    (so a diagnostic about a key can underline the key). Arrays hold a list of nodes; scalars hold
    the decoded Python value.
    """

    kind: str  # "object" | "array" | "string" | "number" | "bool" | "null"
    value: Any
    start: int
    end: int
    key_spans: dict[str, tuple[int, int]] = field(default_factory=dict)
    duplicate_keys: list[tuple[str, int, int]] = field(default_factory=list)

    def get(self, key: str) -> JsonNode | None:
        """The member `key` of an object node, or None (also for non-objects)."""
        if self.kind != "object":
            return None
        node: JsonNode | None = self.value.get(key)
        return node

    def plain(self) -> Any:
        """The node as ordinary Python data (what json.loads would return)."""
        if self.kind == "object":
            return {k: v.plain() for k, v in self.value.items()}
        if self.kind == "array":
            return [v.plain() for v in self.value]
        return self.value


class LineIndex:
    """Maps character offsets to 1-based (line, column) pairs in one text."""

    def __init__(self, text: str) -> None:
        self._starts = [0] + [m.end() for m in re.finditer(r"\r\n|\r|\n", text)]

    def position(self, offset: int) -> tuple[int, int]:
        line = bisect.bisect_right(self._starts, offset) - 1
        return line + 1, offset - self._starts[line] + 1


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def fail(self, message: str, offset: int | None = None) -> JsonSyntaxError:
        return JsonSyntaxError(message, self.pos if offset is None else offset)

    def skip_ws(self) -> None:
        match = _WS.match(self.text, self.pos)
        assert match is not None  # the pattern matches the empty string
        self.pos = match.end()

    def peek(self) -> str:
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def value(self, depth: int) -> JsonNode:
        if depth > 200:  # deep nesting: refuse instead of exhausting the Python stack
            raise self.fail("JSON nested too deeply")
        self.skip_ws()
        ch = self.peek()
        if ch == "{":
            return self.obj(depth)
        if ch == "[":
            return self.array(depth)
        if ch == '"':
            start = self.pos
            return JsonNode("string", self.string(), start, self.pos)
        if ch == "-" or ch.isdigit():
            match = _NUMBER.match(self.text, self.pos)
            if match is None:
                raise self.fail("invalid number")
            start, self.pos = self.pos, match.end()
            number = (
                float(match.group()) if re.search("[.eE]", match.group()) else int(match.group())
            )
            return JsonNode("number", number, start, self.pos)
        for word, literal in _LITERALS.items():
            if self.text.startswith(word, self.pos):
                start, self.pos = self.pos, self.pos + len(word)
                return JsonNode("null" if literal is None else "bool", literal, start, self.pos)
        if not ch:
            raise self.fail("unexpected end of file, expected a value")
        raise self.fail(f"unexpected character {ch!r}, expected a value")

    def string(self) -> str:
        match = _STRING.match(self.text, self.pos)
        if match is None:
            end = self.text.find("\n", self.pos)
            raise self.fail(
                "unterminated or invalid string" if end != -1 else "unterminated string"
            )
        self.pos = match.end()
        decoded: str = json.loads(match.group())
        return decoded

    def obj(self, depth: int) -> JsonNode:
        start = self.pos
        self.pos += 1
        members: dict[str, JsonNode] = {}
        node = JsonNode("object", members, start, start)
        self.skip_ws()
        if self.peek() == "}":
            self.pos += 1
            node.end = self.pos
            return node
        while True:
            self.skip_ws()
            if self.peek() != '"':
                raise self.fail("expected a property name in double quotes")
            key_start = self.pos
            key = self.string()
            key_span = (key_start, self.pos)
            self.skip_ws()
            if self.peek() != ":":
                raise self.fail("expected ':' after property name")
            self.pos += 1
            member = self.value(depth + 1)
            if key in members:
                node.duplicate_keys.append((key, *key_span))
            members[key] = member
            node.key_spans[key] = key_span
            self.skip_ws()
            ch = self.peek()
            self.pos += 1
            if ch == "}":
                node.end = self.pos
                return node
            if ch != ",":
                raise self.fail("expected ',' or '}' after object member", self.pos - 1)

    def array(self, depth: int) -> JsonNode:
        start = self.pos
        self.pos += 1
        items: list[JsonNode] = []
        self.skip_ws()
        if self.peek() == "]":
            self.pos += 1
            return JsonNode("array", items, start, self.pos)
        while True:
            items.append(self.value(depth + 1))
            self.skip_ws()
            ch = self.peek()
            self.pos += 1
            if ch == "]":
                return JsonNode("array", items, start, self.pos)
            if ch != ",":
                raise self.fail("expected ',' or ']' after array element", self.pos - 1)


def parse(text: str) -> JsonNode:
    """Parse one JSON document, keeping source offsets; raise JsonSyntaxError on bad input."""
    parser = _Parser(text)
    root = parser.value(0)
    parser.skip_ws()
    if parser.pos != len(text):
        raise parser.fail("extra data after the JSON value")
    return root
