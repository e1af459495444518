"""Graph-scope resolution: what MindSpore compiles, at which level, through imports,
aliases, helpers and other files of the workspace."""

from __future__ import annotations

import ast
import textwrap
import warnings
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from npu_lsp.config import Config
from npu_lsp.engine import WorkspaceIndex, check_source
from npu_lsp.scope import ScopeResolver


def scopes(src: str, level: str | None = None) -> dict[str, str]:
    """qualname -> level of every compiled function defined in `src`."""
    tree = ast.parse(textwrap.dedent(src))
    r = ScopeResolver(tree, "m.py", level)  # type: ignore[arg-type]
    out = {}
    for node in ast.walk(tree):
        s = r.scope_for(node)
        if s is not None:
            out[s.qualname] = s.level
    return out


def codes(src: str, **cfg: object) -> list[tuple[int, str]]:
    return [
        (d.span.line, d.code) for d in check_source(textwrap.dedent(src), "m.py", Config(**cfg))
    ]  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "header, base",
    [
        ("import mindspore as ms", "ms.nn.Cell"),
        ("from mindspore import nn", "nn.Cell"),
        ("from mindspore.nn import Cell as C", "C"),
        ("import mindspore.nn as mnn", "mnn.Cell"),
        ("import mindspore", "mindspore.nn.Cell"),
        ("import mindspore as ms\nnn = ms.nn", "nn.Cell"),
        ("from mindspore import nn", "nn.SequentialCell"),
    ],
)
def test_cell_bases_resolve_through_imports_and_aliases(header: str, base: str) -> None:
    src = f"{header}\n\nclass Net({base}):\n    def construct(self, x):\n        return x\n"
    assert scopes(src) == {"m.Net.construct": "lax"}


def test_lookalike_bases_are_not_cells() -> None:
    src = """
    import torch.nn as nn

    class Net(nn.Module):
        def construct(self, x):
            try:
                return x
            except ValueError:
                return x
    """
    assert scopes(src) == {}
    assert codes(src) == []


def test_subclass_of_subclass_and_transitive_helpers() -> None:
    src = """
    from mindspore import nn

    def module_helper(x):
        del x
        return 1

    class Base(nn.Cell):
        def step(self, x):
            return module_helper(x)

    class Net(Base):
        def construct(self, x):
            return self.middle(x)

        def middle(self, x):
            return self.step(x)

        def never_called(self, x):
            del x

        def __init__(self):
            super().__init__()
            del self.missing
    """
    assert scopes(src) == {
        "m.Net.construct": "lax",
        "m.Net.middle": "lax",
        "m.Base.step": "lax",
        "m.module_helper": "lax",
    }
    diags = check_source(textwrap.dedent(src), "m.py", Config())
    assert [(d.span.line, d.code) for d in diags] == [(5, "MS102"), (14, "MS102")]
    # the helper's diagnostic names the call site that compiles it ...
    (related,) = diags[0].related
    assert related.span.line == 10 and "Base.step" in related.message
    # ... and, as MindSpore does, the call in `construct` that reaches it reports it too
    echo = diags[1]
    assert echo.severity == "error" and "module_helper" in echo.message
    assert echo.related[0].span.line == 5


@pytest.mark.parametrize(
    "decorator, expected",
    [
        ("@ms.jit", {"m.f": "lax"}),
        ("@jit", {"m.f": "lax"}),
        ("@ms.jit(fullgraph=True)", {"m.f": "strict"}),
        ("@ms.jit(fullgraph=False)", {"m.f": "lax"}),
        ('@ms.jit(capture_mode="bytecode")', {}),
        ("@ms_function", {"m.f": "lax"}),
        ("@staticmethod", {}),
    ],
)
def test_jit_decorators(decorator: str, expected: dict[str, str]) -> None:
    src = f"import mindspore as ms\nfrom mindspore import jit, ms_function\n\n{decorator}\ndef f(x):\n    return x\n"
    assert scopes(src) == expected


def test_functions_wrapped_by_jit_call_and_jit_class_methods() -> None:
    src = """
    import mindspore as ms

    def f(x):
        return x

    def g(x):
        return x

    fast = ms.jit(f)
    strict = ms.jit(g, fullgraph=True)

    @ms.jit_class
    class Scaler:
        def __init__(self, k):
            self.k = k

        def apply(self, x):
            return x * self.k
    """
    assert scopes(src) == {"m.f": "lax", "m.g": "strict", "m.Scaler.apply": "lax"}


