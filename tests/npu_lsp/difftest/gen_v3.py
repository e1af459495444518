"""Fragment families of generator version 3 (seeds from `generator.V3_FROM` on).

Versions 1 and 2 compose idioms aimed at MindSpore's documented limits; these families are the
idioms human authors write that the written sets show and version 2 lacks or has rarely
(optional arguments defaulting to `None`, `Parameter` state updated with `ops.assign`,
attention arithmetic with `swapaxes`/`softmax`/`masked_fill`/`split`/`chunk`, cells held by
`setattr`/`getattr`, `nn.CellDict` and zipped `CellList`s, properties, static methods and
`super().construct` in cells, `*args`/`**kwargs` helpers, loss-style ops, dtype checks).
Each family mixes spellings MindSpore compiles with neighbours it may refuse; which is which
is MindSpore's to say. Train steps stay version 2's jit functions: a
`nn.TrainOneStepCell(nn.WithLossCell(...))` root in GRAPH_MODE recurses without end under the
judge's PyNative level (`MS_JIT=0`), so no program holding one would count.

Every fragment keeps `x` a float32 tensor of shape (2, 3) in PyNative.
"""

from __future__ import annotations

import random

from generator import Frag, _lines


# --- optional arguments defaulting to None ----------------------------------------------------------
def f_optional(rng: random.Random, k: int) -> Frag:
    module = _lines(
        f"""
        def gate{k}(x, mask=None, scale=None):
            if mask is not None:
                x = x * mask
            if scale is not None:
                x = x * scale
            return x
        """
    )
    calls = [
        [f"x = gate{k}(x)"], [f"x = gate{k}(x, mask=ops.ones_like(x))"], [f"x = gate{k}(x, scale=2.0)"],
        [f"x = gate{k}(x, ops.cast(x > 0, mstype.float32))"],
        [f"m{k} = None", "if x.sum() > 0:", f"    m{k} = ops.cast(x > 0, mstype.float32)", f"x = gate{k}(x, mask=m{k})"],
        [f"m{k} = None", "if x.shape[0] > 1:", f"    m{k} = ops.ones_like(x)", f"x = gate{k}(x, mask=m{k})"],
        [f"s{k} = None if x.sum() > 0 else 0.5", f"x = gate{k}(x, scale=s{k})"],
        [f"s{k} = None if x.ndim == 2 else 0.5", f"x = gate{k}(x, scale=s{k})"],
        [f"x = gate{k}(x, scale=None)"], [f"x = gate{k}(x, None, 2.0)"],
    ]
    return Frag("optional_arg", rng.choice(calls), module=module)


# --- Parameter state updated in the graph ----------------------------------------------------------
def f_param_state(rng: random.Random, k: int) -> Frag:
    init = [
        f"self.step{k} = Parameter(Tensor(0, mstype.int32), name='step{k}', requires_grad=False)",
        f"self.ema{k} = Parameter(Tensor(np.zeros((3,), np.float32)), name='ema{k}', requires_grad=False)",
    ]
    bodies = [
        [f"ops.assign_add(self.step{k}, Tensor(1, mstype.int32))", f"x = x + ops.cast(self.step{k}, mstype.float32) * 0"],
        [f"ops.assign(self.ema{k}, self.ema{k} * 0.9 + x.mean(0) * 0.1)", f"x = x + self.ema{k}"],
        [f"self.ema{k} = self.ema{k} * 0.9", "x = x + 1"],
        [f"self.step{k} += 1", "x = x + 1"],
        [f"ops.assign(self.ema{k}, x.mean(0))", f"x = x + self.ema{k} * 0"],
        [f"if self.step{k} > 0:", "    x = x * 2"],
        [f"self.ema{k}.set_data(x.mean(0))", "x = x + 1"],
        [f"x = x + self.ema{k}.sum() + self.step{k}"],
        [f"n{k} = int(self.step{k})", f"x = x + n{k}"],
        [f"ops.assign(self.step{k}, self.step{k} + 1)", f"x = x + ops.depend(x, self.step{k}) * 0"],
    ]
    return Frag("param_state", rng.choice(bodies), init=init, needs_self=True)


