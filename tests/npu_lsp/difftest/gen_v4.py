"""Generator version 4 (seeds from `generator.V4_FROM` on): compiled roots and idioms of real
training code that versions 1-3 lack.

Roots: the network built and called at module level or inside a function (`def main(): net =
Net(); ...`), compiled by `ms.jit(net)` / `ms.jit(net.construct)` of a local instance, called
with `ms.mutable` inputs, and train steps as compiled Cells: `nn.TrainOneStepCell(
nn.WithLossCell(...))` and custom train-step Cells (`ms.value_and_grad` in `__init__` or inside
`construct`, `ops.depend`, gradient clipping, loss scaling), built inside a function (`def
train(): net = Net(); step = Trainer(net, ...); step(x, y)`). A train step runs in
PYNATIVE_MODE compiled by `ms.jit` (of the instance, its `construct`, or `@ms.jit` on
`construct`): a GRAPH_MODE train-step Cell recurses without end under the judge's PyNative level
(`MS_JIT=0`), so it would never count. Networks may inherit a base whose `construct` holds a
fragment and is reached through `super().construct`.

Fragment families: joins through `continue`/`break` in loops, random draws (`ops.rand`,
`np.random`, `random.random()`) passed to sub-cells, `jit_class` objects, `ms.mutable` values.
Every fragment keeps `x` a float32 tensor of shape (2, 3) in PyNative.
"""

from __future__ import annotations

import random

from generator import FRAGMENTS, HEAD, Frag, Program, _indent, _lines, _place

# --- joins through `continue` / `break` ------------------------------------------------------------
CONT_PAIRS = [
    ("1.0", "x.sum()"), ("x", "x * 2"), ("x", "None"), ("1", "2.0"), ("x", "x.astype(mstype.int32)"),
    ("(x, x)", "(x, x * 2)"), ("'a'", "'bb'"), ("x.sum()", "x.mean()"), ("1", "2"), ("x", "1.0"), ("[x]", "[x, x]"),
    ("x", "x[:1]"),
]
CONT_USES = {
    "None": "x = x if y{k} is None else y{k}", "(x, x)": "x = y{k}[0] + y{k}[1]", "'a'": "x = x + len(y{k})",
    "[x]": "x = y{k}[0]",
}
CONT_CONDS = ["x.sum() > 0", "x.max() > 1", "x[0, 0] < 0", "i == 0", "i > 0", "x.shape[0] > 1", "(x > 0).any()",
              "x.sum() > i"]


def f_continue_join(rng: random.Random, k: int) -> Frag:
    a, b = rng.choice(CONT_PAIRS)
    if rng.random() < 0.5:
        a, b = b, a
    use = (CONT_USES.get(a) or CONT_USES.get(b) or "x = x + y{k}").format(k=k)
    cond = rng.choice(CONT_CONDS)
    form = rng.randrange(7)
    if form == 0:
        body = [f"y{k} = {b}", "for i in range(2):", f"    if {cond}:", f"        y{k} = {a}", "        continue",
                "    x = x * 1.0"]
    elif form == 1:
        body = ["for i in range(2):", f"    if {cond}:", f"        y{k} = {a}", "        continue", f"    y{k} = {b}"]
    elif form == 2:
        body = [f"y{k} = {b}", f"i{k} = 0", f"while i{k} < 2:", f"    i{k} += 1", f"    if {cond.replace('i ', f'i{k} ')}:",
                f"        y{k} = {a}", "        continue", "    x = x + 0.0"]
    elif form == 3:
        body = [f"y{k} = {b}", "for row in x:", "    if row.sum() > 0:", f"        y{k} = {a}", "        continue",
                f"    y{k} = {b}"]
    elif form == 4:
        body = [f"y{k} = {b}", "for i in range(2):", f"    if {cond}:", f"        y{k} = {a}", "        break"]
    elif form == 5:
        acc = rng.choice(["1.0", "1", "x.sum()"])
        body = [f"s{k} = 0", "for i in range(3):", f"    if {cond}:", "        continue", f"    s{k} = s{k} + {acc}",
                f"x = x + s{k}"]
        return Frag("continue_acc", body)
    else:
        body = [f"y{k} = {b}", "for i in range(2):", f"    if {cond}:", "        continue", f"    y{k} = {a}"]
    return Frag(f"continue{form}", [*body, use])


