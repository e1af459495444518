"""The language server over raw JSON-RPC: requests that do not parse still get an answer,
special and huge workspace files do not stall it, and rapid edits do not grow it."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest
from bad_input_rpc import RawRpc, diagnostics, log_line, open_doc, start
from bad_input_support import still_running, tree, without_root_override

CUDA = "import torch\nx = torch.ones(2).cuda()\n"


@pytest.fixture
def server(tmp_path: Path) -> Iterator[RawRpc]:
    (tmp_path / "a.py").write_text(CUDA)
    rpc = start(tmp_path)
    yield rpc
    children = tree(rpc.proc.pid)
    rpc.proc.kill()
    rpc.proc.wait()
    assert still_running(children) == []


def hover(uri: str, line: int) -> dict[str, Any]:
    return {"textDocument": {"uri": uri}, "position": {"line": line, "character": 0}}


def test_requests_whose_params_do_not_parse_get_an_error(server: RawRpc, tmp_path: Path) -> None:
    uri = (tmp_path / "a.py").as_uri()
    open_doc(server, tmp_path / "a.py", CUDA)
    bad: list[tuple[dict[str, Any], int, str]] = [
        (
            {"id": 10, "method": "textDocument/hover", "params": hover(uri, -1)},
            -32602,
            "invalid params for textDocument/hover: Position.line should be in range",
        ),
        (
            {"id": 11, "method": "textDocument/hover", "params": None},
            -32602,
            "invalid params for textDocument/hover: params must be an object or an array, not null",
        ),
        (
            {"id": "s", "method": "textDocument/codeAction", "params": {"textDocument": 3}},
            -32602,
            "invalid params for textDocument/codeAction: ",
        ),
        ({"id": 12, "method": 7, "params": {}}, -32600, "method 7 is not a string"),
    ]
    for message, code, text in bad:
        server.send({"jsonrpc": "2.0", **message})
        answer = server.response(message["id"], 10)
        assert answer["error"]["code"] == code
        assert answer["error"]["message"].startswith(text), answer
    # A body that is not JSON: a parse error with a null id.
    server.send_body(b"{not json")
    answer = server.wait_for(lambda m: m.get("error", {}).get("code") == -32700, 10)
    assert answer["id"] is None and answer["error"]["message"].startswith("parse error: ")
    # JSON that is no JSON-RPC message (a batch, a bare value): Invalid request, null id.
    for body, what in (
        (b"[1, 2]", "a JSON list"),
        (b'"hi"', "a JSON str"),
        (b'{"id": 5}', 'an object without "jsonrpc": "2.0"'),
    ):
        server.send_body(body)
        answer = server.wait_for(
            lambda m, w=what: (
                m.get("error", {}).get("message") == f"invalid request: {w}, not a message"
            ),
            10,
        )
        assert answer["id"] is None and answer["error"]["code"] == -32600
    # An id that cannot be echoed is answered with null; a notification with bad params is dropped.
    server.send({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": None})
    server.send(
        {"jsonrpc": "2.0", "id": [1], "method": "textDocument/hover", "params": hover(uri, -2)}
    )
    answer = server.wait_for(lambda m: "but was -2" in m.get("error", {}).get("message", ""))
    assert answer["id"] is None
    # The server lives on and answers well-formed requests.
    server.send(
        {"jsonrpc": "2.0", "id": 13, "method": "textDocument/hover", "params": hover(uri, 1)}
    )
    assert "result" in server.response(13, 10)
    assert [d["code"] for d in diagnostics(server, tmp_path / "a.py")] == ["NPU201"]


def test_special_huge_and_unreadable_workspace_files_do_not_stall_the_index(
    tmp_path: Path,
) -> None:
    preexec = without_root_override()
    os.mkfifo(tmp_path / "pipe.py")
    (tmp_path / "generated.py").write_text("x = 1\n" * 350_000)
    (tmp_path / "lib.py").write_text("def helper(x):\n    return x\n")
    locked = tmp_path / "locked"
    locked.mkdir()
    (locked / "m.py").write_text("x = 1\n")
    locked.chmod(0)
    rpc = start(tmp_path, preexec)
    try:
        log_line(rpc, "workspace index ready", timeout=30)
        skipped = {
            m["params"]["message"]
            for m in rpc.seen
            if m.get("method") == "window/logMessage" and "not indexed" in m["params"]["message"]
        }
        assert skipped == {
            f"Ascend Lens: not indexed: {tmp_path / 'pipe.py'}: a FIFO, not a regular file",
            f"Ascend Lens: not indexed: {tmp_path / 'generated.py'}: 2,100,000 bytes, larger than "
            "the max-file-size limit of 2,000,000 bytes",
            f"Ascend Lens: not indexed: {locked}: cannot read folder: Permission denied",
        }
        open_doc(rpc, tmp_path / "a.py", CUDA)
        assert [d["code"] for d in diagnostics(rpc, tmp_path / "a.py")] == ["NPU201"]
        # An open document over the limit gets one diagnostic saying so, not an analysis.
        open_doc(rpc, tmp_path / "generated.py", "x = 1\n" * 350_000)
        (found,) = diagnostics(rpc, tmp_path / "generated.py")
        assert found["code"] == "AL002"
        assert "larger than the max-file-size limit of 2,000,000 characters" in found["message"]
    finally:
        locked.chmod(0o755)
        rpc.proc.kill()
        rpc.proc.wait()


def test_rapid_edits_do_not_grow_the_server(server: RawRpc, tmp_path: Path) -> None:
    path = tmp_path / "a.py"
    open_doc(server, path, CUDA)
    diagnostics(server, path)
    proc = psutil.Process(server.proc.pid)

    def edits(first: int, last: int) -> int:
        for version in range(first, last):
            change = {"text": f"{CUDA}y = {version}\n"}
            server.send(
                {
                    "jsonrpc": "2.0",
                    "method": "textDocument/didChange",
                    "params": {
                        "textDocument": {"uri": path.as_uri(), "version": version},
                        "contentChanges": [change],
                    },
                }
            )
        server.send(
            {
                "jsonrpc": "2.0",
                "id": f"after-{last}",
                "method": "textDocument/hover",
                "params": hover(path.as_uri(), 1),
            }
        )
        server.response(f"after-{last}", 60)
        server.seen.clear()
        return int(proc.memory_info().rss)

    warm = edits(2, 1000)
    grown = edits(1000, 4000) - warm
    # pygls kept two futures per edit: 3000 edits grew the server by 3.9 MB.
    assert grown < 1_000_000, f"{grown / 1e6:.2f} MB more after 3000 edits"
