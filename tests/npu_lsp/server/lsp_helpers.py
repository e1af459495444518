"""Helpers for the end-to-end language-server tests (imported by the test modules)."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lsprotocol import types as lsp
from pygls.protocol import default_converter
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities
from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, register_lsp_features

#: Every publishDiagnostics the client received, per client, in arrival order.
PUBLISHED: dict[int, list[lsp.PublishDiagnosticsParams]] = {}


def _record_publish(client: LanguageClient, params: lsp.PublishDiagnosticsParams) -> None:
    client.diagnostics[params.uri] = params.diagnostics
    PUBLISHED.setdefault(id(client), []).append(params)


#: Dynamic registrations each client accepted (client/registerCapability), like VS Code does.
REGISTERED: dict[int, list[lsp.Registration]] = {}


def _register_capability(client: LanguageClient, params: lsp.RegistrationParams) -> None:
    REGISTERED.setdefault(id(client), []).extend(params.registrations)


def make_client() -> LanguageClient:
    """pytest-lsp's test client, also recording every publishDiagnostics (for debounce tests)
    and accepting dynamic registrations, as the VS Code capabilities it declares promise."""
    client = LanguageClient(converter_factory=default_converter)
    features = dict(DEFAULT_CLIENT_FEATURES)
    features[lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS] = _record_publish
    features[lsp.CLIENT_REGISTER_CAPABILITY] = _register_capability
    register_lsp_features(client, features)
    return client


def published(client: LanguageClient, uri: str) -> list[lsp.PublishDiagnosticsParams]:
    return [p for p in PUBLISHED.get(id(client), []) if p.uri == uri]


SERVER = ClientServerConfig(
    server_command=[sys.executable, "-m", "ascend_lens", "server"], client_factory=make_client
)


async def start(
    client: LanguageClient,
    root: Path,
    *,
    options: Any = None,
    pull: bool = False,
    notebooks: bool = False,
) -> lsp.InitializeResult:
    """initialize + initialized with VS Code's recorded capabilities (plus pull/notebooks)."""
    capabilities = client_capabilities("visual-studio-code")
    if notebooks:
        capabilities.notebook_document = lsp.NotebookDocumentClientCapabilities(
            synchronization=lsp.NotebookDocumentSyncClientCapabilities()
        )
    if pull:
        assert capabilities.text_document is not None
        capabilities.text_document.diagnostic = lsp.DiagnosticClientCapabilities(
            related_document_support=False
        )
    return await client.initialize_session(
        lsp.InitializeParams(
            capabilities=capabilities,
            root_uri=root.as_uri(),
            workspace_folders=[lsp.WorkspaceFolder(uri=root.as_uri(), name="ws")],
            initialization_options=options,
        )
    )


async def wait_for_index(client: LanguageClient, timeout: float = 60) -> None:
    """Wait for the server's "workspace index ready" log message (sent once per session)."""

    async def wait() -> None:
        while not any("workspace index ready" in m.message for m in client.log_messages):
            await client.wait_for_notification(lsp.WINDOW_LOG_MESSAGE)

    await asyncio.wait_for(wait(), timeout)


async def wait_for_diagnostics(
    client: LanguageClient,
    uri: str,
    predicate: Callable[[list[lsp.Diagnostic]], bool] = lambda d: True,
    timeout: float = 20,
) -> list[lsp.Diagnostic]:
    """Wait until a publishDiagnostics for `uri` satisfies `predicate`."""

    async def wait() -> list[lsp.Diagnostic]:
        while True:
            current = client.diagnostics.get(uri)
            if current is not None and predicate(list(current)):
                return list(current)
            await client.wait_for_notification(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)

    return await asyncio.wait_for(wait(), timeout)


#: Documents and notebooks each client has open, closed again by `configure`.
OPEN: dict[int, list[tuple[str, list[str] | None]]] = {}


