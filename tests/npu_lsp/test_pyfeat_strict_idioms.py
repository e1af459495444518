"""STRICT findings on ordinary Python in compiled code found by the `pyfeat` written set, each
measured on MindSpore 2.10 with probes beyond the set's programs: str methods of a class's or
function's `__name__`, `typing.NamedTuple` classes and namedtuple classes made inside the
compiled function, lists of graph variables given to the standard library, and `in` with a
tensor on the right."""

from __future__ import annotations

from npu_lsp.config import Config
from npu_lsp.engine import check_source

STRICT = Config(syntax_level="strict")
LAX = Config()

HEADER = """import functools
from collections import Counter, namedtuple
from typing import NamedTuple
import numpy as np
import mindspore as ms
from mindspore import nn, ops, Tensor

ms.set_context(mode=ms.GRAPH_MODE)
"""


def _errors(body: str, config: Config) -> set[tuple[int, str]]:
    text = HEADER + body
    diags = check_source(text, "case.py", config)
    offset = HEADER.count("\n")
    return {(d.span.line - offset, d.code) for d in diags if d.severity == "error"}


NAMES = """
def helper(v):
    return v + 1


class NetA(nn.Cell):
    def construct(self, x):
        if self.__class__.__name__.startswith("Net"):
            x = x * 2
        n = type(self).__name__
        if n.lower() == "neta":
            x = x * 3
        x = x * len(n)
        if helper.__name__.endswith("er"):
            x = helper(x)
        return x


print(NetA()(Tensor(np.ones(3, np.float32))))
"""


def test_str_methods_of_a_name() -> None:
    # measured: `startswith`, `endswith` and `len()` of `__name__` are refused under STRICT
    # ("cannot get attributes startswith or the String object"); `lower` compiles; LAX all.
    # A function's own `__name__` fails first, under STRICT (MS166: "cannot get attributes
    # __name__ or the Func object"; written/famc probes `g17_fn_*`)
    # (line 13 once: MS144 leaves `len()` of a str to MS164)
    assert _errors(NAMES, STRICT) == {(8, "MS144"), (13, "MS164"), (14, "MS144"), (14, "MS166")}
    assert _errors(NAMES, LAX) == set()


NAMED_TUPLES = """
class Out(NamedTuple):
    a: Tensor
    b: Tensor


class Cfg(NamedTuple):
    scale: float
    shift: float


class Net(nn.Cell):
    def construct(self, x):
        o = Out(a=x * 2, b=x)
        p = Out(x, x * 3)
        c = Cfg(2.0, 1.0)
        P = namedtuple("P", ["s", "t"])
        q = P(2.0, 1.0)
        r = P(x * 2, x)
        return o.a + p.b * c.scale + q.s + r.t


print(Net()(Tensor(np.ones(3, np.float32))))
"""


def test_typing_namedtuple_and_local_namedtuple_classes() -> None:
    # measured: called with graph variables both are refused under STRICT ("When handling
    # script '__call_func_str__(...)' ... the inputs should be constant"); with constants they
    # compile; LAX compiles all
    assert _errors(NAMED_TUPLES, STRICT) == {(14, "MS131"), (15, "MS131"), (19, "MS131")}
    assert _errors(NAMED_TUPLES, LAX) == set()


LISTS = """
class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.heads = nn.CellList([nn.Dense(3, 3) for _ in range(2)])

    def construct(self, x):
        outs = []
        for i in range(3):
            outs.append(x * i)
        y = functools.reduce(lambda a, b: a + b, outs)
        z = functools.reduce(lambda a, b: a + b, [h(x) for h in self.heads])
        k = functools.reduce(lambda a, b: a * b, [2, 3, 4])
        vals = [int(v) for v in (x > 0).astype(ms.int32)]
        c = Counter(vals)
        return y + z * k * len(c)


print(Net()(Tensor(np.ones((2, 3), np.float32))))
"""


def test_lists_of_graph_variables_given_to_the_standard_library() -> None:
    # measured: a list appended with tensors, a comprehension of sub-cell outputs and one of
    # `int(t)` values are refused under STRICT ("the inputs should be constant, but found
    # variable 'outs'"); a list of constants compiles; LAX compiles all
    assert _errors(LISTS, STRICT) == {(11, "MS131"), (12, "MS131"), (15, "MS131")}
    assert _errors(LISTS, LAX) == set()


MEMBERSHIP = """
class Net(nn.Cell):
    def __init__(self, ignore_index=-100):
        super().__init__()
        self.ignore_index = ignore_index
        self.keys = {"a": 1}

    def construct(self, x, labels):
        if self.ignore_index in labels:
            x = x * 2
        y = ops.argmax(x, dim=1)
        flag = 1 not in y
        if 3 not in x.shape and "a" in self.keys:
            x = x + 1
        return x, flag


print(Net()(Tensor(np.ones((2, 3), np.float32)), Tensor(np.array([0, 1], np.int32))))
"""


def test_membership_in_a_tensor() -> None:
    # measured: `v in labels` and `1 not in y` with tensors on the right are refused under
    # STRICT ("When handling script '__input_key_0__ in __input_key_1__' ... the inputs should
    # be constant"); `3 not in x.shape` and `in` a dict compile; LAX compiles all
    assert _errors(MEMBERSHIP, STRICT) == {(9, "MS131"), (12, "MS131")}
    assert _errors(MEMBERSHIP, LAX) == set()


