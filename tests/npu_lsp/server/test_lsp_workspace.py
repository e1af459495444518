"""The workspace index: graph scopes that cross files are found for documents in the editor."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from lsp_helpers import (
    REGISTERED,
    open_doc,
    replace_all,
    start,
    wait_for_diagnostics,
    wait_for_index,
)
from lsprotocol import types as lsp
from pytest_lsp import LanguageClient

BASE = "import mindspore.nn as nn\n\n\nclass Base(nn.Cell):\n    pass\n"
NET = (
    "import mindspore\n"
    "from base import Base\n"
    "\n"
    "\n"
    "class Net(Base):\n"
    "    def construct(self, x):\n"
    "        try:\n"
    "            y = x\n"
    "        except Exception:\n"
    "            y = x\n"
    "        return y\n"
)


async def test_cell_base_class_in_an_unopened_file_is_known(
    fresh_client: LanguageClient, tmp_path: Path
) -> None:
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "demo"\n', encoding="utf-8")
    (tmp_path / "base.py").write_text(BASE, encoding="utf-8")  # on disk only, never opened
    await start(fresh_client, tmp_path)
    await wait_for_index(fresh_client)
    uri = (tmp_path / "net.py").as_uri()
    open_doc(fresh_client, uri, NET)
    diags = await wait_for_diagnostics(fresh_client, uri, lambda d: len(d) > 0)
    # `Net` is a Cell only through base.py, so its construct is compiled: `try` is reported.
    assert [(d.code, d.range.start.line) for d in diags] == [("MS101", 6)]


async def test_the_index_is_built_from_the_check_cache(
    fresh_client: LanguageClient, tmp_path: Path
) -> None:
    """After `ascend-lens check` ran on the project, the server indexes the files from the
    summaries it cached (no parse) and still knows the cross-file Cell."""
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "demo"\n', encoding="utf-8")
    (tmp_path / "base.py").write_text(BASE, encoding="utf-8")
    (tmp_path / "other.py").write_text("def f(x):\n    return x\n", encoding="utf-8")
    subprocess.run(
        [sys.executable, "-m", "ascend_lens", "check", "."],
        cwd=tmp_path,
        capture_output=True,
        check=False,
        timeout=120,
    )
    assert (tmp_path / ".ascend-lens_cache" / ".gitignore").exists()
    await start(fresh_client, tmp_path)
    await wait_for_index(fresh_client)
    ready = [m.message for m in fresh_client.log_messages if "workspace index ready" in m.message]
    assert ready[0].endswith("(2 files from the check cache)")
    uri = (tmp_path / "net.py").as_uri()
    open_doc(fresh_client, uri, NET)
    diags = await wait_for_diagnostics(fresh_client, uri, lambda d: len(d) > 0)
    assert [(d.code, d.range.start.line) for d in diags] == [("MS101", 6)]


async def test_saving_a_base_module_updates_its_dependents(
    fresh_client: LanguageClient, tmp_path: Path
) -> None:
    (tmp_path / "base.py").write_text(BASE, encoding="utf-8")
    await start(fresh_client, tmp_path, options={"debounceMs": 0})
    await wait_for_index(fresh_client)
    net = (tmp_path / "net.py").as_uri()
    base = (tmp_path / "base.py").as_uri()
    open_doc(fresh_client, net, NET)
    open_doc(fresh_client, base, BASE)
    await wait_for_diagnostics(fresh_client, net, lambda d: len(d) == 1)
    # Base stops being a Cell in the editor; once saved, net.py is analysed again.
    replace_all(fresh_client, base, "class Base:\n    pass\n", 2)
    await wait_for_diagnostics(fresh_client, base)
    fresh_client.text_document_did_save(
        lsp.DidSaveTextDocumentParams(text_document=lsp.TextDocumentIdentifier(uri=base))
    )
    assert await wait_for_diagnostics(fresh_client, net, lambda d: d == []) == []


async def test_an_edit_to_a_base_module_rechecks_open_dependents_without_a_save(
    fresh_client: LanguageClient, tmp_path: Path
) -> None:
    (tmp_path / "base.py").write_text(BASE, encoding="utf-8")
    await start(fresh_client, tmp_path, options={"debounceMs": 0})
    await wait_for_index(fresh_client)
    net = (tmp_path / "net.py").as_uri()
    base = (tmp_path / "base.py").as_uri()
    open_doc(fresh_client, net, NET)
    open_doc(fresh_client, base, BASE)
    await wait_for_diagnostics(fresh_client, net, lambda d: len(d) == 1)
    await wait_for_diagnostics(fresh_client, base)
    # an edit that keeps what other files see of base.py: net.py keeps its diagnostic
    replace_all(fresh_client, base, BASE + "\n# a comment\n", 2)
    await wait_for_diagnostics(fresh_client, base)
    # Base stops being a Cell in the editor, unsaved: net.py is analysed again at once
    replace_all(fresh_client, base, "class Base:\n    pass\n", 3)
    assert await wait_for_diagnostics(fresh_client, net, lambda d: d == []) == []
    # and back
    replace_all(fresh_client, base, BASE, 4)
    diags = await wait_for_diagnostics(fresh_client, net, lambda d: len(d) == 1)
    assert [d.code for d in diags] == ["MS101"]


async def test_changes_on_disk_reported_by_the_client_update_the_index(
    fresh_client: LanguageClient, tmp_path: Path
) -> None:
    base_path = tmp_path / "base.py"
    base_path.write_text(BASE, encoding="utf-8")
    await start(fresh_client, tmp_path, options={"debounceMs": 0})
    await wait_for_index(fresh_client)
    net = (tmp_path / "net.py").as_uri()
    open_doc(fresh_client, net, NET)
    await wait_for_diagnostics(fresh_client, net, lambda d: len(d) == 1)
    watchers = [
        r for r in REGISTERED[id(fresh_client)] if r.method == lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES
    ]
    assert len(watchers) == 1  # the server asked to be told about **/*.py and pyproject.toml
    # Another tool rewrites base.py (not open in the editor): Base is no longer a Cell.
    base_path.write_text("class Base:\n    pass\n", encoding="utf-8")
    fresh_client.workspace_did_change_watched_files(
        lsp.DidChangeWatchedFilesParams(
            changes=[lsp.FileEvent(uri=base_path.as_uri(), type=lsp.FileChangeType.Changed)]
        )
    )
    assert await wait_for_diagnostics(fresh_client, net, lambda d: d == []) == []


BLOCKS = (
    "import math\n"
    "\n"
    "from mindspore import nn\n"
    "\n"
    "\n"
    "class Down(nn.Cell):\n"
    "    def __init__(self, stride):\n"
    "        super().__init__()\n"
    "        self.stride = stride\n"
    "\n"
    "    def construct(self, x, h):\n"
    "        return x * math.ceil(h / self.stride)\n"
)
CALLER = (
    "from mindspore import nn\n"
    "from blocks import Down\n"
    "\n"
    "\n"
    "class Net(nn.Cell):\n"
    "    def __init__(self):\n"
    "        super().__init__()\n"
    "        self.down = Down(2)\n"
    "\n"
    "    def construct(self, x):\n"
    "        h = x.shape[0]\n"
    "        return self.down(x, h)\n"
)


async def test_an_edit_of_a_caller_rechecks_the_callee_it_passes_arguments_to(
    fresh_client: LanguageClient, tmp_path: Path
) -> None:
    """blocks.py does not import net.py, but what net.py passes to `Down` decides whether
    `math.ceil(h / ...)` is folded (an int) or rejected at strict (a tensor)."""
    (tmp_path / "pyproject.toml").write_text(
        '[tool.ascend-lens]\nsyntax-level = "strict"\n', encoding="utf-8"
    )
    (tmp_path / "blocks.py").write_text(BLOCKS, encoding="utf-8")
    (tmp_path / "net.py").write_text(CALLER, encoding="utf-8")
    await start(fresh_client, tmp_path, options={"debounceMs": 0})
    await wait_for_index(fresh_client)
    net = (tmp_path / "net.py").as_uri()
    blocks = (tmp_path / "blocks.py").as_uri()
    open_doc(fresh_client, net, CALLER)
    open_doc(fresh_client, blocks, BLOCKS)
    await wait_for_diagnostics(fresh_client, net)
    assert await wait_for_diagnostics(fresh_client, blocks) == []
    # net.py passes a tensor instead, unsaved: blocks.py is analysed again at once
    replace_all(fresh_client, net, CALLER.replace("h = x.shape[0]", "h = x.sum()"), 2)
    diags = await wait_for_diagnostics(fresh_client, blocks, lambda d: len(d) > 0)
    assert [(d.code, d.range.start.line) for d in diags] == [("MS131", 11)]
    # and back
    replace_all(fresh_client, net, CALLER, 3)
    assert await wait_for_diagnostics(fresh_client, blocks, lambda d: d == []) == []


# A workspace opened above the projects (mindspore-ai/models: one `src/` package per model,
# each imported as `from src.blocks import Down` by the model's scripts): each model's
# imports find its own `src`, as Python does from the script's folder (npu_lsp/locate.py).
MODEL_CALLER = CALLER.replace("from blocks import Down", "from src.blocks import Down")


async def test_a_workspace_above_the_models_resolves_each_models_src(
    fresh_client: LanguageClient, tmp_path: Path
) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[tool.ascend-lens]\nsyntax-level = "strict"\n', encoding="utf-8"
    )
    callers = {"model_a": MODEL_CALLER, "model_b": MODEL_CALLER.replace("x.shape[0]", "x.sum()")}
    for model, caller in callers.items():
        src = tmp_path / "official" / model / "src"
        src.mkdir(parents=True)
        (src / "__init__.py").write_text("", encoding="utf-8")
        (src / "blocks.py").write_text(BLOCKS, encoding="utf-8")
        (tmp_path / "official" / model / "train.py").write_text(caller, encoding="utf-8")
    await start(fresh_client, tmp_path, options={"debounceMs": 0})
    await wait_for_index(fresh_client)
    blocks_a = (tmp_path / "official" / "model_a" / "src" / "blocks.py").as_uri()
    blocks_b = (tmp_path / "official" / "model_b" / "src" / "blocks.py").as_uri()
    open_doc(fresh_client, blocks_a, BLOCKS)
    open_doc(fresh_client, blocks_b, BLOCKS)
    # model_a's train.py (never opened) passes an int: `math.ceil` folds
    assert await wait_for_diagnostics(fresh_client, blocks_a) == []
    # model_b's passes a tensor
    diags = await wait_for_diagnostics(fresh_client, blocks_b, lambda d: len(d) > 0)
    assert [(d.code, d.range.start.line) for d in diags] == [("MS131", 11)]
    # model_a's caller opened and edited to pass a tensor, unsaved: its blocks.py follows
    train_a = (tmp_path / "official" / "model_a" / "train.py").as_uri()
    open_doc(fresh_client, train_a, callers["model_a"])
    await wait_for_diagnostics(fresh_client, train_a)
    replace_all(fresh_client, train_a, callers["model_b"], 2)
    diags = await wait_for_diagnostics(fresh_client, blocks_a, lambda d: len(d) > 0)
    assert [(d.code, d.range.start.line) for d in diags] == [("MS131", 11)]


REPEAT_BLOCKS = (
    "from mindspore import nn\n"
    "\n"
    "\n"
    "class Repeat(nn.Cell):\n"
    "    def construct(self, x, n):\n"
    "        for _ in range(n):\n"
    "            x = x * 2\n"
    "        return x\n"
)
REPEAT_CALLER = (
    "from mindspore import nn\n"
    "from pkg.blocks import Repeat\n"
    "from pkg.config import REPEATS\n"
    "\n"
    "\n"
    "class Net(nn.Cell):\n"
    "    def __init__(self):\n"
    "        super().__init__()\n"
    "        self.block = Repeat()\n"
    "\n"
    "    def construct(self, x):\n"
    "        return self.block(x, REPEATS)\n"
)


async def test_a_module_added_while_running_gives_a_re_exported_constant(
    fresh_client: LanguageClient, tmp_path: Path
) -> None:
    """net.py passes `REPEATS`, which pkg/config.py star-imports from pkg/consts.py. Without
    consts.py the name is unknown and `range(n)` in blocks.py takes a graph input (a tensor);
    once consts.py is written (the client reports the new file) it is the int 3."""
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("", encoding="utf-8")
    (pkg / "config.py").write_text("from .consts import *\n", encoding="utf-8")
    (pkg / "blocks.py").write_text(REPEAT_BLOCKS, encoding="utf-8")
    (tmp_path / "net.py").write_text(REPEAT_CALLER, encoding="utf-8")
    await start(fresh_client, tmp_path, options={"debounceMs": 0})
    await wait_for_index(fresh_client)
    blocks = (pkg / "blocks.py").as_uri()
    open_doc(fresh_client, blocks, REPEAT_BLOCKS)
    diags = await wait_for_diagnostics(fresh_client, blocks, lambda d: len(d) > 0)
    assert [(d.code, d.range.start.line) for d in diags] == [("MS120", 5)]
    consts = pkg / "consts.py"
    consts.write_text("REPEATS = 3\n", encoding="utf-8")
    fresh_client.workspace_did_change_watched_files(
        lsp.DidChangeWatchedFilesParams(
            changes=[lsp.FileEvent(uri=consts.as_uri(), type=lsp.FileChangeType.Created)]
        )
    )
    assert await wait_for_diagnostics(fresh_client, blocks, lambda d: d == []) == []


HALVE = "import math\n\n\ndef halve(x, h):\n    return x * math.ceil(h / 2)\n"
HALVE_CALLER = (
    "from mindspore import nn\n"
    "from helpers import halve\n"
    "\n"
    "\n"
    "class Net(nn.Cell):\n"
    "    def construct(self, x):\n"
    "        return halve(x, x.sum())\n"
)


async def test_a_helper_reached_from_another_module_is_checked_at_the_configured_level(
    fresh_client: LanguageClient, tmp_path: Path
) -> None:
    """helpers.py compiles nothing itself: `halve` is compiled only because net.py's
    construct calls it with a tensor. `math.ceil` of a tensor runs as Python at LAX and is
    refused at STRICT (written/crossmod probe `fix34a_level_ceil_tensor`: "the inputs
    should be constant"); the editor's `syntaxLevel` is the level it is checked at."""
    (tmp_path / "helpers.py").write_text(HALVE, encoding="utf-8")
    (tmp_path / "net.py").write_text(HALVE_CALLER, encoding="utf-8")
    await start(fresh_client, tmp_path, options={"debounceMs": 0, "syntaxLevel": "strict"})
    await wait_for_index(fresh_client)
    helpers = (tmp_path / "helpers.py").as_uri()
    open_doc(fresh_client, helpers, HALVE)
    diags = await wait_for_diagnostics(fresh_client, helpers, lambda d: len(d) > 0)
    assert [(d.code, d.range.start.line) for d in diags] == [("MS131", 4)]


async def test_the_same_helper_at_lax_has_no_finding(fresh_client: LanguageClient, tmp_path: Path) -> None:
    (tmp_path / "helpers.py").write_text(HALVE, encoding="utf-8")
    (tmp_path / "net.py").write_text(HALVE_CALLER, encoding="utf-8")
    await start(fresh_client, tmp_path, options={"debounceMs": 0})
    await wait_for_index(fresh_client)
    helpers = (tmp_path / "helpers.py").as_uri()
    open_doc(fresh_client, helpers, HALVE)
    assert await wait_for_diagnostics(fresh_client, helpers) == []


LIB = (
    "import numpy as np\n"
    "from mindspore import Tensor, nn, ops\n"
    "\n"
    "\n"
    "class STN(nn.Cell):\n"
    "    def __init__(self):\n"
    "        super().__init__()\n"
    "        self.fc1 = nn.Dense(8, 4)\n"
    "\n"
    "    def construct(self, x):\n"
    "        x = ops.Reshape()(Tensor(np.max(x.asnumpy(), axis=2)), (-1, 8))\n"
    "        return self.fc1(x)\n"
)


def _train(mode: str) -> str:
    return (
        "import numpy as np\n"
        "import mindspore as ms\n"
        "from lib import STN\n"
        "\n"
        f"ms.set_context(mode=ms.{mode})\n"
        "print(STN()(ms.Tensor(np.ones((2, 8, 5), np.float32))))\n"
    )


async def test_a_library_takes_the_mode_of_the_script_importing_it(
    fresh_client: LanguageClient, tmp_path: Path
) -> None:
    """`modes.inherit`: lib.py sets no mode; train.py, which builds and calls its Cell, sets
    GRAPH_MODE, so lib.py's construct compiles (MS145); an unsaved edit of train.py to
    PYNATIVE_MODE leaves nothing of lib.py compiled, and back."""
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "demo"\n', encoding="utf-8")
    (tmp_path / "lib.py").write_text(LIB, encoding="utf-8")
    (tmp_path / "train.py").write_text(_train("GRAPH_MODE"), encoding="utf-8")
    await start(fresh_client, tmp_path, options={"debounceMs": 0})
    await wait_for_index(fresh_client)
    lib = (tmp_path / "lib.py").as_uri()
    train = (tmp_path / "train.py").as_uri()
    open_doc(fresh_client, lib, LIB)
    open_doc(fresh_client, train, _train("GRAPH_MODE"))
    diags = await wait_for_diagnostics(fresh_client, lib, lambda d: len(d) > 0)
    assert [(d.code, d.range.start.line) for d in diags] == [("MS145", 11)]
    await wait_for_diagnostics(fresh_client, train)
    replace_all(fresh_client, train, _train("PYNATIVE_MODE"), 2)
    assert await wait_for_diagnostics(fresh_client, lib, lambda d: d == []) == []
    replace_all(fresh_client, train, _train("GRAPH_MODE"), 3)
    diags = await wait_for_diagnostics(fresh_client, lib, lambda d: len(d) > 0)
    assert [(d.code, d.range.start.line) for d in diags] == [("MS145", 11)]
