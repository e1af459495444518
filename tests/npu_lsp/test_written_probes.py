"""Probes written while fixing a written set (fixtures/written/<set>/probes), judged by MindSpore 2.10.

Each probe varies one idiom the set's misses showed (another spelling, position, an accepted
neighbour); `probe_labels.json` holds the judge's verdicts. `check` must agree at LAX and
STRICT, except for the disagreements listed in `probe_known_misses.json` with MindSpore's
words, which must still disagree. The probes are not part of the held-out score.

A set whose `probes/` holds packages (folders of modules, as `written/crossmod/` does) is
a multi-module program per probe: each probe is checked with the index of its folder, as
`check` of that folder would, and judged with the folder on `sys.path`
(`judge_files.py --pythonpath probes`).
"""

from __future__ import annotations

import json
from dataclasses import replace
from functools import cache
from pathlib import Path

import pytest
from engine_support import FIXTURES

from npu_lsp.config import Config
from npu_lsp.engine import WorkspaceIndex, check_path

LEVELS = ("lax", "strict")
FOLDERS = sorted(p.parent for p in (FIXTURES / "written").glob("*/probe_labels.json"))


@cache  # once per file, not per test: the label stores are large (read-only here)
def _load(path: Path) -> dict[str, dict[str, object]]:
    return json.loads(path.read_text()) if path.is_file() else {}


@cache
def _holds_packages(probes: Path) -> bool:
    return any(p.is_dir() and any(p.glob("*.py")) for p in probes.iterdir())


def _workspace(probes: Path) -> WorkspaceIndex | None:
    """The index of a probe folder holding packages (None: single-file probes)."""
    if not _holds_packages(probes):
        return None
    return WorkspaceIndex.from_paths([probes], root=str(probes))


def _verdict(path: Path, level: str) -> str:
    config = Config() if level == "lax" else replace(Config(), syntax_level="strict")
    diags = check_path(path, config, _workspace(path.parent))
    return "reject" if any(d.severity == "error" and d.code.startswith("MS") for d in diags) else "accept"


CASES = sorted(
    (folder.name, name, level, known)
    for folder in FOLDERS
    for name, label in _load(folder / "probe_labels.json").items()
    for level in LEVELS
    if label.get("pynative") == "accept" and label.get(level) in ("accept", "reject")
    for known in [level in _load(folder / "probe_known_misses.json").get(name, {})]
)


@pytest.mark.parametrize(("corpus", "name", "level", "known"), CASES)
def test_probe_verdict(corpus: str, name: str, level: str, known: bool) -> None:
    folder = FIXTURES / "written" / corpus
    expected = _load(folder / "probe_labels.json")[name][level]
    got = _verdict(folder / "probes" / name, level)
    if known:
        assert got != expected, f"{name} [{level}] agrees now: drop it from probe_known_misses.json"
    else:
        assert got == expected


@pytest.mark.parametrize("folder", FOLDERS, ids=lambda p: p.name)
def test_probes_are_labelled_and_misses_explained(folder: Path) -> None:
    labels = _load(folder / "probe_labels.json")
    assert {p.name for p in (folder / "probes").glob("*.py")} == set(labels)
    for name, levels in _load(folder / "probe_known_misses.json").items():
        assert name in labels
        for level, why in levels.items():
            assert level in LEVELS and len(why) > 20, (name, level)
