"""A seeded, deterministic generator of whole MindSpore programs for differential testing.

`generate(seed)` composes idioms of real MindSpore code into one runnable script: a network
(`nn.Cell`, sometimes built on a base class, with constructor flags) or an `@ms.jit` step
function, whose compiled code is assembled from *fragments* (sub-cells, SequentialCell/CellList
loops, helpers, closures, jit functions, jit classes, config-flag branches, control flow on
constants, shapes and tensors, containers and their methods, builtins, the standard library
and numpy). Each fragment keeps `x` a float32 tensor of shape (2, 3), so fragments compose and
the program is valid Python (PyNative must accept it for the case to count).

Fragments are placed at random in the compiled code: inline, in a module-level helper, in a
closure, in a method, in a sub-cell's `construct`, in an `@ms.jit` function or a `@jit_class`
method. The same seed always gives the same text (only `random.Random(seed)` is used).

Version 2 (seeds from `V2_FROM` on, see `gen_v2.py`) adds fragment families aimed at what the
checker misses, other outputs of the compiled entry and jit train steps with gradients and an
optimizer. Seeds below `V2_FROM` take exactly version 1's path (no extra random draws), so every
stored program is still what its seed generates. Version 3 (seeds from `V3_FROM` on, see
`gen_v3.py`) adds idioms of human-written code, the same way. Version 4 (seeds from `V4_FROM`
on, `gen_v4.py`) composes its own programs from all the families: train-step Cells and
`ms.jit` roots built inside functions, joins through `continue`, random draws passed to
sub-cells, `jit_class` objects, `ms.mutable` inputs, `super().construct`. Version 5 (seeds from
`V5_FROM` on, `gen_v5.py`) composes the Python habits of PyTorch users: host values of tensors
used as Python state, state on `self`, checks and exceptions, config objects, closures and
lambdas, loops over tensors, `math` on tensors, in-place updates, and their on-device neighbours. Version 6
(seeds from `V6_FROM` on, `gen_v6.py`) adds `while` loops, keys read from host values, Python state kept
across calls and shared by sub-cells, functional transforms, `mint`, cells built from config rows,
recurrences, beam-style lists, scalar (`ms.mutable`) arguments and `set_inputs` roots.
"""

from __future__ import annotations

import random
import textwrap
from dataclasses import dataclass, field

HEAD = """\
import math
import functools
import operator
import numpy as np
import mindspore as ms
from mindspore import nn, ops, Tensor, Parameter
from mindspore import dtype as mstype

ms.set_context(mode=ms.GRAPH_MODE)
ms.set_device("CPU")
"""


@dataclass
class Frag:
    """One idiom: statements of the compiled function (reading and rebinding `x`), with the
    module-level definitions and `__init__` lines it needs."""

    tag: str
    body: list[str]
    module: list[str] = field(default_factory=list)
    init: list[str] = field(default_factory=list)
    #: the body reads `self.<attr>` set by `init` (cannot move into a plain function)
    needs_self: bool = False
    #: constructor parameters the init lines read: name -> default literal
    params: dict[str, str] = field(default_factory=dict)


def _lines(s: str) -> list[str]:
    return textwrap.dedent(s).strip("\n").splitlines()


