"""The graph-mode data flow: demand-driven kinds, types and dtypes of names, with cycles
(loop-carried bindings) solved to their fixpoint, closures, call-site parameters and the lazy
`Flow` view the rules read."""

from __future__ import annotations

import ast
import itertools
import random
import textwrap

from npu_lsp.config import Config
from npu_lsp.engine import Context
from npu_lsp.rules.graphmode.flow import Analyzer, Kind, analyzer
from npu_lsp.scope import ScopeResolver

SRC = textwrap.dedent(
    """
    from mindspore import nn


    class Net(nn.Cell):
        def construct(self, x):
            n = 0
            a = 0
            for i in range(3):
                y = n + 1
                a = b
                b = c
                c = x * 2
                n = x * 2
            z = 3
            return y, a, z
    """
)


def _setup(src: str) -> tuple[Context, Analyzer]:
    src = textwrap.dedent(src)
    tree = ast.parse(src)
    ctx = Context("n.py", src, tree, Config(), ScopeResolver(tree, "n.py", text=src))
    return ctx, analyzer(ctx)


def _function(ctx: Context, name: str) -> ast.FunctionDef:
    return next(n for n in ast.walk(ctx.tree) if isinstance(n, ast.FunctionDef) and n.name == name)


def _returned(func: ast.FunctionDef) -> list[ast.expr]:
    ret = next(n for n in func.body if isinstance(n, ast.Return))
    assert ret.value is not None
    return list(ret.value.elts) if isinstance(ret.value, ast.Tuple) else [ret.value]


def kinds(src: str, func_name: str = "construct") -> dict[str, Kind]:
    """Kinds of the names `func_name` returns (`return a, b, c`)."""
    ctx, a = _setup(src)
    func = _function(ctx, func_name)
    return {e.id: a.kind(e, func) for e in _returned(func) if isinstance(e, ast.Name)}


def test_names_read_before_a_later_binding_in_a_loop_get_its_kind() -> None:
    # `y` reads `n` before the loop body rebinds it to a tensor; `a` depends on a chain
    # (a <- b <- c <- x) written backwards
    assert kinds(SRC) == {"y": Kind.TENSOR, "a": Kind.TENSOR, "z": Kind.CONST}


def test_a_long_backward_chain_reaches_the_fixpoint() -> None:
    # five links written backwards: a fixed number of rounds over the bindings would stop early
    src = """
    from mindspore import nn

    class Net(nn.Cell):
        def construct(self, x):
            a = b = c = d = e = 0
            for i in range(3):
                a = b + 1
                b = c + 1
                c = d + 1
                d = e + 1
                e = x * 2
            return a, b, e
    """
    assert kinds(src) == {"a": Kind.TENSOR, "b": Kind.TENSOR, "e": Kind.TENSOR}


def test_a_name_rebound_from_itself_in_a_loop() -> None:
    src = """
    from mindspore import nn

    class Net(nn.Cell):
        def construct(self, x):
            h = 0
            k = 0
            for layer in self.layers:
                h = layer(h) + x
                k = k + 1
            return h, k
    """
    assert kinds(src) == {"h": Kind.TENSOR, "k": Kind.CONST}


def test_a_cycle_of_constants_stays_constant_and_a_cycle_fed_by_a_tensor_does_not() -> None:
    src = """
    from mindspore import nn

    class Net(nn.Cell):
        def construct(self, x):
            a = 0
            b = 0
            p = 0
            q = 0
            for i in range(3):
                a = b + 1
                b = a * 2
                p = q + 1
                q = p * 2
                q = x.sum()
            return a, b, p, q
    """
    assert kinds(src) == {"a": Kind.CONST, "b": Kind.CONST, "p": Kind.TENSOR, "q": Kind.TENSOR}


def test_answers_do_not_depend_on_the_order_of_questions() -> None:
    src = """
    from mindspore import nn, ops

    class Net(nn.Cell):
        def construct(self, x):
            a = ()
            b = ops.ones((2,), ms.float16)
            for i in range(3):
                a = b
                b = c.astype(ms.float32)
                c = x * a
            return a, b, c
    """
    answers = set()
    for order in itertools.permutations(["a", "b", "c"]):
        ctx, an = _setup(src)
        func = _function(ctx, "construct")
        exprs = {e.id: e for e in _returned(func) if isinstance(e, ast.Name)}
        got = {}
        for name in order:  # types first this time, kinds and dtypes after
            e = exprs[name]
            got[name] = (an.type_class(e, func), an.dtype_of(e, func), an.kind(e, func))
        answers.add(tuple(sorted(got.items())))
    assert len(answers) == 1
    got = dict(answers.pop())
    assert got["a"][2] == got["b"][2] == got["c"][2] == Kind.TENSOR
    assert got["b"][1] is None  # float16 and float32 both reach b: no single dtype


