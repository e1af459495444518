"""Patterns of public MindSpore model zoos that MindSpore 2.10 compiles (benchmarks/zoo_sweep.py).

Each false error the zoo sweep found became a reduced program in the ms210 corpus
(`fixtures/ms210/cases/orig_zoo_*.py`, judged by MindSpore 2.10). The corpus test scores
them at the default level; here they are scored at both levels, and the cross-module forms
(a base class in another module, a `@constexpr` helper imported from another module) go
through `ascend-lens check` on a small package, as a user runs it.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from engine_support import FIXTURES

from npu_lsp.config import Config
from npu_lsp.engine import check_path

MS210 = FIXTURES / "ms210"
LABELS: dict[str, dict[str, object]] = json.loads((MS210 / "labels.json").read_text())
ZOO = sorted(
    (name, level)
    for name, label in LABELS.items()
    if name.startswith("orig_zoo_") and label.get("pynative") == "accept"
    for level in ("lax", "strict")
    if label.get(level) in ("accept", "reject") and not (level == "lax" and "known_miss" in label)
)
#: zoo cases we still get wrong at LAX (the label's `known_miss` says why)
KNOWN = sorted(n for n, lab in LABELS.items() if n.startswith("orig_zoo_") and "known_miss" in lab)
EXE = [sys.executable, "-m", "ascend_lens", "check", "--no-config", "--no-cache", "-q"]


def _errors(path: Path, level: str) -> list[str]:
    config = Config() if level == "lax" else replace(Config(), syntax_level="strict")
    return [
        f"{d.span.line}:{d.code}"
        for d in check_path(path, config)
        if d.severity == "error" and d.code.startswith("MS")
    ]


def test_the_zoo_cases_are_in_the_corpus() -> None:
    assert len(ZOO) >= 20


@pytest.mark.parametrize(("name", "level"), ZOO)
def test_zoo_case_gets_mindspore_verdict_at_both_levels(name: str, level: str) -> None:
    errors = _errors(MS210 / "cases" / name, level)
    assert ("reject" if errors else "accept") == LABELS[name][level], errors


@pytest.mark.parametrize("name", KNOWN)
def test_known_zoo_misses_still_disagree(name: str) -> None:
    """When one starts agreeing, drop its `known_miss` so it is scored."""
    errors = _errors(MS210 / "cases" / name, "lax")
    assert ("reject" if errors else "accept") != LABELS[name]["lax"]


BASE = """from mindspore import nn
from mindspore.ops import operations as P


class Base(nn.Cell):
    def __init__(self):
        super().__init__()
        self.shape = P.{primitive}()

    def construct(self, x):
        return x
"""
SUB = """from mindspore.ops import constexpr

from pkg.base import Base
from pkg.masks import tril_mask


class Sub(Base):
    def construct(self, x, image=None):
        bs, seq_len = self.shape(x)
        if seq_len > 1 and image is not None:
            x = x + image
        for i in range(bs):
            x = x + i
        return x * tril_mask(seq_len)
"""
MASKS = """import numpy as np
import mindspore as ms
from mindspore import Tensor, ops


@ops.constexpr
def tril_mask(n):
    try:
        ones = np.ones(shape=(n, n))
    except ValueError:
        ones = np.zeros(shape=(n, n))
    return Tensor(np.tril(ones), dtype=ms.float32)
"""


def _package(tmp_path: Path, primitive: str) -> Path:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "base.py").write_text(BASE.format(primitive=primitive))
    (tmp_path / "pkg" / "sub.py").write_text(SUB)
    (tmp_path / "pkg" / "masks.py").write_text(MASKS)
    return tmp_path


@pytest.mark.parametrize("level", ["lax", "strict"])
def test_inherited_shape_primitive_and_imported_constexpr_are_clean(
    tmp_path: Path, level: str
) -> None:
    root = _package(tmp_path, "Shape")
    done = subprocess.run(
        [*EXE, "--syntax-level", level, "."], cwd=root, capture_output=True, text=True
    )
    assert (done.returncode, done.stdout) == (0, "All checks passed!\n"), done.stdout


def test_a_primitive_giving_a_tensor_shape_is_still_a_tensor(tmp_path: Path) -> None:
    """`P.TensorShape()(x)` is a tensor: `range` over its item is still reported."""
    root = _package(tmp_path, "TensorShape")
    done = subprocess.run(
        [*EXE, "--select", "MS120", "."], cwd=root, capture_output=True, text=True
    )
    assert done.returncode == 1
    assert (
        "pkg/sub.py:12:18: MS120 `range` needs Python ints while compiling, but `bs` is a tensor"
        in done.stdout
    )


LOG = """import os


def rank():
    try:
        return int(os.getenv("RANK_ID", "0"))
    except ValueError:
        return 0


class logger:
    @classmethod
    def warning(cls, msg):
        print(msg, rank())
"""
NET = """from mindspore import nn

from pkg.log import logger


class Net(nn.Cell):
    def construct(self, x):
        logger.warning("slow path")
        return x
"""


def test_a_classmethod_of_another_module_fails_at_the_call_not_in_its_body(tmp_path: Path) -> None:
    """MindSpore never binds `cls`: the call is the error, and the `try` the body reaches is
    never compiled (mindformers' `logger.warning`, a classmethod facade over `logging`)."""
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "log.py").write_text(LOG)
    (tmp_path / "pkg" / "net.py").write_text(NET)
    done = subprocess.run([*EXE, "."], cwd=tmp_path, capture_output=True, text=True)
    assert done.stdout.splitlines() == [
        "pkg/net.py:8:9: MS127 classmethod `warning` cannot be called from compiled code (error)",
        "Found 1 problem.",
    ]


CONSTEXPR_RANDOM = """import numpy as np
import mindspore as ms
from mindspore import Tensor, nn, ops
from mindspore.ops.primitive import constexpr


@constexpr
def start_points(b, n):
    try:
        return Tensor(np.random.randint(n, size=(b,)), ms.int32)
    except ValueError:
        return Tensor(np.zeros((b,)), ms.int32)


class Net(nn.Cell):
    def construct(self, x):
        b, n = ops.shape(x)
        return x[start_points(b, n)]
"""


@pytest.mark.parametrize("level", ["lax", "strict"])
def test_a_constexpr_body_only_warns_about_what_it_freezes(tmp_path: Path, level: str) -> None:
    """A @constexpr body runs as Python while compiling (PointNet2's farthest-point sampling
    draws its start point there): no graph-mode error, but the random draw is frozen."""
    path = tmp_path / "fps.py"
    path.write_text(CONSTEXPR_RANDOM)
    config = Config() if level == "lax" else replace(Config(), syntax_level="strict")
    found = [(d.span.line, d.code, d.severity) for d in check_path(path, config)]
    assert found == [(10, "MS141", "warning")]
