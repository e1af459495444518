"""Fragment families of generator version 2 (seeds from `generator.V2_FROM` on).

Version 1 composes idioms the checker already knows; these families aim at what MindSpore 2.10's
static graph syntax makes hard (its documented limits: host values of run-time tensors consumed by
compile-time Python, joins of different types and dtypes under tensor conditions, containers
carried through loops, dynamic shapes, `print` keywords, exceptions and `assert` on tensors,
`del`/`with`/`nonlocal`/generators, what STRICT forbids, and gradients with optimizers in jit
steps). Each family mixes rejected programs with accepted neighbours (the same consumer on a
compile-time value, the same join of one type, the same loop without a tensor condition), so a
checker that flags the whole family loses as much as one that flags none of it.

Every fragment keeps `x` a float32 tensor of shape (2, 3) in PyNative; values are chosen so each
program runs there (a case counts only when PyNative accepts it).
"""

from __future__ import annotations

import random

from generator import Frag, _lines

# --- host numbers of run-time tensors and what consumes them ---------------------------------------
# Each source is an int 1 or 2 (at run time for the first group, while compiling for the second).
HOST_INTS = [
    "int(x.sum() * 0 + 1)", "int((x * 0 + 1).max())", "int(x.shape[0] + x.sum() * 0)",
    "int((x.sum() * 0 + 2).item())", "int(x.mean() * 0 + 2)", "len(x.tolist())",
    "int((x > -1e9).all())", "int(x.max() >= x.min()) + 1", "round(float(x.sum() * 0 + 1))",
    "int(x.asnumpy().shape[0])", "int(ops.ones((), mstype.int32))", "int(Tensor(2))",
]
CONST_INTS = ["x.shape[0] - 1", "len(x)", "x.ndim - 1", "x.shape[-1] - 1", "int(x.shape[0])", "min(x.shape) - 1"]
INT_USES = [
    ["x = x + [0.5, 1.0, 1.5][n{k}]"], ["x = x + {{1: 0.5, 2: 1.0}}[n{k}]"], ["x = x + (0.5, 1.0, 1.5)[n{k}]"],
    ["x = x + ops.zeros((n{k}, 3), mstype.float32).sum()"], ["x = x + ops.ones((2, 3 * n{k}), mstype.float32)[:, :3]"],
    ["for i in range(n{k}):", "    x = x + i"], ["x = x + x[:n{k}].sum()"], ["x = x + x.shape[n{k} - 1]"],
    ["x = x + len('ab' * n{k})"], ["x = x + Tensor(np.ones((n{k}, 3), np.float32)).sum()"],
    ["if n{k} > 1:", "    x = x + 1"], ["x = x * n{k}"], ["x = x + float(n{k}) / 2"], ["x = x + math.sqrt(n{k})"],
    ["x = x + ops.tile(x[:1], (n{k}, 1)).sum()"], ["x = x + x[n{k} - 1]"], ["x = x + str(n{k}).count('1')"],
    ["x = x + np.arange(n{k}).sum()"], ["lst{k} = [x] * n{k}", "x = lst{k}[0]"], ["x = x.reshape((2, 3 * n{k} // n{k}))"],
    ["x = x + ops.full((n{k},), 1.0, dtype=mstype.float32).sum()"], ["x = x + sum(range(n{k}))"],
    ["x = x + x[:, n{k}:].sum()"], ["x = x + ms.numpy.ones((n{k}, 3)).sum()"],
]


def f_host_int(rng: random.Random, k: int) -> Frag:
    src = rng.choice(HOST_INTS) if rng.random() < 0.7 else rng.choice(CONST_INTS)
    use = [s.format(k=k) for s in rng.choice(INT_USES)]
    return Frag("host_int", [f"n{k} = {src}", *use])


