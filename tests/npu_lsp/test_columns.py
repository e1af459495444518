"""Span columns are code points: `ast` byte offsets converted once, centrally."""

from __future__ import annotations

import ast
from pathlib import Path

from npu_lsp.columns import LineColumns, split_lines
from npu_lsp.config import Config
from npu_lsp.diagnostics import Span
from npu_lsp.engine import WorkspaceIndex, check_path, check_source


def test_byte_offsets_become_code_point_columns_only_where_needed() -> None:
    text = 'a = 1\nb = "é🚀"; c = 2\n'
    cols = LineColumns(text)
    node = ast.parse(text).body[2]  # `c = 2`
    assert node.col_offset == len('b = "é🚀"; '.encode())
    assert cols.column(2, node.col_offset) == len('b = "é🚀"; ') + 1
    assert cols.column(1, 4) == 5  # an ASCII line is left as it is
    assert LineColumns("x = 1\n").column(1, 3) == 4


def test_lines_split_like_ast_numbers_them() -> None:
    # \f and \u2028 are not line breaks for Python; str.splitlines would split there
    text = 'x = 1\f\ny = "a\u2028b"\r\nz = 3\rw = 4'
    assert split_lines(text) == ["x = 1\f", 'y = "a\u2028b"', "z = 3", "w = 4"]


def test_graph_rule_span_after_a_separator_char_inside_a_string() -> None:
    src = (
        "from mindspore import nn\n\n\nclass Net(nn.Cell):\n"
        '    def construct(self, x):\n        t = "a\u2028b"; s = {1}\n        return x\n'
    )
    diags = check_source(src, "n.py", Config(select=("MS109",)))
    assert [(d.line, d.column) for d in (x.span for x in diags)] == [
        (6, src.split("\n")[5].index("{") + 1)
    ]


def test_noqa_is_read_from_the_line_ast_numbers() -> None:
    src = (
        "from mindspore import nn\n\n\nclass Net(nn.Cell):\n"
        '    def construct(self, x):\n        t = "a\u2028b"\n'
        "        s = {1}  # noqa: MS109\n        u = {2}\n        return x\n"
    )
    diags = check_source(src, "n.py", Config(select=("MS109",)))
    assert [d.span.line for d in diags] == [8]


def test_call_site_in_another_file_has_code_point_columns(tmp_path: Path) -> None:
    """A helper's related location (the compiled call in another file) after CJK text."""
    (tmp_path / "helpers.py").write_text(
        "def helper(x):\n    try:\n        return x\n    except ValueError:\n        return x\n",
        encoding="utf-8",
    )
    net = (
        "from mindspore import nn\nfrom helpers import helper\n\n\nclass Net(nn.Cell):\n"
        '    def construct(self, x):\n        t = "张量"; y = helper(x)\n        return y\n'
    )
    (tmp_path / "net.py").write_text(net, encoding="utf-8")
    index = WorkspaceIndex.from_paths([tmp_path], root=str(tmp_path))
    diags = check_path(tmp_path / "helpers.py", Config(select=("MS101",)), index)
    sites = [r.span for d in diags for r in d.related if r.path.endswith("net.py")]
    line = net.split("\n")[6]
    assert sites == [Span(7, line.index("helper") + 1, 7, line.index("(x)") + 4)]
