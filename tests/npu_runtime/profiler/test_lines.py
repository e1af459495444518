"""The per-line aggregate against docs/profile-format.md: fields, order, limits and arithmetic."""

from __future__ import annotations

import json
import os
import re
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from npu_runtime.profiler.lines import SCHEMA, aggregate

from .factory import Clock

DOC = Path(__file__).parents[3] / "docs" / "profile-format.md"


def schema() -> dict[str, Any]:
    text = resources.files("npu_runtime.profiler").joinpath("data", "profile.schema.json")
    return json.loads(text.read_text("utf-8"))


def doc_example() -> dict[str, Any]:
    return json.loads(DOC.read_text("utf-8").split("```json", 1)[1].split("```", 1)[0])


def doc_fields() -> set[str]:
    """Every field path the doc's table names; `.x` after `a[].b` in one row means `a[].x`."""
    out: set[str] = set()
    for cell in re.findall(r"^\| (`[^|]+?) \|", DOC.read_text("utf-8"), re.M):
        first, *rest = re.findall(r"`([^`]+)`", cell)
        base = first if first.endswith("[]") and rest else first.rsplit(".", 1)[0]
        out.add(first)
        out |= {base + r for r in rest}
    return out


def field_paths(obj: dict[str, Any], prefix: str = "") -> set[str]:
    """`a`, `lines[]`, `lines[].file`, ...: every key path, lists written as `name[]`."""
    out: set[str] = set()
    for key, value in obj.items():
        if isinstance(value, list):
            out.add(f"{prefix}{key}[]")
            for item in value:
                out |= field_paths(item, f"{prefix}{key}[].")
        else:
            out.add(prefix + key)
    return out


@pytest.fixture
def run() -> list:
    c = Clock()
    return [
        c.op("MatMul", 80.0, site=("/w/train.py", 42)),
        c.op("MatMul", 20.0, site=("/w/train.py", 42), bound="memory"),
        c.op("Add", 10.0, site=("/w/train.py", 42)),
        c.op("Add", 30.0, site=("/w/train.py", 50)),
        c.op("MemcpyH2D", 40.0, kind="memcpy", site=None, bound="memory"),
    ]


def test_matches_the_documented_example_shape(run: list, tmp_path: Path) -> None:
    doc = aggregate(run, device="Ascend910B2", trace_path=tmp_path / "trace.json")
    jsonschema.validate(doc, schema())
    jsonschema.validate(doc_example(), schema())
    # Same keys at every level as the documented example.
    assert field_paths(doc) == field_paths(doc_example())


def test_doc_table_names_every_field_and_no_other(run: list) -> None:
    assert field_paths(aggregate(run)) == doc_fields()


def test_numbers(run: list, tmp_path: Path) -> None:
    doc = aggregate(run, device="Ascend910B4", trace_path=tmp_path / "t.json")
    assert doc["schema"] == SCHEMA == "ascend-lens.profile/1"
    assert doc["device"] == "Ascend910B4"
    assert doc["trace"] == str(tmp_path / "t.json")
    assert (doc["total_us"], doc["op_count"]) == (180.0, 5)
    l42, l50 = doc["lines"]
    assert (l42["file"], l42["line"], l42["op_count"], l42["total_us"]) == (
        "/w/train.py",
        42,
        3,
        110.0,
    )
    assert l42["share"] == round(110 / 180, 4)
    assert l42["bound"] == "cube"  # 80 µs cube beats 30 µs memory
    assert l42["top_ops"] == [
        {"op_type": "MatMul", "count": 2, "total_us": 100.0, "bound": "cube"},
        {"op_type": "Add", "count": 1, "total_us": 10.0, "bound": "memory"},
    ]
    assert (l50["line"], l50["total_us"]) == (50, 30.0)
    # The copy has no site: in the totals and top_ops, in no line.
    assert doc["top_ops"][0] == {
        "op_type": "MatMul",
        "count": 2,
        "total_us": 100.0,
        "share": round(100 / 180, 4),
        "bound": "cube",
    }
    assert [t["op_type"] for t in doc["top_ops"]] == ["MatMul", "Add", "MemcpyH2D"]


def test_limits_and_order() -> None:
    c = Clock()
    recs = [c.op(f"Op{i:02d}", float(i + 1), site=("/w/x.py", 1)) for i in range(25)]
    doc = aggregate(recs)
    assert len(doc["lines"][0]["top_ops"]) == 5
    assert len(doc["top_ops"]) == 20
    assert [t["op_type"] for t in doc["top_ops"][:2]] == ["Op24", "Op23"]
    assert doc["trace"] is None


def test_ties_are_stable_and_files_absolute(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(tmp_path)
    c = Clock()
    recs = [
        c.op("Add", 5.0, site=("b.py", 2)),
        c.op("Add", 5.0, site=("a.py", 9)),
        c.op("Add", 5.0, site=("<ipython-input-3>", 1)),
    ]
    files = [ln["file"] for ln in aggregate(recs)["lines"]]
    # Equal time: ordered by path, then line, so the output never depends on record order.
    assert files == [
        os.path.join(tmp_path, "a.py"),
        os.path.join(tmp_path, "b.py"),
        "<ipython-input-3>",
    ]


def test_empty_run() -> None:
    doc = aggregate([])
    jsonschema.validate(doc, schema())
    assert (doc["total_us"], doc["op_count"], doc["lines"], doc["top_ops"]) == (0.0, 0, [], [])
