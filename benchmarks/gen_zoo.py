"""Generate a MindSpore-style model zoo for `bench_check_repo.py`.

`generate(root, modules, seed)` writes `modules` modules of 150-170 lines under `root/zoo/`,
in packages of 25 modules (each with an `__init__.py` re-exporting a few names). Modules
import each other as model zoos do: relative imports within a package
(`from .m0003 import Block3`), absolute imports across packages
(`from zoo.p02.m0051 import helper51`), and their Cells subclass Cells of other modules,
so cross-file resolution has real work to do. Deterministic for a given seed.
"""

from __future__ import annotations

import random
from pathlib import Path

PER_PACKAGE = 25

MODULE = '''"""{qual}: a generated MindSpore network module (block {i})."""

import numpy as np
import mindspore as ms
from mindspore import nn, ops, Tensor, Parameter
from mindspore import dtype as mstype
{imports}

__all__ = ["Block{i}", "Head{i}", "helper{i}", "build{i}"]


def helper{i}(x, k=2):
    """Scale and shift a tensor."""
    y = x * k
    if k > 1:
        y = y + 1
    return y


def clip{i}(x, low, high):
    """Clip values of `x` into [low, high]."""
    return ops.clip_by_value(x, low, high)


class Block{i}({base}):
    """A residual block built on {base}."""

    def __init__(self, width=64):
        super().__init__(width)
        self.dense{i} = nn.Dense(width, width)
        self.act{i} = nn.ReLU()
        self.norm{i} = nn.LayerNorm((width,))
        self.drop{i} = nn.Dropout(p=0.1)
        self.gamma{i} = Parameter(Tensor(np.ones(width), mstype.float32), name="gamma{i}")
        self.cells{i} = nn.CellList([nn.Dense(width, width) for _ in range(2)])
        self.use_norm{i} = True

    def residual(self, x, h):
        """Add the input back, scaled by a helper of another module."""
        if x.shape[0] > 1:
            h = h + x
        return {other_helper}(h, 2)

    def project(self, x):
        out = self.dense{i}(x)
        out = self.act{i}(out)
        return clip{i}(out, -6.0, 6.0)

    def construct(self, x, mask=None):
        h = self.project(x)
        for cell in self.cells{i}:
            h = cell(h)
        if mask is not None:
            h = h * mask
        if h.sum() > 0:
            y = self.drop{i}(h)
        else:
            y = -h
        outs = []
        for k in range(3):
            outs.append(y * k)
        z = ops.stack(outs).sum(0)
        if self.use_norm{i}:
            z = self.norm{i}(z)
        return self.residual(x, z * self.gamma{i})


class Head{i}(nn.Cell):
    """Classifier head over a Block{i}."""

    def __init__(self, width=64, classes=10):
        super().__init__()
        self.body = Block{i}(width)
        self.extra = {other_block}(width)
        self.fc = nn.Dense(width, classes)
        self.softmax = ops.Softmax(axis=-1)
        self.classes = classes

    def construct(self, x):
        h = self.body(x)
        h = self.extra(h)
        logits = self.fc(h)
        return self.softmax(logits)


class Loss{i}(nn.Cell):
    """Cross entropy with label smoothing."""

    def __init__(self, smoothing=0.1):
        super().__init__()
        self.smoothing = smoothing
        self.log_softmax = nn.LogSoftmax(axis=-1)
        self.mean = ops.ReduceMean()

    def construct(self, logits, labels):
        logp = self.log_softmax(logits)
        picked = ops.gather_elements(logp, 1, labels.reshape(-1, 1))
        smooth = logp.mean(axis=-1)
        loss = -(1 - self.smoothing) * picked.squeeze(-1) - self.smoothing * smooth
        return self.mean(loss)


@ms.jit
def step{i}(x, w):
    """A compiled training step fragment."""
    y = ops.matmul(x, w)
    y = helper{i}(y, 3)
    return ops.relu(y)


def build{i}(width=64, classes=10):
    """Build the network and its loss."""
    net = Head{i}(width, classes)
    loss = Loss{i}()
    return net, loss


def count_params{i}(net):
    """Number of trainable parameters (plain Python)."""
    total = 0
    for p in net.trainable_params():
        size = 1
        for d in p.shape:
            size *= d
        total += size
    return total


def describe{i}(net):
    """A one-line description of `net`."""
    names = [name for name, _ in net.parameters_and_names()]
    return "Head{i}: %d parameter tensors, %d values" % (len(names), count_params{i}(net))


def make_inputs{i}(batch=4, width=64):
    """Random inputs for a smoke run."""
    x = Tensor(np.random.randn(batch, width), mstype.float32)
    labels = Tensor(np.random.randint(0, 10, (batch,)), mstype.int32)
    return x, labels


def init_weights{i}(net, scale=0.02):
    """Re-initialise every Dense weight of `net` (plain Python)."""
    for name, param in net.parameters_and_names():
        if name.endswith("weight"):
            data = np.random.normal(0.0, scale, param.shape)
            param.set_data(Tensor(data, mstype.float32))
        elif name.endswith("bias"):
            param.set_data(Tensor(np.zeros(param.shape), mstype.float32))
    return net


def smoke{i}():
    """Build, run once and return the loss (called by the zoo's tests)."""
    net, loss_fn = build{i}()
    x, labels = make_inputs{i}()
    logits = net(x)
    return loss_fn(logits, labels)
'''

