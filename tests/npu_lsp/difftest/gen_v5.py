"""Generator version 5 (seeds from `generator.V5_FROM` on): the Python habits PyTorch users and
researchers bring into `construct`, `@ms.jit` functions and the helpers they call.

Families: host values of tensors (`.asnumpy()`, `.tolist()`, `.item()`, `int`/`float`/`bool` of
tensors, numpy on tensors) used as Python state (lists and dicts built from them, list methods,
`sorted`/`min`/`max`/`sum`, `heapq`, `collections.deque`/`Counter`/`defaultdict`, string
formatting, `zip`/`enumerate`, `None` placeholders) and turned back into tensors or returned;
Python state on `self` (counters, lists, dicts, `None` slots mutated in `construct`); optional
`None` arguments, `isinstance`, `assert`, `raise` with f-strings, `try/except`, `print`; config
objects (dataclasses, NamedTuples, Enums, `getattr`); `functools.partial`, decorators, closures
and lambdas; comprehensions, generators and `for` loops over tensors, `len(tensor)`; `math` on
tensors; in-place slice updates. Each family mixes the habit with its clean neighbour (the
on-device way: `ops.*`, Tensor methods, constants), so both verdicts occur.

Fragments are composed several to a program (with some of versions 1-4's), placed in helpers,
closures, jit functions, methods and sub-cells, and sometimes wrapped in a loop or a branch.
Every fragment keeps `x` a float32 tensor of shape (2, 3) in PyNative (a case counts only when
PyNative accepts it).
"""

from __future__ import annotations

import random

from generator import FRAGMENTS, HEAD, Frag, Program, _indent, _lines, _place

V5_IMPORTS = "import collections\nimport dataclasses\nimport enum\nimport heapq\nimport typing\n"


def _fmt(lines: list[str], k: int) -> list[str]:
    return [s.format(k=k) for s in lines]


# --- host values of tensors used as Python state -----------------------------------------------------
# lists of three Python (or numpy) floats: read from the tensor at run time, or constants
HOST_LISTS = [
    ("tolist", "vals{k} = x.tolist()[0]"), ("asnumpy_row", "vals{k} = x.asnumpy()[1].tolist()"),
    ("float_comp", "vals{k} = [float(v) for v in x[0]]"), ("np_list", "vals{k} = list(x.asnumpy().max(axis=0))"),
    ("item_comp", "vals{k} = [x[0, j].item() for j in range(3)]"), ("colsum", "vals{k} = x.sum(axis=0).asnumpy().tolist()"),
    ("const", "vals{k} = [1.0, 2.0, 3.0]"), ("shape", "vals{k} = [float(d) for d in (x.shape[0], x.shape[1], x.ndim)]"),
    ("shape_mix", "vals{k} = [x.shape[1] * 1.0, 0.5, 2.0]"), ("const_range", "vals{k} = [i * 0.5 for i in range(3)]"),
]
LIST_USES = [
    ("append_len", ["vals{k}.append(0.5)", "x = x + len(vals{k})"]),
    ("sort_idx", ["vals{k}.sort()", "x = x + vals{k}[0]"]),
    ("sorted_top", ["top{k} = sorted(vals{k}, reverse=True)[:2]", "x = x + sum(top{k})"]),
    ("minmax", ["x = x + (max(vals{k}) - min(vals{k}))"]),
    ("heapq", ["x = x + heapq.nlargest(1, vals{k})[0]"]),
    ("heappush", ["heap{k} = []", "for v in vals{k}:", "    heapq.heappush(heap{k}, v)", "x = x + heapq.heappop(heap{k})"]),
    ("deque", ["q{k} = collections.deque(vals{k}, maxlen=2)", "q{k}.append(1.0)", "x = x + q{k}[0]"]),
    ("counter", ["cnt{k} = collections.Counter(round(v) for v in vals{k})", "x = x + len(cnt{k})"]),
    ("defaultdict", ["groups{k} = collections.defaultdict(list)", "for i, v in enumerate(vals{k}):",
                     "    groups{k}[i % 2].append(v)", "x = x + len(groups{k}[0])"]),
    ("stats_dict", ["stats{k} = {{'mean': sum(vals{k}) / len(vals{k}), 'n': len(vals{k})}}", "x = x + stats{k}['mean']"]),
    ("join", ["msg{k} = ', '.join(f'{{v:.2f}}' for v in vals{k})", "x = x + len(msg{k}) * 0.0"]),
    ("insert_pop", ["vals{k}.insert(0, 0.0)", "vals{k}.pop()", "x = x + vals{k}[-1]"]),
    ("to_tensor", ["x = x + ms.Tensor(vals{k}, mstype.float32)"]),
    ("stack", ["x = x + ops.stack([ms.Tensor(v, mstype.float32) for v in vals{k}])"]),
    ("enumerate", ["for i, v in enumerate(vals{k}):", "    x = x + v * i"]),
    ("zip", ["pairs{k} = list(zip(range(3), vals{k}))", "x = x + pairs{k}[-1][1]"]),
    ("none_best", ["best{k} = None", "for v in vals{k}:", "    if best{k} is None or v > best{k}:", "        best{k} = v",
                   "x = x + best{k}"]),
    ("np_mean", ["x = x + float(np.mean(vals{k}))"]),
    ("pycond", ["x = x * (1.0 if max(vals{k}) > 0 else 0.5)"]),
    ("slice_len", ["head{k} = vals{k}[:2]", "x = x + len(head{k}) + head{k}[0]"]),
    ("dict_keys", ["table{k} = {{f'c{{i}}': v for i, v in enumerate(vals{k})}}", "x = x + table{k}['c0'] + len(list(table{k}.keys()))"]),
    ("fstring", ["x = x + len(f'{{vals{k}[0]:.1f}}') * 0.0"]),
    ("format", ["x = x + len('{{:.3f}}'.format(vals{k}[1])) * 0.0"]),
    ("index", ["x = x + vals{k}.index(vals{k}[1])"]),
    ("dict_values", ["d{k} = dict(zip(['a', 'b', 'c'], vals{k}))", "x = x + sum(d{k}.values())"]),
]