# --- expression pools: each yields a Python number while compiling (or at run time) ------------
# `{x}` is the tensor; results are small non-negative numbers so `x + c` stays valid.
NUMBER_EXPRS = [
    "abs(-{a})", "max({a}, {b})", "min({a}, {b})", "max(x.shape)", "min(x.shape)",
    "sum([{a}, {b}])", "sum(x.shape)", "round({f}, 1)", "round({f})", "len(x.shape)",
    "pow({a}, 2)", "divmod({b} + 7, 3)[0]", "sorted([{b}, {a}, 1])[0]",
    "sorted(x.shape, reverse=True)[0]", "max([{a}, {b}, 1], key=abs)", "min(x.shape, default=0)",
    "int('{a}')", "float('1.5')", "int(x.shape[0])", "len(str({a}{b}))", "ord('c') - 96",
    "len(chr(65))", "len(hex({a} + 10))", "len(bin({a}))", "len(oct(9))", "hash({a}) % 5",
    "len(repr({a}))", "len(format({f}, '.2f'))", "len(list(range({a})))",
    "len(tuple(reversed(x.shape)))", "len(dict(a=1, b={a}))", "sum(map(abs, [-1, {a}]))",
    "len(list(filter(None, [0, 1, {a}])))", "int(all([1, {a}]))", "int(any(x.shape))",
    "next(iter([{a}, 5]))", "len(list(zip([1, 2], x.shape)))",
    "len(list(enumerate(x.shape, start=1)))", "int(isinstance({a}, int))", "int(callable(abs))",
    "len(set([1, {a}, {a}]))", "len(frozenset([1, 2]))", "sum(bytes([1, {a}]))",
    "len(bytearray(3))", "complex(1, {a}).imag", "len(ascii('ab'))", "sum(x.shape, start=1)",
    "int('11', base=2)", "int('11', 2)", "round(number={f})", "len(range(0, 6, 2))",
    "len(sorted(x.shape, key=lambda d: -d))", "len(list(zip([1, 2], [3, 4], strict=True)))",
    "int(bool({a}))", "float({a})", "len(tuple(x.shape))", "len(list(x.shape))",
    "int(issubclass(bool, int))", "int(hasattr(x, 'shape'))", "len(type(x).__name__)",
    "len(str(x.shape))", "int(max(x.shape) == 3)", "abs(x.shape[1] - {a})",
    "len([d for d in x.shape if d > 1])", "len({{k: k for k in range({a})}})",
    "sum(d * 2 for d in x.shape)", "len(slice(1, 3).indices(5))", "x.shape.index(3)", "x.shape.count(2)", "len(x.shape + (1,))",
    "math.sqrt({a}.0)", "math.floor({f})", "math.ceil({f})", "math.log(1 + {a})", "math.pi / 4",
    "math.isclose({f}, {f}) * 1", "math.gcd(4, {a} + 1)", "math.prod(x.shape)", "math.fabs(-{f})",
    "math.exp(0)", "math.hypot(3, 4)", "operator.add({a}, 1)", "operator.mul(*x.shape)",
    "operator.itemgetter(0)(x.shape)", "functools.reduce(operator.mul, x.shape, 1)",
    "functools.reduce(lambda p, q: p + q, [{a}, {b}])", "functools.partial(pow, 2)({a})",
    "np.sqrt({a}.0)", "np.prod(x.shape)", "int(np.array([1, {a}]).sum())", "float(np.float32({f}))",
    "np.pi / 4", "np.zeros({a}).shape[0]", "int(np.argmax([1, {a}, 0]))", "np.maximum({a}, 2)",
    "float(np.mean([1.0, {f}]))", "len(np.arange({a}))", "float(np.clip({f}, 0, 1))",
    "len('{w}'.upper())", "len('{w}'.split('_'))", "len('-'.join(['{w}', 'b']))",
    "len('  {w} '.strip())", "len('{w}'.replace('a', 'bb'))", "int('{w}'.startswith('a'))",
    "int('{w}'.endswith('x'))", "'{w}'.find('a') + 1", "'{w}'.count('a')", "int('{a}'.isdigit())",
    "len('{w}'.title())", "len('{a}'.zfill(3))", "len('{w}'.center(8))", "len('%d-%s' % ({a}, 'b'))",
    "len(f'{w}{{x.shape[0]}}')", "len('{{}}-{{}}'.format({a}, {b}))", "len('{w}'.encode())",
    "len('{w}'.capitalize())", "len('{w}'.lower())", "len('{w}'.rsplit('a', 1))",
    "len('{w}'.partition('a'))", "int('{w}'.isalpha())", "len('{w}'.ljust(6))",
    "len(str.upper('{w}'))", "ms.dtype_to_nptype(mstype.float32)(1).item()",
    "float(ops.shape(x)[0])", "float(ops.Shape()(x)[1])", "float(x.ndim)", "float(x.size)",
    "float(x.dim())", "float(x.numel())", "x.itemsize", "x.nbytes // 4",
    "float(len(x))",
]

# expressions giving a Python number computed from a run-time tensor (host round trips)
TENSOR_SCALAR_EXPRS = [
    "float(x.sum())", "int(x.max())", "x.mean().item()", "float(x[0, 0])", "x.sum().asnumpy().item()",
    "len(x.tolist())", "len(str(x))", "float(np.sum(x.asnumpy()))", "float(abs(x).max())",
    "float(sum(x)[0])", "len(list(x))", "len(tuple(x))", "int(id(x) > 0)", "int(hash(x) != 0)",
    "float(max(x.asnumpy().ravel()))", "float(sorted(x.asnumpy().ravel().tolist())[0])",
    "float(math.fsum(x.asnumpy().ravel()))", "round(float(x.sum()), 2)", "int(bool(x.any()))",
    "float(np.square(x.asnumpy()).sum())", "len(repr(x))", "int(isinstance(x, Tensor))",
    "float(x.sum().item())", "len(x.asnumpy().tolist())", "float(min(x.shape))",
]

# statements on a local list `lst` (floats); then `x = x + len(lst)` / `x = x + lst[0]`
LIST_STMTS = [
    "lst.append({a}.0)", "lst.extend([1.0, 2.0])", "lst.insert(0, {f})", "lst.pop()", "lst.pop(0)",
    "lst.remove(lst[0])", "lst.reverse()", "lst.sort()", "lst.sort(reverse=True)",
    "lst.sort(key=lambda v: -v)", "lst.clear()", "lst += [{f}]", "lst = lst + [1.0]", "lst = lst * 2",
    "lst[0] = {f}", "lst[1:2] = [9.0, 8.0]", "lst = lst.copy()", "lst = list(reversed(lst))",
    "lst = sorted(lst)", "lst = [v * 2 for v in lst]", "lst = lst[::-1]",
    "lst.append(lst.index(lst[0]) * 1.0)", "lst.append(lst.count(1.0) * 1.0)", "lst = [*lst, 3.0]",
]

DICT_STMTS = [
    "d['c'] = {f}", "d.update({{'c': 2.0}})", "d.update(c=3.0)", "v{k} = d.get('a')", "v{k} = d.get('z', 1.0)",
    "v{k} = d.pop('a')", "v{k} = d.pop('z', 0.0)", "d.setdefault('e', 1.0)", "d = d.copy()",
    "d.clear()", "v{k} = d.popitem()", "d = dict.fromkeys(['a', 'b'], 1.0)", "d = {{**d, 'f': 1.0}}",
    "d = dict(d, g=2.0)", "v{k} = list(d.keys())", "v{k} = list(d.values())", "v{k} = list(d.items())",
    "v{k} = len(d)", "v{k} = 'a' in d", "v{k} = sorted(d)", "v{k} = [kk for kk in d]",
    "v{k} = {{kk: vv * 2 for kk, vv in d.items()}}", "d['a'] += 1.0", "d = d | {{'h': 1.0}}",
]