# --- random draws passed to sub-cells -------------------------------------------------------------
RANDOM_SRCS = [
    "random.random()", "random.uniform(0.0, 1.0)", "np.random.rand()", "float(np.random.rand())",
    "np.random.uniform(0, 1)", "ops.rand(1)", "ops.rand((1,))[0]", "ops.rand(())", "ops.uniform((1,), Tensor(0.0), Tensor(1.0))",
    "ops.randn(2, 3)", "ops.rand_like(x)", "np.random.randn(2, 3).astype(np.float32)", "random.randint(0, 1)",
    "random.choice([0.5, 1.0])",
]
RANDOM_USES = [
    ["return x + p * 0.0"], ["return x * (1.0 + 0 * p)"], ["if p < 2.0:", "    x = x * 1.0", "return x"],
    ["if p > 0.5:", "    return x * 1.0", "return x"], ["return x + ops.zeros_like(x) * p"],
    ["q = p", "return x + q * 0"], ["return ops.dropout(x, p=0.0) + p * 0"],
]


def f_random_draw(rng: random.Random, k: int) -> Frag:
    src = rng.choice(RANDOM_SRCS)
    uses = ["def construct(self, x, p):", *_indent(rng.choice(RANDOM_USES), 4)]
    module = [f"class Noise{k}(nn.Cell):", *_indent(uses, 4), "", ""]
    where = rng.randrange(4)
    if where == 0:  # drawn in construct, passed on
        return Frag("random_sub", [f"p{k} = {src}", f"x = self.noise{k}(x, p{k})"], module=module,
                    init=[f"self.noise{k} = Noise{k}()"], needs_self=True)
    if where == 1:  # drawn inline in the call
        return Frag("random_sub_inline", [f"x = self.noise{k}(x, {src})"], module=module,
                    init=[f"self.noise{k} = Noise{k}()"], needs_self=True)
    if where == 2:  # drawn once in __init__ (a constant while compiling)
        return Frag("random_init", [f"x = self.noise{k}(x, self.p{k})"], module=module,
                    init=[f"self.noise{k} = Noise{k}()", f"self.p{k} = {src}"], needs_self=True)
    helper = [f"def jitter{k}(x, p):", *_indent(rng.choice(RANDOM_USES), 4), "", ""]
    return Frag("random_helper", [f"p{k} = {src}", f"x = jitter{k}(x, p{k})"], module=helper)


# --- jit_class objects -----------------------------------------------------------------------------
def f_jit_class_obj(rng: random.Random, k: int) -> Frag:
    deco = ["@ms.jit_class"] if rng.random() < 0.8 else []
    module = deco + _lines(
        f"""
        class Cfg{k}:
            def __init__(self, scale=2.0, mode='a'):
                self.scale = scale
                self.mode = mode

            def apply(self, t):
                return t * self.scale
        """
    )
    kind = rng.randrange(9)
    init = [f"self.cfg{k} = Cfg{k}()"]
    if kind == 0:
        return Frag("jc_attr", [f"x = self.cfg{k}.apply(x)"], module=module, init=init, needs_self=True)
    if kind == 1:
        return Frag("jc_mode", [f"if self.cfg{k}.mode == 'a':", f"    x = x * self.cfg{k}.scale"], module=module, init=init,
                    needs_self=True)
    if kind == 2:
        return Frag("jc_local", [f"c{k} = Cfg{k}(1.5)", f"x = c{k}.apply(x)"], module=module)
    if kind == 3:
        return Frag("jc_set", [f"self.cfg{k}.scale = 3.0", f"x = x * self.cfg{k}.scale"], module=module, init=init,
                    needs_self=True)
    if kind == 4:
        return Frag("jc_module", [f"x = CFG{k}.apply(x) + CFG{k}.scale"], module=[*module, "", "", f"CFG{k} = Cfg{k}()"])
    if kind == 5:
        return Frag("jc_local_tensor", [f"c{k} = Cfg{k}(x.sum())", f"x = c{k}.apply(x)"], module=module)
    if kind == 6:
        return Frag("jc_cond", [f"c{k} = Cfg{k}(2.0, 'a' if x.sum() > 0 else 'b')", f"x = c{k}.apply(x)"], module=module)
    if kind == 7:
        return Frag("jc_arg", [f"x = use_cfg{k}(x, self.cfg{k})"],
                    module=[*module, "", "", f"def use_cfg{k}(t, cfg):", "    return cfg.apply(t) + cfg.scale"], init=init,
                    needs_self=True)
    return Frag("jc_getattr", [f"x = x * getattr(self.cfg{k}, 'scale', 1.0)"], module=module, init=init, needs_self=True)