# one Python value of the tensor (run time), or a constant / a tensor (the on-device neighbour)
HOST_SCALARS = [
    ("item", "s{k} = x.sum().item()"), ("float", "s{k} = float(x.mean())"), ("int_argmax", "s{k} = int(x.argmax())"),
    ("bool_any", "s{k} = bool((x > 0).any())"), ("np_max", "s{k} = np.abs(x.asnumpy()).max()"),
    ("asnumpy_scalar", "s{k} = x.max().asnumpy()"), ("float_sq", "s{k} = float((x * x).sum())"),
    ("const_shape", "s{k} = x.shape[0] * 1.0"), ("const", "s{k} = 0.5"), ("tensor", "s{k} = x.mean()"),
    ("tensor_max", "s{k} = x.abs().max()"), ("const_len", "s{k} = len(x) * 0.5"),
]
SCALAR_USES = [
    ("add", ["x = x + s{k} * 0"]),
    ("if", ["if s{k} > 0:", "    x = x * 2", "else:", "    x = x - 1"]),
    ("math_tanh", ["x = x + math.tanh(s{k})"]),
    ("clamp", ["scale{k} = min(max(s{k}, 0.1), 2.0)", "x = x * scale{k}"]),
    ("fstr", ["log{k} = f'value={{float(s{k}):.3f}}'", "x = x + len(log{k}) * 0"]),
    ("dict", ["rec{k} = {{'loss': s{k}, 'step': 1}}", "x = x + rec{k}['loss'] * 0"]),
    ("list_append", ["hist{k} = []", "hist{k}.append(s{k})", "hist{k}.append(s{k} * 2)", "x = x + len(hist{k})"]),
    ("float", ["x = x + float(s{k}) * 0.5"]),
    ("round", ["x = x + round(float(s{k}), 2)"]),
    ("full", ["x = x + ops.full((2, 3), float(s{k}), dtype=mstype.float32) * 0"]),
    ("index", ["x = x + (0.5, 1.0, 1.5)[int(s{k}) % 3]"]),
    ("str", ["x = x + len(str(s{k})) * 0"]),
    ("range", ["for i in range(int(s{k}) % 3):", "    x = x + i"]),
    ("ternary", ["x = x * (2.0 if s{k} > 1 else 1.0)"]),
]


def f_host_list(rng: random.Random, k: int) -> Frag:
    src_name, src = rng.choice(HOST_LISTS)
    use_name, use = rng.choice(LIST_USES)
    return Frag(f"hl_{src_name}.{use_name}", _fmt([src, *use], k))


def f_host_scalar(rng: random.Random, k: int) -> Frag:
    src_name, src = rng.choice(HOST_SCALARS)
    use_name, use = rng.choice(SCALAR_USES)
    return Frag(f"hs_{src_name}.{use_name}", _fmt([src, *use], k))


