"""pytest-lsp fixtures: the real server as a subprocess over stdio, driven by an LSP client."""

from __future__ import annotations

from pathlib import Path

import pytest
import pytest_lsp
from lsp_helpers import SERVER, start, wait_for_index
from pytest_lsp import LanguageClient


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """An empty project folder (with a pyproject.toml so config lookup stops here)."""
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "demo"\n', encoding="utf-8")
    return tmp_path


@pytest_lsp.fixture(config=SERVER, scope="module")
async def client(lsp_client: LanguageClient, tmp_path_factory: pytest.TempPathFactory):
    """One server per test module (starting one costs seconds); tests call `configure` first."""
    await start(lsp_client, tmp_path_factory.mktemp("ws"), notebooks=True)
    await wait_for_index(lsp_client)  # its re-analysis of open documents must not race tests
    yield
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(config=SERVER)
async def fresh_client(lsp_client: LanguageClient):
    """A server of its own for one test, not yet initialised: the test calls `start` with the
    capabilities, options and workspace it is about."""
    yield
    await lsp_client.shutdown_session()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A result using something the client never declared fails the test (pytest-lsp checks)."""
    here = Path(__file__).parent
    for item in items:
        if Path(str(item.fspath)).parent == here:
            item.add_marker(pytest.mark.filterwarnings("error::pytest_lsp.LspSpecificationWarning"))
