"""A MindSpore model that runs in PyNative mode and fails to compile in GRAPH_MODE.

Each marked line is a mistake MindSpore 2.x only reports once the graph is compiled (the
error it raises is in the comment). See them without MindSpore or an NPU:

    ascend-lens check examples/graph_mode_mistakes.py
"""

import mindspore as ms
import numpy as np
from mindspore import Tensor, nn, ops

ms.set_context(mode=ms.GRAPH_MODE)


class Encoder(nn.Cell):
    def __init__(self, width: int, depth: int) -> None:
        super().__init__()
        # A plain list does not register the sub-cells: "its name 'weight' already exists".
        self.blocks = [nn.Dense(width, width) for _ in range(depth)]
        self.norm = nn.LayerNorm((width,))
        self.history = []

    def construct(self, x, steps):
        for block in self.blocks:
            x = ops.relu(block(x))
        # Graph mode has no exceptions: "Unsupported statement 'Try'."
        try:
            x = self.norm(x)
        except ValueError:
            x = x / x.max()
        # `steps` is a tensor: "For 'make_range', the 0th input should be a int scalar".
        for _ in range(steps):
            x = x * 0.5
        # Bound on one path of a tensor condition only: UnboundLocalError when compiled.
        if x.sum() > 0:
            scale = x.mean()
        out = x * scale
        # Compiles, but the list on `self` never changes: the append is lost.
        self.history.append(out)
        return out


class Trainer(nn.Cell):
    def __init__(self, net: nn.Cell) -> None:
        super().__init__()
        self.net = net

    def construct(self, x, steps):
        # "for...else" is not supported in graph mode.
        for _ in range(2):
            x = self.net(x, steps)
        else:
            x = x + 1
        # Context functions cannot be compiled: "... is not supported in 'construct'".
        ms.set_context(device_target="Ascend")
        return x


if __name__ == "__main__":
    trainer = Trainer(Encoder(16, 3))
    batch = Tensor(np.random.rand(4, 16).astype(np.float32))
    print(trainer(batch, Tensor(3, ms.int32)).shape)