# --- numpy on tensors --------------------------------------------------------------------------------
NUMPY = [
    ("np_clip", ["x = ms.Tensor(np.clip(x.asnumpy(), -1, 1))"]),
    ("np_roundtrip", ["arr{k} = x.asnumpy()", "arr{k} = arr{k} * 2", "x = ms.Tensor(arr{k}) / 2"]),
    ("from_numpy", ["x = ms.Tensor.from_numpy(np.ascontiguousarray(x.asnumpy()))"]),
    ("np_where", ["x = ms.Tensor(np.where(x.asnumpy() > 0, x.asnumpy(), 0.0).astype(np.float32))"]),
    ("np_const_mask", ["mask{k} = np.triu(np.ones((2, 3), np.float32))", "x = x * ms.Tensor(mask{k})"]),
    ("np_const_eye", ["x = x + ms.Tensor(np.eye(2, 3, dtype=np.float32))"]),
    ("np_argsort", ["idx{k} = np.argsort(x.asnumpy()[0])", "x = x[:, ms.Tensor(idx{k})]"]),
    ("np_norm", ["x = x * float(np.linalg.norm(x.asnumpy()) > 0)"]),
    ("np_stack", ["x = ms.Tensor(np.stack([x.asnumpy(), x.asnumpy()]).mean(0))"]),
    ("np_shape", ["x = x + float(np.array(x.shape).sum())"]),
    ("ops_clip", ["x = ops.clip_by_value(x, -1.0, 1.0)"]),
    ("ops_where", ["x = ops.where(x > 0, x, ops.zeros_like(x))"]),
    ("ops_sort", ["vals{k}, idx{k} = ops.sort(x[0])", "x = x[:, idx{k}]"]),
]


def f_numpy(rng: random.Random, k: int) -> Frag:
    name, body = rng.choice(NUMPY)
    return Frag(name, _fmt(body, k))


# --- Python state on self ----------------------------------------------------------------------------
# (name, __init__ lines, construct lines)
SELF_STATE = [
    ("st_counter", ["self.calls{k} = 0"], ["self.calls{k} += 1", "x = x + self.calls{k} * 0"]),
    ("st_hist_float", ["self.history{k} = []"], ["self.history{k}.append(float(x.mean()))", "x = x + len(self.history{k}) * 0"]),
    ("st_hist_tensor", ["self.history{k} = []"], ["self.history{k}.append(x.mean())", "x = x + self.history{k}[-1] * 0"]),
    ("st_cache", ["self.cache{k} = {{}}"], ["self.cache{k}['last'] = x", "x = self.cache{k}['last']"]),
    ("st_last_none", ["self.last{k} = None"], ["if self.last{k} is not None:", "    x = x + self.last{k} * 0", "self.last{k} = x"]),
    ("st_best", ["self.best{k} = float('inf')"], ["loss{k} = float(x.abs().mean())", "if loss{k} < self.best{k}:",
                                                  "    self.best{k} = loss{k}", "x = x + self.best{k} * 0"]),
    ("st_steps", ["self.steps{k} = 0"], ["self.steps{k} = self.steps{k} + 1", "x = x * 1.0"]),
    ("st_buffer", ["self.buf{k} = [0.0, 0.0]"], ["self.buf{k}.append(x.sum().item())", "if len(self.buf{k}) > 2:",
                                                 "    self.buf{k}.pop(0)", "x = x + self.buf{k}[0] * 0"]),
    ("st_param_step", ["self.step{k} = Parameter(Tensor(0, mstype.int32), requires_grad=False)"],
     ["ops.assign_add(self.step{k}, Tensor(1, mstype.int32))", "x = x * 1.0"]),
    ("st_param_ema", ["self.ema{k} = Parameter(ops.zeros((2, 3), mstype.float32), requires_grad=False)"],
     ["ops.assign(self.ema{k}, self.ema{k} * 0.9 + x * 0.1)", "x = x + self.ema{k} * 0"]),
    ("st_const_read", ["self.eps{k} = 1e-6", "self.names{k} = ['a', 'b']"], ["x = x + self.eps{k} * len(self.names{k})"]),
    ("st_dict_read", ["self.weights{k} = {{'a': 0.5, 'b': 2.0}}"],
     ["for name{k}, w{k} in self.weights{k}.items():", "    x = x + w{k} * len(name{k})"]),
    ("st_list_read", ["self.scales{k} = [0.5, 1.0]"], ["x = x * self.scales{k}[-1] * len(self.scales{k})"]),
    ("st_flag_toggle", ["self.warm{k} = True"], ["if self.warm{k}:", "    self.warm{k} = False", "    x = x * 1.0"]),
    ("st_stats", ["self.stats{k} = {{'n': 0, 'sum': 0.0}}"],
     ["self.stats{k}['n'] += 1", "self.stats{k}['sum'] += float(x.sum())", "x = x + self.stats{k}['n'] * 0"]),
]


def f_self_state(rng: random.Random, k: int) -> Frag:
    name, init, body = rng.choice(SELF_STATE)
    return Frag(name, _fmt(body, k), init=_fmt(init, k), needs_self=True)