# --- joins under conditions -------------------------------------------------------------------------
# (value a, value b, a use of y that works for both in PyNative)
JOIN_PAIRS = [
    ("1", "2.0", "x = x + y{k}"), ("x", "x.astype(mstype.int32)", "x = x + y{k}"),
    ("x", "x.astype(mstype.float16)", "x = x + y{k}"), ("x", "None", "x = x if y{k} is None else y{k}"),
    ("(x, x)", "x", "x = x + 1"), ("(x, x)", "(x, x * 2)", "x = y{k}[0] + y{k}[1]"), ("[x]", "[x, x]", "x = y{k}[0]"),
    ("'a'", "'bb'", "x = x + len(y{k})"), ("x", "1.0", "x = x + y{k}"), ("x.sum()", "x[0]", "x = x + y{k}"),
    ("x", "x[:1]", "x = x + y{k}"), ("{{'a': x}}", "{{'a': x * 2}}", "x = y{k}['a']"), ("1", "x.sum()", "x = x + y{k}"),
    ("0", "x.max()", "x = x + y{k}"), ("x.shape", "(2, 3)", "x = x + y{k}[0]"),
    ("ops.zeros((2, 3))", "ops.zeros((2, 3), mstype.int32)", "x = x + y{k}"), ("x * 2", "x - 1", "x = x + y{k}"),
    ("1", "2", "x = x + y{k}"), ("np.ones(3)", "np.zeros(3)", "x = x + Tensor(y{k}, mstype.float32)"),
    ("x.sum()", "x.mean()", "x = x + y{k}"), ("True", "False", "x = x + y{k}"), ("[1, 2]", "[3]", "x = x + len(y{k})"),
    ("x", "ops.ones((3,))", "x = x + y{k}"), ("x.sum() > 0", "x.max() > 1", "x = x + y{k}"),
]
TENSOR_CONDS = ["x.sum() > 0", "x.max() > 1", "(x > 0).any()", "x[0, 0] < 0", "x.mean() >= 0"]
CONST_CONDS = ["x.shape[0] > 1", "x.ndim == 2", "len(x) == 3"]


def f_join(rng: random.Random, k: int) -> Frag:
    a, b, use = rng.choice(JOIN_PAIRS)
    a, b, use = a.format(k=k), b.format(k=k), use.format(k=k)
    if rng.random() < 0.5:
        a, b = b, a
    cond = rng.choice(TENSOR_CONDS) if rng.random() < 0.75 else rng.choice(CONST_CONDS)
    form = rng.randrange(7)
    if form == 0:
        body = [f"if {cond}:", f"    y{k} = {a}", "else:", f"    y{k} = {b}"]
    elif form == 1:
        body = [f"y{k} = {b}", f"if {cond}:", f"    y{k} = {a}"]
    elif form == 2:
        body = [f"y{k} = {a} if {cond} else {b}"]
    elif form == 3:
        body = [f"y{k} = ({cond}) and {a} or {b}" if rng.random() < 0.5 else f"y{k} = {a} if {cond} and x.shape[0] == 2 else {b}"]
    elif form == 4:
        return Frag(
            "join_return",
            [f"y{k} = pick{k}(x)", use],
            module=_lines(f"def pick{k}(x):\n    if {cond}:\n        return {a}\n    return {b}"),
        )
    elif form == 5:
        wcond = rng.choice(["x.sum() > -100", "x.max() < 100", "x.shape[0] > 0"])
        body = [f"y{k} = {b}", f"i{k} = 0", f"while {wcond} and i{k} < 2:", f"    y{k} = {a}", f"    i{k} += 1"]
    else:
        body = [f"y{k} = {b}", "for i in range(2):", f"    if {cond.replace('0', 'i') if rng.random() < 0.3 else cond}:", f"        y{k} = {a}"]
    return Frag(f"join{form}", [*body, use])