TUPLE_STMTS = [
    "v{k} = tup.index(2)", "v{k} = tup.count(1)", "v{k} = tup + (4,)", "v{k} = tup * 2",
    "v{k} = tup[::-1]", "v{k} = len(tup)", "v{k} = 2 in tup", "v{k} = max(tup)", "v{k} = sum(tup)",
    "a{k}, *rest{k} = tup", "v{k} = tuple(sorted(tup))", "v{k} = list(tup)", "v{k} = tup[1:]",
]

TENSOR_STMTS = [
    "x = ops.relu(x)", "x = x.reshape((2, 3))", "x = x * 0.5 + 1", "x = ops.tanh(x)",
    "x = x.clip(-1.0, 1.0)", "x = x - x.mean(axis=1, keep_dims=True)", "x = ops.softmax(x, axis=-1)",
    "x = x.astype(mstype.float32)", "x = ops.concat((x[:, :1], x[:, 1:]), axis=1)",
    "x = ops.stack([x, x]).sum(0) / 2", "x = x.transpose(1, 0).transpose(1, 0)",
    "x = ops.where(x > 0, x, ops.zeros_like(x))", "x = x.swapaxes(0, 1).swapaxes(0, 1)",
    "x = ops.maximum(x, -1.0)", "x = x.sum(axis=0, keepdims=True) + x",
    "x = ops.ones_like(x) * x", "x = x.view(2, 3)", "x = x.squeeze().unsqueeze(0).squeeze(0)",
    "x = ops.abs(x) + x", "x = ms.numpy.exp(x) - 1", "x = x[::1]", "x = x.flatten().reshape(2, 3)",
    "x = ops.cast(x, mstype.float32)", "x = ops.pow(x, 2)", "x = x.pow(2) / 4",
    "x = ms.Tensor(np.ones((2, 3), np.float32)) + x", "x = ops.add(x, 1)",
    "x = ops.matmul(x, ops.eye(3, 3, mstype.float32))", "x = ops.sqrt(ops.abs(x))",
    "x = x.norm(dim=1, keepdim=True) * 0 + x",
]


def _fill(rng: random.Random, template: str, k: int) -> str:
    words = ["alpha", "beta", "gamma", "abba", "tax", "data"]
    return template.format(
        a=rng.randint(1, 4), b=rng.randint(2, 6), f=rng.choice(["0.5", "1.25", "2.75", "3.5"]),
        w=rng.choice(words), k=k,
    )


# --- fragments -------------------------------------------------------------------------------


def f_number(rng: random.Random, k: int) -> Frag:
    e = _fill(rng, rng.choice(NUMBER_EXPRS), k)
    return Frag("number", [f"c{k} = {e}", f"x = x + c{k}"])


def f_tensor_scalar(rng: random.Random, k: int) -> Frag:
    e = _fill(rng, rng.choice(TENSOR_SCALAR_EXPRS), k)
    return Frag("tensor_scalar", [f"c{k} = {e}", f"x = x + c{k} * 0.0"])


def f_tensor_ops(rng: random.Random, k: int) -> Frag:
    return Frag("tensor_ops", [rng.choice(TENSOR_STMTS) for _ in range(rng.randint(1, 3))])


def f_list(rng: random.Random, k: int) -> Frag:
    init = rng.choice(["[1.0, 2.0, 3.0]", "[float(d) for d in x.shape]", "[{f}, 1.0]", "list((4.0, 2.0))"])
    stmts = [_fill(rng, rng.choice(LIST_STMTS), k) for _ in range(rng.randint(1, 2))]
    use = rng.choice(["x = x + len(lst)", "x = x + sum(lst)", "x = x + (lst[0] if lst else 0.0)"])
    return Frag("list", [_fill(rng, f"lst = {init}", k), *stmts, use])


def f_tensor_list(rng: random.Random, k: int) -> Frag:
    stmts = rng.choice(
        [
            ["outs = []", "for i in range(2):", "    outs.append(x * i)", "x = outs[0] + outs[1]"],
            ["outs = [x]", "outs.append(x + 1)", "outs.insert(0, x * 2)", "x = ops.stack(outs).mean(0)"],
            ["outs = [x, x * 2]", "outs.reverse()", "x = outs.pop()"],
            ["outs = [x, x + 1]", "outs[0] = x * 3", "x = sum(outs) / 4"],
            ["outs = [x, x + 1]", "outs.extend([x - 1])", "x = ops.concat(outs, 0)[:2]"],
            ["outs = [x] * 2", "x = ops.addn(outs) / 2"],
            ["outs = [x, x]", "x = outs[len(outs) - 1]"],
            ["outs = [r for r in x]", "x = ops.stack(outs)"],
            ["outs = list(ops.split(x, 1, axis=0))", "x = ops.concat(outs, 0)"],
            ["outs = [x]", "outs.clear()", "outs.append(x)", "x = outs[0]"],
        ]
    )
    return Frag("tensor_list", stmts)


def f_dict(rng: random.Random, k: int) -> Frag:
    init = rng.choice(["{'a': 1.0, 'b': 2.0}", "dict(a=1.0, b=2.0)", "{'a': x.shape[0] * 1.0, 'b': 0.5}"])
    stmts = [_fill(rng, rng.choice(DICT_STMTS), k) for _ in range(rng.randint(1, 2))]
    return Frag("dict", [f"d = {init}", *stmts, "x = x + len(d)"])


