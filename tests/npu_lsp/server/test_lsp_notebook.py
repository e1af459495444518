"""Notebook documents over LSP: cells analysed together, results and fixes mapped to cells."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from lsp_helpers import (
    apply_text_edits,
    configure,
    edits_of,
    open_notebook,
    published,
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


FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
MIGRATION = Path(__file__).resolve().parents[1] / "migration" / "fixtures"


def _shape(diags: list[lsp.Diagnostic]) -> list[tuple[object, ...]]:
    """A cell's diagnostics without the notebook's own uri (related locations name cells)."""
    return [
        (
            d.range,
            d.code,
            d.message,
            d.severity,
            [r.location.range for r in d.related_information or []],
        )
        for d in diags
    ]


async def test_cell_edits_publish_what_a_fresh_notebook_does(
    client: LanguageClient, workspace: Path
) -> None:
    """Each edit of one cell re-analyses only the chunks it touched (the worker keeps the
    notebook's incremental analysis) and an unchanged notebook is not analysed again: every
    cell's diagnostics equal those of a notebook opened afresh with the same cells."""
    configure(client, {"debounceMs": 0})
    texts = [
        "%matplotlib inline\n" + (MIGRATION / "NPU204.py").read_text(encoding="utf-8"),
        (FIXTURES / "MS104.py").read_text(encoding="utf-8"),
        (MIGRATION / "NPU202.py").read_text(encoding="utf-8"),
    ]
    kinds = [lsp.NotebookCellKind.Code] * len(texts)
    nb_uri, cells = open_notebook(
        client, workspace / "edited.ipynb", list(zip(kinds, texts, strict=True))
    )
    for cell in cells:
        await wait_for_diagnostics(client, cell)
    edits = [  # (cell, new line, replace the first line with a finding instead of inserting)
        (2, "x = torch.zeros(2).to('cuda:1')", False),
        (0, "", False),
        (1, "LIMIT = (1, 2)", False),
        (2, "y = 1", True),  # same lines, same layout: only the text tells it changed
        (2, "torch.cuda.synchronize()", False),
    ]
    for step, (k, new, replace) in enumerate(edits):
        before = {c: len(published(client, c)) for c in cells}
        lines = texts[k].split("\n")
        if replace:
            line = next(i for i, ln in enumerate(lines) if "expect: NPU202" in ln)
            end = lsp.Position(line, len(lines[line]))
            lines[line] = new
        else:
            # a top-level statement, before the first definition after the middle
            middle = len(lines) // 2
            line = next(
                (
                    i
                    for i, ln in enumerate(lines)
                    if i >= middle and ln.startswith(("def ", "class "))
                ),
                len(lines) - 1,
            )
            end = lsp.Position(line, 0)
            lines.insert(line, new)
            new += "\n"
        texts[k] = "\n".join(lines)
        client.notebook_document_did_change(
            lsp.DidChangeNotebookDocumentParams(
                notebook_document=lsp.VersionedNotebookDocumentIdentifier(
                    uri=nb_uri, version=step + 2
                ),
                change=lsp.NotebookDocumentChangeEvent(
                    cells=lsp.NotebookDocumentCellChanges(
                        text_content=[
                            lsp.NotebookDocumentCellContentChanges(
                                document=lsp.VersionedTextDocumentIdentifier(
                                    uri=cells[k], version=step + 2
                                ),
                                changes=[
                                    lsp.TextDocumentContentChangePartial(
                                        range=lsp.Range(lsp.Position(line, 0), end),
                                        text=new,
                                    )
                                ],
                            )
                        ]
                    )
                ),
            )
        )

        async def settled(before: dict[str, int] = before) -> None:
            while any(len(published(client, c)) <= before[c] for c in cells):
                await client.wait_for_notification(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)

        await asyncio.wait_for(settled(), 30)
        edited = [_shape(list(client.diagnostics.get(c, []))) for c in cells]
        fresh_uri, fresh_cells = open_notebook(
            client, workspace / f"fresh_{step}.ipynb", list(zip(kinds, texts, strict=True))
        )
        fresh = [_shape(await wait_for_diagnostics(client, c)) for c in fresh_cells]
        assert edited == fresh, f"step {step}"
        assert any(edited), "the cells have findings"
        assert all(d[1] != "AL001" for cell in edited for d in cell), "the edits keep it parsing"
