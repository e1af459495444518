#!/usr/bin/env python3
"""Write the `fb_` probes of written/famc (never run in CI): a JIT Fallback value crossing calls.

Usage: gen_fb_probes.py   (writes tests/npu_lsp/fixtures/written/famc/probes/fb_*.py; judge them
with judge_files.py and merge the lines into famc/probe_labels.json)

Each probe is value kind x use x placement: a value made by JIT Fallback at LAX (an instance of
a `typing.NamedTuple` class or a dataclass built in compiled code, a tensor computed from
`asnumpy()`; `plain`, a graph tensor, is the control) and used (`round`/`abs` of a scalar
derived from it, its dtype given to an operator, an op reading its shape, printed, `float` of
it) in the function that makes it, in a sub-cell or helper it is given to, or in the caller of
the sub-cell or helper that returns it.
"""

from __future__ import annotations

from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "fixtures" / "written" / "famc" / "probes"

HEAD = """# category: probe
import collections
import dataclasses
import typing
import numpy as np
import mindspore as ms
from mindspore import nn, ops, Tensor

ms.set_context(mode=ms.GRAPH_MODE)


class Out(typing.NamedTuple):
    value: Tensor
    scale: float = 1.0


@dataclasses.dataclass
class Box:
    value: Tensor
    scale: float = 1.0


Pair = collections.namedtuple("Pair", ["value", "scale"])


class Holder:
    def __init__(self, value, scale):
        self.value = value
        self.scale = scale
"""

MAKE = {
    "nt": ["v, s = Out(x, 2.0)", "y = v * s"],
    "dc": ["b = Box(x, 2.0)", "y = b.value * b.scale"],
    "np": ["y = x + Tensor(x.asnumpy())"],
    "plain": ["y = x * 2.0"],
}
# the neighbours, on a smaller grid: a collections.namedtuple and a plain class given a
# tensor, and a typing.NamedTuple / dataclass / plain class built from constants only
MORE = {
    "cnt": ["p = Pair(x, 2.0)", "y = p.value * p.scale"],
    "pc": ["h = Holder(x, 2.0)", "y = h.value * h.scale"],
    "ntc": ["v, s = Out(2.0, 3.0)", "y = x * v + s"],
    "dcc": ["b = Box(2.0, 3.0)", "y = x * b.value + b.scale"],
    "pcc": ["h = Holder(2.0, 3.0)", "y = x * h.value + h.scale"],
}
MORE_USES = ("round", "absint", "cast", "zeroslike")
# a Python scalar from a fallback value (`math.floor` of a run-time scalar, a field of a
# namedtuple built from a tensor) rounded alone or mixed with a graph scalar (`int(x.sum())`)
MIX_SOURCES = {
    "floor": ["c = math.floor(float(x.sum()) / 4)"],
    "ntf": ["v, s = Out(x, 2.0)", "c = float(v.mean())"],
}
MIX_USES = {
    "absalone": ["y = x + abs(c - 1)"],
    "absmixed": ["it = int(x.sum())", "y = x + abs(it / 4 - 2 * c + 1)"],
    "roundalone": ["y = x + round(c + 0.5, 2)"],
    "roundmixed": ["y = x + round(float(x.mean()) + c, 2)"],
    "plainmixed": ["it = int(x.sum())", "y = x + (it / 4 - 2 * c + 1)"],
}
MORE_PLACES = ("same", "cellchain", "fnarg")

USE = {
    "round": ["y = y + round(float(y.mean()), 2)"],
    "absint": ["y = y + abs(int(y.sum()))"],
    "cast": ["y = ops.cast(y, y.dtype) * 2"],
    "zeroslike": ["y = y + ops.zeros_like(y)"],
    "print": ["print(y.shape, y.dtype)"],
    "float": ["y = y * float(y.max())"],
}


def _body(lines: list[str], indent: int) -> str:
    return "".join(" " * indent + line + "\n" for line in lines)


def _fn(name: str, param: str, lines: list[str]) -> str:
    return f"\n\ndef {name}({param}):\n{_body(lines, 4)}    return y\n"


def _cell(name: str, param: str, lines: list[str]) -> str:
    return f"\n\nclass {name}(nn.Cell):\n    def construct(self, {param}):\n{_body(lines, 8)}        return y\n"


