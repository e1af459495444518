"""Absolute imports resolve as Python resolves them from the importing script's folder
(`npu_lsp/locate.py`), so cross-module facts do not depend on the folder `check` runs in.

The crossmod probes import their packages by first name (`import xm_clip.clip`, run with
`probes/` as the script folder); checked from `crossmod/` the packages are named
`probes.xm_clip...`. MindSpore 2.10 rejects 7 of the 20 probes (judged with `probes/` on
`sys.path`, see the set's README); every folder must give those 7. A monorepo with one
`src/` package per model (mindspore-ai/models) must resolve each model's `src` to its own.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from npu_lsp.locate import known_of, locate, still_located

EXE = [sys.executable, "-m", "ascend_lens", "check"]
CROSSMOD = Path(__file__).parent / "fixtures" / "written" / "crossmod"


def run(*args: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*EXE, *args], capture_output=True, text=True, cwd=cwd, timeout=600, env=env)


def findings(proc: subprocess.CompletedProcess[str], cwd: Path) -> list[tuple[str, int, str]]:
    """(path relative to the probes folder, line, code) of each finding."""
    assert proc.returncode in (0, 1), proc.stderr
    out = []
    for d in json.loads(proc.stdout):
        path = (cwd / d["path"]).resolve()
        out.append((path.as_posix().split("/probes/", 1)[1], d["line"], d["code"]))
    return sorted(out)


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "xdg")}


def test_locate_follows_the_importers_folder_then_its_ancestors() -> None:
    known = known_of(
        ["probes.xm_clip.clip", "probes.run", "top", "a.b.src.utils", "a.c.src.utils", "a.b.top"]
    )
    assert locate("xm_clip.clip", "probes", known) == "probes.xm_clip.clip"
    assert locate("top.x", "probes", known) == "top.x"  # a root module
    assert locate("top.x", "a.b", known) == "a.b.top.x"  # the script's folder wins over the root
    assert locate("numpy.linalg", "probes", known) == "numpy.linalg"  # found nowhere
    assert locate("src.utils", "a.b", known) == "a.b.src.utils"
    assert locate("src.utils", "a.c.src", known) == "a.c.src.utils"  # from inside src/
    assert locate("xm_clip", "", known) == "xm_clip"  # a root file: the root is its folder
    assert still_located([("xm_clip", "probes.xm_clip")], "probes", known)
    assert not still_located([("xm_clip", "xm_clip")], "probes", known)


@pytest.mark.parametrize("level", ["lax", "strict"])
def test_crossmod_gives_the_same_seven_from_every_folder(
    tmp_path: Path, env: dict[str, str], level: str
) -> None:
    root = tmp_path / "crossmod"
    shutil.copytree(CROSSMOD, root)
    args = ("--no-config", "--format", "json", "--syntax-level", level)
    inside = findings(run("--no-cache", *args, ".", cwd=root / "probes", env=env), root / "probes")
    above = findings(run("--no-cache", *args, "probes", cwd=root, env=env), root)
    fix33c = ("xm_cfg/", "xm_seq/")
    # later sessions' probes (fix34a's with its package `xm_level`, fix35c's same-module
    # `*args` helpers) are measured alone too, not in the seven
    later = (*fix33c, "xm_level/", "fix34a_", "fix35c_")
    assert len([f for f in inside if not f[0].startswith(later)]) == 7, inside
    # fix33c's packages, checked with every probe's calls joined: `Repeat` is given a
    # module-level Tensor by one probe (a tensor `range` bound for all); each probe alone is
    # in test_cross_module_args.py
    packaged = [("xm_cfg/blocks.py", 7, "MS120")]
    assert [f for f in inside if f[0].startswith(fix33c)] == packaged, inside
    assert above == inside
    # with the cache, cold then warm, from the folder above
    assert findings(run(*args, "probes", cwd=root, env=env), root) == inside
    assert findings(run(*args, "probes", cwd=root, env=env), root) == inside


MODEL_BLOCKS = """import math

from mindspore import nn


class Down(nn.Cell):
    def __init__(self, stride):
        super().__init__()
        self.stride = stride

    def construct(self, x, h):
        return x * math.ceil(h / self.stride)
"""

# the model's train script passes a shape item: a Python int, `math.ceil` folds
MODEL_NET = """from mindspore import nn

from src.blocks import Down


class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.down = Down(2)

    def construct(self, x):
        h = x.shape[0]
        return self.down(x, h)
"""


def monorepo(root: Path) -> Path:
    """Two models, each with its own `src` package (as mindspore-ai/models): model_a's
    caller passes an int, model_b's a tensor (MS131 at strict on its blocks.py:12)."""
    for model, net in (("model_a", MODEL_NET), ("model_b", MODEL_NET.replace("x.shape[0]", "x.sum()"))):
        src = root / "official" / model / "src"
        src.mkdir(parents=True)
        (src / "__init__.py").write_text("")
        (src / "blocks.py").write_text(MODEL_BLOCKS)
        (root / "official" / model / "train.py").write_text(net)
    return root


def test_a_monorepo_gives_each_model_its_own_src(tmp_path: Path, env: dict[str, str]) -> None:
    root = monorepo(tmp_path / "models")
    args = ("--no-config", "--format", "json", "--syntax-level", "strict")

    def found(cwd: Path, *extra: str) -> list[tuple[str, int, str]]:
        proc = run(*extra, *args, ".", cwd=cwd, env=env)
        assert proc.returncode in (0, 1), proc.stderr
        return sorted(
            ((cwd / d["path"]).resolve().relative_to(root).as_posix(), d["line"], d["code"])
            for d in json.loads(proc.stdout)
        )

    expected = [("official/model_b/src/blocks.py", 12, "MS131")]
    assert found(root, "--no-cache") == expected
    per_model = found(root / "official" / "model_a", "--no-cache") + found(
        root / "official" / "model_b", "--no-cache"
    )
    assert per_model == expected
    # the cache: cold, warm, then model_a's src moved away (its caller's import no longer
    # finds it) and back
    assert found(root) == expected
    assert found(root) == expected
    shutil.move(root / "official" / "model_a" / "src", tmp_path / "away")
    assert found(root) == expected
    shutil.move(tmp_path / "away", root / "official" / "model_a" / "src")
    assert found(root) == expected
