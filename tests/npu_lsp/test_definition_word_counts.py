"""The invariant the `class` / `def` word counts rely on: every definition statement of a tree
is spelled by its keyword in the text the tree was parsed from, so the text holds at least as
many `def` (`class`) words as the tree has functions (classes), and when it holds exactly as
many as the module level defines, no definition is nested anywhere.

Read by the call narrowing of MS143, MS152 and MS182 (`Rule.file_calls`: the names of the
module-level definitions stand for every definition of the file) and by
`scope._definition_lines` (substring counts: no `def` line need be looked for inside
functions). If the counts stopped covering every definition (a text that is not the tree's,
words counted once per distinct word, keywords left out of the words), narrowing would drop
the calls of nested definitions: the diagnostics below would go missing.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from engine_support import FIXTURES

from npu_lsp.config import Config
from npu_lsp.engine import Context, check_source
from npu_lsp.registry import RULES, load_all
from npu_lsp.scope import ScopeResolver

TRICKY = '''import functools


@functools.lru_cache
async def fetch(x, default=None):  # "class" and "def" in a comment
    def inner():
        class Local:
            pass
        return Local

    return inner, "def class"


class Outer:
    class Inner:
        @classmethod
        def make(cls):
            return cls()

    def method(self, f=lambda: 1):
        async def nested():
            return f
        return nested
'''

HEAD = "import numpy as np\nimport mindspore as ms\nfrom mindspore import nn, ops\nfrom mindspore.ops import operations as P\n\nms.set_context(mode=ms.GRAPH_MODE)\n\n\nclass Top(nn.Cell):\n    def construct(self, x):\n        return x\n\n\ndef build():\n"

#: per rule: a class nested in a function, whose compiled method the rule reports on (the
#: line of the diagnostic, counted from the top of the source)
NESTED = {
    "MS143": (
        HEAD
        + "    class Nested(nn.Cell):\n"
        "        def deepen(self, x):\n"
        "            if x.sum() > 100:\n"
        "                return x\n"
        "            return self.deepen(x * 2)\n\n"
        "        def construct(self, x):\n"
        "            return self.deepen(x)\n\n"
        "    return Nested()(ms.Tensor([1.0]))\n"
    ),
    "MS152": (
        HEAD
        + "    class Picker(nn.Cell):\n"
        "        def __init__(self):\n"
        "            super().__init__()\n"
        "            self.glue = P.Concat(0)\n\n"
        "        def construct(self, hidden, n):\n"
        "            picked = []\n"
        "            i = 0\n"
        "            while i < n:\n"
        "                picked.append(hidden[i])\n"
        "                i = i + 1\n"
        "            return self.glue(picked)\n\n"
        "    return Picker()(ms.Tensor(np.ones((4, 2), np.float32)), ms.Tensor(3))\n"
    ),
    "MS182": (
        HEAD
        + "    class Reset(nn.Cell):\n"
        "        def __init__(self):\n"
        "            super().__init__()\n"
        "            self.order = None\n\n"
        "        def reset(self, n):\n"
        "            self.order = list(range(n))\n\n"
        "        def construct(self, x, n):\n"
        "            self.reset(n)\n"
        "            return x * len(self.order)\n\n"
        "    return Reset()(ms.Tensor(1.0), 3)\n"
    ),
}


def _counts(text: str) -> tuple[int, int, int, int]:
    """(`def` words, functions, `class` words, classes) as the rules see them."""
    tree = ast.parse(text)
    ctx = Context("m.py", text, tree, Config(), ScopeResolver(tree, "m.py", None, None, text=text))
    words = ctx.text_words()
    assert words is not None
    nodes = list(ast.walk(tree))
    functions = sum(isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) for n in nodes)
    classes = sum(isinstance(n, ast.ClassDef) for n in nodes)
    return words.get("def", 0), functions, words.get("class", 0), classes


@pytest.mark.parametrize("path", [None, *sorted(FIXTURES.glob("MS*.py"))], ids=lambda p: p.name if p else "tricky")
def test_every_definition_spells_its_keyword(path: Path | None) -> None:
    text = TRICKY if path is None else path.read_text(encoding="utf-8")
    if not text.isascii():
        pytest.skip("word counts are only made for ASCII text (the rules then narrow nothing)")
    def_words, functions, class_words, classes = _counts(text)
    assert def_words >= functions and class_words >= classes
    assert text.count("def") >= functions and text.count("class") >= classes  # scope.py's


@contextmanager
def _no_narrowing(code: str) -> Iterator[None]:
    found = RULES[code]
    cls = found if isinstance(found, type) else type(found)
    saved = cls.__dict__["file_calls"]
    cls.file_calls = lambda self, ctx: None  # type: ignore[method-assign]
    try:
        yield
    finally:
        cls.file_calls = saved  # type: ignore[method-assign]


@pytest.mark.parametrize("code", sorted(NESTED))
def test_narrowing_keeps_the_calls_of_nested_definitions(code: str) -> None:
    load_all()
    src = NESTED[code]
    narrowed = [(d.code, d.span.line) for d in check_source(src, "m.py", Config()) if d.code == code]
    with _no_narrowing(code):
        every = [(d.code, d.span.line) for d in check_source(src, "m.py", Config()) if d.code == code]
    assert narrowed and narrowed == every