def test_syntax_level_precedence() -> None:
    src = """
    import mindspore as ms
    from mindspore import nn

    ms.set_context(jit_syntax_level=ms.STRICT)

    class Net(nn.Cell):
        def construct(self, x):
            return self.helper(x)

        def helper(self, x):
            return x

    class Configured(nn.Cell):
        def construct(self, x):
            return x

    @ms.jit
    def plain(x):
        return x

    c = Configured()
    c.set_jit_config(ms.JitConfig(jit_syntax_level=ms.LAX))
    """
    # set_context reaches Cells (and their helpers) but not plain @jit functions;
    # a per-cell JitConfig beats the context.
    assert scopes(src) == {
        "m.Net.construct": "strict",
        "m.Net.helper": "strict",
        "m.Configured.construct": "lax",
        "m.plain": "lax",
    }
    # the configured level (as MS_DEV_JIT_SYNTAX_LEVEL) beats everything
    assert set(scopes(src, "lax").values()) == {"lax"}
    assert set(scopes(src, "strict").values()) == {"strict"}


def test_environment_variable_set_in_the_file_is_highest() -> None:
    src = """
    import os
    import mindspore as ms
    os.environ["MS_DEV_JIT_SYNTAX_LEVEL"] = "0"

    @ms.jit(fullgraph=False)
    def f(x):
        return x
    """
    assert scopes(src) == {"m.f": "strict"}


def test_pynative_file_compiles_only_jit_functions() -> None:
    src = """
    import mindspore as ms
    from mindspore import nn
    ms.set_context(mode=ms.PYNATIVE_MODE)

    class Net(nn.Cell):
        def construct(self, x):
            return x

    @ms.jit
    def f(x):
        return x
    """
    assert scopes(src) == {"m.f": "lax"}


_TRAIN_STEP = """
import mindspore as ms
from mindspore import nn, ops
ms.set_context(mode=ms.PYNATIVE_MODE)

class Net(nn.Cell):
    def construct(self, x):
        return x

class Other(nn.Cell):
    def construct(self, x):
        return x

net = Net()
other = Other()
loss_fn = nn.MSELoss()

def forward(x, y):
    return loss_fn(net(x), y)

grad_fn = ms.value_and_grad(forward, None, net.trainable_params())

def eager(x):
    return other(x)

@ms.jit
def train_step(x, y):
    return grad_fn(x, y)

@ms.jit
def takes(other, x):
    return other(x)
"""


def test_pynative_jit_step_compiles_the_cells_its_grad_function_calls() -> None:
    # `other` is called only in Python and, inside `takes`, through a parameter of that name
    assert scopes(_TRAIN_STEP) == {
        "m.train_step": "lax",
        "m.takes": "lax",
        "m.forward": "lax",
        "m.Net.construct": "lax",
    }


@pytest.mark.parametrize(
    "build, call",
    [
        ("", "ms.grad(forward)(x)"),
        ("", "ops.GradOperation()(forward)(x)"),
        ("wl = nn.WithLossCell(net, nn.MSELoss())\n", "ms.grad(wl)(x, x)"),
        ("g = ops.GradOperation()\n", "g(forward)(x)"),
    ],
)
def test_pynative_jit_grad_builders_reach_construct(build: str, call: str) -> None:
    src = (
        "import mindspore as ms\nfrom mindspore import nn, ops\n"
        "ms.set_context(mode=ms.PYNATIVE_MODE)\n"
        "class Net(nn.Cell):\n    def construct(self, x):\n        return x\n"
        "net = Net()\ndef forward(x):\n    return net(x)\n" + build
        + f"@ms.jit\ndef step(x):\n    return {call}\n"
    )
    assert "m.Net.construct" in scopes(src)


@pytest.mark.parametrize("wrap", ["ms.jit(net)", "ms.jit(net.construct)"])
def test_pynative_jit_of_an_instance_compiles_its_construct(wrap: str) -> None:
    src = (
        "import mindspore as ms\nfrom mindspore import nn\n"
        "ms.set_context(mode=ms.PYNATIVE_MODE)\n"
        "class Net(nn.Cell):\n    def construct(self, x):\n        return x\n"
        f"net = Net()\nfwd = {wrap}\n"
    )
    assert scopes(src) == {"m.Net.construct": "lax"}


