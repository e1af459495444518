"""Code actions over LSP: quick fixes and the fix-all source action, applied to the text."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsp_helpers import (
    apply_text_edits,
    configure,
    edits_of,
    open_doc,
    replace_all,
    wait_for_diagnostics,
)
from lsprotocol import types as lsp
from pytest_lsp import LanguageClient

pytestmark = pytest.mark.asyncio(loop_scope="module")

SOURCE = (
    "import torch\n"
    "import torch.distributed as dist\n"
    "\n"
    "model = Net().cuda()\n"
    'batch = batch.to("cuda:1")\n'
    'dist.init_process_group(backend="nccl")\n'
    "if torch.cuda.is_available():\n"
    "    scaler = torch.cuda.amp.GradScaler()\n"
    "torch.backends.cudnn.benchmark = True\n"
)
MIGRATED = (
    "import torch\n"
    "import torch_npu\n"
    "import torch.distributed as dist\n"
    "\n"
    "model = Net().npu()\n"
    'batch = batch.to("npu:1")\n'
    'dist.init_process_group(backend="hccl")\n'
    "if torch.npu.is_available():\n"
    "    scaler = torch.npu.amp.GradScaler()\n"
    "torch.backends.cudnn.benchmark = True\n"
)


async def actions(
    client: LanguageClient,
    uri: str,
    rng: lsp.Range,
    diags: list[lsp.Diagnostic],
    only: list[str] | None = None,
) -> list[lsp.CodeAction]:
    result = await client.text_document_code_action_async(
        lsp.CodeActionParams(
            text_document=lsp.TextDocumentIdentifier(uri=uri),
            range=rng,
            context=lsp.CodeActionContext(diagnostics=diags, only=only),
        )
    )
    return [a for a in result or [] if isinstance(a, lsp.CodeAction)]


async def test_quick_fix_rewrites_cuda_call_and_adds_import(
    client: LanguageClient, workspace: Path
) -> None:
    configure(client)
    uri = (workspace / "m.py").as_uri()
    open_doc(client, uri, SOURCE)
    diags = await wait_for_diagnostics(client, uri, lambda d: len(d) >= 6)
    cuda = next(d for d in diags if d.code == "NPU201")
    found = await actions(client, uri, cuda.range, [cuda], only=[lsp.CodeActionKind.QuickFix])
    # the rename moves with the file's device string and other CUDA API uses (one group)
    assert [a.title for a in found] == [
        "Replace `.cuda()` with `.npu()` (and 1 other device string and 2 other CUDA API"
        " uses of this file) (NPU201)"
    ]
    fix = found[0]
    assert fix.kind == lsp.CodeActionKind.QuickFix and fix.is_preferred
    assert fix.diagnostics and fix.diagnostics[0].code == "NPU201"
    new_text = apply_text_edits(SOURCE, edits_of(fix)[uri])
    assert new_text.splitlines()[:9] == [
        "import torch",
        "import torch_npu",
        "import torch.distributed as dist",
        "",
        "model = Net().npu()",
        'batch = batch.to("npu:1")',
        'dist.init_process_group(backend="nccl")',  # the backend is a group of its own
        "if torch.npu.is_available():",
        "    scaler = torch.npu.amp.GradScaler()",
    ]


async def test_advisory_diagnostic_has_no_quick_fix(
    client: LanguageClient, workspace: Path
) -> None:
    configure(client)
    uri = (workspace / "cudnn.py").as_uri()
    open_doc(client, uri, SOURCE)
    diags = await wait_for_diagnostics(client, uri, lambda d: len(d) >= 6)
    cudnn = next(d for d in diags if d.code == "NPU208")
    assert (
        await actions(client, uri, cudnn.range, [cudnn], only=[lsp.CodeActionKind.QuickFix]) == []
    )


async def test_fix_all_migrates_the_file_with_one_torch_npu_import(
    client: LanguageClient, workspace: Path
) -> None:
    configure(client, {"debounceMs": 0})
    uri = (workspace / "all.py").as_uri()
    open_doc(client, uri, SOURCE)
    await wait_for_diagnostics(client, uri, lambda d: len(d) >= 6)
    whole = lsp.Range(start=lsp.Position(0, 0), end=lsp.Position(0, 0))
    found = await actions(client, uri, whole, [], only=[lsp.CodeActionKind.SourceFixAll])
    assert [a.kind for a in found] == ["source.fixAll.ascend-lens"]
    new_text = apply_text_edits(SOURCE, edits_of(found[0])[uri])
    assert new_text == MIGRATED
    # After applying, only the advisory finding (no fix) remains.
    replace_all(client, uri, new_text, 2)
    diags = await wait_for_diagnostics(client, uri, lambda d: len(d) == 1)
    assert [d.code for d in diags] == ["NPU208"]


UNICODE_SOURCE = (
    "import torch\n"
    "import torch_npu\n"
    "from mindspore import nn\n"
    "\n"
    "\n"
    "class Net(nn.Cell):\n"
    "    def construct(self, x):\n"
    '        t = "张量🚀"; s = {1, 2}  # 集合\n'
    "        return x\n"
    "\n"
    "\n"
    'm = "模型🚀"; model = Net().cuda()\n'
)


@pytest.mark.parametrize(
    ("code", "line", "before", "after"),
    [
        ("MS109", 7, '"张量🚀"; s = {1, 2}', '"张量🚀"; s = set([1, 2])'),
        ("NPU201", 11, '"模型🚀"; model = Net().cuda()', '"模型🚀"; model = Net().npu()'),
    ],
)
async def test_quick_fix_lands_right_on_lines_with_non_ascii_text(
    client: LanguageClient, workspace: Path, code: str, line: int, before: str, after: str
) -> None:
    configure(client)
    uri = (workspace / f"unicode_{code}.py").as_uri()
    open_doc(client, uri, UNICODE_SOURCE)
    diags = await wait_for_diagnostics(client, uri, lambda d: any(x.code == code for x in d))
    diag = next(d for d in diags if d.code == code)
    # The range covers exactly the flagged text, in UTF-16 units ("🚀" counts 2).
    text_line = UNICODE_SOURCE.splitlines()[line]
    units = text_line.encode("utf-16-le")
    flagged = units[2 * diag.range.start.character : 2 * diag.range.end.character]
    assert flagged.decode("utf-16-le") == ("{1, 2}" if code == "MS109" else "cuda")
    found = await actions(client, uri, diag.range, [diag], only=[lsp.CodeActionKind.QuickFix])
    assert found, f"no quick fix for {code}"
    new_text = apply_text_edits(UNICODE_SOURCE, edits_of(found[0])[uri])
    old_line = UNICODE_SOURCE.splitlines()[line]
    assert before in old_line
    assert new_text.splitlines()[line] == old_line.replace(before, after)
