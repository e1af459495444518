"""Incremental analysis through the real server: a sequence of didChange notifications
(range edits, as an editor sends keystrokes) publishes the same diagnostics as opening the
final text afresh (the worker then analyses it from scratch)."""

from __future__ import annotations

import asyncio
import random
from pathlib import Path
from typing import Any

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


DENSE_BLOCK = (
    "def step_{i}(model, batch, device=DEVICE):\n"
    "    batch = batch.to(device)\n"
    "    with torch.cuda.amp.autocast():\n"
    "        loss = model(batch).sum()\n"
    '    if "a" and torch.cuda.is_available():\n'
    "        torch.cuda.synchronize()\n"
    "    return loss.item() + {i}\n"
    "\n"
)
DENSE_EDITS = [
    "    x = torch.zeros(2).to('cuda:1')\n",  # a new device string: every fix of the group grows
    "\n",  # every later diagnostic (and every edit of the group fix) moves a line
    "    y = 1  # é 🚀\n",  # columns in UTF-16 units differ from code points after it
    "DEVICE = 'cuda'\n",  # the module-wide value every function's default reads
    "🚀",  # typed over the "a" before a finding: same code-point column, UTF-16 one more
]


async def quick_fix_edits(client: LanguageClient, uri: str, diag: lsp.Diagnostic) -> list[Any]:
    result = await client.text_document_code_action_async(
        lsp.CodeActionParams(
            text_document=lsp.TextDocumentIdentifier(uri=uri),
            range=diag.range,
            context=lsp.CodeActionContext(diagnostics=[diag], only=[lsp.CodeActionKind.QuickFix]),
        )
    )
    actions = [a for a in result or [] if isinstance(a, lsp.CodeAction)]
    return sorted(
        (a.title, [(e.range, e.new_text) for e in (a.edit.changes or {}).get(uri, [])])
        for a in actions
        if a.edit is not None
    )


async def test_dense_torch_file_edits_publish_and_fix_as_a_fresh_open(
    client: LanguageClient, workspace: Path
) -> None:
    """The worker sends only what changed of a result (transfer.py) and the server keeps the
    JSON of unchanged diagnostics: after edits that move every diagnostic, grow the group fix
    every device string shares, or change UTF-16 columns, what is published and the quick
    fixes offered are those of the same text opened afresh."""
    configure(client, {"debounceMs": 0})
    head = "import torch\n\nDEVICE = 'cuda:0'\n\n\n"
    text = head + "".join(DENSE_BLOCK.format(i=i) for i in range(40))
    uri = (workspace / "dense_train.py").as_uri()
    open_doc(client, uri, text)
    assert len(await version_published(client, uri, 1)) > 100
    rng = random.Random(15)
    version = 1
    for step in range(15):
        lines = text.split("\n")
        i = rng.choice([k for k, ln in enumerate(lines) if ln.startswith("    return loss")])
        new = DENSE_EDITS[step % len(DENSE_EDITS)]
        if new == "🚀":
            i = rng.choice([k for k, ln in enumerate(lines) if '"a" and' in ln])
            col = lines[i].index('"a"') + 1
            change = lsp.Range(lsp.Position(i, col), lsp.Position(i, col + 1))
            lines[i] = lines[i][:col] + new + lines[i][col + 1 :]
        elif new.startswith("DEVICE"):
            i = 2  # replace the constant's line
            change = lsp.Range(lsp.Position(2, 0), lsp.Position(3, 0))
            lines[2:3] = [new.rstrip("\n")]
        else:
            change = lsp.Range(lsp.Position(i, 0), lsp.Position(i, 0))
            lines.insert(i, new.rstrip("\n"))
        text = "\n".join(lines)
        version += 1
        client.text_document_did_change(
            lsp.DidChangeTextDocumentParams(
                text_document=lsp.VersionedTextDocumentIdentifier(uri=uri, version=version),
                content_changes=[lsp.TextDocumentContentChangePartial(range=change, text=new)],
            )
        )
        # each result published before the next edit: the server's caches then hold the
        # conversion of the text before the edit (an edit arriving first drops that run)
        incremental = await version_published(client, uri, version)
        if step % 3 != 2:
            continue
        picked = incremental[:: max(len(incremental) // 3, 1)]
        fixes = [await quick_fix_edits(client, uri, d) for d in picked]
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
        assert fixes == [await quick_fix_edits(client, uri, d) for d in picked], f"step {step}"
        assert picked and all(f for f in fixes), "each finding of this file has a fix"