def f_tensor_dict(rng: random.Random, k: int) -> Frag:
    stmts = rng.choice(
        [
            ["feats = {'a': x, 'b': x * 2}", "x = feats['a'] + feats.get('b')"],
            ["feats = {}", "feats['y'] = x + 1", "x = feats['y']"],
            ["feats = {'a': x}", "feats.update({'b': x})", "x = feats['a'] + feats['b']"],
            ["feats = dict(a=x)", "for name, val in feats.items():", "    x = val + len(name)"],
            ["feats = {'a': x}", "x = feats.pop('a')"],
            ["feats = {'a': x, 'b': x}", "x = sum(feats.values()) / 2"],
            ["feats = {'a': x}", "x = feats.setdefault('a', x)"],
            ["feats = {'a': x}", "feats2 = feats.copy()", "x = feats2['a']"],
        ]
    )
    return Frag("tensor_dict", stmts)


def f_tuple(rng: random.Random, k: int) -> Frag:
    st = _fill(rng, rng.choice(TUPLE_STMTS), k)
    return Frag("tuple", ["tup = (1, 2, 3)", st, "x = x + len(tup)"])


def f_subcell(rng: random.Random, k: int) -> Frag:
    choice = rng.randrange(6)
    if choice == 0:
        return Frag("subcell", [f"x = self.fc{k}(x)"], init=[f"self.fc{k} = nn.Dense(3, 3)"], needs_self=True)
    if choice == 1:
        act = rng.choice(["nn.ReLU()", "nn.Tanh()", "nn.Sigmoid()", "nn.GELU()"])
        return Frag(
            "sequential",
            [f"x = self.seq{k}(x)"],
            init=[f"layers = [nn.Dense(3, 3), {act}]", f"self.seq{k} = nn.SequentialCell(layers)"],
            needs_self=True,
        )
    if choice == 2:
        n = rng.randint(1, 3)
        loop = rng.choice(
            [
                [f"for blk in self.blocks{k}:", "    x = blk(x)"],
                [f"for i in range(len(self.blocks{k})):", f"    x = self.blocks{k}[i](x)"],
                [f"for i, blk in enumerate(self.blocks{k}):", "    x = blk(x) + i"],
            ]
        )
        return Frag(
            "celllist",
            loop,
            module=_lines(
                f"""
                class Block{k}(nn.Cell):
                    def __init__(self, dim):
                        super().__init__()
                        self.fc = nn.Dense(dim, dim)
                        self.act = nn.ReLU()

                    def construct(self, x):
                        return self.act(self.fc(x)) + x
                """
            ),
            init=[f"self.blocks{k} = nn.CellList([Block{k}(3) for _ in range({n})])"],
            needs_self=True,
        )
    if choice == 3:
        return Frag(
            "norm",
            [f"x = self.norm{k}(x)", f"x = self.drop{k}(x)"],
            init=[f"self.norm{k} = nn.LayerNorm((3,))", f"self.drop{k} = nn.Dropout(p=0.0)"],
            needs_self=True,
        )
    if choice == 4:
        return Frag(
            "param",
            [rng.choice([f"x = x * self.w{k}", f"x = x + self.w{k}.sum()", f"x = ops.mul(x, self.w{k})"])],
            init=[f"self.w{k} = Parameter(Tensor(np.ones((3,), np.float32)), name='w{k}')"],
            needs_self=True,
        )
    kw = rng.choice(["x = self.res{k}(x, scale=0.5)", "x = self.res{k}(x)", "x = self.res{k}(x, 0.5)"])
    return Frag(
        "subcell_kwargs",
        [kw.format(k=k)],
        module=_lines(
            f"""
            class Residual{k}(nn.Cell):
                def __init__(self):
                    super().__init__()
                    self.fc = nn.Dense(3, 3)

                def construct(self, x, scale=1.0):
                    return x + self.fc(x) * scale
            """
        ),
        init=[f"self.res{k} = Residual{k}()"],
        needs_self=True,
    )


def f_flag(rng: random.Random, k: int) -> Frag:
    """A config flag from the constructor folded while compiling; the untaken side may hold
    code MindSpore would reject if it were compiled."""
    value = rng.choice(["True", "False"])
    risky = rng.choice(
        [
            "x = Tensor(np.square(x.asnumpy()))",
            "x = x + float(x.sum()) * 0.0",
            "x = x * 2",
            "x = x + len(sorted(x.asnumpy().tolist()))",
            "x = ops.relu(x)",
        ]
    )
    cond = rng.choice([f"self.flag{k}", f"not self.flag{k}", f"self.mode{k} == 'train'"])
    init = [f"self.flag{k} = use_flag{k}", f"self.mode{k} = 'train' if use_flag{k} else 'eval'"]
    body = [f"if {cond}:", f"    {risky}", "else:", "    x = x - 1"]
    return Frag("flag", body, init=init, needs_self=True, params={f"use_flag{k}": value})