# --- checks, errors, printing, None placeholders ---------------------------------------------------
CHECKS = [
    ("assert_shape", ["assert x.shape == (2, 3), f'bad shape {{x.shape}}'"]),
    ("assert_ndim", ["assert x.ndim == 2"]),
    ("assert_dtype", ["assert x.dtype == mstype.float32, 'dtype'"]),
    ("assert_isinstance", ["assert isinstance(x, Tensor)"]),
    ("assert_nan", ["assert not ops.isnan(x).any(), 'nan in activations'"]),
    ("assert_value", ["assert x.abs().max() < 1e6, f'overflow: {{x.abs().max()}}'"]),
    ("raise_const", ["if x.ndim != 2:", "    raise ValueError(f'expected 2-D input, got {{x.ndim}}-D')"]),
    ("raise_shape", ["if x.shape[-1] != 3:", "    raise ValueError(f'bad last dim {{x.shape}}')"]),
    ("raise_tensor", ["if ops.isnan(x).any():", "    raise RuntimeError(f'nan, max={{x.max()}}')"]),
    ("raise_tensor2", ["if x.abs().sum() > 1e9:", "    raise ValueError('diverged')"]),
    ("try_reshape", ["try:", "    x = x.reshape(2, 3)", "except ValueError:", "    x = x.reshape(-1)[:6].reshape(2, 3)"]),
    ("try_key", ["opts{k} = {{'scale': 2.0}}", "try:", "    sc{k} = opts{k}['scale']", "except KeyError:", "    sc{k} = 1.0",
                 "x = x * sc{k}"]),
    ("print_f", ["print(f'activations: {{x.shape}} {{x.dtype}}')"]),
    ("print_tensor", ["print('mean', x.mean())"]),
    ("print_item", ["print(f'mean={{x.mean().item():.4f}}')"]),
    ("print_ops", ["ops.print_('x:', x)"]),
    ("isinstance_branch", ["if isinstance(x, (list, tuple)):", "    x = x[0]", "x = x * 1.0"]),
    ("isinstance_num", ["scale{k} = 2", "if isinstance(scale{k}, int):", "    x = x * scale{k}"]),
    ("none_acc", ["acc{k} = None", "for r in x:", "    acc{k} = r if acc{k} is None else acc{k} + r", "x = x + acc{k}"]),
    ("none_default", ["mask{k} = None", "if mask{k} is None:", "    mask{k} = ops.ones_like(x)", "x = x * mask{k}"]),
    ("none_list", ["outs{k} = [None, None]", "outs{k}[0] = x * 2", "outs{k}[1] = x", "x = outs{k}[0] - outs{k}[1]"]),
    ("none_tensor_cond", ["aux{k} = None", "if x.sum() > 0:", "    aux{k} = x * 0.5", "if aux{k} is not None:", "    x = x + aux{k}"]),
]


def f_checks(rng: random.Random, k: int) -> Frag:
    name, body = rng.choice(CHECKS)
    return Frag(name, _fmt(body, k))


# --- optional None arguments, *args / **kwargs, isinstance in a sub-cell -------------------------------
OPT_BODIES = [
    ("opt_scale", "x, mask=None, scale=None", ["if scale is None:", "    scale = 1.0", "if mask is not None:", "    x = x * mask",
                                               "return x * scale"],
     ["x = self.head{k}(x)", "x = self.head{k}(x, scale=2.0)", "x = self.head{k}(x, mask=ops.ones_like(x))",
      "x = self.head{k}(x, None, 0.5)"]),
    ("opt_aux", "x, return_aux=False", ["y = ops.tanh(x)", "if return_aux:", "    return y, {'scale': 2.0, 'name': 'aux'}", "return y"],
     ["x = self.head{k}(x)", "x, aux{k} = self.head{k}(x, return_aux=True)\nx = x * aux{k}['scale']"]),
    ("opt_kwargs", "x, *, temperature=1.0, **kwargs", ["if 'bias' in kwargs:", "    x = x + kwargs['bias']", "return x / temperature"],
     ["x = self.head{k}(x, bias=0.5)", "x = self.head{k}(x, temperature=2.0)", "x = self.head{k}(x)"]),
    ("opt_isinstance", "x, mask=None", ["if isinstance(mask, Tensor):", "    x = x * mask", "elif isinstance(mask, (int, float)):",
                                        "    x = x * mask", "return x"],
     ["x = self.head{k}(x)", "x = self.head{k}(x, 0.5)", "x = self.head{k}(x, ops.ones_like(x))"]),
    ("opt_args", "*inputs", ["x = inputs[0]", "for extra in inputs[1:]:", "    x = x + extra", "return x / len(inputs)"],
     ["x = self.head{k}(x)", "x = self.head{k}(x, x * 2)", "x = self.head{k}(*[x, x])"]),
    ("opt_none_tensor", "x, bias=None", ["out = x if bias is None else x + bias", "return out"],
     ["x = self.head{k}(x)", "x = self.head{k}(x, bias=x.mean())", "x = self.head{k}(x, None)"]),
]


def f_optional(rng: random.Random, k: int) -> Frag:
    name, sig, body, calls = rng.choice(OPT_BODIES)
    module = [f"class Head{k}(nn.Cell):", f"    def construct(self, {sig}):", *_indent(body, 8), "", ""]
    call = rng.choice(calls).format(k=k).split("\n")
    return Frag(name, call, module=module, init=[f"self.head{k} = Head{k}()"], needs_self=True)