_CELL_AND_JIT = """
import mindspore as ms
from mindspore import nn

class Net(nn.Cell):
    def construct(self, x):
        return x

@ms.jit
def f(x):
    return x
"""


@pytest.mark.parametrize(
    "before, after, compiled",
    [
        # the mode set last before the network is called is the one it runs in
        ("ms.set_context(mode=ms.GRAPH_MODE)\nms.set_context(mode=ms.PYNATIVE_MODE)", "", False),
        ("ms.set_context(mode=ms.PYNATIVE_MODE)\nms.set_context(mode=ms.GRAPH_MODE)", "", True),
        ("ms.set_context(mode=ms.GRAPH_MODE)", "ms.set_context(mode=ms.PYNATIVE_MODE)", True),
        ("ms.set_context(mode=ms.PYNATIVE_MODE)", "ms.set_context(mode=ms.GRAPH_MODE)", False),
        ("ms.set_context(mode=0)\nif True:\n    ms.set_context(mode=1)", "", False),
        ("", "ms.set_context(mode=ms.PYNATIVE_MODE)", False),  # no setting before the call
        # no setting at all: a script runs in MindSpore's default, PYNATIVE_MODE (probe
        # written/everyday fix36a_unset_cell_module); see the test below for a library
        ("", "", False),
        # a setting after the last network call applies to none (fix36a_graph_after_call)
        ("", "ms.set_context(mode=ms.GRAPH_MODE)", False),
        # ... but to a call after it (fix36a_graph_after_call_then_call)
        ("", "ms.set_context(mode=ms.GRAPH_MODE)\nprint(net(2))", True),
        # a mode read from a variable is unknown: checked as graph
        ("import os\nms.set_context(mode=int(os.environ['MODE']))", "", True),
        # eager op calls before the network call are not network calls
        (
            "from mindspore import ops\nms.set_context(mode=ms.PYNATIVE_MODE)\n"
            "y = ops.ReLU()(1)\nrelu = ops.ReLU()\ny = relu(1)\nz = f(1)\n"
            "ms.set_context(mode=ms.GRAPH_MODE)",
            "",
            True,
        ),
        # a test function that sets GRAPH_MODE compiles the network it calls
        (
            "ms.set_context(mode=ms.PYNATIVE_MODE)\n"
            "def test_graph():\n    ms.set_context(mode=ms.GRAPH_MODE)\n    Net()(1)",
            "",
            True,
        ),
    ],
)
def test_the_mode_set_last_before_the_network_call_decides(
    before: str, after: str, compiled: bool
) -> None:
    src = f"{_CELL_AND_JIT}\n{before}\nnet = Net()\nprint(net(1))\n{after}\n"
    expected = {"m.f": "lax"} | ({"m.Net.construct": "lax"} if compiled else {})
    assert scopes(src) == expected


def test_a_module_that_runs_nothing_itself_is_checked_as_graph_mode() -> None:
    # a model library (its importer chooses the mode), or one that only builds values
    assert "m.Net.construct" in scopes(_CELL_AND_JIT)
    assert "m.Net.construct" in scopes(f"{_CELL_AND_JIT}\ndef make():\n    return 1\nnet = Net()\nnet.set_train(False)\ncfg = make()\n")
    # a script: run under `__main__`, from `main()`, or a jit function called at module level
    for tail in ('if __name__ == "__main__":\n    Net()(1)', "def main():\n    Net()(1)\nmain()", "y = f(1)"):
        assert "m.Net.construct" not in scopes(f"{_CELL_AND_JIT}\n{tail}\n"), tail


def test_the_last_mode_counts_when_no_network_call_is_visible() -> None:
    src = f"{_CELL_AND_JIT}\nms.set_context(mode=ms.GRAPH_MODE)\nms.set_context(mode=ms.PYNATIVE_MODE)\n"
    assert scopes(src) == {"m.f": "lax"}
    # a loop calling the network at module level is a call too
    src = f"{_CELL_AND_JIT}\nms.set_context(mode=0)\nnet = Net()\nfor i in range(2):\n    net(i)\n"
    src += "ms.set_context(mode=1)\n"
    assert "m.Net.construct" in scopes(src)