def f_branch(rng: random.Random, k: int) -> Frag:
    kind = rng.randrange(9)
    if kind == 0:
        return Frag("if_tensor", ["if x.sum() > 0:", "    x = x * 2", "else:", "    x = x - 1"])
    if kind == 1:
        return Frag("if_shape", ["if x.shape[0] > 1:", "    x = x + 1", "else:", "    x = x - 1"])
    if kind == 2:
        return Frag("if_const", [f"n{k} = {rng.randint(1, 4)}", f"if n{k} > 2:", "    x = x + n" + str(k)])
    if kind == 3:
        v = rng.choice(["1.0", "x.sum()", "x[0, 0]", "ops.zeros((), mstype.float32)", "None", "(x, x)"])
        return Frag(
            "if_join",
            [f"y{k} = {v}", "if x.mean() > 0:", f"    y{k} = x.max()", f"x = x + 0 * y{k}" if v not in ("None", "(x, x)") else "x = x + 1"],
        )
    if kind == 4:
        return Frag("while_tensor", [f"i{k} = 0", f"while x.sum() < 30 and i{k} < 5:", "    x = x + 1", f"    i{k} += 1"])
    if kind == 5:
        return Frag("while_const", [f"j{k} = 0", f"while j{k} < 3:", "    x = x * 0.5", f"    j{k} = j{k} + 1"])
    if kind == 6:
        body = rng.choice(
            [
                ["for s in (1.0, 2.0):", "    x = x + s"],
                ["for i, s in enumerate([0.5, 0.25]):", "    x = x * s + i"],
                ["for a, b in zip((1, 2), (3, 4)):", "    x = x + a * b"],
                ["for r in range(x.shape[0]):", "    x = x + r"],
                ["for i in range(3):", "    if i == 1:", "        continue", "    x = x + i"],
                ["for i in range(4):", "    if i > 1:", "        break", "    x = x + i"],
                ["for row in x:", "    x = x + row.sum() * 0"],
            ]
        )
        return Frag("for", body)
    if kind == 7:
        return Frag("ifexp", [rng.choice(["x = x * 2 if x.sum() > 0 else x - 1", "x = x if x.shape[0] == 2 else x * 0", "x = (x > 0) and x or x"])])
    return Frag(
        "if_dtype",
        ["if x.sum() > 0:", rng.choice(["    z = x.astype(mstype.int32)", "    z = x * 2"]), "else:", "    z = x", "x = x + z"],
    )


def f_helper_mutation(rng: random.Random, k: int) -> Frag:
    kind = rng.randrange(4)
    if kind == 0:
        return Frag(
            "helper_list_mut",
            [f"items = collect{k}([x], x)", "x = items[-1]"],
            module=_lines(f"def collect{k}(items, v):\n    items.append(v * 2)\n    return items"),
        )
    if kind == 1:
        return Frag(
            "helper_dict_mut",
            [f"cfg = fill{k}({{'a': 1.0}})", "x = x + cfg['b']"],
            module=_lines(f"def fill{k}(cfg):\n    cfg['b'] = 2.0\n    return cfg"),
        )
    if kind == 2:
        return Frag(
            "helper_list_new",
            [f"items = extend{k}([x])", "x = items[0] + items[1]"],
            module=_lines(f"def extend{k}(items):\n    out = list(items)\n    out.append(items[0] + 1)\n    return out"),
        )
    return Frag(
        "helper_kwargs",
        [f"x = combine{k}(x, *[1.0], scale=2.0, **{{'shift': 0.5}})"],
        module=_lines(f"def combine{k}(t, *extra, scale=1.0, **opts):\n    return t * scale + sum(extra) + opts.get('shift', 0.0)"),
    )


def f_closure(rng: random.Random, k: int) -> Frag:
    kind = rng.randrange(5)
    if kind == 0:
        return Frag("closure", [f"k{k} = 2.0", f"def mul{k}(t):", f"    return t * k{k}", f"x = mul{k}(x)"])
    if kind == 1:
        return Frag("lambda", [f"fn{k} = lambda t: t + 1", f"x = fn{k}(x)"])
    if kind == 2:
        return Frag(
            "factory",
            [f"x = self.fn{k}(x)"],
            module=_lines(f"def make_scale{k}(s):\n    def scale(t):\n        return t * s\n    return scale"),
            init=[f"self.fn{k} = make_scale{k}(0.5)"],
            needs_self=True,
        )
    if kind == 3:
        return Frag(
            "partial",
            [f"x = self.fn{k}(x)"],
            module=_lines(f"def shift{k}(t, s):\n    return t + s"),
            init=[f"self.fn{k} = functools.partial(shift{k}, s=1.0)"],
            needs_self=True,
        )
    return Frag(
        "decorated",
        [f"x = wrapped{k}(x)"],
        module=_lines(
            f"""
            def logged{k}(fn):
                @functools.wraps(fn)
                def wrapper(*args, **kwargs):
                    return fn(*args, **kwargs)
                return wrapper


            @logged{k}
            def wrapped{k}(t):
                return t * 2
            """
        ),
    )


def f_jit(rng: random.Random, k: int) -> Frag:
    kind = rng.randrange(3)
    if kind == 0:
        return Frag("jit_fn", [f"x = fused{k}(x)"], module=_lines(f"@ms.jit\ndef fused{k}(t):\n    return ops.relu(t) + 1"))
    if kind == 1:
        return Frag(
            "jit_class",
            [f"x = self.scaler{k}.apply(x)"],
            module=_lines(
                f"""
                @ms.jit_class
                class Scaler{k}:
                    def __init__(self, k):
                        self.k = k

                    def apply(self, t):
                        return t * self.k
                """
            ),
            init=[f"self.scaler{k} = Scaler{k}(2.0)"],
            needs_self=True,
        )
    return Frag(
        "plain_class",
        [f"x = self.cfg{k}.scale * x + self.cfg{k}.offset()"],
        module=_lines(
            f"""
            class Config{k}:
                def __init__(self, scale):
                    self.scale = scale

                def offset(self):
                    return self.scale / 2
            """
        ),
        init=[f"self.cfg{k} = Config{k}(2.0)"],
        needs_self=True,
    )


