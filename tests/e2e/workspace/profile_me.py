"""Launches a few ops on the emulated NPU so that a profile has hot lines."""

import numpy as np

import npu_runtime as npu

a = npu.Tensor(np.ones((256, 256), dtype=np.float16))
b = npu.Tensor(np.ones((256, 256), dtype=np.float16))
for _ in range(4):
    c = a @ b
d = c + a
print("sum", float(d.numpy().sum()))
