"""Findings of the `firstweek` written set, each measured on MindSpore 2.10 with probes beyond
the set's programs: a `functools.partial` a cell holds through a parameter-or-default choice
(rejected under STRICT), MindSpore's own context managers in `with` (rejected at every level),
and PyTorch's `Tensor.expand` sizes (rejected at every level), and generator expressions over
`tensor.tolist()` (rejected under LAX)."""

from __future__ import annotations

import pytest

from npu_lsp.config import Config
from npu_lsp.engine import check_source

STRICT = Config(syntax_level="strict")
LAX = Config()

HEADER = """import functools
import numpy as np
import mindspore as ms
from mindspore import nn, ops, Tensor

ms.set_context(mode=ms.GRAPH_MODE)


def leaky(x, slope=0.01):
    return ops.maximum(x, x * slope)

"""


def _errors(body: str, config: Config) -> set[tuple[int, str]]:
    text = HEADER + body
    offset = HEADER.count("\n")
    return {(d.span.line - offset, d.code) for d in check_source(text, "case.py", config) if d.severity == "error"}


FFN = """
class FFN(nn.Cell):
    def __init__(self, d, act=None):
        super().__init__()
        self.fc = nn.Dense(d, d)
        self.act = {init}

    def construct(self, x):
        return self.act(self.fc(x)) + 1


ffn = FFN(8{extra})
print(ffn(Tensor(np.ones((3, 8), np.float32))).shape)
"""


@pytest.mark.parametrize(
    "init",
    [
        "act or functools.partial(leaky, slope=0.2)",
        'act or functools.partial(ops.gelu, approximate="tanh")',
        "functools.partial(leaky, slope=0.2) if act is None else act",
        "act if act is not None else functools.partial(leaky, slope=0.2)",
    ],
)
def test_partial_held_through_a_default_choice_is_rejected_under_strict(init: str) -> None:
    body = FFN.format(init=init, extra="")
    assert _errors(body, STRICT) == {(9, "MS131")}
    assert _errors(body, LAX) == set()


@pytest.mark.parametrize(
    ("init", "extra"),
    [
        ("act or ops.relu", ""),
        ("act or leaky", ""),
        ("act or functools.partial(leaky, slope=0.2)", ", act=ops.relu"),
    ],
)
def test_default_choice_without_a_partial_compiles(init: str, extra: str) -> None:
    body = FFN.format(init=init, extra=extra)
    assert _errors(body, STRICT) == set()


WITH = """
class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.fc = nn.Dense(4, 2)

    def construct(self, x):
        with ms._no_grad():
            y = self.fc(x)
        return y


@ms.jit
def f(x):
    return x * 2


with ms._no_grad():
    out = f(Tensor(np.ones((2,), np.float32)))
"""


def test_mindspore_no_grad_in_compiled_code_only() -> None:
    for config in (LAX, STRICT):
        assert _errors(WITH, config) == {(8, "MS124")}


EXPAND = """
class Net(nn.Cell):
    def construct(self, x, y, size):
        b = y.shape[0]
        a = x.expand(b, 4)
        c = x.expand((b, 4))
        ok = x.expand(size) + x.expand_as(y) + x.broadcast_to((b, 4))
        return a + c + ok


t = Tensor(np.ones((1, 4), np.float32))
print(t.expand(3, 4).shape)
"""


def test_tensor_expand_with_torch_sizes() -> None:
    for config in (LAX, STRICT):
        assert _errors(EXPAND, config) == {(5, "MS172"), (6, "MS172")}


TOLIST = """
class Net(nn.Cell):
    def construct(self, x):
        vals = x.tolist()
        a = sum(1 for v in vals if v > 0)
        b = [v * 2 for v in x.tolist()]
        n = 0
        for v in x.tolist():
            n += v
        return a, b, n, len(vals), sum(x.tolist())


print(Net()(Tensor(np.ones((3,), np.float32))))
"""


def test_generator_over_tolist_is_rejected_under_lax() -> None:
    # line 6 fails on its own too (measured on MindSpore 2.10: a comprehension over the
    # `tolist()` of a 3-item tensor, "unsupported operand type(s) for +: 'float' and 'list'"),
    # MindSpore reports only the first error of a program
    assert _errors(TOLIST, LAX) == {(5, "MS173"), (6, "MS193")}
    assert {code for _line, code in _errors(TOLIST, STRICT)} == {"MS130"}