def test_closures_read_the_enclosing_function() -> None:
    src = """
    from mindspore import nn

    class Net(nn.Cell):
        def construct(self, x):
            t = x * 2
            n = 3

            def inner(n):
                u = t + 1
                return t, u, n

            return inner(n)
    """
    # `n` is inner's own parameter (shadowing construct's `n`): its kind comes from the call
    assert kinds(src, "inner") == {"t": Kind.TENSOR, "u": Kind.TENSOR, "n": Kind.CONST}


def test_questions_that_need_no_name_analyse_nothing() -> None:
    ctx, a = _setup(
        """
        from mindspore import nn

        class Net(nn.Cell):
            def construct(self, x, mask=None):
                if mask is not None:
                    x = x * mask
                return x
        """
    )
    func = _function(ctx, "construct")
    test = next(n for n in ast.walk(func) if isinstance(n, ast.If)).test
    assert a.kind(test, func) == Kind.CONST
    assert a.kind(ast.Constant(1), func) == Kind.CONST
    assert not any(fn.indexed for fn in a._fns.values())  # its bindings were never indexed


def test_a_very_long_chain_of_names_does_not_exhaust_the_stack() -> None:
    body = "\n".join(f"        v{i + 1} = v{i} + 1" for i in range(1500))
    src = f"""
from mindspore import nn

class Net(nn.Cell):
    def construct(self, x):
        v0 = x * 2
{body}
        return v1500, v3
"""
    assert kinds(src) == {"v1500": Kind.TENSOR, "v3": Kind.TENSOR}


def test_helper_parameters_come_from_call_sites_including_recursive_ones() -> None:
    src = """
    import mindspore as ms
    from mindspore import nn

    def helper(v, depth):
        if depth > 0:
            return helper(v * 2, depth - 1)
        return v, depth

    class Net(nn.Cell):
        def construct(self, x):
            return helper(x, 3)
    """
    assert kinds(src, "helper") == {"v": Kind.TENSOR, "depth": Kind.CONST}


def test_building_a_cell_is_not_a_call_of_its_construct() -> None:
    # `Block(4)` in Net.__init__ creates the cell; it says nothing about construct's `x`
    src = """
    import numpy as np
    from mindspore import nn, Tensor
    import mindspore as ms
    ms.set_context(mode=ms.GRAPH_MODE)  # graph-mode flow: a script with no mode runs eagerly

    class Block(nn.Cell):
        def construct(self, x):
            return x

    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.block = Block(4)

        def construct(self, x):
            return self.block(x)

    net = Block(8)
    net(Tensor(np.ones(3)))
    """
    assert kinds(src, "construct") == {"x": Kind.TENSOR}
    ctx, a = _setup(src)
    block = _function(ctx, "construct")
    x = _returned(block)[0]
    assert a.type_class(x, block) == "tensor"  # not {"scalar", "tensor"} from Block(8)


def test_flow_view_reads_like_the_dicts_rules_use() -> None:
    ctx, a = _setup(
        """
        import numpy as np
        from mindspore import nn

        class Net(nn.Cell):
            def construct(self, x):
                items = []
                host = np.ones(3)
                f = lambda v: v
                for i, item in enumerate(items):
                    pass
                return x
        """
    )
    func = _function(ctx, "construct")
    flow = a.flow(func)
    assert "items" in flow.kinds and "np" not in flow.kinds
    assert flow.kinds["x"] == Kind.TENSOR
    assert flow.types.get("items") == {"list"}
    assert flow.types.get("i") == {"scalar"}
    assert flow.types.get("nothing") is None
    assert "host" in flow.numpy and "items" not in flow.numpy
    assert "f" in flow.functions
    assert set(flow.kinds) == {"x", "items", "host", "f", "i", "item"}
    assert a.is_numpy_value(ast.Name(id="host"), flow)


def _random_body(rng: random.Random, names: list[str]) -> list[tuple[str, str]]:
    """(name, expression) bindings over `names`, the tensor input `x` and constants."""
    out = []
    for _ in range(rng.randint(3, 12)):
        terms = [rng.choice([*names, *names, "x", "1"]) for _ in range(rng.randint(1, 2))]
        expr = " + ".join(terms)
        wrap = rng.random()
        if wrap < 0.15:
            expr = f"({expr}).item()"  # a host scalar: VAR when dynamic
        elif wrap < 0.25:
            expr = f"float({expr})"
        out.append((rng.choice(names), expr))
    return out