def test_methods_called_through_their_class_name_are_followed() -> None:
    src = """
    from mindspore import nn

    class Tools:
        @staticmethod
        def twice(x):
            return x * 2

    class Base(nn.Cell):
        def step(self, x):
            return x

    class Net(Base):
        @staticmethod
        def safe(x):
            return x

        def construct(self, x):
            return Net.safe(x) + Tools.twice(x) + Base.step(self, x)
    """
    assert set(scopes(src)) == {
        "m.Net.construct",
        "m.Net.safe",
        "m.Tools.twice",
        "m.Base.step",
    }


def test_a_closure_bound_at_module_level_by_a_factory_is_followed() -> None:
    src = """
    import mindspore as ms
    from mindspore import nn

    def make():
        total = 0
        def add(v):
            nonlocal total
            total = total + 1
            return v + total
        return add

    def make_value():
        def unused(v):
            return v
        return 3

    adder = make()
    three = make_value()

    class Net(nn.Cell):
        def construct(self, x):
            return adder(x)

    @ms.jit
    def f(x):
        return adder(x) + three
    """
    assert set(scopes(src)) == {"m.Net.construct", "m.f", "m.make.<locals>.add"}
    # the `nonlocal`, and the call sites in compiled code (where MindSpore reports it)
    assert codes(src) == [(8, "MS104"), (23, "MS104"), (27, "MS104")]