def f_self_attr(rng: random.Random, k: int) -> Frag:
    kind = rng.randrange(8)
    if kind == 0:
        return Frag("self_int", [f"x = x * self.scale{k}"], init=[f"self.scale{k} = {rng.choice(['2', '0.5', 'scale' + str(k)])}"], needs_self=True, params={f"scale{k}": "3"})
    if kind == 1:
        return Frag("self_tuple", [f"for s in self.sizes{k}:", "    x = x + s"], init=[f"self.sizes{k} = (1, 2)"], needs_self=True)
    if kind == 2:
        return Frag("self_list", [f"for s in self.sizes{k}:", "    x = x + s"], init=[f"self.sizes{k} = [1, 2]"], needs_self=True)
    if kind == 3:
        return Frag("self_dict", [f"x = x * self.opts{k}['scale']"], init=[f"self.opts{k} = {{'scale': 2.0}}"], needs_self=True)
    if kind == 4:
        return Frag("self_counter", [f"self.count{k} += 1", "x = x + 1"], init=[f"self.count{k} = 0"], needs_self=True)
    if kind == 5:
        return Frag("self_getattr", [f"x = getattr(self, 'fc{k}')(x)"], init=[f"self.fc{k} = nn.Dense(3, 3)"], needs_self=True)
    if kind == 6:
        return Frag("self_training", ["if self.training:", "    x = x * 1.0", "else:", "    x = x + 0.0"], needs_self=True)
    return Frag(
        "cell_method",
        [rng.choice([f"x = x + len(self.fc{k}.weight.shape)", f"x = x + self.fc{k}.in_channels", f"x = x * self.fc{k}.has_bias",
                     f"x = x + len(self.fc{k}.trainable_params())", f"x = x + len(list(self.fc{k}.cells()))",
                     f"x = x + len(self.fc{k}.weight.name)", "x = x + len(self.parameters_dict())"])],
        init=[f"self.fc{k} = nn.Dense(3, 3)"],
        needs_self=True,
    )


def f_misc(rng: random.Random, k: int) -> Frag:
    return Frag(
        "misc",
        [rng.choice(
            [
                "print('step', x.shape)", "print(x)", "print(f'{x.shape}')", "print('a', 'b', sep='-')",
                "assert x.shape[0] == 2", "assert x.ndim == 2, 'rank'", "x = x + (1 if x is not None else 0)",
                "s = f'{x.shape[0]}-{x.dtype}'", "t = type(x)", "x = x + int(isinstance(x, (Tensor, tuple)))",
                "x = ops.stop_gradient(x)", "x = x + ops.scalar_to_tensor(2.0)",
                "x = x + Tensor(np.array([1.0, 2.0, 3.0]).astype(np.float32))",
                "x = x + Tensor([1.0, 2.0, 3.0], mstype.float32)", "x = x + ms.Tensor(2.0)",
                "a, b = x.shape", "x = x.asnumpy() if False else x",
                "n = x.shape[0] * 2", "x = x[:, ::-1] if False else x",
            ]
        )],
    )