def _reference_kinds(body: list[tuple[str, str]], names: list[str]) -> dict[str, Kind]:
    """Round-robin iteration to the fixpoint, by hand, for this little expression language."""

    def value(expr: str, kinds: dict[str, Kind]) -> Kind:
        if expr.startswith("float("):
            return Kind.VAR if value(expr[6:-1], kinds).dynamic else Kind.CONST
        if expr.endswith(".item()"):
            inner = value(expr[1:-8], kinds)
            return Kind.VAR if inner.dynamic else inner
        k = Kind.CONST
        for term in expr.split(" + "):
            k = max(k, Kind.TENSOR if term == "x" else kinds.get(term, Kind.CONST))
        return k

    kinds = {n: Kind.CONST for n, _ in body}
    changed = True
    while changed:
        changed = False
        for name, expr in body:
            k = max(kinds[name], value(expr, kinds))
            if k != kinds[name]:
                kinds[name], changed = k, True
    return {n: kinds.get(n, Kind.CONST) for n in names}


def test_random_loop_bodies_agree_with_a_round_robin_fixpoint() -> None:
    names = ["a", "b", "c", "d", "e"]
    for seed in range(150):
        rng = random.Random(seed)
        body = _random_body(rng, names)
        lines = "".join(f"            {n} = {e}\n" for n, e in body)
        src = (
            "from mindspore import nn\n\n"
            "class Net(nn.Cell):\n"
            "    def construct(self, x):\n"
            "        for i in range(3):\n"
            f"{lines}"
            f"        return {', '.join(names)}\n"
        )
        expected = _reference_kinds(body, names)
        ctx, a = _setup(src)
        func = _function(ctx, "construct")
        exprs = _returned(func)
        rng.shuffle(exprs)  # any order of questions
        got = {e.id: a.kind(e, func) for e in exprs if isinstance(e, ast.Name)}
        assert got == expected, (seed, body)


def test_construct_inputs_seen_where_the_cell_is_called_from_plain_python() -> None:
    cell = """
    from mindspore import nn
    import mindspore as ms
    ms.set_context(mode=ms.GRAPH_MODE)  # graph-mode flow: a script with no mode runs eagerly

    class Block(nn.Cell):
        def construct(self, x):
            return x
    """
    calls = {
        "net = Block()\nnet(3)": Kind.CONST,
        "Block()(3)": Kind.CONST,
        "Block() (3)": Kind.CONST,
        "print(Block()  # a comment\n      (3))": Kind.CONST,
        "net = Block()": Kind.TENSOR,  # never called: a graph input
    }
    for call, kind in calls.items():
        assert kinds(textwrap.dedent(cell) + call + "\n") == {"x": kind}, call


def _helper_dtypes(body: str, calls: str) -> dict[str, str | None]:
    """Dtypes of the names `helper` returns, the helper called as `calls` from construct."""
    src = f"""
import numpy as np
import mindspore as ms
from mindspore import nn, ops, Tensor
ms.set_context(mode=ms.GRAPH_MODE)  # graph-mode flow: a script with no mode runs eagerly

def helper(v, w=None):
{textwrap.indent(textwrap.dedent(body), "    ")}

class Net(nn.Cell):
    def construct(self, x, y):
{textwrap.indent(textwrap.dedent(calls), "        ")}

Net()(Tensor(np.ones(3), ms.float32), Tensor(np.ones(3)))
"""
    ctx, a = _setup(src)
    func = _function(ctx, "helper")
    return {e.id: a.dtype_of(e, func) for e in _returned(func) if isinstance(e, ast.Name)}


def test_helper_parameters_get_the_dtype_every_call_site_agrees_on() -> None:
    ret = "return v"
    # x is float32 where the cell is called; the cast states int32 at the call site
    assert _helper_dtypes(ret, "return helper(x)") == {"v": "float32"}
    assert _helper_dtypes(ret, "return helper(ops.cast(y, ms.int32))") == {"v": "int32"}
    assert _helper_dtypes(ret, "return helper(x) + helper(x * 2)") == {"v": "float32"}
    assert _helper_dtypes(ret, "return helper(v=x)") == {"v": "float32"}
    # sites that disagree, or one whose dtype is unknown (y): no single dtype
    assert _helper_dtypes(ret, "return helper(x) + helper(x.astype(ms.int32))") == {"v": None}
    assert _helper_dtypes(ret, "return helper(x) + helper(y)") == {"v": None}
    # a parameter left to its default at some site: unknown
    assert _helper_dtypes("return w", "return helper(x, x) + helper(x)") == {"w": None}
    assert _helper_dtypes("return w", "return helper(x, x) + helper(x, x)") == {"w": "float32"}


