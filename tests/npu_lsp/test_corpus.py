"""The shared graph-mode corpus: MindSpore 2.10's own verdicts are ground truth.

A case is "rejected" by the linter when it reports at least one error-severity graph-mode
diagnostic. Where MindSpore names an error line, a diagnostic (or, for errors inside a
helper, the call site in its related information) must be on that line.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from engine_support import CORPUS

from npu_lsp.config import Config
from npu_lsp.engine import check_path

LABELS: dict[str, dict[str, object]] = (
    json.loads((CORPUS / "labels.json").read_text()) if (CORPUS / "labels.json").is_file() else {}
)


def _verdict(path: Path, level: str | None) -> tuple[str, set[int]]:
    diags = check_path(path, Config(syntax_level=level))  # type: ignore[arg-type]
    errors = [d for d in diags if d.severity == "error" and d.code.startswith("MS")]
    lines = {d.span.line for d in errors}
    return ("reject" if errors else "accept"), lines


@pytest.mark.parametrize("name", sorted(LABELS) or ["<absent>"])
@pytest.mark.parametrize("level", ["lax", "strict"])
def test_case_gets_mindspore_verdict(name: str, level: str, corpus: Path) -> None:
    label = LABELS[name]
    if label.get(level) not in ("accept", "reject"):
        pytest.skip("no verdict at this level")
    got, lines = _verdict(corpus / "cases" / name, None if level == "lax" else "strict")
    assert got == label[level]
    if got == "reject" and label.get("error_line") is not None:
        assert label["error_line"] in lines


def test_agreement_is_at_least_95_percent(corpus: Path) -> None:
    scored = agree = 0
    for name, label in LABELS.items():
        if label.get("pynative") != "accept" or label.get("lax") not in ("accept", "reject"):
            continue
        scored += 1
        agree += _verdict(corpus / "cases" / name, None)[0] == label["lax"]
    assert scored and agree / scored >= 0.95