def test_workspace_resolves_bases_and_helpers_across_files(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    base = tmp_path / "pkg" / "base.py"
    base.write_text("from mindspore import nn\n\n\nclass Block(nn.Cell):\n    pass\n")
    utils = tmp_path / "pkg" / "utils.py"
    utils.write_text("def helper(x):\n    del x\n    return 0\n\n\ndef unused(x):\n    del x\n")
    model = tmp_path / "pkg" / "model.py"
    model.write_text(
        "from pkg.base import Block\nfrom .utils import helper\n\n\n"
        "class Net(Block):\n    def construct(self, x):\n        try:\n            return helper(x)\n"
        "        except ValueError:\n            return x\n"
    )
    ws = WorkspaceIndex.from_paths([tmp_path], root=str(tmp_path))
    assert len(ws) == 4
    cfg = Config()
    got = [(d.span.line, d.code) for d in check_source(model.read_text(), str(model), cfg, ws)]
    assert got == [(7, "MS101")]
    diags = check_source(utils.read_text(), str(utils), cfg, ws)
    assert [(d.span.line, d.code) for d in diags] == [(2, "MS102")]
    assert diags[0].related[0].path == str(model.resolve())
    # without the workspace neither file knows the other
    assert check_source(model.read_text(), str(model), cfg) == []
    # incremental update: the helper stops being called
    ws.update(str(model), model.read_text().replace("return helper(x)", "return x"))
    assert check_source(utils.read_text(), str(utils), cfg, ws) == []
    ws.remove(str(model))
    assert len(ws) == 3


def test_unparsable_update_keeps_last_good_summary(tmp_path: Path) -> None:
    ws = WorkspaceIndex(tmp_path)
    p = str(tmp_path / "a.py")
    assert ws.update(p, "from mindspore import nn\nclass A(nn.Cell):\n    pass\n")
    version = ws.version
    assert ws.update(p, "from mindspore import nn\nclass A(nn.Cell):\n    pass\n")
    assert ws.version == version  # identical text: nothing to redo
    assert not ws.update(p, "class A(:\n")
    assert ws.module("a") is not None and "A" in ws.module("a").classes  # type: ignore[union-attr]


def test_transitive_helpers_across_three_files_and_resolution_cache(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text(
        "from mindspore import nn\nfrom b import mid\n\n\nclass Net(nn.Cell):\n"
        "    def construct(self, x):\n        return mid(x)\n"
    )
    (tmp_path / "b.py").write_text("from c import leaf\n\n\ndef mid(x):\n    return leaf(x)\n")
    (tmp_path / "c.py").write_text("def leaf(x):\n    s = {1, 2}\n    return x\n")
    ws = WorkspaceIndex.from_paths([tmp_path], root=str(tmp_path))
    first = ws.graph_scopes()
    assert ws.graph_scopes() is first  # one project-wide resolution per index version
    assert first["c.leaf"].level == "lax" and first["c.leaf"].kind == "helper"
    c = tmp_path / "c.py"
    (diag,) = check_source(c.read_text(), str(c), Config(), ws)
    assert (diag.code, diag.span.line) == ("MS109", 2)
    assert diag.related[0].path.endswith("b.py") and "b.mid" in diag.related[0].message
    ws.update(str(tmp_path / "b.py"), "def mid(x):\n    return x\n")
    assert ws.graph_scopes() is not first
    assert check_source(c.read_text(), str(c), Config(), ws) == []


def test_definitions_inside_test_functions_are_resolved() -> None:
    src = """
    import pytest
    from mindspore import jit, nn

    def test_try_in_construct():
        class Net(nn.Cell):
            def construct(self, x):
                try:
                    return x
                except ValueError:
                    return x

        @jit
        def f(x):
            del x

        def eager_helper(x):
            del x

        with pytest.raises(RuntimeError):
            Net()(1)
    """
    assert codes(src) == [(8, "MS101"), (15, "MS102")]


def test_closures_resolve_lexically() -> None:
    src = """
    from mindspore import nn

    class A(nn.Cell):
        def construct(self, x):
            def inner(v):
                return v
            return inner(x)

    class B(nn.Cell):
        def construct(self, x):
            def inner(v):
                del v
            return inner(x)
    """
    assert codes(src) == [(13, "MS102"), (14, "MS102")]


def test_arguments_seen_at_calls_from_test_functions() -> None:
    src = """
    import numpy as np
    from mindspore import Tensor, jit

    @jit
    def by_int(x, n):
        for i in range(n):
            x = x + i
        return x

    @jit
    def by_tensor(x, n):
        for i in range(n):
            x = x + i
        return x

    def test_loops():
        x = Tensor(np.ones(3))
        count = Tensor(3)
        by_int(x, 3)
        by_tensor(x, count)
    """
    assert codes(src) == [(13, "MS120")]


def test_construct_inherited_from_a_mixin_is_compiled() -> None:
    src = """
    from mindspore import nn

    class Mixin:
        def construct(self, x):
            del x

    class Net(Mixin, nn.Cell):
        pass

    class Unused(Mixin):
        pass
    """
    assert scopes(src) == {"m.Mixin.construct": "lax"}
    assert codes(src) == [(6, "MS102")]


# ------------------------------------------------------------- text-guided shortcuts
# With the file's text, scope resolution skips work the text shows is unneeded (statements
# off the lines naming a project function, function bodies with no `def`/`class` line,
# lines without a level keyword). Without the text it scans everything. Both must agree.
def resolved(tree: ast.Module, src: str, with_text: bool) -> tuple[object, ...]:
    r = ScopeResolver(tree, "m.py", text=src if with_text else None)
    scopes = [
        (
            s.qualname,
            s.kind,
            s.level,
            s.function.lineno,
            [(c.line, c.end_line, c.caller, id(c.call), id(c.caller_node)) for c in s.call_sites],
        )
        for s in r.scopes.values()
    ]
    info = r.info
    summary = (
        info.imports,
        {n: (c.bases, list(c.methods), c.jit_class, c.attr_types) for n, c in info.classes.items()},
        {n: f.lineno for n, f in info.functions.items()},
        {n: sorted(kw) for n, kw in info.jit_wrapped.items()},
        info.context_level,
        info.env_level,
        info.cell_config_levels,
        info.graph_mode,
        info.instances,
    )
    roots = [(f.lineno, c.name if c else None) for f, c in r.local_roots()]
    return scopes, summary, roots


_HEADER = "import mindspore as ms\nfrom mindspore import nn, ops\n"
SHORTCUT_CASES = {
    "calls in every kind of statement": """
def h(x):
    return x

def g(x):
    return x

class Holder:
    def dump(self, x):
        return h(x)

class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.holder = Holder()

    def construct(self, x, k=g(1)):
        y = ops.relu(x)
        if h(
            y
        ) > 0:
            y = y + 1
        for i in range(h(3)):
            y = y * i
        while g(y) < 0:
            y = y - 1
        with ops.stop_gradient(h(y)) as z:
            y = z
        try:
            y = y / 2
        except h(ValueError):
            y = g(y)
        finally:
            y = y
        match y:
            case 1 if g(y):
                y = 2
            case _:
                pass
        o = Holder()
        o.dump(y); self.holder.dump(y)
        f = lambda v=h(1): g(v)
        s = f"{h(y)}{h(y)}"
        return h(g(h(y))), f, s
""",
    "local types, reassigned": """
class A:
    def run(self, x):
        return x

class B:
    def run(self, x):
        return x

class Net(nn.Cell):
    def construct(self, x):
        o = A()
        o = B()
        if x:
            o = A()
        return o.run(x)
""",
    "closures and nested classes": """
def helper(x):
    return x

class Net(nn.Cell):
    def construct(self, x):
        def helper(v):  # shadows the module-level helper
            return v
        class Local:
            def run(self):
                return 1
        return helper(x)
""",
    "async and nested definitions in a test function": '''
"""A class docstring that says class and def default undefined."""
def outer():
    async def inner():
        return 1
    class Net(nn.Cell):
        def construct(self, x):
            return step(x)
    return inner, Net

def step(x):
    return x
''',
    "decorated helpers, super, instances": """
def helper(x):
    return x

@ms.jit(fullgraph=True)
def compiled(x):
    return runner.go(helper(x))

class Runner:
    def go(self, x):
        return x

runner = Runner()

class Base(nn.Cell):
    def step(self, x):
        return helper(x)

class Net(Base):
    def construct(self, x):
        return super().step(x)
""",
    "names in strings and comments only": """
def helper(x):
    return x

class Net(nn.Cell):
    def construct(self, x):
        # helper(x) is not called here
        y = "helper(x)"
        return x, y
""",
    "class-name methods, factory closures, modes": """
def make():
    def add(v):
        return v
    return add

adder = make()

class Tools:
    @staticmethod
    def twice(x):
        return adder(x)

ms.set_context(mode=ms.GRAPH_MODE)

class Net(nn.Cell):
    def construct(self, x):
        return Tools.twice(x) + Net.more(x)

    @staticmethod
    def more(x):
        return adder(x)

net = Net()
print(net(1))
ms.set_context(mode=ms.PYNATIVE_MODE)
""",
    "non-NFKC identifiers": """
def \ufb01x(x):
    return x

class Net(nn.Cell):
    def construct(self, x):
        return \ufb01x(x)
""",
}


@pytest.mark.parametrize("name", sorted(SHORTCUT_CASES))
@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"])
def test_text_shortcuts_give_what_a_full_scan_gives(name: str, newline: str) -> None:
    src = (_HEADER + textwrap.dedent(SHORTCUT_CASES[name])).replace("\n", newline)
    tree = ast.parse(src)
    full = resolved(tree, src, with_text=False)
    assert full[0], "every case compiles something"
    assert resolved(tree, src, with_text=True) == full


def test_many_function_names_fall_back_to_the_full_scan() -> None:
    helpers = "".join(f"def h{i}(x):\n    return x\n\n" for i in range(40))
    calls = " + ".join(f"h{i}(x)" for i in range(40))
    src = f"{_HEADER}{helpers}class Net(nn.Cell):\n    def construct(self, x):\n        return {calls}\n"
    tree = ast.parse(src)
    r = ScopeResolver(tree, "m.py", text=src)
    assert r._call_lines is None
    assert len(r.scopes) == 41
    assert resolved(tree, src, with_text=True) == resolved(tree, src, with_text=False)


def test_a_lone_carriage_return_ends_a_line_for_the_keyword_scan() -> None:
    src = "import mindspore as ms\r\rms.set_context(jit_syntax_level=ms.STRICT)\r"
    src += "from mindspore import nn\rclass Net(nn.Cell):\r    def construct(self, x):\r        return x\r"
    assert scopes(src) == {"m.Net.construct": "strict"}  # without the text
    tree = ast.parse(src)
    r = ScopeResolver(tree, "m.py", text=src)
    assert r.info.context_level == "strict"
    assert [s.level for s in r.scopes.values()] == ["strict"]


def _write(root: Path, files: dict[str, str]) -> None:
    for rel, src in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(src), encoding="utf-8")


def test_text_shortcuts_follow_calls_into_the_workspace(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/sub/__init__.py": "",
            "pkg/sub/ops.py": "def deep(x):\n    return x\n",
            "pkg/helpers.py": "def helper(x):\n    return x\n\ndef other(x):\n    return x\n",
            "pkg/base.py": """
                from mindspore import nn
                from mixins import Mixin

                class Base(nn.Cell, Mixin):
                    def step(self, x):
                        return x
            """,
            "mixins.py": "class Mixin:\n    def mix(self, x):\n        return x\n",
            "unrelated.py": "".join(f"def u{i}(x):\n    return x\n" for i in range(40)),
            "pkg/net.py": """
                import pkg
                from pkg.helpers import helper as h
                from pkg.base import Base

                class Net(Base):
                    def construct(self, x):
                        y = h(x)
                        y = pkg.sub.ops.deep(y)
                        z = super().step(y)
                        return self.mix(z)
            """,
        },
    )
    ws = WorkspaceIndex.from_paths([tmp_path], root=str(tmp_path))
    src = (tmp_path / "pkg/net.py").read_text(encoding="utf-8")
    tree = ast.parse(src)
    path = str(tmp_path / "pkg/net.py")
    fast = ScopeResolver(tree, path, workspace=ws, text=src)
    full = ScopeResolver(tree, path, workspace=ws)
    assert fast._call_lines is not None  # the 40 unrelated functions are not looked for

    def seen(r: ScopeResolver) -> dict[str, list[int]]:
        return {s.qualname: [c.line for c in s.call_sites] for s in r.scopes.values()}

    assert seen(fast) == seen(full)
    assert {
        "pkg.helpers.helper",
        "pkg.sub.ops.deep",
        "pkg.base.Base.step",
        "mixins.Mixin.mix",
    } <= set(seen(fast))