CLASS_ATTRIBUTES = """
class State:
    scale = 1.0


def bump():
    State.scale = State.scale * 2


class Net(nn.Cell):
    step = 0
    mode = 0
    SCALE = 3

    def construct(self, x):
        Net.step += 1
        Net.mode = 3
        bump()
        return x * Net.SCALE


print(Net()(Tensor(np.ones(3, np.float32))))
"""


def test_class_attributes_set_and_read_in_compiled_code() -> None:
    # measured: `Net.step += 1` in construct and `State.scale = State.scale * 2` in a helper
    # it calls are refused under STRICT ("When handling script '__input_key_0__ +
    # __input_key_1__' ... the inputs should be constant"); `Net.mode = 3` never read again
    # and reading `Net.SCALE` compile; LAX compiles all
    # (the call of `bump` repeats the helper's error, as MindSpore names the call)
    assert _errors(CLASS_ATTRIBUTES, STRICT) == {(7, "MS132"), (16, "MS132"), (18, "MS132")}
    assert _errors(CLASS_ATTRIBUTES, LAX) == set()


DEFAULTDICTS = """
from collections import defaultdict


class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.name = "loss"

    def construct(self, x):
        d = defaultdict(list)
        for k in ("a", "b", "a"):
            d[k].append(x)
        g = defaultdict(list)
        for k in ("a", "b", "a"):
            if k in g:
                g[k].append(x)
            else:
                g[k] = [x]
        s = defaultdict(float)
        s[self.name] += x.sum()
        return d["a"][0] + g["b"][0] + s[self.name]


print(Net()(Tensor(np.ones(3, np.float32))))
"""


def test_defaultdict_read_with_a_variable_key_before_any_store() -> None:
    # measured at both levels: `d[k].append(x)` over a constant tuple and `s[self.name] += v`
    # fail ("The key a does not exist in the dict:{}"); guarded by `if k in g:` it compiles
    expected = {(13, "MS168"), (21, "MS168")}
    assert _errors(DEFAULTDICTS, LAX) == expected
    assert _errors(DEFAULTDICTS, STRICT) >= expected


SCALAR_RANGE = """
class Net(nn.Cell):
    def construct(self, scores, boxes):
        n = int((scores > 0.5).sum())
        kept = []
        for i in range(n):
            kept.append(boxes[i])
        seen = []
        for i in range(n):
            seen.append(i)
        acc = boxes[0] * 0
        for i in range(n):
            acc = acc + boxes[i]
        some = [boxes[0]]
        for i in range(n):
            some.append(boxes[i])
        return ops.stack(kept), len(seen), acc, ops.stack(some)


print(Net()(Tensor(np.ones(4, np.float32)), Tensor(np.ones((4, 2), np.float32))))
"""


def test_list_grown_only_in_a_range_of_a_run_time_scalar_then_stacked() -> None:
    # measured at both levels: `range(int(t))` is unrolled while compiling with no
    # iterations, so stacking a list that started empty fails ("For 'Stack', the 'len of
    # input_x' must be int and must >= 1, but got '0'"); `len(seen)` and the accumulated
    # tensor compile; a list that did not start empty is not judged
    assert _errors(SCALAR_RANGE, LAX) == {(17, "MS152")}
    assert (17, "MS152") in _errors(SCALAR_RANGE, STRICT)


DICT_STATEMENTS = """
class Net(nn.Cell):
    def construct(self, x):
        out = {"a": x, "b": x + 1}
        out.setdefault("c", x * 2)
        feats = {"stem": x * 2, "aux": x.sum()}
        feats.pop("aux")
        cfg = {"scale": 2.0}
        cfg.setdefault("shift", 1.0)
        more = {"a": x}
        more.update({"b": x * 2})
        return out["a"] + feats["stem"] + more["b"] * cfg["scale"]


print(Net()(Tensor(np.ones(3, np.float32))))
"""


def test_setdefault_and_pop_statements_on_a_dict_of_tensors() -> None:
    # measured under LAX: `out.setdefault("c", x * 2)` and `feats.pop("aux")` as statements on
    # a dict of tensors the function builds fail ("For 'TupleGetItem', input[0] should be
    # Sequence, but got Dictionary", "Cannot iterate over a scalar tensor"); `update` compiles;
    # a dict of constants is not judged here. STRICT refuses both methods on any dict.
    assert _errors(DICT_STATEMENTS, LAX) == {(5, "MS144"), (7, "MS144")}
    assert {(5, "MS144"), (7, "MS144"), (9, "MS144")} <= _errors(DICT_STATEMENTS, STRICT)


DIR_NAMES = """
class Cfg:
    alpha = 0.5
    drop_rate = 0.1


class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.cfg = Cfg()

    def construct(self, x):
        s = 0.0
        for n in dir(self.cfg):
            if n.endswith("rate"):
                s += getattr(self.cfg, n)
            if n.lower() == "alpha":
                s += 1.0
        names = [m for m in dir(Cfg) if not m.startswith("_")]
        return x * s * len(names)


print(Net()(Tensor(np.ones(3, np.float32))))
"""


def test_str_methods_of_names_from_dir() -> None:
    # measured under STRICT: `n.endswith(...)` in `for n in dir(self.cfg)` and
    # `m.startswith(...)` in a comprehension over `dir(Cfg)` are refused ("cannot get
    # attributes endswith or the String object"); `n.lower()` compiles; LAX compiles all
    assert _errors(DIR_NAMES, STRICT) == {(15, "MS144"), (19, "MS144")}
    assert _errors(DIR_NAMES, LAX) == set()