# --- attention-style tensor arithmetic -------------------------------------------------------------
ATTENTION = [
    ["scores{k} = ops.matmul(x, x.swapaxes(-1, -2)) / math.sqrt(x.shape[-1])", "attn{k} = ops.softmax(scores{k}, axis=-1)",
     "x = ops.matmul(attn{k}, x)"],
    ["scores{k} = ops.matmul(x, x.T)", "mask{k} = ops.triu(ops.ones((2, 2), mstype.float32), 1) > 0",
     "scores{k} = scores{k}.masked_fill(mask{k}, -1e9)", "x = ops.matmul(ops.softmax(scores{k}, axis=-1), x)"],
    ["scores{k} = ops.matmul(x, x.transpose(1, 0))", "mask{k} = scores{k} > 100",
     "scores{k} = scores{k}.masked_fill(mask{k}, float('-inf'))", "x = ops.matmul(ops.softmax(scores{k}, -1), x)"],
    ["b{k}, d{k} = x.shape", "x = x.view(b{k}, d{k}) * 1.0"], ["b{k}, d{k} = x.shape", "x = x.reshape(b{k}, -1)"],
    ["x = x.view(x.shape[0], -1)"], ["n{k} = x.numel()", "x = x + n{k}"], ["x = x.unsqueeze(0).squeeze(0)"],
    ["x = x.permute(1, 0).permute(1, 0)"], ["x = x.contiguous()"], ["x = x.float()"],
    ["q{k}, k{k}, v{k} = ops.split(ops.tile(x, (1, 3)), 3, axis=1)", "x = q{k} + k{k} * v{k}"],
    ["parts{k} = ops.chunk(x, 3, axis=1)", "x = ops.concat(parts{k}, axis=1)"],
    ["parts{k} = x.chunk(3, 1)", "x = ops.cat(list(parts{k}), axis=1)"],
    ["x = ops.cat([x[:, :1], x[:, 1:]], axis=1)"], ["x = ops.stack([x, x], axis=0).mean(0)"],
    ["x = ops.where(x > 0, x, ops.zeros_like(x))"], ["x = ops.where(x > 0, x, 0.0)"],
    ["heads{k} = [x[:, i:i + 1] for i in range(x.shape[1])]", "x = ops.concat(heads{k}, axis=1)"],
    ["h{k} = x.shape[-1] // 3", "x = x.reshape(2, 3, h{k}).reshape(2, 3)"],
    ["x = x * (x.shape[-1] ** -0.5)"], ["x = ops.bmm(x.unsqueeze(0), ops.ones((1, 3, 3), mstype.float32)).squeeze(0)"],
    ["x = ops.matmul(x, ops.eye(3, 3, mstype.float32))"], ["x = x @ ops.eye(3, 3, mstype.float32)"],
]


def f_attention(rng: random.Random, k: int) -> Frag:
    return Frag("attention", [s.format(k=k) for s in rng.choice(ATTENTION)])


# --- cells held by name, in dicts and zipped lists -------------------------------------------------
def f_cell_containers(rng: random.Random, k: int) -> Frag:
    kind = rng.randrange(5)
    if kind == 0:
        init = ["for i in range(2):", f"    setattr(self, f'fc{k}_{{i}}', nn.Dense(3, 3))"]
        body = rng.choice([
            ["for i in range(2):", f"    x = getattr(self, f'fc{k}_{{i}}')(x)"],
            ["for i in range(2):", f"    x = getattr(self, 'fc{k}_' + str(i))(x)"],
            [f"x = getattr(self, 'fc{k}_0')(x)"],
            [f"x = self.fc{k}_1(x)"],
        ])
        return Frag("getattr_cells", body, init=init, needs_self=True)
    if kind == 1:
        init = [f"self.heads{k} = nn.CellDict({{'a': nn.Dense(3, 3), 'b': nn.ReLU()}})"]
        body = rng.choice([
            [f"x = self.heads{k}['a'](x)"], ["for name in ['a', 'b']:", f"    x = self.heads{k}[name](x)"],
            [f"for name, cell in self.heads{k}.items():", "    x = cell(x)"], [f"for cell in self.heads{k}.values():", "    x = cell(x)"],
            [f"x = self.heads{k}['a' if x.sum() > 0 else 'b'](x)"], [f"x = self.heads{k}['a' if x.ndim == 2 else 'b'](x)"],
            [f"x = x + len(self.heads{k})"], [f"if 'a' in self.heads{k}:", f"    x = self.heads{k}['a'](x)"],
        ])
        return Frag("celldict", body, init=init, needs_self=True)
    if kind == 2:
        init = [f"self.fcs{k} = nn.CellList([nn.Dense(3, 3) for _ in range(2)])", f"self.acts{k} = nn.CellList([nn.ReLU(), nn.Tanh()])"]
        body = rng.choice([
            [f"for fc, act in zip(self.fcs{k}, self.acts{k}):", "    x = act(fc(x))"],
            [f"for blk in self.fcs{k}[1:]:", "    x = blk(x)"], [f"x = self.fcs{k}[-1](x)"],
            [f"for blk in reversed(self.fcs{k}):", "    x = blk(x)"], [f"x = x + len(self.fcs{k})"],
            [f"for i, (fc, act) in enumerate(zip(self.fcs{k}, self.acts{k})):", "    x = act(fc(x)) + i"],
            [f"outs{k} = [fc(x) for fc in self.fcs{k}]", f"x = sum(outs{k}) / len(outs{k})"],
            [f"x = self.acts{k}[0 if x.sum() > 0 else 1](x)"],
        ])
        return Frag("zip_celllist", body, init=init, needs_self=True)
    if kind == 3:
        init = [f"self.plain{k} = [nn.Dense(3, 3), nn.ReLU()]"]
        body = rng.choice([[f"for layer in self.plain{k}:", "    x = layer(x)"], [f"x = self.plain{k}[0](x)"]])
        return Frag("plain_cell_list", body, init=init, needs_self=True)
    init = [f"self.seq{k} = nn.SequentialCell(nn.Dense(3, 3), nn.ReLU())"]
    body = rng.choice([[f"x = self.seq{k}(x)"], [f"x = self.seq{k}[0](x)"], [f"for layer in self.seq{k}:", "    x = layer(x)"],
                       [f"x = self.seq{k}[-1](self.seq{k}[0](x))"], [f"x = x + len(self.seq{k})"]])
    return Frag("sequential_index", body, init=init, needs_self=True)


