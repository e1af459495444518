"""Unit tests of the server's pure parts: hover, notebook joining, settings, conversions,
debouncing. (The end-to-end behaviour is in the other test_lsp_* modules.)"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from lsprotocol import types as lsp
from pygls.workspace.position_codec import PositionCodec

from npu_lsp import api_table, convert
from npu_lsp.debounce import Debouncer
from npu_lsp.diagnostics import Diagnostic, Edit, Fix, Span
from npu_lsp.hover import hover
from npu_lsp.notebook import join_cells, neutralise_magics, split_diagnostics
from npu_lsp.server import is_analysable
from npu_lsp.settings_lsp import DEFAULT_DEBOUNCE_MS, parse_settings
from npu_runtime.errors import lookup

# ---------------------------------------------------------------- hover


def test_api_table_rows_are_complete_and_unique() -> None:
    rows = api_table.entries()
    assert len(rows) >= 40
    assert len({r.python for r in rows}) == len(rows)
    for row in rows:
        assert row.python.startswith("acl.") and row.signature.startswith(row.python + "(")
        assert row.returns
    # Every CUDA runtime name from the reference correspondence table is covered.
    for cuda in (
        "cudaMalloc",
        "cudaMemcpyAsync",
        "cudaStreamSynchronize",
        "cudaEventElapsedTime",
        "cudaMemGetInfo",
    ):
        assert api_table.find(cuda) is not None, cuda


@pytest.mark.parametrize(
    ("source", "column", "expect"),
    [
        ("import acl\nacl.rt.memcpy(d, n, s, n, 1)\n", 9, "aclrtMemcpy"),
        ("import acl as A\nA.rt.free(p)\n", 7, "cudaFree"),
        ("from acl import rt as r\nr.synchronize_stream(s)\n", 5, "cudaStreamSynchronize"),
        ("import acl\nacl.init()\n", 6, "aclInit"),
        ("# cudaEventRecord maps to\n", 5, "acl.rt.record_event"),
    ],
)
def test_hover_on_api_names(source: str, column: int, expect: str) -> None:
    line = 2 if source.count("\n") > 1 else 1
    result = hover(source, line, column)
    assert result is not None and expect in result.markdown


def test_hover_on_module_prefix_and_unknown_names_is_none() -> None:
    text = "import acl\nacl.rt.malloc(1, 0)\nfoo.rt.malloc(1, 0)\n"
    assert hover(text, 2, 2) is None  # `acl` itself
    assert hover(text, 3, 10) is None  # not acl
    assert hover(text, 9, 1) is None  # past the end


def test_hover_error_codes_only_in_strings_and_comments() -> None:
    text = 'x = 507011\ns = "failed: 507011"\n"""\nlog: 507011\n"""\ny = 123456  # 100000\n'
    assert hover(text, 1, 6) is None
    in_string = hover(text, 2, 16)
    assert in_string is not None and lookup(507011).name in in_string.markdown
    in_docstring = hover(text, 4, 7)
    assert in_docstring is not None and in_docstring.span == Span(4, 6, 4, 12)
    assert hover(text, 6, 6) is None  # unknown code, and in code anyway
    in_comment = hover(text, 6, 16)
    assert in_comment is not None and lookup(100000).name in in_comment.markdown


def test_hover_on_alias_constant_names_the_preferred_one() -> None:
    info = lookup(0)
    result = hover("if ret == ACL_SUCCESS:\n    pass\n", 1, 12)
    assert result is not None and result.markdown.startswith(f"**{info.name}** = `0`")


# ---------------------------------------------------------------- notebooks


def test_magics_become_same_length_comments() -> None:
    assert neutralise_magics("%time f()\n  !ls\nx = 1") == "#time f()\n  #ls\nx = 1"
    assert neutralise_magics("%%bash\necho hi\n") == "#%bash\n#cho hi\n"


def test_join_and_map_back_to_cells() -> None:
    joined = join_cells([("c1", "import torch"), ("c2", ""), ("c3", "a = 1\nb = x.cuda()\n")])
    assert joined.text == "import torch\n\na = 1\nb = x.cuda()\n"
    fix = Fix(
        "rename", (Edit(Span(4, 7, 4, 11), "npu"), Edit(Span(1, 13, 1, 13), "\nimport torch_npu"))
    )
    diag = Diagnostic("NPU201", "m", "warning", Span(4, 7, 4, 11), fix)
    located = split_diagnostics(joined, [diag], "/nb.ipynb")
    assert located["c1"] == [] and located["c2"] == []
    (item,) = located["c3"]
    assert item.diagnostic.span == Span(2, 7, 2, 11)
    assert item.edits == (
        ("c3", Edit(Span(2, 7, 2, 11), "npu")),
        ("c1", Edit(Span(1, 13, 1, 13), "\nimport torch_npu")),
    )


def test_a_fix_group_keeps_one_edit_tuple_across_cells() -> None:
    joined = join_cells([("c1", "import torch"), ("c2", "a = x.cuda()\nb = y.cuda()\n")])
    edits = (
        Edit(Span(2, 7, 2, 11), "npu"),
        Edit(Span(3, 7, 3, 11), "npu"),
        Edit(Span(1, 13, 1, 13), "\nimport torch_npu"),
    )
    group = [
        Diagnostic("NPU201", "m", "warning", Span(line, 7, line, 11), Fix("rename", edits))
        for line in (2, 3)
    ]
    first, second = split_diagnostics(joined, group, "/nb.ipynb")["c2"]
    assert first.edits is second.edits
    assert first.edits == (
        ("c2", Edit(Span(1, 7, 1, 11), "npu")),
        ("c2", Edit(Span(2, 7, 2, 11), "npu")),
        ("c1", Edit(Span(1, 13, 1, 13), "\nimport torch_npu")),
    )


def test_a_span_crossing_cells_is_clipped_and_its_fix_dropped() -> None:
    joined = join_cells([("c1", "x = (\n"), ("c2", "1)\n")])
    fix = Fix("f", (Edit(Span(1, 5, 2, 3), "1"),))
    located = split_diagnostics(
        joined, [Diagnostic("X1", "m", "error", Span(1, 5, 2, 3), fix)], "/nb.ipynb"
    )
    (item,) = located["c1"]
    assert item.diagnostic.span == Span(1, 5, 1, 6) and item.edits == ()


# ---------------------------------------------------------------- settings


def test_settings_defaults_and_wrapping() -> None:
    assert parse_settings(None).debounce_ms == DEFAULT_DEBOUNCE_MS
    wrapped = parse_settings({"ascendLens": {"hover": False, "debounceMs": 0, "select": ["NPU"]}})
    assert (wrapped.hover, wrapped.debounce_ms, wrapped.lint) == (False, 0, {"select": ["NPU"]})
    assert parse_settings({"debounce-ms": 40}).debounce_ms == 40


def test_bad_settings_fall_back_with_problems() -> None:
    bad = parse_settings({"hover": "yes", "debounceMs": -1, "enable": None})
    assert (bad.hover, bad.debounce_ms, bad.enable) == (True, DEFAULT_DEBOUNCE_MS, True)
    assert len(bad.problems) == 3
    assert parse_settings(["not", "an", "object"]).problems


# ---------------------------------------------------------------- conversions


def test_ranges_use_utf16_units() -> None:
    lines = ['s = "😀x"\n']
    rng = convert.to_range(Span(1, 7, 1, 8), lines, PositionCodec())
    assert rng == lsp.Range(start=lsp.Position(0, 7), end=lsp.Position(0, 8))
    assert convert.from_position(lsp.Position(0, 7), lines, PositionCodec()) == (1, 7)


def test_workspace_edit_merges_duplicates_and_drops_overlaps() -> None:
    insert = Edit(Span(1, 13, 1, 13), "\nimport torch_npu")
    edits = [
        ("u", Edit(Span(2, 5, 2, 9), "npu")),
        ("u", insert),
        ("u", insert),
        ("u", Edit(Span(2, 6, 2, 8), "zz")),
    ]
    result = convert.workspace_edit(edits, {"u": ["import torch\n", "x = cuda\n"]}, PositionCodec())
    assert [
        (e.range.start.line, e.range.start.character, e.new_text) for e in result.changes["u"]
    ] == [
        (0, 12, "\nimport torch_npu"),
        (1, 4, "npu"),
    ]


def test_documents_analysed() -> None:
    assert is_analysable("/a/train.py", "python")
    assert is_analysable("/a/untitled", "python")
    assert is_analysable("/a/rank_table_8p.json", "json")
    assert not is_analysable("/a/package.json", "json")
    assert not is_analysable("/a/README.md", "markdown")


# ---------------------------------------------------------------- debounce


async def test_debouncer_runs_only_the_last_job_per_key() -> None:
    ran: list[str] = []
    debouncer = Debouncer(0.05)

    def job(name: str) -> Callable[[], Awaitable[None]]:
        async def run() -> None:
            ran.append(name)

        return run

    for name in ("a1", "a2", "a3"):
        debouncer.schedule("a", job(name))
    last_b = debouncer.schedule("b", job("b1"))
    debouncer.schedule("c", job("c1"))
    debouncer.cancel("c")
    await last_b
    await asyncio.sleep(0.1)
    assert sorted(ran) == ["a3", "b1"]


async def test_a_failing_job_does_not_break_the_debouncer() -> None:
    debouncer = Debouncer(0)

    async def boom() -> None:
        raise RuntimeError("engine bug")

    await debouncer.schedule("k", boom)  # logged, not raised
    done: list[int] = []

    async def ok() -> None:
        done.append(1)

    await debouncer.schedule("k", ok)
    assert done == [1]


def test_a_leading_bom_is_skipped_and_columns_still_match_the_client_text() -> None:
    from npu_lsp.worker import Job, analyse

    text = "\ufeffimport torch; x = y.cuda()\n"
    (item,) = analyse(Job(key="u", version=1, path="/a.py", text=text))["u"]
    assert item.diagnostic.code == "NPU201"
    assert item.diagnostic.span.column == text.index("cuda") + 1
    starts = sorted(e.span.column for _, e in item.edits)
    assert starts == [text.index("cuda") + 1, len(text.rstrip("\n")) + 1]


def test_a_fix_group_shares_one_edit_tuple_through_the_worker_result() -> None:
    """Every finding of the device group carries the group's edits; the result holds them
    once (not once per finding), with or without a BOM, and the pickle the server receives
    keeps them shared."""
    import pickle

    from npu_lsp.worker import Job, analyse

    body = "".join(f"def f{i}(x):\n    return x.to('cuda:{i}')\n\n\n" for i in range(30))
    for bom in ("", "\ufeff"):
        text = f"{bom}import torch\n\n\n{body}"
        items = pickle.loads(
            pickle.dumps(analyse(Job(key="u", version=1, path="/a.py", text=text)))
        )["u"]
        group = [i for i in items if i.diagnostic.code == "NPU204"]
        assert len(group) == 30
        assert all(i.edits is group[0].edits for i in group)
        assert all(i.diagnostic.fix.edits is group[0].diagnostic.fix.edits for i in group)
        # 30 device strings and the `import torch_npu` line, each edit once
        assert len(group[0].edits) == 31
        first = min(e.span for _, e in group[0].edits if e.span.line > 1)
        assert (first.line, first.column) == (5, text.splitlines()[4].index("'cuda") + 1)
        line_one = [e for _, e in group[0].edits if e.span.line == 1]
        assert [e.span.column for e in line_one] == [len("import torch") + 1 + len(bom)]


def test_related_locations_in_other_files_keep_their_lines() -> None:
    from npu_lsp.diagnostics import Related

    diag = Diagnostic(
        "MS101",
        "m",
        "error",
        Span(1, 1, 1, 4),
        related=(
            Related("/w/helpers.py", Span(250, 5, 250, 9), "called here"),
            Related("/w/a.py", Span(2, 3, 2, 4), "same file"),
        ),
    )
    out = convert.to_diagnostic(diag, ["abc\n", "x = é\n"], PositionCodec(), uri="file:///w/a.py")
    assert out.related_information is not None
    other, same = out.related_information
    assert other.location.uri == "file:///w/helpers.py"
    assert other.location.range.start == lsp.Position(249, 4)
    assert same.location.range.start == lsp.Position(1, 2)


@pytest.mark.parametrize("encoding", ["utf-8", "utf-16", "utf-32", "made-up"])
def test_positions_match_pygls_in_every_encoding(encoding: str) -> None:
    from lsprotocol import types as lsp
    from pygls.workspace.position_codec import PositionCodec, ServerTextPosition

    from npu_lsp.convert import to_position

    codec = PositionCodec(encoding)
    lines = ["x = 1\n", 'a = "张量🚀é"; b = {1}  # 集合\r\n', "", "\ud800 lone surrogate\n"]
    for line_no in range(len(lines) + 2):
        width = len(lines[line_no]) if line_no < len(lines) else 3
        for col in range(width + 2):
            expected = codec.position_to_client_units(lines, ServerTextPosition(line_no, col))
            got = to_position(line_no, col, lines, codec)
            assert (got.line, got.character) == (expected.line, expected.character), (
                line_no,
                col,
            )
            assert isinstance(got, lsp.Position)


def test_a_first_analysis_that_already_changes_what_other_files_see_rechecks_them(
    tmp_path: Path,
) -> None:
    """Edits can outrun analyses: the first text of base.py the worker analyses may already
    differ from the disk's, which open dependents were checked against. `summary_changed`
    compares with the disk's summary then, not with the first one it is asked about."""
    from npu_lsp import worker

    base = tmp_path / "base.py"
    base.write_text("import mindspore.nn as nn\n\n\nclass Base(nn.Cell):\n    pass\n")
    root = str(tmp_path)
    worker.analyse(
        worker.Job(
            key="n",
            version=1,
            path=str(tmp_path / "net.py"),
            text="from base import Base\n",
            root=root,
        )
    )
    edited = "class Base:\n    pass\n"
    worker.analyse(worker.Job(key="b", version=3, path=str(base), text=edited, root=root))
    assert worker.summary_changed(root, str(base))
    assert not worker.summary_changed(root, str(base))  # asked again, nothing new
    comment = edited + "# a comment\n"
    worker.analyse(worker.Job(key="b", version=4, path=str(base), text=comment, root=root))
    assert not worker.summary_changed(root, str(base))
