"""The `source.fixAll.ascend-lens` action gives exactly the text `ascend-lens check --fix`
writes: one fixing implementation (`npu_lsp.fixing`) behind both."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from lsp_helpers import apply_text_edits, configure, edits_of, open_doc, wait_for_diagnostics
from lsprotocol import types as lsp
from pytest_lsp import LanguageClient

sys.path.insert(0, str(Path(__file__).parents[1] / "migration"))
from script_gen import generate  # noqa: E402

pytestmark = pytest.mark.asyncio(loop_scope="module")

#: A device string that is also a folder name: its group is fixed only with --unsafe-fixes,
#: so fix-all (safe fixes only, like `check --fix`) must leave both device strings alone.
MIXED = (
    "import os\n"
    "import torch\n"
    "import torch.distributed as dist\n"
    "\n"
    'device = "cuda"\n'
    "model = Net().to(device)\n"
    'ckpt = os.path.join("out", device)\n'
    'batch = batch.to("cuda:0")\n'
    'dist.init_process_group("nccl")\n'
    "torch.backends.cuda.matmul.allow_tf32 = True\n"
)


def check_fix(tmp: Path, text: str) -> str:
    """What `ascend-lens check --fix` writes for `text`."""
    path = tmp / "cli_copy.py"
    path.write_text(text, encoding="utf-8")
    subprocess.run(
        [sys.executable, "-m", "ascend_lens", "check", "--fix", str(path)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    return path.read_text(encoding="utf-8")


async def fix_all_text(client: LanguageClient, uri: str, text: str) -> str:
    open_doc(client, uri, text)
    await wait_for_diagnostics(client, uri, lambda d: len(d) > 0)
    result = await client.text_document_code_action_async(
        lsp.CodeActionParams(
            text_document=lsp.TextDocumentIdentifier(uri=uri),
            range=lsp.Range(start=lsp.Position(0, 0), end=lsp.Position(0, 0)),
            context=lsp.CodeActionContext(diagnostics=[], only=[lsp.CodeActionKind.SourceFixAll]),
        )
    )
    actions = [a for a in result or [] if isinstance(a, lsp.CodeAction)]
    if not actions:
        return text
    assert [a.kind for a in actions] == ["source.fixAll.ascend-lens"]
    return apply_text_edits(text, edits_of(actions[0])[uri])


@pytest.mark.parametrize("seed", [3, 17, 42, 101, 250])
async def test_fix_all_equals_check_fix_on_training_scripts(
    client: LanguageClient, workspace: Path, seed: int
) -> None:
    configure(client, {"debounceMs": 0})
    text = generate(seed).text
    uri = (workspace / f"train_{seed}.py").as_uri()
    from_server = await fix_all_text(client, uri, text)
    assert from_server != text
    assert from_server == check_fix(workspace, text)


async def test_fix_all_leaves_an_unsafe_device_group_as_check_fix_does(
    client: LanguageClient, workspace: Path
) -> None:
    configure(client, {"debounceMs": 0})
    uri = (workspace / "mixed.py").as_uri()
    from_server = await fix_all_text(client, uri, MIXED)
    assert from_server == check_fix(workspace, MIXED)
    assert 'device = "cuda"' in from_server and '"cuda:0"' in from_server
    assert 'dist.init_process_group("hccl")' in from_server
    assert "allow_tf32" in from_server  # unsafe: not part of fix-all
