"""Per-instance compile-time values and folded branches (rules/graphmode/values.py), through
the engine: what MindSpore never infers must not be reported, and nothing else may vanish."""

from __future__ import annotations

import textwrap
from dataclasses import replace

from npu_lsp.config import Config
from npu_lsp.engine import check_source

STRICT = replace(Config(), syntax_level="strict")
HEAD = """\
import numpy as np
import mindspore as ms
from mindspore import nn, ops, Tensor

ms.set_context(mode=ms.GRAPH_MODE)

"""


def _errors(body: str, config: Config = STRICT) -> list[tuple[int, str]]:
    text = HEAD + textwrap.dedent(body)
    diags = check_source(text, "/tmp/values_case.py", config)
    return sorted((d.span.line - HEAD.count("\n"), d.code) for d in diags if d.severity == "error")


NET = """
class Net(nn.Cell):
    def __init__(self, use_host={default}):
        super().__init__()
        self.use_host = use_host
        self.mode = "train" if use_host else "eval"

    def construct(self, x):
        if {cond}:
            x = Tensor(np.square(x.asnumpy()))
        return x


net = Net({args})
print(net(Tensor(np.ones((2, 3), np.float32))))
"""


def test_branch_folded_by_the_constructor_default_is_not_inferred() -> None:
    assert _errors(NET.format(default="False", cond="self.use_host", args="")) == []
    assert _errors(NET.format(default="False", cond="self.mode == 'train'", args="")) == []
    assert _errors(NET.format(default="True", cond="not self.use_host", args="")) == []


def test_the_argument_where_the_network_is_built_wins_over_the_default() -> None:
    live = _errors(NET.format(default="False", cond="self.use_host", args="use_host=True"))
    assert {code for _, code in live} == {"MS130", "MS131"}
    assert _errors(NET.format(default="True", cond="self.use_host", args="False")) == []


def test_unknown_values_keep_both_branches() -> None:
    two_sites = NET.format(default="False", cond="self.use_host", args="") + "other = Net(True)\n"
    assert {code for _, code in _errors(two_sites)} == {"MS130", "MS131"}
    subclassed = NET.format(default="False", cond="self.use_host", args="") + (
        "\n\nclass Sub(Net):\n    def __init__(self):\n        super().__init__()\n        self.use_host = True\n"
    )
    assert {code for _, code in _errors(subclassed)} == {"MS130", "MS131"}


def test_conditional_expression_and_local_constant_fold() -> None:
    body = """
    @ms.jit(fullgraph=True)
    def f(x):
        n = 2
        x = x.asnumpy() if False else x
        if n > 3:
            x = Tensor(np.square(x.asnumpy()))
        return x
    """
    assert _errors(body) == []


def test_parse_time_errors_stay_in_folded_branches() -> None:
    body = NET.format(default="False", cond="self.use_host", args="").replace(
        "            x = Tensor(np.square(x.asnumpy()))",
        "            try:\n                x = x + 1\n            except ValueError:\n                pass",
    )
    assert [code for _, code in _errors(body, Config())] == ["MS101"]


def test_helper_called_only_from_a_folded_branch_is_not_inferred() -> None:
    body = """
    class Gate(nn.Cell):
        def __init__(self, use_host=False):
            super().__init__()
            self.use_host = use_host

        def host(self, t):
            return Tensor(np.square(t.asnumpy()))

        def construct(self, t):
            if self.use_host:
                t = self.host(t)
            return t


    net = Gate()
    print(net(Tensor(np.ones((2, 3), np.float32))))
    """
    assert _errors(body) == []
    assert {code for _, code in _errors(body.replace("net = Gate()", "net = Gate(True)"))} == {"MS130", "MS131"}


def test_helper_whose_result_is_never_read_is_not_inferred() -> None:
    body = """
    def pick(t, scale):
        if t.sum() > 0:
            return t * scale
        return (t, t)


    class Net(nn.Cell):
        def construct(self, x):
            y = pick(x, 2)
            return x + 1


    print(Net()(Tensor(np.ones((2, 3), np.float32))))
    """
    assert _errors(body, Config()) == []
    used = body.replace("return x + 1", "return x + 1, y")
    assert [code for _, code in _errors(used, Config())] == ["MS119", "MS119"]


def test_base_method_every_built_instance_overrides_is_not_compiled() -> None:
    body = """
    class Base(nn.Cell):
        def act(self, t):
            return Tensor(np.square(t.asnumpy()))

        def construct(self, t):
            return self.act(t) + 1


    class Child(Base):
        def act(self, t):
            return ops.tanh(t)


    net = Child()
    print(net(Tensor(np.ones((2, 3), np.float32))))
    """
    assert _errors(body) == []
    both = body.replace("net = Child()", "net = Child()\n    base = Base()")
    assert {code for _, code in _errors(both)} == {"MS130", "MS131"}


