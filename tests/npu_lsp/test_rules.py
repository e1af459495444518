"""Each rule against its fixture: violations are marked `# expect: CODE`; every other line of
the fixture is code the rule must accept (Ruff-style fixtures, checked through the engine)."""

from __future__ import annotations

import ast
import re

import pytest
from engine_support import FIXTURES, expectations
from hypothesis import given, settings
from hypothesis import strategies as st

from npu_lsp.config import Config
from npu_lsp.diagnostics import apply_edits
from npu_lsp.engine import check_source
from npu_lsp.reexports import reexported
from npu_lsp.registry import RULES, load_all

load_all()
GRAPH_CODES = sorted(c for c, r in RULES.items() if r.family == "graphmode")


@pytest.mark.parametrize("code", GRAPH_CODES)
def test_rule_matches_fixture(code: str) -> None:
    path = FIXTURES / f"{code}.py"
    text = path.read_text(encoding="utf-8")
    diags = check_source(text, str(path), Config(select=(code,)))
    got = {(d.span.line, d.code) for d in diags}
    assert got == expectations(text)
    for d in diags:
        # a rule may lower its severity where MindSpore still compiles the code
        assert d.severity in (RULES[code].severity, "warning")
        assert d.message and d.source == "ascend-lens"


_TENSOR_SPELLING = re.compile(r"\b(ms|mindspore)\.Tensor\b")
_FROM_MINDSPORE = re.compile(r"^from mindspore import ([\w, ]+)$", re.M)


def _through_common(text: str) -> str:
    """The same program naming the tensor class through `mindspore.common`, line for line."""

    def one_import(m: re.Match[str]) -> str:
        names = [n.strip() for n in m.group(1).split(",")]
        if "Tensor" not in names:
            return m.group(0)
        rest = [n for n in names if n != "Tensor"]
        common = "from mindspore.common import Tensor"
        return f"from mindspore import {', '.join(rest)}; {common}" if rest else common

    return _FROM_MINDSPORE.sub(one_import, _TENSOR_SPELLING.sub(r"\1.common.Tensor", text))


#: (the public namespace as fixtures spell it, the internal module real code imports instead)
_INTERNAL_SPELLINGS = {
    "operations": (r"(?:\bms\.|\bmindspore\.)?\bops", "mindspore.ops", "mindspore.ops.operations"),
    "functional": (r"(?:\bms\.|\bmindspore\.)?\bops", "mindspore.ops", "mindspore.ops.functional"),
    "composite": (r"(?:\bms\.|\bmindspore\.)?\bops", "mindspore.ops", "mindspore.ops.composite"),
    "layer": (r"(?:\bms\.|\bmindspore\.)?\bnn", "mindspore.nn", "mindspore.nn.layer"),
    "dtype": (r"\b(?:ms|mindspore)", "mindspore", "mindspore.common.dtype"),
    "context": (r"\b(?:ms|mindspore)", "mindspore", "mindspore.context"),
}


def _through_internal(text: str, spelling: str) -> str:
    """The same program with each public name the internal module re-exports spelled through
    that module (`ops.ReduceSum` -> `_I.ReduceSum` after `import mindspore.ops.operations as
    _I`), line for line: the import joins the first import line."""
    prefix, public, internal = _INTERNAL_SPELLINGS[spelling]
    names = {n for n, target in reexported(internal).items() if target == public}
    pattern = re.compile(prefix + r"\.(\w+)\b(?!\s*=)")
    out = pattern.sub(lambda m: f"_I.{m.group(1)}" if m.group(1) in names else m.group(0), text)
    if out == text:
        return text
    lines = out.split("\n")
    first = next(
        i
        for i, line in enumerate(lines)
        if line.startswith(("import ", "from ")) and not line.rstrip().endswith(("(", "\\"))
    )
    lines[first] += f"; import {internal} as _I"
    return "\n".join(lines)


#: rules whose error MindSpore itself gives for one spelling only (measured), so a respelled
#: fixture must not keep its expectations: MS245's `ms.Tensor(...)` beside a module-level
#: Parameter fails, `ms.common.Tensor(...)` compiles (heldout33b probe `fix33d_gp3_common_tensor`)
_SPELLING_IS_THE_RULE = {("MS245", "common")}


def _respelled_fixtures() -> list[tuple[str, str]]:
    """(rule code, spelling) for each fixture that names something the spelling changes."""
    out = []
    for code in GRAPH_CODES:
        text = (FIXTURES / f"{code}.py").read_text(encoding="utf-8")
        if _through_common(text) != text:
            out.append((code, "common"))
        out.extend((code, s) for s in sorted(_INTERNAL_SPELLINGS) if _through_internal(text, s) != text)
    return [pair for pair in out if pair not in _SPELLING_IS_THE_RULE]