def test_a_factory_closure_imported_from_another_file_is_followed(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "helpers.py": "def make():\n    def add(v):\n        return v\n    return add\n\nadder = make()\n",
            "net.py": """
                from mindspore import nn
                from helpers import adder as plus

                class Net(nn.Cell):
                    def construct(self, x):
                        return plus(x)
            """,
        },
    )
    ws = WorkspaceIndex.from_paths([tmp_path], root=str(tmp_path))
    src = (tmp_path / "net.py").read_text(encoding="utf-8")
    tree = ast.parse(src)
    path = str(tmp_path / "net.py")
    fast = ScopeResolver(tree, path, workspace=ws, text=src)
    full = ScopeResolver(tree, path, workspace=ws)
    assert fast._call_lines is not None

    def seen(r: ScopeResolver) -> dict[str, list[int]]:
        return {s.qualname: [c.line for c in s.call_sites] for s in r.scopes.values()}

    assert seen(fast) == seen(full) == {"net.Net.construct": [], "helpers.make.<locals>.add": [7]}
    whole = ScopeResolver.for_workspace(ws)
    assert "helpers.make.<locals>.add" in {s.qualname for s in whole.scopes.values()}
    # the file defining the closure knows it is compiled (reached from net.py)
    h_src = (tmp_path / "helpers.py").read_text(encoding="utf-8")
    h_path = str(tmp_path / "helpers.py")
    for text in (h_src, None):
        r = ScopeResolver(ast.parse(h_src), h_path, workspace=ws, text=text)
        assert [(s.qualname, s.kind) for s in r.scopes.values()] == [
            ("helpers.make.<locals>.add", "helper")
        ]