# --- containers and strings carried through loops ---------------------------------------------------
LOOP_STATE = [
    ["s{k} = ''", "for i in range(3):", "    s{k} = s{k} + str(i)", "x = x + len(s{k})"],
    ["s{k} = ''", "i{k} = 0", "while x.sum() > -100 and i{k} < 2:", "    s{k} += 'a'", "    i{k} += 1", "x = x + len(s{k})"],
    ["d{k} = {{}}", "for i in range(2):", "    d{k}['k' + str(i)] = x * i", "x = x + d{k}['k1']"],
    ["d{k} = {{'n': 0}}", "for i in range(3):", "    if x.sum() > i:", "        d{k}['n'] = d{k}['n'] + 1", "x = x + d{k}['n']"],
    ["lst{k} = []", "for i in range(3):", "    if x.max() > i:", "        lst{k}.append(i)", "x = x + len(lst{k})"],
    ["lst{k} = [0.0]", "i{k} = 0", "while x.sum() < 100 and i{k} < 2:", "    lst{k}.append(1.0)", "    i{k} += 1", "x = x + sum(lst{k})"],
    ["lst{k} = []", "for row in x:", "    lst{k}.append(row.sum())", "x = x + ops.stack(lst{k}).sum()"],
    ["d{k} = {{}}", "for i, row in enumerate(x):", "    d{k}[i] = row", "x = x + d{k}[0]"],
    ["names{k} = []", "for i in range(2):", "    names{k}.append(f'n{{i}}')", "x = x + len('-'.join(names{k}))"],
    ["acc{k} = x", "total{k} = 0", "for i in range(3):", "    total{k} += i", "    acc{k} = acc{k} + total{k}", "x = acc{k}"],
    ["lst{k} = [1.0, 2.0]", "while len(lst{k}) < 4:", "    lst{k}.append(0.5)", "x = x + sum(lst{k})"],
    ["lst{k} = [x]", "for i in range(2):", "    lst{k} = lst{k} + [lst{k}[-1] * 0.5]", "x = lst{k}[-1]"],
    ["d{k} = {{'a': x}}", "while x.sum() > 100:", "    d{k}['a'] = d{k}['a'] - 1", "    x = x - 1", "x = d{k}['a']"],
    ["s{k} = 'a'", "if x.sum() > 0:", "    s{k} = s{k} + 'b'", "x = x + len(s{k})"],
    ["lst{k} = []", "if x.sum() > 0:", "    lst{k}.append(1)", "x = x + len(lst{k})"],
    ["lst{k} = []", "if x.shape[0] > 0:", "    lst{k}.append(1)", "x = x + len(lst{k})"],
    ["cnt{k} = 0", "for row in x:", "    if row.sum() > 0:", "        cnt{k} += 1", "x = x + cnt{k}"],
    ["cnt{k} = 0", "i{k} = 0", "while i{k} < x.shape[0]:", "    cnt{k} = cnt{k} + i{k}", "    i{k} += 1", "x = x + cnt{k}"],
    ["d{k} = {{}}", "for name in ('a', 'b'):", "    d{k}[name] = len(name)", "x = x + d{k}['b']"],
    ["t{k} = ()", "for i in range(3):", "    t{k} = t{k} + (i,)", "x = x + len(t{k})"],
    ["t{k} = ()", "i{k} = 0", "while x.max() > -100 and i{k} < 2:", "    t{k} = t{k} + (i{k},)", "    i{k} += 1", "x = x + len(t{k})"],
    ["m{k} = x", "for i in range(2):", "    m{k} = m{k}.astype(mstype.float16) if i == 0 else m{k}.astype(mstype.float32)", "x = x + m{k}"],
    ["m{k} = 0", "i{k} = 0", "while x.sum() > -100 and i{k} < 2:", "    m{k} = m{k} + x.sum()", "    i{k} += 1", "x = x + m{k}"],
    ["m{k} = 0", "for i in range(2):", "    m{k} = m{k} + x.sum()", "x = x + m{k}"],
]


def f_loop_state(rng: random.Random, k: int) -> Frag:
    return Frag("loop_state", [s.format(k=k) for s in rng.choice(LOOP_STATE)])