# --- config objects: dataclasses, NamedTuples, Enums, getattr ------------------------------------------
def f_config(rng: random.Random, k: int) -> Frag:
    kind = rng.randrange(3)
    if kind == 0:
        module = _lines(
            f"""
            @dataclasses.dataclass
            class Cfg{k}:
                scale: float = 2.0
                act: str = 'relu'
                use_norm: bool = False
                dims: tuple = (3, 3)
            """
        )
        uses = [
            ("dc_attr", [f"x = x * self.cfg{k}.scale"]), ("dc_str", [f"if self.cfg{k}.act == 'relu':", "    x = ops.relu(x)"]),
            ("dc_getattr_ops", [f"act{k} = getattr(ops, self.cfg{k}.act)", f"x = act{k}(x)"]),
            ("dc_getattr_default", [f"x = x * getattr(self.cfg{k}, 'scale', 1.0)"]),
            ("dc_asdict", [f"opts{k} = dataclasses.asdict(self.cfg{k})", f"x = x * opts{k}['scale']"]),
            ("dc_local", [f"c{k} = Cfg{k}(scale=0.5)", f"x = x * c{k}.scale"]),
            ("dc_local_tensor", [f"c{k} = Cfg{k}(scale=float(x.abs().max()))", f"x = x / (c{k}.scale + 1)"]),
            ("dc_dims", [f"for d in self.cfg{k}.dims:", "    x = x + d * 0"]),
            ("dc_vars", [f"x = x * vars(self.cfg{k})['scale']"]),
            ("dc_hasattr", [f"if hasattr(self.cfg{k}, 'use_norm') and self.cfg{k}.use_norm:", "    x = ops.tanh(x)"]),
            ("dc_global", [f"x = x * CFG{k}.scale"]),
        ]
        name, body = rng.choice(uses)
        if name == "dc_global":
            return Frag(name, body, module=[*module, "", "", f"CFG{k} = Cfg{k}(scale=0.5)"])
        if name.startswith("dc_local"):
            return Frag(name, body, module=module)
        return Frag(name, body, module=module, init=[f"self.cfg{k} = Cfg{k}()"], needs_self=True)
    if kind == 1:
        if rng.random() < 0.5:
            module = [f"class Out{k}(typing.NamedTuple):", "    value: Tensor", "    scale: float = 1.0"]
        else:
            module = [f"Out{k} = collections.namedtuple('Out{k}', ['value', 'scale'], defaults=[1.0])"]
        uses = [
            ("nt_attr", [f"o{k} = Out{k}(x, 0.5)", f"x = o{k}.value * o{k}.scale"]),
            ("nt_kw", [f"o{k} = Out{k}(value=x)", f"x = o{k}[0] + o{k}.scale"]),
            ("nt_unpack", [f"v{k}, s{k} = Out{k}(x, 2.0)", f"x = v{k} * s{k}"]),
            ("nt_replace", [f"o{k} = Out{k}(x)", f"x = o{k}._replace(scale=2.0).scale * x"]),
            ("nt_asdict", [f"o{k} = Out{k}(x, 0.5)", f"x = o{k}._asdict()['value']"]),
            ("nt_tensor_field", [f"o{k} = Out{k}(x, x.mean())", f"x = o{k}.value + o{k}.scale"]),
            ("nt_helper", [f"o{k} = wrap{k}(x)", f"x = o{k}.value"]),
        ]
        name, body = rng.choice(uses)
        if name == "nt_helper":
            module = [*module, "", "", f"def wrap{k}(t):", f"    return Out{k}(ops.relu(t), 1.0)"]
        return Frag(name, body, module=module)
    if rng.random() < 0.6:
        module = [f"class Mode{k}(enum.Enum):", "    TRAIN = 'train'", "    EVAL = 'eval'"]
        uses = [
            ("enum_eq", [f"if self.mode{k} == Mode{k}.TRAIN:", "    x = x * 1.0"]),
            ("enum_value", [f"if self.mode{k}.value == 'train':", "    x = x + 0.0"]),
            ("enum_name", [f"x = x + len(self.mode{k}.name)"]),
            ("enum_is", [f"if self.mode{k} is Mode{k}.EVAL:", "    x = x * 0.5"]),
            ("enum_str_flag", [f"if self.mode_name{k} == 'train':", "    x = x * 1.0"]),
        ]
        name, body = rng.choice(uses)
        return Frag(name, body, module=module, init=[f"self.mode{k} = Mode{k}.TRAIN", f"self.mode_name{k} = Mode{k}.TRAIN.value"],
                    needs_self=True)
    module = [f"class Axis{k}(enum.IntEnum):", "    ROW = 0", "    COL = 1"]
    name, body = rng.choice([
        ("intenum_axis", [f"x = x.sum(axis=Axis{k}.COL, keepdims=True) + x"]),
        ("intenum_int", [f"x = x.sum(axis=int(Axis{k}.COL), keepdims=True) + x"]),
        ("intenum_index", [f"x = x + x.shape[Axis{k}.ROW]"]),
    ])
    return Frag(name, body, module=module)


