"""`npu_lsp.fixing`: which fixes one round takes, the fix loop, and the LSP edit for fix-all."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from npu_lsp.config import Config
from npu_lsp.diagnostics import Diagnostic, Edit, Fix, Span, apply_edits
from npu_lsp.fixing import choose, conflicts, fix_source, minimal_edit, unified_diff

FIXTURES = Path(__file__).parent / "fixtures"


def diag(code: str, *edits: Edit, safe: bool = True) -> Diagnostic:
    span = edits[0].span if edits else Span(1, 1, 1, 2)
    return Diagnostic(code, "m", "warning", span, Fix("t", edits, safe))


def e(line: int, col: int, end: int, text: str) -> Edit:
    return Edit(Span(line, col, line, end), text)


def test_identical_edits_are_shared_and_overlapping_fixes_wait() -> None:
    shared = e(1, 13, 13, "\nimport torch_npu")
    a = diag("A", e(2, 5, 9, "npu"), shared)
    b = diag("B", e(3, 1, 5, "npu"), shared)
    c = diag("C", e(2, 7, 8, "X"))  # overlaps a
    assert choose([c, b, a]) == [a, b]


def test_unsafe_fixes_only_when_asked() -> None:
    unsafe = diag("U", e(1, 1, 2, "x"), safe=False)
    assert choose([unsafe]) == []
    assert choose([unsafe], unsafe=True) == [unsafe]


def test_two_insertions_at_one_point_conflict_unless_identical() -> None:
    assert conflicts(e(1, 5, 5, "a"), e(1, 5, 5, "b"))
    assert not conflicts(e(1, 5, 5, "a"), e(1, 5, 5, "a"))
    assert not conflicts(e(1, 1, 5, "a"), e(1, 5, 9, "b"))  # touching ranges
    assert conflicts(e(1, 1, 5, "a"), e(1, 3, 3, "b"))  # insertion inside a replacement


def test_fix_loop_reaches_a_fixpoint_and_counts_what_it_fixed() -> None:
    text = "import torch\nx = t.cuda()\ny = t.to('cuda:0')\n"
    outcome = fix_source(text, "a.py", Config(select=("NPU",)))
    assert outcome.text == "import torch\nimport torch_npu\nx = t.npu()\ny = t.to('npu:0')\n"
    assert dict(outcome.fixed) == {"NPU201": 1, "NPU204": 1}
    assert outcome.remaining == []


def test_minimal_edit_replaces_only_the_changed_lines() -> None:
    before = "a\nb\nc\nd\n"
    after = "a\nB\nx\nc\nd\n"
    edit = minimal_edit(before, after)
    assert edit == Edit(Span(2, 1, 3, 1), "B\nx\n")
    assert apply_edits(before, [edit]) == after
    assert minimal_edit(before, before) is None
    tail = minimal_edit("a\nb", "a\nc")
    assert tail is not None and apply_edits("a\nb", [tail]) == "a\nc"


def test_unified_diff_marks_a_missing_final_newline() -> None:
    out = unified_diff("p.py", "x = 1", "x = 2")
    assert out.splitlines() == [
        "--- p.py",
        "+++ p.py",
        "@@ -1 +1 @@",
        "-x = 1",
        "\\ No newline at end of file",
        "+x = 2",
        "\\ No newline at end of file",
    ]


def test_apply_edits_numbers_lines_as_ast_does() -> None:
    # \x0c (form feed) is not a line break for Python; str.splitlines would make it one.
    text = "a = '\x0c'\nb = 1\n"
    assert apply_edits(text, [e(2, 5, 6, "2")]) == "a = '\x0c'\nb = 2\n"


@pytest.mark.parametrize("path", sorted(FIXTURES.glob("MS*.py")), ids=lambda p: p.name)
def test_fix_all_on_graph_mode_fixtures_compiles_and_is_a_fixpoint(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    for unsafe in (False, True):
        fixed = fix_source(text, str(path), Config(), unsafe=unsafe).text
        ast.parse(fixed)
        assert fix_source(fixed, str(path), Config(), unsafe=unsafe).text == fixed