# --- ms.mutable values inside the graph ------------------------------------------------------------
MUTABLE_BODIES = [
    ["n{k} = ms.mutable(2)", "x = x * n{k}"], ["n{k} = ms.mutable(2)", "for i in range(n{k}):", "    x = x + i"],
    ["t{k} = ms.mutable((x, x * 2))", "x = t{k}[0] + t{k}[1]"], ["x = x + ms.mutable(1.5)"],
    ["lst{k} = ms.mutable([1.0, 2.0])", "x = x + lst{k}[0]"], ["lst{k} = ms.mutable([x, x])", "x = lst{k}[1]"],
    ["n{k} = ms.mutable(2)", "if n{k} > 1:", "    x = x * 2"], ["d{k} = ms.mutable({{'a': x}})", "x = d{k}['a']"],
    ["lst{k} = ms.mutable([1.0, 2.0], True)", "lst{k}.append(3.0)", "x = x + len(lst{k})"],
    ["n{k} = ms.mutable(2)", "x = x + ops.ones((n{k}, 3), mstype.float32)"],
]


def f_mutable(rng: random.Random, k: int) -> Frag:
    return Frag("mutable", [s.format(k=k) for s in rng.choice(MUTABLE_BODIES)])


V4_FRAGMENTS = [(f_continue_join, 9), (f_random_draw, 7), (f_jit_class_obj, 6), (f_mutable, 4)]

# mutable inputs of the root: (construct parameters after `x`, first construct lines, call arguments after x)
MUTABLE_INPUTS = [
    ("n", ["x = x * n"], "ms.mutable(2)"), ("n", ["for i in range(n):", "    x = x + i"], "ms.mutable(2)"),
    ("n", ["if n > 1:", "    x = x * 2"], "ms.mutable(2)"), ("n", ["x = x + ops.ones((n, 3), mstype.float32)"], "ms.mutable(2)"),
    ("xs", ["x = x + xs[0] + xs[1]"], "ms.mutable((x, x * 2))"), ("vals", ["x = x + vals[0]"], "ms.mutable([1.0, 2.0])"),
    ("vals", ["x = x + len(vals)"], "ms.mutable([1.0, 2.0], True)"), ("n", ["x = x * n"], "2"),
    ("n", ["x = x[:n]"], "ms.mutable(2)"), ("cfg", ["x = x * cfg['s']"], "ms.mutable({'s': 2.0})"),
]

X_INIT = "x = Tensor(np.arange(6).reshape(2, 3).astype(np.float32) - 2.5)"
Y_INIT = "y = ops.zeros((2, 3), mstype.float32)"


def _trainer(rng: random.Random, jit_deco: bool, prelude: list[str], init: list[str]) -> list[str]:
    """A custom train-step Cell: `value_and_grad` in `__init__` or inside `construct`, optional loss
    scaling, gradient clipping, `ops.depend`."""
    grad_in_init = rng.random() < 0.5
    scaled = rng.random() < 0.3
    clip = rng.choice(["none", "global", "value", "flag"])
    fwd = "self.scaled_forward" if scaled else "self.forward"
    out = ["class TrainStep(nn.Cell):", "    def __init__(self, network, loss_fn, optimizer, scale=1024.0, clip=True):",
           f"        super().__init__({rng.choice(['', 'auto_prefix=False'])})", "        self.network = network",
           "        self.loss_fn = loss_fn", "        self.optimizer = optimizer",
           f"        self.weights = {rng.choice(['optimizer.parameters', 'self.optimizer.parameters', 'network.trainable_params()'])}",
           "        self.scale = scale", "        self.clip = clip", *_indent(init, 8)]
    if grad_in_init:
        out.append(f"        self.grad_fn = ms.value_and_grad({fwd}, None, self.weights)")
    out += ["", "    def forward(self, x, y):", "        out = self.network(x)", "        return self.loss_fn(out, y)"]
    if scaled:
        out += ["", "    def scaled_forward(self, x, y):", "        return self.forward(x, y) * self.scale"]
    out += [""]
    if jit_deco:
        out.append("    @ms.jit")
    out += ["    def construct(self, x, y):", *_indent(prelude, 8)]
    if grad_in_init:
        out.append("        loss, grads = self.grad_fn(x, y)")
    else:
        out += [f"        grad_fn = ms.value_and_grad({fwd}, None, self.weights)", "        loss, grads = grad_fn(x, y)"]
    if scaled:
        out += rng.choice([["        loss = loss / self.scale", "        grads = tuple(g / self.scale for g in grads)"],
                           ["        loss = loss / self.scale", "        grads = [g / self.scale for g in grads]"],
                           ["        loss = loss / self.scale", "        grads = tuple(ops.div(g, self.scale) for g in grads)"]])
    if clip == "global":
        out.append("        grads = ops.clip_by_global_norm(grads, 1.0)")
    elif clip == "value":
        out.append("        grads = tuple(ops.clip_by_value(g, -1.0, 1.0) for g in grads)")
    elif clip == "flag":
        out += ["        if self.clip:", "            grads = ops.clip_by_global_norm(grads, 1.0)"]
    out += rng.choice([
        ["        loss = ops.depend(loss, self.optimizer(grads))"], ["        self.optimizer(grads)"],
        ["        if ops.isfinite(loss):", "            self.optimizer(grads)"],
        ["        loss = ops.depend(loss, self.optimizer(grads))", "        print('loss', loss)"],
        ["        status = self.optimizer(grads)", "        return ops.depend(loss, status)"],
    ])
    if not out[-1].strip().startswith("return"):
        out.append("        return loss")
    return out + ["", ""]