def f_structure(rng: random.Random, k: int) -> Frag:
    """Module-level structure real networks use: overrides, optional inputs, early returns,
    properties, config objects, static methods, tuple-returning helpers."""
    kind = rng.randrange(8)
    risky = rng.choice(["t = Tensor(np.square(t.asnumpy()))", "t = t * 2", "t = t + float(t.sum()) * 0.0", "t = ops.relu(t)"])
    if kind == 0:
        return Frag(
            "override",
            [f"x = self.blk{k}(x)"],
            module=_lines(
                f"""
                class Base{k}(nn.Cell):
                    def __init__(self):
                        super().__init__()

                    def act(self, t):
                        {risky}
                        return t

                    def construct(self, t):
                        return self.act(t) + 1


                class Child{k}(Base{k}):
                    def act(self, t):
                        return ops.tanh(t)
                """
            ),
            init=[f"self.blk{k} = {rng.choice(['Child', 'Base'])}{k}()"],
            needs_self=True,
        )
    if kind == 1:
        flag = rng.choice(["True", "False"])
        return Frag(
            "subcell_flag",
            [f"x = self.gate{k}(x)"],
            module=_lines(
                f"""
                class Gate{k}(nn.Cell):
                    def __init__(self, use_host=False):
                        super().__init__()
                        self.use_host = use_host

                    def construct(self, t):
                        if self.use_host:
                            {risky}
                        return t
                """
            ),
            init=[f"self.gate{k} = Gate{k}(use_host={flag})"],
            needs_self=True,
        )
    if kind == 2:
        call = rng.choice([f"x = self.masked{k}(x)", f"x = self.masked{k}(x, x > 0)"])
        return Frag(
            "optional_arg",
            [call],
            module=_lines(
                f"""
                class Masked{k}(nn.Cell):
                    def construct(self, t, mask=None):
                        if mask is not None:
                            t = ops.where(mask, t, ops.zeros_like(t))
                        return t
                """
            ),
            init=[f"self.masked{k} = Masked{k}()"],
            needs_self=True,
        )
    if kind == 3:
        cond = rng.choice(["t.sum() > 0", "t.shape[0] > 1", "scale > 1"])
        tail = rng.choice(["return t - 1", "return (t, t)", "return None", "return 0", "return t.astype(mstype.int32)"])
        return Frag(
            "early_return",
            [f"y{k} = pick{k}(x, 2)", f"x = x + 0 * y{k}" if "(t, t)" not in tail and "None" not in tail else "x = x + 1"],
            module=_lines(
                f"""
                def pick{k}(t, scale):
                    if {cond}:
                        return t * scale
                    {tail}
                """
            ),
        )
    if kind == 4:
        return Frag(
            "property",
            [f"x = x * self.head{k}.scale + self.head{k}.bias_value"],
            module=_lines(
                f"""
                class Head{k}(nn.Cell):
                    def __init__(self, scale):
                        super().__init__()
                        self._scale = scale

                    @property
                    def scale(self):
                        return self._scale * 2

                    @property
                    def bias_value(self):
                        return 0.5
                """
            ),
            init=[f"self.head{k} = Head{k}(1.5)"],
            needs_self=True,
        )
    if kind == 5:
        use = rng.choice(["True", "False"])
        return Frag(
            "config_object",
            [f"if self.cfg{k}.use_norm:", f"    x = self.norm{k}(x)", f"x = x * self.cfg{k}.scale"],
            module=_lines(
                f"""
                class Cfg{k}:
                    def __init__(self, use_norm, scale=1.0):
                        self.use_norm = use_norm
                        self.scale = scale
                """
            ),
            init=[f"self.cfg{k} = Cfg{k}({use})", f"self.norm{k} = nn.LayerNorm((3,))"],
            needs_self=True,
        )
    if kind == 6:
        return Frag(
            "staticmethod",
            [f"x = Util{k}.clamp(x, {rng.choice(['1.0', '2.0'])})"],
            module=_lines(
                f"""
                class Util{k}:
                    @staticmethod
                    def clamp(t, hi):
                        return ops.clip_by_value(t, -hi, hi)
                """
            ),
        )
    return Frag(
        "tuple_helper",
        [f"a{k}, b{k} = split{k}(x)", f"x = a{k} + b{k}"],
        module=_lines(
            f"""
            def split{k}(t):
                half = t * 0.5
                return half, t - half
            """
        ),
    )


FRAGMENTS = [
    (f_number, 6), (f_tensor_scalar, 3), (f_tensor_ops, 3), (f_list, 4), (f_tensor_list, 3), (f_dict, 3),
    (f_tensor_dict, 2), (f_tuple, 2), (f_subcell, 4), (f_flag, 2), (f_branch, 4), (f_helper_mutation, 2),
    (f_closure, 3), (f_jit, 2), (f_self_attr, 3), (f_misc, 2), (f_structure, 5),
]


# --- placement ---------------------------------------------------------------------------------


def _indent(lines: list[str], n: int) -> list[str]:
    return [(" " * n + s) if s else s for s in lines]


@dataclass
class Program:
    module: list[str] = field(default_factory=list)
    init: list[str] = field(default_factory=list)
    body: list[str] = field(default_factory=list)
    methods: list[str] = field(default_factory=list)
    params: dict[str, str] = field(default_factory=dict)
    tags: list[str] = field(default_factory=list)


def _place(rng: random.Random, prog: Program, frag: Frag, k: int, cell_root: bool) -> str:
    prog.module.extend(frag.module + ([""] if frag.module else []))
    if frag.needs_self:
        where = rng.choice(["inline", "inline", "method", "subcell"]) if cell_root else "inline"
    else:
        options = ["inline", "inline", "helper", "closure", "jit_fn", "jit_class"]
        if cell_root:
            options += ["method", "subcell"]
        where = rng.choice(options)
    body = frag.body
    if where == "inline":
        prog.init.extend(frag.init)
        prog.body.extend(body)
    elif where == "helper":
        prog.module.extend([f"def stage{k}(x):", *_indent(body, 4), "    return x", "", ""])
        prog.body.append(f"x = stage{k}(x)")
    elif where == "closure":
        prog.body.extend([f"def stage{k}(x):", *_indent(body, 4), "    return x", f"x = stage{k}(x)"])
    elif where == "jit_fn":
        prog.module.extend(["@ms.jit", f"def stage{k}(x):", *_indent(body, 4), "    return x", "", ""])
        prog.body.append(f"x = stage{k}(x)")
    elif where == "jit_class":
        prog.module.extend(
            ["@ms.jit_class", f"class Stage{k}:", "    def __init__(self):", "        self.k = 1", "",
             "    def run(self, x):", *_indent(body, 8), "        return x", "", ""]
        )
        if cell_root:
            prog.init.append(f"self.stage{k} = Stage{k}()")
            prog.body.append(f"x = self.stage{k}.run(x)")
        else:
            prog.module.append(f"stage{k} = Stage{k}()")
            prog.module.extend(["", ""])
            prog.body.append(f"x = stage{k}.run(x)")
    elif where == "method":
        prog.init.extend(frag.init)
        prog.methods.extend(["", f"    def stage{k}(self, x):", *_indent(body, 8), "        return x"])
        prog.body.append(f"x = self.stage{k}(x)")
    else:  # a sub-cell holding the fragment in its own construct (and its own __init__ lines)
        args = ", ".join(f"{p}={v}" for p, v in frag.params.items())
        prog.module.extend(
            [f"class Stage{k}(nn.Cell):", f"    def __init__(self{', ' + args if args else ''}):",
             "        super().__init__()", *_indent(frag.init, 8), "",
             "    def construct(self, x):", *_indent(body, 8), "        return x", "", ""]
        )
        prog.init.append(f"self.stage{k} = Stage{k}()")
        prog.body.append(f"x = self.stage{k}(x)")
        return where
    prog.params.update(frag.params)
    return where


