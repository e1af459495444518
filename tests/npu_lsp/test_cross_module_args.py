"""Parameters of compiled code whose callers live in other modules (rules/graphmode/xcalls.py).

A sub-cell's `construct` or a helper gets its parameters from its callers. When they are in
another module, what they pass comes from that module's summary: an int passed across
modules folds (no MS131 on `math.ceil(h / s)` at strict), a tensor passed across modules is
still a tensor (MS131 at strict, MS155 at lax). Judged by MindSpore 2.10 as packages (the
probes of docs/graph-mode.md "Arguments from other modules"): the int package compiles at lax
and strict; the tensor packages are rejected at strict on blocks.py:12 ("the inputs should be
constant") and, for `pick`, at lax too. Everything runs through the CLI as a subprocess;
the cache must give what a cold run gives after any edit of a caller.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

EXE = [sys.executable, "-m", "ascend_lens", "check"]

BLOCKS = """import math

from mindspore import nn


class Down(nn.Cell):
    def __init__(self, stride):
        super().__init__()
        self.stride = stride

    def construct(self, x, h, w):
        h2, w2 = math.ceil(h / self.stride), math.ceil(w / self.stride)
        return x * (h2 + w2)


def pick(x, outs):
    res = []
    for i in range(3):
        x = x + 1
        if i in outs:
            res.append(x)
    return res[0] + res[-1]
"""

# the caller passes Python ints: through a held sub-cell, a CellList loop, a plain import
NET_INTS = """from mindspore import nn

from pkg.blocks import Down, pick


class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.down = Down(2)
        self.layers = nn.CellList([Down(1) for _ in range(2)])

    def construct(self, x):
        h, w = x.shape[2], x.shape[3]
        o = (0, 2)
        y = self.down(x, h, w)
        for layer in self.layers:
            y = y + layer(x, h, w)
        return pick(y, o)
"""

# the same calls with tensors: only the values change, no call moves (the callee's file is
# checked again because of what is passed, not because a call site moved)
NET_TENSORS = NET_INTS.replace("h, w = x.shape[2], x.shape[3]", "h, w = x.sum(), x.mean()").replace(
    "o = (0, 2)", "o = h"
)

MAIN = """import numpy as np
import mindspore as ms
from mindspore import Tensor

from pkg.net import Net