def configure(client: LanguageClient, settings: dict[str, Any] | None = None) -> None:
    """Start a test on a shared session: close what earlier tests opened, then send settings.

    Settings replace the previous ones wholesale (workspace/didChangeConfiguration)."""
    for uri, cells in OPEN.pop(id(client), []):
        if cells is None:
            client.text_document_did_close(
                lsp.DidCloseTextDocumentParams(text_document=lsp.TextDocumentIdentifier(uri=uri))
            )
        else:
            client.notebook_document_did_close(
                lsp.DidCloseNotebookDocumentParams(
                    notebook_document=lsp.NotebookDocumentIdentifier(uri=uri),
                    cell_text_documents=[lsp.TextDocumentIdentifier(uri=c) for c in cells],
                )
            )
    client.workspace_did_change_configuration(
        lsp.DidChangeConfigurationParams(settings={"ascendLens": settings or {}})
    )


def remember_notebook(client: LanguageClient, uri: str, cells: list[str]) -> None:
    OPEN.setdefault(id(client), []).append((uri, cells))


def open_doc(
    client: LanguageClient, uri: str, text: str, version: int = 1, language: str = "python"
) -> None:
    client.text_document_did_open(
        lsp.DidOpenTextDocumentParams(
            text_document=lsp.TextDocumentItem(
                uri=uri, language_id=language, version=version, text=text
            )
        )
    )


def open_notebook(
    client: LanguageClient,
    path: Path,
    cells: list[tuple[lsp.NotebookCellKind, str]],
    version: int = 1,
) -> tuple[str, list[str]]:
    """didOpen a Jupyter notebook at `path` with (kind, text) cells, as VS Code sends it, and
    remember it for `configure` to close; returns the notebook's and its cells' URIs."""
    nb_uri = path.as_uri()
    cell_uris = [f"vscode-notebook-cell:{path}#cell{i}" for i in range(len(cells))]
    client.notebook_document_did_open(
        lsp.DidOpenNotebookDocumentParams(
            notebook_document=lsp.NotebookDocument(
                uri=nb_uri,
                notebook_type="jupyter-notebook",
                version=version,
                cells=[
                    lsp.NotebookCell(kind=kind, document=uri)
                    for (kind, _), uri in zip(cells, cell_uris, strict=True)
                ],
            ),
            cell_text_documents=[
                lsp.TextDocumentItem(
                    uri=uri,
                    language_id="python" if kind == lsp.NotebookCellKind.Code else "markdown",
                    version=1,
                    text=text,
                )
                for (kind, text), uri in zip(cells, cell_uris, strict=True)
            ],
        )
    )
    remember_notebook(client, nb_uri, cell_uris)
    return nb_uri, cell_uris


def replace_all(client: LanguageClient, uri: str, text: str, version: int) -> None:
    client.text_document_did_change(
        lsp.DidChangeTextDocumentParams(
            text_document=lsp.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[lsp.TextDocumentContentChangeWholeDocument(text=text)],
        )
    )


def apply_text_edits(text: str, edits: list[lsp.TextEdit]) -> str:
    """Apply LSP text edits the way an editor does (positions in UTF-16 code units)."""
    lines = text.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))

    def offset(pos: lsp.Position) -> int:
        if pos.line >= len(lines):
            return len(text)
        units = lines[pos.line].encode("utf-16-le")[: 2 * pos.character]
        return starts[pos.line] + len(units.decode("utf-16-le"))

    for edit in sorted(edits, key=lambda e: offset(e.range.start), reverse=True):
        text = text[: offset(edit.range.start)] + edit.new_text + text[offset(edit.range.end) :]
    return text


def markdown(result: lsp.Hover | None) -> str:
    """The markdown text of a hover answer (asserting it is one)."""
    assert result is not None and isinstance(result.contents, lsp.MarkupContent)
    assert result.contents.kind == lsp.MarkupKind.Markdown
    return result.contents.value


def edits_of(action: lsp.CodeAction | lsp.Command) -> dict[str, list[lsp.TextEdit]]:
    """uri -> text edits of a code action's workspace edit (asserting it has one)."""
    assert isinstance(action, lsp.CodeAction) and action.edit is not None
    assert action.edit.changes is not None
    return {uri: list(edits) for uri, edits in action.edit.changes.items()}
