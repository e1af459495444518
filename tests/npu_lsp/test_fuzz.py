"""Hypothesis fuzzing of the engine over mutated Python: it must never raise, every span must
be well formed, and no rule may crash (no AL003) on code that still parses."""

from __future__ import annotations

import ast
import warnings
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from npu_lsp.config import Config
from npu_lsp.engine import check_source

FIXTURES = Path(__file__).parent / "fixtures"
SEEDS = [p.read_text(encoding="utf-8") for p in sorted(FIXTURES.glob("*.py"))]
CORPUS = Path(__file__).resolve().parents[3] / "shared" / "reference" / "graphmode" / "cases"
if CORPUS.is_dir():
    SEEDS += [p.read_text(encoding="utf-8") for p in sorted(CORPUS.glob("*.py"))]
TOKENS = [
    "x",
    "self",
    ".",
    "(",
    ")",
    ":",
    "\n",
    "    ",
    "if x.sum() > 0:",
    "return ",
    "del ",
    "yield ",
    "try:",
    "except:",
    "{",
    "}",
    "[",
    "]",
    ",",
    "lambda v: v",
    "@ms.jit\n",
    "async ",
    "range(x)",
    "x.asnumpy()",
    "global x\n",
    "for i in x:",
    "else:",
    "while x:",
    "with open(x):",
    "1j",
    "**d",
    "class C:",
    "def f(self, x, /, y):",
    "self.count += 1\n",
    "raise ImportError\n",
    "\t",
    "#",
    "'",
    '"',
    "\\",
    "nonlocal x\n",
    "ms.set_context(jit_syntax_level=ms.STRICT)\n",
    "match x:\n    ",
    "case {'k': v, **rest}:",
    "case [a, *rest] as w:",
    "case C(p=q) | None:",
    "case _:",
]
STRICT = Config(syntax_level="strict")


def _mutate(seed: str, edits: list[tuple[int, int, str]]) -> str:
    text = seed
    for pos, cut, insert in edits:
        at = pos % (len(text) + 1)
        text = text[:at] + insert + text[at + cut % 8 :]
    return text


def _check(text: str) -> None:
    for cfg in (Config(), STRICT):
        diags = check_source(text, "fuzz.py", cfg)
        lines = text.splitlines() or [""]
        for d in diags:
            s = d.span
            assert 1 <= s.line <= s.end_line <= max(len(lines), 1) + 1
            assert s.column >= 1 and s.end_column >= 1
            assert d.severity in ("error", "warning", "info", "hint")
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                ast.parse(text)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        crashes = [d.message for d in diags if d.code == "AL003"]
        assert not crashes, crashes


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.sampled_from(SEEDS),
    edits=st.lists(
        st.tuples(st.integers(0, 10_000), st.integers(0, 7), st.sampled_from(TOKENS)),
        min_size=1,
        max_size=6,
    ),
)
def test_mutated_sources_never_crash(seed: str, edits: list[tuple[int, int, str]]) -> None:
    _check(_mutate(seed, edits))


@settings(max_examples=80, deadline=None)
@given(text=st.text(max_size=400))
def test_arbitrary_text_never_crashes(text: str) -> None:
    _check(text)


@settings(max_examples=60, deadline=None)
@given(
    seed=st.sampled_from(SEEDS),
    drop=st.lists(st.integers(0, 200), max_size=10),
)
def test_dropped_lines_never_crash(seed: str, drop: list[int]) -> None:
    lines = seed.splitlines(keepends=True)
    _check("".join(line for i, line in enumerate(lines) if i not in set(drop)))
