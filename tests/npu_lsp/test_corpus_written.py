"""Independently written graph-mode programs (fixtures/written/<set>), judged by MindSpore 2.10.

A case counts at a level when PyNative accepts it and MindSpore gave a verdict at that level;
`check` (with that syntax level) must then report an error-severity graph-mode diagnostic
exactly when MindSpore rejected. Disagreements we know of live in the set's known_misses.json
with what MindSpore said; they are excluded here and must still disagree.
"""

from __future__ import annotations

import json
from dataclasses import replace
from functools import cache
from pathlib import Path

import pytest
from engine_support import FIXTURES

from npu_lsp.config import Config
from npu_lsp.engine import check_path

WRITTEN = FIXTURES / "written"
LEVELS = ("lax", "strict")
SETS = sorted(p.parent for p in WRITTEN.glob("*/labels.json"))


@cache  # once per set, not per test (read-only here)
def _labels(folder: Path) -> dict[str, dict[str, object]]:
    return json.loads((folder / "labels.json").read_text())


@cache
def _known(folder: Path) -> dict[str, dict[str, str]]:
    path = folder / "known_misses.json"
    return json.loads(path.read_text()) if path.is_file() else {}


def _counted(label: dict[str, object], level: str) -> bool:
    return label.get("pynative") == "accept" and label.get(level) in ("accept", "reject")


def _verdict(path: Path, level: str) -> str:
    config = Config() if level == "lax" else replace(Config(), syntax_level="strict")
    diags = check_path(path, config)
    return "reject" if any(d.severity == "error" and d.code.startswith("MS") for d in diags) else "accept"


PAIRS = sorted(
    (folder.name, name, level)
    for folder in SETS
    for name, label in _labels(folder).items()
    for level in LEVELS
    if _counted(label, level) and level not in _known(folder).get(name, {})
)


@pytest.mark.parametrize(("corpus", "name", "level"), PAIRS)
def test_check_agrees_with_mindspore(corpus: str, name: str, level: str) -> None:
    folder = WRITTEN / corpus
    assert _verdict(folder / "cases" / name, level) == _labels(folder)[name][level]


@pytest.mark.parametrize("folder", SETS, ids=lambda p: p.name)
def test_set_is_complete_and_known_misses_still_disagree(folder: Path) -> None:
    labels = _labels(folder)
    assert {p.name for p in (folder / "cases").glob("*.py")} == set(labels)
    assert (folder / "README.md").is_file()
    for name, levels in _known(folder).items():
        for level, why in levels.items():
            assert level in LEVELS and len(why) > 20, (name, level)
            verdict = _verdict(folder / "cases" / name, level)
            assert verdict != labels[name][level], f"{name} [{level}] agrees now: drop it from known_misses.json"
