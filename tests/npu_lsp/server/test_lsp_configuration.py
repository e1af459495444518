"""Configuration over LSP: pyproject.toml, initializationOptions, didChangeConfiguration."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from lsp_helpers import configure, open_doc, wait_for_diagnostics
from lsprotocol import types as lsp
from pytest_lsp import LanguageClient

pytestmark = pytest.mark.asyncio(loop_scope="module")

SOURCE = 'import torch\nx = torch.ones(1).cuda()\nd = torch.device("cuda")\ny = x.to("cuda")\n'


def codes(diags: list[lsp.Diagnostic]) -> list[str]:
    return sorted(str(d.code) for d in diags)


def write_pyproject(root: Path, table: str) -> None:
    (root / "pyproject.toml").write_text(f'[project]\nname = "demo"\n\n{table}', encoding="utf-8")


async def test_pyproject_ignore_and_per_file_ignores(
    client: LanguageClient, workspace: Path
) -> None:
    write_pyproject(
        workspace,
        '[tool.ascend-lens]\nignore = ["NPU203"]\n\n[tool.ascend-lens.per-file-ignores]\n"scripts/*" = ["NPU"]\n',
    )
    (workspace / "scripts").mkdir()
    configure(client)
    main = (workspace / "main.py").as_uri()
    open_doc(client, main, SOURCE)
    assert codes(await wait_for_diagnostics(client, main, lambda d: len(d) > 0)) == [
        "NPU201",
        "NPU204",
    ]
    script = (workspace / "scripts" / "tool.py").as_uri()
    open_doc(client, script, SOURCE)
    assert await wait_for_diagnostics(client, script) == []


async def test_initialization_options_select(client: LanguageClient, workspace: Path) -> None:
    configure(client, {"select": ["NPU201"]})
    uri = (workspace / "sel.py").as_uri()
    open_doc(client, uri, SOURCE)
    assert codes(await wait_for_diagnostics(client, uri, lambda d: len(d) > 0)) == ["NPU201"]


async def test_did_change_configuration_republishes(
    client: LanguageClient, workspace: Path
) -> None:
    configure(client)
    uri = (workspace / "cfg.py").as_uri()
    open_doc(client, uri, SOURCE)
    await wait_for_diagnostics(client, uri, lambda d: len(d) == 3)
    client.workspace_did_change_configuration(
        lsp.DidChangeConfigurationParams(settings={"ascendLens": {"ignore": ["NPU201", "NPU204"]}})
    )
    assert codes(await wait_for_diagnostics(client, uri, lambda d: len(d) == 1)) == ["NPU203"]


async def test_bad_settings_are_reported_and_defaults_used(
    client: LanguageClient, workspace: Path
) -> None:
    configure(client, {"debounceMs": "soon", "select": 5, "colour": "blue"})
    uri = (workspace / "bad.py").as_uri()
    open_doc(client, uri, SOURCE)
    assert codes(await wait_for_diagnostics(client, uri, lambda d: len(d) > 0)) == [
        "NPU201",
        "NPU203",
        "NPU204",
    ]
    for _ in range(50):  # log messages travel separately from diagnostics
        text = "\n".join(m.message for m in client.log_messages)
        if "colour" in text:
            break
        await asyncio.sleep(0.05)
    assert "`debounceMs` must be an integer" in text
    assert "`select` must be a list of rule codes" in text
    assert "unknown setting `colour`" in text


async def test_enable_false_publishes_nothing_and_true_brings_them_back(
    client: LanguageClient, workspace: Path
) -> None:
    configure(client, {"enable": False})
    uri = (workspace / "off.py").as_uri()
    open_doc(client, uri, SOURCE)
    assert await wait_for_diagnostics(client, uri) == []
    client.workspace_did_change_configuration(
        lsp.DidChangeConfigurationParams(settings={"enable": True})
    )
    assert len(await wait_for_diagnostics(client, uri, lambda d: len(d) > 0)) == 3