# --- cells written with properties, static methods, super().construct, *args/**kwargs --------------
def f_cell_methods(rng: random.Random, k: int) -> Frag:
    kind = rng.randrange(7)
    if kind == 0:
        module = _lines(
            f"""
            class Scaled{k}(nn.Cell):
                def __init__(self):
                    super().__init__()
                    self._scale = 2.0

                @property
                def scale(self):
                    return self._scale

                def construct(self, x):
                    return x * self.scale
            """
        )
    elif kind == 1:
        module = _lines(
            f"""
            class Scaled{k}(nn.Cell):
                def __init__(self):
                    super().__init__()

                @staticmethod
                def act(t):
                    return ops.relu(t) + t

                def construct(self, x):
                    return self.act(x)
            """
        )
    elif kind == 2:
        module = _lines(
            f"""
            class Base{k}(nn.Cell):
                def __init__(self):
                    super().__init__()
                    self.fc = nn.Dense(3, 3)

                def construct(self, x):
                    return self.fc(x)


            class Scaled{k}(Base{k}):
                def construct(self, x):
                    x = super().construct(x)
                    return x * 2
            """
        )
    elif kind == 3:
        module = _lines(
            f"""
            class Scaled{k}(nn.Cell):
                def __init__(self):
                    super().__init__()

                def construct(self, x, **kwargs):
                    scale = kwargs.get('scale', 1.0)
                    return x * scale
            """
        )
    elif kind == 4:
        module = _lines(
            f"""
            class Scaled{k}(nn.Cell):
                def __init__(self):
                    super().__init__()
                    self.drop = nn.Dropout(p=0.5)

                def construct(self, x):
                    if self.training:
                        x = self.drop(x)
                    return x
            """
        )
    elif kind == 5:
        module = _lines(
            f"""
            class Scaled{k}(nn.Cell):
                def __init__(self):
                    super().__init__()
                    self.fc = nn.Dense(3, 3)

                def construct(self, x):
                    out = self.fc(x)
                    if isinstance(out, (tuple, list)):
                        out = out[0]
                    return out
            """
        )
    else:
        module = _lines(
            f"""
            class Scaled{k}(nn.Cell):
                def __init__(self, dims=(3, 3)):
                    super().__init__()
                    self.dims = dims
                    self.fcs = nn.CellList([nn.Dense(d, d) for d in dims])

                def construct(self, *inputs):
                    x = inputs[0]
                    for fc in self.fcs:
                        x = fc(x)
                    return x
            """
        )
    call = f"x = self.m{k}(x, scale=0.5)" if kind == 3 and rng.random() < 0.7 else f"x = self.m{k}(x)"
    return Frag("cell_methods", [call], module=module, init=[f"self.m{k} = Scaled{k}()"], needs_self=True)