def test_a_recursive_helper_parameter_dtype_terminates_and_never_guesses() -> None:
    body = """
    if v.sum() > 0:
        return helper(v - 1)
    return v
    """
    # the recursive site is unsolved while the parameter is: unknown rather than a guess
    assert _helper_dtypes(body, "return helper(x)") == {"v": None}
    body = """
    if v.sum() > 0:
        return helper(ops.cast(v, ms.int32))
    return v
    """
    assert _helper_dtypes(body, "return helper(x)") == {"v": None}


def test_helper_dtypes_pass_through_chains_of_helpers_and_methods() -> None:
    src = """
    import numpy as np
    import mindspore as ms
    from mindspore import nn, ops, Tensor
    ms.set_context(mode=ms.GRAPH_MODE)  # graph-mode flow: a script with no mode runs eagerly

    def inner(v):
        return v

    def outer(u):
        return inner(u * 2)

    class Net(nn.Cell):
        def pick(self, w):
            return w

        def construct(self, x):
            return outer(x) + self.pick(ops.cast(x, ms.int32))

    Net()(Tensor(np.ones(3), ms.float16))
    """
    ctx, a = _setup(src)
    got = {
        name: a.dtype_of(_returned(_function(ctx, name))[0], _function(ctx, name))
        for name in ("inner", "outer", "pick")
    }
    assert got == {"inner": "float16", "outer": "float16", "pick": "int32"}


def test_helper_return_kind_is_specialised_per_call() -> None:
    """A call of the file's own helper has the join of the kinds its `return`s take with the
    call's argument kinds (MindSpore specialises per signature): a shape item is a constant,
    a tensor computed from the argument stays a tensor (probes realcode/helper_returns_*)."""
    got = kinds(
        """
        import mindspore as ms
        from mindspore import nn, ops
        ms.set_context(mode=ms.GRAPH_MODE)  # graph-mode flow: a script with no mode runs eagerly


        def shp(w):
            return w.shape


        def twice(a):
            return a * 2


        def items(w):
            return [sz for sz in w.shape]


        def pick(f):
            if f is None:
                return 1, 1
            return f.shape[0], f.shape[1]


        def total(t):
            return t.sum()


        def loop(t, n):
            return loop(t, n - 1) if n else t.shape[0]


        class Net(nn.Cell):
            def _dims(self, t):
                return t.shape[2], t.shape[3]

            def construct(self, x):
                a = shp(x)[3]
                b = twice(x.shape[0])
                c = twice(x)
                d = items(x)[0]
                e, f = pick(x)
                g = total(x)
                h, w = self._dims(x)
                r = loop(x, 3)
                return a, b, c, d, e, g, h, r


        net = Net()
        net(ms.Tensor([1.0]))
        """
    )
    assert got == {
        "a": Kind.CONST, "b": Kind.CONST, "c": Kind.TENSOR, "d": Kind.CONST, "e": Kind.CONST,
        "g": Kind.TENSOR, "h": Kind.CONST, "r": Kind.UNKNOWN,
    }


def test_forwarded_star_args_reach_the_helper() -> None:
    """`construct(self, *args, **kwargs)` forwarding to a method: the method's parameters take
    the kinds of the arguments at construct's call sites, by position or keyword."""
    src = """
        import mindspore as ms
        from mindspore import nn
        ms.set_context(mode=ms.GRAPH_MODE)  # graph-mode flow: a script with no mode runs eagerly


        class Net(nn.Cell):
            def inner(self, x, n, flag=False):
                return x, n, flag

            def construct(self, *args, **kwargs):
                return self.inner(*args, **kwargs)


        Net()(ms.Tensor([1.0]), 3, flag=True)
        """
    assert kinds(src, "inner") == {"x": Kind.TENSOR, "n": Kind.CONST, "flag": Kind.CONST}