# --- dynamic shapes and what follows ----------------------------------------------------------------
DYN_SOURCES = [
    "m{k} = ops.masked_select(x, x > 0)", "m{k} = x[x > 0]", "m{k} = ops.nonzero(x > 0)",
    "m{k}, _ = ops.unique(x.reshape(-1))", "m{k} = x.reshape(-1)[ops.nonzero(x.reshape(-1) > 0).reshape(-1)]",
    "m{k} = ops.masked_select(x, x > 100)", "m{k} = x.masked_select(x < 0)", "m{k} = x.nonzero()",
    "m{k} = ops.unique(x)[0]",
]
DYN_USES = [
    ["x = x + ops.cast(m{k}, mstype.float32).sum() * 0"], ["x = x + m{k}.shape[0]"], ["x = x + len(m{k})"],
    ["x = x + ops.zeros((m{k}.shape[0], 1)).sum()"], ["x = x + ops.cast(m{k}.reshape(-1), mstype.float32)[:1].sum()"],
    ["x = x + m{k}.size"], ["for v in m{k}:", "    x = x + 0 * ops.cast(v, mstype.float32).sum()"],
    ["x = x + float(ops.cast(m{k}, mstype.float32).sum())"], ["x = x + ops.cast(m{k}, mstype.float32).sum().item()"],
    ["if m{k}.shape[0] > 0:", "    x = x + 1"], ["x = x + m{k}.ndim"], ["x = x + ops.cast(m{k}, mstype.float32).sum()"],
    ["x = x + ops.cast(ops.size(m{k}), mstype.float32)"], ["x = x + ops.cast(m{k}, mstype.float32).reshape(-1).sum()"],
    ["x = x + ops.cast(m{k}, mstype.float32).abs().sum() * 0"],
]


def f_dynamic_shape(rng: random.Random, k: int) -> Frag:
    src = rng.choice(DYN_SOURCES).format(k=k)
    return Frag("dynamic_shape", [src, *[s.format(k=k) for s in rng.choice(DYN_USES)]])


# --- print keywords, exceptions and asserts on tensors -----------------------------------------------
PRINTS = [
    "print(x, end='')", "print('a', x, sep=',')", "print(x, flush=True)", "print('v', x.shape, sep=' | ', end='\\n')",
    "print(x, file=sys.stderr)", "print(*x.shape)", "print(*[x, x])", "print('loss', x.sum())",
    "print('v', x.sum().item())", "print(f'{x.sum()}')", "print('%s' % x.shape[0])", "print(x.shape, sep='')",
    "print(**{'sep': '-'})", "print()", "ops.print_('x', x)", "print('a', 'b', end='!')", "print(x, sep='')",
    "print('n=%d' % len(x))", "print('{}'.format(x.shape))", "print(x.dtype, end=' ')",
]
RAISES = [
    ["assert x.sum() > -1000"], ["assert (x > -1000).all(), 'range'"], ["assert x.dtype == mstype.float32"],
    ["assert x.shape == (2, 3), f'shape {x.shape}'"], ["if x.sum() > 1000:", "    raise ValueError('too big')"],
    ["if x.sum() > 1000:", "    raise ValueError(f'too big {x}')"], ["if x.shape[0] != 2:", "    raise ValueError('shape')"],
    ["if x.max() > 1000:", "    raise RuntimeError('x', x.max())"], ["if not isinstance(x, Tensor):", "    raise TypeError('not tensor')"],
    ["assert x is not None"], ["if x.sum() > 1000:", "    raise KeyError('k')"], ["assert x.max() < 1000, x.max()"],
    ["if (x != x).any():", "    raise ValueError('nan')"], ["if x.sum() > 1000:", "    raise ZeroDivisionError"],
    ["if x.sum() > 1000:", "    raise ValueError('big', x.shape)"], ["assert x.max() < 1000, f'max {x.max()}'"],
    ["if x.ndim != 2:", "    raise NotImplementedError('rank')"], ["if x.min() < -1000:", "    raise IndexError"],
    ["assert len(x) == 2, 'batch'"], ["if x.sum() > 1000:", "    raise StopIteration"],
]


def f_print_raise(rng: random.Random, k: int) -> Frag:
    if rng.random() < 0.5:
        line = rng.choice(PRINTS)
        return Frag("print_kw", [line], module=["import sys", ""] if "sys." in line else [])
    return Frag("raise_assert", list(rng.choice(RAISES)))