# --- loss-style functional ops ---------------------------------------------------------------------
LOSS_OPS = [
    ["x = x - ops.logsumexp(x, axis=-1, keep_dims=True)"], ["x = ops.log_softmax(x, axis=-1)"],
    ["lbl{k} = ops.argmax(x, dim=-1)", "x = x + ops.one_hot(lbl{k}, 3, Tensor(1.0, mstype.float32), Tensor(0.0, mstype.float32))"],
    ["x = ops.clamp(x, -1.0, 1.0)"], ["x = ops.clip_by_value(x, -1.0, 1.0)"], ["x = x.clamp(min=-1.0)"],
    ["w{k} = ops.stop_gradient(x)", "x = x + w{k}"], ["x = ops.depend(x, x.sum())"], ["x = ops.L2Normalize(axis=-1)(x)"],
    ["x = x / (ops.norm(x, dim=-1, keepdim=True) + 1e-6)"], ["x = ops.ReLU()(x)"], ["x = ops.Softmax(axis=-1)(x)"],
    ["eps{k} = 0.1", "x = x * (1 - eps{k}) + eps{k} / x.shape[-1]"],
    ["red{k} = 'mean'", "x = x + (x.mean() if red{k} == 'mean' else x.sum())"],
    ["red{k} = 'sum'", "if red{k} == 'mean':", "    x = x - x.mean()", "elif red{k} == 'sum':", "    x = x - x.sum()"],
    ["x = ops.binary_cross_entropy_with_logits(x, ops.zeros_like(x), ops.ones_like(x), ops.ones((3,), mstype.float32)) + x"],
    ["x = x + ops.cross_entropy(x, ops.argmax(x, dim=-1))"], ["x = x + ops.mse_loss(x, ops.zeros_like(x))"],
    ["x = x + nn.MSELoss()(x, ops.zeros_like(x))"], ["x = ops.sigmoid(x) * x"], ["x = ops.gelu(x)"],
    ["x = ops.pow(x, 2) + ops.sqrt(ops.abs(x) + 1e-6)"], ["x = (x ** 2).mean(axis=-1, keep_dims=True) + x"],
    ["x = x.mean(-1, keepdims=True) + x"], ["x = ops.mean(x, axis=-1, keep_dims=True) + x"],
]


def f_loss_ops(rng: random.Random, k: int) -> Frag:
    return Frag("loss_ops", [s.format(k=k) for s in rng.choice(LOSS_OPS)])


# --- dtype checks and casts ------------------------------------------------------------------------
DTYPES = [
    ["x = x.astype(mstype.float16).astype(mstype.float32)"], ["if x.dtype == mstype.float16:", "    x = x.astype(mstype.float32)"],
    ["x = ops.cast(x, x.dtype)"], ["dt{k} = x.dtype", "x = ops.zeros_like(x, dtype=dt{k}) + x"], ["x = x.to(mstype.float32)"],
    ["x = ops.cast(x > 0, x.dtype) * x"], ["if x.dtype in (mstype.float16, mstype.bfloat16):", "    x = x.float()"],
    ["x = x + Tensor(1, dtype=x.dtype)"], ["x = x + ops.ones(x.shape, x.dtype)"], ["x = x.type(mstype.float32)"],
    ["x = x.half().float()"], ["x = x + ops.scalar_to_tensor(1.0, x.dtype)"], ["x = x * ms.tensor(2.0, x.dtype)"],
    ["x = x + ops.full_like(x, 1.0)"], ["x = x + x.new_ones(x.shape)"], ["x = x + x.new_zeros((2, 3))"],
]


def f_dtypes(rng: random.Random, k: int) -> Frag:
    return Frag("dtypes", [s.format(k=k) for s in rng.choice(DTYPES)])


# --- helpers taking *args / **kwargs --------------------------------------------------------------
def f_varargs(rng: random.Random, k: int) -> Frag:
    module = _lines(
        f"""
        def combine{k}(*ts, weight=1.0, **kw):
            out = ts[0]
            for t in ts[1:]:
                out = out + t
            return out * weight * kw.get('scale', 1.0)
        """
    )
    calls = [
        [f"x = combine{k}(x, x, weight=0.5)"], [f"x = combine{k}(*[x, x])"],
        [f"args{k} = (x, x)", f"x = combine{k}(*args{k}, scale=0.5)"], [f"opts{k} = {{'weight': 0.5}}", f"x = combine{k}(x, **opts{k})"],
        [f"x = combine{k}(x)"], [f"parts{k} = [x, x * 2]", f"x = combine{k}(*parts{k}) / 3"],
        [f"x = combine{k}(x, x, scale=0.5, weight=0.5)"],
    ]
    return Frag("varargs", rng.choice(calls), module=module)


V3_FRAGMENTS = [
    (f_optional, 6), (f_param_state, 5), (f_attention, 6), (f_cell_containers, 6), (f_cell_methods, 5),
    (f_loss_ops, 5), (f_dtypes, 4), (f_varargs, 4),
]
