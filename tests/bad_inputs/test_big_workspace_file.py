"""A big generated module in the workspace (under the size limit, so it is indexed): its
parse happens in the indexer process, never between an opened file and its diagnostics;
and `kill -9` of the server takes the indexer along."""

from __future__ import annotations

import signal
import time
from pathlib import Path

from bad_input_rpc import RawRpc, diagnostics, log_line, open_doc, start
from bad_input_support import command_line, still_running, tree

from npu_lsp.engine import WorkspaceIndex

CUDA = "import torch\nx = torch.ones(2).cuda()\n"
#: 1,896,000 bytes: under the 2,000,000-byte default limit, so the workspace index reads it.
BIG = "x = 1\n" * 316_000


def blocking_index_time(path: Path) -> float:
    """How long indexing the big file holds the process that does it (parse + summary):
    what an opened file's diagnostics would wait if the engine worker indexed it."""
    started = time.perf_counter()
    assert WorkspaceIndex(path.parent).update(str(path), BIG)
    return time.perf_counter() - started


def index_ready(rpc: RawRpc) -> bool:
    return any(
        m.get("method") == "window/logMessage" and "workspace index ready" in m["params"]["message"]
        for m in rpc.seen
    )


def test_an_open_file_gets_diagnostics_while_a_big_module_is_indexed(tmp_path: Path) -> None:
    big = tmp_path / "generated_tables.py"
    big.write_text(BIG)
    assert len(BIG) < 2_000_000
    blocking = blocking_index_time(big)
    (tmp_path / "lib.py").write_text("def helper(x):\n    return x\n")
    rpc = start(tmp_path)
    try:
        open_doc(rpc, tmp_path / "first.py", CUDA)  # starts the worker (not timed)
        assert [d["code"] for d in diagnostics(rpc, tmp_path / "first.py", 60)] == ["NPU201"]
        # Open one small file after another while the index is being built; each one's
        # diagnostics must not wait for the big file's parse.
        latencies: list[float] = []
        indexer_seen = False
        while not index_ready(rpc) and len(latencies) < 100:
            path = tmp_path / f"open{len(latencies)}.py"
            started = time.monotonic()
            open_doc(rpc, path, CUDA)
            assert [d["code"] for d in diagnostics(rpc, path, 60)] == ["NPU201"]
            latencies.append(time.monotonic() - started)
            time.sleep(0.1)  # spread the samples over the indexing
            if not indexer_seen and not index_ready(rpc):
                indexer_seen = len(spawned_children(rpc)) == 2  # the worker and the indexer
        assert len(latencies) >= 3, (
            f"only {len(latencies)} opened files were analysed while the index was built: "
            f"they waited for the big file's parse ({blocking:.2f} s)"
        )
        assert max(latencies) < blocking, (
            f"an opened file waited {max(latencies):.2f} s for its diagnostics, as long as "
            f"indexing the big file takes ({blocking:.2f} s)"
        )
        assert indexer_seen, "no indexer process seen while the index was being built"
        rpc.wait_for(
            lambda m: (
                m.get("method") == "window/logMessage"
                and m["params"]["message"] == f"Ascend Lens: workspace index ready for {tmp_path}"
            ),
            60,
        )
    finally:
        rpc.proc.kill()
        rpc.proc.wait()


def spawned_children(rpc: RawRpc) -> list[str]:
    """The server's children started by multiprocessing (the worker, the indexer)."""
    lines = (" ".join(command_line(p)) for p in tree(rpc.proc.pid))
    return [line for line in lines if "spawn_main" in line]


def test_kill_9_of_the_server_while_indexing_leaves_no_indexer(tmp_path: Path) -> None:
    (tmp_path / "generated_tables.py").write_text(BIG)
    rpc = start(tmp_path)
    deadline = time.monotonic() + 30
    while len(spawned_children(rpc)) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    children = tree(rpc.proc.pid)
    assert len(spawned_children(rpc)) == 2  # the worker and the indexer, busy with BIG
    assert not index_ready(rpc)
    rpc.proc.send_signal(signal.SIGKILL)
    rpc.proc.wait()
    assert still_running(children, timeout=10) == []


BASE = "import mindspore.nn as nn\n\n\nclass Base(nn.Cell):\n    pass\n"
NET = (
    "from base import Base\n\n\nclass Net(Base):\n    def construct(self, x):\n"
    "        try:\n            y = x\n        except Exception:\n            y = x\n"
    "        return y\n"
)


def test_a_killed_worker_gets_the_workspace_index_back(tmp_path: Path) -> None:
    """The index lives in the worker; a restarted worker is indexed again, so a Cell base
    class in an unopened file is still known."""
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "demo"\n')
    (tmp_path / "base.py").write_text(BASE)
    rpc = start(tmp_path)
    try:
        log_line(rpc, "workspace index ready", timeout=60)
        (worker,) = [p for p in tree(rpc.proc.pid) if "spawn_main" in " ".join(command_line(p))]
        worker.kill()
        worker.wait(10)
        rpc.seen.clear()
        open_doc(rpc, tmp_path / "net.py", NET)
        # the restarted worker indexes the workspace again, then the open file is re-analysed
        log_line(rpc, "workspace index ready", timeout=60)
        found = rpc.wait_for(
            lambda m: (
                m.get("method") == "textDocument/publishDiagnostics"
                and m["params"]["uri"] == (tmp_path / "net.py").as_uri()
                and m["params"]["diagnostics"]
            ),
            60,
        )
        assert [
            (d["code"], d["range"]["start"]["line"]) for d in found["params"]["diagnostics"]
        ] == [("MS101", 5)]
    finally:
        rpc.proc.kill()
        rpc.proc.wait()