# --- del, with, nonlocal, global, generators ---------------------------------------------------------
def f_statements(rng: random.Random, k: int) -> Frag:
    kind = rng.randrange(14)
    if kind == 0:
        return Frag("del_name", [f"y{k} = x * 2", f"del y{k}"])
    if kind == 1:
        return Frag("del_item", [f"lst{k} = [1, 2]", f"del lst{k}[0]", f"x = x + len(lst{k})"])
    if kind == 2:
        return Frag("del_key", [f"d{k} = {{'a': 1, 'b': 2}}", f"del d{k}['a']", f"x = x + len(d{k})"])
    if kind == 3:
        return Frag("with_no_grad", ["with ms._no_grad():", "    x = x + 1"])
    if kind == 4:
        deco = rng.choice(["@ms.jit_class\n", ""])
        return Frag(
            "with_class" if deco else "with_plain",
            [f"with Ctx{k}():", "    x = x + 1"],
            module=_lines(
                f"{deco}class Ctx{k}:\n    def __enter__(self):\n        return self\n\n"
                f"    def __exit__(self, *args):\n        return False"
            ),
        )
    if kind == 5:
        return Frag("nonlocal", [f"cnt{k} = 0", f"def bump{k}():", f"    nonlocal cnt{k}", f"    cnt{k} += 1",
                                 f"bump{k}()", f"x = x + cnt{k}"])
    if kind == 6:
        return Frag("generator_fn", [f"x = x + sum(gen{k}(3))"],
                    module=_lines(f"def gen{k}(n):\n    for i in range(n):\n        yield i"))
    if kind == 7:
        return Frag("genexp", rng.choice([["x = x + sum(i * 2 for i in range(3))"], ["x = x + max(r.sum() for r in x)"],
                                          [f"g{k} = (i for i in range(3))", f"x = x + next(g{k})"],
                                          ["x = x + any(v > 100 for v in x.shape)"], ["x = x + sum(r.sum() for r in x)"],
                                          ["x = x + tuple(d * 2 for d in x.shape)[0]"]]))
    if kind == 8:
        return Frag("global", [f"global COUNT{k}", f"x = x + COUNT{k}"], module=[f"COUNT{k} = 1", ""])
    if kind == 9:
        return Frag("global_write", [f"global COUNT{k}", f"COUNT{k} = 2", "x = x + 1"], module=[f"COUNT{k} = 1", ""])
    if kind == 10:
        return Frag("try", ["try:", "    x = x + 1", "except ValueError:", "    x = x - 1"])
    if kind == 11:
        return Frag("walrus", [f"if (n{k} := x.shape[0]) > 1:", f"    x = x + n{k}"])
    if kind == 12:
        return Frag("del_attr_tuple", [f"a{k}, b{k} = x, x * 2", f"del a{k}", f"x = b{k}"])
    return Frag("nested_def", [f"def inner{k}(t, s=1.0):", "    return t * s", f"x = inner{k}(x, s=2.0)"])


# --- what STRICT forbids: class instances, numpy values, Python objects held ------------------------
def f_strict_objects(rng: random.Random, k: int) -> Frag:
    kind = rng.randrange(12)
    if kind == 0:
        return Frag("class_instance", [f"b{k} = Box{k}(x)", f"x = b{k}.v"],
                    module=_lines(f"class Box{k}:\n    def __init__(self, v):\n        self.v = v"))
    if kind == 1:
        return Frag("jit_class_instance", [f"b{k} = Box{k}(x)", f"x = b{k}.v * 1"],
                    module=_lines(f"@ms.jit_class\nclass Box{k}:\n    def __init__(self, v):\n        self.v = v"))
    if kind == 2:
        return Frag("np_array_held", [f"arr{k} = np.ones((2, 3), np.float32)", f"x = x + Tensor(arr{k})"])
    if kind == 3:
        return Frag("np_sum", [f"arr{k} = np.array([1.0, 2.0, 3.0])", f"x = x + arr{k}.sum()"])
    if kind == 4:
        return Frag("np_scalar", rng.choice([["x = x + np.float32(1.5)"], [f"v{k} = np.float32(1.5)", f"x = x * v{k}"]]))
    if kind == 5:
        return Frag("np_roundtrip", ["x = x + Tensor(x.asnumpy() * 2)"])
    if kind == 6:
        return Frag("namedtuple", [f"p{k} = Pair{k}(x, 1)", f"x = p{k}.a + p{k}.b"],
                    module=["import collections", f"Pair{k} = collections.namedtuple('Pair{k}', ['a', 'b'])", ""])
    if kind == 7:
        return Frag("dataclass", [f"p{k} = Opts{k}(2.0)", f"x = x * p{k}.scale"],
                    module=_lines(f"import dataclasses\n\n\n@dataclasses.dataclass\nclass Opts{k}:\n    scale: float = 1.0"))
    if kind == 8:
        return Frag("np_array_of_tensor", [f"arr{k} = np.array([1.0, 2.0])", f"x = x + Tensor(arr{k} * 2, mstype.float32).sum()"])
    if kind == 9:
        return Frag("held_module_obj", [f"x = x * OPTS{k}.scale"],
                    module=_lines(f"class Opts{k}:\n    scale = 2.0\n\n\nOPTS{k} = Opts{k}()"))
    if kind == 10:
        return Frag("list_of_np", [f"vals{k} = [np.float32(1.0), np.float32(2.0)]", f"x = x + sum(vals{k})"])
    return Frag("type_call", [f"t{k} = type(x)", f"x = x + int(t{k} is Tensor)"])