ms.set_context(mode=ms.GRAPH_MODE)
net = Net()
print(net(Tensor(np.ones((1, 1, 4, 4)), ms.float32)))
"""


def run(*args: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*EXE, *args], capture_output=True, text=True, cwd=cwd, timeout=600, env=env)


def codes(proc: subprocess.CompletedProcess[str]) -> list[tuple[str, int, str]]:
    assert proc.returncode in (0, 1), proc.stderr
    return sorted(
        (Path(d["path"]).name, d["line"], d["code"]) for d in json.loads(proc.stdout)
    )


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "xdg")}


def project(root: Path, net: str) -> Path:
    pkg = root / "pkg"
    pkg.mkdir(parents=True, exist_ok=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "blocks.py").write_text(BLOCKS)
    (pkg / "net.py").write_text(net)
    (root / "main.py").write_text(MAIN)
    return root


# `pick` is checked at the configured level (fix34a): at STRICT `i in outs` of a tensor wants
# constants (measured alone: "the inputs should be constant"), LAX's MS155 is not STRICT's
STRICT_TENSOR = [("blocks.py", 12, "MS131"), ("blocks.py", 12, "MS131"), ("blocks.py", 20, "MS131")]


@pytest.mark.parametrize("level", ["lax", "strict"])
def test_ints_passed_from_another_module_fold(tmp_path: Path, env: dict[str, str], level: str) -> None:
    root = project(tmp_path / "p", NET_INTS)
    proc = run("--no-cache", "--no-config", "--format", "json", "--syntax-level", level, ".", cwd=root, env=env)
    assert codes(proc) == []


def test_tensors_passed_from_another_module_are_tensors(tmp_path: Path, env: dict[str, str]) -> None:
    root = project(tmp_path / "p", NET_TENSORS)
    strict = run("--no-cache", "--no-config", "--format", "json", "--syntax-level", "strict", ".", cwd=root, env=env)
    assert codes(strict) == STRICT_TENSOR
    lax = run("--no-cache", "--no-config", "--format", "json", "--syntax-level", "lax", ".", cwd=root, env=env)
    assert codes(lax) == [("blocks.py", 20, "MS155")]
    text = run("--no-cache", "--no-config", "--syntax-level", "lax", ".", cwd=root, env=env).stdout
    assert (
        "pkg/blocks.py:20:9: MS155 `res` is appended to only when this tensor condition holds, "
        "inside the unrolled loop on line 18" in text
    )
    assert (
        "pkg/net.py:18:16: note: compiled because `pkg.net.Net.construct` calls it here" in text
    )


def test_one_tensor_caller_among_int_callers_makes_a_tensor(tmp_path: Path, env: dict[str, str]) -> None:
    """Callers join: an int from one module and a tensor from another give a tensor."""
    root = project(tmp_path / "p", NET_INTS)
    other = NET_INTS.replace("class Net(", "class Other(").replace(
        "        y = self.down(x, h, w)\n", "        y = self.down(x, x.sum(), w)\n"
    )
    (root / "pkg" / "other.py").write_text(other)
    proc = run("--no-cache", "--no-config", "--format", "json", "--syntax-level", "strict", ".", cwd=root, env=env)
    assert codes(proc) == [("blocks.py", 12, "MS131")]


def test_an_unknown_caller_leaves_the_parameter_as_the_file_says(
    tmp_path: Path, env: dict[str, str]
) -> None:
    """An argument the caller's summary cannot tell (here an attribute of the caller) keeps
    the callee's own view: a `construct` parameter is a graph input, a tensor."""
    root = project(tmp_path / "p", NET_INTS.replace("self.down(x, h, w)", "self.down(x, self.h, w)"))
    proc = run("--no-cache", "--no-config", "--format", "json", "--syntax-level", "strict", ".", cwd=root, env=env)
    assert codes(proc) == [("blocks.py", 12, "MS131")]


def test_an_edit_of_a_caller_rechecks_the_callee(tmp_path: Path, env: dict[str, str]) -> None:
    """blocks.py imports nothing of net.py, yet what net.py passes decides its diagnostics:
    warm and incremental runs give what a cold run gives, with 1 and 2 jobs."""
    root = project(tmp_path / "p", NET_INTS)
    args = ("--no-config", "--format", "json", "--syntax-level", "strict", ".")
    assert codes(run(*args, cwd=root, env=env)) == []
    net = root / "pkg" / "net.py"
    for text, expected in ((NET_TENSORS, STRICT_TENSOR), (NET_INTS, []), (NET_TENSORS, STRICT_TENSOR)):
        net.write_text(text)
        for jobs in ("1", "2"):
            warm = run("--jobs", jobs, "--timings", *args, cwd=root, env=env)
            assert codes(warm) == expected
            assert warm.stdout == run("--no-cache", "--jobs", jobs, *args, cwd=root, env=env).stdout
    # nothing changed since: answered from the cache, same output
    again = run("--timings", *args, cwd=root, env=env)
    assert json.loads(again.stderr.strip().splitlines()[-1])["checked"] == 0
    assert codes(again) == STRICT_TENSOR


# MASS's grad_clip.py (models/research/nlp/mass): the callee's module defines the constants,
# the caller imports them and passes them. MindSpore 2.10 compiles this package at lax and
# strict (judged as a package: /tmp runs of main.py with MS_DEV_JIT_SYNTAX_LEVEL=1 and 0):
# `clip_type` is the Python int 1, so `if clip_type != 0 and clip_type != 1:` folds.
CLIP = """from mindspore import nn, ops

CLIP_TYPE = 1
CLIP_VALUE = 8.0


class ClipGradients(nn.Cell):
    def __init__(self):
        super().__init__()
        self.clip_by_norm = nn.ClipByNorm()

    def construct(self, grads, clip_type, clip_value):
        if clip_type != 0 and clip_type != 1:
            return grads
        new_grads = ()
        for grad in grads:
            if clip_type == 0:
                t = ops.clip_by_value(grad, -clip_value, clip_value)
            else:
                t = self.clip_by_norm(grad, ops.scalar_to_tensor(clip_value))
            new_grads = new_grads + (t,)
        return new_grads
"""