def program(kind: str, use: str, place: str) -> str:
    make, used = {**MAKE, **MORE}[kind], USE[use]
    parts = [HEAD]
    cells: list[str] = []
    if place == "same":
        body = make + used
    elif place == "cellarg":
        parts.append(_cell("User", "y", used))
        cells.append("self.user = User()")
        body = make + ["y = self.user(y)"]
    elif place == "cellret":
        parts.append(_cell("Maker", "x", make))
        cells.append("self.maker = Maker()")
        body = ["y = self.maker(x)"] + used
    elif place == "cellchain":
        parts.append(_cell("Maker", "x", make))
        parts.append(_cell("User", "y", used))
        cells += ["self.maker = Maker()", "self.user = User()"]
        body = ["y = self.maker(x)", "y = self.user(y)"]
    elif place == "fnarg":
        parts.append(_fn("use", "y", used))
        body = make + ["y = use(y)"]
    elif place == "fnret":
        parts.append(_fn("make", "x", make))
        body = ["y = make(x)"] + used
    else:
        raise ValueError(place)
    init = ""
    if cells:
        init = "    def __init__(self):\n        super().__init__()\n" + _body(cells, 8) + "\n"
    parts.append(f"\n\nclass Net(nn.Cell):\n{init}    def construct(self, x):\n{_body(body, 8)}        return y\n")
    parts.append("\n\nx = Tensor(np.arange(6).reshape(2, 3).astype(np.float32) - 2.5)\nprint(Net()(x))\n")
    return "".join(parts)


# a dict display read with a key computed at run time: from a tensor in the graph, from
# shapes (a constant), from a JIT Fallback value (here, in a helper it is given, or returned
# by a helper), under a Cell, `@ms.jit` and `@ms.jit(fullgraph=False)`
DK_KEYS = {
    "int": ["k = int(x.sum())"],
    "cmp": ["k = int(x.max() >= x.min())"],
    "shape": ["k = x.shape[0] - 2"],
    "fbnp": ["k = int(x.asnumpy().sum())"],
    "fbnt": ["v, s = Out(x, 2.0)", "k = int(v.sum())"],
    "fbret": ["y0 = make(x)", "k = int(y0.sum())"],
}
# host arithmetic on such keys (under a Cell only: the root made no difference above)
DK_ARITH = {
    "intadd": ["k = int(x.sum()) + 1"],
    "itemsub": ["k = 1 - int(x.sum().item())"],
    "fbntadd": ["v, s = Out(x, 2.0)", "k = int(v.sum()) + 1"],
}
DK_READS = {
    "display": ["y = x + {0: 0.5, 1: 1.0}[k]"],
    "local": ["d = {0: 0.5, 1: 1.0}", "y = x + d[k]"],
}
DK_ROOTS = ("cell", "jit", "jitfg")
MAKE_FN = "\n\ndef make(x):\n    v, s = Out(x, 2.0)\n    return v * s\n"


def _dict_key(key: str, read: str, root: str) -> str:
    parts = [HEAD]
    body = {**DK_KEYS, **DK_ARITH}[key] + DK_READS[read]
    if key == "fbret":
        parts.append(MAKE_FN)
    if root == "cell":
        parts.append(f"\n\nclass Net(nn.Cell):\n    def construct(self, x):\n{_body(body, 8)}        return y\n")
        call = "Net()(x)"
    else:
        deco = "@ms.jit" if root == "jit" else "@ms.jit(fullgraph=False)"
        parts.append(f"\n\n{deco}\ndef step(x):\n{_body(body, 4)}    return y\n")
        call = "step(x)"
    parts.append(f"\n\nx = Tensor(np.arange(6).reshape(2, 3).astype(np.float32) - 2.5)\nprint({call})\n")
    return "".join(parts)


def _mixed(body: list[str], helper: list[str] | None) -> str:
    """A MIX probe: `body` in construct, `helper` the body of `use(x, c)` it calls."""
    parts = [HEAD.replace("import typing\n", "import math\nimport typing\n")]
    if helper is not None:
        parts.append(_fn("use", "x, c", helper))
    parts.append(f"\n\nclass Net(nn.Cell):\n    def construct(self, x):\n{_body(body, 8)}        return y\n")
    parts.append("\n\nx = Tensor(np.arange(6).reshape(2, 3).astype(np.float32) - 2.5)\nprint(Net()(x))\n")
    return "".join(parts)


PLACES = ("same", "cellarg", "cellret", "cellchain", "fnarg", "fnret")


def main() -> None:
    for kind in MAKE:
        for use in USE:
            for place in PLACES:
                (OUT / f"fb_{kind}_{use}_{place}.py").write_text(program(kind, use, place))
    for key in DK_KEYS:
        for read in DK_READS:
            for root in DK_ROOTS:
                (OUT / f"fb_dk_{key}_{read}_{root}.py").write_text(_dict_key(key, read, root))
    for key in DK_ARITH:
        for read in DK_READS:
            (OUT / f"fb_dk_{key}_{read}_cell.py").write_text(_dict_key(key, read, "cell"))
    for src, made in MIX_SOURCES.items():
        for use, used in MIX_USES.items():
            (OUT / f"fb_mix_{src}_{use}_same.py").write_text(_mixed(made + used, None))
            (OUT / f"fb_mix_{src}_{use}_fnarg.py").write_text(_mixed(made + ["y = use(x, c)"], used))
    for kind in MORE:
        for use in MORE_USES:
            for place in MORE_PLACES:
                (OUT / f"fb_{kind}_{use}_{place}.py").write_text(program(kind, use, place))


if __name__ == "__main__":
    main()
