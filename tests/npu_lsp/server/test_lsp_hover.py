"""Hover over LSP: pyACL names with CUDA equivalents, ACL error names and codes."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsp_helpers import configure, markdown, open_doc
from lsprotocol import types as lsp
from pytest_lsp import LanguageClient

from npu_runtime.errors import lookup

pytestmark = pytest.mark.asyncio(loop_scope="module")

SCRIPT = (
    "import acl\n"
    "from acl import rt\n"
    "ptr, ret = acl.rt.malloc(1024, 0)\n"
    "stream, ret = rt.create_stream()\n"
    "if ret == ACL_ERROR_RT_CONTEXT_NULL:\n"
    "    pass\n"
    "# the run failed with 507011 at synchronize\n"
    "size = 507011\n"
    'msg = "😀: code 107002"\n'
)


async def hover_at(client: LanguageClient, uri: str, line: int, character: int) -> lsp.Hover | None:
    return await client.text_document_hover_async(
        lsp.HoverParams(
            text_document=lsp.TextDocumentIdentifier(uri=uri),
            position=lsp.Position(line, character),
        )
    )


async def test_hover_on_pyacl_call_shows_signature_and_cuda_equivalent(
    client: LanguageClient, workspace: Path
) -> None:
    configure(client)
    uri = (workspace / "h.py").as_uri()
    open_doc(client, uri, SCRIPT)
    result = await hover_at(client, uri, 2, 20)  # on `malloc`
    text = markdown(result)
    assert "acl.rt.malloc(size, policy)  # -> (dev_ptr, ret)" in text
    assert "`aclrtMalloc`" in text and "`cudaMalloc`" in text
    assert result is not None
    assert result.range == lsp.Range(start=lsp.Position(2, 18), end=lsp.Position(2, 24))
    aliased = await hover_at(client, uri, 3, 20)  # `rt.create_stream` through `from acl import rt`
    assert "cudaStreamCreate" in markdown(aliased)


async def test_hover_on_error_name_and_codes(client: LanguageClient, workspace: Path) -> None:
    configure(client)
    uri = (workspace / "e.py").as_uri()
    open_doc(client, uri, SCRIPT)
    by_name = await hover_at(client, uri, 4, 12)
    info = lookup(107002)
    assert markdown(by_name).startswith("**ACL_ERROR_RT_CONTEXT_NULL** = `107002`")
    assert info.fix in markdown(by_name)
    in_comment = await hover_at(client, uri, 6, 25)
    assert lookup(507011).name in markdown(in_comment)
    assert in_comment is not None and in_comment.range == lsp.Range(
        start=lsp.Position(6, 22), end=lsp.Position(6, 28)
    )
    # A six-digit number in code is a number, not an error code.
    assert await hover_at(client, uri, 7, 9) is None
    # Inside a string after an emoji (two UTF-16 units): positions are UTF-16 and line up.
    in_string = await hover_at(client, uri, 8, 18)
    assert "ACL_ERROR_RT_CONTEXT_NULL" in markdown(in_string)
    assert in_string is not None and in_string.range == lsp.Range(
        start=lsp.Position(8, 16), end=lsp.Position(8, 22)
    )


async def test_hover_can_be_switched_off(client: LanguageClient, workspace: Path) -> None:
    configure(client, {"hover": False})
    uri = (workspace / "off.py").as_uri()
    open_doc(client, uri, SCRIPT)
    assert await hover_at(client, uri, 2, 20) is None