CLIP_NET = """from mindspore import nn

from .clip import CLIP_TYPE, CLIP_VALUE, ClipGradients


class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.clip = ClipGradients()

    def construct(self, x, y):
        return self.clip((x, y), CLIP_TYPE, CLIP_VALUE)
"""

def clip_project(root: Path, clip: str = CLIP, net: str = CLIP_NET) -> Path:
    pkg = root / "pkg"
    pkg.mkdir(parents=True, exist_ok=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "clip.py").write_text(clip)
    (pkg / "net.py").write_text(net)
    return root


@pytest.mark.parametrize("level", ["lax", "strict"])
def test_a_constant_of_the_callees_module_passed_by_name_folds(
    tmp_path: Path, env: dict[str, str], level: str
) -> None:
    root = clip_project(tmp_path / "p")
    proc = run("--no-cache", "--no-config", "--format", "json", "--syntax-level", level, ".", cwd=root, env=env)
    assert codes(proc) == []


def test_an_imported_name_is_passed_as_a_reference_unless_rebound() -> None:
    """The caller's summary names the imported constant (only the callee, which holds the
    module, reads its value); a name the caller rebinds is its own value, no reference."""
    import ast

    from npu_lsp.rules.graphmode import xcalls
    from npu_lsp.scope import summarize

    def passed(net: str) -> tuple[object, ...]:
        info = summarize(ast.parse(net), "pkg/net.py", "pkg.net", net)
        (call,) = [c for c in info.xcalls if c[0] == "pkg.clip.ClipGradients.construct"]
        return tuple(xcalls.reference(p) for p in call[2])

    assert passed(CLIP_NET) == (None, ("pkg.clip", "CLIP_TYPE"), ("pkg.clip", "CLIP_VALUE"))
    rebound = CLIP_NET.replace("        return self.clip(", "        CLIP_TYPE = x.sum()\n        return self.clip(")
    assert passed(rebound) == (None, None, ("pkg.clip", "CLIP_VALUE"))


def test_an_edit_of_the_callees_constant_rechecks_it(tmp_path: Path, env: dict[str, str]) -> None:
    """The constant is read from the callee's own file: editing it checks the callee again,
    and the warm run says what a cold run says."""
    root = clip_project(tmp_path / "p")
    args = ("--no-config", "--format", "json", "--syntax-level", "lax", ".")
    assert codes(run(*args, cwd=root, env=env)) == []
    clip = root / "pkg" / "clip.py"
    for text in (CLIP.replace("CLIP_TYPE = 1", "CLIP_TYPE = CLIP_VALUE > 1"), CLIP):
        clip.write_text(text)
        warm = run(*args, cwd=root, env=env)
        assert warm.stdout == run("--no-cache", *args, cwd=root, env=env).stdout
    assert codes(warm) == []


# ---------------------------------------------------------------- constants through re-exports
# written/crossmod probes `fix33c_*` (judged by MindSpore 2.10, probe_labels.json): each probe
# passes a module-level constant (or a tuple of tensors) to a cell or helper of `xm_cfg` /
# `xm_seq`, imported where it is defined, through a module re-exporting it by name or by `*`,
# twice, through two modules star-importing each other, or from the caller's own module.
# A probe's verdict is decided in the package, and the probes' calls join when the folder is
# checked as a whole, so each probe is checked here alone with the packages: its verdict is
# whether the callee (or the probe itself) gets an error.
CROSSMOD = Path(__file__).parent / "fixtures" / "written" / "crossmod"
#: probe -> (callee file, first and last line of the callee)
CALLEES = {
    "Repeat": ("xm_cfg/blocks.py", 5, 9),
    "Reduce": ("xm_cfg/blocks.py", 12, 16),
    "Pad": ("xm_cfg/blocks.py", 19, 21),
    "pick": ("xm_seq/helpers.py", 4, 9),
    "total": ("xm_seq/helpers.py", 12, 16),
    "count": ("xm_seq/helpers.py", 19, 21),
    "halve": ("xm_level/helpers.py", 5, 6),
}
#: (probe, level) pairs where the checker disagrees with MindSpore (probe_known_misses.json)
ISOLATED_MISSES: set[tuple[str, str]] = set()
#: fix33c's probes and fix34a's of a helper whose verdict depends on the configured level
FIX33C = sorted(
    p.name for pattern in ("fix33c_*.py", "fix34a_level_*.py") for p in (CROSSMOD / "probes").glob(pattern)
)