# --- functools.partial, decorators, closures, lambdas -----------------------------------------------
def f_functional(rng: random.Random, k: int) -> Frag:
    kind = rng.randrange(13)
    if kind == 0:
        return Frag("partial_module", [f"x = clip{k}(x)"],
                    module=[f"clip{k} = functools.partial(ops.clip_by_value, clip_value_min=-1.0, clip_value_max=1.0)"])
    if kind == 1:
        return Frag("partial_inline", [f"act{k} = functools.partial(ops.leaky_relu, alpha=0.1)", f"x = act{k}(x)"])
    if kind == 2:
        return Frag("partial_helper", [f"x = functools.partial(scale_by{k}, factor=2.0)(x)"],
                    module=[f"def scale_by{k}(t, factor):", "    return t * factor"])
    if kind == 3:
        return Frag("decorator_wraps", [f"x = head{k}(x)"], module=_lines(
            f"""
            def scaled{k}(fn):
                @functools.wraps(fn)
                def wrapper(t):
                    return fn(t) * 1.0
                return wrapper


            @scaled{k}
            def head{k}(t):
                return ops.relu(t) + t
            """))
    if kind == 4:
        return Frag("decorator_logged", [f"x = head{k}(x)"], module=_lines(
            f"""
            def logged{k}(fn):
                def wrapper(*args, **kwargs):
                    print('calling', fn.__name__)
                    return fn(*args, **kwargs)
                return wrapper


            @logged{k}
            def head{k}(t):
                return t * 0.5
            """))
    if kind == 5:
        return Frag("decorator_counted", [f"x = head{k}(x)"], module=_lines(
            f"""
            CALLS{k} = {{}}


            def counted{k}(fn):
                def wrapper(t):
                    CALLS{k}[fn.__name__] = CALLS{k}.get(fn.__name__, 0) + 1
                    return fn(t)
                return wrapper


            @counted{k}
            def head{k}(t):
                return t - 0.5
            """))
    if kind == 6:
        return Frag("closure_factory", [rng.choice([f"x = SCALE{k}(x)", f"f{k} = make_scaler{k}(2.0)\nx = f{k}(x)"])][0].split("\n"),
                    module=_lines(
            f"""
            def make_scaler{k}(factor):
                def scale(t):
                    return t * factor
                return scale


            SCALE{k} = make_scaler{k}(0.5)
            """))
    if kind == 7:
        return Frag("closure_state", [f"x = COUNT{k}(x)"], module=_lines(
            f"""
            def make_counter{k}():
                state = {{'n': 0}}

                def step(t):
                    state['n'] += 1
                    return t + state['n'] * 0
                return step


            COUNT{k} = make_counter{k}()
            """))
    if kind == 8:
        return Frag("nonlocal", [f"total{k} = 0", f"def add{k}(v):", f"    nonlocal total{k}", f"    total{k} += v",
                                 "for d in x.shape:", f"    add{k}(d)", f"x = x + total{k}"])
    lambdas = [
        ("lambda_call", [f"f{k} = lambda t: t * 2", f"x = f{k}(x) / 2"]),
        ("lambda_sorted_key", ["x = sorted([x, x * 2], key=lambda t: float(t.sum()))[0]"]),
        ("lambda_max_key", ["x = max([x, x + 1], key=lambda t: t.sum())"]),
        ("lambda_reduce", ["x = functools.reduce(lambda a, b: a + b, [x, x, x]) / 3"]),
        ("lambda_map", ["x = ops.stack(list(map(lambda r: r * 2, x))) / 2"]),
        ("fn_dict", [f"acts{k} = {{'relu': ops.relu, 'tanh': ops.tanh}}", f"x = acts{k}['{rng.choice(['relu', 'tanh'])}'](x)"]),
        ("lambda_default", ["x = (lambda t, s=2.0: t * s)(x)"]),
        ("lambda_module", [f"x = NORM{k}(x)"]),
    ]
    name, body = rng.choice(lambdas)
    if name == "lambda_module":
        return Frag(name, body, module=[f"NORM{k} = lambda t: t / (ops.abs(t).max() + 1)"])
    return Frag(name, body)