def _train_root(rng: random.Random, out: list[str], trainer_prelude: list[str], trainer_init: list[str]) -> list[str]:
    """The train step (PYNATIVE_MODE, compiled by ms.jit) and where it is built and called."""
    loss = rng.choice(["nn.MSELoss()", "nn.L1Loss()"])
    opt = rng.choice(["nn.SGD(net.trainable_params(), learning_rate=0.01)", "nn.Adam(net.trainable_params(), learning_rate=1e-3)",
                      "nn.Momentum(net.trainable_params(), learning_rate=0.01, momentum=0.9)"])
    builtin = not trainer_prelude and not trainer_init and rng.random() < 0.4
    how = rng.choice(["jit_instance", "jit_construct", "deco"] if not builtin else ["jit_instance", "jit_construct"])
    if not builtin:
        out.extend(_trainer(rng, how == "deco", trainer_prelude, trainer_init))
    body = ["net = Net()", f"loss_fn = {loss}", f"opt = {opt}"]
    if builtin:
        body.append(rng.choice(["step = nn.TrainOneStepCell(nn.WithLossCell(net, loss_fn), opt)",
                                "step = nn.TrainOneStepCell(nn.WithLossCell(net, loss_fn), opt, sens=1.0)",
                                "with_loss = nn.WithLossCell(net, loss_fn)\nstep = nn.TrainOneStepCell(with_loss, opt)"]))
    else:
        body.append(rng.choice(["step = TrainStep(net, loss_fn, opt)", "step = TrainStep(net, loss_fn, opt, clip=False)",
                                "step = TrainStep(net, loss_fn, opt, 128.0)"]))
    body.append("step.set_train()")
    call = "step"
    if how == "jit_instance":
        body.append(rng.choice(["step = ms.jit(step)", "jstep = ms.jit(step)"]))
        call = body[-1].split(" = ")[0]
    elif how == "jit_construct":
        body.append("jstep = ms.jit(step.construct)")
        call = "jstep"
    body += [X_INIT, Y_INIT, rng.choice([f"print({call}(x, y))", f"for _ in range(2):\n    loss = {call}(x, y)\nprint(loss)"])]
    body = [ln for b in body for ln in b.split("\n")]
    if rng.random() < 0.6:
        name = rng.choice(["train", "main", "run"])
        out.extend([f"def {name}():", *_indent(body, 4), "", "", f"{name}()" if rng.random() < 0.7
                    else f"if __name__ == '__main__':\n    {name}()", ""])
    else:
        out.extend([*body, ""])
    return out