def _callee(probe: str) -> tuple[str, int, int]:
    text = (CROSSMOD / "probes" / probe).read_text()
    (name,) = [n for n in CALLEES if f"import {n}\n" in text or f"import {n}," in text]
    return CALLEES[name]


@pytest.mark.parametrize("probe", FIX33C)
def test_a_crossmod_probe_alone_gets_mindspores_verdict(tmp_path: Path, probe: str) -> None:
    from dataclasses import replace as dc_replace

    from npu_lsp.config import Config
    from npu_lsp.engine import WorkspaceIndex, check_path

    labels = json.loads((CROSSMOD / "probe_labels.json").read_text())[probe]
    for pkg in ("xm_cfg", "xm_seq", "xm_level"):
        shutil.copytree(CROSSMOD / "probes" / pkg, tmp_path / pkg)
    shutil.copy(CROSSMOD / "probes" / probe, tmp_path / probe)
    callee, first, last = _callee(probe)
    for level in ("lax", "strict"):
        config = Config() if level == "lax" else dc_replace(Config(), syntax_level="strict")
        ws = WorkspaceIndex.from_paths([tmp_path], root=str(tmp_path))
        errors = [d for d in check_path(tmp_path / probe, config, ws) if d.severity == "error"]
        errors += [
            d for d in check_path(tmp_path / callee, config, ws)
            if d.severity == "error" and first <= d.span.line <= last
        ]
        got = "reject" if errors else "accept"
        if (probe, level) in ISOLATED_MISSES:
            assert got != labels[level], f"{probe} [{level}] agrees now: drop it from ISOLATED_MISSES"
        else:
            assert got == labels[level], (level, [(d.code, d.message) for d in errors])


CONSTS = "REPEATS = 3\n"
CONFIG = "from .consts import *\n"
REPEAT = """from mindspore import nn


class Repeat(nn.Cell):
    def construct(self, x, n):
        for _ in range(n):
            x = x * 2
        return x
"""
REPEAT_NET = """from mindspore import nn

from .blocks import Repeat
from .config import REPEATS


class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.block = Repeat()

    def construct(self, x):
        return self.block(x, REPEATS)
"""


def test_an_edit_of_a_re_exported_constants_module_rechecks_the_callee(
    tmp_path: Path, env: dict[str, str]
) -> None:
    """net.py passes `REPEATS`, which config.py star-imports from consts.py: neither blocks.py
    nor net.py imports consts.py, yet its value decides blocks.py's `range`. Warm runs give
    what a cold run gives when consts.py changes, disappears and comes back."""
    pkg = tmp_path / "p" / "pkg"
    pkg.mkdir(parents=True)
    for name, text in (("__init__", ""), ("consts", CONSTS), ("config", CONFIG), ("blocks", REPEAT), ("net", REPEAT_NET)):
        (pkg / f"{name}.py").write_text(text)
    root = tmp_path / "p"
    args = ("--no-config", "--format", "json", "--syntax-level", "strict", ".")
    assert codes(run(*args, cwd=root, env=env)) == []
    consts = pkg / "consts.py"
    tensor = [("blocks.py", 6, "MS120")]
    for text, expected in (
        ("import mindspore as ms\n\nREPEATS = ms.Tensor(3)\n", tensor),
        (CONSTS, []),
        (None, tensor),  # consts.py removed: `REPEATS` names nothing known
        ("REPEATS = 2 + 1\n", []),
    ):
        if text is None:
            consts.unlink()
        else:
            consts.write_text(text)
        warm = run(*args, cwd=root, env=env)
        assert codes(warm) == expected, text
        assert warm.stdout == run("--no-cache", *args, cwd=root, env=env).stdout