# --- iteration over tensors, comprehensions, len(tensor) -------------------------------------------
ITERS = [
    ("comp_rows", ["rows{k} = [r * 2 for r in x]", "x = ops.stack(rows{k}) / 2"]),
    ("comp_norm_rows", ["x = ops.stack([r / (r.abs().max() + 1) for r in x])"]),
    ("gen_sum", ["total{k} = sum(r.sum() for r in x)", "x = x + total{k} * 0"]),
    ("for_row_cond", ["for row in x:", "    if row.sum() > 0:", "        x = x * 1.0"]),
    ("comp_float_norms", ["norms{k} = [float(r.norm()) for r in x]", "x = x / (max(norms{k}) + 1)"]),
    ("comp_index", ["x = ops.stack([x[i] * i for i in range(len(x))])"]),
    ("comp_shape_range", ["x = ops.stack([x[i] for i in range(x.shape[0])])"]),
    ("comp_tolist", ["x = ms.Tensor([[v * 2 for v in row] for row in x.tolist()], mstype.float32) / 2"]),
    ("enum_setitem", ["for i, row in enumerate(x):", "    x[i] = row * 0.5"]),
    ("comp_cols", ["cols{k} = [c for c in x.T]", "x = ops.stack(cols{k}, axis=1)"]),
    ("len_tensor", ["n{k} = len(x)", "x = x * n{k}"]),
    ("tuple_gen", ["x = ops.stack(tuple(r for r in x))"]),
    ("list_tensor", ["x = ops.stack(list(x))"]),
    ("split_enum", ["parts{k} = list(ops.split(x, 1, axis=1))", "x = ops.concat([p * (i + 1) for i, p in enumerate(parts{k})], axis=1)"]),
    ("elementwise_loop", ["for i in range(x.shape[0]):", "    for j in range(x.shape[1]):", "        if x[i, j] < 0:",
                          "            x[i, j] = 0.0"]),
    ("builtin_max_row", ["mx{k} = max(x[0])", "x = x + mx{k}"]),
    ("builtin_sum_rows", ["x = x + sum(x) * 0"]),
    ("any_gen", ["if any(r.sum() > 100 for r in x):", "    x = x * 0.5"]),
    ("comp_filter_len", ["x = x + len([r for r in x if r.sum() > 0])"]),
    ("zip_rows", ["pairs{k} = [a + b for a, b in zip(x, x * 2)]", "x = ops.stack(pairs{k}) / 3"]),
    ("dict_comp_rows", ["rows{k} = {{i: r for i, r in enumerate(x)}}", "x = ops.stack([rows{k}[0], rows{k}[1]])"]),
    ("ops_reduce", ["x = x + x.sum(axis=1, keepdims=True) * 0"]),
    ("ops_unstack", ["x = ops.stack(ops.unstack(x, 0))"]),
]


def f_iter(rng: random.Random, k: int) -> Frag:
    name, body = rng.choice(ITERS)
    return Frag(name, _fmt(body, k))


# --- math on tensors --------------------------------------------------------------------------------
MATHS = [
    ("math_shape", ["x = x / math.sqrt(x.shape[-1])"]),
    ("math_exp_float", ["x = x * math.exp(-float(x.abs().mean()))"]),
    ("math_exp_tensor", ["x = x * math.exp(-x.abs().mean())"]),
    ("math_log1p", ["x = x + math.log1p(x.abs().sum())"]),
    ("math_const", ["x = x * math.cos(math.pi / 4)"]),
    ("math_floor", ["x = x + math.floor(x.max())"]),
    ("math_isfinite", ["x = x * math.isfinite(x.sum())"]),
    ("math_sqrt_var", ["temp{k} = max(0.1, math.sqrt(float(x.var())))", "x = x / temp{k}"]),
    ("math_ceil_shape", ["x = x + math.ceil(x.shape[0] / 2)"]),
    ("ops_exp", ["x = x * ops.exp(-x.abs().mean())"]),
    ("ops_sqrt_dim", ["x = x / ops.sqrt(ms.Tensor(x.shape[-1], mstype.float32))"]),
    ("math_prod_shape", ["x = x.reshape(math.prod(x.shape)).reshape(2, 3)"]),
]


def f_math(rng: random.Random, k: int) -> Frag:
    name, body = rng.choice(MATHS)
    return Frag(name, _fmt(body, k))


# --- in-place slice updates ---------------------------------------------------------------------------
INPLACE = [
    ("set_row", ["x[0] = 0.0"]), ("set_col_from", ["x[:, 0] = x[:, 1]"]), ("set_mask", ["x[x < 0] = 0.0"]),
    ("iadd_elem", ["x[0, 0] += 1.0"]), ("imul_col", ["x[:, -1] *= 0.5"]), ("set_slice", ["x[1:] = x[:1] * 2"]),
    ("set_ellipsis", ["x[..., 0] = 1.0"]), ("copy_then_set", ["y{k} = x.copy()", "y{k}[0] = 0.0", "x = x + y{k}"]),
    ("where_clean", ["x = ops.where(x < 0, ops.zeros_like(x), x)"]), ("masked_fill_clean", ["x = x.masked_fill(x < 0, 0.0)"]),
    ("concat_clean", ["x = ops.concat((ops.zeros_like(x[:1]), x[1:]), 0)"]),
]


def f_inplace(rng: random.Random, k: int) -> Frag:
    name, body = rng.choice(INPLACE)
    return Frag(name, _fmt(body, k))