def test_constant_list_input_and_mutable() -> None:
    """The tensors of a list given to the top-level construct are constants MindSpore folds
    through `ops.stack` (unknown here, not a variable); `ms.mutable` makes them variables."""
    src = """
        import mindspore as ms
        from mindspore import nn, ops
        ms.set_context(mode=ms.GRAPH_MODE)  # graph-mode flow: a script with no mode runs eagerly


        class Net(nn.Cell):
            def construct(self, xs, x):
                s = ops.stack(xs)
                r = ops.relu(xs[0])
                return s, r, xs


        a = ms.Tensor([1.0])
        Net()([a, a], a)
        """
    assert kinds(src) == {"s": Kind.UNKNOWN, "r": Kind.TENSOR, "xs": Kind.UNKNOWN}
    mutable = src.replace("Net()([a, a], a)", "Net()(ms.mutable([a, a]), a)")
    assert kinds(mutable) == {"s": Kind.TENSOR, "r": Kind.TENSOR, "xs": Kind.TENSOR}


def test_numbers_joined_by_tensor_control_flow_in_loops() -> None:
    """A number carried by a `while` on a tensor, or rebound under an `if` on a tensor in a
    loop that carries it, is a run-time scalar; loops on constants, names the loop does not
    carry, branches left by `continue`, and an `if` outside loops keep constants
    (judged: written/heldout14/probes/wl_*)."""
    src = """
        import mindspore as ms
        from mindspore import nn
        ms.set_context(mode=ms.GRAPH_MODE)  # graph-mode flow: a script with no mode runs eagerly


        class Net(nn.Cell):
            def construct(self, x, step):
                k = 1
                while x.sum() > k:
                    k += 1
                    tmp = 4
                    x = x / tmp
                t = step
                while t >= 3:
                    t -= 3
                n = 0
                c = 0
                for i in range(3):
                    if x[0, i] > 0:
                        n = n + 1
                    if x[1, i] > 0:
                        c += 1
                        continue
                p = 1
                if x.sum() > 0:
                    p = 4
                return k, tmp, t, n, c, p


        Net()(ms.Tensor([[1.0, 2.0, 3.0], [1.0, 2.0, 3.0]]), 5)
        """
    assert kinds(src) == {
        "k": Kind.VAR, "tmp": Kind.CONST, "t": Kind.CONST, "n": Kind.VAR, "c": Kind.CONST, "p": Kind.CONST
    }
    mutable = src.replace(", 5)", ", ms.mutable(5))")
    assert kinds(mutable)["t"] == Kind.VAR


def test_a_factory_call_builds_an_instance_of_its_class() -> None:
    """`net = Net.build(cfg)` (a classmethod returning `cls(...)`) and `net = make()` (a
    module function returning `Net(...)`): calling `net` calls `Net.construct`, whose
    inputs then come from those calls (a Python int, not a tensor)."""
    src = """
        import mindspore as ms
        from mindspore import nn
        ms.set_context(mode=ms.GRAPH_MODE)  # graph-mode flow: a script with no mode runs eagerly


        class Net(nn.Cell):
            @classmethod
            def build(cls, cfg):
                return cls()

            def construct(self, step):
                return step


        def make():
            return Net()


        net = Net.build({})
        net(5)
        """
    assert kinds(src) == {"step": Kind.CONST}
    helper = src.replace("net = Net.build({})", "net = make()")
    assert kinds(helper) == {"step": Kind.CONST}
    assert kinds(src.replace("net(5)", "net(ms.Tensor(5))")) == {"step": Kind.TENSOR}


def test_changes_index_in_place_changes_per_name_and_marks_nested_scopes() -> None:
    ctx, a = _setup(
        """
        from mindspore import nn


        class Net(nn.Cell):
            def construct(self, x):
                out = []
                hist = []
                for i in range(3):
                    out.append(x * i)
                    hist.extend([x])
                hist += [x]

                def keep(v):
                    out.append(v)

                keep(x)
                for j, h in enumerate(out):
                    x = x + h
                return out
        """
    )
    func = _function(ctx, "construct")
    changes = a.changes("out", func)
    assert [(c.how, c.nested) for c in changes] == [("append", False), ("append", True)]
    assert [c.how for c in a.changes("hist", func)] == ["+=", "extend"]
    assert a.changes("missing", func) == [] and a.changes("out", None) == []
    appended = a.appended("out", func, nested=False)
    assert appended is not None and [ast.unparse(v) for v in appended] == ["x * i"]
    assert a.appended("hist", func) is None  # extended: what it holds is not followed
    it = a.iterated("h", func)
    assert isinstance(it, ast.Name) and it.id == "out"  # through `enumerate`
    assert a.iterated("i", func) is not None and a.iterated("x", func) is None  # a parameter