@pytest.mark.parametrize(("code", "spelling"), _respelled_fixtures())
def test_rule_reads_every_spelling_of_a_name(code: str, spelling: str) -> None:
    # `ms.common.Tensor`, `P.ReduceSum`, `F.shape`, `C.GradOperation`, `mstype.float32`,
    # `context.set_context`: real code reaches MindSpore's public objects through the modules
    # that define them, and a rule keyed on one spelling would miss (or misread) the others
    path = FIXTURES / f"{code}.py"
    text = path.read_text(encoding="utf-8")
    respelled = _through_common(text) if spelling == "common" else _through_internal(text, spelling)
    diags = check_source(respelled, str(path), Config(select=(code,)))
    assert {(d.span.line, d.code) for d in diags} == expectations(text)


@pytest.mark.parametrize("code", GRAPH_CODES)
def test_fixes_produce_valid_code_that_the_rule_accepts(code: str) -> None:
    path = FIXTURES / f"{code}.py"
    text = path.read_text(encoding="utf-8")
    cfg = Config(select=(code,))
    fixes = [d.fix for d in check_source(text, str(path), cfg) if d.fix is not None]
    if RULES[code].fix_availability == "none":
        assert not fixes
        return
    assert fixes, (
        f"{code} declares fix={RULES[code].fix_availability!r} but its fixture yields no fix"
    )
    fixed = apply_edits(text, [e for f in fixes for e in f.edits])
    ast.parse(fixed)
    remaining = {d.span.line for d in check_source(fixed, str(path), cfg) if d.fix is not None}
    assert not remaining


def test_every_fixture_belongs_to_a_rule() -> None:
    for path in FIXTURES.glob("*.py"):
        assert path.stem in RULES, f"fixture {path.name} has no rule"


def test_fixture_diagnostics_are_clean_python_outside_graph() -> None:
    # The same fixtures, with every rule on, never report internal errors.
    for path in FIXTURES.glob("*.py"):
        diags = check_source(path.read_text(encoding="utf-8"), str(path), Config())
        assert not [d for d in diags if d.code.startswith("AL")], path.name


def test_numpy_to_ops_table_names_real_numpy_functions() -> None:
    import numpy as np

    from npu_lsp.rules.graphmode.python_call_on_tensor import numpy_to_ops

    table = numpy_to_ops()
    assert table and all(callable(getattr(np, name, None)) for name in table)
    assert all(target.isidentifier() for target in table.values())


def test_cells_in_python_list_is_an_error_only_when_compilation_fails() -> None:
    # error: several cells, used by construct; warning: one cell, or a list construct never reads
    path = FIXTURES / "MS126.py"
    text = path.read_text(encoding="utf-8")
    diags = check_source(text, str(path), Config(select=("MS126",)))
    errors = {d.span.line for d in diags if d.severity == "error"}
    lines = text.splitlines()
    assert [lines[n - 1].strip() for n in sorted(errors)] == [
        "self.layers = [nn.Dense(3, 3) for _ in range(3)]  # expect: MS126",
        # repeated where construct reads the list: the line MindSpore names
        "for layer in self.layers:  # expect: MS126",
        'self.heads = {"cls": nn.Dense(4, 2), "box": nn.Dense(4, 4)}  # expect: MS126',
        'a = self.heads["cls"](x)  # expect: MS126',
        # a module-level list read by a jit function, and the loop MindSpore names
        "blocks = [nn.Dense(4, 4), nn.Dense(4, 4)]  # expect: MS126",
        "for b in blocks:  # expect: MS126",
        # cells added through keras' `Sequential.add`, and `sorted` of a plain dict of cells
        "for layer in self.layers_list:  # expect: MS126",
        "for name in sorted(self.encoders):  # expect: MS126",
        # cells of two classes whose parameter names clash (`HeadC` reuses `HeadA`'s names)
        "self.models = [HeadA(), HeadC()]  # expect: MS126",
        "return sum(m(x) for m in self.models)  # expect: MS126",
        # a comprehension choosing a cell or None, two turns choosing the cell, read in a loop
        "self.adapters = [Adapter(d) if i in layers else None for i in range(depth)]  # expect: MS126",
        "if self.adapters[i] is not None:  # expect: MS126",
        # the second of two appends one after the other, and the loop reading them
        "self.lin.append(nn.Dense(3, 3))  # expect: MS126",
        "for layer in self.lin:  # expect: MS126",
        # two SequentialCells of one Dense: both name it `0.weight`
        "self.twins = [nn.SequentialCell([nn.Dense(3, 3)]), nn.SequentialCell(nn.Dense(3, 3))]  # expect: MS126",
        "return a, self.twins[1](self.twins[0](x))  # expect: MS126",
    ]
    # warnings: one cell, a list construct never reads, cells without Parameters (losses), a
    # dict whose construct reads one key, a dict read by a construct argument and a list
    # read at one index, cells of classes whose parameter names cannot clash, a loop of
    # one turn appending one cell, the first of two appends, a SequentialCell's `0.weight`
    # beside a bare Dense's `weight`
    assert len(diags) - len(errors) == 13


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="0123456789.jJx_ \n(+", max_size=12))
def test_ms113_text_prefilter_agrees_with_its_pattern(text: str) -> None:
    from npu_lsp.rules.graphmode.complex_literal import IMAGINARY, has_imaginary_literal

    assert has_imaginary_literal(text) == bool(IMAGINARY.search(text))
