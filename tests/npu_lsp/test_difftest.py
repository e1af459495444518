"""Differential tests against MindSpore 2.10: generated programs, judged by MindSpore itself.

`difftest/generator.py` composes MindSpore idioms into whole programs from a seed;
`difftest/judge_batch.py` ran each stored program through MindSpore 2.10 (PyNative, GRAPH_MODE
at the default level, and STRICT) and wrote the verdicts to `fixtures/difftest/labels.json`.
CI has no MindSpore: it asserts that `check` reports an error exactly when MindSpore rejected,
at both levels. Disagreements we know of are listed in `known_misses.json` with what MindSpore
said; they are excluded from the verdict test, and a test fails once one starts agreeing (so
the list shrinks as the checker improves, and never hides a fixed case).
"""

from __future__ import annotations

import ast
import json
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from engine_support import FIXTURES

from npu_lsp.config import Config
from npu_lsp.engine import check_path

sys.path.insert(0, str(Path(__file__).resolve().parent / "difftest"))
from generator import V2_FROM, V3_FROM, V4_FROM, V5_FROM, V6_FROM, generate  # noqa: E402

STORE = FIXTURES / "difftest"
LABELS: dict[str, dict[str, object]] = json.loads((STORE / "labels.json").read_text())
KNOWN: dict[str, dict[str, str]] = json.loads((STORE / "known_misses.json").read_text())
LEVELS = ("lax", "strict")


def _counted(label: dict[str, object], level: str) -> bool:
    return label.get("pynative") == "accept" and label.get(level) in ("accept", "reject")


def _verdict(name: str, level: str) -> str:
    config = Config() if level == "lax" else replace(Config(), syntax_level="strict")
    diags = check_path(STORE / "cases" / name, config)
    return "reject" if any(d.severity == "error" and d.code.startswith("MS") for d in diags) else "accept"


PAIRS = sorted(
    (name, level)
    for name, label in LABELS.items()
    for level in LEVELS
    if _counted(label, level) and level not in KNOWN.get(name, {})
)


@pytest.mark.parametrize(("name", "level"), PAIRS)
def test_check_agrees_with_mindspore(name: str, level: str) -> None:
    assert _verdict(name, level) == LABELS[name][level]


def test_known_misses_still_disagree_and_say_what_mindspore_said() -> None:
    for name, levels in KNOWN.items():
        for level, why in levels.items():
            assert level in LEVELS and len(why) > 20, (name, level)
            assert _verdict(name, level) != LABELS[name][level], f"{name} [{level}] agrees now: drop it from known_misses.json"


def test_the_judged_batch_is_large_and_mostly_agreed() -> None:
    for level in LEVELS:
        counted = [n for n, lab in LABELS.items() if _counted(lab, level)]
        known = [n for n in counted if level in KNOWN.get(n, {})]
        assert len(counted) >= 150
        assert len(known) <= 0.03 * len(counted), (level, len(known), len(counted))
        rejected = [n for n in counted if LABELS[n][level] == "reject"]
        assert len(rejected) >= 0.08 * len(counted)  # the batch exercises rejections too


def test_stored_cases_are_what_the_generator_writes() -> None:
    """MindSpore judged these exact files; the generator must still produce them."""
    for path in sorted((STORE / "cases").glob("seed_*.py")):
        seed = int(path.stem.removeprefix("seed_"))
        assert path.read_text() == generate(seed), path.name
    assert {p.name for p in (STORE / "cases").glob("*.py")} == set(LABELS)


@pytest.mark.parametrize(
    "first", [200, V2_FROM, V3_FROM, V4_FROM, V5_FROM, V6_FROM], ids=["v1", "v2", "v3", "v4", "v5", "v6"]
)
def test_generator_is_deterministic_and_writes_python(first: int) -> None:
    texts = [generate(s) for s in range(first, first + 60)]
    assert texts == [generate(s) for s in range(first, first + 60)]
    assert len(set(texts)) == len(texts)
    for text in texts:
        ast.parse(text)