def test_a_short_name_all_over_the_text_turns_the_shortcut_off() -> None:
    src = (
        _HEADER
        + "def f(x):\n    return x\n\n"
        + "".join(
            f"class Net{i}(nn.Cell):\n    def construct(self, x):\n        return f(x)\n\n"
            for i in range(300)
        )
    )
    tree = ast.parse(src)
    r = ScopeResolver(tree, "m.py", text=src)
    assert r._call_lines is None
    assert resolved(tree, src, with_text=True) == resolved(tree, src, with_text=False)


_SEEDS = [
    p.read_text(encoding="utf-8") for p in sorted((Path(__file__).parent / "fixtures").glob("*.py"))
]
_CASES = Path(__file__).resolve().parents[3] / "shared" / "reference" / "graphmode" / "cases"
if _CASES.is_dir():
    _SEEDS += [p.read_text(encoding="utf-8") for p in sorted(_CASES.glob("*.py"))]
#: Statements inserted into seed files ({i}: the indentation where they land).
_STATEMENTS = [
    "y = helper(x)",
    "o = Net()",
    "o.construct(x)",
    "self.step(x)",
    "z = super().construct(x)",
    "def helper2(v):\n{i}    return helper(v)",
    "class K:\n{i}    def run(self):\n{i}        return helper(1)",
    "if helper(x):\n{i}    pass",
    "with helper(x) as w:\n{i}    pass",
    "try:\n{i}    helper(x)\n{i}except helper(x):\n{i}    pass\n{i}finally:\n{i}    helper(x)",
    "match x:\n{i}    case 1 if helper(x):\n{i}        pass\n{i}    case _:\n{i}        helper(x)",
    "f = lambda v=helper(1): v",
    "s = f'{{helper(x)}}{{helper(x)}}'",
    "a = helper(x); b = helper(x)",
    "r = (helper\n{i}(x))",
    "h = K()",
    "h.run()",
    "self.layer.run(x)",
    "\ufb01x(x)",
    "q = self.\\\n{i}step(x)",
    "for k in range(helper(3)):\n{i}    helper(k)",
    "K.run(None)",
    "Net.construct(self, x)",
    "adder = make()",
    "y = adder(x)",
    "ms.set_context(mode=ms.PYNATIVE_MODE)",
    "ms.set_context(mode=ms.GRAPH_MODE)",
    "net(x)",
    "@ms.jit\n{i}def inner(v):\n{i}    return helper(v)",
]
_TOP = [
    "def helper(x):\n    return x\n",
    "def \ufb01x(x):\n    return x\n",
    "class Mixin:\n    def step(self, x):\n        return helper(x)\n",
    "net = Net()\n",
    "class K:\n    def run(self):\n        return 1\n",
    "def make():\n    def add(v):\n        return helper(v)\n    return add\n",
    "adder = make()\n",
    "ms.set_context(mode=ms.PYNATIVE_MODE)\n",
]


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.sampled_from(_SEEDS),
    top=st.lists(st.sampled_from(_TOP), max_size=3),
    inserts=st.lists(
        st.tuples(st.integers(0, 10_000), st.sampled_from(_STATEMENTS)), min_size=1, max_size=8
    ),
    newline=st.sampled_from(["\n", "\r\n", "\r"]),
)
def test_text_shortcuts_agree_on_mutated_sources(
    seed: str, top: list[str], inserts: list[tuple[int, str]], newline: str
) -> None:
    lines = seed.splitlines(keepends=True)
    for pos, statement in inserts:
        k = pos % (len(lines) + 1)
        after = lines[k] if k < len(lines) else ""
        indent = after[: len(after) - len(after.lstrip(" "))] if after.strip() else ""
        lines.insert(k, indent + statement.format(i=indent) + "\n")
    text = ("".join(top) + "".join(lines)).replace("\n", newline)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(text)
        full = resolved(tree, text, with_text=False)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return
    assert resolved(tree, text, with_text=True) == full


