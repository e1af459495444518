"""Diagnostics over a real LSP session: open, change, debounce, syntax errors, rank tables,
binary input and large files."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsp_helpers import configure, open_doc, published, replace_all, wait_for_diagnostics
from lsprotocol import types as lsp
from pytest_lsp import LanguageClient

pytestmark = pytest.mark.asyncio(loop_scope="module")

MIGRATION = 'import torch\n\nx = torch.ones(2).cuda()\ndevice = torch.device("cuda:0")\n'


def codes(diags: list[lsp.Diagnostic]) -> list[str]:
    return sorted(str(d.code) for d in diags)


async def test_open_publishes_migration_diagnostics(
    client: LanguageClient, workspace: Path
) -> None:
    configure(client)
    uri = (workspace / "train.py").as_uri()
    open_doc(client, uri, MIGRATION)
    diags = await wait_for_diagnostics(client, uri, lambda d: len(d) >= 2)
    got = sorted(
        (d.code, d.range.start.line, d.range.start.character, d.range.end.character) for d in diags
    )
    assert got == [("NPU201", 2, 18, 22), ("NPU203", 3, 22, 30)]
    assert all(
        d.source == "ascend-lens" and d.severity == lsp.DiagnosticSeverity.Warning for d in diags
    )
    assert published(client, uri)[-1].version == 1


async def test_burst_of_changes_is_debounced_to_the_last_version(
    client: LanguageClient, workspace: Path
) -> None:
    configure(client, {"debounceMs": 300})
    uri = (workspace / "burst.py").as_uri()
    open_doc(client, uri, "import torch\n")
    await wait_for_diagnostics(client, uri)
    text = "import torch\n"
    for version in range(2, 12):  # ten keystrokes, much faster than the debounce delay
        text += f"a{version} = torch.ones(1).cuda()\n"
        replace_all(client, uri, text, version)
    diags = await wait_for_diagnostics(client, uri, lambda d: len(d) == 10)
    assert codes(diags) == ["NPU201"] * 10
    versions = [p.version for p in published(client, uri)]
    assert versions == [1, 11], versions  # intermediate versions were never analysed


async def test_fixing_the_code_clears_diagnostics(client: LanguageClient, workspace: Path) -> None:
    configure(client, {"debounceMs": 0})
    uri = (workspace / "fix.py").as_uri()
    open_doc(client, uri, "import torch\nx = torch.ones(1).cuda()\n")
    await wait_for_diagnostics(client, uri, lambda d: len(d) == 1)
    replace_all(client, uri, "import torch\nimport torch_npu\nx = torch.ones(1).npu()\n", 2)
    assert await wait_for_diagnostics(client, uri, lambda d: d == []) == []


async def test_syntax_error_is_reported_and_the_server_keeps_working(
    client: LanguageClient, workspace: Path
) -> None:
    configure(client)
    broken = (workspace / "broken.py").as_uri()
    open_doc(client, broken, "import torch\ndef f(:\n    pass\n")
    diags = await wait_for_diagnostics(client, broken, lambda d: len(d) > 0)
    assert codes(diags) == ["AL001"]
    assert diags[0].range.start.line == 1
    assert diags[0].severity == lsp.DiagnosticSeverity.Error
    other = (workspace / "ok.py").as_uri()
    open_doc(client, other, "import torch\nx = torch.ones(1).cuda()\n")
    assert codes(await wait_for_diagnostics(client, other, lambda d: len(d) > 0)) == ["NPU201"]


async def test_noqa_suppresses_one_code(client: LanguageClient, workspace: Path) -> None:
    configure(client)
    uri = (workspace / "noqa.py").as_uri()
    open_doc(
        client, uri, 'import torch\nx = torch.ones(1).cuda()  # noqa: NPU201\ny = x.to("cuda")\n'
    )
    diags = await wait_for_diagnostics(client, uri, lambda d: len(d) > 0)
    assert [(d.code, d.range.start.line) for d in diags] == [("NPU204", 2)]


async def test_rank_table_diagnostics_point_at_json_positions(
    client: LanguageClient, workspace: Path
) -> None:
    configure(client)
    text = (
        "{\n"
        '  "version": "1.0",\n'
        '  "server_count": "2",\n'
        '  "status": "completed",\n'
        '  "server_list": [{"server_id": "localhost", "device": [\n'
        '    {"device_id": "0", "device_ip": "192.168.1.1", "rank_id": "0"},\n'
        '    {"device_id": "0", "device_ip": "192.168.1.2", "rank_id": "2"}]}]\n'
        "}\n"
    )
    uri = (workspace / "rank_table_2p.json").as_uri()
    open_doc(client, uri, text, language="json")
    diags = await wait_for_diagnostics(client, uri, lambda d: len(d) >= 4)
    lines = text.splitlines()

    def at(line: int, needle: str) -> tuple[int, int]:
        """(line, column) of the value after `needle` on that line."""
        return line, lines[line].index(needle) + len(needle)

    got = {(d.code, d.range.start.line, d.range.start.character) for d in diags}
    assert got == {
        ("HCCL303", *at(6, '"rank_id": ')),  # rank_id "2" with two devices
        ("HCCL304", *at(6, '"device_id": ')),  # device_id "0" twice on one server
        ("HCCL305", *at(2, '"server_count": ')),  # "2" but one server listed
        ("HCCL306", *at(4, '"server_id": ')),  # "localhost"
    }


async def test_binary_content_is_refused_cleanly(client: LanguageClient, workspace: Path) -> None:
    configure(client)
    uri = (workspace / "blob.py").as_uri()
    open_doc(client, uri, "\x00\x01\x02binary\x00")
    diags = await wait_for_diagnostics(client, uri, lambda d: len(d) > 0)
    assert codes(diags) == ["AL002"]
    assert "binary" in diags[0].message


async def test_close_clears_diagnostics(client: LanguageClient, workspace: Path) -> None:
    configure(client)
    uri = (workspace / "gone.py").as_uri()
    open_doc(client, uri, "import torch\nx = torch.ones(1).cuda()\n")
    await wait_for_diagnostics(client, uri, lambda d: len(d) == 1)
    client.text_document_did_close(
        lsp.DidCloseTextDocumentParams(text_document=lsp.TextDocumentIdentifier(uri=uri))
    )
    assert await wait_for_diagnostics(client, uri, lambda d: d == []) == []


async def test_requests_about_unknown_documents_do_not_break_the_session(
    client: LanguageClient, workspace: Path
) -> None:
    configure(client)
    ghost = (workspace / "never_opened.py").as_uri()
    replace_all(client, ghost, "x = 1\n", 5)  # a change for a document never opened
    assert (
        await client.text_document_hover_async(
            lsp.HoverParams(
                text_document=lsp.TextDocumentIdentifier(uri=ghost), position=lsp.Position(0, 0)
            )
        )
        is None
    )
    actions = await client.text_document_code_action_async(
        lsp.CodeActionParams(
            text_document=lsp.TextDocumentIdentifier(uri=ghost),
            range=lsp.Range(start=lsp.Position(0, 0), end=lsp.Position(0, 0)),
            context=lsp.CodeActionContext(diagnostics=[]),
        )
    )
    assert not actions
    # Documents that are neither Python nor rank tables are left alone...
    readme = (workspace / "README.md").as_uri()
    open_doc(client, readme, "Use `x.cuda()`\n", language="markdown")
    # ...and the session still works for real ones.
    uri = (workspace / "after.py").as_uri()
    open_doc(client, uri, "import torch\nx = torch.ones(1).cuda()\n")
    assert codes(await wait_for_diagnostics(client, uri, lambda d: len(d) > 0)) == ["NPU201"]
    assert readme not in client.diagnostics


NASTY = {
    "deep.py": "x = " + "(" * 5000 + "1" + ")" * 5000 + "\n",
    "surrogate.py": 'import torch\ns = "\ud800"\nx = y.cuda()\n',
    "cr_only.py": "import torch\rx = y.cuda()\r",
    "empty.py": "",
    "bom.py": "\ufeffimport torch\nx = y.cuda()\n",
    "rank_table_deep.json": "[" * 3000 + "]" * 3000,
    "hccl_garbage.json": '{"server_list": [{"device": [{"rank_id": {"a": []}}]}], "server_count": -1}',
}


async def test_hostile_inputs_get_an_answer_and_the_server_survives(
    client: LanguageClient, workspace: Path
) -> None:
    configure(client)
    uris = {}
    for name, text in NASTY.items():
        uris[name] = (workspace / name).as_uri()
        open_doc(client, uris[name], text, language="json" if name.endswith(".json") else "python")
    for name, uri in uris.items():
        diags = await wait_for_diagnostics(client, uri, timeout=60)
        assert all(not str(d.code).startswith("AL003") for d in diags), (name, diags)
    assert codes(client.diagnostics[uris["deep.py"]]) == ["AL001"]
    assert codes(client.diagnostics[uris["rank_table_deep.json"]]) == ["HCCL301"]
    assert "HCCL302" in codes(client.diagnostics[uris["hccl_garbage.json"]])
    assert codes(client.diagnostics[uris["bom.py"]]) == ["NPU201"]
    assert codes(client.diagnostics[uris["cr_only.py"]]) == ["NPU201"]
    # Still alive and answering.
    uri = (workspace / "alive.py").as_uri()
    open_doc(client, uri, "import torch\nx = torch.ones(1).cuda()\n")
    assert codes(await wait_for_diagnostics(client, uri, lambda d: len(d) > 0)) == ["NPU201"]


async def test_ranges_after_a_line_separator_inside_a_string(
    client: LanguageClient, workspace: Path
) -> None:
    """U+2028 in a string is not a line break for Python or LSP: later ranges stay put."""
    configure(client)
    uri = (workspace / "sep.py").as_uri()
    text = 'import torch\nnote = "a\u2028b"\nm = "🚀"; y = x.cuda()\n'
    open_doc(client, uri, text)
    diags = await wait_for_diagnostics(client, uri, lambda d: any(x.code == "NPU201" for x in d))
    cuda = next(d for d in diags if d.code == "NPU201")
    line = text.split("\n")[2]
    start = len(line[: line.index("cuda")].encode("utf-16-le")) // 2
    assert (cuda.range.start.line, cuda.range.start.character) == (2, start)
    assert cuda.range.end.character == start + 4
