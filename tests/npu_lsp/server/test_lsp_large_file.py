"""A 100,000-line file: analysed in the worker process while the server keeps answering.

Its own module (and so its own server) because the analysis keeps the worker busy for
seconds after the test has its answer."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from lsp_helpers import configure, markdown, open_doc, wait_for_diagnostics
from lsprotocol import types as lsp
from pytest_lsp import LanguageClient

pytestmark = pytest.mark.asyncio(loop_scope="module")


async def test_large_file_does_not_stall_other_requests(
    client: LanguageClient, workspace: Path
) -> None:
    configure(client)
    big = (workspace / "big.py").as_uri()
    body = "import torch\n" + "".join(
        f"def f{i}(x):\n    return x + {i}\n\n" for i in range(33_333)
    )
    assert body.count("\n") >= 100_000
    small = (workspace / "small.py").as_uri()
    open_doc(client, small, "import acl\nacl.rt.malloc(8, 0)\n")
    open_doc(client, big, body)
    # While the big file is being analysed, the server still answers hover requests.
    hover = await asyncio.wait_for(
        client.text_document_hover_async(
            lsp.HoverParams(
                text_document=lsp.TextDocumentIdentifier(uri=small), position=lsp.Position(1, 8)
            )
        ),
        timeout=10,
    )
    assert "aclrtMalloc" in markdown(hover)
    assert await wait_for_diagnostics(client, big, timeout=120) == []
