"""STRICT findings on ordinary Python in compiled code, each measured on MindSpore 2.10 (the
`python` written set's probes): str methods on a str held on `self` or returned by a str
method, `%` formatting with graph variables, and `@dataclass` instances built from them."""

from __future__ import annotations

from npu_lsp.config import Config
from npu_lsp.engine import check_source

STRICT = Config(syntax_level="strict")
LAX = Config()

HEADER = """import numpy as np
from dataclasses import dataclass
import mindspore as ms
from mindspore import nn, ops, Tensor

ms.set_context(mode=ms.GRAPH_MODE)
"""


def _errors(body: str, config: Config) -> set[tuple[int, str]]:
    text = HEADER + body
    diags = check_source(text, "case.py", config)
    offset = HEADER.count("\n")
    return {(d.span.line - offset, d.code) for d in diags if d.severity == "error"}


STR_ON_SELF = """
class Net(nn.Cell):
    def __init__(self, mode=" Bilinear "):
        super().__init__()
        self.mode = mode

    def construct(self, x):
        m = self.mode.lower()
        if self.mode.strip() == "Bilinear":
            x = x * 2
        if m.startswith(" bi"):
            x = x * 3
        if self.mode.upper() == " BILINEAR " and m == " bilinear ":
            x = x + 1
        return x


print(Net()(Tensor(np.ones(3, np.float32))))
"""


def test_str_methods_on_a_self_str_and_on_a_str_methods_result() -> None:
    # measured: `self.mode.strip()` and `m.startswith(...)` with `m = self.mode.lower()` are
    # refused under STRICT ("cannot get attributes strip"); `upper`/`lower` compile
    assert _errors(STR_ON_SELF, STRICT) == {(9, "MS144"), (11, "MS144")}
    assert _errors(STR_ON_SELF, LAX) == set()


PERCENT = """
@ms.jit
def f(x, step=3):
    loss = x.sum()
    print("loss %.4f" % loss)
    msg = "step %d of %s" % (step, "train")
    tag = "batch=%d" % (x.shape[0],)
    n = "count=%d" % int(x.sum())
    return loss, msg, tag, n


print(f(Tensor(np.ones((2, 3), np.float32))))
"""


def test_percent_formatting_with_graph_variables() -> None:
    # measured: a tensor, `int(t)` and even `x.shape[0]` on the right of `%` are refused under
    # STRICT ("When handling script '"loss %.4f" % loss' ... found variable 'loss'"); a
    # parameter with a constant default and literals compile; LAX compiles all of them
    assert _errors(PERCENT, STRICT) == {(5, "MS131"), (7, "MS131"), (8, "MS131")}
    assert _errors(PERCENT, LAX) == set()


DATACLASS = """
@dataclass
class Out:
    a: Tensor
    b: float


class Net(nn.Cell):
    def construct(self, x):
        o = Out(a=x * 2, b=1.0)
        c = Out(2.0, 1.0)
        return o.a * c.a


print(Net()(Tensor(np.ones(3, np.float32))))
"""


def test_dataclass_built_from_graph_variables() -> None:
    # measured: a module-level @dataclass called with tensors in construct is refused under
    # STRICT ("When handling script '__call_func_str__(a=...,b=...)' ... should be
    # constant"); with constants, and under LAX, it compiles
    assert _errors(DATACLASS, STRICT) == {(10, "MS131")}
    assert _errors(DATACLASS, LAX) == set()


PLAIN_CLASS = """
class Pair:
    def __init__(self, a, b):
        self.a = a
        self.b = b


class Net(nn.Cell):
    def construct(self, x):
        p = Pair(x * 2, x)
        q = Pair(1.0, 2.0)
        return p.a + p.b * q.a


print(Net()(Tensor(np.ones(3, np.float32))))
"""


