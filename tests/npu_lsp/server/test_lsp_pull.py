"""Pull diagnostics (textDocument/diagnostic) with result ids `uri@version`."""

from __future__ import annotations

from pathlib import Path

from lsp_helpers import open_doc, open_notebook, published, replace_all, start
from lsprotocol import types as lsp
from pytest_lsp import LanguageClient


async def pull(
    client: LanguageClient, uri: str, previous: str | None = None
) -> lsp.DocumentDiagnosticReport:
    return await client.text_document_diagnostic_async(
        lsp.DocumentDiagnosticParams(
            text_document=lsp.TextDocumentIdentifier(uri=uri), previous_result_id=previous
        )
    )


async def test_pull_reports_and_unchanged_answers(
    fresh_client: LanguageClient, workspace: Path
) -> None:
    client = fresh_client
    result = await start(client, workspace, pull=True)
    assert result.capabilities.diagnostic_provider is not None
    uri = (workspace / "p.py").as_uri()
    open_doc(client, uri, "import torch\nx = torch.ones(1).cuda()\n")
    first = await pull(client, uri)
    assert isinstance(first, lsp.RelatedFullDocumentDiagnosticReport)
    assert first.result_id == f"{uri}@1"
    assert [d.code for d in first.items] == ["NPU201"]
    again = await pull(client, uri, previous=first.result_id)
    assert isinstance(again, lsp.RelatedUnchangedDocumentDiagnosticReport)
    assert again.result_id == f"{uri}@1"
    replace_all(client, uri, "import torch\nimport torch_npu\nx = torch.ones(1).npu()\n", 2)
    after = await pull(client, uri, previous=first.result_id)
    assert isinstance(after, lsp.RelatedFullDocumentDiagnosticReport)
    assert after.result_id == f"{uri}@2" and list(after.items) == []
    assert published(client, uri) == []  # a pull client is never pushed to


async def test_pull_for_notebook_cells(fresh_client: LanguageClient, workspace: Path) -> None:
    client = fresh_client
    await start(client, workspace, pull=True, notebooks=True)
    _, cells = open_notebook(
        client,
        workspace / "nb.ipynb",
        [
            (lsp.NotebookCellKind.Code, "import torch\n"),
            (lsp.NotebookCellKind.Code, "x = torch.ones(1).cuda()\n"),
        ],
        version=3,
    )
    second = await pull(client, cells[1])
    assert isinstance(second, lsp.RelatedFullDocumentDiagnosticReport)
    assert [(d.code, d.range.start.line) for d in second.items] == [("NPU201", 0)]
    assert second.result_id == f"{cells[1]}@3"  # cells are versioned by their notebook
    first = await pull(client, cells[0])
    assert isinstance(first, lsp.RelatedFullDocumentDiagnosticReport) and list(first.items) == []