V5_FRAGMENTS = [
    (f_host_list, 10), (f_host_scalar, 10), (f_numpy, 4), (f_self_state, 6), (f_checks, 6), (f_optional, 3),
    (f_config, 5), (f_functional, 5), (f_iter, 6), (f_math, 3), (f_inplace, 3),
]

#: outputs of the compiled entry: the tensor, or host values handed back
OUTPUTS_V5 = [
    "return x, x.asnumpy()", "return x.tolist()", "return x, float(x.sum())", "return {'logits': x, 'loss': x.mean().item()}",
    "return x, [r.sum() for r in x]", "return x, {'shape': x.shape, 'mean': x.mean()}", "return x, None", "return (x, x.sum())",
]

X_INIT = "x = Tensor(np.arange(6).reshape(2, 3).astype(np.float32) - 2.5)"
WRAP_CONDS = ["x.shape[0] > 1", "x.ndim == 2", "x.sum() > -1000", "x.max() > -1000"]


def _wrap(rng: random.Random, frag: Frag, k: int) -> Frag:
    """The fragment inside a loop or a branch, as real code runs a habit per step or per mode."""
    r = rng.random()
    if r < 0.12:
        body = [f"for _r{k} in range(2):", *_indent(frag.body, 4)]
        return Frag(frag.tag + "~loop", body, frag.module, frag.init, frag.needs_self, frag.params)
    if r < 0.24:
        cond = rng.choice(WRAP_CONDS)
        body = [f"if {cond}:", *_indent(frag.body, 4)]
        return Frag(frag.tag + "~if", body, frag.module, frag.init, frag.needs_self, frag.params)
    return frag


def generate_v5(seed: int) -> str:
    from gen_v2 import OUTPUTS, V2_FRAGMENTS
    from gen_v3 import V3_FRAGMENTS

    rng = random.Random(seed)
    cell_root = rng.random() < 0.8
    root = rng.choice(["graph", "graph", "graph", "graph_fn", "graph_fn", "jit_net", "jit_construct"]) if cell_root else "jit_fn"
    prog = Program()
    old = [m for m, w in FRAGMENTS + V2_FRAGMENTS + V3_FRAGMENTS for _ in range(w)]
    new = [m for m, w in V5_FRAGMENTS for _ in range(w)]
    for k in range(rng.choice([3, 3, 4, 4, 4])):
        makers = old if rng.random() < 0.15 else new
        frag = rng.choice(makers)(rng, k)
        while frag.needs_self and not cell_root:
            frag = rng.choice(makers)(rng, k)
        frag = _wrap(rng, frag, k)
        where = _place(rng, prog, frag, k, cell_root)
        prog.tags.append(f"{frag.tag}@{where}")
    mode = "PYNATIVE_MODE" if root in ("jit_net", "jit_construct") or (root == "jit_fn" and rng.random() < 0.3) else "GRAPH_MODE"
    head = V5_IMPORTS + HEAD.replace("mode=ms.GRAPH_MODE", f"mode=ms.{mode}")
    out = [f"# difftest seed={seed} (v5 root={root})", f"# idioms: {' '.join(prog.tags)}", head, ""]
    out.extend(prog.module)
    r = rng.random()
    ret = rng.choice(OUTPUTS_V5) if r < 0.15 else rng.choice(OUTPUTS) if r < 0.2 else "return x"
    if not cell_root:
        out.extend(["@ms.jit", "def step(x):", *_indent(prog.body or ["x = x + 1"], 4), f"    {ret}", "", ""])
        out.extend([X_INIT, "print(step(x))", ""])
        return "\n".join(out)
    opt_arg = rng.random() < 0.15
    args = "".join(f", {p}={v}" for p, v in prog.params.items())
    out.append("class Net(nn.Cell):")
    out.append(f"    def __init__(self{args}):")
    out.append("        super().__init__()")
    out.extend(_indent(prog.init, 8))
    out.append("")
    out.append(f"    def construct(self, x{', mask=None' if opt_arg else ''}):")
    if opt_arg:
        out.extend(["        if mask is not None:", "            x = x * mask"])
    out.extend(_indent(prog.body or ["x = x + 1"], 8))
    out.append(f"        {ret}")
    out.extend(prog.methods)
    out.extend(["", ""])
    call_args = "x" + (rng.choice(["", ", None", ", ops.ones_like(x)", ", mask=ops.ones_like(x)"]) if opt_arg else "")
    body = ["net = Net()"]
    fn = "net"
    if root == "jit_net":
        body.append(rng.choice(["net = ms.jit(net)", "fn = ms.jit(net)"]))
        fn = body[-1].split(" = ")[0]
    elif root == "jit_construct":
        body.append("fn = ms.jit(net.construct)")
        fn = "fn"
    body += [X_INIT, f"print({fn}({call_args}))"]
    if root == "graph":
        out.extend([*body, ""])
    else:
        name = rng.choice(["main", "run", "infer"])
        out.extend([f"def {name}():", *_indent(body, 4), "", "", f"{name}()", ""])
    return "\n".join(out)