def test_plain_class_built_from_graph_variables() -> None:
    # measured: a plain class (no base, not a jit_class) called with tensors in construct is
    # refused under STRICT ("When handling script '__call_func_str__(...)'"); LAX compiles it
    assert _errors(PLAIN_CLASS, STRICT) == {(10, "MS131")}
    assert _errors(PLAIN_CLASS, LAX) == set()


SELF_ITEM_UNDER_SHAPE = """
class Net(nn.Cell):
    def __init__(self, use_cache=False):
        super().__init__()
        self.cache = {}
        self.last = 0
        self.use_cache = use_cache

    def construct(self, x):
        n = x.shape[0]
        if n > 100:
            self.cache[n] = x * 2
            self.last = n
        if self.use_cache:
            self.cache["k"] = x
        return x + 1


print(Net()(Tensor(np.ones(3, np.float32))))
"""


def test_self_assignment_under_a_shape_condition_is_refused_before_shapes_fold() -> None:
    # measured: under `if n > 100:` (n = x.shape[0] = 3) both assignments are refused under
    # STRICT; under `if self.use_cache:` (False), folded by the parser, they compile
    assert _errors(SELF_ITEM_UNDER_SHAPE, STRICT) == {(12, "MS132"), (13, "MS132")}
    assert _errors(SELF_ITEM_UNDER_SHAPE, LAX) == set()


SORTED_DICT = """
class Net(nn.Cell):
    def construct(self, x):
        d = {"b": x * 2, "a": x}
        c = {"b": 2.0, "a": 1.0}
        ks = sorted(d.keys())
        kd = sorted(d)
        kc = sorted(c.keys())
        kl = list(d.keys())
        return tuple(d[k] for k in ks), kd, kc, kl


print(Net()(Tensor(np.ones(3, np.float32))))
"""


def test_interpreted_builtin_given_a_dict_of_graph_variables() -> None:
    # measured: `sorted(d.keys())` and `sorted(d)` of a dict holding tensors are refused under
    # STRICT ("When handling script 'sorted(d.keys())' ... found variable 'd'"); of a dict of
    # constants, and `list(d.keys())`, they compile
    assert _errors(SORTED_DICT, STRICT) == {(6, "MS131"), (7, "MS131")}
    assert _errors(SORTED_DICT, LAX) == set()


SIDE_EFFECTS = """import json
import json as js
import os
from json import loads


class Net(nn.Cell):
    def __init__(self, raw='{"scale": 0.5}', root="data"):
        super().__init__()
        self.raw = raw
        self.root = root
        self.cfg = {"scale": 2.0}

    def construct(self, x):
        cfg = json.loads(self.raw)
        n = len(js.dumps(self.cfg))
        same = loads(self.raw)
        p = os.path.join(self.root, "a")
        files = os.listdir(self.root)
        return x * cfg["scale"] * same["scale"]
"""


def test_side_effect_calls_of_third_party_modules_under_strict() -> None:
    # measured: `json.loads` / `json.dumps` (also through `import json as js`) and
    # `os.listdir` of constants are refused under STRICT ("found variable '__call_func_str__'
    # to be nonconstant"): MindSpore's parser never folds the calls its side-effect table
    # names; `from json import loads` (a bare name) and `os.path.join` compile
    assert _errors(SIDE_EFFECTS, STRICT) == {(15, "MS131"), (16, "MS131"), (19, "MS131")}
    assert _errors(SIDE_EFFECTS, LAX) == set()
    text = HEADER + SIDE_EFFECTS
    said = [d.message for d in check_source(text, "case.py", STRICT) if d.code == "MS131"]
    assert (
        "`js.dumps` (`json.dumps`) has side effects, so MindSpore does not run it while compiling"
        in said[1]
    )
    assert said[0].startswith("`json.loads` has side effects")


def _mean_iou(after: str) -> str:
    return f"""
class MeanIoU(nn.Cell):
    def construct(self, pred, label):
        ious = []
        for c in range(3):
            inter = ((pred == c) & (label == c)).sum()
            union = ((pred == c) | (label == c)).sum()
            if float(union) > 0:
                ious.append(float(inter) / float(union))
        return {after}
"""


