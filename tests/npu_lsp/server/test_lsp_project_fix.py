"""Fix-all in the editor follows device values across the project's modules exactly as
`ascend-lens check --fix` does (`rules/migration/project.py`, one fixing implementation)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from lsp_helpers import (
    apply_text_edits,
    edits_of,
    open_doc,
    start,
    wait_for_diagnostics,
    wait_for_index,
)
from lsprotocol import types as lsp
from pytest_lsp import LanguageClient

sys.path.insert(0, str(Path(__file__).parents[1] / "migration"))
from test_project_flow import MODEL, MODEL_FIXED, TRAIN, TRAIN_FIXED  # noqa: E402


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
    assert [a.kind for a in actions] == ["source.fixAll.ascend-lens"]
    return apply_text_edits(text, edits_of(actions[0])[uri])


async def test_fix_all_follows_device_values_across_the_project_as_check_fix_does(
    fresh_client: LanguageClient, tmp_path: Path
) -> None:
    """model.py compares a parameter with "cuda"; only train.py shows that a device is
    passed to it. The server's project index knows it, as `check --fix` does."""
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "demo"\n', encoding="utf-8")
    (tmp_path / "train.py").write_text(TRAIN, encoding="utf-8")
    (tmp_path / "model.py").write_text(MODEL, encoding="utf-8")
    await start(fresh_client, tmp_path)
    await wait_for_index(fresh_client)
    for name, text, fixed in (("model.py", MODEL, MODEL_FIXED), ("train.py", TRAIN, TRAIN_FIXED)):
        from_server = await fix_all_text(fresh_client, (tmp_path / name).as_uri(), text)
        assert from_server == fixed, name
    subprocess.run(
        [sys.executable, "-m", "ascend_lens", "check", "--fix", "."],
        cwd=tmp_path,
        capture_output=True,
        timeout=120,
    )
    assert (tmp_path / "model.py").read_text(encoding="utf-8") == MODEL_FIXED
    assert (tmp_path / "train.py").read_text(encoding="utf-8") == TRAIN_FIXED


@pytest.mark.parametrize("project", ["nanogpt", "timm", "yolov5", "mae"])
async def test_fix_all_on_real_shaped_projects_equals_check_fix(
    fresh_client: LanguageClient, tmp_path: Path, project: str
) -> None:
    """Every file the CLI changes in a project of the real-code corpus gets the same text
    from the server's fix-all, with the server indexing the same project."""
    from test_real_corpus import CORPUS, fix_project

    fixed_root, _ = fix_project(project, tmp_path / "cli")
    root = tmp_path / "server"
    shutil.copytree(CORPUS / project, root)
    (root / "pyproject.toml").write_text('[project]\nname = "corpus"\n', encoding="utf-8")
    await start(fresh_client, root)
    await wait_for_index(fresh_client)
    changed = 0
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root)
        text = path.read_text(encoding="utf-8")
        expected = (fixed_root / rel).read_text(encoding="utf-8")
        if expected == text:
            continue
        changed += 1
        assert await fix_all_text(fresh_client, path.as_uri(), text) == expected, rel
    assert changed >= 2
