"""A small multi-module MindSpore project exercising what cross-file resolution reads:
Cells subclassing Cells of other modules, helpers calling helpers across modules,
`super()` calls, `self.attr` types, local variable types, closures returned by factories,
`ms.jit(fn)` wrapping, `@jit_class`, nested definitions and non-ASCII lines."""

from __future__ import annotations

from pathlib import Path

FILES = {
    "pkg/__init__.py": "from .nets import Top\n",
    "pkg/helpers.py": """import mindspore as ms
from mindspore import ops


def scale(x, k):
    s = {1, 2}
    return ops.mul(x, k)


def twice(x):
    # 注释: non-ASCII text before calls on this line
    y = "é" + str(1); z = scale(x, 2)
    return scale(z, 1)


def make_adder(n):
    def add(x):
        return twice(x) + n
    return add


adder = make_adder(3)


@ms.jit_class
class Holder:
    def __init__(self):
        self.k = 2

    def dump(self, x):
        return scale(x, self.k)


def wrapped(x):
    return twice(x)


fast = ms.jit(wrapped, fullgraph=True)
""",
    "pkg/base.py": """from mindspore import nn
from .helpers import twice, scale, Holder


class Base(nn.Cell):
    def __init__(self):
        super().__init__()
        self.h = Holder()

    def pre(self, x):
        return twice(x)

    def construct(self, x):
        h = Holder()
        return h.dump(self.pre(x))
""",
    "pkg/mid.py": """from .base import Base
from . import helpers


class Mid(Base):
    def pre(self, x):
        y = super().pre(x)
        return helpers.scale(y, 3)

    def extra(self, x):
        def inner(v):
            return helpers.twice(v)
        return inner(x)
""",
    "pkg/nets.py": """import mindspore as ms
from mindspore import nn
from .mid import Mid
from .helpers import adder, fast


class Top(Mid):
    def construct(self, x):
        a = adder(x)
        b = self.extra(a)
        return self.h.dump(b) + fast(b)


@ms.jit
def step(x):
    return Top()(x)
""",
}


def write_mixed_project(root: Path) -> list[Path]:
    out = []
    for rel, text in FILES.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
        out.append(p)
    return out