def test_list_joined_under_a_tensor_if_then_summed_fails_at_strict_too() -> None:
    # measured on the mean-IoU loop: `sum(ious)`, `max(ious)`, `ops.stack(ious)` after the
    # loop are refused at both levels; `len(ious)` and `return ious` only at LAX
    for after in ("sum(ious) / len(ious)", "max(ious)", "ops.stack(ious).mean()"):
        assert _errors(_mean_iou(after), STRICT) == {(8, "MS155")}, after
        assert _errors(_mean_iou(after), LAX) == {(8, "MS155")}, after
    for after in ("pred.sum() * 0 + len(ious)", "ious"):
        assert _errors(_mean_iou(after), STRICT) == set(), after
        assert _errors(_mean_iou(after), LAX) == {(8, "MS155")}, after
    said = [d.message for d in check_source(HEADER + _mean_iou("max(ious)"), "case.py", STRICT)]
    assert said == [
        "`ious` is appended to only when this tensor condition holds, inside the unrolled loop on "
        "line 11, so its length is only known at run time and `max(ious)` after the loop fails to "
        'compile ("When the input to max() is dynamic length sequence, only support scalar type")'
    ]


def _per_class(tail: str, after: str) -> str:
    return f"""
class PerClass(nn.Cell):
    def construct(self, pred, label):
        vals = []
        for c in range(3):
            n = (label == c).sum()
            if n == 0:
                vals.append(ops.zeros((), ms.float32)){tail}
            {after}
        return {"sum(vals)"}
"""


def test_list_appended_under_a_tensor_if_ending_in_continue_compiles() -> None:
    # measured: an append under a tensor `if` that ends in `continue` compiles at both levels,
    # with or without an append after the `if`; without the `continue` it does not
    for after in ("vals.append(n.astype(ms.float32))", "n = n * 2"):
        text = _per_class("\n                continue", after)
        assert _errors(text, STRICT) == set(), after
        assert _errors(text, LAX) == set(), after
    assert _errors(_per_class("", "vals.append(n.astype(ms.float32))"), LAX) == {(7, "MS155")}

def _heads(body: str) -> str:
    return f"""
class MultiHead(nn.Cell):
    def __init__(self):
        super().__init__()
        self.heads = nn.CellDict({{"cls": nn.Dense(8, 3), "box": nn.Dense(8, 4)}})
        self.scales = {{"a": 1.0, "b": 2.0}}

    def construct(self, x):
        {body}
"""


def test_interpreted_builtin_given_a_dict_comprehension_of_graph_variables() -> None:
    # measured at both levels: `sorted(outs.keys())` / `sorted(outs)` of a dict comprehension
    # holding tensors fail ("'tuple' object has no attribute 'keys'"); constant values,
    # `list(outs.keys())` and indexing the comprehension's dict compile
    bad = (
        "outs = {n: h(x) for n, h in self.heads.items()}\n        return tuple(outs[k] for k in sorted(outs.keys()))",
        "outs = {n: x * s for n, s in self.scales.items()}\n        return tuple(outs[k] for k in sorted(outs))",
    )
    good = (
        "outs = {n: s * 2 for n, s in self.scales.items()}\n        return tuple(x * outs[k] for k in sorted(outs.keys()))",
        "outs = {n: x * 2 for n in ['b', 'a']}\n        return tuple(outs[k] for k in list(outs.keys()))",
        "outs = {n: h(x) for n, h in self.heads.items()}\n        return outs['cls']",
    )
    for body in bad:
        for config in (LAX, STRICT):
            assert _errors(_heads(body), config) == {(10, "MS144")}, body
    for body in good:
        for config in (LAX, STRICT):
            assert _errors(_heads(body), config) == set(), body
    said = [d.message for d in check_source(HEADER + _heads(bad[0]), "case.py", LAX)]
    assert said == [
        "`sorted()` is run as a Python script in graph mode, and the dict `outs`, holding graph variables, "
        "reaches it as a tuple of its values (MindSpore: 'tuple' object has no attribute 'keys'); iterate "
        "`list(outs.keys())` in the graph, or rank the values with `ops.stack` and `ops.argsort`"
    ]


