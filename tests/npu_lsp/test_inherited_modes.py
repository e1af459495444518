"""A library module's mode comes from the project's scripts that import it (`modes.inherit`).

The library below is official/cv/PointNet's STN cut down: its `construct` feeds
`Tensor(np.max(x.asnumpy(), axis=2))` to `nn.Dense`, which MindSpore 2.10 rejects when a
script that set GRAPH_MODE builds and calls it (run on ms210: `TypeError: 'int' object is
not subscriptable` from the graph executor), and runs in PyNative. The library sets no mode
itself: on its own its mode is unknown (checked as graph mode, as before).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from npu_lsp import modes

EXE = [sys.executable, "-m", "ascend_lens", "check", "--format", "json", "--no-config"]

LIB = """import numpy as np
from mindspore import Tensor, nn, ops


class STN(nn.Cell):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv1d(3, 8, 1, has_bias=True)
        self.fc1 = nn.Dense(8, 4)
        self.relu = ops.ReLU()

    def construct(self, x):
        x = self.relu(self.conv1(x))
        x = ops.ExpandDims()(Tensor(np.max(x.asnumpy(), axis=2)), -1)
        x = ops.Reshape()(x, (-1, 8))
        return self.fc1(x)
"""
SMOKE = """

if __name__ == "__main__":
    print(STN()(Tensor(np.ones((2, 3, 5), np.float32))).shape)
"""


def script(mode: str, source: str = "models") -> str:
    return (
        "import numpy as np\n"
        "import mindspore as ms\n"
        "from mindspore import Tensor\n"
        f"from {source} import STN\n"
        "\n"
        f"ms.set_context(mode={mode})\n"
        "net = STN()\n"
        "print(net(Tensor(np.ones((2, 3, 5), np.float32))).shape)\n"
    )


def project(tmp_path: Path, scripts: dict[str, str], lib: str = LIB) -> Path:
    (tmp_path / "models").mkdir(parents=True)
    (tmp_path / "models" / "__init__.py").write_text("from .net import STN\n", encoding="utf-8")
    (tmp_path / "models" / "net.py").write_text(lib, encoding="utf-8")
    for name, text in scripts.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    return tmp_path


def findings(root: Path, *args: str) -> list[tuple[str, str, int]]:
    done = subprocess.run(
        [*EXE, *args, "."], capture_output=True, text=True, cwd=root, timeout=120, check=False
    )
    out = json.loads(done.stdout)
    return sorted((Path(d["path"]).as_posix(), d["code"], d["line"]) for d in out)


def test_a_graph_mode_script_makes_the_library_it_imports_graph(tmp_path: Path) -> None:
    root = project(tmp_path, {"train.py": script("ms.GRAPH_MODE")})
    assert findings(root) == [("models/net.py", "MS145", 16)]
    # a cached second run gives the same
    assert findings(root) == [("models/net.py", "MS145", 16)]
    # the script switches to PyNative: nothing of the library compiles, the cache follows
    (root / "train.py").write_text(script("ms.PYNATIVE_MODE"), encoding="utf-8")
    assert findings(root) == []
    (root / "train.py").write_text(script("ms.GRAPH_MODE"), encoding="utf-8")
    assert findings(root) == [("models/net.py", "MS145", 16)]


def test_graph_reaches_a_default_mode_module_with_a_smoke_test(tmp_path: Path) -> None:
    # `python -m models.net` runs it eagerly (MindSpore's default mode): fine on ms210;
    # imported by a GRAPH_MODE script it compiles
    lib = LIB + SMOKE
    alone = project(tmp_path / "a", {}, lib)
    assert findings(alone, "--no-cache") == []
    root = project(tmp_path / "b", {"train.py": script("ms.GRAPH_MODE", "models.net")}, lib)
    assert findings(root, "--no-cache") == [("models/net.py", "MS145", 16)]


def test_only_pynative_importers_leave_the_library_eager(tmp_path: Path) -> None:
    root = project(
        tmp_path,
        {"export.py": script("ms.PYNATIVE_MODE"), "infer.py": script("ms.PYNATIVE_MODE")},
    )
    assert findings(root, "--no-cache") == []


def test_no_importer_or_a_mode_from_a_variable_keeps_the_library_unknown(tmp_path: Path) -> None:
    # unknown: checked as graph mode, as before (a library is mostly run that way)
    alone = project(tmp_path / "a", {})
    assert findings(alone, "--no-cache") == [("models/net.py", "MS145", 16)]
    variable = script("args.mode").replace("net =", "args = None\nnet =")
    root = project(tmp_path / "b", {"train.py": variable, "export.py": script("ms.PYNATIVE_MODE")})
    assert findings(root, "--no-cache") == [("models/net.py", "MS145", 16)]


def test_inherit_over_the_import_graph() -> None:
    facts = [
        ("train", modes.GRAPH, ["src.network.Net", "numpy"]),
        ("export", modes.PYNATIVE, ["src.network.Net"]),
        ("src", modes.LIBRARY, []),
        ("src.network", modes.DEFAULT, ["src.layers.Block"]),
        ("src.layers", modes.LIBRARY, []),
        ("src.data", modes.LIBRARY, []),
        ("preprocess", modes.PYNATIVE, ["src.data.load"]),
        ("tool", modes.VARIABLE, ["src.misc"]),
        ("src.misc", modes.LIBRARY, []),
        ("src.unused", modes.LIBRARY, []),
    ]
    assert modes.inherit(facts) == {
        "src": True,  # `from src.network import Net` runs src/__init__ too
        "src.network": True,
        "src.layers": True,  # through src.network
        "src.data": False,  # only PyNative importers
    }