V2_FRAGMENTS = [
    (f_host_int, 8), (f_join, 10), (f_loop_state, 7), (f_dynamic_shape, 5), (f_print_raise, 6), (f_statements, 6),
    (f_strict_objects, 6),
]

# what the compiled entry returns (version 2): some are Python objects STRICT refuses as outputs
OUTPUTS = [
    "return x, None", "return x, 'done'", "return {'out': x}", "return [x, x * 2]", "return x, x.shape",
    "return x, 1.5", "return x, np.float32(1.0)", "return (x,)", "return x, [1, 2]", "return x, {'n': 1}",
    "return x.sum(), x", "return x, True",
]


def train_root(rng: random.Random, net_ctor: str, x_init: str) -> list[str]:
    """A jit train step around the generated network: a loss, an optimizer and `ms.grad` or
    `ms.value_and_grad` (some with the gradients reshaped as Python lists or read on the host)."""
    opt = rng.choice(["nn.SGD(net.trainable_params(), learning_rate=0.01)", "nn.Adam(net.trainable_params(), learning_rate=1e-3)",
                      "nn.Momentum(net.trainable_params(), learning_rate=0.01, momentum=0.9)"])
    out = ["def forward(x, y):", "    out = net(x)", "    out = out[0] if isinstance(out, (tuple, list)) else out"]
    aux = rng.random() < 0.3
    out += ["    loss = loss_fn(out, y)", "    return (loss, out)" if aux else "    return loss", "", ""]
    kind = rng.randrange(6)
    grad_fn = (f"ms.value_and_grad(forward, None, opt.parameters{', has_aux=True' if aux else ''})" if kind != 4
               else f"ms.grad(forward, grad_position=None, weights=opt.parameters{', has_aux=True' if aux else ''})")
    out += [f"grad_fn = {grad_fn}", "", "", "@ms.jit", "def train_step(x, y):"]
    if kind == 4:
        out += ["    grads = grad_fn(x, y)", *(["    grads = grads[0]"] if aux else []), "    opt(grads)", "    return x.sum()"]
    else:
        got = "(loss, _), grads" if aux else "loss, grads"
        out.append(f"    {got} = grad_fn(x, y)")
        tail = [
            ["    opt(grads)"],
            ["    grads = ops.clip_by_global_norm(grads, 1.0)", "    opt(grads)"],
            ["    grads = [g * 0.5 for g in grads]", "    opt(grads)"],
            ["    grads = tuple(g * 0.5 for g in grads)", "    opt(grads)"],
            ["    loss = ops.depend(loss, opt(grads))"],
            ["    print('loss', loss.item())", "    opt(grads)"],
            ["    opt(grads)", "    lr = opt.get_lr()", "    loss = loss + lr * 0"],
            ["    if loss > 0:", "        opt(grads)"],
        ]
        out += rng.choice(tail) + ["    return loss"]
    return [
        f"net = {net_ctor}", f"loss_fn = {rng.choice(['nn.MSELoss()', 'nn.L1Loss()'])}", f"opt = {opt}", "", "",
        *out, "", "", x_init, "y = ops.zeros((2, 3), mstype.float32)", "print(train_step(x, y))", "",
    ]