def test_values_through_jit_fallback_at_lax_join_with_anything() -> None:
    body = """
    class Net(nn.Cell):
        def construct(self, x):
            feats = {'a': x}
            x = feats.setdefault('a', x)
            y = 1.0
            if x.mean() > 0:
                y = x.max()
            return x + 0 * y


    print(Net()(Tensor(np.ones((2, 3), np.float32))))
    """
    assert _errors(body, Config()) == []
    direct = body.replace("            x = feats.setdefault('a', x)\n", "")
    assert [code for _, code in _errors(direct, Config())] == ["MS119"]


DATACLASS_NET = """
from dataclasses import dataclass


@dataclass
class Cfg:
    dim: int = 3
    use_host: bool = {default}


class Net(nn.Cell):
    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        self.use_host = cfg.use_host

    def construct(self, x):
        if self.use_host:
            x = Tensor(np.square(x.asnumpy()))
        return x
{extra}

net = Net({build})
print(net(Tensor(np.ones((2, 3), np.float32))))
"""


def test_dataclass_field_default_and_argument_fold() -> None:
    """A bare `@dataclass` built where the network is built: its field is the argument the
    construction gives, else the field's default (MindSpore reads it while compiling)."""
    line = 19  # `x = Tensor(np.square(x.asnumpy()))`
    assert _errors(DATACLASS_NET.format(default="False", extra="", build="Cfg()")) == []
    assert _errors(DATACLASS_NET.format(default="True", extra="", build="Cfg(use_host=False)")) == []
    assert _errors(DATACLASS_NET.format(default="True", extra="", build="Cfg(3, False)")) == []
    assert (line, "MS131") in _errors(DATACLASS_NET.format(default="False", extra="", build="Cfg(use_host=True)"))
    # stored into elsewhere: not known
    stored = "\n\ndef flip(c):\n    c.use_host = True\n"
    assert (line, "MS131") in _errors(DATACLASS_NET.format(default="False", extra=stored, build="Cfg()"))


SETATTR_ROPE = """
class Config:
    def __init__(self):
        self.dim = 8
        self.rope_type = "{rope}"


class Rotary(nn.Cell):
    def __init__(self, config):
        super().__init__()
        for name in {names}:
            setattr(self, name, getattr(config, name))
        self.inv_freq = Tensor(np.ones((4,), np.float32))
        self.original_inv_freq = self.inv_freq

    def _update(self):
        self.inv_freq = self.original_inv_freq * 1.0

    def construct(self, x):
        if "dynamic" in self.rope_type:
            self._update()
        return self.inv_freq.sum() + x.sum()


net = Rotary(Config())
print(net(Tensor(np.ones((2, 3), np.float32))))
"""


def test_setattr_over_constant_names_sets_what_the_loop_names() -> None:
    # `setattr(self, k, getattr(config, k))` over a tuple of names runs in Python: `rope_type`
    # is the config's, so the update method is compiled when it is "dynamic" (written/zoo
    # probes `lead30_rope_setattr_config_tuple_init`, `fix31a_setattr_name_list_rope_*`)
    names = '("dim", "rope_type")'
    assert {code for _, code in _errors(SETATTR_ROPE.format(rope="dynamic", names=names))} == {"MS132"}
    assert _errors(SETATTR_ROPE.format(rope="default", names=names)) == []


def test_setattr_of_unknown_names_keeps_the_attribute_unknown() -> None:
    # names from a parameter: any attribute may be set, `rope_type` is not known, and the
    # method called under the test on it may never be compiled
    text = SETATTR_ROPE.format(rope="dynamic", names="names").replace("(self, config)", "(self, config, names)")
    text = text.replace("Rotary(Config())", 'Rotary(Config(), ["dim", "rope_type"])')
    assert _errors(text) == []


BOTH_SIDES = """
class VAE(nn.Cell):
    def __init__(self):
        super().__init__()
        self.use_slicing = False
        self.conv = nn.Dense(4, 4)
        self._counts = {{"encoder": 2}}
        self.clear_cache()

    def enable_slicing(self):
        self.use_slicing = True

    def clear_cache(self):
        self._conv_num = self._counts["encoder"]

    def _encode(self, x):
        self.clear_cache()
        return self.conv(x)

    def construct(self, x):
        if self.use_slicing and x.shape[0] > 1:
            h = {body}
        else:
            h = {orelse}
        return h


net = VAE()
print(net(Tensor(np.ones((2, 4), np.float32))))
"""


def test_helper_called_on_both_sides_of_an_unknown_test_is_compiled() -> None:
    # `use_slicing` is unknown (a method sets it too): a helper called under one side only may
    # never be compiled, one called on both sides is (written/zoo probes `fix31a_both_sides_*`,
    # `fix31a_one_side_slicing_off`; mindone's wan VAE)
    both = BOTH_SIDES.format(body="ops.cat([self._encode(s) for s in ops.split(x, 1)])", orelse="self._encode(x)")
    assert {code for _, code in _errors(both)} == {"MS132"}
    one = BOTH_SIDES.format(body="self._encode(x)", orelse="self.conv(x) * 2")
    assert _errors(one) == []