def test_references_are_followed_through_re_exports_with_a_bound() -> None:
    """`xcalls.resolve`: a name followed through imports by name and `*`, renamed, around a
    cycle of star imports (each (module, name) once), and not beyond `_REEXPORT_DEPTH`
    modules; a rebound or non-literal module-level name is no constant."""
    import ast

    from npu_lsp.rules.graphmode import xcalls
    from npu_lsp.scope import summarize

    sources = {
        "p.c": "N = 3\nK = N * 2 + 1\nM = 1\nM += 1\nT = object()\nS = (1, 'a')\n",
        "p.b": "from p.c import N as DEPTH\nfrom p.c import *\n",
        "p.cyc1": "from p.cyc2 import *\nLOOPS = 2\n",
        "p.cyc2": "from p.cyc1 import *\n",
        "p.own": "R = 5\nR = R - 1\n",
    }
    chain = {f"p.ch{i}": f"from p.ch{i + 1} import V\n" for i in range(12)}
    chain["p.ch12"] = "V = 7\n"
    exports = {}
    for module, text in {**sources, **chain}.items():
        info = summarize(ast.parse(text), module.replace(".", "/") + ".py", module, text)
        exports[module] = info.exports

    def follow(target: str) -> object:
        (call,) = xcalls.resolve([("t", "m", ((xcalls.UNKNOWN, xcalls.REF + target, ()),), ())], exports)
        p = call[2][0]
        return p[2][0] if p[0] == xcalls.CONST else None

    assert follow("p.b.DEPTH") == 3 and follow("p.b.K") == 7 and follow("p.b.S") == (1, "a")
    assert follow("p.b.M") is None and follow("p.b.T") is None and follow("p.b.missing") is None
    assert follow("p.cyc2.LOOPS") == 2 and follow("p.cyc1.NOPE") is None
    assert follow("p.own.R") == 4
    assert follow("p.ch5.V") == 7  # 7 modules on
    assert follow("p.ch0.V") is None  # 12 modules on: beyond the bound


DECORATOR = '''from functools import wraps


def tensor_func(*types):
    def decorate(func):
        @wraps(func)
        def wrapper(obj, *args, **kwargs):
            if isinstance(obj, types):
                return func(obj, *args, **kwargs)
            return getattr(obj, func.__name__.replace("x2ms_", ""))(*args, **kwargs)

        return wrapper

    return decorate
'''
ADAPTER = '''import mindspore

from .decorator import tensor_func


@tensor_func(mindspore.Tensor)
def x2ms_sum(obj):
    return obj.sum()
'''
ADAPTER_NET = '''from mindspore import nn

from pkg.adapter import x2ms_sum


class Net(nn.Cell):
    def construct(self, x):
        return x + x2ms_sum(x)
'''


@pytest.mark.parametrize("level", ["lax", "strict"])
def test_a_wraps_decorator_of_another_module_is_not_compiled(tmp_path: Path, env: dict[str, str], level: str) -> None:
    """MindSpore compiles a `functools.wraps`-decorated function's own body (it reads the
    source through `inspect`, which follows `__wrapped__`): neither the decorator factory
    nor its wrapper is compiled, so the wrapper's `str.replace` is no STRICT error
    (written/crossmod probes `wrapped_size_range`, `fix34a_wraps_*`, `fix34a_dispatch_*`)."""
    root = tmp_path / "p"
    pkg = root / "pkg"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "decorator.py").write_text(DECORATOR)
    (pkg / "adapter.py").write_text(ADAPTER)
    (pkg / "net.py").write_text(ADAPTER_NET)
    (root / "main.py").write_text(MAIN)
    proc = run("--no-cache", "--no-config", "--format", "json", "--syntax-level", level, ".", cwd=root, env=env)
    assert codes(proc) == []