def test_a_grad_function_imported_into_a_pynative_jit_step_reaches_the_construct(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "model.py": """
                import mindspore as ms
                from mindspore import nn
                ms.set_context(mode=ms.PYNATIVE_MODE)

                class Net(nn.Cell):
                    def construct(self, x):
                        return x

                net = Net()

                def forward(x):
                    return net(x)

                grad_fn = ms.value_and_grad(forward)
            """,
            "train.py": """
                import mindspore as ms
                from model import grad_fn
                ms.set_context(mode=ms.PYNATIVE_MODE)

                @ms.jit
                def train_step(x):
                    return grad_fn(x)
            """,
        },
    )
    ws = WorkspaceIndex.from_paths([tmp_path], root=str(tmp_path))
    src = (tmp_path / "model.py").read_text(encoding="utf-8")
    path = str(tmp_path / "model.py")
    for text in (src, None):
        r = ScopeResolver(ast.parse(src), path, workspace=ws, text=text)
        assert sorted(s.qualname for s in r.scopes.values()) == ["model.Net.construct", "model.forward"]
    (tmp_path / "train.py").write_text("import mindspore as ms\n", encoding="utf-8")
    ws = WorkspaceIndex.from_paths([tmp_path], root=str(tmp_path))
    assert not ScopeResolver(ast.parse(src), path, workspace=ws, text=src).scopes
