"""Incremental analysis through the real server: a sequence of didChange notifications
(range edits, as an editor sends keystrokes) publishes the same diagnostics as opening the
final text afresh (the worker then analyses it from scratch)."""

from __future__ import annotations

import asyncio
import random
from pathlib import Path

import pytest
from lsp_helpers import configure, open_doc, published
from lsprotocol import types as lsp
from pytest_lsp import LanguageClient

pytestmark = pytest.mark.asyncio(loop_scope="module")

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
MIGRATION = Path(__file__).resolve().parents[1] / "migration" / "fixtures"

INSERTS = [
    "        x = self.helper(x)\n",
    "        print(x.asnumpy())\n",
    "LIMIT = (1, 2)\n",
    "def helper(x):\n    return x * 2\n",
    "    t = torch.zeros(2).cuda()\n",
    "(\n",
    '"""\n',
    "\n",
]


async def version_published(client: LanguageClient, uri: str, version: int) -> list[lsp.Diagnostic]:
    async def wait() -> list[lsp.Diagnostic]:
        while True:
            for params in published(client, uri):
                if params.version == version:
                    return list(params.diagnostics)
            await client.wait_for_notification(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)

    return await asyncio.wait_for(wait(), 60)


def random_edit(text: str, rng: random.Random) -> tuple[str, lsp.Range, str]:
    """A range edit of `text`: insert a line, delete a line, or type into one."""
    lines = text.split("\n")
    i = rng.randrange(len(lines))
    kind = rng.randrange(3)
    if kind == 0:
        new = rng.choice(INSERTS)
        rng_ = lsp.Range(lsp.Position(i, 0), lsp.Position(i, 0))
        return "\n".join(lines[:i]) + ("\n" if i else "") + new + "\n".join(lines[i:]), rng_, new
    if kind == 1 and i + 1 < len(lines):
        rng_ = lsp.Range(lsp.Position(i, 0), lsp.Position(i + 1, 0))
        return "\n".join(lines[:i] + lines[i + 1 :]), rng_, ""
    col = rng.randint(0, len(lines[i]))
    typed = rng.choice(["1", " ", "x", ":", ")", "_", "é", "🚀"])
    units = len(lines[i][:col].encode("utf-16-le")) // 2  # LSP columns count UTF-16 units
    lines[i] = lines[i][:col] + typed + lines[i][col:]
    rng_ = lsp.Range(lsp.Position(i, units), lsp.Position(i, units))
    return "\n".join(lines), rng_, typed


@pytest.mark.parametrize(
    "seed_files",
    [("MS101.py", "MS104.py", "MS143.py"), ("NPU201.py", "NPU204.py", "NPU208.py")],
)
async def test_edit_sequence_publishes_what_a_fresh_open_does(
    client: LanguageClient, workspace: Path, seed_files: tuple[str, ...]
) -> None:
    configure(client, {"debounceMs": 0})
    text = "\n\n".join(
        ((FIXTURES if f.startswith("MS") else MIGRATION) / f).read_text(encoding="utf-8")
        for f in seed_files
    )
    uri = (workspace / f"edited_{seed_files[0][:2]}.py").as_uri()
    open_doc(client, uri, text)
    await version_published(client, uri, 1)
    rng = random.Random(seed_files[0])
    version = 1
    checked = 0
    for step in range(60):
        text, change, new = random_edit(text, rng)
        version += 1
        client.text_document_did_change(
            lsp.DidChangeTextDocumentParams(
                text_document=lsp.VersionedTextDocumentIdentifier(uri=uri, version=version),
                content_changes=[lsp.TextDocumentContentChangePartial(range=change, text=new)],
            )
        )
        if step % 6 != 5:
            continue
        incremental = await version_published(client, uri, version)
        # the same text opened afresh (closing drops the worker's incremental state)
        client.text_document_did_close(
            lsp.DidCloseTextDocumentParams(text_document=lsp.TextDocumentIdentifier(uri=uri))
        )
        version += 1
        client.text_document_did_open(
            lsp.DidOpenTextDocumentParams(
                text_document=lsp.TextDocumentItem(
                    uri=uri, language_id="python", version=version, text=text
                )
            )
        )
        fresh = await version_published(client, uri, version)
        assert incremental == fresh, f"step {step}"
        checked += 1
    assert checked == 10
