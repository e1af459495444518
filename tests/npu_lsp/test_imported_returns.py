"""Return kinds of helpers imported from other modules of the project (returns.py, flow.py
`_imported_return_kind`), through the summaries, the CLI, its workers and its cache.

MindSpore 2.10 compiles `range(size(x, 0))` when `size` (another module) returns
`x.shape[0]`, and refuses it when the helper returns a tensor (probes in
`fixtures/written/crossmod/`, judged).
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

from npu_lsp.rules.graphmode import returns
from npu_lsp.scope import summarize

EXE = [sys.executable, "-m", "ascend_lens", "check"]

SHAPES = '''import mindspore


def size(x, d=None):
    if d is None:
        return x.shape
    return x.shape[d]


def numel(x):
    n = 1
    for s in x.shape:
        n = n * s
    return n


def total(x):
    return mindspore.ops.cast(x.sum(), mindspore.int32)


def scaled(x, k):
    return x.shape[-1] * k


def rows(x):
    return size(x, 0)
'''
INIT = "from .shapes import numel, rows, scaled, size, total\n"
MAIN = '''import numpy as np
import mindspore as ms
from mindspore import nn, Tensor
from helpers import {name}

ms.set_context(mode=ms.GRAPH_MODE)


class Net(nn.Cell):
    def construct(self, x):
        out = x
        for _ in range(range_bound):
            out = out + 1
        return out


net = Net()
print(net(Tensor(np.ones((2, 3), np.float32))))
'''


def _formulas(src: str, module: str = "m") -> dict[str, returns.Entry]:
    return summarize(ast.parse(src), f"/p/{module}.py", module).returns


def test_formulas_state_shape_items_as_constants_of_their_arguments() -> None:
    got = _formulas(SHAPES)
    # `x.shape` / `x.shape[d]`: the kind of `d` only (an int while compiling when `d` is)
    assert got["size"] == (("x", "d"), 2, (None, (returns.CONST_, 0)), (returns.PARAM, 1), 0)
    assert got["numel"][3] == (returns.CONST_, 0)  # a product of shape items, in a loop
    assert got["total"][3] == (returns.CONST_, 3)  # a mindspore op: a tensor
    assert got["scaled"][3] == (returns.PARAM, 1)
    assert got["rows"][3] == (returns.CALL, "m.size", ((returns.PARAM, 0), (returns.CONST_, 0)), (), 0)


def test_forwarded_star_arguments_and_decorators() -> None:
    got = _formulas(
        "import functools\n\n\ndef size(t, dim=None):\n    return t.shape[dim]\n\n\n"
        "@functools.lru_cache\ndef x_size(obj, *args, **kwargs):\n    return size(obj, *args, **kwargs)\n\n\n"
        "def x_sum(*args, **kwargs):\n    def _sum(t, dim=None):\n        return t.sum(dim)\n\n"
        "    return _sum(*args, **kwargs)\n"
    )
    forwarded = (returns.CALL, "m.size", ((returns.PARAM, 0),), (), returns.STAR_ARGS | returns.STAR_KWARGS)
    # decorated: what the body returns, joined with unknown
    assert got["x_size"][3] == (returns.MAX, forwarded, (returns.CONST_, 1))
    assert got["x_size"][4] == returns.STAR_ARGS | returns.STAR_KWARGS
    assert got["x_sum"][3] == (returns.MAX, (returns.EXTRA_POS,), (returns.EXTRA_KW,))
    assert returns.evaluate(got["x_sum"][3], ([], [3], {"dim": 0}), None) == 3


@pytest.mark.parametrize(
    "src",
    [
        "def f(x):\n    yield x.shape\n",
        "async def f(x):\n    return x.shape\n",
        "def f(x):\n    return 1\n\n\ndef f(x):\n    return x\n",
    ],
)
def test_what_a_function_may_not_return_from_its_body_has_no_formula(src: str) -> None:
    assert "f" not in _formulas(src)


def test_evaluation_follows_calls_and_bounds() -> None:
    seen: list[str] = []

    def call(q: str, pos: list[int], kw: dict[str, int]) -> int:
        seen.append(q)
        return max([0, *pos])

    f = _formulas(SHAPES)["rows"][3]
    assert returns.evaluate(f, ([3], [], {}), call) == 3 and seen == ["m.size"]
    assert returns.evaluate((returns.SCALAR, (returns.PARAM, 0)), ([3], [], {}), call) == 1
    assert returns.evaluate((returns.HOST, (returns.PARAM, 0)), ([3], [], {}), call) == 2
    assert returns.evaluate((returns.NUMPY, (returns.PARAM, 0)), ([1], [], {}), call) == 0


def run(*args: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*EXE, *args], capture_output=True, text=True, cwd=cwd, timeout=600, env=env)


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "xdg")}


def _project(root: Path) -> Path:
    (root / "helpers").mkdir(parents=True)
    (root / "pyproject.toml").write_text("[tool.ascend-lens]\n")
    (root / "helpers" / "__init__.py").write_text(INIT)
    (root / "helpers" / "shapes.py").write_text(SHAPES)
    uses = {
        "size_ok": ("size", "size(x, 0)"),
        "numel_ok": ("numel", "numel(x)"),
        "rows_ok": ("rows", "rows(x)"),
        "scaled_ok": ("scaled", "scaled(x, 2)"),
        "scaled_bad": ("scaled", "scaled(x, total(x))"),
        "total_bad": ("total", "total(x)"),
    }
    for case, (name, bound) in uses.items():
        imported = name if "total" not in bound or name == "total" else f"{name}, total"
        (root / f"{case}.py").write_text(MAIN.format(name=imported).replace("range_bound", bound))
    return root


def _flagged(out: str) -> set[str]:
    return {line.split(":")[0] for line in out.splitlines() if "MS120" in line}


def test_a_folder_check_follows_imported_helpers_the_same_every_way(
    tmp_path: Path, env: dict[str, str]
) -> None:
    root = _project(tmp_path / "proj")
    outs = [run("--no-cache", "--jobs", jobs, ".", cwd=root, env=env).stdout for jobs in ("1", "2")]
    assert outs[0] == outs[1]
    assert _flagged(outs[0]) == {"scaled_bad.py", "total_bad.py"}
    cold = run("--jobs", "2", ".", cwd=root, env=env).stdout
    warm = run("--jobs", "1", ".", cwd=root, env=env).stdout
    assert cold == warm == outs[0]


def test_editing_what_a_helper_returns_rechecks_its_callers(tmp_path: Path, env: dict[str, str]) -> None:
    root = _project(tmp_path / "proj")
    assert "size_ok.py" not in _flagged(run(".", cwd=root, env=env).stdout)
    shapes = root / "helpers" / "shapes.py"
    # the same lines, another return: the summary changes, so do the callers' keys
    shapes.write_text(SHAPES.replace("return x.shape[d]", "return x[d] + 0"))
    warm = run(".", cwd=root, env=env).stdout
    assert warm == run("--no-cache", ".", cwd=root, env=env).stdout
    assert {"size_ok.py", "rows_ok.py"} <= _flagged(warm)


def test_a_function_rebound_at_module_level_has_no_formula() -> None:
    assert "f" not in _formulas("def f(x):\n    return x.shape\n\n\nf = wrap(f)\n")
    assert "f" not in _formulas("def f(x):\n    return x.shape\n\n\nclass f:\n    pass\n")


def test_formulas_are_the_same_with_and_without_the_text() -> None:
    """With the text and no `yield`/`await`/`:=` in it, only statements are visited."""
    from engine_support import FIXTURES

    files = sorted((FIXTURES / "written").glob("*/cases/*.py"))[:400]
    files += sorted((FIXTURES / "written" / "crossmod").rglob("*.py"))
    for path in files:
        text = path.read_text()
        tree = ast.parse(text)
        info = summarize(tree, str(path), "m", text)
        assert returns.summarise(tree, info, text) == returns.summarise(tree, info), path


def test_match_captures_are_unknown() -> None:
    src = "def f(x):\n    match x.shape:\n        case [n, *_]:\n            return n\n    return 0\n"
    assert _formulas(src)["f"][3] == (returns.CONST_, 1)


def test_names_solved_from_each_other_past_a_budget_give_an_unknown_formula() -> None:
    """PGNet's `deteval.combine_results` (mindspore-lab/models): names rebound, in a loop, by
    unpacking calls that take them all. Each read inside the unfinished cycle solved the
    names again (minutes for one file); past `_MAX_STEPS` the formula is unknown."""
    names = [f"v{i}" for i in range(7)]
    call = ", ".join(names)
    body = "".join(f"    {n} = 0\n" for n in names)
    body += "    for i in range(len(data)):\n"
    body += "".join(f"        {call} = g{k}({call}, i)\n" for k in range(3))
    src = "def f(data):\n    def g0(*a):\n        return a\n\n    def g1(*a):\n        return a\n\n"
    src += "    def g2(*a):\n        return a\n\n" + body + f"    return {names[0]} / 2\n"
    assert _formulas(src)["f"][3] == (returns.CONST_, 1)