BASE = '''"""{qual}: base cells shared by the zoo."""

import mindspore as ms
from mindspore import nn, ops


def helper0(x, k=2):
    return x * k


class Block0(nn.Cell):
    """The root of every Block chain."""

    def __init__(self, width=64):
        super().__init__()
        self.width = width

    def construct(self, x):
        return ops.relu(x)
'''


def generate(root: Path, modules: int, seed: int = 0) -> list[Path]:
    """Write the zoo under `root/zoo`; returns the module files (packages' `__init__` too)."""
    rnd = random.Random(seed)
    zoo = root / "zoo"
    zoo.mkdir(parents=True, exist_ok=True)
    files: list[Path] = []
    init = zoo / "__init__.py"
    init.write_text('"""A generated model zoo."""\n', encoding="utf-8")
    files.append(init)
    base = zoo / "base.py"
    base.write_text(BASE.format(qual="zoo.base"), encoding="utf-8")
    files.append(base)
    where: list[tuple[int, str]] = []  # module i -> (package number, module name)
    for i in range(1, modules + 1):
        pkg_no = (i - 1) // PER_PACKAGE
        pkg = zoo / f"p{pkg_no:02d}"
        if not pkg.exists():
            pkg.mkdir()
        name = f"m{i:04d}"
        imports: list[str] = []
        if i == 1 or rnd.random() < 0.1:
            base_i, base_name = 0, "Block0"
            imports.append("from zoo.base import Block0, helper0")
        else:
            base_i = rnd.randint(max(1, i - 40), i - 1)
            base_name = f"Block{base_i}"
        other_i = rnd.randint(max(1, i - 200), i - 1) if i > 1 else 0
        for j in sorted({base_i, other_i} - {0}):
            j_pkg, j_name = where[j - 1]
            names = f"Block{j}, helper{j}"
            if j_pkg == pkg_no:
                imports.append(f"from .{j_name} import {names}")
            else:
                imports.append(f"from zoo.p{j_pkg:02d}.{j_name} import {names}")
        if other_i == 0:
            imports.append("from zoo.base import Block0, helper0")
        text = MODULE.format(
            qual=f"zoo.p{pkg_no:02d}.{name}",
            i=i,
            imports="\n".join(dict.fromkeys(imports)),
            base=base_name,
            other_helper=f"helper{other_i}",
            other_block=f"Block{other_i}",
        )
        path = pkg / f"{name}.py"
        path.write_text(text, encoding="utf-8")
        files.append(path)
        where.append((pkg_no, name))
    for pkg_no in range((modules + PER_PACKAGE - 1) // PER_PACKAGE):
        members = [(i, n) for i, (p, n) in enumerate(where, 1) if p == pkg_no]
        lines = ['"""A package of the generated zoo."""', ""]
        lines += [f"from .{n} import Head{i}, build{i}" for i, n in members[:5]]
        init = zoo / f"p{pkg_no:02d}" / "__init__.py"
        init.write_text("\n".join(lines) + "\n", encoding="utf-8")
        files.append(init)
    return files


if __name__ == "__main__":
    import sys

    out = generate(Path(sys.argv[1]), int(sys.argv[2]) if len(sys.argv) > 2 else 100)
    print(f"{len(out)} files")