#: the first seed of generator version 2 (stored seeds below it were judged as version 1)
V2_FROM = 9_500_000
#: the first seed of generator version 3 (`gen_v3.py`: idioms of human-written code)
V3_FROM = 9_800_000
#: the first seed of generator version 4 (`gen_v4.py`: train-step and jit roots, continue joins, random draws)
V4_FROM = 9_900_000
#: the first seed of generator version 5 (`gen_v5.py`: the Python habits of PyTorch users in compiled code)
V5_FROM = 10_000_000
#: the first seed of generator version 6 (`gen_v6.py`: while loops, host-value keys, state across calls and
#: shared between sub-cells, functional transforms, mint, config-row cells, recurrences, beams, dynamic roots)
V6_FROM = 12_000_000


def generate(seed: int) -> str:
    """One whole program for `seed` (same seed, same text)."""
    if seed >= V6_FROM:
        from gen_v6 import generate_v6

        return generate_v6(seed)
    if seed >= V5_FROM:
        from gen_v5 import generate_v5

        return generate_v5(seed)
    if seed >= V4_FROM:  # its own composition; the seeds below take version 1-3's path exactly
        from gen_v4 import generate_v4

        return generate_v4(seed)
    rng = random.Random(seed)
    v2 = seed >= V2_FROM
    v3 = seed >= V3_FROM
    cell_root = rng.random() < 0.8
    prog = Program()
    fragments, train, ret = FRAGMENTS, False, "return x"
    if v2:
        from gen_v2 import OUTPUTS, V2_FRAGMENTS, train_root

        fragments = FRAGMENTS + V2_FRAGMENTS
        train = cell_root and rng.random() < (0.3 if v3 else 0.2)
        ret = rng.choice(OUTPUTS) if not train and rng.random() < 0.3 else "return x"
    if v3:  # the seeds below V3_FROM take version 2's path exactly
        from gen_v3 import V3_FRAGMENTS

        fragments = fragments + V3_FRAGMENTS
    makers = [m for m, w in fragments for _ in range(w)]
    for k in range(rng.choice([1, 1, 2, 2, 3])):
        frag = rng.choice(makers)(rng, k)
        while frag.needs_self and not cell_root:  # a jit function has no `self`
            frag = rng.choice(makers)(rng, k)
        where = _place(rng, prog, frag, k, cell_root)
        prog.tags.append(f"{frag.tag}@{where}")
    # a jit train step runs in PyNative mode, as MindSpore 2.x's tutorials write it (said
    # explicitly: a batch judges many cases in one process): under GRAPH_MODE with MS_JIT=0,
    # `ms.value_and_grad` inside `@ms.jit` recurses without end
    head = HEAD.replace("mode=ms.GRAPH_MODE", "mode=ms.PYNATIVE_MODE") if v2 and train else HEAD
    out = [f"# difftest seed={seed}", f"# idioms: {' '.join(prog.tags)}", head, ""]
    out.extend(prog.module)
    x_init = "x = Tensor(np.arange(6).reshape(2, 3).astype(np.float32) - 2.5)"
    if not cell_root:
        out.extend([f"@ms.jit{rng.choice(['', '(fullgraph=False)'])}", "def step(x):", *_indent(prog.body, 4),
                    f"    {ret}" if v2 else "    return x", "", ""])
        out.extend([x_init, "print(step(x))", ""])
        return "\n".join(out)
    base = rng.random() < 0.3
    if v2 and train:
        prog.init.append("self.out_fc = nn.Dense(3, 3)")
    args = "".join(f", {p}={v}" for p, v in prog.params.items())
    if base:
        out.extend(
            ["class BaseNet(nn.Cell):", "    def __init__(self):", "        super().__init__()",
             "        self.base_scale = 1.0", "", "    def head(self, x):", "        return x * self.base_scale", "", ""]
        )
    out.append(f"class Net({'BaseNet' if base else 'nn.Cell'}):")
    out.append(f"    def __init__(self{args}):")
    out.append("        super().__init__()")
    out.extend(_indent(prog.init, 8))
    out.append("")
    out.append("    def construct(self, x):")
    out.extend(_indent(prog.body or ["x = x + 1"], 8))
    if base:
        out.append("        x = self.head(x)")
    if v2 and train:  # the train step needs a weight whatever the fragments hold
        out.append("        x = self.out_fc(x)")
    out.append(f"        {ret}" if v2 else "        return x")
    out.extend(prog.methods)
    out.extend(["", ""])
    ctor = ", ".join(f"{p}={v}" for p, v in prog.params.items() if rng.random() < 0.5)
    if v2 and train:
        out.extend(train_root(rng, f"Net({ctor})", x_init))
    else:
        out.extend([f"net = Net({ctor})", x_init, "print(net(x))", ""])
    return "\n".join(out)


if __name__ == "__main__":
    import sys

    print(generate(int(sys.argv[1]) if len(sys.argv) > 1 else 0))