def generate_v4(seed: int) -> str:
    from gen_v2 import OUTPUTS, V2_FRAGMENTS
    from gen_v3 import V3_FRAGMENTS

    rng = random.Random(seed)
    cell_root = rng.random() < 0.85
    root = rng.choice(["graph", "graph", "graph_fn", "graph_fn", "jit_net", "jit_net", "jit_construct", "train", "train", "train",
                       "train"]) if cell_root else "jit_fn"
    train = root == "train"
    prog = Program()
    fragments = FRAGMENTS + V2_FRAGMENTS + V3_FRAGMENTS + V4_FRAGMENTS * 3
    makers = [m for m, w in fragments for _ in range(w)]
    inherit = cell_root and rng.random() < 0.3
    base = Program()
    in_trainer_body: list[str] = []
    in_trainer_init: list[str] = []
    for k in range(rng.choice([1, 2, 2, 3])):
        frag = rng.choice(makers)(rng, k)
        while frag.needs_self and not cell_root:
            frag = rng.choice(makers)(rng, k)
        if inherit and k == 0:  # the fragment sits in the base's construct, reached by super().construct
            base.module.extend(frag.module + ([""] if frag.module else []))
            base.init.extend(frag.init)
            base.body.extend(frag.body)
            base.params.update(frag.params)
            prog.tags.append(f"{frag.tag}@base")
            continue
        if train and k == 1 and not frag.params and rng.random() < 0.4:  # in the train step's own construct
            prog.module.extend(frag.module + ([""] if frag.module else []))
            in_trainer_init.extend(frag.init)
            in_trainer_body.extend(frag.body)
            prog.tags.append(f"{frag.tag}@trainer")
            continue
        where = _place(rng, prog, frag, k, cell_root)
        prog.tags.append(f"{frag.tag}@{where}")
    mode = "PYNATIVE_MODE" if root in ("train", "jit_net", "jit_construct") or (root == "jit_fn" and rng.random() < 0.3) else "GRAPH_MODE"
    head = "import random\n" + HEAD.replace("mode=ms.GRAPH_MODE", f"mode=ms.{mode}")
    out = [f"# difftest seed={seed} (v4 root={root})", f"# idioms: {' '.join(prog.tags)}", head, ""]
    out.extend(base.module)
    out.extend(prog.module)
    ret = rng.choice(OUTPUTS) if not train and rng.random() < 0.2 else "return x"
    if not cell_root:
        out.extend(["@ms.jit", "def step(x):", *_indent(prog.body or ["x = x + 1"], 4), f"    {ret}", "", ""])
        out.extend([X_INIT, "print(step(x))", ""])
        return "\n".join(out)
    mutable = None if train or rng.random() < 0.7 else rng.choice(MUTABLE_INPUTS)
    if inherit:
        bargs = "".join(f", {p}={v}" for p, v in base.params.items())
        out.extend(["class BaseNet(nn.Cell):", f"    def __init__(self{bargs}):", "        super().__init__()",
                    *_indent(base.init, 8), "        self.base_scale = 1.0", "", "    def construct(self, x):",
                    *_indent(base.body, 8), "        return x * self.base_scale", "", ""])
    if train:
        prog.init.append("self.out_fc = nn.Dense(3, 3)")
    args = "".join(f", {p}={v}" for p, v in prog.params.items())
    out.append(f"class Net({'BaseNet' if inherit else 'nn.Cell'}):")
    out.append(f"    def __init__(self{args}):")
    out.append("        super().__init__()")
    out.extend(_indent(prog.init, 8))
    out.append("")
    out.append(f"    def construct(self, x{', ' + mutable[0] if mutable else ''}):")
    if mutable:
        out.extend(_indent(mutable[1], 8))
    if inherit:
        out.append("        " + rng.choice(["x = super().construct(x)", "x = super(Net, self).construct(x)",
                                            "x = BaseNet.construct(self, x)"]))
    out.extend(_indent(prog.body or ["x = x + 1"], 8))
    if train:
        out.append("        x = self.out_fc(x)")
    out.append(f"        {ret}")
    out.extend(prog.methods)
    out.extend(["", ""])
    if train:
        return "\n".join(_train_root(rng, out, in_trainer_body, in_trainer_init))
    call_args = "x" + (f", {mutable[2]}" if mutable else "")
    body = ["net = Net()"]
    fn = "net"
    if root == "jit_net":
        body.append(rng.choice(["net = ms.jit(net)", "fn = ms.jit(net)", "fn = ms.jit(net, capture_mode='ast')"]))
        fn = body[-1].split(" = ")[0]
    elif root == "jit_construct":
        body.append("fn = ms.jit(net.construct)")
        fn = "fn"
    body += [X_INIT, f"print({fn}({call_args}))"]
    if root == "graph" or rng.random() < 0.3:
        out.extend([*body, ""])
    else:
        name = rng.choice(["main", "run", "infer"])
        out.extend([f"def {name}():", *_indent(body, 4), "", "", f"{name}()", ""])
    return "\n".join(out)