def _tensor_of(data: str) -> str:
    return f"""
class Pack(nn.Cell):
    def construct(self, x):
        n = x.shape[0]
        keep = []
        for i in range(3):
            keep.append(x[i].item())
        return x * Tensor({data}, ms.float32)
"""


def test_tensor_built_from_graph_variables_fails_at_strict() -> None:
    # measured: `Tensor(...)` of `.item()`s, of tensors or of a list appended with `.item()`s
    # is refused under STRICT ("When handling script 'Tensor(input_data, ...) in graph mode',
    # the inputs should be constant"); constants and `x.shape[0]` compile, LAX runs them all
    for data in ("x.max().item()", "[x.sum(), x.mean()]", "keep", "x"):
        assert _errors(_tensor_of(data), STRICT) == {(8, "MS131")}, data
        assert _errors(_tensor_of(data), LAX) == set(), data
    for data in ("[0.5, 1.0, 2.0]", "n", "x.shape[0]"):
        assert _errors(_tensor_of(data), STRICT) == set(), data
    said = [d.message for d in check_source(HEADER + _tensor_of("keep"), "case.py", STRICT)]
    assert said == [
        "`Tensor(...)` is built only from constants in compiled code; under STRICT its data cannot hold the "
        "graph variable `keep` (use `ops.stack`, `ops.scalar_to_tensor` or `.astype`)"
    ]


def _count(expr: str) -> str:
    return f"""
class Count(nn.Cell):
    def construct(self, x, idx):
        keep = x > 0
        pos = x[keep]
        nz = (x > 0).nonzero().squeeze(-1)
        return x * {expr}
"""


def test_min_max_of_a_run_time_shape_fails_at_strict() -> None:
    # measured: the size of a `.nonzero()` / `masked_select` / boolean-mask result is a run-time
    # scalar, so `min` / `max` of it go to the interpreter, which STRICT refuses; the size of
    # an input, a column of it or a fancy-indexed gather is a constant and compiles
    for expr in ("min(nz.numel(), 2)", "min(nz.shape[0], 2)", "max(len(pos), 1)", "min(x[x > 0].shape[0], 3)",
                 "min(ops.masked_select(x, keep).shape[0], 2)"):
        assert _errors(_count(expr), STRICT) == {(7, "MS131")}, expr
        assert _errors(_count(expr), LAX) == set(), expr
    for expr in ("min(x.numel(), 2)", "max(len(x), 1)", "min(x[:, 0].shape[0], 2)", "max(x[idx].shape[0], 1)"):
        assert _errors(_count(expr), STRICT) == set(), expr


def _per_image(read: str) -> str:
    return f"""
class PerImage(nn.Cell):
    def construct(self, x):
        results = []
        for i in range(2):
            results.append({{"scores": x[i].max(), "mean": x[i].mean()}})
        return results


res = PerImage()(Tensor(np.ones((2, 3), np.float32)))
print({read})
"""


def test_list_of_dicts_returned_then_read_by_key_fails_at_strict() -> None:
    # measured: STRICT hands each appended dict back as a tuple ("tuple indices must be
    # integers or slices, not str"); `len(res)`, `res[0]` and LAX compile
    assert _errors(_per_image('res[1]["scores"]'), STRICT) == {(11, "MS148")}
    assert _errors(_per_image('res[1]["scores"]'), LAX) == set()
    assert _errors(_per_image("len(res), res[0]"), STRICT) == set()
    said = [d.message for d in check_source(HEADER + _per_image('res[1]["scores"]'), "case.py", STRICT)]
    assert said == [
        "`construct` returns a list of dicts, each of which STRICT graph mode hands back as a tuple of its "
        'values; `res[1]["scores"]` fails on it'
    ]
