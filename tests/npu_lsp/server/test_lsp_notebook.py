"""Notebook documents over LSP: cells analysed together, results and fixes mapped to cells."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsp_helpers import (
    apply_text_edits,
    configure,
    edits_of,
    open_notebook,
    wait_for_diagnostics,
)
from lsprotocol import types as lsp
from pytest_lsp import LanguageClient

pytestmark = pytest.mark.asyncio(loop_scope="module")

CELLS = [
    (lsp.NotebookCellKind.Code, "%matplotlib inline\nimport torch\n"),
    (lsp.NotebookCellKind.Markup, "# Training\nUses `x.cuda()` in prose.\n"),
    (lsp.NotebookCellKind.Code, "!pip list\nmodel = Net()\nmodel = model.cuda()\n"),
    (lsp.NotebookCellKind.Code, 'x = x.to("cuda")  # noqa: NPU204\n'),
]


async def test_cells_get_their_own_diagnostics(client: LanguageClient, workspace: Path) -> None:
    configure(client)
    _, cells = open_notebook(client, workspace / "train.ipynb", CELLS)
    diags = await wait_for_diagnostics(client, cells[2], lambda d: len(d) > 0)
    # Cell-local position: line 2 of the third cell, on `cuda`; the magic lines parse fine.
    assert [(d.code, d.range.start.line, d.range.start.character) for d in diags] == [
        ("NPU201", 2, 14)
    ]
    assert await wait_for_diagnostics(client, cells[0]) == []
    assert await wait_for_diagnostics(client, cells[3]) == []  # suppressed by noqa
    assert cells[1] not in client.diagnostics  # markdown cells are not Python


async def test_fix_in_one_cell_adds_import_in_the_cell_that_imports_torch(
    client: LanguageClient, workspace: Path
) -> None:
    configure(client)
    _, cells = open_notebook(client, workspace / "train.ipynb", CELLS)
    diag = (await wait_for_diagnostics(client, cells[2], lambda d: len(d) > 0))[0]
    result = await client.text_document_code_action_async(
        lsp.CodeActionParams(
            text_document=lsp.TextDocumentIdentifier(uri=cells[2]),
            range=diag.range,
            context=lsp.CodeActionContext(diagnostics=[diag], only=[lsp.CodeActionKind.QuickFix]),
        )
    )
    assert result is not None and len(result) == 1
    changes = edits_of(result[0])
    assert set(changes) == {cells[0], cells[2]}
    assert (
        apply_text_edits(CELLS[2][1], changes[cells[2]])
        == "!pip list\nmodel = Net()\nmodel = model.npu()\n"
    )
    assert (
        apply_text_edits(CELLS[0][1], changes[cells[0]])
        == "%matplotlib inline\nimport torch\nimport torch_npu\n"
    )


async def test_editing_a_cell_updates_its_diagnostics(
    client: LanguageClient, workspace: Path
) -> None:
    configure(client, {"debounceMs": 0})
    nb_uri, cells = open_notebook(client, workspace / "train.ipynb", CELLS)
    await wait_for_diagnostics(client, cells[2], lambda d: len(d) == 1)
    client.notebook_document_did_change(
        lsp.DidChangeNotebookDocumentParams(
            notebook_document=lsp.VersionedNotebookDocumentIdentifier(uri=nb_uri, version=2),
            change=lsp.NotebookDocumentChangeEvent(
                cells=lsp.NotebookDocumentCellChanges(
                    text_content=[
                        lsp.NotebookDocumentCellContentChanges(
                            document=lsp.VersionedTextDocumentIdentifier(uri=cells[2], version=2),
                            changes=[
                                lsp.TextDocumentContentChangeWholeDocument(
                                    text="model = Net().npu()\n"
                                )
                            ],
                        )
                    ]
                )
            ),
        )
    )
    diags = await wait_for_diagnostics(
        client, cells[2], lambda d: [x.code for x in d] != ["NPU201"]
    )
    # `.cuda()` is gone; `.npu()` now needs `import torch_npu`, which no cell has.
    assert [(d.code, d.range.start.line) for d in diags] == [("NPU209", 0)]


async def test_hover_in_a_cell_uses_imports_from_other_cells(
    client: LanguageClient, workspace: Path
) -> None:
    configure(client)
    _, cells = open_notebook(
        client,
        workspace / "acl.ipynb",
        [
            (lsp.NotebookCellKind.Code, "from acl import rt as r\n"),
            (lsp.NotebookCellKind.Code, "ptr, ret = r.malloc(64, 0)\n"),
        ],
    )
    result = await client.text_document_hover_async(
        lsp.HoverParams(
            text_document=lsp.TextDocumentIdentifier(uri=cells[1]), position=lsp.Position(0, 14)
        )
    )
    assert result is not None and isinstance(result.contents, lsp.MarkupContent)
    assert "`cudaMalloc`" in result.contents.value
